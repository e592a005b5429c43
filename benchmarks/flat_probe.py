"""Does the flat family (rows written as back-to-back runs of 16-byte
vectors, gathered from element loads, or with flatv from aligned 16-byte
loads) beat rows tiles where rows move in accesses under 16 bytes?
tune_problem (not stored) over each problem's candidates (the strided space, rows' row-sized tiles and flat's
problem_space) plus flat shapes beyond flat.SHAPES (8-byte stores, 512
threads, 1 to 4 vectors a thread); prints the re-timed top (the tuner's
method: L2 flushed before every timed launch, the top re-timed interleaved
with a memcpy of the same bytes), flat and flatv configs tagged. NOTES 64, 66.

    python benchmarks/flat_probe.py [--reps 9] [--top 10] [--cases REGEX]
"""
from __future__ import annotations

import argparse
import re

import numpy as np

CASES = [((8, 2048, 16, 67), np.float16, (0, 2, 1, 3)), ((600, 517, 70), np.int8, (1, 0, 2)),
         ((600, 517, 67), np.int8, (1, 0, 2)), ((257, 509, 263), np.float32, (1, 0, 2)),
         ((2049, 1023, 35), np.float16, (1, 0, 2)), ((16, 512, 12, 3), np.float32, (0, 2, 1, 3)),
         ((4, 1024, 16, 67), np.float16, (0, 2, 1, 3)), ((300, 311, 70), np.int8, (1, 0, 2))]
EXTRA = ((512, 1, 16), (512, 2, 16), (256, 1, 8), (256, 4, 8), (128, 1, 16))   # threads, vectors a thread, vec_bytes


def extra_flat(prob):
    """Flat configs of EXTRA's shapes for this problem's element size."""
    from autotrans.kernels.config import KernelConfig
    out = []
    for nt, vpt, v in EXTRA:
        try:
            out.append(KernelConfig("flat", prob.elem, 1, vpt * v // prob.elem, nt, v, layout="strided"))
        except ValueError:
            pass
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--cases", default="", help="a regex over 'shape dtype axes'")
    a = ap.parse_args(argv)
    from autotrans.core.device import Limits
    from autotrans.core.layout import c_strides, canonical
    from autotrans.tuning.strided import TUNE_ALIGN, _fit, run_problem, strided_candidates, tune_problem
    from rows_probe import print_retimed     # a script beside this one (benchmarks/ is sys.path[0])
    for shape, dt, axes in CASES:
        name = f"{shape} {np.dtype(dt).name} {axes}"
        if not re.search(a.cases, name):
            continue
        e = np.dtype(dt).itemsize
        prob = run_problem(canonical(shape, c_strides(shape, e), e, axes))
        base = strided_candidates(prob)
        extra = [c for c in extra_flat(prob) if not _fit(c, prob, TUNE_ALIGN, Limits())
                 and c.key not in {b.key for b in base}]
        flats = [c for c in base + extra if c.variant in ("flat", "flatv")]
        rec = tune_problem(prob, save=False, progress=False, reps=a.reps, top=a.top + len(flats),
                           configs=base + extra)
        print_retimed(rec, flats, f"{name}: {prob}: {len(base)} candidates + {len(extra)} flat shapes; "
                                  f"untuned {base[0].key}", "flat")
        for f in rec.failures:
            print(f"  FAILED {f.key} ({f.stage}): {f.reason[:300]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
