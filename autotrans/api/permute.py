"""permute(): N-d permutations of GPU arrays of any kind, strided views included.

Each call is reduced to a canonical problem (core.layout.canonical: size-1
axes dropped, adjacent contiguous axes merged) and run by what fits it: a
device-to-device copy, transpose()'s tuned kernels (a dense batched
transpose after fusion, with wider elements where whole inner rows fit one),
or a strided kernel: a shared-memory tile family for strided transposes, the
rows family where the inner axis stays put.
"""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from ..backend import arrays
from ..backend import cuda as driver
from ..backend import driver as cu
from ..backend import memory
from ..core import layout
from ..core.layout import CopyProblem, RowsProblem, TileProblem, TransposeProblem
from ..core.problem import dtype_of_size
from ..kernels import strided
from . import launch

STRIDED_LIMIT = 4096       # (context, problem, alignment) strided launchers remembered
_strided = launch.LRU(STRIDED_LIMIT)
_FAMILY_RANK = {"rows": 2, "vec": 1, "tile": 0}


def permute(x, axes, out=None, stream=None, *, conj: bool = False, dtype=None):
    """Reorder the axes of a GPU array: the result's axis k is x's axis
    ``axes[k]`` (as numpy.transpose(x, axes)), C-contiguous.

    x: any array transpose() takes, of rank 1 to 8, and it may be a view with
    any positive strides (a slice, every other row, a transposed view). axes:
    a permutation of range(x.ndim) (negative axes count from the end). out,
    stream: as for transpose(). conj and dtype (fused conjugate and casts)
    are not built yet: conj=True and a dtype other than x's raise
    NotImplementedError.
    """
    if conj:
        raise NotImplementedError("permute(conj=True) is not built yet; conjugate the result with your framework")
    explicit = None if stream is None else arrays.stream_handle(stream)
    info = _describe(x, explicit)
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
    run(problem, info.ptr, dst, ctx, ordinal, h)
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


def run(problem, src: int, dst: int, ctx: int, ordinal: int, stream: int) -> None:
    """Enqueue a canonical problem on stream (pointers in context ctx)."""
    if isinstance(problem, CopyProblem):
        cu.copy(ctx, dst, src, problem.nbytes, stream)
        return
    low = (src | dst) & 15
    align = 16 if low == 0 else low & -low
    if isinstance(problem, TransposeProblem):
        e = problem.elem
        launch._launcher(problem.bmn, e, align, ctx, ordinal, None, dtype_of_size(e))(src, dst, stream)
        return
    key = (ctx, problem, align)
    go = _strided.get(key)
    if go is None:
        dev = driver.device_info(ordinal)
        cfg = strided_config(problem, align, dev.limits)
        kernel = launch._kernel(cfg, ctx, dev.arch)
        go = kernel.strided_launcher(strided.strided_shape(problem), strided.strided_args(problem, 0, 0)[2:])
        _strided.put(key, go)
    go(src, dst, stream)


def strided_config(problem: TileProblem | RowsProblem, align: int, limits):
    """The strided config a problem gets (untuned): among the strided space's
    configs that can run it here, the rows family for rows, else vector tiles
    before scalar ones; the widest accesses; then the tile whose row is
    nearest the problem's row without exceeding it."""
    fits = [c for c in strided.strided_space(problem.elem)
            if not strided.strided_problems(c, problem, align) and not limits.problems(c.threads, c.smem_bytes)]
    if not fits:
        raise ValueError(f"no strided kernel can run {problem} with {align}-byte aligned pointers")
    row = problem.n * problem.elem

    def score(c):
        tile_row = c.tile_cols * c.elem_bytes          # a tile row no longer than a row leaves no lane idle
        fit = -math.log2(row / tile_row) if tile_row <= row else -2 * math.log2(tile_row / row)
        return (_FAMILY_RANK.get(c.variant, -1), c.vec_bytes, fit, c.threads, c.key)

    return max(fits, key=score)


# -- inputs, streams, outputs ---------------------------------------------------------

def _describe(x, explicit) -> arrays.ArrayInfo:
    if type(x).__module__.startswith("pycuda") and driver.is_gpuarray(x):
        return arrays._pycuda(x)
    return arrays.describe(x, explicit or 0)


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
