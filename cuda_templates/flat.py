"""Family ``flat`` (flat.cu): rows whose output lies back to back, written as
one flat run in ``vec_bytes`` vectors, each gathered from element loads.

A RowsProblem with a row dimension whose output stride is the row's bytes
(rows.cu's RowsProblem; every (B, S, H, D) -> (B, H, S, D) plane, the (1, 0,
2) order of a C-contiguous array) writes, for each index of its other row
dimensions, one contiguous run of s0 * n elements (s0: that dimension's
size; as_runs moves it innermost for the launch). A thread stores aligned ``vec_bytes`` vectors of a run and gathers
each vector's vec_bytes / elem_bytes elements with elem_bytes loads, from at
most a few input rows (a column past the row's end wraps to the next row's
start, that dimension's input stride on). rows.cu moves such rows one by one
in accesses as wide as the row's bytes allow: 2-byte ones for rows of 67
float16 (134 B), where this family stores 16 B at a time. Vectors that hold
a run's first or last bytes but not all of their own are stored element by
element, so the run may start and end anywhere (any output pointer and
stride of whole elements).

Geometry: a block moves tile_rows runs side by side (RUNS: runs p, p + 1,
..., whose input rows are neighbours in memory where the input is C-ordered,
so one SM's L1 serves the sectors they share), threads / tile_rows threads
(whole warps) a run, each moving that many times vectors a thread
(tile_cols / vec_elems) consecutive vectors of its run; each thread's
vectors threads / tile_rows apart (every store instruction of a warp writes
32 adjacent vectors). The launch walks the runs (kernels.strided.
launch_shape: (1, runs, s0 * n)) in groups of tile_rows, and each run's
vectors, the first of which may begin before the run (ceil(s0 n E / V) + 1
vectors a run at most).

Variant flatv gathers each whole vector from aligned 16-byte loads instead
of element loads: the one or two chunks that hold each piece of it an input
row gives, shifted into place (flat.cu's WIDE): two to four coalesced loads a
vector where flat makes 16 / E. A chunk is loaded only where it holds a byte
of its piece, so no load leaves the 16 aligned bytes around an input element.

Strided launches only, no epilogue and no cast; candidates come from
problem_space (the family has no problem-free space): rows of accesses under
ACCESS bytes (core.layout.row_access), whose runs are what this family writes;
flatv's for rows of 1-byte elements (WIDE_ELEMS) of ACCESS bytes or more (one or
two pieces a vector).
"""
from __future__ import annotations

import dataclasses
import math

from autotrans.core.layout import RowsProblem, row_access

VARIANTS = ("flat", "flatv")
TEMPLATE = "flat.cu"
LAYOUTS = ("strided",)
EPILOGUES = ("none",)
TAKES_CASTS = False
ELEMS = (1, 2, 4)        # element (load) sizes: one 32-bit word holds whole ones (flat.cu's pack)
VECS = (4, 8, 16)        # vec_bytes: the stores
ACCESS = 16              # rows' widest access: rows of such accesses keep rows.cu
MAX_LOADS = 32           # element loads a thread holds in flight (tile_cols; 64 int8 spill on sm_80: ptxas 13.0)
MAX_THREAD_BYTES = 64    # bytes a thread holds (registers)
# (threads, vectors a thread) of 16-byte stores. The untuned pick (problem_space's first) is
# UNTUNED_THREADS threads of UNTUNED_LOADS elements: fastest or within 3% of the fastest on each of
# the probe's eight 1-, 2- and 4-byte problems (H200, benchmarks/flat_probe.py, NOTES 65).
SHAPES = ((128, 1), (128, 2), (128, 4), (256, 1), (256, 2), (256, 4))
UNTUNED_THREADS, UNTUNED_LOADS = 128, 16
RUNS = (1, 2, 4)         # tile_rows: runs a block, side by side (their shared sectors in one SM's L1)
# flatv's candidates: 1-byte elements only. On an H100 (flat_probe, NOTES 66) flatv beat flat on int8 rows
# of 67 (0.81 against 0.75 of a memcpy) and lost on 2- and 4-byte elements (0.72 against 0.79, 0.85 against 0.98).
WIDE_ELEMS = (1,)


def vectors(c) -> int:
    """Vectors a thread stores (flat.cu's VPT)."""
    return c.tile_cols // c.vec_elems


def problems(c) -> list[str]:
    e, v = c.elem_bytes, c.vec_bytes
    if e not in ELEMS or v not in VECS or v <= e:
        return [f"flat moves {ELEMS}-byte elements in vectors of {VECS} bytes, wider than an element"]
    p = []
    if c.micro_rows != 1 or c.pad or c.swizzle != "none" or c.order != "row":
        p.append("flat tiles are runs x elements a thread, with no micro_rows, pad or swizzle, order row")
    if c.tile_rows not in RUNS or c.threads % (32 * c.tile_rows):
        p.append(f"flat's tile_rows (runs a block) is one of {RUNS}, each run whole warps of the block's threads")
    if c.variant == "flatv" and v != ACCESS:
        p.append(f"flatv gathers {ACCESS}-byte vectors from {ACCESS}-byte loads")
    if c.tile_cols % c.vec_elems:
        p.append(f"flat's tile_cols (elements a thread) must be whole vectors of {c.vec_elems}")
    elif (c.variant == "flat" and c.tile_cols > MAX_LOADS) or c.tile_cols * e > MAX_THREAD_BYTES:
        p.append(f"a flat thread holds at most {MAX_LOADS} elements (flatv: any) and {MAX_THREAD_BYTES} bytes "
                 f"(here {c.tile_cols} of {e} B)")
    return p


def run_vectors(c, n: int) -> int:
    """Vectors a run of n elements touches at most (its first may start before it)."""
    return -(-n * c.elem_bytes // c.vec_bytes) + 1


def blocks(c, b: int, m: int, n: int) -> int:
    """The grid of a launch of m runs of n elements (b = 1): groups of
    tile_rows runs, and each run's vectors, threads / tile_rows * vectors()
    a block (as flat.cu's grid)."""
    per = c.threads // c.tile_rows * vectors(c)
    return b * -(-m // c.tile_rows) * (-(-run_vectors(c, n) // per))


def smem_bytes(c) -> int:
    return 0


def aligned_for(c, m: int, n: int) -> bool:
    """flat runs strided launches only; any alignment of whole elements."""
    return True


def pointer_align(c) -> int:
    """An element: runs start anywhere (their partial vectors go element by element)."""
    return c.elem_bytes


def space(e: int):
    """None: flat runs no dense transpose."""
    return iter(())


def strided_space(e: int, eo: int | None = None):
    """None: flat's candidates depend on the problem (problem_space)."""
    return iter(())


def as_runs(problem) -> RowsProblem | None:
    """A RowsProblem with the row dimension whose output rows lie back to back
    (output stride = the row's bytes) moved innermost, as flat.cu walks it
    (kernels.strided.launch_problem; the rows are the same, in another
    order: run_problem walks short rows in input order); None where no row
    dimension does (or it is no RowsProblem)."""
    if not isinstance(problem, RowsProblem):
        return None
    row = problem.n * problem.out_elem
    at = [i for i, d in enumerate(problem.rows) if d.dst == row]
    if not at:
        return None
    i = at[-1]
    rows = problem.rows[:i] + problem.rows[i + 1:] + (problem.rows[i],)
    return problem if rows == problem.rows else dataclasses.replace(problem, rows=rows)


def runs(problem) -> tuple[int, int] | None:
    """(runs, elements a run) of a RowsProblem that as_runs takes, else None."""
    p = as_runs(problem)
    if p is None:
        return None
    return math.prod(d.size for d in p.rows[:-1]), p.rows[-1].size * p.n


def strided_problems(c, problem, align: int) -> list[str]:
    """Why config c cannot run this strided problem (empty when it can): a
    RowsProblem of c's elements, without a cast, with a row dimension whose
    output rows lie back to back (runs), row strides of whole elements and
    pointers aligned to an element."""
    if not isinstance(problem, RowsProblem):
        return [f"flat moves RowsProblems, not {type(problem).__name__}"]
    e = c.elem_bytes
    if problem.elem != e or problem.out_elem != e:
        return [f"{c.key} moves {e}-byte elements without a cast, the problem {problem.elem}-byte ones"
                + ("" if problem.out_elem == problem.elem else f" to {problem.out_elem}-byte ones")]
    p = []
    if runs(problem) is None:
        p.append("flat writes runs of rows: a row dimension's output stride must be the row's bytes "
                 f"({problem.n * e})")
    if any(d.src % e or d.dst % e for d in problem.rows):
        p.append(f"row strides must be whole {e}-byte elements")
    if align % e:
        p.append(f"pointers must be {e}-byte aligned")
    return p


def problem_space(problem, eo: int | None = None):
    """Keyword arguments of flat configs (16-byte stores; the untuned pick
    first, then SHAPES order, then the untuned shape and 256 threads of one
    vector at 2 and 4 runs a block), then flatv's (SHAPES, a run a block) where WIDE_ELEMS elements make
    rows of ACCESS bytes or more, for a RowsProblem without a cast that writes runs (runs()) of rows
    whose accesses would be under ACCESS bytes; none for others."""
    e = problem.elem if isinstance(problem, RowsProblem) else 0
    if e not in ELEMS or (eo or e) != e or problem.out_elem != e or runs(problem) is None:
        return
    if row_access(problem, ACCESS) >= ACCESS:
        return
    k = ACCESS // e
    first = (UNTUNED_THREADS, UNTUNED_LOADS // k)
    shapes = [(nt, vpt, 1) for nt, vpt in sorted(SHAPES, key=lambda s: s != first)]
    shapes += [(nt, vpt, r) for nt, vpt in (first, (256, 1)) for r in RUNS[1:]]   # several runs a block
    for variant in ("flat", "flatv") if e in WIDE_ELEMS and problem.n * e >= ACCESS else ("flat",):
        for nt, vpt, r in shapes if variant == "flat" else shapes[:len(SHAPES)]:
            if (variant == "flatv" or vpt * k <= MAX_LOADS) and vpt * ACCESS <= MAX_THREAD_BYTES:
                yield dict(variant=variant, elem_bytes=e, tile_rows=r, tile_cols=vpt * k, threads=nt,
                           vec_bytes=ACCESS, layout="strided")
