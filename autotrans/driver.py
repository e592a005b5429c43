"""The one module that talks to the GPU. PyCUDA is imported here, lazily.

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

from .compile import Compiled, arch_of, compile_file
from .config import KernelConfig, as_bmn
from .space import Limits
from .templates import template_dir

STATIC_SMEM_LIMIT = 48 * 1024
_ARGS = struct.Struct("PPiii")  # every transpose kernel's parameters


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
    """What autotrans needs to know of the current GPU."""
    name: str
    cc: tuple
    sms: int
    l2_bytes: int
    max_threads: int
    smem_optin: int
    driver: str
    cuda: str

    @property
    def arch(self) -> str:
        return arch_of(self.cc)

    @property
    def fingerprint(self) -> str:
        """name|arch|SMs|driver|CUDA: results are only reused on the same fingerprint."""
        return f"{self.name}|{self.arch}|{self.sms}sm|driver {self.driver}|cuda {self.cuda}"

    @property
    def limits(self) -> Limits:
        return Limits(max_threads=self.max_threads, smem_per_block=self.smem_optin)

    def to_dict(self) -> dict:
        return {"name": self.name, "cc": list(self.cc), "sms": self.sms, "l2_bytes": self.l2_bytes,
                "driver": self.driver, "cuda": self.cuda, "fingerprint": self.fingerprint}


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
    return DeviceInfo(name=dev.name(), cc=tuple(dev.compute_capability()),
                      sms=dev.get_attribute(a.MULTIPROCESSOR_COUNT),
                      l2_bytes=dev.get_attribute(a.L2_CACHE_SIZE),
                      max_threads=dev.get_attribute(a.MAX_THREADS_PER_BLOCK),
                      smem_optin=dev.get_attribute(a.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
                      driver=_driver_release(), cuda=f"{v // 1000}.{v % 1000 // 10}")


@functools.lru_cache(maxsize=None)
def _module(path: str):
    return cuda().module_from_file(path)


class Kernel:
    """A loaded transpose kernel: call it with (src, dst, shape[, stream])."""

    def __init__(self, cfg: KernelConfig, compiled: Compiled):
        if not compiled.ok:
            raise RuntimeError(f"{cfg.key} did not compile: {compiled.error}")
        self.cfg = cfg
        self.fn = _module(str(compiled.cubin)).get_function(compiled.name)
        if cfg.smem_bytes > STATIC_SMEM_LIMIT:
            self.fn.set_attribute(cuda().function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, cfg.smem_bytes)
        self._block = (cfg.threads, 1, 1)
        self._smem = cfg.smem_bytes
        self._launch = self.fn._launch_kernel  # prepared: arguments packed here, once per call

    def __call__(self, src, dst, shape, stream=None) -> None:
        b, m, n = as_bmn(shape)
        args = _ARGS.pack(int(src), int(dst), b, m, n)
        self._launch((self.cfg.blocks((b, m, n)), 1, 1), self._block, args, self._smem, stream)

    def launcher(self, shape):
        """A fast launch(src, dst, stream) for one fixed shape."""
        b, m, n = as_bmn(shape)
        grid, block, smem, launch, pack = (self.cfg.blocks((b, m, n)), 1, 1), self._block, \
            self._smem, self._launch, _ARGS.pack
        return lambda src, dst, stream=None: launch(grid, block, pack(src, dst, b, m, n), smem, stream)



@functools.lru_cache(maxsize=None)
def _helpers():
    mod = _module(str(compile_file(template_dir() / "verify.cu", device().arch)))
    return {n: mod.get_function(n) for n in ("at_fill_pattern", "at_fill_not_transposed",
                                             "at_check_transpose", "at_count_ne")}


def _grid() -> tuple:
    return (device().sms * 8, 1, 1)


@functools.lru_cache(maxsize=None)
def _pool():
    cuda()
    from pycuda.tools import DeviceMemoryPool
    return DeviceMemoryPool()


def empty(shape, dtype):
    """A new C-contiguous GPUArray from autotrans' memory pool (no driver call
    once the pool holds a block of that size)."""
    return _empty()(shape, dtype, allocator=_pool().allocate)


@functools.lru_cache(maxsize=None)
def _empty():
    return gpuarray().GPUArray


class OutputMaker:
    """Makes new C-contiguous GPUArrays of one shape and dtype from the pool, at
    a fraction of GPUArray()'s cost: the attributes are those of one array made
    the usual way, and only the memory is new."""

    def __init__(self, shape, dtype):
        proto = empty(shape, dtype)
        self._cls, self._nbytes, self._alloc = type(proto), proto.nbytes, _pool().allocate
        self._attrs = {k: v for k, v in vars(proto).items() if k != "gpudata"}

    def __call__(self):
        a = self._cls.__new__(self._cls)
        a.__dict__.update(self._attrs)
        a.gpudata = self._alloc(self._nbytes) if self._nbytes else None
        return a


def alloc(nbytes: int):
    return cuda().mem_alloc(max(1, int(nbytes)))


def fill_pattern(ptr, nbytes: int, seed: int) -> None:
    """Fill with pseudo-random bytes that are a function of (seed, offset)."""
    _helpers()["at_fill_pattern"]._launch_kernel(_grid(), (256, 1, 1),
                                                 struct.pack("PQI", int(ptr), nbytes, seed), 0, None)


def fill_not_transposed(ptr, shape, elem_bytes: int, seed: int) -> None:
    """Fill a B x N x M output with the complement of its correct transpose."""
    b, m, n = as_bmn(shape)
    _helpers()["at_fill_not_transposed"]._launch_kernel(
        _grid(), (256, 1, 1), struct.pack("PiiiiI", int(ptr), b, m, n, elem_bytes, seed), 0, None)


COUNTERS = 2   # the counting helpers' results: wrong output bytes, changed guard bytes


@functools.lru_cache(maxsize=None)
def _counters():
    """Device memory for the counting helpers' results (allocated once)."""
    return cuda().mem_alloc(8 * COUNTERS)


def check_with_guards(ptr, shape, elem_bytes: int, seed: int, guards) -> tuple[int, int]:
    """(bytes of the B x N x M output at ptr that are not the transposed
    pattern, bytes of the guards that differ from their value), guards being
    (ptr, nbytes, value) triples. One read-back, which waits for the kernels."""
    drv, base = cuda(), int(_counters())
    b, m, n = as_bmn(shape)
    drv.memset_d8(base, 0, 8 * COUNTERS)
    launches = [("at_check_transpose", "PiiiiI", base, (int(ptr), b, m, n, elem_bytes, seed))]
    launches += [("at_count_ne", "PQB", base + 8, (int(p), nbytes, value)) for p, nbytes, value in guards]
    for name, fmt, counter, args in launches:
        _helpers()[name]._launch_kernel(_grid(), (256, 1, 1), struct.pack(fmt + "P", *args, counter), 0, None)
    out = bytearray(8 * COUNTERS)
    drv.memcpy_dtoh(out, base)
    return int.from_bytes(out[:8], "little"), int.from_bytes(out[8:], "little")


def htod(ptr, array) -> None:
    cuda().memcpy_htod(int(ptr), array)


def dtoh(ptr, nbytes: int):
    """nbytes from the device as a NumPy uint8 array."""
    import numpy as np
    out = np.empty(nbytes, np.uint8)
    cuda().memcpy_dtoh(out, int(ptr))
    return out


def memset(ptr, value: int, nbytes: int) -> None:
    cuda().memset_d8(int(ptr), value, nbytes)


def memcpy_dtod(dst, src, nbytes: int, stream=None) -> None:
    cuda().memcpy_dtod_async(int(dst), int(src), nbytes, stream)


def synchronize() -> None:
    cuda().Context.synchronize()


def event():
    return cuda().Event()
