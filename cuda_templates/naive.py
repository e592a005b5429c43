"""Family ``naive`` / ``remapped`` (naive.cu): one thread per element, no shared memory.

naive: consecutive threads walk input columns (coalesced reads, strided
writes); remapped: consecutive threads walk output columns (strided reads,
coalesced writes)."""
from __future__ import annotations

VARIANTS = ("naive", "remapped")
TEMPLATE = "naive.cu"


def problems(c) -> list[str]:
    p = []
    if c.threads != c.tile_rows * c.tile_cols:
        p.append("naive/remapped use one thread per element: threads == tile_rows*tile_cols")
    if c.vec_bytes != c.elem_bytes or c.micro_rows != 1 or c.pad or c.swizzle != "none":
        p.append("naive/remapped take no vec_bytes, micro_rows, pad or swizzle")
    return p


def smem_bytes(c) -> int:
    return 0


def aligned_for(c, m: int, n: int) -> bool:
    return True


def pointer_align(c) -> int:
    return c.elem_bytes


def space(e: int):
    yield dict(variant="naive", elem_bytes=e, tile_rows=8, tile_cols=32, threads=256)
    yield dict(variant="remapped", elem_bytes=e, tile_rows=32, tile_cols=8, threads=256)
    yield dict(variant="naive", elem_bytes=e, tile_rows=4, tile_cols=32, threads=128)
    yield dict(variant="remapped", elem_bytes=e, tile_rows=32, tile_cols=4, threads=128)
