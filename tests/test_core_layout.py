"""core.layout: N-d permutations of strided views reduced to canonical
problems. The NumPy reference ``apply`` runs each problem on raw bytes; on
thousands of random views it must give NumPy's own permutation byte for byte."""
from __future__ import annotations

import collections

import numpy as np
import pytest

from autotrans.core import layout
from autotrans.core.layout import (CASTS, MAX_BATCH, CopyProblem, Dim, RowsProblem, TileProblem,
                                   TransposeProblem, alignment, apply, canonical, cast_reference, extent,
                                   c_strides, moved_bytes)

DTYPES = {1: np.dtype("u1"), 2: np.dtype("u2"), 4: np.dtype("u4"), 8: np.dtype("u8"), 16: np.dtype("V16")}
SIZES = [1, 1, 2, 2, 3, 4, 5, 6, 7]


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def random_view(rng: np.random.Generator):
    """(buffer, view) : a strided view of some itemsize into a random uint8
    buffer, sliced with steps and offsets out of a parent allocated in some
    axis order (framework-style transposed views) at any byte offset."""
    rank = int(rng.integers(1, 7))
    itemsize = int(rng.choice(list(DTYPES)))
    shape = [int(rng.choice(SIZES)) for _ in range(rank)]
    while np.prod(shape) > 1200:
        shape[int(np.argmax(shape))] -= 1
    if rng.random() < 0.2:   # any positive strides: overlapping reads, equal strides
        strides = [itemsize * int(rng.integers(1, 9)) for _ in shape]
        start = int(rng.integers(0, 16))
        buf = rng.integers(0, 256, start + extent(shape, strides, itemsize), dtype=np.uint8)
        raw = buf[start:start + extent(shape, strides, itemsize)]
        view = np.lib.stride_tricks.as_strided(raw, shape + [itemsize], strides + [1], writeable=False)
        return buf, view.view(DTYPES[itemsize])[..., 0]
    dense = rng.random() < 0.4
    steps = [1 if dense else int(rng.choice([1, 1, 1, 2, 3])) for _ in shape]
    pads = [0 if dense else int(rng.choice([0, 0, 1, 2])) for _ in shape]
    parent = [(n - 1) * s + 1 + p for n, s, p in zip(shape, steps, pads)]
    order = list(rng.permutation(rank)) if rng.random() < 0.5 else list(range(rank))
    nbytes = int(np.prod(parent)) * itemsize
    start = int(rng.integers(0, 16))
    buf = rng.integers(0, 256, nbytes + 16, dtype=np.uint8)
    base = buf[start:start + nbytes].view(DTYPES[itemsize]).reshape([parent[k] for k in order])
    base = base.transpose(np.argsort(order))
    view = base[tuple(slice(o, o + (n - 1) * s + 1, s) for n, s, o in
                      zip(shape, steps, (int(rng.integers(0, p + 1)) for p in pads)))]
    if rng.random() < 0.2:   # a size-1 axis's stride is never used: give it nonsense
        odd = [int(rng.choice([0, -3, 5, 1 << 40])) if n == 1 else s
               for n, s in zip(view.shape, view.strides)]
        view = np.lib.stride_tricks.as_strided(view, view.shape, odd, writeable=False)
    return buf, view


def random_axes(rng: np.random.Generator, rank: int) -> tuple[int, ...]:
    """Any permutation, or (as often) two neighbouring blocks of axes swapped
    (what batched transposes and head swaps look like)."""
    if rng.random() < 0.5:
        return tuple(int(a) for a in rng.permutation(rank))
    i, j, k = sorted(int(a) for a in rng.integers(0, rank + 1, 3))
    return tuple(range(i)) + tuple(range(j, k)) + tuple(range(i, j)) + tuple(range(k, rank))


def check(buf, view, axes, align):
    """canonical() of the view, run by apply(), against NumPy; the problem."""
    itemsize = view.dtype.itemsize
    problem = canonical(view.shape, view.strides, itemsize, axes, align)
    offset = address(view) - address(buf)
    src = buf[offset:offset + extent(view.shape, view.strides, itemsize)]
    want = np.ascontiguousarray(view.transpose(axes)).tobytes()
    assert moved_bytes(problem) == len(want)
    got = apply(problem, src, len(want))
    assert got.tobytes() == want, (view.shape, view.strides, axes, align, problem)
    return problem


def strides_of(p) -> list[int]:
    """Every byte stride a problem names: all must be multiples of its
    element, or the kernel's wide loads and stores would be misaligned."""
    if isinstance(p, TileProblem):
        return [p.ldi, p.ldo, p.sci] + [s for d in p.batch for s in (d.src, d.dst)]
    if isinstance(p, RowsProblem):
        return [p.n * p.elem] + [s for d in p.rows for s in (d.src, d.dst)]
    return []


def test_random_views_permute_like_numpy():
    rng = np.random.default_rng(15)
    kinds = collections.Counter()
    for _ in range(4000):
        buf, view = random_view(rng)
        axes = random_axes(rng, view.ndim)
        align = int(rng.choice([1, 2, 4, 8, 16, 16, 16]))   # allocations are 256-byte aligned
        p = check(buf, view, axes, align)
        kinds[type(p).__name__] += 1
        assert all(s % p.elem == 0 for s in strides_of(p)), p
        if isinstance(p, RowsProblem):
            assert align % p.elem == 0 and len(p.rows) <= MAX_BATCH and p.rows
            kinds["wide rows"] += p.elem > view.dtype.itemsize
        elif isinstance(p, TileProblem):
            assert len(p.batch) <= MAX_BATCH
        if isinstance(p, (TileProblem, TransposeProblem)) and p.elem != view.dtype.itemsize:
            assert view.dtype.itemsize < p.elem <= align
            kinds["promoted"] += 1
    # The generator reaches every kind of problem, promotions included.
    assert min(kinds[k] for k in ("CopyProblem", "TransposeProblem", "TileProblem",
                                  "RowsProblem", "promoted", "wide rows")) >= 50, kinds


def test_rank_8_views():
    rng = np.random.default_rng(8)
    for _ in range(100):
        shape = tuple(int(n) for n in rng.choice([1, 2, 3], 8))
        buf = rng.integers(0, 256, int(np.prod(shape)) * 4, dtype=np.uint8)
        x = buf.view("u4").reshape(shape)[tuple(slice(None, None, int(rng.choice([1, 2]))) for _ in shape)]
        check(buf, x, tuple(int(a) for a in rng.permutation(8)), int(rng.choice([4, 16])))


# -- the classic cases ----------------------------------------------------------------

def forms(x: np.ndarray, axes, align=16):
    return canonical(x.shape, x.strides, x.dtype.itemsize, axes, align)


@pytest.mark.parametrize("dtype", ["u1", "f2", "f4", "f8", "c16"])
def test_2d_transpose_is_a_transpose(dtype):
    e = np.dtype(dtype).itemsize
    assert forms(np.zeros((6, 10), dtype), (1, 0)) == TransposeProblem(e, (1, 6, 10))


def test_batched_transpose():
    assert forms(np.zeros((3, 6, 10), "f4"), (0, 2, 1)) == TransposeProblem(4, (3, 6, 10))
    # Leading and interleaved size-1 axes change nothing.
    assert forms(np.zeros((1, 3, 1, 6, 10), "f4"), (2, 0, 1, 4, 3)) == TransposeProblem(4, (3, 6, 10))


def test_heads_swap_moves_rows_of_wide_words():
    b, s, h, d = 2, 3, 5, 64
    p = forms(np.zeros((b, s, h, d), "f2"), (0, 2, 1, 3))
    rows = (Dim(b, s * h * d * 2, s * h * d * 2), Dim(h, d * 2, s * d * 2), Dim(s, h * d * 2, d * 2))
    assert p == RowsProblem(16, 8, rows)          # a 128-byte row in 16-byte words
    assert forms(np.zeros((b, s, h, d), "f2"), (0, 2, 1, 3), align=4) == RowsProblem(4, 32, rows)


def test_short_rows_are_promoted_to_one_element():
    x = np.zeros((2, 3, 5, 4), "f2")              # an 8-byte row
    assert forms(x, (0, 2, 1, 3), align=8) == TransposeProblem(8, (2, 3, 5))
    # The pointers allow only 4-byte words: no promotion, rows of 2 words.
    p = forms(x, (0, 2, 1, 3), align=4)
    assert isinstance(p, RowsProblem) and (p.elem, p.n) == (4, 2)


def test_reversal_is_a_tile_with_one_batch_dim():
    a, b, c = 3, 5, 7
    p = forms(np.zeros((a, b, c), "f4"), (2, 1, 0))
    assert p == TileProblem(4, m=a, n=c, ldi=b * c * 4, ldo=b * a * 4, sci=4, batch=(Dim(b, c * 4, a * 4),))


def test_identity_of_a_dense_array_is_a_copy():
    assert forms(np.zeros((3, 5, 7), "f8"), (0, 1, 2)) == CopyProblem(3 * 5 * 7 * 8)
    assert forms(np.zeros((1,), "u1"), (0,)) == CopyProblem(1)
    assert forms(np.zeros((1, 1), "c16"), (1, 0)) == CopyProblem(16)
    # Swapping an axis of one: still the identity on the bytes.
    assert forms(np.zeros((4, 1, 9), "f4"), (1, 0, 2)) == CopyProblem(4 * 9 * 4)


def test_pitched_slice():
    v = np.zeros((4, 6000), "f4")[:, 100:5100]
    assert forms(v, (0, 1)) == RowsProblem(16, 1250, (Dim(4, 24000, 20000),))
    assert forms(v, (0, 1), align=4) == RowsProblem(4, 5000, (Dim(4, 24000, 20000),))
    assert forms(v, (1, 0)) == TileProblem(4, m=4, n=5000, ldi=24000, ldo=16, sci=4, batch=())


def test_strided_1d_gather_is_a_tile_of_one_column():
    v = np.zeros(20, "f4")[::2]
    assert forms(v, (0,)) == TileProblem(4, m=10, n=1, ldi=8, ldo=40, sci=4, batch=())


def test_equal_strides_pick_the_later_axis_as_n():
    p = canonical((3, 5, 7), (8, 8, 40), 4, (0, 1, 2))     # an overlapping view
    assert p == TileProblem(4, m=7, n=5, ldi=40, ldo=28, sci=8, batch=(Dim(3, 8, 140),))


def test_strides_of_size_1_axes_are_ignored():
    assert canonical((1, 5), (-7, 4), 4, (1, 0)) == CopyProblem(20)
    assert canonical((5, 1), (4, 0), 4, (1, 0)) == CopyProblem(20)
    assert canonical((5, 1), (12, 3), 4, (1, 0)) == TileProblem(4, m=5, n=1, ldi=12, ldo=20, sci=4, batch=())


def test_empty_jobs_are_none():
    assert canonical((3, 0, 2), (8, 8, 4), 4, (2, 1, 0)) is None
    assert canonical((3, 0), (0, -5), 4, (1, 0)) is None     # its strides never matter
    with pytest.raises(ValueError, match="not a permutation"):
        canonical((3, 0), (0, 4), 4, (0, 0))
    assert extent((3, 0, 2), (8, 8, 4), 4) == 0


def test_extent():
    v = np.zeros((4, 6000), "f4")[:, 100:5100:2]
    assert extent(v.shape, v.strides, 4) == 3 * 24000 + 2499 * 8 + 4
    assert extent((1, 3), (-100, 16), 16) == 48
    assert extent((2, 3), (-24, 8), 8) == 24 + 16 + 8   # a span, wherever it starts


def test_alignment():
    assert alignment(0x1000, 0x2008) == 8
    assert alignment(3, 0x1000) == 1
    assert alignment(0x1000) == 16


def test_apply_takes_bytes_only():
    with pytest.raises(TypeError, match="src must be a 1-d uint8 array"):
        apply(CopyProblem(8), np.zeros(2, np.float32), 8)


def test_apply_refuses_short_buffers():
    p = TransposeProblem(4, (1, 3, 5))
    with pytest.raises(ValueError, match="src has 59 bytes"):
        apply(p, np.zeros(59, np.uint8), 60)
    with pytest.raises(ValueError, match="dst has 59 bytes"):
        apply(p, np.zeros(60, np.uint8), 59)


# -- casts (out_itemsize) ---------------------------------------------------------------

def test_random_views_permute_and_cast_like_numpy():
    """canonical(..., out_itemsize) of every kind of view, run by apply() with
    each cast of its element size, is the cast of NumPy's permutation; no
    element is widened and output strides are multiples of the output's."""
    rng = np.random.default_rng(16)
    by_size = collections.defaultdict(list)
    for c, (ei, eo) in CASTS.items():
        by_size[ei].append(c)
    kinds = collections.Counter()
    for _ in range(1500):
        buf, view = random_view(rng)
        e = view.dtype.itemsize
        if e not in by_size:
            continue
        cast = str(rng.choice(by_size[e]))
        eo = CASTS[cast][1]
        axes = random_axes(rng, view.ndim)
        align = int(rng.choice([1, 2, 4, 8, 16, 16, 16]))
        p = canonical(view.shape, view.strides, e, axes, align, out_itemsize=eo)
        offset = address(view) - address(buf)
        src = buf[offset:offset + extent(view.shape, view.strides, e)]
        want = cast_reference(cast)(np.ascontiguousarray(view.transpose(axes))).tobytes()
        assert moved_bytes(p) == len(want)
        assert apply(p, src, len(want), cast).tobytes() == want, (view.shape, view.strides, axes, cast, p)
        assert (p.elem, p.out_elem) == (e, eo), p
        outs = {TileProblem: lambda q: [q.ldo] + [d.dst for d in q.batch],
                RowsProblem: lambda q: [d.dst for d in q.rows]}.get(type(p), lambda q: [])(p)
        assert all(s % eo == 0 for s in outs), p
        kinds[type(p).__name__] += 1
    assert min(kinds[k] for k in ("CopyProblem", "TransposeProblem", "TileProblem", "RowsProblem")) >= 30, kinds


def test_casts_never_widen_elements():
    x = np.zeros((2, 3, 5, 64), "f2")
    rows = (Dim(2, 3 * 5 * 64 * 2, 3 * 5 * 64 * 4), Dim(5, 128, 3 * 64 * 4), Dim(3, 5 * 128, 64 * 4))
    assert canonical(x.shape, x.strides, 2, (0, 2, 1, 3), out_itemsize=4) == RowsProblem(2, 64, rows, 4)
    same = canonical(x.shape, x.strides, 2, (0, 2, 1, 3), out_itemsize=2)    # float16 -> bfloat16
    rows2 = tuple(Dim(d.size, d.src, d.dst // 2) for d in rows)
    assert same == RowsProblem(2, 64, rows2, 2) and same == RowsProblem(2, 64, rows2)
    assert forms(x, (0, 2, 1, 3)) == RowsProblem(16, 8, rows2)
    y = np.zeros((2, 3, 5, 4), "f2")                  # 8-byte rows: promoted without a cast, not with one
    assert canonical(y.shape, y.strides, 2, (0, 2, 1, 3), 8) == TransposeProblem(8, (2, 3, 5))
    assert isinstance(canonical(y.shape, y.strides, 2, (0, 2, 1, 3), 8, out_itemsize=2), RowsProblem)
    z = np.zeros((3, 6, 10), "f4")
    assert canonical(z.shape, z.strides, 4, (0, 2, 1), out_itemsize=2) == TransposeProblem(4, (3, 6, 10), 2)
    assert canonical(z.shape, z.strides, 4, (0, 1, 2), out_itemsize=8) == CopyProblem(720, 4, 8)
    assert canonical((1,), (4,), 4, (0,), out_itemsize=2) == CopyProblem(4, 4, 2)
    assert canonical(z.shape, z.strides, 4, (2, 1, 0), out_itemsize=2) == TileProblem(
        4, m=3, n=10, ldi=240, ldo=36, sci=4, batch=(Dim(6, 40, 6),), out_elem=2)
    v = np.zeros(20, "f4")[::2]
    assert canonical(v.shape, v.strides, 4, (0,), out_itemsize=8) == TileProblem(4, 10, 1, 8, 80, 4, (), 8)
    assert canonical(z.shape, z.strides, 4, (0, 2, 1), out_itemsize=None) == forms(z, (0, 2, 1))


def test_problems_without_a_cast_are_as_before():
    t = TileProblem(4, 3, 5, 20, 12, 4, ())
    assert t.out_elem == 4 and t == TileProblem(4, 3, 5, 20, 12, 4, (), 4) and hash(t) == hash(
        TileProblem(4, 3, 5, 20, 12, 4, (), 4))
    assert t != TileProblem(4, 3, 5, 20, 12, 4, (), 2)
    assert CopyProblem(8) == CopyProblem(8, 1, 1) and CopyProblem(8).out_elem == 1
    assert TransposeProblem(2, (1, 3, 3)) == TransposeProblem(2, (1, 3, 3), 2)
    assert RowsProblem(4, 2, (Dim(2, 8, 8),)).out_elem == 4


def test_apply_needs_the_cast_of_a_casting_problem():
    p = TransposeProblem(4, (1, 3, 5), 2)
    src = np.arange(60, dtype=np.uint8)
    with pytest.raises(ValueError, match="casts 4-byte elements to 2-byte ones: apply needs its cast"):
        apply(p, src, 30)
    with pytest.raises(ValueError, match="cast f32>f64 converts 4-byte elements to 8-byte ones"):
        apply(p, src, 30, "f32>f64")
    with pytest.raises(ValueError, match="unknown cast"):
        apply(p, src, 30, "f32>f8")
    with pytest.raises(TypeError, match="cast must be a cast name or a function"):
        apply(p, src, 30, 3)
    halves = apply(p, src, 30, lambda w: (w >> 16).astype(np.uint16))    # any function of the words
    want = (src.view("<u4").reshape(3, 5).T >> 16).astype("<u2")
    assert halves.tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="dst has 29 bytes"):
        apply(p, src, 29, "f32>f16")


def test_bad_out_itemsize():
    with pytest.raises(ValueError, match=r"itemsize 3 is not one of"):
        canonical((2, 3), (12, 4), 4, (1, 0), out_itemsize=3)
    with pytest.raises(ValueError, match=r"itemsize must be an integer"):
        canonical((2, 3), (12, 4), 4, (1, 0), out_itemsize=2.0)


# -- bad input -----------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (((2, 3), (12, 4), 4, (0, 0)), r"axes \(0, 0\) are not a permutation of 0\.\.1"),
    (((2, 3), (12, 4), 4, (0, 1, 2)), r"axes \(0, 1, 2\) are not a permutation of 0\.\.1"),
    (((2, 3), (12, 4), 4, (-1, 0)), r"axes \(-1, 0\) are not a permutation"),
    (((2, 3), (12, 4), 4, (1.0, 0)), r"axes \(1\.0, 0\) are not a permutation"),
    (((2, 3), (12, 4), 4, (True, False)), r"are not a permutation of 0\.\.1"),
    (((2, 3), (12, 4), 4, 5), r"axes 5 are not a permutation"),
    (((), (), 4, ()), r"shape \(\) has rank 0; permute takes 1 to 8 axes"),
    (((1,) * 9, (4,) * 9, 4, tuple(range(9))), r"has rank 9; permute takes 1 to 8 axes"),
    (((2, 3), (0, 4), 4, (1, 0)), r"axis 0 has stride 0; axes longer than 1 need positive strides"),
    (((2, 3), (12, -4), 4, (1, 0)), r"axis 1 has stride -4; axes longer than 1 need positive"),
    (((2, 3), (12, 6), 4, (1, 0)), r"axis 1 has stride 6, not a multiple of the itemsize 4"),
    (((2, 3), (12, 2 ** 63), 4, (1, 0)), r"axis 1 has stride .*over the limit of 2\*\*62"),
    (((2, 3), (12,), 4, (1, 0)), r"strides \(12,\) must be 2 integers, one per axis"),
    (((2, 3), (12, 4.0), 4, (1, 0)), r"stride of axis 1 must be an integer, not 4\.0"),
    (((2, 3), (12, 4), 3, (1, 0)), r"itemsize 3 is not one of \(1, 2, 4, 8, 16\)"),
    (((2, 3), (12, 4), True, (1, 0)), r"itemsize must be an integer, not True"),
    (((2, 3.0), (12, 4), 4, (1, 0)), r"dimensions must be integers, not 3\.0"),
    (((2, True), (12, 4), 4, (1, 0)), r"dimensions must be integers, not True"),
    (((2, -3), (12, 4), 4, (1, 0)), r"dimensions must be >= 0, not -3"),
    (("23", (12, 4), 4, (1, 0)), r"shape must be a sequence of 1 to 8 dimensions"),
    (((2 ** 40, 2 ** 40), (8, 2 ** 43), 4, (1, 0)), r"spans over 2\*\*62 bytes"),
])
def test_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        canonical(*args)


@pytest.mark.parametrize("align", [0, 3, 32, 2.0])
def test_bad_align(align):
    with pytest.raises(ValueError, match="align"):
        canonical((2, 3), (12, 4), 4, (1, 0), align)



def test_c_strides_in_bytes_and_elements():
    assert c_strides((2, 3, 4), 4) == (48, 16, 4)
    assert c_strides((2, 3, 4)) == (12, 4, 1)
    assert c_strides((5, 0, 7), 2) == (14, 14, 2)      # a size-0 axis counts as 1
    assert c_strides((), 8) == ()


def test_permutation_of_a_strided_problem_gives_it_back():
    """permutation_of(p): a (shape, axes) whose C-contiguous permutation has
    the canonical problem p again (fused, run_problem's forms too), so `show`
    can print what tunes it."""
    from autotrans.tuning.strided import run_problem
    rng, seen = np.random.default_rng(61), set()
    for _ in range(300):
        rank = int(rng.integers(2, 7))
        e = int(rng.choice([1, 2, 4, 8, 16]))
        shape = tuple(int(v) for v in rng.choice([1, 2, 3, 5, 17, 64, 65], size=rank))
        axes = tuple(int(a) for a in rng.permutation(rank))
        p = layout.canonical(shape, layout.c_strides(shape, e), e, axes)
        for q in {p, run_problem(p)} if isinstance(p, (layout.TileProblem, layout.RowsProblem)) else ():
            s, a = layout.permutation_of(q)
            again = layout.canonical(s, layout.c_strides(s, q.elem), q.elem, a)
            assert again in (p, q) or run_problem(again) == q, (shape, axes, q, s, a)
            seen.add(type(q).__name__)
    assert seen == {"TileProblem", "RowsProblem", "NdTileProblem"}
    with pytest.raises(TypeError, match="not a strided problem"):
        layout.permutation_of(layout.CopyProblem(64))
