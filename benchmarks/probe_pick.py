"""Does the tuner's ranking of a strided cast problem's configs hold when
permute() runs them? The tuner's top configs for (4099, 8191) float32 ->
bfloat16 (1, 0), re-timed by tune_problem(configs=[each]) and then as
permute_bench.py times permute() with each stored as the winner (torch
tensors, L2 flush, spin, events, 30 interleaved rounds).

    python benchmarks/probe_pick.py [--shape 4099x8191] [--top 6]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import os
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="4099x8191")
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    os.environ.setdefault("AUTOTRANS_CACHE_DIR", tempfile.mkdtemp())
    import torch
    import autotrans
    from autotrans.kernels.config import CAST_SIZES, KernelConfig, cast_for
    from autotrans.kernels.strided import as_strided
    from autotrans.tuning.strided import run_problem, tune_problem
    shape = tuple(int(s) for s in args.shape.split("x"))
    x = torch.randint(-100, 100, shape, device="cuda").to(torch.float32)
    axes = (1, 0)
    cast = cast_for("float32", "bfloat16")
    from autotrans.core.layout import canonical
    canon = canonical(x.shape, tuple(s * 4 for s in x.stride()), 4, axes,
                                            out_itemsize=CAST_SIZES[cast][1])
    problem = run_problem(as_strided(canon), cast)
    print("problem:", problem)
    full = tune_problem(problem, progress=False, cast=cast, save=False)
    top = [c for c in full.candidates if c.retimed][:args.top]
    print("tuner's re-timed top:", *[f"{c.key} {c.median_us:.1f}" for c in top], sep="\n  ")
    want = x.t().contiguous().to(torch.bfloat16)
    out = torch.empty_like(want)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    a = torch.empty(x.numel() * 3, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)

    def time_us(fn):
        flush.fill_(1)
        torch.cuda._sleep(400_000)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e) * 1e3
    caches, tuner = {}, {}
    for c in top:
        d = tempfile.mkdtemp()
        rec = tune_problem(problem, progress=False, cast=cast, configs=[KernelConfig.from_key(c.key)],
                           cache=autotrans.ResultCache(d),
                           reps=20)
        caches[c.key], tuner[c.key] = d, rec.time_us
    samples = {k: [] for k in caches}
    samples["memcpy"] = []
    for r in range(args.reps):
        for k, d in caches.items():
            os.environ["AUTOTRANS_CACHE_DIR"] = d
            autotrans.forget()
            autotrans.permute(x, axes, out=out, dtype=torch.bfloat16)   # the plan for this cache
            torch.cuda.synchronize()
            if r == 0:
                assert torch.equal(out.view(torch.uint8), want.view(torch.uint8)), k
            samples[k].append(time_us(lambda: autotrans.permute(x, axes, out=out, dtype=torch.bfloat16)))
        samples["memcpy"].append(time_us(lambda: b.copy_(a)))
    mem = statistics.median(samples.pop("memcpy"))
    print(f"\nmemcpy of {a.numel() / 2**20:.0f} MiB: {mem:.1f} us")
    print("| config | tuner, alone (us) | tuner, in full tune (us) | permute() (us) | of memcpy |")
    for c in top:
        m = statistics.median(samples[c.key])
        print(f"| {c.key} | {tuner[c.key]:.1f} | {c.median_us:.1f} | {m:.1f} | {mem / m:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
