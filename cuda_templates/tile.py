"""Family ``tile`` (tile.cu): a shared-memory tile with scalar accesses (the
classic shared, padded and XOR-swizzled tiles). Shared memory holds the tile
in the input's orientation, rows padded by ``pad`` elements. Strided configs
may cast (KernelConfig.cast): shared memory holds input elements, each store
converts one (vec_bytes: the wider of the two elements, one a thread access)."""
from __future__ import annotations

import itertools

from autotrans.core.layout import TileProblem

VARIANTS = ("tile",)
TEMPLATE = "tile.cu"
LAYOUTS = ("dense", "strided")   # strided: TileProblems, columns any multiple of the element apart
EPILOGUES = ("none", "conj32", "conj64")   # strided only; elements must be whole groups
TAKES_CASTS = True   # strided only: every cast of kernels.config.CASTS


def problems(c) -> list[str]:
    p = []
    if c.vec_bytes != max(c.elem_bytes, c.out_elem_bytes) or c.micro_rows != 1:
        p.append("tile uses scalar accesses: vec_bytes == elem_bytes (with a cast, the wider of elem_bytes "
                 "and out_elem_bytes), micro_rows == 1")
    if (c.tile_rows * c.tile_cols) % c.threads:
        p.append("threads must divide the tile")
    if c.elem_bytes % c.epilogue_group:   # a complex array's permutation never splits a group
        p.append(f"epilogue {c.epilogue} flips a bit of every {c.epilogue_group}-byte group and tiles move "
                 f"elements between rows: elem_bytes must be a multiple of {c.epilogue_group}")
    return p


def smem_bytes(c) -> int:
    return c.tile_rows * (c.tile_cols + c.pad) * c.elem_bytes


def aligned_for(c, m: int, n: int) -> bool:
    return True


def pointer_align(c) -> int:
    return c.elem_bytes


def space(e: int):
    """The classic tiles of 8..64 elements a side, a quarter, half or 256 threads."""
    for t in (8, 16, 32, 64):
        for nt, pad, sw in itertools.product((t * t // 4, t * t // 2, 256), (0, 1), ("none", "xor")):
            if not (pad and sw == "xor"):
                yield dict(variant="tile", elem_bytes=e, tile_rows=t, tile_cols=t, threads=nt,
                           pad=pad, swizzle=sw)


# -- strided problems (KernelConfig.layout "strided") -----------------------------


def strided_problems(c, problem, align: int) -> list[str]:
    """Why config c cannot run this strided problem (empty when it can): a
    TileProblem of c's element sizes (in and out) whose pitches, column pitch
    (any multiple of the element: the loads honour t.sci), batch strides and
    pointers (align: the largest power of two dividing both) are
    element-aligned (the output's in output elements). With a cast, align
    need only be a multiple of the smaller element: each pointer is aligned
    to its own element (api.permute checks that before it launches one)."""
    if not isinstance(problem, TileProblem):
        return [f"tile moves TileProblems, not {type(problem).__name__}"]
    e, eo = c.elem_bytes, c.out_elem_bytes
    if problem.elem != e:
        return [f"{c.key} moves {e}-byte elements, the problem {problem.elem}-byte ones"]
    if problem.out_elem != eo:
        return [f"{c.key} writes {eo}-byte elements, the problem {problem.out_elem}-byte ones"]
    p = []
    ins = (problem.ldi, problem.sci) + tuple(d.src for d in problem.batch)
    outs = (problem.ldo,) + tuple(d.dst for d in problem.batch)
    if any(s % e for s in ins) or any(s % eo for s in outs):
        p.append(f"pitches and strides must be multiples of the element size ({e} B"
                 + (")" if e == eo else f" in, {eo} B out)"))
    if align % min(e, eo):
        p.append(f"pointers must be {min(e, eo)}-byte aligned")
    return p


def strided_space(e: int, eo: int | None = None):
    """A few classic tiles for strided problems: 32x32 (padded or swizzled,
    256 or 1024 threads, either walk), 64x64, 16x16 and 8x8 ones for small
    matrices, and 16x64 / 64x16 ones for short and narrow ones. eo: the
    output's element size of a cast (the same tiles; the config names the cast)."""
    for tr, tc, nt, pad, sw, order in ((32, 32, 256, 1, "none", "row"), (32, 32, 256, 0, "xor", "row"),
                                       (32, 32, 256, 1, "none", "col"), (32, 32, 1024, 1, "none", "row"),
                                       (64, 64, 256, 1, "none", "row"), (64, 64, 1024, 1, "none", "col"),
                                       (16, 16, 256, 1, "none", "row"), (16, 16, 64, 1, "none", "row"),
                                       (8, 8, 64, 1, "none", "row"), (16, 64, 256, 1, "none", "row"),
                                       (64, 16, 256, 1, "none", "row")):
        yield dict(variant="tile", elem_bytes=e, tile_rows=tr, tile_cols=tc, threads=nt, pad=pad, swizzle=sw,
                   order=order, layout="strided")
