"""The one module that imports PyCUDA (lazily): the context, the device, loaded
kernels and launches.

Everything else in autotrans calls these functions; without PyCUDA or a GPU they
raise GPUUnavailable with the reason, and the rest of the package still works.
"""
from __future__ import annotations

import atexit
import ctypes
import functools
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from ..core.device import DeviceId, Limits
from ..core.problem import as_bmn
from ..kernels.config import KernelConfig
from ..kernels.templates import ARGS

STATIC_SMEM_LIMIT = 48 * 1024


class GPUUnavailable(RuntimeError):
    """No usable GPU: PyCUDA is missing, the driver cannot load, or no device."""


@functools.lru_cache(maxsize=None)
def cuda():
    """pycuda.driver, initialised, with a current context (the device's primary
    context, shared with torch and CuPy, unless the caller made one current)."""
    try:
        import pycuda.driver as drv
    except ImportError as e:
        raise GPUUnavailable(
            f"PyCUDA cannot be imported ({e}). autotrans needs PyCUDA and an NVIDIA GPU for "
            "tuning and transposes: pip install 'autotrans[cuda]' (building PyCUDA needs the "
            "CUDA toolkit).") from e
    try:
        drv.init()
        if drv.Device.count() == 0:
            raise GPUUnavailable("no CUDA device found")
        if drv.Context.get_current() is None:
            ctx = drv.Device(int(os.environ.get("AUTOTRANS_DEVICE", "0"))).retain_primary_context()
            ctx.push()
            atexit.register(_release, ctx)
    except drv.Error as e:
        raise GPUUnavailable(f"CUDA could not start: {e}") from e
    return drv


def _release(ctx) -> None:
    from pycuda.tools import clear_context_caches
    try:
        ctx.pop()
    finally:
        clear_context_caches()


def gpuarray():
    """The pycuda.gpuarray module (with the context ready)."""
    cuda()
    import pycuda.gpuarray as ga
    return ga


def is_gpuarray(x) -> bool:
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
def device() -> DeviceInfo:
    """The current device (raises GPUUnavailable without one)."""
    drv = cuda()
    dev = drv.Context.get_device()
    a = drv.device_attribute
    v = drv.get_driver_version()
    cc = tuple(dev.compute_capability())
    name = "".join(ch if ch.isprintable() and ch != "|" else "?" for ch in dev.name()) or "GPU"
    ident = DeviceId(name, f"sm_{cc[0]}{cc[1]}", dev.get_attribute(a.MULTIPROCESSOR_COUNT),
                     _driver_release(), f"{v // 1000}.{v % 1000 // 10}")
    return DeviceInfo(ident, cc, l2_bytes=dev.get_attribute(a.L2_CACHE_SIZE),
                      max_threads=dev.get_attribute(a.MAX_THREADS_PER_BLOCK),
                      smem_optin=dev.get_attribute(a.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN))


_modules: dict = {}


def load_module(digest: str, image: bytes):
    """A loaded module from a cubin image (kept per process by its hash)."""
    mod = _modules.get(digest)
    if mod is None:
        mod = _modules[digest] = cuda().module_from_buffer(image)
    return mod


class Kernel:
    """A loaded transpose kernel: call it with (src, dst, shape[, stream])."""

    def __init__(self, cfg: KernelConfig, module):
        self.cfg = cfg
        self.fn = module.get_function(cfg.name)
        if cfg.smem_bytes > STATIC_SMEM_LIMIT:
            self.fn.set_attribute(cuda().function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, cfg.smem_bytes)
        self._block = (cfg.threads, 1, 1)
        self._smem = cfg.smem_bytes
        self._launch = self.fn._launch_kernel  # prepared: arguments packed here, once per call

    def __call__(self, src, dst, shape, stream=None) -> None:
        b, m, n = as_bmn(shape)
        args = ARGS.pack(int(src), int(dst), b, m, n)
        self._launch((self.cfg.blocks((b, m, n)), 1, 1), self._block, args, self._smem, stream)

    def launcher(self, shape):
        """A fast launch(src, dst, stream) for one fixed shape."""
        b, m, n = as_bmn(shape)
        grid, block, smem, launch, pack = (self.cfg.blocks((b, m, n)), 1, 1), self._block, \
            self._smem, self._launch, ARGS.pack
        return lambda src, dst, stream=None: launch(grid, block, pack(src, dst, b, m, n), smem, stream)


def function(module, name: str, fmt: str):
    """launch(grid, block, *args, stream=None) of a plain kernel whose
    parameters pack with struct format ``fmt``."""
    fn, pack = module.get_function(name)._launch_kernel, struct.Struct(fmt).pack
    return lambda grid, block, *args, stream=None: fn(grid, block, pack(*args), 0, stream)


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
