"""The result file: its format, the method it states, and reading it back
checked (everything in it is untrusted)."""
from __future__ import annotations

import json
import math
from pathlib import Path

from .measure import REPS
from .results import one_line

FORMAT = "autotrans-benchmark"
FORMAT_VERSION = 1

METHOD = [
    "One process; in every repetition each contender runs once, the order rotating by one "
    "each repetition.",
    "Before every timed launch: an L2 flush (a kernel writing max(2 x L2, 256 MiB)), then a spin "
    "kernel that keeps the stream busy while the host queues the launch; CUDA events are recorded "
    "just before and just after the launch, so they time the GPU work alone.",
    f"Medians and IQRs over {REPS} repetitions (unless stated otherwise in meta.reps).",
    "Roofline: the faster of cudaMemcpy device-to-device and a 16-byte vector copy kernel "
    "(cuda_templates/roofline.cu, with a scalar tail) moving the same bytes in the same run. "
    "GB/s = 2 x bytes / time; 'of datasheet' is that over the GPU's memory bandwidth on its "
    "datasheet (meta.datasheet_gbps: results.DATASHEETS; none for a GPU not named there).",
    "Peers, in the same process on the same data and stream: torch eager out.copy_(x.mT); "
    "torch.compile(lambda t: t.mT.contiguous(), dynamic=False) compiled afresh for each shape "
    "(dynamo reset, recompile limits raised); CuPy ascontiguousarray(x.swapaxes(-1, -2)); "
    "cuBLAS geam through cupy.cublas.geam (2-D float32/float64/complex). "
    "XLA*: jax.jit(swapaxes), wall clock from call to block_until_ready after the same flush, "
    "an estimate (it includes dispatch and the wait).",
    "tuned: the config tune() found for the shape (tuned into the user cache when missing). "
    "untuned: the config choose() picks with an empty user cache and only the shipped results "
    "(cache/*.json), as transpose() runs it once the shape's fixed build is in the kernel store "
    "(api.specialise; generic with AUTOTRANS_SPECIALISE=0).",
    "Every output, ours and the peers', is compared byte for byte on the GPU with the transposed "
    "input: first on the complement of the input, then on the input itself (so a stale right "
    "answer in a reused buffer cannot pass), with outputs we own pre-filled with the complement of "
    "the right answer. Float inputs are finite and normal.",
    "A peer whose output is its input's own memory (torch.compile and CuPy return the input where "
    "its transpose is already C-contiguous: a side of 1) moved no bytes: it is shown as 'view', "
    "not timed, and not counted as a peer.",
]


def load_results(path) -> dict:
    """A benchmark result file, checked; ValueError (one line) if it is not one."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable benchmark result file ({one_line(exc)})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not an autotrans benchmark result file (no \"format\": \"{FORMAT}\")")
    if not isinstance(doc.get("meta"), dict) or not isinstance(doc.get("rows"), list):
        raise ValueError(f"{path}: a benchmark result file needs a \"meta\" object and a \"rows\" list")
    for i, row in enumerate(doc["rows"]):
        problem = _row_problem(row)
        if problem:
            raise ValueError(f"{path}: row {i}: {problem}")
    if not all(isinstance(t, dict) for t in doc.get("tune_times") or []):
        raise ValueError(f"{path}: \"tune_times\" must be a list of objects")
    if not all(isinstance(n, str) for n in doc.get("not_run") or []):
        raise ValueError(f"{path}: \"not_run\" must be a list of case names")
    return doc


def number(x) -> bool:
    """Whether x is a finite int or float (not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _row_problem(row) -> str | None:
    if not isinstance(row, dict):
        return "not an object"
    if not isinstance(row.get("name"), str) or not isinstance(row.get("held_out"), bool):
        return "needs a \"name\" string and a \"held_out\" flag"
    if not (isinstance(row.get("nbytes"), int) and row["nbytes"] > 0):
        return f"{row['name']}: \"nbytes\" must be a positive integer"
    if not isinstance(row.get("results"), dict):
        return f"{row['name']}: no \"results\" object"
    for k, r in row["results"].items():
        if not isinstance(r, dict) or not isinstance(r.get("status"), str):
            return f"{row['name']}: result {k!r} has no status"
        if r["status"] == "ok" and not (number(r.get("median_us")) and r["median_us"] > 0):
            return f"{row['name']}: result {k!r} is ok but has no positive median_us"
    roof = row.get("roofline")
    if roof is not None and not (isinstance(roof, dict) and number(roof.get("us")) and roof["us"] > 0):
        return f"{row['name']}: bad \"roofline\""
    return None
