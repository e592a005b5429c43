"""Do skinny tiles outside the space win the skinny shapes torch.compile wins?

On 100003x17 float16 (0.86 of torch.compile's speed), 262144x3 float16,
12x345678 and 7x500000 float32 the tuned skinny tile is 4-14% slower than
torch.compile (results/h200.md). The space holds short sides of 4-32 elements
and tiles of 8 and 16 KiB at 64-256 threads, padded. This probe tunes each
shape over the space plus every valid skinny tile with short sides 4-32 that
take the shape, long sides 64-1024, 64-512 threads and pad 0/1 (and, as
tune() does, its fastest compiled for the one shape), stores the winner in
$AUTOTRANS_CACHE_DIR, and prints the space's best against the extras' best,
each as a fraction of a memcpy of the same bytes. Then run bench.py --cases on
the same cache folder to time the winner against the peers in one process:

    AUTOTRANS_CACHE_DIR=/tmp/skinny python benchmarks/skinny_probe.py
    AUTOTRANS_CACHE_DIR=/tmp/skinny python benchmarks/bench.py --no-jax --no-tune-times \\
        --cases '^(100003x17:float16|262144x3:float16|12x345678:float32|7x500000:float32)$' --name skinny-probe
"""
from __future__ import annotations

import argparse
import functools
import itertools

import numpy as np

from autotrans.core.problem import as_bmn

CASES = [((100003, 17), "float16"), ((262144, 3), "float16"), ((12, 345678), "float32"),
         ((7, 500000), "float32")]
SIDES = (4, 8, 16, 20, 24, 32)
LONGS = (64, 128, 256, 512, 1024)
THREADS = (64, 128, 256, 512)
# --wide: shapes with a short side of 129-512 elements (the aspect-512 grid's
# class, and the fused (1, 2, 0) / (2, 0, 1) orders of permute_bench's odd 3-D
# float32 case), where the dense tiles' last tile re-moves most of a tile.
WIDE_CASES = [((130813, 263), "float32"), ((257, 133867), "float32"), ((65537, 301), "int8"),
              ((301, 65537), "float16"), ((100003, 333), "float16"), ((65536, 384), "int8"),
              ((363, 185365), "int8"), ((257, 131073), "float16"), ((181, 92683), "float32"),
              ((129, 65537), "float64"), ((333, 100003), "float16"), ((4, 257, 33301), "float32"),
              ((100, 200003), "int8"), ((480, 40000), "complex64"), ((131073, 257), "float16"),
              ((185365, 363), "int8")]
WIDE_LONG_BYTES = (32, 64, 128, 256)


def _round_up(n: int, k: int) -> int:
    return -(-n // k) * k


def is_wide(c) -> bool:
    """A skinny config with a short side past the space's powers of two."""
    from autotrans.families import skinny
    return c.variant in skinny.VARIANTS and skinny.short_side(c) > skinny.MAX_SIDE


def wide_extras(bmn, e: int) -> list:
    """Skinny configs with short sides past 32 that take shape bmn: the side
    rounded up to 8, to 32 and to a power of two; long sides of 32-256 bytes;
    the two fewest thread counts that divide the tile; pad 0/1."""
    from autotrans.families import skinny
    from autotrans.kernels.config import KernelConfig
    from autotrans.tuning.space import fit_problems
    _, m, n = bmn
    variant, side = ("narrow", n) if n <= m else ("short", m)
    sides = {_round_up(side, 8), _round_up(side, 32), 1 << (side - 1).bit_length()}
    out = []
    for s, lb, pad in itertools.product(sorted(sides), WIDE_LONG_BYTES, (0, 1)):
        if not skinny.MAX_SIDE < s <= skinny.MAX_WIDE or lb // e < 1:
            continue
        l, nv = lb // e, s * lb // 16
        nts = [t for t in range(_round_up(s, 32), 1025, 32) if nv % t == 0 and nv // t <= skinny.MAX_STEPS][:2]
        for nt in nts:
            rows, cols = (l, s) if variant == "narrow" else (s, l)
            try:
                c = KernelConfig(variant, e, rows, cols, nt, vec_bytes=16, pad=pad)
            except ValueError:
                continue
            if not fit_problems(c, bmn):
                out.append(c)
    return out


def extras(bmn, e: int) -> list:
    """Valid skinny configs outside the space that take shape bmn."""
    from autotrans.kernels.config import KernelConfig
    from autotrans.tuning.space import admits, candidates
    have = {c.key for c in candidates(bmn, e)}
    out = []
    for variant, s, l, nt, pad in itertools.product(("narrow", "short"), SIDES, LONGS, THREADS, (0, 1)):
        rows, cols = (l, s) if variant == "narrow" else (s, l)
        try:
            c = KernelConfig(variant, e, rows, cols, nt, vec_bytes=16, pad=pad)
        except ValueError:
            continue
        if c.key not in have and admits(c, bmn):
            out.append(c)
    return out


def probe(shape, dt: str, reps: int, top: int, wide: bool = False) -> None:
    from autotrans.backend import cuda as driver
    from autotrans.results.store import ResultCache
    from autotrans.tuning.runner import fixed_variants, key_for, tune_candidates
    from autotrans.tuning.space import candidates
    from autotrans.tuning.verify import Buffers
    import time
    e = np.dtype(dt).itemsize
    bmn = as_bmn(shape)
    base = candidates(bmn, e, driver.device().limits)
    more = wide_extras(bmn, e) if wide else extras(bmn, e)
    if wide:   # the space's own wide tiles (shape_space) are marked with the extras
        more = [c for c in more if c not in base]
        base, more = ([c for c in base if not is_wide(c)], [c for c in base if is_wide(c)] + more)
    keys = {c.key for c in more}
    rec = tune_candidates(base + more, functools.partial(Buffers, bmn, e), bmn, np.dtype(dt), str(bmn),
                          progress=False, reps=reps, top=top, t0=time.perf_counter(),
                          variants=functools.partial(fixed_variants, bmn))
    ResultCache().put(key_for(bmn, e), rec)
    timed = sorted((c for c in rec.candidates if c.retimed), key=lambda c: c.median_us)
    extra = lambda k: k.split("@")[0] in keys  # noqa: E731
    print(f"\n{'x'.join(map(str, shape))} {dt}: {len(base)} in the space, {len(more)} extras; "
          f"memcpy {rec.memcpy_us:.2f} µs; failures {len(rec.failures)}", flush=True)
    for c in timed:
        print(f"    {'*' if extra(c.key) else ' '} {c.key}: {c.median_us:.2f} µs ({c.q1_us:.2f}-{c.q3_us:.2f}) "
              f"{rec.memcpy_us / c.median_us:.3f}", flush=True)
    first = sorted((c for c in rec.candidates if not c.retimed and extra(c.key)), key=lambda c: c.median_us)
    for c in first[:3]:   # the extras' best outside the re-timed ones (first pass: fewer repetitions)
        print(f"    * {c.key}: {c.median_us:.2f} µs (first pass, n={c.n}) {rec.memcpy_us / c.median_us:.3f}",
              flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--list", action="store_true", help="print each case's extras and exit (no GPU)")
    ap.add_argument("--wide", action="store_true", help="short sides of 129-512 elements (WIDE_CASES)")
    ap.add_argument("--cases", metavar="REGEX", help="only cases whose MxN:dtype matches")
    a = ap.parse_args(argv)
    import re
    for shape, dt in WIDE_CASES if a.wide else CASES:
        if a.cases and not re.search(a.cases, "x".join(map(str, shape)) + f":{dt}"):
            continue
        if a.list:
            xs = (wide_extras if a.wide else extras)(as_bmn(shape), np.dtype(dt).itemsize)
            print(f"{shape} {dt}: {len(xs)} extras", *(c.key for c in xs[:5]), "...")
        else:
            probe(shape, dt, a.reps, a.top, a.wide)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
