"""Do rows tiles as wide as the row win on rows that no power-of-two tile
fits? tune_problem (not stored) over the strided space's candidates plus
row-sized rows tiles (the row rounded up to 32 lanes' vectors, one block a
row band, 1 to 8 rows a thread), on RowsProblems whose rows are not a multiple of
the space's tile widths: permute_bench's (257, 509, 263) float32 (1, 0, 2)
(rows of 263 elements, 1052 B), an odd-D (B, S, H, D) float16 (D = 67) and
an int8 row of 70; prints the re-timed top (the tuner's method: L2 flushed
before every timed launch, the top re-timed interleaved with a memcpy of the
same bytes). NOTES 63.

    python benchmarks/rows_fit_probe.py [--reps 9] [--top 8]
"""
from __future__ import annotations

import argparse

import numpy as np

CASES = [((257, 509, 263), np.float32, (1, 0, 2)), ((8, 2048, 16, 67), np.float16, (0, 2, 1, 3)),
         ((600, 517, 70), np.int8, (1, 0, 2))]
THREADS = (64, 128, 256, 512)
ROWS_A_THREAD = (1, 2, 4, 8)


def row_sized(prob):
    """The row-sized rows configs (the widest vector the rows allow, 1 to 8
    rows a thread, as many as rows.py's register bounds take) for a RowsProblem."""
    from autotrans.kernels.config import KernelConfig
    e = prob.elem
    v = max(v for v in (1, 2, 4, 8, 16) if v >= e and (prob.n * e) % v == 0
            and all(d.src % v == 0 and d.dst % v == 0 for d in prob.rows))
    k = v // e
    tc = -(-prob.n // (32 * k)) * 32 * k
    out = []
    for nt in THREADS:
        for rows in ROWS_A_THREAD:
            try:
                out.append(KernelConfig.from_key(f"rows:e{e}:{nt // 32 * rows}x{tc}:t{nt}:v{v}:r1:p0:none:row:strided"))
            except ValueError:
                pass
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--top", type=int, default=8)
    a = ap.parse_args(argv)
    from autotrans.core.device import Limits
    from autotrans.core.layout import c_strides, canonical
    from autotrans.tuning.strided import TUNE_ALIGN, _fit, run_problem, strided_candidates, tune_problem
    from rows_probe import print_retimed     # a script beside this one (benchmarks/ is sys.path[0])
    for shape, dt, axes in CASES:
        e = np.dtype(dt).itemsize
        prob = run_problem(canonical(shape, c_strides(shape, e), e, axes))
        base = strided_candidates(prob)
        extra = [c for c in row_sized(prob) if not _fit(c, prob, TUNE_ALIGN, Limits())
                 and c.key not in {b.key for b in base}]
        rec = tune_problem(prob, save=False, progress=False, reps=a.reps, top=a.top + len(extra),
                           configs=base + extra)
        print_retimed(rec, extra, f"{shape} {np.dtype(dt).name} {axes}: {prob}: {len(base)} space + "
                                  f"{len(extra)} row-sized", "row-sized")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
