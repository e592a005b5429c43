"""Where the microseconds of a small transpose go. Bench-style event times
(CUDA events around the launch alone, after a spin; with the benchmark's L2
flush before every launch, and without it) for torch.compile's transpose, a
device-to-device copy of the same bytes, a one-element kernel (the launch
floor), and autotrans kernels given by key; all interleaved in one process.
Compare with ncu's kernel durations (benchmarks/ncu_launch.py; NOTES 36).

    python benchmarks/launch_floor.py 512x512 int8 KEY... [--reps 41]
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np

from autotrans.backend import cuda as driver
from autotrans.backend import memory
from autotrans.kernels.config import KernelConfig
from autotrans.tools.bench.gpu import Gpu
from autotrans.tuning import loader

SPIN_US = 60.0


def contenders(shape, dtype, keys):
    """name -> call(), every one on the legacy default stream."""
    import torch
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    src, dst = int(memory.alloc(n)), int(memory.alloc(n))
    x = torch.ones(shape, dtype=getattr(torch, np.dtype(dtype).name), device="cuda")
    one = torch.empty(1, device="cuda")
    f = torch.compile(lambda t: t.mT.contiguous(), dynamic=False)
    f(x)
    out = {"torch.compile": lambda: f(x), "memcpy": lambda: memory.memcpy_dtod(dst, src, n),
           "one-element fill": lambda: one.fill_(1.0)}
    for k in keys:
        go = loader.kernel(KernelConfig.from_key(k)).launcher(shape)
        out[k] = lambda go=go: go(src, dst)
    for call in out.values():
        call()
    driver.synchronize()
    return out


def measure(gpu: Gpu, calls: dict, reps: int, flush: bool) -> dict:
    names, samples = list(calls), {k: [] for k in calls}
    for r in range(reps):
        pending = []
        for name in names[r % len(names):] + names[:r % len(names)]:
            start, end = driver.event(), driver.event()
            if flush:
                gpu.flush()
            gpu.spin(SPIN_US)
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
    a = ap.parse_args(argv)
    shape = tuple(int(s) for s in a.shape.split("x"))
    gpu = Gpu()
    calls = contenders(shape, a.dtype, a.keys)
    flushed, warm = measure(gpu, calls, a.reps, True), measure(gpu, calls, a.reps, False)
    print(f"\n{a.shape} {a.dtype}, {a.reps} repetitions, µs: median (q1-q3)\n")
    print("| contender | L2 flushed | warm |\n|---|---:|---:|")
    for k in calls:
        row = []
        for s in (flushed[k], warm[k]):
            q = statistics.quantiles(s, n=4)
            row.append(f"{statistics.median(s):.2f} ({q[0]:.2f}-{q[2]:.2f})")
        print(f"| {k} | {row[0]} | {row[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
