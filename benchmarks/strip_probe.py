"""Do strips of shift tiles (KernelConfig.strip) win the odd strided problems?

A strided shift tile reads each input row's segment as the 16-byte vectors
that cover it; where rows are not sector-aligned, neighbouring tiles both read
the 32-byte sector their segments share, and on short rows (the 3-D (2, 1, 0)
orders: 257-byte rows cut into 64-byte segments) that is most of the overfetch
that bounds them (NOTES 29-38). A strip moves ``strip`` tiles side by side in
one block and reads no sector of a row twice (cuda_templates/shift.cu). The
emulator's sector count (no GPU) puts the int8 (511, 1031, 257) order's bound
at 0.67 -> 0.82, float16's at 0.76 -> 0.85 (NOTES 40).

This probe runs tune_problem (not stored: every candidate verified bit-exactly
on the GPU, timed with the L2 flushed before every launch, the top re-timed
against a memcpy of the same bytes) over the strided space plus strips of 2, 4
and 8 of its shift tiles, on the problems permute() runs for odd (2, 1, 0)
orders and odd casts, and prints the space's best, the best strip and each
one's fraction of the memcpy. With --sectors it also prints (no GPU) each
candidate shift tile's sector bound, strips included.

With --dense it takes odd 2-D transposes instead (issue 14's odd x odd
shapes, which transpose() runs on dense shift tiles whose last tiles overlap):
one tune() of each shape over the dense space plus strided shift tiles and
their strips (a dense record may hold a strided config: transpose() runs it
as the shape's kernels.strided.dense_tile).
By the count, strips of 4-8 lift 4097x4095 float16's bound from 0.81 (the
tuned dense tile) to 0.91-0.92 and 8191x8193 int8's from 0.77 to 0.86-0.87.

    python benchmarks/strip_probe.py [--reps 5] [--top 10] [--cases REGEX]
    python benchmarks/strip_probe.py --dense      # odd 2-D shapes: strips against tune()'s dense best
    python benchmarks/strip_probe.py --sectors    # the emulator's counts, no GPU (minutes on 2 cores)
    compute-sanitizer --tool racecheck python benchmarks/strip_probe.py --small   # strips on small problems
"""
from __future__ import annotations

import argparse
import dataclasses
import re

import numpy as np

STRIPS = (2, 4, 8)
# (shape, axes, input dtype, output dtype): odd rows on both sides
CASES = [
    ((511, 1031, 257), (2, 1, 0), "int8", "int8"),
    ((263, 509, 257), (2, 1, 0), "float16", "float16"),
    ((257, 509, 263), (2, 1, 0), "float32", "float32"),
    ((333, 700, 517), (2, 1, 0), "int8", "int8"),
    ((700, 181, 1001), (2, 1, 0), "float16", "float16"),
    ((257, 509, 263), (2, 1, 0), "float32", "bfloat16"),
    ((4099, 8191), (1, 0), "float32", "bfloat16"),
    ((4099, 8191), (1, 0), "float32", "float16"),
    ((4099, 8191), (1, 0), "bfloat16", "float32"),
    ((5, 2049, 4097), (0, 2, 1), "float32", "bfloat16"),
]


# --small: odd problems of a few hundred KiB, each strip verified once (for compute-sanitizer)
SMALL = [((301, 7, 263), (2, 1, 0), "int8", "int8"), ((263, 9, 257), (2, 1, 0), "float16", "float16"),
         ((301, 7, 263), (2, 1, 0), "float32", "bfloat16")]
# --dense: odd 2-D (shape, dtype) that transpose() runs on dense shift tiles: odd squares, then a
# side of a few hundred elements, where a dense last tile re-moves most of a tile (263 columns
# cost 320 with 64-column tiles) and the count puts strided tiles 5-15% ahead (NOTES 47)
DENSE = [((4097, 4095), "float16"), ((4097, 4095), "float32"), ((8191, 8193), "int8"), ((10000, 3333), "int8"),
         ((130813, 263), "float32"), ((257, 133867), "float32"), ((30011, 517), "float16"), ((65537, 301), "int8")]


def label(case) -> str:
    shape, axes, src, dst = case
    return f"{'x'.join(map(str, shape))} {axes} {src}" + ("" if src == dst else f"->{dst}")


def problem_of(shape, axes, src: str, dst: str):
    """The strided problem and cast of a C-contiguous array of shape and dtype
    src: the one permute() runs, or its TileProblem where permute() fuses it
    (strips are shift tiles, which move TileProblems)."""
    from autotrans.core.layout import RowsProblem, TileProblem, canonical
    from autotrans.kernels.config import CAST_SIZES, cast_for
    from autotrans.kernels.strided import as_strided
    from autotrans.tuning.strided import run_problem
    cast = cast_for(src, dst)
    e, eo = CAST_SIZES[cast] if cast != "none" else (np.dtype(src).itemsize,) * 2
    strides = tuple(int(np.prod(shape[i + 1:])) * e for i in range(len(shape)))
    canon = canonical(shape, strides, e, axes, out_itemsize=None if cast == "none" else eo)
    runs = run_problem(as_strided(canon), cast)
    return (runs if isinstance(runs, (TileProblem, RowsProblem)) else as_strided(canon)), cast


def candidates(prob, cast: str) -> tuple[list, set]:
    """The space's candidates plus STRIPS of its shift tiles, each with seams
    (KernelConfig.seam) and without; the strips' keys."""
    from autotrans.tuning.strided import strided_candidates
    base = strided_candidates(prob, cast=cast)
    strips = [dataclasses.replace(c, strip=s, seam=m) for c in base if c.variant == "shift"
              for s in STRIPS for m in (0, 1)]
    return base + strips, {c.key for c in strips}


def measure(cases, reps: int, top: int, only_strips: bool = False) -> None:
    from autotrans.tuning.strided import tune_problem
    for case in cases:
        prob, cast = problem_of(*case)
        cfgs, strips = candidates(prob, cast)
        cfgs = [c for c in cfgs if c.key in strips] if only_strips else cfgs
        rec = tune_problem(prob, save=False, progress=False, reps=reps, top=top, cast=cast, configs=cfgs)
        timed = sorted((c for c in rec.candidates if c.retimed), key=lambda c: c.median_us)
        frac = lambda c: rec.memcpy_us / c.median_us  # noqa: E731
        one = [c for c in timed if c.key not in strips]
        many = [c for c in timed if c.key in strips]
        best = lambda cs: f"{cs[0].key} {cs[0].median_us:.1f} µs {frac(cs[0]):.3f}" if cs else "none re-timed"  # noqa: E731
        print(f"\n{label(case)}: {type(prob).__name__}, {len(cfgs)} candidates ({len(strips)} strips); "
              f"memcpy {rec.memcpy_us:.1f} µs; failures {len(rec.failures)}", flush=True)
        print(f"  space's best: {best(one)}\n  best strip:   {best(many)}")
        for c in timed:
            print(f"    {'*' if c.key in strips else ' '} {c.key}: {c.median_us:.1f} µs "
                  f"({c.q1_us:.1f}-{c.q3_us:.1f}) {frac(c):.3f}", flush=True)


def dense_candidates(m: int, n: int, dt: str) -> tuple[list, set]:
    """tune()'s dense space for (m, n), then the strided shift tiles and their
    STRIPS; the strided ones' keys."""
    from autotrans.kernels.strided import strided_space
    from autotrans.tuning.space import candidates
    e = np.dtype(dt).itemsize
    base = [c for c in strided_space(e) if c.variant == "shift"]
    strided = base + [dataclasses.replace(c, strip=k) for c in base for k in STRIPS]
    return candidates((1, m, n), e) + strided, {c.key for c in strided}


def dense_label(case) -> str:
    (m, n), dt = case
    return f"{m}x{n} {dt}"


def dense(shapes, reps: int, top: int) -> None:
    """These DENSE shapes: one tune() (not stored) over the dense space plus
    strided shift tiles and their strips, which transpose() runs as the
    shape's kernels.strided.dense_tile (what a record holding one launches)."""
    from autotrans.tuning.runner import tune
    for (m, n), dt in shapes:
        space, keys = dense_candidates(m, n, dt)
        strips = [c for c in space if c.key in keys]
        res = tune((m, n), dt, save=False, progress=False, reps=reps, top=top, configs=space)
        timed = sorted((c for c in res.candidates if c.retimed), key=lambda c: c.median_us)
        one = [c for c in timed if c.key not in keys]
        many = [c for c in timed if c.key in keys]
        best = lambda cs: f"{cs[0].key} {cs[0].median_us:.1f} µs {res.memcpy_us / cs[0].median_us:.3f}" \
            if cs else "none re-timed"  # noqa: E731
        print(f"\n{m}x{n} {dt}: {len(space) - len(strips)} dense candidates, {len(strips)} strided; memcpy {res.memcpy_us:.1f} µs, "
              f"failures {len(res.failures)}\n  dense best:   {best(one)}\n  strided best: {best(many)}", flush=True)
        for c in timed:
            print(f"    {'*' if c.key in keys else ' '} {c.key}: {c.median_us:.1f} µs "
                  f"({c.q1_us:.1f}-{c.q3_us:.1f}) {res.memcpy_us / c.median_us:.3f}", flush=True)


def sectors(cases) -> None:
    from autotrans.emulate.sectors import strided_sectors
    for case in cases:
        prob, cast = problem_of(*case)
        cfgs, _ = candidates(prob, cast)
        print(f"\n{label(case)}: {type(prob).__name__}", flush=True)
        for c in cfgs:
            if c.variant != "shift":
                continue
            x = strided_sectors(c, prob)
            bound = (x.ideal + x.out_ideal) / (x.load_sectors + x.store_sectors)
            print(f"  {c.key}: loads {x.read_ratio:.3f}, stores {x.write_ratio:.3f} x ideal; bound {bound:.3f}",
                  flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--cases", help="only cases whose label (e.g. '511x1031x257 (2, 1, 0) int8', with --dense "
                    "'4097x4095 float16') matches")
    ap.add_argument("--sectors", action="store_true", help="print the emulator's sector bounds instead (no GPU)")
    ap.add_argument("--dense", action="store_true", help="odd 2-D shapes: strips against tune()'s dense best")
    ap.add_argument("--small", action="store_true", help="only strips, on small odd problems, each verified and "
                    "timed once (run it under compute-sanitizer)")
    a = ap.parse_args(argv)
    cases = [c for c in (SMALL if a.small else CASES) if not a.cases or re.search(a.cases, label(c))]
    if a.small:
        measure(cases, 1, 1, only_strips=True)
    elif a.dense:
        dense([c for c in DENSE if not a.cases or re.search(a.cases, dense_label(c))], a.reps, a.top)
    elif a.sectors:
        sectors(cases)
    else:
        measure(cases, a.reps, a.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
