"""Family ``shift`` (shift.cu): the vec tile for rows and pointers at any
alignment, 1- to 4-byte elements, 16-byte accesses.

Aligned 16-byte vectors are copied raw into shared memory and realigned from
there on the way in and out; each tile reads vec_elems more rows and alone
writes the aligned output vectors that start in its rows, so only the ends of
whole output rows are written in parts. Swizzle ``xor`` skews the transposed
rows instead of permuting chunks.

Strided configs move TileProblems whose input columns are adjacent: every
row is realigned on its own, so pitches and batch strides need only be
multiples of the element. They may cast between 1- to 4-byte elements
(KernelConfig.cast): the tile holds input elements and each aligned 16-byte
output vector converts the ko = 16 / out_elem_bytes input elements it holds;
a tile then reads ko more rows (without a cast ko is vec_elems).

Strided configs may move strips of tiles (KernelConfig.strip > 1): a block
moves ``strip`` tiles side by side along its input rows, one after another.
Their raw rows start at the 32-byte sector that holds a tile row's first byte,
so each tile row's last sector is the next tile's first: it moves to the raw
row's start in shared memory instead of being read again (no sector of a
row is read twice inside a strip), and the next tile's loads are in flight
while a tile stores.

Strips may write seams (KernelConfig.seam): where the output's rows follow
one another along a batch dimension (its output stride M * out_elem: the
3-D (2, 1, 0) orders), a row's last partial vector and the next row's first
are one aligned 16-byte vector in memory. Written in pieces by two tiles, it
costs up to eight store instructions of one sector each: on the odd (2, 1, 0)
orders a quarter more store sectors than the output's (emulator count, NOTES
41). A strip at the top of its matrix also reads the previous matrix's last
seam_rows rows of its columns and writes that vector whole; a bottom tile
then leaves it alone.

Variant ``ndshift`` (strided only, one tile a block, no cast) moves an
NdTileProblem: matrices (at their batch offsets) of fused rows (each a
contiguous input run; rows' input offsets a mixed-radix sum over the m side's
dims) by fused columns (each a contiguous output run; columns' output offsets
over the n side's); its tiles do not span matrices. A block first sums its rows' and columns' offsets into tables after
its tile, then moves it as a strided shift tile moves a TileProblem's: so a
permutation such as (3, 2, 1, 0) of 1- and 2-byte elements moves in 16-byte
accesses, where ndtile (one element an access) is slow on sub-word elements."""
from __future__ import annotations

import itertools

from autotrans.core.layout import NdTileProblem, TileProblem

VARIANTS = ("shift", "ndshift")
TEMPLATE = "shift.cu"
LAYOUTS = ("dense", "strided")   # strided: TileProblems with sci == elem, pitches any multiple of it
TAKES_CASTS = True   # strided only; 1- to 4-byte elements in and out
STRIPS = True        # strided only: KernelConfig.strip tiles a block
SEAMS = True         # strips only: KernelConfig.seam (the row-to-row vectors written whole)
SECTOR = 32          # a strip's raw rows start at a sector


def out_vec_elems(c) -> int:
    """Elements of an aligned 16-byte output vector (ko): the rows a tile reads past its own."""
    return c.vec_bytes // c.out_elem_bytes


def problems(c) -> list[str]:
    e, v, tr, tc, nt, r = c.elem_bytes, c.vec_bytes, c.tile_rows, c.tile_cols, c.threads, c.micro_rows
    if max(e, c.out_elem_bytes) > 4 or v != 16 or r * e != 4:
        return ["shift moves 1-, 2- and 4-byte elements (in and out) in 16-byte vectors, "
                "with micro_rows*elem_bytes == 4 (one-word chunks)"]
    k, ko, p = v // e, out_vec_elems(c), []
    if not (2 <= tc // k <= 32 and 2 <= tr // ko <= 32):
        p.append("shift needs 2..32 vectors per tile row and per output row")
    elif (tc * (tr // ko)) % nt:
        p.append("threads must divide the store phase's vectors")
    if (c.pad * e) % 4:
        p.append("shift's pad*elem_bytes must be a multiple of 4")
    if c.variant == "ndshift" and (c.layout != "strided" or c.strip != 1 or c.cast != "none"):
        p.append("ndshift configs are strided, one tile a block (strip 1), without a cast")
    if tr % ko:
        p.append(f"shift's tile rows must be whole output vectors ({ko} elements)")
    return p


def odd_side(c) -> str | None:
    """ndshift's tile rows may be any multiple of its output vector (problems()
    checks that), not only a power of two: see ODD_ROW_TILES."""
    return "rows" if c.variant == "ndshift" else None


def raw_granule(c) -> int:
    """Where a raw row starts: at the 16-byte vector (one tile a block) or the
    32-byte sector (strips) that holds the tile row's first byte."""
    return SECTOR if c.strip > 1 else c.vec_bytes


def seam_rows(c) -> int:
    """Rows of the previous matrix a tile with seams also reads (out_vec_elems), else 0."""
    return out_vec_elems(c) if c.seam else 0


def smem_bytes(c) -> int:
    """Raw rows (out_vec_elems more than the tile, and seam_rows), then the
    transposed tile (its rows seam_rows elements longer, in front)."""
    k, e = c.vec_bytes // c.elem_bytes, c.elem_bytes
    rows = c.tile_rows + out_vec_elems(c)
    raw = (rows + seam_rows(c)) * (c.tile_cols * e + raw_granule(c))
    words, groups = (seam_rows(c) + rows + c.pad) * e // 4, c.tile_cols // k
    skew = (32 // groups - k * words) % 32 if c.swizzle == "xor" else 0
    end = raw + c.tile_cols * words * 4 + 4 * skew * (groups - 1)
    if c.variant == "ndshift":          # then, 8-byte aligned, the rows' input and the columns' output offsets
        return -(-end // 8) * 8 + 8 * (rows + c.tile_cols)
    return end


def aligned_for(c, m: int, n: int) -> bool:
    return True


def pointer_align(c) -> int:
    return max(c.elem_bytes, c.out_elem_bytes)


def space(e: int):
    """8-16 KiB tiles, 128-512 threads, transposed rows padded by a word, skewed
    or not, column walk. On the H200 (4097x4095) these held the best of each
    element size; smaller or larger tiles, 64 or 1024 threads, unpadded rows and
    the row walk were 1-40% slower."""
    if e > 4:
        return
    r = 4 // e
    sides = [s for s in (8, 16, 32, 64, 128, 256, 512) if 32 <= s * e <= 1024]
    for tr, tc, nt, sw in itertools.product(sides, sides, (128, 256, 512), ("xor", "none")):
        if max(tr, tc) <= 4 * min(tr, tc) and 8192 <= tr * tc * e <= 16384:
            yield dict(variant="shift", elem_bytes=e, tile_rows=tr, tile_cols=tc, threads=nt,
                       vec_bytes=16, micro_rows=r, pad=r, swizzle=sw, order="col")


# -- strided problems (KernelConfig.layout "strided") -----------------------------

# Strided tiles per element size (tile rows, columns, threads, swizzle): the
# dense space's most frequent winners on the H200 grid (cache/h200.json), and
# a tall, narrow tile each for 1 and 2 bytes (whole output rows of a few hundred
# elements, short input spans), which won the 3-D (2, 1, 0) orders on the H200:
# int8 (511, 1031, 257) 118.4 -> 111.6 µs, float16 (263, 509, 257) 61.7 -> 60.4 µs
# (benchmarks/shift_tall_probe.py, NOTES 38).
_STRIDED = {
    1: ((128, 128, 256, "xor"), (64, 128, 256, "xor"), (128, 64, 128, "none"), (64, 256, 256, "xor"),
        (256, 64, 256, "none")),
    2: ((64, 64, 256, "none"), (128, 64, 256, "xor"), (128, 32, 512, "xor"), (64, 64, 512, "xor"),
        (64, 32, 128, "xor")),
    4: ((64, 64, 128, "none"), (32, 64, 256, "none"), (64, 64, 256, "xor"), (64, 32, 256, "xor")),
}


def strided_problems(c, problem, align: int) -> list[str]:
    """Why config c cannot run this strided problem (empty when it can):
    shift's a TileProblem (tile_problems), ndshift's an NdTileProblem
    (nd_problems)."""
    return (nd_problems if c.variant == "ndshift" else tile_problems)(c, problem, align)


def nd_problems(c, problem, align: int) -> list[str]:
    """Why ndshift config c cannot run this problem: an NdTileProblem of c's
    elements, input columns adjacent, every stride a multiple of the element,
    pointers (align) too."""
    if not isinstance(problem, NdTileProblem):
        return [f"ndshift moves NdTileProblems, not {type(problem).__name__}"]
    e = c.elem_bytes
    if problem.elem != e or problem.out_elem != e:
        return [f"{c.key} moves {e}-byte elements, the problem {problem.elem}-byte ones"
                + ("" if problem.out_elem == problem.elem else f" into {problem.out_elem}-byte ones")]
    p = []
    if problem.sci != e:
        p.append(f"ndshift reads input rows as vectors: the column pitch must be the element size ({e} B), "
                 f"not {problem.sci}")
    strides = ([s for _, s in problem.m_side] + [d for _, d in problem.n_side]
               + [x for d in problem.batch for x in (d.src, d.dst)])
    if any(s % e for s in strides):
        p.append(f"strides must be multiples of the element size ({e} B)")
    if align % e:
        p.append(f"pointers must be {e}-byte aligned")
    return p


def tile_problems(c, problem, align: int) -> list[str]:
    """Why config c cannot run this strided problem (empty when it can): a
    TileProblem of c's element sizes (in and out: its cast's), input columns
    adjacent (sci == elem: rows are read as aligned vectors and realigned),
    input pitches and batch strides multiples of the input's element, the
    output's of the output's, and pointers (align) of both. The aligned
    16-byte vectors that cover a row never leave the 16-byte granules that
    hold its bytes."""
    if not isinstance(problem, TileProblem):
        return [f"shift moves TileProblems, not {type(problem).__name__}"]
    e, eo = c.elem_bytes, c.out_elem_bytes
    if problem.elem != e or problem.out_elem != eo:
        return [f"{c.key} moves {e}-byte elements" + ("" if eo == e else f" into {eo}-byte ones")
                + f", the problem {problem.elem}-byte ones"
                + ("" if problem.out_elem == problem.elem else f" into {problem.out_elem}-byte ones")]
    p = []
    if problem.sci != e:
        p.append(f"shift reads input rows as vectors: the column pitch must be the element size ({e} B), "
                 f"not {problem.sci}")
    ins = (problem.ldi,) + tuple(d.src for d in problem.batch)
    outs = (problem.ldo,) + tuple(d.dst for d in problem.batch)
    if any(s % e for s in ins) or any(s % eo for s in outs):
        p.append(f"pitches and strides must be multiples of the element size ({e} B)" if e == eo else
                 f"pitches and strides must be multiples of the elements ({e} B in, {eo} B out)")
    if align % max(e, eo):
        p.append(f"pointers must be {max(e, eo)}-byte aligned")
    return p


# ndshift tiles whose rows are not a power of two (NOTES 52, 53). The 80-row
# ones are in the strided space (ODD_ROW_SPACE): on 65-row fused matrices a
# 128-row tile leaves half its rows idle, and on an H100 80x128/t128 (int8) and
# 80x64/t128 (16-bit) ran at 0.65-0.69 and 0.72-0.76 of a memcpy where the best
# power-of-two tile gave 0.49-0.53 and 0.53-0.57 (they lost on 97 rows and
# more). The others (72 and 112 rows) lost to the power-of-two tiles on all 41
# sub-word problems of nd_probe.py (--grid and its cases), which --odd still
# times them on.
ODD_ROW_SPACE = {1: ((80, 128, 128, "xor"),), 2: ((80, 64, 128, "xor"),)}
ODD_ROW_TILES = {1: ODD_ROW_SPACE[1] + ((112, 128, 128, "xor"),),
                 2: ((72, 64, 64, "none"),) + ODD_ROW_SPACE[2] + ((112, 64, 128, "xor"),)}


def _tile(e: int, tr: int, tc: int, nt: int, sw: str, variant: str = "ndshift") -> dict:
    """One strided shift/ndshift config (column walk, 16-byte vectors)."""
    r = 4 // e
    return dict(variant=variant, elem_bytes=e, tile_rows=tr, tile_cols=tc, threads=nt, vec_bytes=16,
                micro_rows=r, pad=r, swizzle=sw, order="col", layout="strided")


def odd_row_space(e: int):
    """ODD_ROW_TILES' ndshift configs of this element size that are not in the
    strided space (as strided_space's)."""
    for t in ODD_ROW_TILES.get(e, ()):
        if t not in ODD_ROW_SPACE.get(e, ()):
            yield _tile(e, *t)


def strided_space(e: int, eo: int | None = None):
    """_STRIDED's tiles of this element size (none above 4 bytes), column walk,
    and ndshift's ODD_ROW_SPACE. eo: the output's element size of a cast (none
    above 4 bytes either)."""
    if (eo or e) > 4:
        return
    for variant in ("shift", "ndshift") if eo is None else ("shift",):
        for t in _STRIDED.get(e, ()):
            yield _tile(e, *t, variant=variant)
    if eo is None:
        for t in ODD_ROW_SPACE.get(e, ()):
            yield _tile(e, *t)
