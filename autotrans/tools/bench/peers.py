"""The peers: torch eager and compiled, CuPy, cuBLAS geam (through CuPy) and
XLA, each imported lazily, once; a missing one is recorded, not raised."""
from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass

import numpy as np

from ...backend import cuda as driver
from ...backend import memory
from .cases import Case
from .gpu import Data
from .results import Entry, Result, one_line

GEAM_DTYPES = ("float32", "float64", "complex64", "complex128")


class Peers:
    """The frameworks, imported on first use; .problem[lib] says why one is missing."""

    def __init__(self):
        self._mods: dict = {}
        self.problem: dict = {}
        self.versions: dict = {}

    def get(self, lib: str):
        """The imported module, or None (then .problem[lib] says why)."""
        if lib not in self._mods:
            try:
                self._mods[lib] = getattr(self, f"_import_{lib}")()
            except Exception as exc:     # ImportError, a CUDA-less build, a broken install
                self._mods[lib] = None
                self.problem[lib] = one_line(exc)
        return self._mods[lib]

    def _import_torch(self):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
        import torch._dynamo
        _raise_recompile_limits(torch._dynamo.config)
        torch.cuda.set_device(driver.device().ordinal)   # PyCUDA's device (AUTOTRANS_DEVICE)
        self.versions["torch"] = torch.__version__
        try:
            import triton
            self.versions["triton"] = triton.__version__
        except ImportError:
            pass
        if torch.cuda.current_stream().cuda_stream != 0:
            self.versions["torch_stream"] = "not the legacy default stream: timings would not hold"
        return torch

    def _import_cupy(self):
        import cupy
        import cupy.cublas  # noqa: F401  (geam)
        cupy.cuda.Device(driver.device().ordinal).use()
        self.versions["cupy"] = cupy.__version__
        self.versions["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        if cupy.cuda.get_current_stream().ptr != 0:
            self.versions["cupy_stream"] = "not the legacy default stream: timings would not hold"
        return cupy

    def _import_jax(self):
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        import jax
        import jax.numpy  # noqa: F401
        jax.config.update("jax_enable_x64", True)
        if not jax.devices("gpu"):
            raise RuntimeError("JAX has no GPU backend")
        self.versions["jax"] = jax.__version__
        return jax

    def release(self) -> None:
        """Give cached device memory back between cases."""
        if self._mods.get("torch") is not None:
            self._mods["torch"].cuda.empty_cache()
        if self._mods.get("cupy") is not None:
            self._mods["cupy"].get_default_memory_pool().free_all_blocks()


def _raise_recompile_limits(cfg) -> None:
    """torch.compile compiles every shape afresh: lift dynamo's recompile limits."""
    for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                 "accumulated_cache_size_limit"):
        if hasattr(cfg, name):
            setattr(cfg, name, 1 << 16)


class _View:
    """A device buffer as a C-contiguous array, for torch.as_tensor and cupy.asarray."""

    def __init__(self, ptr: int, shape, dtype):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": np.dtype(dtype).str,
                                         "data": (int(ptr), False), "version": 2, "strides": None}


@dataclass
class Xla:
    """A jitted XLA transpose ready to time (hosts and arrays: the inputs, kept until checked)."""
    fn: object = None
    x: object = None
    setup_s: float | None = None
    hosts: dict | None = None
    arrays: dict | None = None


def _needs(lib: str):
    """A maker make(module, case, data) made maker(bench, case, data): lib
    imported through bench.peers, or the Result saying it is missing."""
    def wrap(make):
        @functools.wraps(make)
        def maker(bench, case: Case, data: Data):
            mod = bench.peers.get(lib)
            if mod is None:
                return Result("missing", note=bench.peers.problem.get(lib, ""))
            return make(mod, case, data)
        return maker
    return wrap


def _tensors(torch, case: Case, data: Data) -> dict:
    return {p: torch.as_tensor(_View(p, case.shape, case.dtype), device="cuda") for p in (data.x, data.xc)}


def _arrays(cupy, case: Case, data: Data) -> dict:
    return {p: cupy.asarray(_View(p, case.shape, case.dtype)) for p in (data.x, data.xc)}


@_needs("torch")
def torch_entry(torch, case: Case, data: Data):
    """torch eager: out.copy_(x.mT) into the case's output buffer."""
    xs, y = _tensors(torch, case, data), data.y
    out = torch.as_tensor(_View(y, case.out_shape, case.dtype), device="cuda")

    def call(src):
        out.copy_(xs[src].mT)
        return y
    return Entry("torch", call)


@_needs("torch")
def torch_compile_entry(torch, case: Case, data: Data):
    """torch.compile(lambda t: t.mT.contiguous()), compiled afresh for this shape."""
    xs = _tensors(torch, case, data)
    torch._dynamo.reset()
    fn = torch.compile(lambda t: t.mT.contiguous(), dynamic=False)
    t = time.perf_counter()
    fn(xs[data.xc])
    torch.cuda.synchronize()
    setup = time.perf_counter() - t
    return Entry("torch_compile", lambda src: fn(xs[src]), into_y=False, setup_s=setup)


@_needs("cupy")
def cupy_entry(cupy, case: Case, data: Data):
    """CuPy: ascontiguousarray(x.swapaxes(-1, -2))."""
    xs = _arrays(cupy, case, data)
    return Entry("cupy", lambda src: cupy.ascontiguousarray(xs[src].swapaxes(-1, -2)), into_y=False)


def geam_entry(bench, case: Case, data: Data):
    """cuBLAS geam through cupy.cublas.geam (2-D float32/float64/complex only)."""
    if len(case.shape) != 2 or case.dtype not in GEAM_DTYPES:
        return Result("n/a", note="cuBLAS geam: 2-D float32/float64/complex only")
    return _geam(bench, case, data)


@_needs("cupy")
def _geam(cupy, case: Case, data: Data):
    xs, y = _arrays(cupy, case, data), data.y
    out = cupy.asarray(_View(y, case.out_shape, case.dtype))
    # B: any (N, M) array; with beta = 0 it only scales to zero (the other input, never C)
    bs = {p: cupy.asarray(_View(data.other(p), case.out_shape, case.dtype)) for p in xs}
    geam = cupy.cublas.geam

    def call(src):
        geam("T", "N", 1.0, xs[src], 0.0, bs[src], out=out)
        return y
    return Entry("geam", call)


@_needs("jax")
def jax_entry(jax, case: Case, data: Data):
    """An Xla: jax.jit(swapaxes) on copies of the inputs, compiled on the complement."""
    n, dt = case.nbytes, np.dtype(case.dtype)
    hosts = {p: memory.dtoh(p, n).view(dt).reshape(case.shape) for p in (data.xc, data.x)}
    arrays = {p: jax.device_put(h) for p, h in hosts.items()}
    fn = jax.jit(lambda a: jax.numpy.swapaxes(a, -1, -2))
    t = time.perf_counter()
    fn(arrays[data.xc]).block_until_ready()
    return Xla(fn, arrays[data.x], time.perf_counter() - t, hosts, arrays)
