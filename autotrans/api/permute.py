"""permute(): N-d permutations of GPU arrays of any kind, strided views included.

Each call is reduced to a canonical problem (core.layout.canonical: size-1
axes dropped, adjacent contiguous axes merged) and run by what fits it: a
device-to-device copy, transpose()'s tuned kernels (a dense batched
transpose after fusion, with wider elements where whole inner rows fit one),
or a strided kernel: a shared-memory tile family for strided transposes, the
rows family where the inner axis stays put. A strided problem runs the config
strided_select.choose_strided gives: tuned for it (exact match in the
cache), shipped for it, the nearest tuned problem's, else the untuned rule.
conj=True runs every problem through a strided kernel whose store conjugates
(KernelConfig.epilogue): a copy as rows (kernels.strided.as_rows), a dense
transpose as a tile problem (as_tile).
"""
from __future__ import annotations

import functools
import math
import operator
import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from ..backend import arrays
from ..backend import cuda as driver
from ..backend import driver as cu
from ..backend import memory
from ..core import layout
from ..core.layout import CopyProblem, RowsProblem, TileProblem, TransposeProblem
from ..core.device import Limits
from ..core.problem import dtype_of_size, elem_size, format_shape, nonempty
from ..kernels import strided
from ..kernels import config
from ..kernels.config import KernelConfig
from ..tuning import runner
from ..tuning.strided import run_problem, tune_problem
from ..results.store import ResultCache
from . import launch, specialise
from .select import EMPTY, explain as explain_transpose
from .strided_select import StridedChoice, choose_strided, strided_config
from .index import _default_cache

_strided = launch._strided     # (context, problem, alignment, epilogue, cast) -> launcher; forget() clears it


def permute(x, axes, out=None, stream=None, *, conj: bool = False, dtype=None):
    """Reorder the axes of a GPU array: the result's axis k is x's axis
    ``axes[k]`` (as numpy.transpose(x, axes)), C-contiguous.

    x: any array transpose() takes, of rank 1 to 8, and it may be a view with
    any positive strides (a slice, every other row, a transposed view). axes:
    a permutation of range(x.ndim) (negative axes count from the end). out,
    stream: as for transpose(). conj=True: the complex conjugate in the
    same pass (numpy.conj(numpy.transpose(x, axes)), bit for bit: the sign
    bit of every imaginary part flipped); for real dtypes it changes nothing.
    dtype: the result's dtype, cast in the same pass (a NumPy-style name such
    as "bfloat16", a NumPy dtype, or the framework's own dtype object, e.g.
    torch.bfloat16): between float32, float16, bfloat16 and float64, and
    between integer widths, bit-exact as NumPy / ml_dtypes astype (round to
    nearest even; integers truncate or extend as astype does). ValueError for
    other casts.
    """
    if time.monotonic() >= launch._recheck[0]:
        launch._check_cache()              # another process tuned: choose again
    if stream is None and type(x) in _route_kinds:
        r = _repeat(x, axes, out, conj, dtype)
        if r is not None:
            return r
    gen = launch.generation()           # before the kernel is chosen (launch._keep)
    explicit = None if stream is None else arrays.stream_handle(stream)
    info = _describe(x, explicit)
    epilogue = epilogue_of(conj, info.dtype, info.itemsize)
    oinfo, cast = _target(dtype, info)
    axes = _axes(axes, len(info.shape))
    strides = info.strides if info.strides is not None else layout.c_strides(info.shape, info.itemsize)
    oshape = tuple(info.shape[a] for a in axes)
    _canonical(tuple(info.shape), tuple(strides), info.itemsize, axes, 16)   # bad strides: refused before any work
    if math.prod(info.shape) == 0:
        return _empty(oinfo, oshape, out, explicit or 0)
    loc = launch._locate(info.ptr, "the input")
    ctx, ordinal = loc.ctx, loc.ordinal
    h, producer = _stream(info, explicit, ordinal)
    if producer is not None:
        cu.wait(ctx, h, producer)
    made = None
    if out is not None:
        dst = _check_out(info, oinfo, strides, oshape, out, loc, h)
        result = out
    elif info.kind == "pycuda":
        result = memory.OutputMaker(oshape, oinfo.native)()
        dst = int(result.gpudata)
    else:
        made = arrays.new_output(oinfo, oshape, ctx, ordinal)
        dst = made.ptr
    if cast != "none" and (info.ptr % info.itemsize or dst % oinfo.itemsize):
        raise ValueError(f"a cast needs each pointer aligned to its element: the input's to {info.itemsize} B, "
                         f"the output's to {oinfo.itemsize} B")
    problem = _canonical(tuple(info.shape), tuple(strides), info.itemsize, axes, layout.alignment(info.ptr, dst),
                         oinfo.itemsize if cast != "none" else None, epilogue == "none")
    go = launcher(problem, info.ptr, dst, ctx, ordinal, epilogue, cast)
    go(info.ptr, dst, h)
    if explicit is None and producer is None and info.keep is None and (out is not None or cast == "none"):
        _remember(x, info.kind, out, (axes, conj, dtype), oshape, go, ctx, ordinal, info.ptr, dst,
                  layout.extent(info.shape, strides, info.itemsize), math.prod(oshape) * oinfo.itemsize, gen)
    if made is not None:
        if explicit is not None:
            arrays.record_stream(made.value, info.kind, stream, h, ordinal)
        if info.keep is not None and isinstance(made.value, arrays.DeviceArray):
            made.value.keep = info.keep
        result = arrays.finish(made, info.kind, h)
    return result


@functools.lru_cache(maxsize=4096)
def _canonical(shape: tuple, strides: tuple, itemsize: int, axes: tuple, align: int, out_itemsize=None,
               plain: bool = True):
    """canonical(), remembered per layout (a repeat call costs a lookup). A
    tile of elements wider than the pointers' alignment (complex128 at 8
    bytes: a view into a float64 buffer), which no tile kernel loads, moves
    as words of that alignment where nothing is applied to its elements
    (plain: no cast, no epilogue): a problem of rows."""
    problem = layout.canonical(shape, strides, itemsize, axes, align, out_itemsize=out_itemsize)
    if plain and out_itemsize is None and itemsize > align and isinstance(problem, TileProblem):
        problem = layout.canonical(*layout.as_words(shape, strides, itemsize, axes, align), align)
    return problem


def run(problem, src: int, dst: int, ctx: int, ordinal: int, stream: int, epilogue: str = "none",
        cast: str = "none") -> None:
    """Enqueue a canonical problem on stream (pointers in context ctx), its
    output after the store epilogue (KernelConfig.epilogue) and cast
    (KernelConfig.cast; the problem from canonical(..., out_itemsize=))."""
    launcher(problem, src, dst, ctx, ordinal, epilogue, cast)(src, dst, stream)


def launcher(problem, src: int, dst: int, ctx: int, ordinal: int, epilogue: str = "none", cast: str = "none"):
    """go(src, dst, stream) for a canonical problem with pointers of src's and
    dst's alignment in context ctx (run's launch, without enqueueing it)."""
    align = launch.pointer_align(src, dst)
    if epilogue == "none" and cast == "none":
        if isinstance(problem, CopyProblem):
            nbytes = problem.nbytes
            return lambda s, d, h: cu.copy(ctx, d, s, nbytes, h)
        if isinstance(problem, TransposeProblem):
            e = problem.elem
            return launch._launcher(problem.bmn, e, align, ctx, ordinal, None, dtype_of_size(e))
    return launch.strided_launcher(problem, align, epilogue, cast, ctx, ordinal)


def as_strided(problem, align: int, cast: str = "none"):
    """The problem as a strided kernel runs it: a copy as rows (of elements
    the alignment allows), a dense transpose as a tile problem (both:
    kernels.strided.as_strided), then as tuning.strided.run_problem gives it
    (a tile problem of small or odd matrices, or of odd
    output rows that fusing lengthens, as its fused tiles; short rows in
    input order)."""
    return run_problem(strided.as_strided(problem, align), cast)


def strided_choice(problem: TileProblem | RowsProblem, align: int, epilogue: str, fingerprint: str, limits,
                   cache=None, cast: str = "none") -> StridedChoice:
    """The StridedChoice of a strided problem on the device ``fingerprint`` of
    these limits (strided_select.choose_strided): tuned for exactly this
    problem, cast and epilogue in ``cache`` (default: the user cache), shipped
    for it, the nearest tuned problem's config, else the untuned rule."""
    return choose_strided(problem, align, epilogue, fingerprint, limits,
                          cache if cache is not None else _default_cache(), cast)


@dataclass(frozen=True)
class PermuteChoice:
    """What permute() runs for a permutation, and why: its canonical problem,
    and a copy (config None), transpose()'s choice (``transpose``: a
    select.Choice) or a strided config (source "tuned" or "untuned"); of an
    empty shape, no problem and no config (source "empty")."""
    problem: object
    config: KernelConfig | None
    source: str
    transpose: object = None
    reason: str = ""

    def __str__(self) -> str:
        if self.problem is None:
            return self.reason
        if self.config is None:
            return "a device-to-device copy"
        if self.transpose is not None:
            return f"transpose() of {format_shape(self.problem.bmn)}: {self.transpose}"
        flag = " --conj" if self.config.epilogue != "none" else " --to" if self.config.cast != "none" else ""
        why = self.reason + ("" if self.source in ("tuned", "shipped") else f" (tune it with --axes{flag})")
        return f"{self.config.key}  [{self.source}] {why}"


def explain_permute(shape, axes, dtype=np.float32, *, conj: bool = False, to=None, fingerprint: str | None = None,
                    cache_dir=None) -> PermuteChoice:
    """What permute() would run for a C-contiguous array of ``shape`` and
    ``dtype`` permuted by ``axes`` (16-byte aligned pointers, as allocators
    give); ``to``: the result's dtype (permute's dtype=, a cast in the same
    pass). Without a GPU, pass the ``fingerprint`` of the device to ask about
    (limits: every GPU's minimum)."""
    limits = Limits()
    if fingerprint is None:
        dev = driver.device()
        fingerprint, limits = dev.id.text, dev.limits
    problem, cast, epilogue = permutation_problem(shape, dtype, axes, conj=conj, to=to)
    if problem is None:
        return PermuteChoice(None, None, "empty", reason=EMPTY)
    if isinstance(problem, CopyProblem):
        return PermuteChoice(problem, None, "copy")
    if isinstance(problem, TransposeProblem):
        ch = explain_transpose(problem.bmn, dtype_of_size(problem.elem), fingerprint=fingerprint,
                               cache_dir=cache_dir)
        return PermuteChoice(problem, ch.config, ch.source, ch)
    ch = strided_choice(problem, 16, epilogue, fingerprint, limits, ResultCache(cache_dir), cast)
    fixed = specialise.strided_candidate(ch.config, problem, 16) \
        if ch.source != "tuned" and specialise.enabled() else None
    why = "" if fixed is None else "; AUTOTRANS_SPECIALISE: compiled for this launch (sizes and strides constant) once built in the background"
    return PermuteChoice(problem, ch.config, ch.source, reason=ch.reason + why)


def tune_permutation(shape, dtype, axes, *, conj: bool = False, to=None, configs=None, cache_dir=None,
                     save: bool = True, progress: bool | None = None, reps: int = 5, top: int = 5):
    """Tune what permute() runs for a C-contiguous array of ``shape`` and
    ``dtype`` permuted by ``axes`` (with conj and the cast to ``to``), on the
    current GPU, into the cache: a dense transpose as tune() tunes it, a
    strided problem with tuning.strided.tune_problem. The TuneRecord, or None
    for a copy (nothing to tune)."""
    runner.check_counts(reps, top)
    problem, cast, epilogue = permutation_problem(shape, dtype, axes, conj=conj, to=to)
    nonempty(shape)                 # as tune() without axes: an empty shape is no job
    if isinstance(problem, CopyProblem):
        return None
    if isinstance(problem, TransposeProblem):
        return runner.tune(problem.bmn, _plain_dtype(dtype, problem.elem), configs=configs, cache_dir=cache_dir,
                           save=save, progress=progress, reps=reps, top=top)
    return tune_problem(problem, cache=ResultCache(cache_dir), save=save, progress=progress, reps=reps, top=top,
                        configs=configs, cast=cast, epilogue=epilogue)


def _plain_dtype(dtype, elem: int) -> np.dtype:
    """``dtype`` as NumPy's where it has ``elem``-byte elements, else the plain
    type of that size (a fused transpose moves wider elements)."""
    try:
        dt = np.dtype(_dtype_name(dtype))
    except TypeError:
        dt = None
    return dt if dt is not None and dt.itemsize == elem else dtype_of_size(elem)


def view_problem(shape, dtype, axes, cols: tuple) -> tuple:
    """permutation_problem() of the view x[..., start:stop] (``cols``) of a
    C-contiguous array of ``shape`` and ``dtype`` (no cast or conjugate)."""
    e = elem_size(dtype)
    start, stop = cols
    if not 0 <= start < stop <= shape[-1]:
        raise ValueError(f"columns {start}:{stop} are not a slice of the last axis of {shape}")
    view = tuple(shape[:-1]) + (stop - start,)
    axes = _axes(axes, len(view))
    problem = layout.canonical(view, layout.c_strides(shape, e), e, axes, 16)
    if isinstance(problem, (CopyProblem, TransposeProblem)):
        return problem, "none", "none"
    return as_strided(problem, 16), "none", "none"


def permutation_problem(shape, dtype, axes, *, conj: bool = False, to=None) -> tuple:
    """(the problem permute() runs for a C-contiguous array of ``shape`` and
    ``dtype`` permuted by ``axes`` at 16-byte aligned pointers, with conj
    and the cast to ``to``; its cast; its epilogue): a copy or dense transpose
    where neither applies and fusion finds one, else a strided problem
    (as_strided); the problem is None for an empty shape (nothing moves)."""
    name = _dtype_name(dtype)
    e = _itemsize(dtype, name)
    shape = tuple(shape)
    axes = _axes(axes, len(shape))
    epilogue = epilogue_of(conj, name, e)
    cast = "none" if to is None or _dtype_name(to) == name else config.cast_for(name, _dtype_name(to))
    out = config.CAST_SIZES[cast][1] if cast != "none" else None
    problem = layout.canonical(shape, layout.c_strides(shape, e), e, axes, 16, out_itemsize=out)
    if problem is None or (cast == "none" and epilogue == "none"
                           and isinstance(problem, (CopyProblem, TransposeProblem))):
        return problem, cast, epilogue
    return as_strided(problem, 16, cast), cast, epilogue


# -- inputs, streams, outputs ---------------------------------------------------------

def _describe(x, explicit) -> arrays.ArrayInfo:
    if type(x).__module__.startswith("pycuda") and driver.is_gpuarray(x):
        return arrays._pycuda(x)
    return arrays.describe(x, explicit or 0)


def epilogue_of(conj, dtype: str, itemsize: int) -> str:
    """The store epilogue of permute(conj=...) for this array: conj32 for
    complex64, conj64 for complex128, none for real types (conj changes nothing)."""
    if not isinstance(conj, (bool, np.bool_)):
        raise TypeError(f"conj must be True or False, not {conj!r:.40}")
    if not conj or not dtype.startswith("complex"):
        return "none"
    epi = {8: "conj32", 16: "conj64"}.get(itemsize)
    if epi is None:
        raise ValueError(f"permute(conj=True) takes complex64 and complex128, not {dtype}")
    return epi


def _target(dtype, info: arrays.ArrayInfo) -> tuple:
    """(the output's ArrayInfo: the input's with the result's dtype, the cast
    name) for permute(dtype=...); (info, "none") without a cast."""
    if dtype is None or _same_dtype(dtype, info):
        return info, "none"
    name = _dtype_name(dtype)
    cast = config.cast_for(info.dtype, name)
    size = config.CAST_SIZES[cast][1] if cast != "none" else info.itemsize
    return dataclasses.replace(info, dtype=name, itemsize=size, native=_native(info.kind, dtype, name)), cast


def _itemsize(dtype, name: str) -> int:
    """The element size of a dtype NumPy knows, or of a cast's dtype named
    without it ("bfloat16" where ml_dtypes is not imported)."""
    try:
        return elem_size(dtype)
    except TypeError:
        tag = config.DTYPE_TAGS.get(name)
        if tag is None:
            raise
        return layout.CAST_TYPES[tag]


def _dtype_name(dtype) -> str:
    """A dtype's NumPy-style name ("bfloat16"), whoever made it."""
    if isinstance(dtype, str):
        try:
            return np.dtype(dtype).name
        except TypeError:
            return dtype.strip().lower()
    if type(dtype).__module__.split(".")[0] == "torch":
        return str(dtype).split(".")[-1]
    try:
        return np.dtype(dtype).name
    except TypeError:
        raise TypeError(f"dtype must be a dtype or its name, not {dtype!r:.60}") from None


def _native(kind: str, dtype, name: str):
    """The output dtype object of the input's framework."""
    if kind == "torch":
        import torch
        if isinstance(dtype, torch.dtype):
            return dtype
        t = getattr(torch, name, None)
        if not isinstance(t, torch.dtype):
            raise TypeError(f"torch has no dtype {name}")
        return t
    try:
        return np.dtype(dtype if not isinstance(dtype, str) else name)
    except TypeError:
        if kind in ("cupy", "pycuda", "numba"):
            raise TypeError(f"{kind} arrays of dtype {name} need NumPy to know it (import ml_dtypes)") from None
        return None


def _same_dtype(dtype, info: arrays.ArrayInfo) -> bool:
    if dtype is info.native or dtype == info.dtype:
        return True
    try:
        return np.dtype(dtype) == info.native
    except TypeError:
        return False


def _axes(axes, rank: int) -> tuple[int, ...]:
    if isinstance(axes, (str, bytes)) or not hasattr(axes, "__len__"):
        raise ValueError(f"axes must be a sequence of {rank} axis numbers, got {axes!r:.60}")
    out = []
    for a in axes:
        if isinstance(a, (bool, np.bool_)):
            raise ValueError(f"axes must be integers, not {a!r}")
        try:
            a = operator.index(a)
        except TypeError:
            raise ValueError(f"axes must be integers, not {a!r:.40}") from None
        if not -rank <= a < rank:
            raise ValueError(f"axis {a} is out of range for a {rank}-d array")
        out.append(a % rank)
    return tuple(out)


def _stream(info: arrays.ArrayInfo, explicit, ordinal: int):
    """(the stream to run on, the producer stream to wait for or None), as transpose() picks them."""
    producer = info.stream
    h = explicit
    if h is None:
        h = arrays.current_stream(info.kind, ordinal)
        if h is None:
            h = producer or 0
    elif info.kind in ("torch", "cupy"):
        producer = arrays.current_stream(info.kind, ordinal)
    return h, producer


def _check_out(info: arrays.ArrayInfo, oinfo: arrays.ArrayInfo, strides, oshape, out, loc, stream: int) -> int:
    try:
        o = arrays.describe(out, stream)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"out: {exc}") from None
    same_type = o.dtype == oinfo.dtype or "void" in (o.dtype[:4], oinfo.dtype[:4])
    if tuple(o.shape) != oshape or o.itemsize != oinfo.itemsize or not same_type:
        raise ValueError(f"out must have shape {oshape} and dtype {oinfo.dtype}, got {tuple(o.shape)} {o.dtype}")
    if not arrays.c_contiguous(o.shape, o.strides, o.itemsize):
        raise ValueError("out must be C-contiguous")
    if o.readonly:
        raise ValueError("out is read-only")
    span = layout.extent(info.shape, strides, info.itemsize)
    if info.ptr < o.ptr + o.nbytes and o.ptr < info.ptr + span:
        raise ValueError("out overlaps the input; a permutation cannot be done in place here")
    oloc = launch._locate(o.ptr, "out")
    if oloc.ctx != loc.ctx:
        raise ValueError(f"out is on device {oloc.ordinal} (or another context), the input on device "
                         f"{loc.ordinal}; both must be on one device")
    if o.stream is not None:
        cu.wait(loc.ctx, stream, o.stream)
    return o.ptr


def _empty(info: arrays.ArrayInfo, oshape, out, stream: int):
    if out is not None:
        o = arrays.describe(out, stream)
        if tuple(o.shape) != oshape or o.itemsize != info.itemsize:
            raise ValueError(f"out must have shape {oshape} and dtype {info.dtype}, got {tuple(o.shape)} {o.dtype}")
        return out
    if info.kind == "pycuda":
        return memory.OutputMaker(oshape, info.native)()
    ordinal = info.device or 0
    made = arrays.new_output(info, oshape, cu.primary(ordinal), ordinal)
    return arrays.finish(made, info.kind, stream)


# -- repeat calls ------------------------------------------------------------------
# A call like one made before (same framework, layout, device, pointer
# alignment, axes, conj and dtype, an out= of the same layout or none; no
# stream=) takes the route the full path worked out: read the pointers, make
# the output where there is no out=, launch. Routes live in launch's bounded
# route memo, so forget() and a changed cache file clear them.

_route_kinds: dict = {}     # input type -> its framework ("torch", "cupy", "pycuda"), once a route exists


class _Route:
    __slots__ = ("oshape", "ostrides", "go", "ctx", "ordinal", "dlow", "span", "onbytes", "stream")

    def __init__(self, oshape, go, ctx, ordinal, dst, span, onbytes, stream):
        self.oshape, self.go, self.ctx, self.ordinal, self.dlow = oshape, go, ctx, ordinal, dst & 15
        self.ostrides = layout.c_strides(oshape)
        self.span, self.onbytes, self.stream = span, onbytes, stream


def _pointer(kind: str, x):
    """x's device pointer where a route may serve it, else None (the full path decides)."""
    if kind == "torch":
        try:
            return None if x.is_conj() or x.is_neg() else x.data_ptr()
        except RuntimeError:
            return None
    if kind == "cupy":
        return x.data.ptr
    g = x.gpudata
    return None if g is None else int(g)


def _here(kind: str, r: _Route, *ptrs) -> bool:
    """Whether the current device (CuPy) or the pointers' context (PyCUDA) is the route's."""
    if kind == "cupy":
        return launch._cupy_device() == r.ordinal
    if kind == "pycuda":
        return all(cu.context_of(p) == r.ctx for p in ptrs)
    return True


def _repeat(x, axes, out, conj, dtype):
    """permute(x, axes, out, conj=conj, dtype=dtype) by a remembered route, or None."""
    kind = _route_kinds[type(x)]
    if (out is not None and type(out) is not type(x)) or (conj is not False and conj is not True):
        return None
    axes = axes if type(axes) is tuple else tuple(axes) if type(axes) is list else None
    if axes is None or any(type(a) is not int for a in axes):
        return None                        # the full path checks and normalises them (a remembered key never holds bools)
    src = _pointer(kind, x)
    if src is None:
        return None
    try:
        key = (launch._KEYS[kind][0](x, src), axes, conj, dtype)
        if out is not None:
            dst = _pointer(kind, out)
            if dst is None:
                return None
            key = (key, launch._KEYS[kind][0](out, dst))
        r = launch._routes.get(key)
    except TypeError:                      # unhashable axes or dtype: the full path
        return None
    if r is None or not _here(kind, r, src):
        return None
    if out is None:
        out = x.new_empty_strided(r.oshape, r.ostrides) if kind == "torch" else (
            launch._cupy_ndarray(r.oshape, x.dtype) if kind == "cupy" else memory.OutputMaker(r.oshape, x.dtype)())
        dst = _pointer(kind, out)
        if dst & 15 != r.dlow:
            return None
    elif (src < dst + r.onbytes and dst < src + r.span) or not _here(kind, r, dst):
        return None                        # overlapping, or out elsewhere: the full path says why
    r.go(src, dst, r.stream(r.ordinal) if r.stream is not None else 0)
    return out


def _remember(x, kind: str, out, how: tuple, oshape, go, ctx: int, ordinal: int, src: int, dst: int,
              span: int, onbytes: int, gen: int) -> None:
    """Remember how this call ran (how: its axes, conj and dtype), for repeat
    calls like it: of torch, CuPy and PyCUDA arrays, with an out= of the same
    kind or none (then without a cast); not where a build since generation
    ``gen`` made its choice stale (launch._keep)."""
    if not launch.routable(x, kind, out):
        return
    axes, conj, dtype = how
    stream = launch.route_stream(kind)
    key_of = launch._KEYS[kind][0]
    try:
        key = (key_of(x, src), axes, conj, dtype)
        if out is not None:
            key = (key, key_of(out, dst))
        hash(key)
    except (AttributeError, RuntimeError, TypeError):
        return
    launch._keep(launch._routes, key, _Route(oshape, go, ctx, ordinal, dst, span, onbytes, stream), gen)
    _route_kinds[type(x)] = kind
