"""Do flat kernels gain from being compiled for their one launch
(KernelConfig.fixed_args: the at::StridedArgs values as constants)? ncu
(NOTES 66) found flat and torch.compile's Triton kernel both L2-bound,
Triton with constant divisors, 26 registers and 85% occupancy against
flat's runtime ones, 40 registers and 65%; ptxas gives the fixed flat
kernels 30-32 registers where the generic ones take 32-40.

Each case: tune_problem (not stored) over the problem's flat candidates
(flat.problem_space) and each compiled for the problem's launch, every one
re-timed interleaved with a memcpy of the same bytes (the tuner's method: L2
flushed before every timed launch); printed fastest first as µs (IQR) and a
fraction of that memcpy, with ptxas' registers. NOTES 67.

    python benchmarks/flat_const_probe.py [--reps 7] [--cases REGEX]
"""
from __future__ import annotations

import argparse
import re

import numpy as np

CASES = [((8, 2048, 16, 67), np.float16, (0, 2, 1, 3)), ((600, 517, 70), np.int8, (1, 0, 2)),
         ((600, 517, 67), np.int8, (1, 0, 2)), ((257, 509, 263), np.float32, (1, 0, 2)),
         ((4, 1024, 16, 67), np.float16, (0, 2, 1, 3)), ((2049, 1023, 35), np.float16, (1, 0, 2))]


def problem(case):
    from autotrans.core.layout import c_strides, canonical
    from autotrans.tuning.strided import run_problem
    shape, dt, axes = case
    e = np.dtype(dt).itemsize
    return run_problem(canonical(shape, c_strides(shape, e), e, axes))


def flat_configs(prob):
    """The problem's flat candidates (flat.problem_space; no flatv)."""
    from autotrans import families
    from autotrans.kernels.config import KernelConfig
    return [KernelConfig(**kw) for kw in families.of("flat").problem_space(prob) if kw["variant"] == "flat"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--cases", default="")
    a = ap.parse_args(argv)
    from autotrans.kernels.strided import launch_args
    from autotrans.tuning.strided import tune_problem
    for case in CASES:
        name = f"{case[0]} {np.dtype(case[1]).name} {case[2]}"
        if not re.search(a.cases, name):
            continue
        prob = problem(case)
        base = flat_configs(prob)
        cfgs = base + [c.fixed_to_args(launch_args(c, prob)[1]) for c in base]
        rec = tune_problem(prob, save=False, progress=False, reps=a.reps, top=len(cfgs), configs=cfgs)
        print(f"\n{name}: {prob}; memcpy {rec.memcpy_us:.1f} µs", flush=True)
        for c in sorted((c for c in rec.candidates if c.retimed), key=lambda c: c.median_us):
            key = c.key.split("@")[0] + (" (fixed)" if "@" in c.key else "")
            print(f"  {key}: {c.median_us:.1f} µs ({c.q1_us:.1f}-{c.q3_us:.1f}), "
                  f"{rec.memcpy_us / c.median_us:.3f} of memcpy, {c.registers} registers")
        for f in rec.failures:
            print(f"  FAILED {f.key} ({f.stage}): {f.reason[:300]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
