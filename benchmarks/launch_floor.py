"""Where the microseconds of a small transpose go. Bench-style event times
(CUDA events around the launch alone, after a spin; with the benchmark's L2
flush before every launch, and without it) for torch.compile's transpose, a
device-to-device copy of the same bytes, a one-element kernel (the launch
floor), and autotrans kernels given by key; all interleaved in one process.
Compare with ncu's kernel durations (benchmarks/ncu_launch.py; NOTES 36).
--outputs K: the first key and memcpy also write K-1 other output buffers
(does where the output lies move a small launch's time?).
--spin US...: then flushed again with each spin length before the launch
(the benchmark's spin is twice the slowest contender's host cost: 400-500 µs
on small cases, where this script's default is 60 µs).
--carveout P...: then again with each shared-memory carveout preference P (a
percentage, cuFuncSetAttribute) set on the autotrans kernels; ncu finds the
driver giving a 4 KiB-a-block tile 132 KiB of shared memory, where Triton's
kernel gets 64 KiB and the flush kernel 32 KiB.

    python benchmarks/launch_floor.py 512x512 int8 KEY... [--reps 41] [--spin 20 500] [--carveout 0 25 100]
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np

from autotrans.backend import cuda as driver
from autotrans.backend import driver as cu
from autotrans.backend import memory
from autotrans.kernels.config import KernelConfig
from autotrans.tools.bench.gpu import Gpu
from autotrans.tuning import loader

SPIN_US = 60.0
CARVEOUT = 9   # CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT


def contenders(shape, dtype, keys, outputs: int = 1):
    """name -> call(), every one on the legacy default stream; the kernels; the
    buffers. outputs > 1: the first key and memcpy also write each of that
    many more output buffers, at addresses spread by allocations between them."""
    import torch
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    bufs = [memory.alloc(n), memory.alloc(n)]   # returned: freed when dropped
    src, dst = int(bufs[0]), int(bufs[1])
    x = torch.ones(shape, dtype=getattr(torch, np.dtype(dtype).name), device="cuda")
    one = torch.empty(1, device="cuda")
    f = torch.compile(lambda t: t.mT.contiguous(), dynamic=False)
    f(x)
    out = {"torch.compile": lambda: f(x), "memcpy": lambda: memory.memcpy_dtod(dst, src, n),
           "one-element fill": lambda: one.fill_(1.0)}
    kernels = [loader.kernel(KernelConfig.from_key(k)) for k in keys]
    for k, kern in zip(keys, kernels):
        go = kern.launcher(shape)
        out[k] = lambda go=go: go(src, dst)
    for i in range(1, outputs):
        bufs += [memory.alloc(i * 192 * 1024 + 4096), memory.alloc(n)]
        d = int(bufs[-1])
        out[f"memcpy -> output {i}"] = lambda d=d: memory.memcpy_dtod(d, src, n)
        if keys:
            go = kernels[0].launcher(shape)
            out[f"{keys[0]} -> output {i}"] = lambda go=go, d=d: go(src, d)
    for call in out.values():
        call()
    driver.synchronize()
    return out, kernels, bufs


def set_carveout(kernels, percent: int) -> None:
    for k in kernels:
        cu.check(cu.lib().cuFuncSetAttribute(k.fn.handle, CARVEOUT, percent), f"{k.cfg.key}: carveout {percent}")


def measure(gpu: Gpu, calls: dict, reps: int, flush: bool, spin: float = SPIN_US) -> dict:
    names, samples = list(calls), {k: [] for k in calls}
    for r in range(reps):
        pending = []
        for name in names[r % len(names):] + names[:r % len(names)]:
            start, end = driver.event(), driver.event()
            if flush:
                gpu.flush()
            gpu.spin(spin)
            start.record()
            calls[name]()
            end.record()
            pending.append((name, start, end))
        driver.synchronize()
        for name, start, end in pending:
            samples[name].append(end.time_since(start) * 1000.0)
    return samples


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape")
    ap.add_argument("dtype")
    ap.add_argument("keys", nargs="*")
    ap.add_argument("--reps", type=int, default=41)
    ap.add_argument("--carveout", type=int, nargs="*", default=[], metavar="P")
    ap.add_argument("--outputs", type=int, default=1, metavar="K",
                    help="the first key and memcpy also write K-1 other output buffers (placement)")
    ap.add_argument("--spin", type=float, nargs="*", default=[], metavar="US",
                    help="also time flushed with each of these spins (µs) before the launch")
    a = ap.parse_args(argv)
    shape = tuple(int(s) for s in a.shape.split("x"))
    gpu = Gpu()
    calls, kernels, _bufs = contenders(shape, a.dtype, a.keys, a.outputs)
    cols = {"L2 flushed": measure(gpu, calls, a.reps, True), "warm": measure(gpu, calls, a.reps, False)}
    for us in a.spin:
        cols[f"flushed, spin {us:g} µs"] = measure(gpu, calls, a.reps, True, us)
    for p in a.carveout:
        set_carveout(kernels, p)
        cols[f"flushed, carveout {p}%"] = measure(gpu, calls, a.reps, True)
    print(f"\n{a.shape} {a.dtype}, {a.reps} repetitions, µs: median (q1-q3)\n")
    print("| contender | " + " | ".join(cols) + " |\n|---|" + "---:|" * len(cols))
    for k in calls:
        row = []
        for samples in cols.values():
            q = statistics.quantiles(samples[k], n=4)
            row.append(f"{statistics.median(samples[k]):.2f} ({q[0]:.2f}-{q[2]:.2f})")
        print(f"| {k} | " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
