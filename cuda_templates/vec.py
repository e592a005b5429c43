"""Family ``vec`` (vec.cu): the vectorised shared-memory tile.

Global accesses move ``vec_bytes`` per thread; each load step reads
``micro_rows`` input rows and transposes that block in registers
(``__byte_perm`` for 1- and 2-byte elements). Shared memory holds the tile
transposed, rows padded by ``pad`` elements or with their ``vec_bytes``
chunks XOR-swizzled. Every input and output row must start on a
``vec_bytes`` boundary.

Strided configs may cast (KernelConfig.cast): shared memory holds input
elements; vec_elems (K) = vec_bytes / the wider element, so loads move K *
elem_bytes ("vi") and stores K * out_elem_bytes ("vo"), each converting its K
elements in registers (without a cast both are vec_bytes)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from autotrans.core.layout import TileProblem

VARIANTS = ("vec",)
TEMPLATE = "vec.cu"
LAYOUTS = ("dense", "strided")   # strided: TileProblems with sci == elem and vec_bytes-aligned pitches
EPILOGUES = ("none", "conj32", "conj64")   # strided only; elements must be whole groups (as tile's)
TAKES_CASTS = True   # strided only
VEC_SIZES = (4, 8, 16)
THREADS = (64, 128, 256, 512, 1024)
TILE_BYTES = (4096, 65536)


def widths(c) -> tuple[int, int]:
    """(vi, vo): the bytes a thread's load and store move (vec_bytes both, without a cast)."""
    return c.vec_elems * c.elem_bytes, c.vec_elems * c.out_elem_bytes


def problems(c) -> list[str]:
    e, v, tr, tc, nt, r = c.elem_bytes, c.vec_bytes, c.tile_rows, c.tile_cols, c.threads, c.micro_rows
    if v not in VEC_SIZES or v < max(e, c.out_elem_bytes):
        return [f"vec_bytes must be one of {VEC_SIZES} and >= elem_bytes" + ("" if c.cast == "none" else
                                                                             " and out_elem_bytes")]
    k, p = c.vec_elems, []
    vi, _ = widths(c)
    if r & (r - 1) or k % r or r * e < 4:
        p.append("micro_rows must be a power of two dividing vec_elems, with micro_rows*elem_bytes >= 4")
    if tr % k or tc % k:
        p.append("tile sides must be multiples of vec_elems")
    elif ((tr // r) * (tc // k)) % nt or (tc * (tr // k)) % nt:
        p.append("threads must divide both phases' vector steps")
    if (c.pad * e) % vi:
        p.append("pad*elem_bytes must be a multiple of vec_bytes (keeps rows aligned)")
    if e % c.epilogue_group:
        p.append(f"epilogue {c.epilogue} flips a bit of every {c.epilogue_group}-byte group and tiles move "
                 f"elements between rows: elem_bytes must be a multiple of {c.epilogue_group}")
    return p


def smem_bytes(c) -> int:
    return c.tile_cols * (c.tile_rows + c.pad) * c.elem_bytes


def aligned_for(c, m: int, n: int) -> bool:
    vi, vo = widths(c)
    return (m * c.out_elem_bytes) % vo == 0 and (n * c.elem_bytes) % vi == 0


def pointer_align(c) -> int:
    return c.vec_bytes


def space(e: int):
    """Tiles of 4-64 KiB with sides within 4x of each other, every vector
    width and thread count; micro-rows of one word or a whole vector; rows
    padded by a vector or chunks swizzled (padding only at 256 threads)."""
    sides = [s for s in (8, 16, 32, 64, 128, 256, 512) if 32 <= s * e <= 1024]
    for tr, tc, v, nt in itertools.product(sides, sides, VEC_SIZES, THREADS):
        if v < e or max(tr, tc) > 4 * min(tr, tc) or not TILE_BYTES[0] <= tr * tc * e <= TILE_BYTES[1]:
            continue
        k = v // e
        for r in sorted({max(1, 4 // e), k}):
            for pad, sw in ((0, "xor"), (k, "none")):
                if sw == "xor" or nt == 256:
                    yield dict(variant="vec", elem_bytes=e, tile_rows=tr, tile_cols=tc, threads=nt,
                               vec_bytes=v, micro_rows=r, pad=pad, swizzle=sw)


@dataclass(frozen=True)
class Steps:
    """Per-thread iterations of vec.cu's phases (its IT1 and IT2; each rendered
    kernel static_asserts that the two agree)."""
    load: int    # load steps, micro_rows vectors each
    store: int   # store steps, one vector each


def steps(c) -> Steps:
    return Steps((c.tile_rows // c.micro_rows) * (c.tile_cols // c.vec_elems) // c.threads,
                 c.tile_cols * (c.tile_rows // c.vec_elems) // c.threads)


def keep(c) -> bool:
    """The register budget: vectors a thread holds after the load phase and
    before the store phase must fit (tighter for 1024-thread blocks, where ptxas
    targets 32 registers, and for 128-thread blocks, where it spilled at the
    limit). Measured with ptxas 13.0 for sm_90 and sm_80: the default space
    compiles without spills (the exhaustive compile test checks it)."""
    s = steps(c)
    loads, stores = s.load * c.micro_rows, s.store
    words = (loads + stores) * c.vec_bytes // 4
    if c.threads == 1024:
        return loads + stores <= 8 and words <= 16
    return loads + stores <= 16 and words < (64 if c.threads <= 128 else 65)


# -- strided problems (KernelConfig.layout "strided") -----------------------------

# Strided tiles per (element size, vector width): (tile rows, tile columns,
# threads, micro-rows); the first of each is the untuned dense default
# (tuning.space._DEFAULTS, from the H200) except for (1, 8), whose default is
# over keep()'s register budget; the second (16-byte vectors) has half the sides.
_STRIDED = {
    (1, 16): ((256, 256, 512, 4), (128, 128, 256, 4)), (1, 8): ((128, 128, 256, 4),),
    (1, 4): ((64, 128, 256, 4),),
    (2, 16): ((128, 128, 256, 2), (64, 64, 128, 2)), (2, 8): ((128, 128, 512, 4),), (2, 4): ((64, 64, 256, 2),),
    (4, 16): ((64, 64, 256, 4), (32, 32, 128, 1)), (4, 8): ((64, 64, 256, 2),), (4, 4): ((64, 32, 256, 1),),
    (8, 16): ((32, 64, 256, 1), (16, 32, 128, 1)), (8, 8): ((64, 32, 256, 1),),
    (16, 16): ((64, 32, 256, 1), (32, 16, 128, 1)),
}


def strided_problems(c, problem, align: int) -> list[str]:
    """Why config c cannot run this strided problem (empty when it can): a
    TileProblem of c's element sizes (in and out) whose input columns are
    adjacent (sci == elem: rows are read as vectors) and whose pitches and
    batch strides are multiples of the vectors (vec_bytes; with a cast, the
    input's of vi, the output's of vo) and pointers (align: the largest power
    of two dividing both) of vec_bytes. Matrix sides may be anything (edge
    tiles of whole vectors move guarded vectors, others go element-wise)."""
    if not isinstance(problem, TileProblem):
        return [f"vec moves TileProblems, not {type(problem).__name__}"]
    e, v = c.elem_bytes, c.vec_bytes
    (vi, vo), eo = widths(c), c.out_elem_bytes
    if problem.elem != e:
        return [f"{c.key} moves {e}-byte elements, the problem {problem.elem}-byte ones"]
    if problem.out_elem != eo:
        return [f"{c.key} writes {eo}-byte elements, the problem {problem.out_elem}-byte ones"]
    p = []
    if problem.sci != e:
        p.append(f"vec reads input rows as vectors: the column pitch must be the element size ({e} B), "
                 f"not {problem.sci}")
    ins = (problem.ldi,) + tuple(d.src for d in problem.batch)
    outs = (problem.ldo,) + tuple(d.dst for d in problem.batch)
    if any(s % vi for s in ins) or any(s % vo for s in outs):
        p.append(f"row pitches and batch strides must be multiples of vec_bytes ({v} B)" if vi == vo == v else
                 f"row pitches and batch strides must be multiples of the vectors ({vi} B in, {vo} B out)")
    if align % v:
        p.append(f"pointers must be {v}-byte aligned")
    return p


def strided_space(e: int, eo: int | None = None):
    """_STRIDED's tiles of every vector width, xor-swizzled, in both walks.
    eo: the output's element size of a cast: the tiles of the wider element,
    micro-rows raised to a word of input elements (dropped where that does
    not divide a vector)."""
    w = max(e, eo or e)
    for v in VEC_SIZES:
        for (tr, tc, nt, r), order in itertools.product(_STRIDED.get((w, v), ()), ("col", "row")):
            r = max(r, 4 // e)
            if (v // w) % r:
                continue
            yield dict(variant="vec", elem_bytes=e, tile_rows=tr, tile_cols=tc, threads=nt, vec_bytes=v,
                       micro_rows=r, pad=0, swizzle="xor", order=order, layout="strided")
