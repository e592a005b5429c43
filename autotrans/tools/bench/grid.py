"""The shipped grid: the shapes tuned for the shipped results (benchmarks/grid.py)."""
from __future__ import annotations

import math

import numpy as np

from ...core.problem import ELEM_SIZES
from .cases import MIB, Case

GRID_DTYPES = {1: "int8", 2: "float16", 4: "float32", 8: "float64", 16: "complex128"}
GRID_SQUARES = (256 * 1024, 4 * MIB, 32 * MIB, 128 * MIB)   # a few tiles .. far beyond L2
GRID_SKINNY_SIDES = (3, 16, 64)
LONG_ASPECT = 64                                           # the long rectangles' M / N (and N / M)
VERY_LONG_ASPECT = 512                                     # ... and the very long ones' (fused 3-D orders)
GRID_ANCHORS = (((4096, 4096), "float32"),)   # named by tests/test_cli.py (an exact shipped entry)


def _fit(x: float, q: int, odd: bool) -> int:
    """The multiple of q nearest x (an odd multiple if ``odd``), at least q."""
    k = max(1, round(x / q))
    if odd and k % 2 == 0:
        k += 1
    return k * q


def _matrix(nbytes: int, e: int, aspect: float, align: int) -> tuple[int, int]:
    """(M, N) of about nbytes of e-byte elements with M / N about ``aspect``,
    whose rows (input and output) are ``align``-byte aligned: exactly, below
    16; at least, at 16."""
    n = math.sqrt(nbytes / e / aspect)
    q, odd = (max(1, 16 // e), False) if align >= 16 else (align // e, True)
    return _fit(aspect * n, q, odd), _fit(n, q, odd)


def _skinny(e: int, side: int) -> list[tuple]:
    """A skinny pair of about 8 MiB: (long, side) and (side, long)."""
    long = _fit(8 * MIB / e / side, max(1, 16 // e), False)
    return [(long, side), (side, long)]


def grid() -> list[Case]:
    """The shapes tuned for the shipped results, most important first: for
    every element size, squares from a few tiles to far beyond L2, tall and wide
    rectangles, skinny matrices in both orientations, batches of small and of
    large matrices, all with 16-byte aligned rows; then the same classes with
    rows aligned to the element size only; then the alignments in between;
    then batches of tiny matrices; then rectangles of aspect 64 both ways;
    then odd ones of aspect 512 both ways."""
    out: dict = {}
    for shape, e, *classes in (*_anchors(), *_aligned16(), *_skinnies(), *_element_aligned(),
                               *_aligned_between(), *_tiny_batches(), *_long_rects(),
                               *_very_long_rects()):
        c = Case(shape, GRID_DTYPES[e], tuple(classes))
        out.setdefault((c.bmn, e), c)
    return list(out.values())


def _anchors():
    for shape, dt in GRID_ANCHORS:
        yield shape, np.dtype(dt).itemsize, "square", "anchor"


def _aligned16():
    for e in ELEM_SIZES:
        for size in GRID_SQUARES:
            yield _matrix(size, e, 1, 16), e, "square", "align16"
        for size in (4 * MIB, 64 * MIB):
            yield _matrix(size, e, 8, 16), e, "rect", "align16"
            yield _matrix(size, e, 1 / 8, 16), e, "rect", "align16"
        yield (256, *_matrix(16 * 1024, e, 1, 16)), e, "batched", "align16"
        yield (4, *_matrix(16 * MIB, e, 1, 16)), e, "batched", "align16"


def _skinnies():
    for e in ELEM_SIZES:
        for side in GRID_SKINNY_SIDES:
            for shape in _skinny(e, side):
                yield shape, e, "skinny"


def _element_aligned():
    """Rows aligned to the element size only."""
    for e in ELEM_SIZES[:-1]:
        for size in (256 * 1024, 4 * MIB, 64 * MIB):
            yield _matrix(size, e, 1, e), e, "square", f"align{e}"
        yield _matrix(16 * MIB, e, 8, e), e, "rect", f"align{e}"
        yield _matrix(16 * MIB, e, 1 / 8, e), e, "rect", f"align{e}"
        yield (64, *_matrix(64 * 1024, e, 1, e)), e, "batched", f"align{e}"
        yield (64, *_matrix(MIB, e, 1, e)), e, "batched", f"align{e}"      # a batch of large odd matrices


def _aligned_between():
    """The alignments between the element size and 16 bytes."""
    for e in ELEM_SIZES[:-1]:
        for a in (a for a in (8, 4, 2) if e < a):
            for size in (4 * MIB, 64 * MIB):
                yield _matrix(size, e, 1, a), e, "square", f"align{a}"
            for shape in _skinny(e, a // e):   # the short side's rows exactly a-byte aligned
                yield shape, e, "skinny", f"align{a}"


def _long_rects():
    """Rectangles of aspect 64 both ways (a side of a few hundred elements, as in
    vocabulary x hidden tables and fused 3-D orders): 16 MiB with 16-byte aligned
    rows, 64 MiB with rows aligned to the element size only, so that the aspect-8
    rectangles (4 and 64 MiB aligned, 16 MiB odd) are not the only tall and wide
    shapes of their size bands."""
    for e in ELEM_SIZES:
        for aspect in (LONG_ASPECT, 1 / LONG_ASPECT):
            yield _matrix(16 * MIB, e, aspect, 16), e, "rect", "long", "align16"
            if e < 16:
                yield _matrix(64 * MIB, e, aspect, e), e, "rect", "long", f"align{e}"


def _very_long_rects():
    """Rectangles of aspect 512 both ways, 64 MiB, rows aligned to the element
    size only (a side of 129-363 elements): what a 3-D order such as (2, 0, 1)
    of an odd (a, b, c) fuses into, (a * b) x c, beyond the aspect-64 ones."""
    for e in ELEM_SIZES[:-1]:
        for aspect in (VERY_LONG_ASPECT, 1 / VERY_LONG_ASPECT):
            yield _matrix(64 * MIB, e, aspect, e), e, "rect", "vlong", f"align{e}"


def _tiny_batches():
    """Batches of tiny matrices (both sides under 64; 16 x 16 ones too, which a 32 x 32 tile holds 1/4 full)."""
    for e in ELEM_SIZES:
        yield (1024, *_matrix(32 * 32 * e, e, 1, 16)), e, "batched", "tiny", "align16"
        yield (2048, *_matrix(16 * 16 * e, e, 1, 16)), e, "batched", "tiny", "align16"
        if e < 16:
            yield (512, *_matrix(33 * 33 * e, e, 1, e)), e, "batched", "tiny", f"align{e}"
