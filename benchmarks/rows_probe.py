"""Does the rows family gain from more bytes in flight a thread? tune_problem
(not stored) over the strided space's candidates plus extra rows configs of
several rows a thread, on the (B, S, H, D) -> (B, H, S, D) cases of
permute_bench.py, with the rows enumerated in output order (what permute()
runs: writes contiguous) and in input order (reads contiguous); prints the
re-timed top of each (the tuner's method: L2 flushed before every timed
launch, the top re-timed interleaved with a memcpy of the same bytes). NOTES 37.

    python benchmarks/rows_probe.py [--reps 9] [--top 8]
"""
from __future__ import annotations

import argparse
import dataclasses

import numpy as np

CASES = [((8, 4096, 16, 64), np.float16), ((16, 2048, 32, 128), np.float16), ((4, 4096, 32, 8), np.float32)]
AXES = (0, 2, 1, 3)
# (tile_rows, tile_cols of 16-byte elements, threads) of rows:e16 beyond the space's
EXTRA = [(256, 8, 256), (256, 8, 512), (512, 8, 512), (128, 8, 128), (128, 16, 256), (256, 16, 512),
         (128, 16, 512), (256, 2, 256), (512, 2, 256), (1024, 2, 512), (512, 2, 512),
         (64, 8, 256), (32, 8, 256), (128, 8, 512), (64, 8, 512), (32, 16, 256), (16, 16, 256), (64, 16, 512),
         (64, 2, 128), (256, 2, 512), (512, 2, 1024)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--top", type=int, default=8)
    a = ap.parse_args(argv)
    from autotrans.core.layout import canonical
    from autotrans.kernels.config import KernelConfig
    from autotrans.core.device import Limits
    from autotrans.tuning.strided import TUNE_ALIGN, _fit, run_problem, strided_candidates, tune_problem
    for shape, dt in CASES:
        e = np.dtype(dt).itemsize
        strides = tuple(int(np.prod(shape[i + 1:])) * e for i in range(len(shape)))
        prob = run_problem(canonical(shape, strides, e, AXES))
        base = strided_candidates(prob)
        extra = []
        for tr, tc, nt in EXTRA:
            try:
                c = KernelConfig.from_key(f"rows:e{prob.elem}:{tr}x{tc}:t{nt}:v16:r1:p0:none:row:strided")
            except ValueError:
                continue
            if not _fit(c, prob, TUNE_ALIGN, Limits()) and c.key not in {b.key for b in base}:
                extra.append(c)
        by_input = dataclasses.replace(prob, rows=tuple(sorted(prob.rows, key=lambda d: -d.src)))
        for what, p in (("rows in output order", prob), ("rows in input order", by_input)):
            rec = tune_problem(p, save=False, progress=False, reps=a.reps, top=a.top, configs=base + extra)
            print_retimed(rec, extra, f"{shape} {np.dtype(dt).name} {AXES}, {what} {p.rows}: {len(base)} space + "
                                      f"{len(extra)} extra", "extra")
    return 0


def print_retimed(rec, extra, title: str, tag: str) -> None:
    """A tune record's re-timed candidates, fastest first, each as µs (IQR)
    and a fraction of the record's memcpy; those of ``extra`` tagged."""
    print(f"\n{title}; memcpy {rec.memcpy_us:.1f} µs")
    for c in sorted((c for c in rec.candidates if c.retimed), key=lambda c: c.median_us):
        mark = f" ({tag})" if c.key in {x.key for x in extra} else ""
        print(f"  {c.key}{mark}: {c.median_us:.1f} µs ({c.q1_us:.1f}-{c.q3_us:.1f}), "
              f"{rec.memcpy_us / c.median_us:.3f} of memcpy")


if __name__ == "__main__":
    raise SystemExit(main())
