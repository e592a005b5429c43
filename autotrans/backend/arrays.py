"""GPU arrays of any producer, in one place: __cuda_array_interface__ (v2, v3)
and DLPack (plain and versioned capsules, read with ctypes) parsed into one
typed record, streams of any framework as raw handles, and new outputs of the
input's kind (torch, CuPy, Numba, JAX through DLPack, or autotrans' own
DeviceArray, which exports both protocols).

No framework is imported here until an object of it is passed: the kind comes
from type(x).__module__ first.
"""
from __future__ import annotations

import ctypes
import threading
from ctypes import CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_int32, c_int64, c_uint8, c_uint16
from ctypes import c_uint32, c_uint64, c_void_p
from dataclasses import dataclass

import numpy as np

from ..core.problem import ELEM_SIZES
from . import driver as cu

KINDS = ("pycuda", "torch", "cupy", "numba", "jax", "cai", "dlpack")

# DLPack device types and data type codes (dlpack.h)
DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_OPENCL, DL_VULKAN, DL_METAL, DL_ROCM = 1, 2, 3, 4, 7, 8, 10
DL_CUDA_MANAGED, DL_ONEAPI = 13, 14
_DL_DEVICES = {DL_CPU: "host memory (CPU)", DL_CUDA_HOST: "pinned host memory", DL_OPENCL: "an OpenCL device",
               DL_VULKAN: "a Vulkan device", DL_METAL: "a Metal (Apple) device", DL_ROCM: "an AMD (ROCm) GPU",
               DL_ONEAPI: "an Intel (oneAPI) device", 9: "a VPI device", 11: "ROCm host memory",
               12: "an external DMA device", 15: "a WebGPU device", 16: "a Hexagon device", 17: "a MAIA device"}
_DL_NAMES = {(0, b): f"int{b}" for b in (8, 16, 32, 64)}
_DL_NAMES.update({(1, b): f"uint{b}" for b in (8, 16, 32, 64)})
_DL_NAMES.update({(2, b): f"float{b}" for b in (16, 32, 64)})
_DL_NAMES.update({(5, b): f"complex{b}" for b in (32, 64, 128)})
_DL_NAMES.update({(4, 16): "bfloat16", (6, 8): "bool", (7, 8): "float8_e3m4", (8, 8): "float8_e4m3",
                  (9, 8): "float8_e4m3b11fnuz", (10, 8): "float8_e4m3fn", (11, 8): "float8_e4m3fnuz",
                  (12, 8): "float8_e5m2", (13, 8): "float8_e5m2fnuz", (14, 8): "float8_e8m0fnu"})
_DL_CODES = {name: code for code, name in _DL_NAMES.items()}
_NP_KIND_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
READ_ONLY_FLAG = 1


@dataclass(frozen=True)
class ArrayInfo:
    """One GPU array, whoever made it.

    strides: bytes per step of each dimension (None: C-contiguous). dtype: a
    NumPy-style name ("float32", "bfloat16", "float8_e4m3fn", "void16").
    native: the producer's own dtype object (for outputs of its kind).
    device: the ordinal the producer reports (None: it does not say).
    stream: the producer's stream to wait for (CAI v3 / the framework's current
    stream; None: nothing to wait for). keep: what keeps the memory alive.
    """
    kind: str
    ptr: int
    shape: tuple
    strides: tuple | None
    itemsize: int
    dtype: str
    native: object = None
    device: int | None = None
    stream: int | None = None
    readonly: bool = False
    keep: object = None

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize


def kind_of(x) -> str:
    """"torch", "cupy", "numba", "jax", "pycuda", "numpy", or "other" (from the type's module)."""
    mod = type(x).__module__.split(".", 1)[0]
    return {"jaxlib": "jax"}.get(mod, mod if mod in ("torch", "cupy", "numba", "jax", "pycuda", "numpy")
                                 else "other")


def _gpu_names() -> str:
    return ("a GPU array (PyCUDA GPUArray, torch.Tensor, CuPy ndarray, Numba device array, JAX array, "
            "or anything with __cuda_array_interface__ or __dlpack__)")


def describe(x, consumer_stream: int = 0) -> ArrayInfo:
    """x as an ArrayInfo; TypeError/ValueError naming the problem for host
    memory, another vendor's device, unknown protocols or malformed ones.
    consumer_stream: the stream x will be read on (handed to __dlpack__)."""
    kind = kind_of(x)
    if kind == "numpy":
        raise TypeError("autotrans.transpose got a NumPy array in host memory; it needs " + _gpu_names()
                        + ". Copy it to the GPU first (pycuda.gpuarray.to_gpu(x), torch.as_tensor(x, "
                        "device='cuda'), cupy.asarray(x))")
    if kind == "torch":
        return _torch(x)
    if kind == "cupy":
        return _cupy(x)
    if kind == "pycuda" and hasattr(x, "gpudata"):
        return _pycuda(x)
    has_cai, has_dl = hasattr(x, "__cuda_array_interface__"), hasattr(x, "__dlpack__")
    if has_cai:
        try:
            cai = x.__cuda_array_interface__
        except Exception as exc:         # e.g. JAX refuses some dtypes here, not in DLPack
            if not has_dl:
                raise ValueError(f"{type(x).__name__}.__cuda_array_interface__ failed: {exc}") from exc
        else:
            info = from_cai(cai, kind if kind in ("numba", "jax") else "cai")
            if not (kind == "jax" and has_dl and info.native.kind == "V"):   # JAX's bfloat16, float8
                return info
    if has_dl:
        return from_dlpack(x, consumer_stream, kind="jax" if kind == "jax" else "dlpack")
    raise TypeError(f"autotrans.transpose expects {_gpu_names()}; got {type(x).__module__}."
                    f"{type(x).__qualname__}")


# -- framework fast paths ------------------------------------------------------

def _pycuda(x) -> ArrayInfo:
    dt = x.dtype
    return ArrayInfo("pycuda", int(x.gpudata) if x.gpudata is not None else 0, tuple(x.shape),
                     tuple(x.strides), dt.itemsize, dt.name, dt)


def _torch(x) -> ArrayInfo:
    if not x.is_cuda:
        raise TypeError(f"autotrans.transpose got a torch tensor on {x.device} (host memory or another "
                        "device type); it needs a CUDA tensor: x.cuda() or x.to('cuda')")
    if str(x.layout) != "torch.strided":
        raise TypeError(f"autotrans.transpose needs a dense torch tensor, not layout {x.layout}")
    if x.is_conj() or x.is_neg():
        raise ValueError("the torch tensor is a lazy conjugate/negative view; call x.resolve_conj() / "
                         "x.resolve_neg() first")
    e = x.element_size()
    return ArrayInfo("torch", x.data_ptr(), tuple(x.shape), tuple(s * e for s in x.stride()), e,
                     str(x.dtype).rsplit(".", 1)[-1], x.dtype, x.device.index)


def _cupy(x) -> ArrayInfo:
    if not hasattr(x, "data") or not hasattr(x, "strides"):
        return from_cai(x.__cuda_array_interface__, "cai")
    dt = x.dtype
    return ArrayInfo("cupy", x.data.ptr, tuple(x.shape), tuple(x.strides), dt.itemsize, dt.name, dt,
                     x.device.id)


# -- __cuda_array_interface__ ----------------------------------------------------

def from_cai(cai, kind: str = "cai") -> ArrayInfo:
    """Parse a __cuda_array_interface__ dict (versions 0 to 3)."""
    if not isinstance(cai, dict):
        raise ValueError(f"__cuda_array_interface__ must be a dict, not {type(cai).__name__}")
    try:
        shape = tuple(int(d) for d in cai["shape"])
        typestr, data = cai["typestr"], cai["data"]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"malformed __cuda_array_interface__ ({exc!r}): needs shape, typestr and data") from None
    version = cai.get("version", 0)
    if not isinstance(version, int) or version < 0:
        raise ValueError(f"__cuda_array_interface__ version must be an int >= 0, not {version!r}")
    if cai.get("mask") is not None:
        raise ValueError("masked arrays (__cuda_array_interface__ 'mask') are not supported")
    if not (isinstance(data, tuple) and len(data) == 2):
        raise ValueError(f"__cuda_array_interface__ 'data' must be (pointer, read_only), not {data!r}")
    try:
        dt = np.dtype(typestr)
    except TypeError as exc:
        raise TypeError(f"__cuda_array_interface__ typestr {typestr!r} is not a dtype ({exc})") from None
    strides = cai.get("strides")
    if strides is not None:
        strides = tuple(int(s) for s in strides)
        if len(strides) != len(shape):
            raise ValueError(f"__cuda_array_interface__ has {len(strides)} strides for {len(shape)} dimensions")
    stream = cai.get("stream") if version >= 3 else None
    if stream is not None:
        if isinstance(stream, bool) or not isinstance(stream, int) or stream < 0:
            raise ValueError(f"__cuda_array_interface__ stream must be None or a stream handle, not {stream!r}")
        if stream == 0:
            raise ValueError("__cuda_array_interface__ stream 0 is not allowed (ambiguous); the producer "
                             "should give 1 (legacy default stream), 2 (per-thread) or a handle")
    ptr = int(data[0] or 0)
    if ptr == 0 and any(shape) and 0 not in shape:
        raise ValueError("__cuda_array_interface__ has a null data pointer for a non-empty array")
    return ArrayInfo(kind, ptr, shape, strides, dt.itemsize, dt.name, dt, None, stream, bool(data[1]))


# -- DLPack: the C structures ----------------------------------------------------

class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32), ("dtype", DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", c_void_p),
                ("flags", c_uint64), ("dl_tensor", DLTensor)]


_DELETER_T = CFUNCTYPE(None, c_void_p)
_NAME, _VNAME = b"dltensor", b"dltensor_versioned"
_USED, _VUSED = b"used_dltensor", b"used_dltensor_versioned"


def _capi(name, restype, *argtypes):
    f = ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))
    return f


_is_valid = _capi("PyCapsule_IsValid", c_int, ctypes.py_object, c_char_p)
_get_pointer = _capi("PyCapsule_GetPointer", c_void_p, ctypes.py_object, c_char_p)
_set_name = _capi("PyCapsule_SetName", c_int, ctypes.py_object, c_char_p)
_capsule_new = _capi("PyCapsule_New", ctypes.py_object, c_void_p, c_char_p, c_void_p)
# the capsule destructor gets a dying object: raw pointers, no reference counting
_raw_is_valid = _capi("PyCapsule_IsValid", c_int, c_void_p, c_char_p)
_raw_get_pointer = _capi("PyCapsule_GetPointer", c_void_p, c_void_p, c_char_p)


@dataclass(frozen=True)
class DLView:
    """What a DLPack capsule describes (strides in bytes, None for compact)."""
    device_type: int
    device_id: int
    ptr: int
    shape: tuple
    strides: tuple | None
    code: int
    bits: int
    lanes: int
    readonly: bool
    versioned: bool


class DLPackImport:
    """A consumed DLPack capsule: its view, and the producer's deleter, called
    when this is dropped (the memory stays valid until then)."""

    def __init__(self, capsule):
        if _is_valid(capsule, _VNAME):
            addr, versioned, used = _get_pointer(capsule, _VNAME), True, _VUSED
            m = DLManagedTensorVersioned.from_address(addr)
            if m.version.major != 1:
                raise ValueError(f"DLPack version {m.version.major}.{m.version.minor} is not supported (1.x is)")
            readonly = bool(m.flags & READ_ONLY_FLAG)
        elif _is_valid(capsule, _NAME):
            addr, versioned, used = _get_pointer(capsule, _NAME), False, _USED
            m = DLManagedTensor.from_address(addr)
            readonly = False
        else:
            raise ValueError("not an unconsumed DLPack capsule (named 'dltensor' or 'dltensor_versioned')")
        t = m.dl_tensor
        if t.ndim < 0 or t.ndim > 64:
            raise ValueError(f"DLPack tensor with {t.ndim} dimensions")
        shape = tuple(t.shape[i] for i in range(t.ndim))
        nbytes = max(1, (t.dtype.bits * t.dtype.lanes) // 8)
        strides = tuple(t.strides[i] * nbytes for i in range(t.ndim)) if t.strides else None
        self.view = DLView(t.device.device_type, t.device.device_id, (t.data or 0) + t.byte_offset, shape,
                           strides, t.dtype.code, t.dtype.bits, t.dtype.lanes, readonly, versioned)
        self._addr, self._deleter = addr, m.deleter
        _set_name(capsule, used)          # ours now: we call the deleter

    def __del__(self):
        if getattr(self, "_deleter", None):
            _DELETER_T(self._deleter)(self._addr)
            self._deleter = None


def dl_dtype(view: DLView) -> tuple[str, int]:
    """(dtype name, element size) of a DLPack view; TypeError for what cannot be moved."""
    if view.lanes != 1:
        raise TypeError(f"DLPack vector dtypes ({view.lanes} lanes) are not supported")
    if view.bits % 8:
        raise TypeError(f"DLPack dtype of {view.bits} bits: sub-byte elements are not supported")
    e = view.bits // 8
    if e not in ELEM_SIZES:
        raise TypeError(f"DLPack dtype of {e} bytes; supported sizes are {ELEM_SIZES}")
    return _DL_NAMES.get((view.code, view.bits), f"dlpack{view.code}x{view.bits}"), e


def from_dlpack(x, consumer_stream: int = 0, kind: str = "dlpack") -> ArrayInfo:
    """Parse an object with __dlpack__/__dlpack_device__ (host memory and other
    devices are refused before __dlpack__ is called)."""
    try:
        dev_type, dev_id = (int(v) for v in x.__dlpack_device__())
    except (AttributeError, TypeError, ValueError) as exc:
        raise TypeError(f"{type(x).__name__} has __dlpack__ but no usable __dlpack_device__ ({exc})") from None
    if dev_type not in (DL_CUDA, DL_CUDA_MANAGED):
        where = _DL_DEVICES.get(dev_type, f"DLPack device type {dev_type}")
        raise TypeError(f"autotrans.transpose got a {type(x).__name__} in {where}; it needs an NVIDIA GPU "
                        "array. Copy it to the GPU first")
    stream = consumer_stream or cu.STREAM_LEGACY        # DLPack: 0 is disallowed, 1 is the legacy stream
    try:
        capsule = x.__dlpack__(stream=stream, max_version=(1, 1))
    except TypeError:
        capsule = x.__dlpack__(stream=stream)
    imp = DLPackImport(capsule)
    v = imp.view
    name, e = dl_dtype(v)
    return ArrayInfo(kind, v.ptr, v.shape, v.strides, e, name, (v.code, v.bits), dev_id, None, v.readonly, imp)


# -- layouts -----------------------------------------------------------------------

def layout_problem(info: ArrayInfo) -> str | None:
    """Why this array cannot be transposed as it lies (None if it can)."""
    nd = len(info.shape)
    if nd not in (2, 3):
        return (f"expected a 2-D (M, N) or 3-D batched (B, M, N) array, got {nd}-D shape {info.shape}")
    if info.itemsize not in ELEM_SIZES:
        return f"dtype {info.dtype} has itemsize {info.itemsize}; supported sizes are {ELEM_SIZES}"
    if not c_contiguous(info.shape, info.strides, info.itemsize):
        order = ("Fortran-ordered" if f_contiguous(info.shape, info.strides, info.itemsize)
                 else "non-contiguous (a slice or strided view)")
        return (f"the array is {order}; transpose() needs C-contiguous arrays: "
                "autotrans.permute(x, axes) takes strided views")
    return None


def c_contiguous(shape, strides, itemsize: int) -> bool:
    """Row-major without gaps (dimensions of size 1 may have any stride)."""
    if strides is None or 0 in shape:
        return True
    want = itemsize
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != want:
            return False
        want *= d
    return True


def f_contiguous(shape, strides, itemsize: int) -> bool:
    return c_contiguous(tuple(reversed(shape)), tuple(reversed(strides)), itemsize) if strides else False


# -- streams -----------------------------------------------------------------------

def stream_handle(stream) -> int:
    """A raw CUstream handle from a PyCUDA, torch, CuPy or Numba stream, an
    object with __cuda_stream__, or a raw cudaStream_t int (0 = legacy default)."""
    if type(stream) is int:
        if stream < 0:
            raise ValueError(f"stream handle must be >= 0, not {stream}")
        return stream
    if isinstance(stream, bool):
        raise TypeError("stream must be a stream object or a raw cudaStream_t int, not a bool")
    if hasattr(type(stream), "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    kind = kind_of(stream)
    try:
        if kind == "pycuda":
            return int(stream.handle)
        if kind == "torch":
            return int(stream.cuda_stream)
        if kind == "cupy":
            return int(stream.ptr)
        if kind == "numba":
            return int(stream)
    except (AttributeError, TypeError) as exc:
        raise TypeError(f"stream {type(stream).__name__} has no stream handle ({exc})") from None
    raise TypeError("stream must be a PyCUDA Stream, torch.cuda.Stream, cupy.cuda.Stream, Numba stream or "
                    f"a raw cudaStream_t int, not {type(stream).__module__}.{type(stream).__qualname__}")


def current_stream(kind: str, ordinal: int) -> int | None:
    """The framework's current stream on device ``ordinal`` (torch, CuPy), else None."""
    if kind == "torch":
        import torch
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        return int(raw(ordinal)) if raw else int(torch.cuda.current_stream(ordinal).cuda_stream)
    if kind == "cupy":
        import cupy
        try:
            return int(cupy.cuda.get_current_stream(ordinal).ptr)
        except TypeError:                       # older CuPy: no device argument
            with cupy.cuda.Device(ordinal):
                return int(cupy.cuda.get_current_stream().ptr)
    return None


# -- outputs -----------------------------------------------------------------------

class DeviceArray:
    """A C-contiguous array in device memory that autotrans allocated (for
    producers with no array type of their own, and JAX through DLPack). It
    exports __cuda_array_interface__ v3, whose stream is the one that wrote it,
    and DLPack (__dlpack__ makes the consumer's stream wait for that one)."""

    def __init__(self, ctx: int, ordinal: int, shape: tuple, info: ArrayInfo):
        self.shape, self.itemsize, self.dtype_name = tuple(shape), info.itemsize, info.dtype
        self.dtype = info.native if isinstance(info.native, np.dtype) else np.dtype(f"V{info.itemsize}")
        self._dl = info.native if isinstance(info.native, tuple) else _dl_of(info.dtype, info.native)
        self.ctx, self.ordinal, self.stream, self.keep = ctx, ordinal, 0, None
        self.nbytes = info.itemsize * int(np.prod(shape, dtype=np.int64))
        self._buf = cu.Buffer(ctx, self.nbytes)
        self.ptr = self._buf.ptr

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype_name}, device={self.ordinal})"

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": None, "stream": self.stream or cu.STREAM_LEGACY}

    def __dlpack_device__(self):
        return (DL_CUDA, self.ordinal)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self._dl is None:
            raise BufferError(f"dtype {self.dtype_name} has no DLPack equivalent")
        if dl_device is not None and tuple(dl_device) != (DL_CUDA, self.ordinal):
            raise BufferError(f"cannot export to DLPack device {dl_device} without a copy")
        if copy:
            raise BufferError("autotrans.DeviceArray does not copy on export")
        if stream is not None and stream != -1:
            cu.wait(self.ctx, stream, self.stream)
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        return export_capsule(self.ptr, self.shape, self._dl, (DL_CUDA, self.ordinal), self, versioned)

    def get(self) -> np.ndarray:
        """A host copy (waits for the stream that wrote it)."""
        cu.stream_synchronize(self.ctx, self.stream)
        out = np.empty(self.nbytes, np.uint8)
        with cu.within(self.ctx):
            cu.check(cu.lib().cuMemcpyDtoH_v2(out.ctypes.data, self.ptr, self.nbytes), "cuMemcpyDtoH")
        return out.view(self.dtype).reshape(self.shape)


def _dl_of(name: str, native) -> tuple | None:
    """(code, bits) of a dtype for DLPack export, or None."""
    if name in _DL_CODES:
        return _DL_CODES[name]
    if isinstance(native, np.dtype) and native.kind in _NP_KIND_CODES:
        return (_NP_KIND_CODES[native.kind], native.itemsize * 8)
    return None


_exports: dict = {}          # DLManagedTensor address -> (struct, shape array, owner)
_exports_lock = threading.Lock()


def _release(addr) -> None:
    with _exports_lock:
        _exports.pop(addr, None)


_DELETER = _DELETER_T(_release)


@CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule) -> None:
    """An export capsule nobody consumed: release what it holds."""
    for name in (_NAME, _VNAME):
        if _raw_is_valid(capsule, name):
            _release(_raw_get_pointer(capsule, name))


def export_capsule(ptr: int, shape: tuple, dl: tuple, device: tuple, owner, versioned: bool):
    """A DLPack capsule of a C-contiguous tensor at ptr, keeping owner alive
    until the consumer calls the deleter (or the capsule dies unconsumed)."""
    shp = (c_int64 * max(1, len(shape)))(*shape)
    m = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    t = m.dl_tensor
    t.data, t.ndim, t.byte_offset = ptr or None, len(shape), 0
    t.device.device_type, t.device.device_id = device
    t.dtype.code, t.dtype.bits, t.dtype.lanes = dl[0], dl[1], 1
    t.shape, t.strides = shp, None
    m.deleter = ctypes.cast(_DELETER, c_void_p).value
    if versioned:
        m.version.major, m.version.minor = 1, 1
    addr = ctypes.addressof(m)
    with _exports_lock:
        _exports[addr] = (m, shp, owner)
    return _capsule_new(addr, _VNAME if versioned else _NAME, ctypes.cast(_capsule_destructor, c_void_p).value)


@dataclass(frozen=True)
class Output:
    """A new output: what transpose() returns, and the pointer the kernel writes."""
    value: object
    ptr: int


def new_output(info: ArrayInfo, shape: tuple, ctx: int, ordinal: int) -> Output:
    """A new C-contiguous array of the input's kind, shape ``shape``, on the
    input's device (GPUArrays are made by the caller, from PyCUDA's pool)."""
    kind = info.kind
    if kind == "torch":
        import torch
        t = torch.empty(shape, dtype=info.native, device=torch.device("cuda", ordinal))
        return Output(t, t.data_ptr())
    if kind == "cupy":
        import cupy
        with cupy.cuda.Device(ordinal):
            a = cupy.empty(shape, dtype=info.native)
        return Output(a, a.data.ptr)
    if kind == "numba" and isinstance(info.native, np.dtype):
        from numba import cuda as ncuda
        with ncuda.gpus[ordinal]:
            a = ncuda.device_array(shape, dtype=info.native)
        return Output(a, int(a.__cuda_array_interface__["data"][0] or 0))
    a = DeviceArray(ctx, ordinal, shape, info)
    return Output(a, a.ptr)


def finish(out: Output, kind: str, stream: int):
    """The value to hand back once the kernel is enqueued on ``stream``."""
    v = out.value
    if isinstance(v, DeviceArray):
        v.stream = stream
        if kind == "jax":
            import jax
            return jax.dlpack.from_dlpack(v)
    return v


def record_stream(value, kind: str, stream, handle: int, ordinal: int) -> None:
    """Tell torch's caching allocator that ``value`` is used on another stream."""
    if kind != "torch":
        return
    import torch
    s = stream if isinstance(stream, torch.cuda.Stream) else torch.cuda.ExternalStream(
        handle, device=torch.device("cuda", ordinal))
    value.record_stream(s)
