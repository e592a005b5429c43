"""Family ``ndtile`` (ndtile.cu): fused tiles (NdTileProblem of
autotrans.core.layout, from fuse_tile): a padded shared-memory tile with
scalar accesses over the B * M x N fused rows (every matrix's, one after
another) and columns.

Strided launches only (KernelConfig.layout ``strided``; the argument encoding
is autotrans.kernels.strided.nd_args'). A block moves ``tile_rows`` fused rows
by ``tile_cols`` fused columns: its rows' input and output offsets and its
columns' output offsets are mixed-radix sums over the batch's and the sides'
dims, computed once a block (tables in shared memory after the tile), then
the tile is loaded along input rows (4- and 8-byte elements by cp.async,
straight into shared memory) and stored along output rows. Each tile row has
``pad`` extra elements (pad_for: the fewest that free both phases of bank
conflicts). Configs may cast (KernelConfig.cast), as tile's: shared memory
holds input elements, each store converts one (vec_bytes: the wider of the
two elements)."""
from __future__ import annotations

import functools
from collections import defaultdict

from autotrans.core.layout import MAX_RANK, NdTileProblem

VARIANTS = ("ndtile",)
TEMPLATE = "ndtile.cu"
LAYOUTS = ("strided",)
EPILOGUES = ("none", "conj32", "conj64")   # elements must be whole groups (as tile's)
TAKES_CASTS = True   # every cast of kernels.config.CASTS, in the store phase
MAX_ELEMS = 8    # elements a thread moves (16 spill at 128 registers, sm_90)
ASYNC_SIZES = (4, 8)   # elements of these sizes load by cp.async (ndtile.cu's ASYNC), no registers held
MAX_ASYNC_BYTES = 128  # bytes a thread moves with cp.async loads, at most 16 elements


def problems(c) -> list[str]:
    p = []
    if c.vec_bytes != max(c.elem_bytes, c.out_elem_bytes) or c.micro_rows != 1 or c.swizzle != "none":
        p.append("ndtile uses scalar accesses and a padded tile: vec_bytes == elem_bytes (with a cast, the wider "
                 "of elem_bytes and out_elem_bytes), micro_rows == 1, no swizzle")
    if (c.tile_rows * c.tile_cols) % c.threads:
        p.append("threads must divide the tile")
    elif c.tile_rows * c.tile_cols // c.threads > max_elems(c.elem_bytes):
        p.append(f"a thread moves at most {max_elems(c.elem_bytes)} {c.elem_bytes}-byte elements "
                 f"(tile_rows * tile_cols / threads)")
    if c.elem_bytes % c.epilogue_group:
        p.append(f"epilogue {c.epilogue} flips a bit of every {c.epilogue_group}-byte group and tiles move "
                 f"elements between rows: elem_bytes must be a multiple of {c.epilogue_group}")
    return p


def max_elems(e: int) -> int:
    """The most elements of e bytes a thread moves."""
    return min(16, MAX_ASYNC_BYTES // e) if e in ASYNC_SIZES else MAX_ELEMS


def tile_bytes(c) -> int:
    """The tile's bytes (input orientation, rows of tile_cols + pad elements)."""
    return c.tile_rows * (c.tile_cols + c.pad) * c.elem_bytes


def smem_bytes(c) -> int:
    """The tile, then (8-byte aligned) the rows' input offsets, the columns'
    output offsets and the rows' output offsets, 8 bytes each."""
    return -(-tile_bytes(c) // 8) * 8 + 8 * (2 * c.tile_rows + c.tile_cols)


def aligned_for(c, m: int, n: int) -> bool:
    return True


def pointer_align(c) -> int:
    return c.elem_bytes


def space(e: int):
    """None: ndtile runs no dense transpose (see strided_space)."""
    return iter(())


def strided_problems(c, problem, align: int) -> list[str]:
    """Why config c cannot run this strided problem (empty when it can): an
    NdTileProblem of c's element sizes (in and out: its cast's) with at most
    MAX_RANK dims in all (nd_args' encoding), element-aligned strides (the
    output's in output elements) and pointers (align: the largest power of two
    dividing both; with a cast, of the smaller element: each pointer is
    aligned to its own element, which api.permute checks before it launches one)."""
    if not isinstance(problem, NdTileProblem):
        return [f"ndtile moves NdTileProblems, not {type(problem).__name__}"]
    e, eo = c.elem_bytes, c.out_elem_bytes
    if problem.elem != e:
        return [f"{c.key} moves {e}-byte elements, the problem {problem.elem}-byte ones"]
    if problem.out_elem != eo:
        return [f"{c.key} writes {eo}-byte elements, the problem {problem.out_elem}-byte ones"]
    p = []
    dims = len(problem.m_side) + len(problem.n_side) + len(problem.batch)
    if not (problem.m_side and problem.n_side) or dims > MAX_RANK:
        p.append(f"an ndtile launch takes a dim or more a side and at most {MAX_RANK} dims in all, "
                 f"not {len(problem.m_side)} + {len(problem.n_side)} + {len(problem.batch)}")
    ins = (problem.sci,) + tuple(s for _, s in problem.m_side) + tuple(d.src for d in problem.batch)
    outs = tuple(s for _, s in problem.n_side) + tuple(d.dst for d in problem.batch)
    if any(s % e for s in ins) or any(s % eo for s in outs):
        p.append(f"pitches and strides must be multiples of the element size ({e} B"
                 + (")" if e == eo else f" in, {eo} B out)"))
    if align % min(e, eo):
        p.append(f"pointers must be {min(e, eo)}-byte aligned")
    return p


# -- shared-memory banks (a model of ndtile.cu's maps) --------------------------------


@functools.lru_cache(maxsize=None)
def bank_ways(e: int, tr: int, tc: int, nt: int, pad: int) -> int:
    """The worst n-way bank conflict of the tile's accesses, as ndtile.cu maps
    them: thread t's k-th element i = t + k * nt is tile element (row i // tc,
    column i % tc) in the load phase, (row i % tr, column i // tr) in the
    store phase, at byte (row * (tc + pad) + column) * e. Accesses go in
    groups of threads requesting 128 bytes at most (32 of up to 4 bytes, 16
    of 8, 8 of 16); a group's different 4-byte words in one of the 32 banks
    cost a wavefront each."""
    group = 32 if e <= 4 else 128 // e
    worst = 0
    for store in (False, True):
        for k in range(tr * tc // nt):
            for g0 in range(0, nt, group):
                words = defaultdict(set)
                for t in range(g0, g0 + group):
                    i = t + k * nt
                    r, c = (i % tr, i // tr) if store else (i // tc, i % tc)
                    off = (r * (tc + pad) + c) * e
                    for w in range(off // 4, (off + e - 1) // 4 + 1):
                        words[w % 32].add(w)
                worst = max(worst, max(len(v) for v in words.values()))
    return worst


def pad_for(e: int, tr: int, tc: int, nt: int) -> int:
    """The fewest pad elements (0 to tc) that give the fewest bank conflicts."""
    return min(range(tc + 1), key=lambda p: (bank_ways(e, tr, tc, nt, p), p))


# (tile_rows, tile_cols, threads, order): 32x32 in both walks, 8 elements a
# thread (32x32 of 128 threads, 64-wide sides), short or narrow tiles for
# fused matrices with a small side, and 16 elements a thread where cp.async
# loads hold no registers (64x64 of 256 threads, in either walk: the H200's
# most frequent winner over fused 3-D to 5-D orders of 4- and 8-byte elements).
_STRIDED = ((32, 32, 256, "row"), (32, 32, 256, "col"), (32, 32, 128, "row"), (64, 32, 256, "row"),
            (32, 64, 256, "row"), (64, 64, 512, "row"), (64, 64, 512, "col"), (16, 64, 256, "row"),
            (64, 16, 256, "row"), (8, 128, 256, "row"), (64, 64, 256, "row"), (32, 64, 128, "row"),
            (64, 32, 128, "row"), (32, 32, 64, "row"), (64, 64, 256, "col"))

# Narrow tiles, for fused matrices of 4 to 16 columns (short input runs, e.g.
# (17,3000,65,8) (3,1,0,2): n = 8): a warp's load spans several tile rows,
# wanting rows of 0 mod 32 words, its store 32 rows of a column, wanting an odd
# row pitch, so for 4- and 8-byte elements no pad frees both phases; these keep
# the pad of fewest conflicts (2-way, in the load phase).
NARROW = ((256, 8, 256, "row"), (128, 16, 256, "row"), (512, 4, 256, "row"))
NARROW_WAYS = 2
_STRIDED += NARROW


# (elem_bytes, tile_rows, tile_cols, threads) that ptxas 13.0 compiles with
# spills: 32x32 of 256 threads and 16-byte elements on sm_80 (48 registers, 16
# bytes of stack) since the rows' output offsets joined the tables, and the
# narrow tiles of 16-byte elements (8 elements a thread).
_SPILL = {(16, 32, 32, 256)} | {(16, tr, tc, nt) for tr, tc, nt, _ in NARROW}   # (e16 256x8: 8 bytes of stack)
# Casts that widen to this many bytes spill on the narrow tiles (8 elements a
# thread: i8>i64 256x8 and 512x4, 8-16 bytes of stack, sm_90).
_CAST_SPILL = 8


def strided_space(e: int, eo: int | None = None):
    """The tiles of _STRIDED for this element size that move at most
    max_elems elements a thread, each padded by pad_for; those no pad frees
    of bank conflicts are left out (64x16 of 4-byte
    elements: a warp's load spans 2 rows, wanting rows of 16 mod 32 words,
    its store 32 rows of a column, wanting an odd number), except the narrow
    tiles (NARROW: at most NARROW_WAYS), and those of _SPILL (ptxas spills
    them on some arch). eo: the output's element size of a cast (the same
    tiles; the config names the cast, and casts that widen to 8 bytes leave
    out the narrow tiles, which ptxas 13.0 spills then: _CAST_SPILL)."""
    for tr, tc, nt, order in _STRIDED:
        if tr * tc // nt > max_elems(e) or (e, tr, tc, nt) in _SPILL:
            continue
        if (eo or e) >= _CAST_SPILL > e and (tr, tc, nt, order) in NARROW:
            continue
        pad = pad_for(e, tr, tc, nt)
        if bank_ways(e, tr, tc, nt, pad) <= (NARROW_WAYS if (tr, tc, nt, order) in NARROW else 1):
            yield dict(variant="ndtile", elem_bytes=e, tile_rows=tr, tile_cols=tc, threads=nt, pad=pad,
                       order=order, layout="strided")
