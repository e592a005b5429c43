"""Do tall, narrow shift tiles gain on the 3-D (2, 1, 0) orders? tune_problem
(not stored) over the strided space's candidates plus extra strided shift
tiles (many input rows, few input columns: whole output rows per tile, short
input segments), on permute_bench.py's (2, 1, 0) cases; prints the re-timed
top of each (the tuner's method: the L2 flushed before every timed launch,
the top re-timed interleaved with a memcpy of the same bytes). NOTES 38.

    python benchmarks/shift_tall_probe.py [--reps 9] [--top 8]
    python benchmarks/shift_tall_probe.py --defaults   # the strided shift tiles over a grid of (2, 1, 0) orders
"""
from __future__ import annotations

import argparse

import numpy as np

CASES = [((511, 1031, 257), np.int8), ((263, 509, 257), np.float16), ((257, 509, 263), np.float32)]
AXES = (2, 1, 0)
# (tile_rows, tile_cols, threads, swizzle) of strided shift tiles beyond the space's, per element size
EXTRA = {
    1: [(256, 64, 256, "xor"), (256, 64, 512, "xor"), (256, 64, 256, "none"), (512, 32, 256, "xor"),
        (512, 32, 512, "none"), (256, 32, 256, "xor"), (128, 32, 128, "xor"), (512, 64, 512, "xor"),
        (256, 128, 512, "xor"), (128, 64, 256, "xor")],
    2: [(256, 32, 256, "xor"), (256, 32, 512, "none"), (256, 16, 256, "xor"), (128, 16, 128, "xor"),
        (256, 64, 512, "xor"), (128, 32, 256, "none"), (64, 32, 128, "xor")],
    4: [(128, 16, 256, "xor"), (128, 16, 128, "none"), (64, 16, 128, "xor"), (128, 32, 256, "none"),
        (32, 16, 128, "xor")],
}


def extra_configs(e: int, prob, base) -> list:
    """EXTRA's strided shift configs of element size e that can run prob and are not in base."""
    from autotrans.core.device import Limits
    from autotrans.kernels.config import KernelConfig
    from autotrans.tuning.strided import TUNE_ALIGN, _fit
    have, out = {b.key for b in base}, []
    for tr, tc, nt, sw in EXTRA[e]:
        try:
            c = KernelConfig.from_key(f"shift:e{e}:{tr}x{tc}:t{nt}:v16:r{4 // e}:p{4 // e}:{sw}:col:strided")
        except ValueError as exc:
            print(f"  skipped {tr}x{tc}:t{nt}:{sw}: {exc}")
            continue
        if not _fit(c, prob, TUNE_ALIGN, Limits()) and c.key not in have:
            out.append(c)
    return out


# --defaults: (2, 1, 0) orders of (A, B, C) arrays, out rows of A elements and input rows of C, about
# 32 MiB each (B from that): which strided shift tile should an untuned call take, by row lengths?
GRID_A = (131, 257, 511, 1031, 2053, 4099)
GRID_C = (257, 1001, 3001)


def defaults(reps: int) -> int:
    """Every strided shift tile of the space, timed by tune_problem (not stored), on GRID's
    (2, 1, 0) orders of int8 and float16: µs and fraction of memcpy per tile, the untuned pick marked."""
    from autotrans.core.layout import TileProblem, canonical
    from autotrans.kernels.strided import strided_space
    from autotrans.tuning.strided import default_strided, run_problem, strided_candidates, tune_problem
    for dt in (np.int8, np.float16):
        e = np.dtype(dt).itemsize
        shifts = [c for c in strided_space(e) if c.variant == "shift"]
        print(f"\n{np.dtype(dt).name}: " + ", ".join(f"[{i}] {c.key}" for i, c in enumerate(shifts)))
        for a_ in GRID_A:
            for c_ in GRID_C:
                b_ = max(1, (32 << 20) // (a_ * c_ * e))
                shape = (a_, b_, c_)
                strides = tuple(int(np.prod(shape[i + 1:])) * e for i in range(3))
                prob = run_problem(canonical(shape, strides, e, AXES))
                if not isinstance(prob, TileProblem):
                    print(f"  {shape}: runs as a {type(prob).__name__}, no shift tile")
                    continue
                pick = default_strided(prob)
                cands = [c for c in shifts if c in set(strided_candidates(prob))]
                if not cands:
                    print(f"  {shape}: runs as a {type(prob).__name__}, no shift tile")
                    continue
                rec = tune_problem(prob, save=False, progress=False, reps=reps, top=len(cands), configs=cands)
                t = {c.key: c.median_us for c in rec.candidates if c.retimed}
                best = min(t.values())
                row = "  ".join(f"[{i}]{rec.memcpy_us / t[c.key]:.3f}{'*' if c == pick else ''}"
                                for i, c in enumerate(shifts) if c.key in t)
                print(f"  {shape}: memcpy {rec.memcpy_us:.1f} µs, best {rec.memcpy_us / best:.3f}; {row}", flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--defaults", action="store_true", help="time the space's strided shift tiles over a grid "
                    "of (2, 1, 0) orders instead (which tile should be the untuned default)")
    a = ap.parse_args(argv)
    if a.defaults:
        return defaults(a.reps)
    from autotrans.core.layout import canonical
    from autotrans.tuning.strided import run_problem, strided_candidates, tune_problem
    for shape, dt in CASES:
        e = np.dtype(dt).itemsize
        strides = tuple(int(np.prod(shape[i + 1:])) * e for i in range(len(shape)))
        prob = run_problem(canonical(shape, strides, e, AXES))
        base = strided_candidates(prob)
        extra = extra_configs(e, prob, base)
        rec = tune_problem(prob, save=False, progress=False, reps=a.reps, top=a.top, configs=base + extra)
        cands = sorted((c for c in rec.candidates if c.retimed), key=lambda c: c.median_us)
        keys = {x.key for x in extra}
        print(f"\n{shape} {np.dtype(dt).name} {AXES}: {len(base)} space + {len(extra)} extra; "
              f"memcpy {rec.memcpy_us:.1f} µs")
        for c in cands:
            tag = " (extra)" if c.key in keys else ""
            print(f"  {c.key}{tag}: {c.median_us:.1f} µs ({c.q1_us:.1f}-{c.q3_us:.1f}), "
                  f"{rec.memcpy_us / c.median_us:.3f} of memcpy")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
