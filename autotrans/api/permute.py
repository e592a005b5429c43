"""permute(): N-d permutations of GPU arrays of any kind, strided views included.

Each call is reduced to a canonical problem (core.layout.canonical: size-1
axes dropped, adjacent contiguous axes merged) and run by what fits it: a
device-to-device copy, transpose()'s tuned kernels (a dense batched
transpose after fusion, with wider elements where whole inner rows fit one),
or a strided kernel: a shared-memory tile family for strided transposes, the
rows family where the inner axis stays put. A strided problem runs the config
tuned for it (tuning.strided.best_strided: exact match in the cache) or else
the untuned rule (strided_config). conj=True runs every problem through a
strided kernel whose store conjugates (KernelConfig.epilogue): a copy as rows
(kernels.strided.as_rows), a dense transpose as a tile problem (as_tile).
"""
from __future__ import annotations

import functools
import math
import operator
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
from ..core.problem import dtype_of_size, elem_size, format_shape
from ..kernels import strided
from ..kernels.config import KernelConfig
from ..tuning.strided import best_strided, default_strided
from ..results.store import ResultCache
from . import launch
from .select import explain as explain_transpose
from .index import _default_cache

_strided = launch._strided     # (context, problem, alignment, epilogue) -> launcher; forget() clears it


def permute(x, axes, out=None, stream=None, *, conj: bool = False, dtype=None):
    """Reorder the axes of a GPU array: the result's axis k is x's axis
    ``axes[k]`` (as numpy.transpose(x, axes)), C-contiguous.

    x: any array transpose() takes, of rank 1 to 8, and it may be a view with
    any positive strides (a slice, every other row, a transposed view). axes:
    a permutation of range(x.ndim) (negative axes count from the end). out,
    stream: as for transpose(). conj=True: the complex conjugate in the
    same pass (numpy.conj(numpy.transpose(x, axes)), bit for bit: the sign
    bit of every imaginary part flipped); for real dtypes it changes nothing.
    dtype (fused casts) is not built yet: a dtype other than x's raises
    NotImplementedError.
    """
    if time.monotonic() >= launch._recheck[0]:
        launch._check_cache()              # another process tuned: choose again
    explicit = None if stream is None else arrays.stream_handle(stream)
    info = _describe(x, explicit)
    epilogue = _epilogue(conj, info.dtype, info.itemsize)
    if dtype is not None and not _same_dtype(dtype, info):
        raise NotImplementedError("permute(dtype=...) casts are not built yet; cast with your framework")
    axes = _axes(axes, len(info.shape))
    strides = info.strides if info.strides is not None else _c_strides(info.shape, info.itemsize)
    oshape = tuple(info.shape[a] for a in axes)
    if math.prod(info.shape) == 0:
        layout.canonical(info.shape, strides, info.itemsize, axes)       # validates all the same
        return _empty(info, oshape, out, explicit or 0)
    loc = launch._locate(info.ptr, "the input")
    ctx, ordinal = loc.ctx, loc.ordinal
    h, producer = _stream(info, explicit, ordinal)
    if producer is not None:
        cu.wait(ctx, h, producer)
    made = None
    if out is not None:
        dst = _check_out(info, strides, oshape, out, loc, h)
        result = out
    elif info.kind == "pycuda":
        result = memory.OutputMaker(oshape, info.native)()
        dst = int(result.gpudata)
    else:
        made = arrays.new_output(info, oshape, ctx, ordinal)
        dst = made.ptr
    problem = _canonical(tuple(info.shape), tuple(strides), info.itemsize, axes, layout.alignment(info.ptr, dst))
    run(problem, info.ptr, dst, ctx, ordinal, h, epilogue)
    if made is not None:
        if explicit is not None:
            arrays.record_stream(made.value, info.kind, stream, h, ordinal)
        if info.keep is not None and isinstance(made.value, arrays.DeviceArray):
            made.value.keep = info.keep
        result = arrays.finish(made, info.kind, h)
    return result


@functools.lru_cache(maxsize=4096)
def _canonical(shape: tuple, strides: tuple, itemsize: int, axes: tuple, align: int):
    """canonical(), remembered per layout (a repeat call costs a lookup)."""
    return layout.canonical(shape, strides, itemsize, axes, align)


def run(problem, src: int, dst: int, ctx: int, ordinal: int, stream: int, epilogue: str = "none") -> None:
    """Enqueue a canonical problem on stream (pointers in context ctx), its
    output after the store epilogue (KernelConfig.epilogue)."""
    if epilogue == "none":
        if isinstance(problem, CopyProblem):
            cu.copy(ctx, dst, src, problem.nbytes, stream)
            return
        if isinstance(problem, TransposeProblem):
            e = problem.elem
            align = launch.pointer_align(src, dst)
            launch._launcher(problem.bmn, e, align, ctx, ordinal, None, dtype_of_size(e))(src, dst, stream)
            return
    align = launch.pointer_align(src, dst)
    key = (ctx, problem, align, epilogue)
    go = _strided.get(key)
    if go is None:
        go = _strided_launcher(problem, align, epilogue, ctx, ordinal)
        _strided.put(key, go)
    go(src, dst, stream)


def _strided_launcher(problem, align: int, epilogue: str, ctx: int, ordinal: int):
    """go(src, dst, stream) for a problem (as a strided one), loaded in ctx."""
    problem = as_strided(problem, align)
    dev = driver.device_info(ordinal)
    cfg, _ = strided_choice(problem, align, epilogue, dev.id.text, dev.limits)
    kernel = launch._kernel(cfg, ctx, dev.arch)
    return kernel.strided_launcher(strided.strided_shape(problem), strided.strided_args(problem, 0, 0)[2:])


def as_strided(problem, align: int):
    """The problem as a strided kernel runs it: a copy as rows (of elements
    the alignment allows), a dense transpose as a tile problem."""
    if isinstance(problem, CopyProblem):
        return strided.as_rows(problem, align)
    if isinstance(problem, TransposeProblem):
        return strided.as_tile(problem)
    return problem


def strided_choice(problem: TileProblem | RowsProblem, align: int, epilogue: str, fingerprint: str, limits,
                   cache=None) -> tuple:
    """(config, source) a strided problem runs on the device ``fingerprint``
    of these limits: without an epilogue, the one tuned for exactly this
    problem in ``cache`` (default: the user cache) where it runs at this
    alignment ("tuned"); else the untuned rule's (strided_config, "untuned")."""
    if epilogue == "none":
        cfg = best_strided(problem, fingerprint, cache if cache is not None else _default_cache(), align=align)
        if cfg is not None and not limits.problems(cfg.threads, cfg.smem_bytes):
            return cfg, "tuned"
    return strided_config(problem, align, limits, epilogue), "untuned"


@dataclass(frozen=True)
class PermuteChoice:
    """What permute() runs for a permutation, and why: its canonical problem,
    and a copy (config None), transpose()'s choice (``transpose``: a
    select.Choice) or a strided config (source "tuned" or "untuned")."""
    problem: object
    config: KernelConfig | None
    source: str
    transpose: object = None

    def __str__(self) -> str:
        if self.config is None:
            return "a device-to-device copy"
        if self.transpose is not None:
            return f"transpose() of {format_shape(self.problem.bmn)}: {self.transpose}"
        why = "tuned for this problem" if self.source == "tuned" else "untuned rule (tune it with --axes)"
        return f"{self.config.key}  [{self.source}] {why}"


def explain_permute(shape, axes, dtype=np.float32, *, conj: bool = False, fingerprint: str | None = None,
                    cache_dir=None) -> PermuteChoice:
    """What permute() would run for a C-contiguous array of ``shape`` and
    ``dtype`` permuted by ``axes`` (16-byte aligned pointers, as allocators
    give). Without a GPU, pass the ``fingerprint`` of the device to ask about
    (limits: every GPU's minimum)."""
    e = elem_size(dtype)
    limits = Limits()
    if fingerprint is None:
        dev = driver.device()
        fingerprint, limits = dev.id.text, dev.limits
    shape = tuple(shape)
    axes = _axes(axes, len(shape))
    problem = layout.canonical(shape, _c_strides(shape, e), e, axes, 16)
    epilogue = _epilogue(conj, np.dtype(dtype).name, e)
    if epilogue == "none" and isinstance(problem, CopyProblem):
        return PermuteChoice(problem, None, "copy")
    if epilogue == "none" and isinstance(problem, TransposeProblem):
        ch = explain_transpose(problem.bmn, dtype_of_size(problem.elem), fingerprint=fingerprint,
                               cache_dir=cache_dir)
        return PermuteChoice(problem, ch.config, ch.source, ch)
    sp = as_strided(problem, 16)
    cfg, source = strided_choice(sp, 16, epilogue, fingerprint, limits, ResultCache(cache_dir))
    return PermuteChoice(sp, cfg, source)


def strided_config(problem: TileProblem | RowsProblem, align: int, limits, epilogue: str = "none"):
    """The strided config a problem gets untuned (tuning.strided.default_strided's
    rule); ValueError when no strided config can run it here."""
    cfg = default_strided(problem, align, limits, epilogue)
    if cfg is None:
        raise ValueError(f"no strided kernel can run {problem} with {align}-byte aligned pointers"
                         + (f" and the epilogue {epilogue}" if epilogue != "none" else ""))
    return cfg


# -- inputs, streams, outputs ---------------------------------------------------------

def _describe(x, explicit) -> arrays.ArrayInfo:
    if type(x).__module__.startswith("pycuda") and driver.is_gpuarray(x):
        return arrays._pycuda(x)
    return arrays.describe(x, explicit or 0)


def _epilogue(conj, dtype: str, itemsize: int) -> str:
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


def _c_strides(shape, itemsize: int) -> tuple[int, ...]:
    out, s = [], itemsize
    for d in reversed(shape):
        out.append(s)
        s *= max(d, 1)
    return tuple(reversed(out))


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


def _check_out(info: arrays.ArrayInfo, strides, oshape, out, loc, stream: int) -> int:
    try:
        o = arrays.describe(out, stream)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"out: {exc}") from None
    same_type = o.dtype == info.dtype or "void" in (o.dtype[:4], info.dtype[:4])
    if tuple(o.shape) != oshape or o.itemsize != info.itemsize or not same_type:
        raise ValueError(f"out must have shape {oshape} and dtype {info.dtype}, got {tuple(o.shape)} {o.dtype}")
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
