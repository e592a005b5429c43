"""The whole-zoo run into a result file: rewritten after every case, within a
time budget, resumable; and tune() times in fresh processes."""
from __future__ import annotations

import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ...core.paths import atomic_write
from ...core.version import VERSION
from ...tuning.space import space_id
from .cases import Case
from .document import FORMAT, FORMAT_VERSION, METHOD, load_results
from .measure import REPS
from .report import report
from .results import datasheet_gbps
from .run import Bench, progress_line
from .targets import TARGETS


def meta(bench: Bench) -> dict:
    """Who measured what, with which software."""
    dev = bench.gpu.dev
    return {"gpu": dev.id.name, "fingerprint": dev.id.text, "sms": dev.sms, "l2_bytes": dev.l2_bytes,
            "driver": dev.id.driver, "cuda": dev.id.cuda, "autotrans": VERSION, "space": space_id(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": platform.node(), "python": platform.python_version(), "numpy": np.__version__,
            "reps": bench.reps, "flush_bytes": bench.gpu.flush_bytes, "datasheet_gbps": datasheet_gbps(dev.id.name),
            "contenders": list(bench.contenders)}


def new_doc(info: dict) -> dict:
    """An empty result document with this meta."""
    return {"format": FORMAT, "version": FORMAT_VERSION, "meta": info, "method": METHOD,
            "targets": TARGETS, "rows": [], "not_run": [], "tune_times": []}


def write(doc: dict, json_path: Path, md_path: Path | None = None) -> None:
    """The JSON (and the markdown report), written atomically."""
    atomic_write(Path(json_path), (json.dumps(doc, indent=1) + "\n").encode())
    if md_path is not None:
        atomic_write(Path(md_path), report(doc).encode())


def run_suite(cases, json_path, md_path=None, *, budget_s: float = 480.0, resume: bool = False,
              peers: bool = True, jax: bool = True, torch_compile: bool = True, tune: bool = True,
              reps: int = REPS, log=print) -> dict:
    """Run cases into a result file, rewritten after every case; cases left
    when ``budget_s`` seconds have passed are listed in doc["not_run"].
    With resume, cases already in json_path (same GPU, same space) are kept."""
    t0 = time.monotonic()
    bench = Bench(peers=peers, jax=jax, torch_compile=torch_compile, tune=tune, reps=reps)
    try:
        doc = new_doc(meta(bench))
        if resume and Path(json_path).is_file():
            doc = _resumed(doc, load_results(json_path))
        done = {r["name"] for r in doc["rows"]}
        todo = [c for c in cases if c.name not in done]
        doc["not_run"] = []
        for i, case in enumerate(todo):
            if time.monotonic() - t0 > budget_s:
                doc["not_run"] = [c.name for c in todo[i:]]
                log(f"time budget of {budget_s:.0f} s spent: {len(todo) - i} cases not run "
                    "(run again with --resume)", flush=True)
                break
            _run_one(bench, case, doc, json_path, md_path)
            log(progress_line(i + 1, len(todo), doc["rows"][-1]), flush=True)
        write(doc, json_path, md_path)
    finally:
        bench.close()
    return doc


def _run_one(bench: Bench, case: Case, doc: dict, json_path, md_path) -> None:
    """One case into doc, and doc rewritten."""
    doc["rows"].append(bench.safe_run(case).to_dict())
    doc["meta"]["peers"] = dict(bench.peers.versions, missing=bench.peers.problem)
    write(doc, json_path, md_path)


def _resumed(fresh: dict, old: dict) -> dict:
    """The old document's rows under fresh meta, if both are from the same GPU and space."""
    same = all(old["meta"].get(k) == fresh["meta"][k] for k in ("fingerprint", "space"))
    if not same:
        raise ValueError("cannot resume: the result file is from another GPU, driver or kernel space "
                         f"({old['meta'].get('fingerprint')}, space {old['meta'].get('space')})")
    fresh["rows"], fresh["tune_times"] = old["rows"], old.get("tune_times", [])
    fresh["meta"]["date_first"] = old["meta"].get("date_first", old["meta"].get("date"))
    return fresh


_TUNE_CODE = ("import sys, time\n"
              "import autotrans\n"
              "shape = tuple(int(d) for d in sys.argv[1].split('x'))\n"
              "t = time.perf_counter()\n"
              "autotrans.tune(shape, sys.argv[2], save=False, progress=False)\n"
              "print('TUNE_S', time.perf_counter() - t, flush=True)\n")


def tune_time(case: Case, timeout_s: float = 180.0) -> dict:
    """tune() seconds in a fresh process with an empty cache and kernel store
    (cold), then in another fresh process with its kernels compiled (warm)."""
    out = {"name": case.name, "cold_s": None, "warm_s": None, "error": None}
    with tempfile.TemporaryDirectory(prefix="autotrans-tune-time-") as d:
        env = dict(os.environ, AUTOTRANS_CACHE_DIR=d)
        for which in ("cold", "warm"):
            error = _time_tune(case, which, env, timeout_s, out)
            if error:
                out["error"] = error
                return out
    return out


def _time_tune(case: Case, which: str, env: dict, timeout_s: float, out: dict) -> str | None:
    """One fresh process tuning case; its times go into out. The error, or None."""
    t = time.perf_counter()
    try:
        r = subprocess.run([sys.executable, "-c", _TUNE_CODE, "x".join(map(str, case.shape)), case.dtype],
                           env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"{which} run timed out after {timeout_s:.0f} s"
    out[f"{which}_process_s"] = round(time.perf_counter() - t, 2)
    m = re.search(r"^TUNE_S ([0-9.eE+-]+)$", r.stdout, re.M)
    if r.returncode != 0 or not m:
        return f"{which} run failed: {(r.stderr or r.stdout).strip()[-400:]}"
    out[f"{which}_s"] = float(m.group(1))
    return None
