"""N-d permutations reduced to canonical problems, before anything is chosen.

A permutation of a strided N-d input into a C-contiguous output is fused
(size-1 axes dropped, axes that stay adjacent and contiguous merged) and then
classified as one of the problems below. All strides and pitches are in
bytes, all sizes in elements of ``elem`` bytes.

A permutation may cast too (``canonical(..., out_itemsize=)``): the problems
then carry the output's element size, ``out_elem`` (None, the default, is
``elem``: problems without a cast compare, hash and key as before), output
strides count output bytes, and elements are never widened (a cast converts
each element).
CASTS names the casts (the kernels' own conversions, kernels.config.CASTS);
``cast_reference`` is each one's NumPy reference.

``canonical`` does the reduction, ``extent`` measures a view for overlap
checks, and ``apply`` is the NumPy reference of what a kernel does with a
problem (on bytes), which the tests hold ``canonical`` to.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Callable, Optional, Union

import numpy as np

from autotrans.core.problem import ELEM_SIZES, MAX_DIM, _dim

MAX_RANK = 8           # axes permute() takes
MAX_BATCH = 7          # batch (or row) dimensions a strided kernel decomposes


@dataclass(frozen=True)
class Dim:
    """One fused dimension: its size and its input and output strides (bytes)."""
    size: int
    src: int
    dst: int


def _same_out(problem) -> None:
    """A problem's out_elem left at None: the input's element size."""
    if problem.out_elem is None:
        object.__setattr__(problem, "out_elem", problem.elem)


@dataclass(frozen=True)
class CopyProblem:
    """The permutation is the identity on a dense input: ``nbytes`` to copy
    (input bytes). A plain copy moves bytes (elem 1); a cast's converts
    nbytes / elem elements of ``elem`` bytes to ``out_elem``-byte ones."""
    nbytes: int
    elem: int = 1
    out_elem: Optional[int] = None

    def __post_init__(self):
        _same_out(self)


@dataclass(frozen=True)
class TransposeProblem:
    """A dense batched 2-D transpose (B, M, N) -> (B, N, M) of ``elem``-byte
    elements: what transpose() and the tuned families solve (with a cast, to
    ``out_elem``-byte elements: through the strided tile kernels)."""
    elem: int
    bmn: tuple[int, int, int]
    out_elem: Optional[int] = None

    def __post_init__(self):
        _same_out(self)


@dataclass(frozen=True)
class TileProblem:
    """A strided batched 2-D transpose moved through shared-memory tiles.

    Input element (batch index, i, j) is at src + sum(batch offsets) + i*ldi +
    j*sci; it goes to dst + sum(batch offsets) + j*ldo + i*out_elem. ``m`` is
    the output's last (contiguous) axis, ``n`` the input's fastest axis.
    ``batch``: the other axes, outermost first, at most MAX_BATCH. ldo and the
    batch dsts count output bytes (``out_elem``: the input's elem unless the
    permutation casts).

    ``n`` is the fastest input axis other than m's: where the output's inner
    axis is strided on the input too (``x[::2, ::2]``), ldi < sci. A strided
    1-d gather (``x[::2]``) is m x 1: n = 1, sci = elem, ldo = m * out_elem."""
    elem: int
    m: int
    n: int
    ldi: int
    ldo: int
    sci: int
    batch: tuple[Dim, ...]
    out_elem: Optional[int] = None

    def __post_init__(self):
        _same_out(self)


@dataclass(frozen=True)
class RowsProblem:
    """Rows of ``n`` contiguous ``elem``-byte elements (the inner axis stays
    put, on both sides) gathered from strided places: row r, decomposed over
    ``rows`` (outermost first, at most MAX_BATCH), starts at src + sum(index *
    Dim.src) and goes to dst + sum(index * Dim.dst). With a cast the row
    holds n ``out_elem``-byte elements on the output (Dim.dst: output bytes)."""
    elem: int
    n: int
    rows: tuple[Dim, ...]
    out_elem: Optional[int] = None

    def __post_init__(self):
        _same_out(self)


def row_access(problem: RowsProblem, widest: int = 16) -> int:
    """The widest power-of-two access (bytes, at most widest) that a
    RowsProblem's row bytes and every row stride are multiples of: what its
    rows can move in (the rows and flat families' choice of kernel)."""
    def fits(v):
        return (problem.n * problem.elem) % v == 0 and all(d.src % v == 0 and d.dst % v == 0 for d in problem.rows)
    v = 1
    while v < widest and fits(2 * v):
        v *= 2
    return v


# Any of the four (typing.Union: the package still runs on Python 3.9).
Canonical = Union[CopyProblem, TransposeProblem, TileProblem, RowsProblem]


# -- validation --------------------------------------------------------------------

def _int(value, what: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{what} must be an integer, not {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{what} must be an integer, not {value!r}") from None


def _shape(shape) -> tuple[int, ...]:
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__len__"):
        raise ValueError(f"shape must be a sequence of 1 to {MAX_RANK} dimensions, got {shape!r}")
    t = tuple(_dim(s, shape) for s in shape)
    if not 1 <= len(t) <= MAX_RANK:
        raise ValueError(f"shape {t!r} has rank {len(t)}; permute takes 1 to {MAX_RANK} axes")
    return t


def _itemsize(itemsize) -> int:
    e = _int(itemsize, "itemsize")
    if e not in ELEM_SIZES:
        raise ValueError(f"itemsize {e} is not one of {ELEM_SIZES}")
    return e


def _strides(strides, shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """Integers, one per axis."""
    if isinstance(strides, (str, bytes)) or not hasattr(strides, "__len__") or len(strides) != len(shape):
        raise ValueError(f"strides {strides!r} must be {len(shape)} integers, one per axis of {shape!r}")
    return tuple(_int(s, f"stride of axis {k}") for k, s in enumerate(strides))


def _check_strides(strides: tuple[int, ...], shape: tuple[int, ...], itemsize: int) -> None:
    """Positive multiples of itemsize where the axis is longer than 1."""
    t = strides
    for k, (n, s) in enumerate(zip(shape, t)):
        if n > 1 and s <= 0:
            raise ValueError(f"strides {t!r}: axis {k} has stride {s}; "
                             "axes longer than 1 need positive strides")
        if n > 1 and s % itemsize:
            raise ValueError(f"strides {t!r}: axis {k} has stride {s}, "
                             f"not a multiple of the itemsize {itemsize}")
        if n > 1 and s > MAX_DIM:
            raise ValueError(f"strides {t!r}: axis {k} has stride {s}, over the limit of 2**62")


def _axes(axes, rank: int) -> tuple[int, ...]:
    try:
        t = tuple(axes)
        ok = (all(not isinstance(a, (bool, np.bool_)) for a in t)
              and sorted(operator.index(a) for a in t) == list(range(rank)))
    except TypeError:
        t, ok = axes, False
    if not ok:
        raise ValueError(f"axes {t!r} are not a permutation of 0..{rank - 1}")
    return tuple(operator.index(a) for a in t)


def _align(align) -> int:
    a = _int(align, "align")
    if a not in ELEM_SIZES:
        raise ValueError(f"align {a} is not one of {ELEM_SIZES} (the largest power of two "
                         "up to 16 dividing both base pointers)")
    return a


def alignment(*pointers: int) -> int:
    """The largest power of two up to 16 dividing every pointer (the
    ``align`` canonical() takes)."""
    a = 16
    for p in pointers:
        while p % a:
            a //= 2
    return a


# -- the reduction ---------------------------------------------------------------------

def canonical(shape, strides, itemsize, axes, align=16, out_itemsize=None) -> Canonical | None:
    """The canonical problem of ``out = ascontiguousarray(transpose(x, axes))``
    for a view ``x`` of ``shape`` and byte ``strides``; None when empty.

    Output order dims (output strides C-contiguous), size-1 dims dropped,
    neighbours merged where the input keeps them adjacent; then: a dense copy;
    contiguous inner rows (promoted to one wider element when the row is 2,
    4, 8 or 16 bytes, ``align`` allows it and every other input stride is a
    multiple of it; else a RowsProblem moving the widest words that divide
    the row, ``align`` and every row stride); or a 2-D tile transpose (a
    TransposeProblem when it is dense). ValueError for bad input; an empty
    job is None whatever its strides (it moves nothing).

    out_itemsize: the output's element size where the permutation casts
    (None: it does not). The problem is then fused the same way, its output
    strides count output bytes and its elements stay x's (never widened:
    rows of ``itemsize``-byte elements, tiles of them, a copy of elements),
    whatever ``align``; out_itemsize == itemsize is a cast too (float16 to
    bfloat16)."""
    shape = _shape(shape)
    itemsize = _itemsize(itemsize)
    strides = _strides(strides, shape, itemsize)
    axes = _axes(axes, len(shape))
    align = _align(align)
    out = None if out_itemsize is None else _itemsize(out_itemsize)
    if 0 in shape:
        return None
    _check_strides(strides, shape, itemsize)
    if math.prod(shape) * max(itemsize, out or 1) > MAX_DIM or extent(shape, strides, itemsize) > MAX_DIM:
        raise ValueError(f"shape {shape!r} with strides {strides!r} spans over 2**62 bytes")
    dims, dst = [], out or itemsize
    for a in reversed(axes):
        dims.append(Dim(shape[a], strides[a], dst))
        dst *= shape[a]
    dims = [d for d in reversed(dims) if d.size > 1]
    return _classify(dims, itemsize, align, out)


def _merge(dims: list[Dim]) -> list[Dim]:
    """Fuse output neighbours that are adjacent on the input too (the output
    is C-contiguous, so its side always fuses)."""
    out: list[Dim] = []
    for d in dims:
        if out and out[-1].src == d.src * d.size:
            out[-1] = Dim(out[-1].size * d.size, d.src, d.dst)
        else:
            out.append(d)
    return out


def _classify(dims: list[Dim], elem: int, align: int, out: int | None = None) -> Canonical:
    """out: the output's element size where the permutation casts (None: no cast)."""
    dims = _merge(dims)
    eo = out or elem
    # At most MAX_RANK (8) dims survive: a RowsProblem keeps 7 as rows, a
    # TileProblem 6 as batch (m and n are two more), both <= MAX_BATCH.
    assert len(dims) <= MAX_RANK and MAX_RANK - 1 <= MAX_BATCH
    if not dims:
        return CopyProblem(elem) if out is None else CopyProblem(elem, elem, eo)
    last = dims[-1]
    if last.src != elem:
        return _tile(dims, elem, eo)
    if len(dims) == 1:
        return CopyProblem(last.size * elem) if out is None else CopyProblem(last.size * elem, elem, eo)
    chunk = last.size * elem
    rows = dims[:-1]
    if out is not None:   # a cast converts elements: no wider words
        return RowsProblem(elem, last.size, tuple(rows), eo)
    if chunk in ELEM_SIZES and chunk <= align and all(d.src % chunk == 0 for d in rows):
        # Promoted to chunk-byte elements. Merging again would change nothing
        # (the srcs are the same), and the new last dim's src is not chunk
        # (it would have merged with the old last dim): a tile, always.
        return _tile(rows, chunk, chunk)
    g = math.gcd(chunk, align, *(d.src for d in rows), *(d.dst for d in rows))
    wide = max(e for e in ELEM_SIZES if g % e == 0)
    return RowsProblem(wide, chunk // wide, tuple(rows))


def _tile(dims: list[Dim], elem: int, eo: int) -> TileProblem | TransposeProblem:
    """m: the output's inner axis; n: the input's fastest other axis (the
    later on a tie; n = 1 with sci = elem when there is none, a strided
    1-d gather); batch: the rest. eo: the output's element size."""
    m, others = dims[-1], dims[:-1]
    if not others:
        return TileProblem(elem, m.size, 1, m.src, m.size * eo, elem, (), eo)
    k = min(range(len(others)), key=lambda i: (others[i].src, -i))
    n = others[k]
    batch = tuple(others[:k] + others[k + 1:])
    tile = TileProblem(elem, m.size, n.size, m.src, n.dst, n.src, batch, eo)
    return _dense(tile) or tile


def _dense(t: TileProblem) -> TransposeProblem | None:
    """The tile problem as a dense batched transpose, if it is one."""
    mn, mno = t.m * t.n * t.elem, t.m * t.n * t.out_elem
    if (t.sci, t.ldi, t.ldo) != (t.elem, t.n * t.elem, t.m * t.out_elem):
        return None
    fused: list[Dim] = []
    for d in t.batch:
        if fused and fused[-1].src == d.src * d.size and fused[-1].dst == d.dst * d.size:
            fused[-1] = Dim(fused[-1].size * d.size, d.src, d.dst)
        else:
            fused.append(d)
    if len(fused) > 1 or any(d.src != mn or d.dst != mno for d in fused):
        return None
    return TransposeProblem(t.elem, (fused[0].size if fused else 1, t.m, t.n), t.out_elem)


def as_words(shape, strides, itemsize: int, axes, word: int) -> tuple:
    """(shape, strides, itemsize, axes) of the same permutation with each
    element moved as itemsize / word words: a last axis of them that stays
    in place (word: a power of two dividing itemsize)."""
    if word <= 0 or itemsize % word or word & (word - 1):
        raise ValueError(f"cannot move {itemsize}-byte elements as {word}-byte words")
    n = len(tuple(shape))
    return (tuple(shape) + (itemsize // word,), tuple(strides) + (word,), word,
            tuple(a % n if n else a for a in axes) + (n,))


def c_strides(shape, itemsize: int = 1) -> tuple[int, ...]:
    """Strides of a C-contiguous array of ``shape``: in bytes of ``itemsize``
    elements (1: in elements); a size-0 axis counts as 1."""
    out, s = [], itemsize
    for d in reversed(shape):
        out.append(s)
        s *= max(d, 1)
    return tuple(reversed(out))


def extent(shape, strides, itemsize) -> int:
    """Bytes from the first to one past the last byte a view touches (0 when
    empty); a size-1 axis's stride is ignored. With positive strides the
    first byte is the view's base pointer."""
    shape = tuple(_dim(s, shape) for s in shape)
    strides = _strides(strides, shape, itemsize)
    if 0 in shape:
        return 0
    return _itemsize(itemsize) + sum(abs(s) * (n - 1) for n, s in zip(shape, strides) if n > 1)


# -- casts -------------------------------------------------------------------------
#
# A cast's name is "SRC>DST" of these type tags (bytes each). Floats: every
# ordered pair of f16, bf16, f32, f64. Integers: a narrowing keeps the low
# bytes whatever the signedness, "i{a}>i{b}" (a > b bits); a widening
# sign-extends ("i{a}>i{b}", a < b) or zero-extends ("u{a}>u{b}") as the
# input's signedness says (NumPy's astype; the output's signedness changes no
# bit). Same-width integer casts move bits unchanged: no cast.

CAST_TYPES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
              "u8": 1, "u16": 2, "u32": 4, "u64": 8}
_FLOATS = ("f64", "f32", "f16", "bf16")
_INTS = ("i8", "i16", "i32", "i64")


def _cast_names() -> tuple[str, ...]:
    floats = [f"{a}>{b}" for a in _FLOATS for b in _FLOATS if a != b]
    narrow = [f"{a}>{b}" for a in reversed(_INTS) for b in reversed(_INTS) if CAST_TYPES[b] < CAST_TYPES[a]]
    wide = [f"{s}{a[1:]}>{s}{b[1:]}" for s in "iu" for a in _INTS for b in _INTS if CAST_TYPES[b] > CAST_TYPES[a]]
    return tuple(floats + narrow + wide)


# Every cast: name -> (input element bytes, output element bytes).
CASTS = {c: (CAST_TYPES[c.split(">")[0]], CAST_TYPES[c.split(">")[1]]) for c in _cast_names()}

_NUMPY_FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def _words(nbytes: int):
    return np.dtype(f"<u{nbytes}")


def _f32_to_bf16(f: np.ndarray) -> np.ndarray:
    """float32 bits (uint32) to bfloat16 bits as ml_dtypes (Eigen's
    float_to_bfloat16_rtne) rounds them: to nearest even, NaN -> 0x7FC0 | sign."""
    u = f.astype(np.uint64)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    rne = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return np.where(nan, ((u >> 16) & 0x8000) | 0x7FC0, rne).astype(np.uint16)


def _float_cast(src: str, dst: str, w: np.ndarray) -> np.ndarray:
    """NumPy's astype between float16/32/64 (float16: numpy's own
    npy_floatbits_to_halfbits / npy_doublebits_to_halfbits, float64 -> float16
    direct); to and from bfloat16 as ml_dtypes casts (through float32:
    static_cast<bfloat16>(static_cast<float>(x)) and back, Eigen's scalar
    code as x86-64 wheels build it, whose float -> half gives NaN 0x7E00 | sign)."""
    with np.errstate(all="ignore"):
        if src != "bf16" and dst != "bf16":
            return w.view(_NUMPY_FLOATS[src]).astype(_NUMPY_FLOATS[dst]).view(_words(CAST_TYPES[dst]))
        if dst == "bf16":
            return _f32_to_bf16(w.view(_NUMPY_FLOATS[src]).astype(np.float32).view(np.uint32))
        f = (w.astype(np.uint32) << 16).view(np.float32)
        if dst == "f32":
            return f.view(np.uint32)
        if dst == "f64":
            return f.astype(np.float64).view(np.uint64)
        h = f.astype(np.float16).view(np.uint16)
        return np.where(np.isnan(f), (w & 0x8000) | 0x7E00, h).astype(np.uint16)


def _int_cast(src: str, dst: str, w: np.ndarray) -> np.ndarray:
    si, so = CAST_TYPES[src], CAST_TYPES[dst]
    if so > si and src[0] == "i":
        return w.view(f"<i{si}").astype(f"<i{so}").view(_words(so))
    return w.astype(_words(so))   # zero-extends, or keeps the low bytes


def cast_reference(cast: str) -> Callable[[np.ndarray], np.ndarray]:
    """The NumPy reference of a cast: a function from an array of input
    elements' bits (unsigned words of the input's size) to the output
    elements' bits (words of the output's size), element-wise."""
    if cast not in CASTS:
        raise ValueError(f"unknown cast {cast!r:.40}; casts are 'SRC>DST' of {tuple(CAST_TYPES)} (layout.CASTS)")
    src, dst = cast.split(">")
    fn = _float_cast if src[0] in "fb" else _int_cast
    return lambda w: fn(src, dst, np.asarray(w).astype(_words(CAST_TYPES[src]), copy=False))


# -- the reference -----------------------------------------------------------------

def permutation_of(problem) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(shape, axes) of a permutation whose canonical problem this strided one
    is (numpy.transpose(x, axes) of an x of that shape): its dims outermost
    first by input stride, and their order on the output. The shape is the
    fused one: size-1 axes dropped, merged axes one."""
    e, eo = problem.elem, problem.out_elem
    if isinstance(problem, NdTileProblem):
        dims = list(problem.dims())
    elif isinstance(problem, TileProblem):
        dims = [Dim(problem.m, problem.ldi, eo), Dim(problem.n, problem.sci, problem.ldo)] + list(problem.batch)
    elif isinstance(problem, RowsProblem):
        dims = list(problem.rows) + ([Dim(problem.n, e, eo)] if problem.n > 1 else [])
    else:
        raise TypeError(f"not a strided problem: {problem!r:.80}")
    order = sorted(range(len(dims)), key=lambda i: -dims[i].src)
    where = {i: k for k, i in enumerate(order)}
    return (tuple(dims[i].size for i in order),
            tuple(where[i] for i in sorted(range(len(dims)), key=lambda i: -dims[i].dst)))


def moved_bytes(problem: Canonical) -> int:
    """Bytes the problem writes (the output's size)."""
    if isinstance(problem, NdTileProblem):   # fused tiles (the block at the end)
        return math.prod(d.size for d in problem.dims()) * problem.out_elem
    if isinstance(problem, CopyProblem):
        return problem.nbytes // problem.elem * problem.out_elem
    if isinstance(problem, TransposeProblem):
        return math.prod(problem.bmn) * problem.out_elem
    extra = problem.batch if isinstance(problem, TileProblem) else problem.rows
    inner = problem.m * problem.n if isinstance(problem, TileProblem) else problem.n
    return math.prod(d.size for d in extra) * inner * problem.out_elem


def _views(problem: Canonical) -> tuple[tuple, tuple, tuple, tuple]:
    """(shape, src strides, dst shape, dst strides) of byte views whose
    element-wise assignment dst[...] = src (src axes reordered to dst's) is
    the problem; the last axis is the bytes of one element (of the input on
    the source side, of the output on the destination side)."""
    e, eo = problem.elem, problem.out_elem
    if isinstance(problem, CopyProblem):
        if e == eo == 1:
            return (problem.nbytes,), (1,), (problem.nbytes,), (1,)
        n = problem.nbytes // e
        return (n, e), (e, 1), (n, eo), (eo, 1)
    if isinstance(problem, TransposeProblem):
        b, m, n = problem.bmn
        return (b, m, n, e), (m * n * e, n * e, e, 1), (b, n, m, eo), (m * n * eo, m * eo, eo, 1)
    if isinstance(problem, RowsProblem):
        sizes = tuple(d.size for d in problem.rows)
        if e == eo:
            row = (problem.n * e,)
            return (sizes + row, tuple(d.src for d in problem.rows) + (1,),
                    sizes + row, tuple(d.dst for d in problem.rows) + (1,))
        return (sizes + (problem.n, e), tuple(d.src for d in problem.rows) + (e, 1),
                sizes + (problem.n, eo), tuple(d.dst for d in problem.rows) + (eo, 1))
    sizes = tuple(d.size for d in problem.batch)
    src = tuple(d.src for d in problem.batch) + (problem.ldi, problem.sci, 1)
    dst = tuple(d.dst for d in problem.batch) + (problem.ldo, eo, 1)
    return sizes + (problem.m, problem.n, e), src, sizes + (problem.n, problem.m, eo), dst


def apply(problem: Canonical, src: np.ndarray, dst_nbytes: int, cast=None) -> np.ndarray:
    """Run ``problem`` on bytes as a kernel would: ``src`` is the input's
    bytes from its base pointer on (a 1-d uint8 array), the result the
    ``dst_nbytes`` output bytes (zeros where nothing was written).

    cast: what converts each element on the way, a cast name (CASTS: its
    cast_reference) or a function from input words to output words (unsigned
    integers of the elements' sizes); None moves the bytes as they are (then
    the problem must not change the element size)."""
    if not isinstance(src, np.ndarray) or src.dtype != np.uint8 or src.ndim != 1:
        raise TypeError(f"src must be a 1-d uint8 array, not {type(src).__name__} "
                        f"{getattr(src, 'dtype', '')}{getattr(src, 'shape', '')}")
    e, eo = problem.elem, problem.out_elem
    if isinstance(cast, str):
        if cast in CASTS and CASTS[cast] != (e, eo):
            raise ValueError(f"cast {cast} converts {CASTS[cast][0]}-byte elements to {CASTS[cast][1]}-byte ones; "
                             f"the problem's are {e} and {eo} bytes")
        cast = cast_reference(cast)
    elif cast is None and e != eo:
        raise ValueError(f"the problem casts {e}-byte elements to {eo}-byte ones: apply needs its cast")
    elif cast is not None and not callable(cast):
        raise TypeError(f"cast must be a cast name or a function, not {type(cast).__name__}")
    src = np.ascontiguousarray(src)
    if isinstance(problem, NdTileProblem):   # fused tiles (the block at the end)
        return _apply_nd(problem, src, dst_nbytes, cast)
    dst = np.zeros(dst_nbytes, np.uint8)
    shape, sst, dshape, dstr = _views(problem)
    for what, buf, sh, st in (("src", src, shape, sst), ("dst", dst, dshape, dstr)):
        need = 1 + sum((n - 1) * s for n, s in zip(sh, st))
        if need > buf.size:
            raise ValueError(f"{what} has {buf.size} bytes; {problem} touches {need}")
    a = np.lib.stride_tricks.as_strided(src, shape, sst, writeable=False)
    out = np.lib.stride_tricks.as_strided(dst, dshape, dstr)
    if isinstance(problem, (TransposeProblem, TileProblem)):
        a = a.swapaxes(-2, -3)
    if cast is None:
        out[...] = a
        return dst
    if shape[-1] != e:   # a byte copy's or a row's view: one axis more, of elements
        a = a.reshape(shape[:-1] + (shape[-1] // e, e))
        out = out.reshape(dshape[:-1] + (dshape[-1] // eo, eo))
    _cast_into(out, a, cast, e, eo)
    return dst


# -- fused tiles (NdTileProblem) -----------------------------------------------------
#
# A TileProblem whose batch dimensions continue its matrix's sides linearly
# (cuTT-style fusion): a batch dim whose output stride is m * elem continues
# the output's contiguous run of m, one whose input stride is sci * n continues
# the input's run of n. Fused into the sides, the job is a transpose of larger
# (M x N) matrices whose tiles are mostly full; each fused row's input offset
# and each fused column's output offset is a mixed-radix sum, computed once a
# tile row or column (the ndtile family, cuda_templates/ndtile.cu).

@dataclass(frozen=True)
class NdTileProblem:
    """A strided batched 2-D transpose of fused M x N matrices.

    ``m_side``: the fused rows' dims, (size, src) innermost first; row o,
    decomposed over them (o = i0 + s0 * (i1 + s1 * ...)), starts at input
    byte sum(i_k * src_k) and lands contiguously on the output: output byte
    o * out_elem (the dims' output strides are out_elem * the product of the
    sizes inside them). ``n_side``: the fused columns' dims, (size, dst)
    innermost first; column q, decomposed over them, is at input byte q * sci
    (the dims' input strides are sci * the product of the sizes inside them)
    and goes to output byte sum(j_k * dst_k). ``batch``: the other dims,
    outermost first. So input element (batch, o, q) is at src + sum(batch src)
    + rowoff(o) + q * sci and goes to dst + sum(batch dst) + coloff(q) + o *
    out_elem. A TileProblem is the case of one dim a side: ((m, ldi),), ((n,
    ldo),). ``out_elem``: as a TileProblem's (a cast's output elements; output
    strides count output bytes)."""
    elem: int
    m_side: tuple[tuple[int, int], ...]
    n_side: tuple[tuple[int, int], ...]
    sci: int
    batch: tuple[Dim, ...]
    out_elem: Optional[int] = None

    def __post_init__(self):
        _same_out(self)

    @property
    def m(self) -> int:
        """Fused rows (the output's contiguous side)."""
        return math.prod(s for s, _ in self.m_side)

    @property
    def n(self) -> int:
        """Fused columns (the input's fastest side)."""
        return math.prod(s for s, _ in self.n_side)

    def dims(self) -> tuple[Dim, ...]:
        """Every dim as a Dim (size, src, dst): the m side's, then the n
        side's (innermost first, their linear strides filled in), then batch."""
        out, run = [], self.out_elem
        for s, src in self.m_side:
            out.append(Dim(s, src, run))
            run *= s
        run = self.sci
        for s, dst in self.n_side:
            out.append(Dim(s, run, dst))
            run *= s
        return tuple(out) + tuple(self.batch)


def fuse_tile(problem: TileProblem, m_side: bool = False) -> NdTileProblem | None:
    """The TileProblem with every batch dim that continues a side linearly
    fused into that side, repeatedly (a dim fused may let another continue
    it): into the m side, dims whose output stride is out_elem * M (M: the m
    side's size so far), into the n side, dims whose input stride is sci * N.
    A dim that continues both sides is tried on each; of the fusions reached
    (with m_side, those that lengthen the m side, the output rows, alone),
    the one whose 32 x 32 tiles are fullest (then the fewest batch dims, then
    the m side) wins. Size-1 dims never fuse. None when nothing fuses."""
    if not isinstance(problem, TileProblem):
        raise TypeError(f"fuse_tile takes a TileProblem, not {type(problem).__name__}")
    start = (((problem.m, problem.ldi),), ((problem.n, problem.ldo),), tuple(problem.batch))
    ends = _fusions(problem.out_elem, problem.sci, *start)
    if m_side:
        ends = [s for s in ends if len(s[0]) > 1] or [start]
    best = max(ends, key=lambda s: (_fill(s), -len(s[2]), -ends.index(s)))
    if best == start:
        return None
    return NdTileProblem(problem.elem, best[0], best[1], problem.sci, best[2], problem.out_elem)


def _fusions(elem: int, sci: int, ms: tuple, ns: tuple, batch: tuple) -> list:
    """Every maximal fusion from this state (m side, n side, batch), m first
    where a dim fits both; elem: the output's element size."""
    mlen, nlen = math.prod(s for s, _ in ms), math.prod(s for s, _ in ns)
    fit_m = [d for d in batch if d.size > 1 and d.dst == elem * mlen]
    fit_n = [d for d in batch if d.size > 1 and d.src == sci * nlen]
    if not fit_m and not fit_n:
        return [(ms, ns, batch)]
    dm, dn = fit_m[:1], fit_n[:1]
    if dm and dn and dm[0] is dn[0]:    # continues both sides: try each
        d = dm[0]
        rest = tuple(x for x in batch if x is not d)
        return (_fusions(elem, sci, ms + ((d.size, d.src),), ns, rest)
                + _fusions(elem, sci, ms, ns + ((d.size, d.dst),), rest))
    ms += tuple((d.size, d.src) for d in dm)
    ns += tuple((d.size, d.dst) for d in dn)
    rest = tuple(x for x in batch if not any(x is d for d in dm + dn))
    return _fusions(elem, sci, ms, ns, rest)


def _fill(state) -> float:
    """The share of 32 x 32 tiles' area inside the fused matrices."""
    m, n = math.prod(s for s, _ in state[0]), math.prod(s for s, _ in state[1])
    return m * n / (-(-m // 32) * 32 * -(-n // 32) * 32)


def _nd_views(p: NdTileProblem) -> tuple[tuple, tuple, tuple, tuple, tuple]:
    """_views for an NdTileProblem: (shape, src strides, dst shape, dst
    strides, axes): the source view is (batch, m dims, n dims, bytes), the
    destination (batch, n dims, m dims, bytes), each side outermost first;
    dst[...] = src.transpose(axes)."""
    nb, km, kn = len(p.batch), len(p.m_side), len(p.n_side)
    dims = p.dims()
    mdims, ndims = dims[:km][::-1], dims[km:km + kn][::-1]
    batch = tuple(p.batch)
    shape = tuple(d.size for d in batch + mdims + ndims) + (p.elem,)
    src = tuple(d.src for d in batch + mdims + ndims) + (1,)
    dshape = tuple(d.size for d in batch + ndims + mdims) + (p.out_elem,)
    dst = tuple(d.dst for d in batch + ndims + mdims) + (1,)
    axes = tuple(range(nb)) + tuple(range(nb + km, nb + km + kn)) + tuple(range(nb, nb + km)) + (nb + km + kn,)
    return shape, src, dshape, dst, axes


def _apply_nd(problem: NdTileProblem, src: np.ndarray, dst_nbytes: int, cast=None) -> np.ndarray:
    """apply() of an NdTileProblem (src: checked, contiguous; cast: None or a
    function from input words to output words)."""
    dst = np.zeros(dst_nbytes, np.uint8)
    shape, sst, dshape, dstr, axes = _nd_views(problem)
    for what, buf, sh, st in (("src", src, shape, sst), ("dst", dst, dshape, dstr)):
        need = 1 + sum((n - 1) * s for n, s in zip(sh, st))
        if any(s < 0 for n, s in zip(sh, st) if n > 1):
            raise ValueError(f"apply takes fused tiles of non-negative strides, not {problem}")
        if need > buf.size:
            raise ValueError(f"{what} has {buf.size} bytes; {problem} touches {need}")
    a = np.lib.stride_tricks.as_strided(src, shape, sst, writeable=False).transpose(axes)
    out = np.lib.stride_tricks.as_strided(dst, dshape, dstr)
    if cast is None:
        out[...] = a
    else:
        _cast_into(out, a, cast, problem.elem, problem.out_elem)
    return dst


def _cast_into(out: np.ndarray, a: np.ndarray, cast, e: int, eo: int) -> None:
    """out[...] = cast(a), over byte views whose last axis is one element (e bytes in, eo out)."""
    words = np.ascontiguousarray(a).view(_words(e))[..., 0]
    got = np.asarray(cast(words))
    if got.shape != words.shape:
        raise ValueError(f"cast returned shape {got.shape} for {words.shape} elements")
    out[...] = np.ascontiguousarray(got.astype(_words(eo), copy=False)).view(np.uint8).reshape(out.shape)
