"""Family ``tile`` (tile.cu): a shared-memory tile with scalar accesses (the
classic shared, padded and XOR-swizzled tiles). Shared memory holds the tile
in the input's orientation, rows padded by ``pad`` elements."""
from __future__ import annotations

import itertools

VARIANTS = ("tile",)
TEMPLATE = "tile.cu"


def problems(c) -> list[str]:
    p = []
    if c.vec_bytes != c.elem_bytes or c.micro_rows != 1:
        p.append("tile uses scalar accesses: vec_bytes == elem_bytes, micro_rows == 1")
    if (c.tile_rows * c.tile_cols) % c.threads:
        p.append("threads must divide the tile")
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
