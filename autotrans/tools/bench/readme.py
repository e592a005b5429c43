"""The README's results table (benchmarks/readme_table.py) from a result document."""
from __future__ import annotations

from .report import frac_roofline, mib, ratio
from .results import PEER_COLUMNS
from .targets import checks_of, ok_result, summary

README_CASES = ("8192x8192:float32", "16384x16384:int8", "8192x8192:float16", "4096x4096:float64",
                "4096x4096:complex128", "1024x1024:float32", "4097x4095:int8", "4097x4095:float16",
                "4097x4095:float32", "4097x4095:complex128", "17x100003:float16", "65536x64:float32",
                "64x65536:float32", "256x256:float32", "256x64x64:float32", "4x2048x2048:float32",
                "12288x3072:float32", "50257x768:float32", "32000x4096:float16", "4096x11008:float16",
                "32x2048x128:float16")


def _shape_text(row: dict) -> str:
    return "x".join(map(str, row["shape"]))


def readme_table(doc: dict, names=None) -> str:
    """The README's results table (markdown) from a result document: the
    README_CASES present in it (or ``names``; every row for names="all"), each
    peer as its time over the tuned time (above 1.00: autotrans is faster)."""
    rows = doc.get("rows", [])
    by_name = {r["name"]: r for r in rows}
    pick = rows if names == "all" else [by_name[n] for n in (names or README_CASES) if n in by_name]
    lines = _head(doc.get("meta", {})) + ["| " + " | ".join(_cells(r)) + " |" for r in pick]
    lines += ["", _readme_summary(doc)]
    return "\n".join(lines) + "\n"


def _head(m: dict) -> list[str]:
    """How it was measured, and the table's header."""
    return [f"Measured with `python benchmarks/bench.py` on one {m.get('gpu', '?')} ({m.get('sms', '?')} SMs, "
            f"driver {m.get('driver', '?')}, CUDA {m.get('cuda', '?')}), {str(m.get('date', '?'))[:10]}: one "
            "process, every implementation interleaved, the L2 flushed before every timed launch, CUDA "
            f"events around the launch alone, medians of {m.get('reps', '?')}; every output checked "
            "bit-exactly. Roofline: the faster of cudaMemcpy device-to-device and a 16-byte copy kernel. "
            "Peer columns: the peer's time over autotrans' (above 1.00: autotrans is faster). "
            "*XLA: wall clock per call, an estimate.", "",
            "| shape | dtype | MiB | autotrans µs | of roofline | untuned/tuned | torch | torch.compile "
            "| CuPy | cuBLAS | XLA* |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]


def _cells(r: dict) -> list[str]:
    """One row: the tuned time and fractions, each peer's time over the tuned time."""
    res, t = r["results"], ok_result(r["results"], "tuned")
    untuned = checks_of(r)["untuned"].value
    vs = [f"{p['median_us'] / t['median_us']:.2f}" if t and (p := ok_result(res, k)) else "–"
          for k in PEER_COLUMNS]
    return [_shape_text(r), r["dtype"], mib(r["nbytes"]), f"{t['median_us']:.1f}" if t else "–",
            f"**{ratio(frac_roofline(r))}**", ratio(untuned)] + vs


def _readme_summary(doc: dict) -> str:
    parts, missed_all = [], []
    for label, n, met, missed, _ in summary(doc):
        if n:
            parts.append(f"{label}: {met} of {n}")
            missed_all += missed
    text = "Targets met in this run: " + "; ".join(parts) + "." if parts else "No target was evaluated."
    if missed_all:
        text += (f" Missed on: {', '.join(dict.fromkeys(missed_all))} "
                "(benchmarks/results/h200.md states each miss).")
    return text
