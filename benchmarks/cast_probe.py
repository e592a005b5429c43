"""Which strided tile should a cast-transpose at odd alignments take? tune_problem
(not stored) over every strided candidate of the cast, on a grid of odd
shapes (2-D of several aspect ratios, batched, a 3-D (2, 1, 0) order) and
float32 <-> 16-bit casts; prints per problem the best candidate, each shift
tile's and the untuned pick's fraction of a memcpy of the same bytes (the
tuner's method: the L2 flushed before every timed launch, medians, the top
re-timed interleaved with the memcpy). NOTES 39.

    python benchmarks/cast_probe.py [--reps 5] [--top 6]
    python benchmarks/cast_probe.py --extra   # float32 -> bfloat16 with shift tiles beyond the space too
"""
from __future__ import annotations

import argparse

import numpy as np

# (shape, axes) at odd alignments: rows of neither side a multiple of 16 bytes
SHAPES = [((4099, 8191), (1, 0)), ((8191, 4099), (1, 0)), ((1031, 30011), (1, 0)), ((30011, 1031), (1, 0)),
          ((2053, 2047), (1, 0)), ((5, 2049, 4097), (0, 2, 1)), ((257, 509, 263), (2, 1, 0))]
CASTS = (("float32", "bfloat16"), ("float32", "float16"), ("bfloat16", "float32"))
# --extra: strided shift tiles (rows, columns, threads, swizzle) beyond the space, for casts from float32:
# taller tiles read fewer extra rows (16 / out_elem_bytes a tile) and wider ones fewer realignment bytes
EXTRA = [(128, 32, 256, "xor"), (128, 32, 256, "none"), (128, 64, 256, "xor"), (128, 32, 512, "xor"),
         (64, 64, 512, "xor"), (256, 32, 512, "xor")]


def extra_configs(prob, cast: str) -> list:
    """EXTRA's shift configs of this float32 cast that can run prob."""
    from autotrans.core.device import Limits
    from autotrans.kernels.config import KernelConfig
    from autotrans.tuning.strided import TUNE_ALIGN, _fit
    out = []
    for tr, tc, nt, sw in EXTRA:
        c = KernelConfig.from_key(f"shift:e4:{tr}x{tc}:t{nt}:v16:r1:p1:{sw}:col:strided:{cast}")
        if not _fit(c, prob, TUNE_ALIGN, Limits(), cast=cast):
            out.append(c)
    return out


def problem_of(shape, axes, src: str, dst: str):
    """The strided problem and cast permute() runs for a C-contiguous array of shape and dtype src."""
    from autotrans.core.layout import canonical
    from autotrans.kernels.config import CAST_SIZES, cast_for
    from autotrans.kernels.strided import as_strided
    from autotrans.tuning.strided import run_problem
    cast = cast_for(src, dst)
    e, eo = CAST_SIZES[cast]
    strides = tuple(int(np.prod(shape[i + 1:])) * e for i in range(len(shape)))
    return run_problem(as_strided(canonical(shape, strides, e, axes, out_itemsize=eo)), cast), cast


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--extra", action="store_true", help="float32 -> bfloat16 only, with EXTRA's shift tiles "
                    "among the candidates (marked +)")
    a = ap.parse_args(argv)
    from autotrans.tuning.strided import default_strided, strided_candidates, tune_problem
    for src, dst in CASTS[:1] if a.extra else CASTS:
        for shape, axes in SHAPES:
            prob, cast = problem_of(shape, axes, src, dst)
            pick = default_strided(prob, cast=cast)
            extra = extra_configs(prob, cast) if a.extra else []
            cfgs = strided_candidates(prob, cast=cast) + extra if extra else None
            rec = tune_problem(prob, save=False, progress=False, reps=a.reps, top=a.top, cast=cast, configs=cfgs)
            t = {c.key: c.median_us for c in rec.candidates}
            frac = lambda k: rec.memcpy_us / t[k]  # noqa: E731
            new = {c.key for c in extra}
            shifts = "  ".join(f"{'+' if k in new else ''}{k.split(':')[2]}:{k.split(':')[3]}:{k.split(':')[7]} "
                               f"{frac(k):.3f}" for k in sorted(t) if k.startswith("shift"))
            print(f"{'x'.join(map(str, shape))} {axes} {src}->{dst}: memcpy {rec.memcpy_us:.1f} µs; "
                  f"best {rec.best.key} {frac(rec.best.key):.3f}; untuned {pick.key} "
                  f"{frac(pick.key) if pick.key in t else float('nan'):.3f}; shift: {shifts}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
