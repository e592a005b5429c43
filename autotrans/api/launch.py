"""transpose(): the hot path, for GPU arrays of any kind, from any thread.

A plan per input layout (checked once), a launcher per (context, shape, element
size, pointer alignment) with its config chosen from the winners index and its
kernel loaded in the memory's own context; both memos are bounded LRUs.
"""
from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections import OrderedDict

import numpy as np

from ..backend import arrays
from ..backend import cuda as driver
from ..backend import driver as cu
from ..backend import memory
from ..core import layout
from ..core.layout import c_strides
from ..core.problem import as_bmn, dtype_of_size
from ..kernels import strided
from ..kernels.config import MAX_BLOCKS, KernelConfig
from ..tuning import loader, runner
from ..tuning.space import default_config
from ..tuning.strided import run_problem
from . import capture, specialise
from .index import INDEX, Stamp, _default_cache
from .strided_select import choose_strided

TUNE_ENV = "AUTOTRANS_TUNE"
PLAN_LIMIT = 2048          # input layouts remembered
LAUNCHER_LIMIT = 4096      # (context, shape, element size, alignment) launchers remembered
ROUTE_LIMIT = 4096         # (framework, layout, device, alignment) repeat-call routes remembered
RECHECK_S = 1.0            # how often repeat calls look whether the cache file changed


class LRU:
    """A thread-safe mapping that forgets its least recently used entries past ``limit``."""

    def __init__(self, limit: int):
        self.limit = limit
        self._d: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        v = self._d.get(key)             # one C call each: atomic under the GIL
        if v is not None:
            try:
                self._d.move_to_end(key)
            except KeyError:             # evicted by another thread meanwhile
                pass
        return v

    def put(self, key, value) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.limit:
                self._d.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()

    def __len__(self) -> int:
        return len(self._d)


_plans = LRU(PLAN_LIMIT)
_launchers = LRU(LAUNCHER_LIMIT)
_routes = LRU(ROUTE_LIMIT)
_strided = LRU(LAUNCHER_LIMIT)   # permute()'s strided launchers: (context, problem, alignment, epilogue)
_kernels: dict = {}        # (context, config key) -> loaded Kernel; bounded by the search space and MAX_BUILDS
_kernel_lock = threading.Lock()
_generation = [0]          # bumped (under _stale_lock) each time a background build makes choices stale
_stale_lock = threading.Lock()
_gpuarray_types: set = set()


def forget() -> None:
    """Drop the in-process memo of plans, choices and the winners index (after
    the cache changed); loaded kernels stay loaded."""
    _plans.clear()
    _launchers.clear()
    _routes.clear()
    _strided.clear()
    INDEX.clear()


def _want_tune(tune) -> bool:
    if tune is not None:
        return bool(tune)
    return os.environ.get(TUNE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


# -- configs and kernels -----------------------------------------------------

def config_problems(cfg: KernelConfig, bmn, elem_bytes: int, align: int, dev) -> list[str]:
    """Why cfg must not be launched for this problem (a validated (B, M, N))
    on this device (empty: it may)."""
    p = []
    b, m, n = bmn
    if cfg.elem_bytes != elem_bytes:
        return [f"it moves {cfg.elem_bytes}-byte elements, the array has {elem_bytes}-byte ones"]
    if cfg.layout == "strided":          # runs the shape as kernels.strided.dense_tile
        p += strided.dense_problems(cfg, bmn, align)
    else:
        if cfg.fixed and cfg.fixed_shape != tuple(bmn):
            p.append(f"it is compiled for the shape {cfg.fixed} only")
        if cfg.pointer_align > align:
            p.append(f"it needs {cfg.pointer_align}-byte aligned pointers, these are {align}-byte aligned")
        if not cfg.family.aligned_for(cfg, m, n):
            p.append(f"rows of this shape are not {cfg.vec_bytes}-byte aligned")
    p += dev.limits.problems(cfg.threads, cfg.smem_bytes)
    blocks = cfg.blocks(bmn)
    if blocks > MAX_BLOCKS and cfg.layout == "dense":
        p += cfg.launch_problems(bmn)
    if blocks > dev.max_grid_x:
        p.append(f"{blocks} blocks > the device's grid limit {dev.max_grid_x}")
    return p


def _choose(bmn, e: int, align: int, dev, ctx: int, tune, dtype) -> KernelConfig:
    choice = INDEX.choose(bmn, e, dev.id.text, dev.limits, align=align)
    if choice.source not in ("exact", "shipped"):
        if _want_tune(tune) and ctx == driver.home_context():
            with driver.pycuda_current():
                runner.tune(bmn, dtype_of_size(e))
            forget()
            choice = INDEX.choose(bmn, e, dev.id.text, dev.limits, align=align)
        if choice.source not in ("exact", "shipped") and min(bmn) > 0:
            capture.note(bmn, dtype)
    cfg = choice.config
    why = config_problems(cfg, bmn, e, align, dev)
    if why:
        cfg = default_config(bmn, e, dev.limits, max_vec=align)
        still = config_problems(cfg, bmn, e, align, dev)
        if still:
            raise ValueError(f"no kernel can transpose shape {bmn} of {e}-byte elements here: "
                             f"{choice.config.key}: {'; '.join(why)}; {cfg.key}: {'; '.join(still)}")
    return _specialised(cfg, bmn, e, align, dev) if choice.source != "exact" and specialise.enabled() else cfg


def _specialised(cfg: KernelConfig, bmn, e: int, align: int, dev) -> KernelConfig:
    """cfg compiled for bmn where that cubin is built already (else its build
    queued, and cfg as it is until then: api.specialise)."""
    fixed = specialise.candidate(cfg, bmn, e)
    if fixed is None or config_problems(fixed, bmn, e, align, dev):
        return cfg
    return fixed if specialise.ready(fixed, dev.arch, _relaunch) else cfg


def _relaunch() -> None:
    """Forget the launchers chosen so far, so the next calls choose again
    (a shape's or a strided problem's fixed kernel was built, on the
    background thread: a call that chose before this keeps its choice out of
    the caches, _keep)."""
    with _stale_lock:
        _generation[0] += 1
        _launchers.clear()
        _routes.clear()
        _strided.clear()


def generation() -> int:
    """The count of _relaunch()es so far: taken before a choice, given to _keep."""
    return _generation[0]


def _keep(cache: LRU, key, value, gen: int) -> None:
    """cache[key] = value, unless a build finished since generation ``gen``
    (a choice made before it may be the generic kernel it replaces)."""
    with _stale_lock:
        if gen == _generation[0]:
            cache.put(key, value)


def _kernel(cfg: KernelConfig, ctx: int, arch: str) -> driver.Kernel:
    """cfg compiled for arch (or found in the store), loaded in ctx, once."""
    k = _kernels.get((ctx, cfg.key))
    if k is None:
        with _kernel_lock:
            k = _kernels.get((ctx, cfg.key))
            if k is None:
                k = _kernels[(ctx, cfg.key)] = loader.kernel(cfg, arch, ctx)
    return k


def _launcher(bmn, e: int, align: int, ctx: int, ordinal: int, tune, dtype):
    key = (ctx, bmn, e, align)
    f = _launchers.get(key)
    if f is None:
        gen = generation()
        if align < e:      # no dense kernel loads these elements (a complex128 view 8 bytes off): as words
            words = layout.canonical(*layout.as_words(bmn, c_strides(bmn, e), e, (0, 2, 1), align), align)
            f = strided_launcher(words, align, "none", "none", ctx, ordinal)
        else:
            dev = driver.device_info(ordinal)
            cfg = _choose(bmn, e, align, dev, ctx, tune, dtype)
            f = _kernel(cfg, ctx, dev.arch).launcher(bmn)
        _keep(_launchers, key, f, gen)
    return f


def strided_launcher(problem, align: int, epilogue: str, cast: str, ctx: int, ordinal: int):
    """go(src, dst, stream) for a canonical problem that a strided kernel runs
    (as tuning.strided.run_problem gives it) with pointers aligned to
    ``align``, loaded in ctx, once per (ctx, problem, align, epilogue, cast).
    Untuned problems are noted for AUTOTRANS_CAPTURE."""
    key = (ctx, problem, align, epilogue, cast)
    go = _strided.get(key)
    if go is None:
        gen = generation()
        go = _load_strided(run_problem(strided.as_strided(problem, align), cast), align, epilogue, cast, ctx, ordinal)
        _keep(_strided, key, go, gen)
    return go


def _load_strided(problem, align: int, epilogue: str, cast: str, ctx: int, ordinal: int):
    dev = driver.device_info(ordinal)
    ch = choose_strided(problem, align, epilogue, dev.id.text, dev.limits, _default_cache(), cast)
    if ch.source not in ("tuned", "shipped"):
        capture.note_problem(problem, cast, epilogue)       # for `autotrans tune --from` (AUTOTRANS_CAPTURE)
    cfg = ch.config
    if ch.source != "tuned" and specialise.enabled():    # not tuned for this problem: compiled for it, once built
        fixed = specialise.strided_candidate(cfg, problem, align)
        cfg = fixed if fixed is not None and specialise.ready(fixed, dev.arch, _relaunch) else cfg
    kernel = _kernel(cfg, ctx, dev.arch)
    return kernel.strided_launcher(*strided.launch_args(cfg, problem))


def kernel_for(shape, elem_bytes: int, align: int = 16, tune=None, ordinal: int | None = None):
    """The loaded kernel transpose() launches for this shape and pointer
    alignment on device ``ordinal`` (default: PyCUDA's device), in its primary
    context; tunes first on a miss if tune (or AUTOTRANS_TUNE)."""
    bmn = as_bmn(shape)
    ordinal = driver.device().ordinal if ordinal is None else ordinal
    dev, ctx = driver.device_info(ordinal), cu.primary(ordinal)
    return _kernel(_choose(bmn, elem_bytes, align, dev, ctx, tune, dtype_of_size(elem_bytes)), ctx, dev.arch)


# -- plans ---------------------------------------------------------------------

class _Plan:
    """Everything a transpose of one input layout needs, worked out once."""

    def __init__(self, info: arrays.ArrayInfo, tune):
        why = arrays.layout_problem(info)
        if why:
            raise (TypeError if "itemsize" in why else ValueError)(why)
        self.kind, self.info = info.kind, dataclasses.replace(info, ptr=0, keep=None)   # layout only
        self.e = info.itemsize
        self.bmn = as_bmn(info.shape)
        self.oshape = tuple(info.shape[:-2]) + (info.shape[-1], info.shape[-2])
        self.nbytes = info.nbytes
        self.empty = self.nbytes == 0
        self.tune = tune
        self.dtype = info.native if isinstance(info.native, np.dtype) else dtype_of_size(self.e)
        self.new_gpuarray = memory.OutputMaker(self.oshape, info.native) if info.kind == "pycuda" else None

    def launch(self, src: int, dst: int, ctx: int, ordinal: int, stream: int):
        """Launch on stream; returns the launcher used. A matrix with a side
        of 1 lies in memory as its transpose does: it is copied."""
        if self.bmn[1] == 1 or self.bmn[2] == 1:
            go = _copier(ctx, self.nbytes)
            go(src, dst, stream)
            return go
        align = pointer_align(src, dst)
        go = _launcher(self.bmn, self.e, align, ctx, ordinal, self.tune, self.dtype)
        go(src, dst, stream)
        return go


def pointer_align(src: int, dst: int) -> int:
    """The largest power of two up to 16 dividing both pointers."""
    low = (src | dst) & 15
    return 16 if low == 0 else low & -low


def _copier(ctx: int, nbytes: int):
    """go(src, dst, stream): a device-to-device copy of nbytes in ctx."""
    def go(src, dst, stream=0):
        cu.copy(ctx, dst, src, nbytes, stream)
    return go


def _plan(key, info, tune) -> _Plan:
    plan = _plans.get(key)
    if plan is None:
        plan = _Plan(info, tune)
        _plans.put(key, plan)
    return plan


def _locate(ptr: int, what: str) -> cu.Pointer:
    loc = cu.locate(ptr)
    if loc.memory == cu.MEMORY_HOST:
        raise TypeError(f"{what} is in host memory; autotrans needs device memory (copy it to the GPU first)")
    if loc.memory not in (cu.MEMORY_DEVICE, cu.MEMORY_UNIFIED):
        raise ValueError(f"{what}'s pointer {ptr:#x} is not CUDA device memory of this process")
    return loc


# -- out= -------------------------------------------------------------------------

def _check_out(plan: _Plan, src: int, out, loc: cu.Pointer | None, stream: int) -> tuple[arrays.ArrayInfo, int]:
    """out described, and the pointer to write; ValueError/TypeError if it does not fit."""
    try:
        o = arrays.describe(out, stream)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"out: {exc}") from None
    x = plan.info
    same_type = o.dtype == x.dtype or "void" in (o.dtype[:4], x.dtype[:4])
    if tuple(o.shape) != plan.oshape or o.itemsize != x.itemsize or not same_type:
        raise ValueError(f"out must have shape {plan.oshape} and dtype {x.dtype}, "
                         f"got {tuple(o.shape)} {o.dtype}")
    if not arrays.c_contiguous(o.shape, o.strides, o.itemsize):
        raise ValueError("out must be C-contiguous")
    if o.readonly:
        raise ValueError("out is read-only")
    if plan.empty:
        return o, 0
    if src < o.ptr + plan.nbytes and o.ptr < src + plan.nbytes:
        raise ValueError("out overlaps the input; a transpose cannot be done in place here")
    oloc = _locate(o.ptr, "out")
    if oloc.ctx != loc.ctx:
        raise ValueError(f"out is on device {oloc.ordinal} (or another context), the input on device "
                         f"{loc.ordinal}; both must be on one device")
    return o, o.ptr


# -- the entry point -----------------------------------------------------------

def _gpuarray_plan(x, tune) -> _Plan:
    key = (type(x), x.shape, x.dtype, x.strides, tune)
    plan = _plans.get(key)
    return plan if plan is not None else _plan(key, arrays._pycuda(x), tune)


def transpose(x, out=None, stream=None, *, tune=None):
    """Transpose a C-contiguous GPU array: (M, N) -> (N, M), or a batch
    (B, M, N) -> (B, N, M).

    x: a PyCUDA GPUArray, torch CUDA tensor, CuPy array, Numba device array, JAX
    array, or anything exposing __cuda_array_interface__ or DLPack. Returns an
    array of the same kind on the same device (writes into ``out``, of any
    supported kind, if given). stream: a PyCUDA, torch or CuPy stream or a raw
    cudaStream_t int; by default torch and CuPy inputs run on their framework's
    current stream, others on the producer's stream (CAI v3) or the legacy
    default stream. Work the producer enqueued on its stream is waited for (an
    event, never a host synchronize). Uses the best cached config for the
    device and shape (see explain()); tune=True (or AUTOTRANS_TUNE=1) tunes
    shapes without a cached result.
    """
    if stream is None and tune is None:
        fast = (_fast if out is None else _fast_out).get(type(x))
        if fast is not None:
            if time.monotonic() >= _recheck[0]:
                _check_cache()
            r = fast(x) if out is None else fast(x, out)
            if r is not None:
                return r
    return _transpose(x, out, stream, tune)


def _transpose(x, out, stream, tune):
    gen = generation()          # before the kernel is chosen: a build after it keeps this call's route out
    explicit = None if stream is None else arrays.stream_handle(stream)
    t = type(x)
    if t in _gpuarray_types or (t.__module__.startswith("pycuda") and driver.is_gpuarray(x)):
        _gpuarray_types.add(t)
        plan = _gpuarray_plan(x, tune)
        src, producer, keep = (int(x.gpudata) if x.gpudata is not None else 0), None, None
    else:
        info = arrays.describe(x, explicit or 0)
        plan = _plan((info.kind, info.shape, info.strides, info.itemsize, info.dtype, info.native, tune),
                     info, tune)
        src, producer, keep = info.ptr, info.stream, info.keep
    kind = plan.kind
    if plan.empty:
        return _empty_result(plan, out, explicit or 0)
    loc = _locate(src, "the input")
    ctx, ordinal = loc.ctx, loc.ordinal
    h = explicit
    if h is None:
        h = arrays.current_stream(kind, ordinal)
        if h is None:
            h = producer or 0
    elif kind in ("torch", "cupy"):
        producer = arrays.current_stream(kind, ordinal)   # what their CAI would export
    if producer is not None:
        cu.wait(ctx, h, producer)
    made = None
    if out is not None:
        o, dst = _check_out(plan, src, out, loc, h)
        if o.stream is not None:
            cu.wait(ctx, h, o.stream)                     # earlier users of out go first
        result = out
    elif kind == "pycuda":
        result = plan.new_gpuarray()
        dst = int(result.gpudata)
    else:
        made = arrays.new_output(plan.info, plan.oshape, ctx, ordinal)
        dst = made.ptr
    go = plan.launch(src, dst, ctx, ordinal, h)
    if made is not None:
        if explicit is not None:
            arrays.record_stream(made.value, kind, stream, h, ordinal)
        if keep is not None and isinstance(made.value, arrays.DeviceArray):
            made.value.keep = keep                        # the producer's memory outlives our read
        result = arrays.finish(made, kind, h)
    if explicit is None and tune is None and producer is None and keep is None:
        if out is None:
            _remember_route(x, kind, plan, src, dst, ctx, ordinal, go, gen)
        elif o.stream is None:
            _remember_route(x, kind, plan, src, dst, ctx, ordinal, go, gen, out)
    return result


# -- repeat calls ------------------------------------------------------------------
# A call like one made before (same framework, layout, device and pointer
# alignment; no out=, stream= or tune=) takes a route worked out by the full
# path above: read the pointer, make the output, launch. Anything unusual (a
# lazy torch view, another current device, an output of other alignment) goes
# the full way again.

class _Route:
    __slots__ = ("oshape", "ostrides", "go", "ctx", "ordinal", "dlow", "make", "stream", "nbytes")

    def __init__(self, plan: _Plan, go, ctx: int, ordinal: int, dst: int):
        self.oshape, self.go, self.ctx, self.ordinal, self.dlow = plan.oshape, go, ctx, ordinal, dst & 15
        self.ostrides = c_strides(plan.oshape)
        self.make, self.stream, self.nbytes = plan.new_gpuarray, None, plan.nbytes


def _torch_key(x, src: int) -> tuple:
    return ("torch", x.shape, x.stride(), x.dtype, x.get_device(), src & 15)


def _cupy_key(x, src: int) -> tuple:
    return ("cupy", x.shape, x.strides, x.dtype, x.data.device_id, src & 15)


def _pycuda_key(x, src: int) -> tuple:
    return ("pycuda", x.shape, x.strides, x.dtype, src & 15)


def _torch_fast(x):
    try:
        src = x.data_ptr()
        r = _routes.get(_torch_key(x, src))
        if r is None or x.is_conj() or x.is_neg():
            return None
    except RuntimeError:                  # sparse and other strideless tensors: the full path says why
        return None
    y = x.new_empty_strided(r.oshape, r.ostrides)     # torch's quickest allocation of a shape
    dst = y.data_ptr()
    if dst & 15 != r.dlow:
        return None
    r.go(src, dst, r.stream(r.ordinal))
    return y


def _cupy_fast(x):
    src = x.data.ptr
    r = _routes.get(_cupy_key(x, src))
    if r is None or _cupy_device() != r.ordinal:
        return None
    y = _cupy_ndarray(r.oshape, x.dtype)
    dst = y.data.ptr
    if dst & 15 != r.dlow:
        return None
    r.go(src, dst, r.stream(r.ordinal))
    return y


def _pycuda_fast(x):
    g = x.gpudata
    if g is None:
        return None
    src = int(g)
    r = _routes.get(_pycuda_key(x, src))
    if r is None or cu.context_of(src) != r.ctx:
        return None
    y = r.make()
    dst = int(y.gpudata)
    if dst & 15 != r.dlow:
        return None
    r.go(src, dst, 0)
    return y


def _torch_fast_out(x, out):
    if type(out) is not type(x):
        return None
    try:
        src, dst = x.data_ptr(), out.data_ptr()
        r = _routes.get((_torch_key(x, src), _torch_key(out, dst)))
        if r is None or x.is_conj() or x.is_neg() or out.is_conj() or out.is_neg():
            return None
    except RuntimeError:
        return None
    if src < dst + r.nbytes and dst < src + r.nbytes:
        return None                       # overlapping: the full path says why
    r.go(src, dst, r.stream(r.ordinal))
    return out


def _cupy_fast_out(x, out):
    if type(out) is not type(x):
        return None
    src, dst = x.data.ptr, out.data.ptr
    r = _routes.get((_cupy_key(x, src), _cupy_key(out, dst)))
    if r is None or _cupy_device() != r.ordinal or (src < dst + r.nbytes and dst < src + r.nbytes):
        return None
    r.go(src, dst, r.stream(r.ordinal))
    return out


def _pycuda_fast_out(x, out):
    if type(out) is not type(x) or x.gpudata is None or out.gpudata is None:
        return None
    src, dst = int(x.gpudata), int(out.gpudata)
    r = _routes.get((_pycuda_key(x, src), _pycuda_key(out, dst)))
    if r is None or cu.context_of(src) != r.ctx or cu.context_of(dst) != r.ctx:
        return None
    if src < dst + r.nbytes and dst < src + r.nbytes:
        return None
    r.go(src, dst, 0)
    return out


_cupy_device = _cupy_ndarray = None
_KEYS = {"torch": (_torch_key, _torch_fast, _torch_fast_out), "cupy": (_cupy_key, _cupy_fast, _cupy_fast_out),
         "pycuda": (_pycuda_key, _pycuda_fast, _pycuda_fast_out)}
_fast: dict = {}           # input type -> its repeat-call function
_fast_out: dict = {}       # input type -> its repeat-call function with out=


def routable(x, kind: str, out=None) -> bool:
    """Whether repeat calls like this one may take a remembered route: torch,
    CuPy and PyCUDA arrays (torch's own tensor types), with an out= of the
    same type or none."""
    if kind not in _KEYS or (kind == "torch" and type(x).__module__.split(".")[0] != "torch"):
        return False
    return out is None or type(out) is type(x)


def route_stream(kind: str):
    """The function a route calls for the framework's current stream on a
    device ordinal (torch's raw getter where it has one), None for PyCUDA."""
    global _cupy_device, _cupy_ndarray
    if kind == "torch":
        import torch
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        return raw if raw is not None else (lambda d: arrays.current_stream("torch", d))
    if kind == "cupy":
        import cupy
        _cupy_device, _cupy_ndarray = cupy.cuda.runtime.getDevice, cupy.ndarray
        return lambda d: arrays.current_stream("cupy", d)
    return None


def _remember_route(x, kind: str, plan: _Plan, src: int, dst: int, ctx: int, ordinal: int, go,
                    gen: int, out=None) -> None:
    """Remember how this call ran, for repeat calls like it (with out: calls
    with an out= of the same kind and layout), unless a build since
    generation ``gen`` made its choice stale."""
    if not routable(x, kind, out):
        return
    key_of, fast, fast_out = _KEYS[kind]
    r = _Route(plan, go, ctx, ordinal, dst)
    r.stream = route_stream(kind)
    try:
        key = key_of(x, src) if out is None else (key_of(x, src), key_of(out, dst))
    except (AttributeError, RuntimeError, TypeError):
        return
    _keep(_routes, key, r, gen)
    if out is None:
        _fast[type(x)] = fast
    else:
        _fast_out[type(x)] = fast_out


_recheck = [0.0, None]     # when repeat calls next look at the cache file, and its stamp then


def _check_cache() -> None:
    """Forget the choices made so far if the cache file changed since the last
    look (another process tuned): at most every RECHECK_S seconds."""
    _recheck[0] = time.monotonic() + RECHECK_S
    stamp = Stamp.of(_default_cache().path)
    if _recheck[1] is not None and stamp != _recheck[1]:
        _launchers.clear()
        _routes.clear()
        _strided.clear()
    _recheck[1] = stamp


def _empty_result(plan: _Plan, out, stream: int):
    """Nothing to move: out (checked), or a new empty array of the input's kind."""
    if out is not None:
        _check_out(plan, 0, out, None, stream)
        return out
    if plan.kind == "pycuda":
        return plan.new_gpuarray()
    ordinal = plan.info.device or 0
    made = arrays.new_output(plan.info, plan.oshape, cu.primary(ordinal), ordinal)
    return arrays.finish(made, plan.kind, stream)
