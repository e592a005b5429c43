"""Benchmark: autotrans against a device-to-device memcpy of the same bytes, the
seeds' best kernel, torch, CuPy and XLA, all measured in one run.

PyCUDA, torch and CuPy share the device's primary context and the default
stream, so all of them are timed with the same CUDA events, interleaved, over
input/output sets rotated so that each run starts with a cold L2. XLA runs on
its own streams: it is timed by wall clock over many asynchronous calls, and
reported against the same memcpy (an estimate: for small matrices its
per-call dispatch cost dominates).
"""
from __future__ import annotations

import os
import time
from contextlib import suppress

import numpy as np

from .. import api
from ..api import launch
from ..backend import cuda as driver
from ..core.problem import as_bmn, elem_size
from ..kernels.config import classic
from ..tuning import loader, timing
from ..tuning.verify import Buffers

DTYPES = ("int8", "float16", "float32", "float64", "complex128")
GIB = 1 << 30


def default_cases() -> list[tuple[tuple, str]]:
    """The cases of the performance issue: squares for every element size
    (matrices of at most 1 GiB), 4097x4095, 65536x64, 64x65536 and 12288x3072."""
    cases = [((n, n), dt) for n in (16384, 8192, 4096, 1024) for dt in DTYPES
             if n * n * np.dtype(dt).itemsize <= GIB]
    cases += [((4097, 4095), dt) for dt in DTYPES]
    cases += [((65536, 64), "float32"), ((64, 65536), "float32"),
              ((12288, 3072), "float32"), ((12288, 3072), "int8")]
    return cases


def _ours(bufs, bmn, dtype, tune):
    """Launch function of the config transpose() uses (tuning it first if asked)."""
    if tune and api.explain(bmn, dtype).source != "exact":
        api.tune(bmn, dtype, progress=False)
    kernel = launch.kernel_for(bmn, elem_size(dtype), 16, tune=False)
    bad = bufs.verify(kernel)
    if bad:
        raise RuntimeError(f"autotrans kernel {kernel.cfg.key} failed verification: {bad}")
    return bufs.launcher(kernel), kernel.cfg.key


def _seed(bufs, e):
    return bufs.launcher(loader.kernel(classic("seed", e)))


def _torch(bmn, dt, sets):
    import torch
    tdt = getattr(torch, np.dtype(dt).name)
    xs = [torch.randint(0, 127, bmn, dtype=torch.int8, device="cuda").to(tdt) for _ in range(sets)]
    nxt = timing.Rotation(sets).next
    return lambda: xs[nxt()].transpose(-1, -2).contiguous()


def _cupy(bmn, dt, sets):
    import cupy
    xs = [cupy.asarray(_host_input(bmn, dt, k)) for k in range(sets)]
    nxt = timing.Rotation(sets).next
    return lambda: cupy.ascontiguousarray(xs[nxt()].swapaxes(-1, -2))


def _host_input(bmn, dt, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 127, bmn, dtype=np.int8).astype(dt)


def _peers(bmn, dt, sets) -> dict:
    out = {}
    for name, make in (("torch", _torch), ("cupy", _cupy)):
        with suppress(ImportError):
            out[name] = make(bmn, dt, sets)
    return out


def xla_time(bmn, dt, sets: int, calls: int = 30) -> float | None:
    """Wall-clock microseconds per call of a jitted XLA transpose (many calls in
    flight, then one wait), or None without JAX."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    if np.dtype(dt).itemsize >= 8:
        jax.config.update("jax_enable_x64", True)
    xs = [jax.device_put(_host_input(bmn, dt, k)) for k in range(sets)]
    f = jax.jit(lambda a: jnp.swapaxes(a, -1, -2))
    f(xs[0]).block_until_ready()
    t = time.perf_counter()
    for i in range(calls):
        y = f(xs[i % sets])
    y.block_until_ready()
    del xs
    return (time.perf_counter() - t) / calls * 1e6


def run_case(shape, dtype, *, peers: bool = True, tune: bool = True) -> dict:
    """One benchmark row: microseconds per transpose of each contender."""
    bmn, e = as_bmn(shape), elem_size(dtype)
    bufs = Buffers(bmn, e, 20261130)
    ours, key = _ours(bufs, bmn, dtype, tune)
    launches = {"autotrans": ours, "memcpy": bufs.memcpy_launcher(), "seed": _seed(bufs, e)}
    if peers:
        launches.update(_peers(bmn, dtype, bufs.sets))
    stats = timing.interleaved(launches, rounds=8, per_round=2)
    row = {"shape": list(bmn), "dtype": np.dtype(dtype).name, "config": key,
           "source": api.explain(bmn, dtype).source,
           **{f"{k}_us": s.median_us for k, s in stats.items()},
           **{f"{k}_iqr_us": s.iqr_us for k, s in stats.items()}}
    row["jax_us"] = xla_time(bmn, dtype, bufs.sets) if peers else None
    row["frac_memcpy"] = row["memcpy_us"] / row["autotrans_us"]
    return row


def run(cases, *, peers: bool = True, progress=None, tune: bool = True) -> list[dict]:
    """Benchmark rows for (shape, dtype) cases (see run_case)."""
    cases = list(cases)
    rows = []
    show = progress if progress is not None else len(cases) > 1
    for i, (shape, dt) in enumerate(cases):
        rows.append(run_case(shape, dt, peers=peers, tune=tune))
        if show:
            r = rows[-1]
            print(f"[{i + 1}/{len(cases)}] {'x'.join(map(str, r['shape'][1:]))} {r['dtype']}: "
                  f"{r['frac_memcpy']:.3f} of memcpy", flush=True)
        _release_peers()
    return rows


def _release_peers() -> None:
    with suppress(ImportError):
        import torch
        torch.cuda.empty_cache()
    with suppress(ImportError):
        import cupy
        cupy.get_default_memory_pool().free_all_blocks()


def _ratio(row, key) -> str:
    us = row.get(f"{key}_us")
    return f"{row['memcpy_us'] / us:.2f}" if us else "–"


def markdown(rows) -> str:
    """The results table: µs per transpose and each contender's fraction of memcpy."""
    head = ("| shape | dtype | autotrans µs | memcpy µs | autotrans | seed | torch | CuPy | XLA* | config |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
    lines = []
    for r in rows:
        shape = "x".join(map(str, r["shape"][1:] if r["shape"][0] == 1 else r["shape"]))
        xla = _ratio(r, "jax")
        lines.append(f"| {shape} | {r['dtype']} | {r['autotrans_us']:.1f} | {r['memcpy_us']:.1f} | "
                     f"**{r['frac_memcpy']:.3f}** | {_ratio(r, 'seed')} | {_ratio(r, 'torch')} | "
                     f"{_ratio(r, 'cupy')} | {xla} | `{r['config']}` |")
    return head + "\n".join(lines) + "\n"


def call_overhead(m: int = 1024, n: int = 1024, calls: int = 3000) -> dict:
    """Wall time per call of autotrans.transpose() and of torch's
    x.t().contiguous() on an (m, n) float32 matrix, in microseconds."""
    x = driver.gpuarray().to_gpu(np.random.default_rng(0).random((m, n), dtype=np.float32))
    out = {"transpose_us": _per_call(lambda: api.transpose(x), driver.synchronize, calls)}
    with suppress(ImportError):
        import torch
        tx = torch.rand(m, n, device="cuda")
        out["torch_us"] = _per_call(lambda: tx.t().contiguous(), torch.cuda.synchronize, calls)
    return out


def _per_call(fn, sync, calls: int) -> float:
    for _ in range(100):
        fn()
    sync()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - t) / calls * 1e6
