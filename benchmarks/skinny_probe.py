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

CASES = [((100003, 17), "float16"), ((262144, 3), "float16"), ((12, 345678), "float32"),
         ((7, 500000), "float32")]
SIDES = (4, 8, 16, 20, 24, 32)
LONGS = (64, 128, 256, 512, 1024)
THREADS = (64, 128, 256, 512)


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


def probe(shape, dt: str, reps: int, top: int) -> None:
    from autotrans.backend import cuda as driver
    from autotrans.results.store import ResultCache
    from autotrans.tuning.runner import fixed_variants, key_for, tune_candidates
    from autotrans.tuning.space import candidates
    from autotrans.tuning.verify import Buffers
    import time
    e = np.dtype(dt).itemsize
    bmn = (1, *shape)
    base = candidates(bmn, e, driver.device().limits)
    more = extras(bmn, e)
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--list", action="store_true", help="print each case's extras and exit (no GPU)")
    a = ap.parse_args(argv)
    for shape, dt in CASES:
        if a.list:
            xs = extras((1, *shape), np.dtype(dt).itemsize)
            print(f"{shape} {dt}: {len(xs)} extras", *(c.key for c in xs[:5]), "...")
        else:
            probe(shape, dt, a.reps, a.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
