"""The one module that imports PyCUDA (lazily), and the device, kernel and
launch types everything else uses.

Kernels load and launch through the driver API (backend.driver, ctypes), in
the context that owns the memory they touch, from any thread and on any stream
handle; PyCUDA is needed only for GPUArrays, autotrans' memory pool and the
tuner's buffers and events. Without PyCUDA or a GPU these raise GPUUnavailable
with the reason, and the rest of the package still works.
"""
from __future__ import annotations

import atexit
import ctypes
import functools
import os
import re
import struct
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from ..core.device import DeviceId, Limits
from ..core.problem import as_bmn
from ..kernels.config import KernelConfig
from ..kernels.strided import dense_tile, strided_args
from ..kernels.templates import ARGS, STRIDED_ARGS
from . import driver as cu
from .driver import CudaError, GPUUnavailable

__all__ = ["GPUUnavailable", "CudaError", "cuda", "gpuarray", "is_gpuarray", "device", "device_info",
           "DeviceInfo", "load_module", "Kernel", "function", "synchronize", "event", "memory_pool",
           "pycuda_current", "home_context"]

STATIC_SMEM_LIMIT = 48 * 1024


@dataclass
class _Home:
    """PyCUDA's context (made current in the thread that first needed it)."""
    ctx: object = None      # the pycuda Context
    handle: int = 0         # its CUcontext
    ordinal: int = 0
    thread: int = 0


_home = _Home()


@functools.lru_cache(maxsize=None)
def cuda():
    """pycuda.driver, initialised, with a current context (the primary context of
    $AUTOTRANS_DEVICE (default 0), shared with torch and CuPy, unless the caller
    made one current)."""
    try:
        import pycuda.driver as drv
    except ImportError as e:
        raise GPUUnavailable(
            f"PyCUDA cannot be imported ({e}). autotrans needs PyCUDA for GPUArrays and tuning: "
            "pip install 'autotrans[cuda]' (building PyCUDA needs the CUDA toolkit).") from e
    try:
        drv.init()
        if drv.Device.count() == 0:
            raise GPUUnavailable("no CUDA device found")
        ctx = drv.Context.get_current()
        if ctx is None:
            ctx = drv.Device(int(os.environ.get("AUTOTRANS_DEVICE", "0"))).retain_primary_context()
            ctx.push()
            atexit.register(_release, ctx)
    except drv.Error as e:
        raise GPUUnavailable(f"CUDA could not start: {e}") from e
    _home.ctx, _home.handle = ctx, cu.current()
    _home.ordinal, _home.thread = cu.current_device(), threading.get_ident()
    return drv


def _release(ctx) -> None:
    from pycuda.tools import clear_context_caches
    try:
        ctx.pop()
    finally:
        clear_context_caches()


def home_context() -> int:
    """The CUcontext PyCUDA works in (GPUArrays, the pool, tuning)."""
    cuda()
    return _home.handle


class pycuda_current:
    """``with pycuda_current():`` PyCUDA's context is current for PyCUDA calls on
    this thread (PyCUDA keeps a context stack per thread; other threads start
    with none). Pushed and popped again, so a thread never exits holding it."""
    __slots__ = ("pushed",)

    def __enter__(self):
        cuda()
        self.pushed = threading.get_ident() != _home.thread
        if self.pushed:
            _home.ctx.push()

    def __exit__(self, *exc):
        if self.pushed:
            _home.ctx.pop()


def gpuarray():
    """The pycuda.gpuarray module (with the context ready)."""
    cuda()
    import pycuda.gpuarray as ga
    return ga


def is_gpuarray(x) -> bool:
    if not type(x).__module__.startswith("pycuda"):
        return False
    try:
        return isinstance(x, gpuarray().GPUArray)
    except GPUUnavailable:
        return False


@dataclass(frozen=True)
class DeviceInfo:
    """What autotrans needs to know of a GPU: its identity and its limits."""
    id: DeviceId
    cc: tuple
    l2_bytes: int
    max_threads: int
    smem_optin: int
    ordinal: int = 0
    max_grid_x: int = 2 ** 31 - 1

    @property
    def arch(self) -> str:
        return self.id.arch

    @property
    def sms(self) -> int:
        return self.id.sms

    @property
    def limits(self) -> Limits:
        return Limits(max_threads=self.max_threads, smem_per_block=self.smem_optin)

    def to_dict(self) -> dict:
        return {"name": self.id.name, "cc": list(self.cc), "sms": self.id.sms, "l2_bytes": self.l2_bytes,
                "driver": self.id.driver, "cuda": self.id.cuda, "fingerprint": self.id.text}


def _driver_release() -> str:
    """The NVIDIA driver's version, from /proc or NVML ("unknown" if neither answers)."""
    try:
        m = re.search(r"Kernel Module\s+([\d.]+)", Path("/proc/driver/nvidia/version").read_text())
        if m:
            return m.group(1)
    except OSError:
        pass
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        buf = ctypes.create_string_buffer(96)
        if nvml.nvmlInit_v2() == 0 and nvml.nvmlSystemGetDriverVersion(buf, 96) == 0:
            nvml.nvmlShutdown()
            return buf.value.decode()
    except (OSError, AttributeError):
        pass
    return "unknown"


@functools.lru_cache(maxsize=None)
def device_info(ordinal: int) -> DeviceInfo:
    """Device ``ordinal``'s identity (the fingerprint its results are stored
    under) and limits, through the driver API (no PyCUDA needed)."""
    a = functools.partial(cu.attribute, ordinal)
    v = cu.driver_version()
    cc = (a("cc_major"), a("cc_minor"))
    name = "".join(ch if ch.isprintable() and ch != "|" else "?" for ch in cu.device_name(ordinal)) or "GPU"
    ident = DeviceId(name, f"sm_{cc[0]}{cc[1]}", a("sms"), _driver_release(), f"{v // 1000}.{v % 1000 // 10}")
    return DeviceInfo(ident, cc, l2_bytes=a("l2_bytes"), max_threads=a("max_threads"),
                      smem_optin=a("smem_optin"), ordinal=ordinal, max_grid_x=a("max_grid_x"))


@functools.lru_cache(maxsize=None)
def device() -> DeviceInfo:
    """PyCUDA's device (the one tuning runs on; raises GPUUnavailable without one)."""
    cuda()
    return device_info(_home.ordinal)


_modules: dict = {}
_modules_lock = threading.Lock()


def load_module(digest: str, image: bytes, ctx: int | None = None) -> cu.Module:
    """A module from a cubin image, loaded once per process and context
    (default: PyCUDA's context), by its hash."""
    ctx = home_context() if ctx is None else ctx
    mod = _modules.get((ctx, digest))
    if mod is None:
        with _modules_lock:
            mod = _modules.get((ctx, digest))
            if mod is None:
                mod = _modules[(ctx, digest)] = cu.Module(ctx, image)
    return mod


def stream_handle(stream) -> int:
    """None, a raw CUstream int or a PyCUDA Stream, as a raw handle."""
    if stream is None:
        return 0
    if type(stream) is int:
        return stream
    return int(stream.handle)


class Kernel:
    """A loaded transpose kernel: call it with (src, dst, shape[, stream])."""

    def __init__(self, cfg: KernelConfig, module: cu.Module):
        self.cfg = cfg
        self.fn = module.function(cfg.name, STRIDED_ARGS if cfg.layout == "strided" else ARGS)
        if cfg.smem_bytes > STATIC_SMEM_LIMIT:
            self.fn.set_max_dynamic_smem(cfg.smem_bytes)
        self._block = (cfg.threads, 1, 1)
        self._smem = cfg.smem_bytes
        self._fixed = cfg.fixed_shape

    def _check_shape(self, bmn) -> None:
        """ValueError where a kernel compiled for one shape (KernelConfig.fixed) is given another."""
        if self._fixed is not None and tuple(bmn) != self._fixed:
            raise ValueError(f"{self.cfg.key} is compiled for the shape {self.cfg.fixed} only, "
                             f"not {'x'.join(map(str, bmn))}")

    def _check_args(self, args) -> None:
        """ValueError where a strided kernel compiled for one launch (KernelConfig.fixed_args) is given another."""
        if self.cfg.fixed and tuple(args) != self.cfg.fixed_args:
            raise ValueError(f"{self.cfg.key} is compiled for one launch only, not for {tuple(args)!r:.200}")

    @property
    def ctx(self) -> int:
        return self.fn.ctx

    def __call__(self, src, dst, shape, stream=None) -> None:
        """Transpose the dense (B,) M, N array at src into dst (launcher's)."""
        self.launcher(shape)(int(src), int(dst), stream)

    def launcher(self, shape):
        """A fast launch(src, dst, stream=None) of the dense transpose of one
        (B,) M, N shape; stream is None, a raw handle or a PyCUDA Stream. A
        strided config runs it as kernels.strided.dense_tile(shape)."""
        b, m, n = as_bmn(shape)
        self._check_shape((b, m, n))
        if self.cfg.layout == "strided":
            args = strided_args(dense_tile((b, m, n), self.cfg.elem_bytes), 0, 0)[2:]
            self._check_args(args)
            go = self.fn.launcher((self.cfg.blocks((b, m, n)), 1, 1), self._block, self._smem, *args)
        else:
            go = self.fn.launcher((self.cfg.blocks((b, m, n)), 1, 1), self._block, self._smem, b, m, n)

        def launch(src, dst, stream=None):
            try:
                go(stream if type(stream) is int else stream_handle(stream), src, dst)
            except CudaError as e:
                _reraise(e)
        return launch


    def strided_launcher(self, bmn, args: tuple):
        """launch(src, dst, stream) of a strided config for one problem: bmn is
        the (B, M, N) it walks (kernels.strided.strided_shape), args the
        values of its at::StridedArgs after the two pointers."""
        if self.cfg.layout != "strided":
            raise ValueError(f"{self.cfg.key} is a dense config; it takes no strided launch")
        self._check_args(args)
        go = self.fn.launcher((self.cfg.blocks(bmn), 1, 1), self._block, self._smem, *args)

        def launch(src, dst, stream=0):
            try:
                go(stream, src, dst)
            except CudaError as e:
                _reraise(e)
        return launch


def _reraise(e: CudaError):
    """A failed launch as PyCUDA's LaunchError where PyCUDA is in use (the tuner
    records those as a candidate's failure), else as it is."""
    drv = sys.modules.get("pycuda.driver")
    if drv is not None and hasattr(drv, "LaunchError"):
        raise drv.LaunchError(str(e)) from e
    raise e


def function(module: cu.Module, name: str, fmt: str):
    """launch(grid, block, *args, stream=None) of a plain kernel whose
    parameters pack with struct format ``fmt``."""
    fn = module.function(name, struct.Struct(fmt))
    return lambda grid, block, *args, stream=None: fn.launch(grid, block, 0, stream_handle(stream), *args)


def synchronize() -> None:
    cuda().Context.synchronize()


def event():
    return cuda().Event()


@functools.lru_cache(maxsize=None)
def memory_pool():
    """PyCUDA's device memory pool, for autotrans' output arrays."""
    cuda()
    from pycuda.tools import DeviceMemoryPool
    return DeviceMemoryPool()
