"""The CUDA driver API through ctypes, for what PyCUDA ties to its own
thread-local context stack or does not offer: pointer attributes, the primary
context of any device, modules and launches on raw stream handles, events
between streams, plain device buffers. Every call here works from any thread.

Nothing is loaded until first use; without libcuda every entry point raises
GPUUnavailable with the reason.
"""
from __future__ import annotations

import ctypes
import functools
import re
import struct
import threading
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_uint, c_uint64, c_void_p
from typing import NamedTuple

# cuda.h values used here
POINTER_CONTEXT, POINTER_MEMORY_TYPE, POINTER_DEVICE_ORDINAL = 1, 2, 9
MEMORY_HOST, MEMORY_DEVICE, MEMORY_ARRAY, MEMORY_UNIFIED = 1, 2, 3, 4
ERROR_INVALID_CONTEXT, ERROR_INVALID_HANDLE = 201, 400
EVENT_DISABLE_TIMING = 2
FUNC_MAX_DYNAMIC_SHARED = 8
LAUNCH_PARAM_END, LAUNCH_PARAM_BUFFER_POINTER, LAUNCH_PARAM_BUFFER_SIZE = 0, 1, 2
STREAM_LEGACY, STREAM_PER_THREAD = 1, 2
ATTR = {"max_threads": 1, "max_grid_x": 5, "sms": 16, "l2_bytes": 38, "cc_major": 75, "cc_minor": 76,
        "smem_optin": 97}
MAX_ARGS_BYTES = 4096        # the driver's limit on a kernel's parameter block

_P = POINTER
_SIGNATURES = {
    "cuInit": (c_uint,),
    "cuGetErrorName": (c_int, _P(c_char_p)),
    "cuDriverGetVersion": (_P(c_int),),
    "cuDeviceGetCount": (_P(c_int),),
    "cuDeviceGet": (_P(c_int), c_int),
    "cuDeviceGetName": (c_char_p, c_int, c_int),
    "cuDeviceGetAttribute": (_P(c_int), c_int, c_int),
    "cuDevicePrimaryCtxRetain": (_P(c_void_p), c_int),
    "cuCtxGetCurrent": (_P(c_void_p),),
    "cuCtxGetDevice": (_P(c_int),),
    "cuCtxPushCurrent_v2": (c_void_p,),
    "cuCtxPopCurrent_v2": (_P(c_void_p),),
    "cuPointerGetAttributes": (c_uint, _P(c_int), _P(c_void_p), c_uint64),
    "cuPointerGetAttribute": (c_void_p, c_int, c_uint64),
    "cuModuleLoadData": (_P(c_void_p), c_char_p),
    "cuModuleGetFunction": (_P(c_void_p), c_void_p, c_char_p),
    "cuFuncSetAttribute": (c_void_p, c_int, c_int),
    "cuLaunchKernel": (c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_void_p,
                       c_void_p, c_void_p),
    "cuEventCreate": (_P(c_void_p), c_uint),
    "cuEventRecord": (c_void_p, c_void_p),
    "cuStreamWaitEvent": (c_void_p, c_void_p, c_uint),
    "cuStreamSynchronize": (c_void_p,),
    "cuMemAlloc_v2": (_P(c_uint64), c_size_t),
    "cuMemFree_v2": (c_uint64,),
    "cuMemcpyDtoH_v2": (c_void_p, c_uint64, c_size_t),
    "cuMemcpyDtoDAsync_v2": (c_uint64, c_uint64, c_size_t, c_void_p),
}


class GPUUnavailable(RuntimeError):
    """No usable GPU: PyCUDA is missing, the driver cannot load, or no device."""


class CudaError(RuntimeError):
    """A CUDA driver call failed."""

    def __init__(self, what: str, code: int):
        super().__init__(f"{what} failed: {_error_name(code)} ({code})")
        self.code = code


@functools.lru_cache(maxsize=None)
def lib():
    """libcuda, its functions declared, initialised."""
    err = None
    for name in ("libcuda.so.1", "libcuda.so"):
        try:
            so = ctypes.CDLL(name)
            break
        except OSError as e:
            err = e
    else:
        raise GPUUnavailable(f"the CUDA driver (libcuda) cannot be loaded ({err})")
    for fname, args in _SIGNATURES.items():
        f = getattr(so, fname)
        f.argtypes, f.restype = args, c_int
    rc = so.cuInit(0)
    if rc:
        raise GPUUnavailable(f"CUDA could not start: {_error_name(rc, so)}")
    return so


def _error_name(code: int, so=None) -> str:
    s = c_char_p()
    try:
        if (so or lib()).cuGetErrorName(code, byref(s)) == 0 and s.value:
            return s.value.decode()
    except (GPUUnavailable, AttributeError):
        pass
    return "CUDA_ERROR"


def check(rc: int, what: str) -> None:
    if rc:
        raise CudaError(what, rc)


# -- devices and contexts ------------------------------------------------------

def device_count() -> int:
    n = c_int()
    check(lib().cuDeviceGetCount(byref(n)), "cuDeviceGetCount")
    return n.value


def attribute(ordinal: int, name: str) -> int:
    v = c_int()
    check(lib().cuDeviceGetAttribute(byref(v), ATTR[name], _device(ordinal)), "cuDeviceGetAttribute")
    return v.value


def device_name(ordinal: int) -> str:
    buf = ctypes.create_string_buffer(256)
    check(lib().cuDeviceGetName(buf, 256, _device(ordinal)), "cuDeviceGetName")
    return buf.value.decode(errors="replace")


def driver_version() -> int:
    v = c_int()
    check(lib().cuDriverGetVersion(byref(v)), "cuDriverGetVersion")
    return v.value


@functools.lru_cache(maxsize=None)
def _device(ordinal: int) -> int:
    d = c_int()
    check(lib().cuDeviceGet(byref(d), ordinal), f"cuDeviceGet({ordinal})")
    return d.value


def ordinal_of(cu_device: int) -> int:
    """The ordinal of a CUdevice handle."""
    for i in range(device_count()):
        if _device(i) == cu_device:
            return i
    raise CudaError(f"finding device {cu_device}", 101)


_primaries: dict = {}
_primary_lock = threading.Lock()


def primary(ordinal: int) -> int:
    """The primary context of device ``ordinal`` (retained once per process): the
    context torch, CuPy, Numba and JAX work in."""
    ctx = _primaries.get(ordinal)
    if ctx is None:
        with _primary_lock:
            ctx = _primaries.get(ordinal)
            if ctx is None:
                if not 0 <= ordinal < device_count():
                    raise ValueError(f"no CUDA device {ordinal} ({device_count()} visible)")
                h = c_void_p()
                check(lib().cuDevicePrimaryCtxRetain(byref(h), _device(ordinal)), "cuDevicePrimaryCtxRetain")
                ctx = _primaries[ordinal] = h.value
    return ctx


def current() -> int:
    """The calling thread's current context handle (0 for none)."""
    h = c_void_p()
    check(lib().cuCtxGetCurrent(byref(h)), "cuCtxGetCurrent")
    return h.value or 0


def current_device() -> int:
    """The ordinal of the calling thread's current context."""
    d = c_int()
    check(lib().cuCtxGetDevice(byref(d)), "cuCtxGetDevice")
    return ordinal_of(d.value)


def _enter(ctx: int) -> bool:
    """Make ctx current on this thread; True if it was pushed (pop with _leave)."""
    so = lib()
    h = c_void_p()
    so.cuCtxGetCurrent(byref(h))
    if h.value == ctx:
        return False
    check(so.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent")
    return True


def _leave() -> None:
    lib().cuCtxPopCurrent_v2(byref(c_void_p()))


class within:
    """``with within(ctx):`` ctx is current on this thread, and whatever was
    current before is again afterwards (nothing is done when it already is)."""
    __slots__ = ("ctx", "pushed")

    def __init__(self, ctx: int):
        self.ctx = ctx

    def __enter__(self):
        self.pushed = _enter(self.ctx)

    def __exit__(self, *exc):
        if self.pushed:
            _leave()


# -- pointers ------------------------------------------------------------------

class Pointer(NamedTuple):
    """Where device memory lives: its context, its device, its memory type."""
    ctx: int
    ordinal: int
    memory: int      # MEMORY_*; 0 when CUDA does not know the address


_tls = threading.local()


def _pointer_scratch():
    s = getattr(_tls, "ptr", None)
    if s is None:
        ctx, mem, dev = c_void_p(), c_uint(), c_int()
        attrs = (c_int * 3)(POINTER_CONTEXT, POINTER_MEMORY_TYPE, POINTER_DEVICE_ORDINAL)
        data = (c_void_p * 3)(ctypes.addressof(ctx), ctypes.addressof(mem), ctypes.addressof(dev))
        s = _tls.ptr = (ctx, mem, dev, attrs, data)
    return s


def locate(ptr: int) -> Pointer:
    """The context, device and memory type of a pointer (cuPointerGetAttributes:
    memory 0 for an address CUDA does not know). Memory without a context of its
    own (VMM, stream-ordered pools) gets its device's primary context."""
    so = lib()
    ctx, mem, dev, attrs, data = _pointer_scratch()
    ctx.value, mem.value, dev.value = None, 0, -1
    rc = so.cuPointerGetAttributes(3, attrs, data, ptr)
    if rc == ERROR_INVALID_CONTEXT:          # the query wants some UVA context current
        with within(primary(0)):
            rc = so.cuPointerGetAttributes(3, attrs, data, ptr)
    check(rc, "cuPointerGetAttributes")
    if mem.value == 0 or dev.value < 0:
        return Pointer(0, -1, 0)
    return Pointer(ctx.value or primary(dev.value), dev.value, mem.value)


def context_of(ptr: int) -> int:
    """The context that owns the memory at ptr; 0 when none does (memory of no
    context, host memory, an unknown address): one driver call, for repeat calls
    that only need to know the owner has not changed."""
    h = getattr(_tls, "owner", None)
    if h is None:
        h = _tls.owner = c_void_p()
    h.value = None
    if lib().cuPointerGetAttribute(byref(h), POINTER_CONTEXT, ptr):
        return 0
    return h.value or 0


# -- modules, functions, launches ---------------------------------------------

def _scratch(args: struct.Struct, tail: tuple):
    """A parameter block with ``tail`` packed after zeroed leading fields, and
    the ``extra`` array that hands it to cuLaunchKernel (they keep each other alive)."""
    buf = ctypes.create_string_buffer(args.size)
    args.pack_into(buf, 0, *([0] * (_fields(args) - len(tail))), *tail)
    size = c_size_t(args.size)
    extra = (c_void_p * 5)(LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(buf),
                           LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size), LAUNCH_PARAM_END)
    return buf, extra, size


def _fields(args: struct.Struct) -> int:
    """How many values args packs."""
    return _layout(args.format, 0)[0]


def _lead(args: struct.Struct, n: int) -> struct.Struct:
    """The struct of args' first n fields (native layout: the same offsets)."""
    return _layout(args.format, n)[1]


@functools.lru_cache(maxsize=64)
def _layout(fmt: str, n: int) -> tuple[int, struct.Struct]:
    """(how many fields fmt packs, the struct of its first n): a few formats, once each."""
    codes = re.findall(r"(\d*)([a-zA-Z?])", fmt.lstrip("@=<>!"))
    flat = [c for count, c in codes for _ in range(int(count or 1))]
    return len(flat), struct.Struct("".join(flat[:n]))


class Module:
    """A module loaded into one context."""
    __slots__ = ("ctx", "handle")

    def __init__(self, ctx: int, image: bytes):
        self.ctx = ctx
        h = c_void_p()
        with within(ctx):
            check(lib().cuModuleLoadData(byref(h), image), "cuModuleLoadData")
        self.handle = h.value

    def function(self, name: str, args: struct.Struct) -> "Function":
        h = c_void_p()
        check(lib().cuModuleGetFunction(byref(h), self.handle, name.encode()), f"cuModuleGetFunction({name})")
        return Function(self.ctx, h.value, args, name)


class Function:
    """A kernel whose parameters pack with one struct.Struct (native layout, as
    the kernel declares them); launch() works from any thread, on any stream."""
    __slots__ = ("ctx", "handle", "args", "name")

    def __init__(self, ctx: int, handle: int, args: struct.Struct, name: str):
        if args.size > MAX_ARGS_BYTES:
            raise ValueError(f"{name}: {args.size} bytes of parameters > {MAX_ARGS_BYTES}")
        self.ctx, self.handle, self.args, self.name = ctx, handle, args, name

    def set_max_dynamic_smem(self, nbytes: int) -> None:
        check(lib().cuFuncSetAttribute(self.handle, FUNC_MAX_DYNAMIC_SHARED, nbytes), f"{self.name}: cuFuncSetAttribute")

    def launch(self, grid: tuple, block: tuple, smem: int, stream: int, *args) -> None:
        """Enqueue on stream (a raw CUstream handle; 0 is the legacy default stream)."""
        self.launcher(grid, block, smem)(stream, *args)

    def launcher(self, grid: tuple, block: tuple, smem: int, *tail):
        """go(stream, *lead): launch with this grid, block and shared memory, on
        a raw stream handle, from any thread; the kernel's parameters are lead
        followed by the fixed tail. The fixed parts are converted to C once,
        here, and each thread packs tail once into its own parameter block; per
        call only lead is packed. The launch is tried first in whatever context
        is current: where that is not this function's, the driver refuses it
        (invalid handle, or no context) and nothing is enqueued, so it is made
        current and the launch tried again."""
        call = lib().cuLaunchKernel
        g0, g1, g2, b0, b1, b2, sm = (c_uint(int(v)) for v in (*grid, *block, smem))
        handle, ctx, args, name = c_void_p(self.handle), self.ctx, self.args, self.name
        pack = _lead(args, _fields(args) - len(tail)).pack_into
        mine = threading.local()

        def go(stream, *lead):
            s = getattr(mine, "s", None)
            if s is None:
                s = mine.s = _scratch(args, tail)
            pack(s[0], 0, *lead)
            rc = call(handle, g0, g1, g2, b0, b1, b2, sm, stream or None, None, s[1])
            if rc == ERROR_INVALID_HANDLE or rc == ERROR_INVALID_CONTEXT:
                if _enter(ctx):
                    try:
                        rc = call(handle, g0, g1, g2, b0, b1, b2, sm, stream or None, None, s[1])
                    finally:
                        _leave()
            if rc:
                raise CudaError(f"launching {name}", rc)
        return go


# -- streams and events --------------------------------------------------------

def same_stream(a: int, b: int) -> bool:
    """Whether two stream handles name one stream (0 and 1 are both the legacy default)."""
    return a == b or {a, b} == {0, STREAM_LEGACY}


def _event(ctx: int) -> int:
    """This thread's reusable event in ctx (a wait captures the event's state
    when it is enqueued, so re-recording later is safe)."""
    events = getattr(_tls, "events", None)
    if events is None:
        events = _tls.events = {}
    ev = events.get(ctx)
    if ev is None:
        h = c_void_p()
        with within(ctx):
            check(lib().cuEventCreate(byref(h), EVENT_DISABLE_TIMING), "cuEventCreate")
        ev = events[ctx] = h.value
    return ev


def wait(ctx: int, consumer: int, producer: int) -> None:
    """Make stream ``consumer`` wait for the work enqueued so far on stream
    ``producer`` (an event between them; the host does not wait)."""
    if same_stream(consumer, producer):
        return
    ev = _event(ctx)
    so = lib()
    with within(ctx):
        check(so.cuEventRecord(ev, producer or None), "cuEventRecord")
        check(so.cuStreamWaitEvent(consumer or None, ev, 0), "cuStreamWaitEvent")


def copy(ctx: int, dst: int, src: int, nbytes: int, stream: int) -> None:
    """Enqueue a device-to-device copy of nbytes on stream."""
    with within(ctx):
        check(lib().cuMemcpyDtoDAsync_v2(dst, src, nbytes, stream or None), "cuMemcpyDtoDAsync")


def stream_synchronize(ctx: int, stream: int) -> None:
    with within(ctx):
        check(lib().cuStreamSynchronize(stream or None), "cuStreamSynchronize")


# -- plain device memory -------------------------------------------------------

class Buffer:
    """Device memory of one context (cuMemAlloc), freed when dropped."""
    __slots__ = ("ctx", "ptr", "nbytes", "__weakref__")

    def __init__(self, ctx: int, nbytes: int):
        self.ctx, self.nbytes, self.ptr = ctx, nbytes, 0
        p = c_uint64()
        with within(ctx):
            check(lib().cuMemAlloc_v2(byref(p), max(1, nbytes)), f"cuMemAlloc({nbytes})")
        self.ptr = p.value

    def __del__(self):
        if self.ptr:
            try:
                with within(self.ctx):
                    lib().cuMemFree_v2(self.ptr)
            except Exception:   # interpreter shutdown: the driver frees it with the process
                pass
            self.ptr = 0
