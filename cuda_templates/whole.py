"""Family ``whole`` (whole.cu): batches of small matrices, several whole
matrices a block.

A block moves G = per_block(c, M, N) consecutive matrices of a dense B x M x N
input: one contiguous run in and one out, both in ``vec_bytes`` vectors,
through shared memory that holds the run in the input's layout, each input
row followed by ``pad`` 4-byte words. ``tile_rows * tile_cols * elem_bytes`` is
the capacity (the shared memory a block has); the grid is ceil(B / G)
blocks. Shapes whose matrix does not fit the capacity, or whose matrices are
not whole vectors (M * N * elem_bytes), are refused (aligned_for): the
template needs both. micro_rows 1, swizzle none, order row. Where a block
would hold fewer than MIN_MATRICES matrices the tile families do the same
with full-width tiles (tuning.space tries whole only where it holds more)."""
from __future__ import annotations

import itertools

VARIANTS = ("whole",)
TEMPLATE = "whole.cu"
VEC_SIZES = (4, 8, 16)
CAPACITY = (2048, 4096, 8192, 16384)   # bytes of shared memory a block in the space
THREADS = (64, 128, 256)
# Vectors a thread holds, per vector width: at most 64 registers (ptxas 13.0, sm_90;
# 8-byte vectors at 16 a thread took 56-72).
MAX_STEPS = {4: 16, 8: 8, 16: 8}
MIN_MATRICES = 2                 # the space's tiles are tried where a block holds at least this many
TILE_ROWS = 32                   # the capacity as 32 x (capacity / 32 / elem_bytes) elements


def capacity(c) -> int:
    """Shared-memory bytes of a block: a run's most bytes."""
    return c.tile_rows * c.tile_cols * c.elem_bytes


def per_block(c, m: int, n: int) -> int:
    """Matrices of m x n a block holds (0: one does not fit), as whole.cu's per_block."""
    cap = capacity(c)
    if m * c.elem_bytes > cap or n * c.elem_bytes > cap:
        return 0
    return cap // (m * (n * c.elem_bytes + 4 * c.pad))


def blocks(c, b: int, m: int, n: int) -> int:
    """The grid of a B x M x N launch: ceil(B / per_block) (0 where a matrix does not fit)."""
    g = per_block(c, m, n)
    return -(-b // g) if g else 0


def problems(c) -> list[str]:
    e, v, nt = c.elem_bytes, c.vec_bytes, c.threads
    if v not in VEC_SIZES or v < e:
        return [f"whole's vec_bytes must be one of {VEC_SIZES} and >= elem_bytes"]
    p = []
    if c.micro_rows != 1 or c.swizzle != "none" or c.order != "row" or c.pad not in (0, 1):
        p.append("whole tiles take micro_rows 1, swizzle none, order row and pad 0 or 1 (words after each row)")
    steps, rest = divmod(capacity(c) // v, nt)
    if rest or capacity(c) % v or not 1 <= steps <= MAX_STEPS[v]:
        p.append(f"threads must divide the capacity's vectors, 1 to {MAX_STEPS[v]} a thread")
    return p


def smem_bytes(c) -> int:
    return capacity(c)


def aligned_for(c, m: int, n: int) -> bool:
    """Whether an m x n matrix fits a block and is whole vectors."""
    return per_block(c, m, n) >= 1 and (m * n * c.elem_bytes) % c.vec_bytes == 0


def pointer_align(c) -> int:
    return c.vec_bytes


def space(e: int):
    """Capacities of 2 to 16 KiB, every vector width, 64 to 256 threads,
    rows padded by a word or not."""
    for cap, v, nt, pad in itertools.product(CAPACITY, VEC_SIZES, THREADS, (0, 1)):
        if v >= e and 1 <= cap // v // nt <= MAX_STEPS[v]:
            yield dict(variant="whole", elem_bytes=e, tile_rows=TILE_ROWS, tile_cols=cap // (TILE_ROWS * e),
                       threads=nt, vec_bytes=v, pad=pad)
