"""The flat family (cuda_templates/flat.py, flat.cu): rows whose output lies
back to back, written as runs of 16-byte vectors gathered from element
loads (flat) or from aligned 16-byte loads shifted into place (flatv). Which
problems it takes and offers candidates for, its grid (Python's launch shape
against the template's), nvcc without spills, and its index math run by the
host emulator on whole buffers, bit-exactly against NumPy: runs that start
and end at every alignment, rows shorter than a vector, runs over several
blocks, one row dimension, an unaligned output pointer."""
import numpy as np
import pytest

from autotrans import families
from autotrans.core.layout import Dim, RowsProblem, TileProblem, row_access
from autotrans.emulate.emulator import emulate_strided
from autotrans.kernels.config import KernelConfig
from autotrans.kernels.strided import launch_shape, problem_space, strided_problems, strided_shape
from autotrans.kernels.templates import python_view

from test_strided_kernels import Case, assert_compiles_without_spills, run_cases

flat = families.of("flat")


def flat_space(problem, variant="flat"):
    return [c for c in problem_space(problem) if c.variant == variant]


def flatv(e, threads=128, vectors=1):
    return KernelConfig.from_key(f"flatv:e{e}:1x{16 // e * vectors}:t{threads}:v16:r1:p0:none:row:strided")


def bshd(e, b, s, h, d):
    """(B, S, H, D) -> (B, H, S, D) of a C-contiguous input, as canonical() gives it (rows B, H, S)."""
    return RowsProblem(e, d, (Dim(b, s * h * d * e, h * s * d * e), Dim(h, d * e, s * d * e), Dim(s, h * d * e, d * e)))


# -- which problems, which candidates ------------------------------------------------

def test_candidates_are_for_runs_of_sub_word_rows():
    odd = bshd(2, 8, 2048, 16, 67)                   # 134-byte rows: 2-byte accesses
    cfgs = flat_space(odd)
    assert sorted((c.threads, flat.vectors(c)) for c in cfgs if c.tile_rows == 1) == sorted(flat.SHAPES)
    assert sorted((c.threads, flat.vectors(c), c.tile_rows) for c in cfgs if c.tile_rows > 1) == [
        (128, 2, 2), (128, 2, 4), (256, 1, 2), (256, 1, 4)]           # the untuned shape and 256 x 1, 2 and 4 runs
    for e in flat.ELEMS:                             # first (the untuned pick): 128 threads of 16 elements
        first = flat_space(bshd(e, 8, 2048, 16, 67))[0]
        assert (first.threads, first.tile_cols) == (128, 16), first.key
    assert all(c.vec_bytes == 16 and c.elem_bytes == 2 and not strided_problems(c, odd, 16) for c in cfgs)
    assert flat.runs(odd) == (8 * 16, 2048 * 67)
    assert flat_space(bshd(2, 8, 2048, 16, 64)) == []     # 128-byte rows move in 16-byte accesses (rows)
    assert flat_space(bshd(4, 2, 300, 3, 263)) != []      # 4-byte accesses
    assert row_access(bshd(4, 2, 300, 3, 263)) == 4 and row_access(bshd(1, 2, 30, 3, 70)) == 2
    pitched = RowsProblem(2, 67, (Dim(16, 134, 2048 * 136), Dim(2048, 16 * 134, 136)))   # output rows padded
    assert flat.runs(pitched) is None and flat_space(pitched) == []
    assert flat_space(RowsProblem(4, 67, (Dim(9, 268, 268),), out_elem=2)) == []   # a cast: rows' own


def test_flatv_candidates_follow_flats_for_rows_of_a_vector_or_more():
    """flatv: every shape, after flat's, for rows of 16 1-byte elements or more
    (a vector in one or two pieces; its registers, not MAX_LOADS, bound its
    vectors); none for 2- and 4-byte elements (slower on an H100, NOTES 66)."""
    for e in flat.ELEMS:
        p = bshd(e, 8, 2048, 16, 67)
        got = [c.variant for c in problem_space(p) if c.variant.startswith("flat")]
        wide = len(flat.SHAPES) if e in flat.WIDE_ELEMS else 0
        assert got == ["flat"] * len(flat_space(p)) + ["flatv"] * wide, e
        assert all(not strided_problems(c, p, 16) and c.vec_bytes == 16 for c in flat_space(p, "flatv"))
    assert flat.WIDE_ELEMS == (1,)
    assert flat_space(bshd(1, 2, 300, 3, 17), "flatv") != []                                        # 17-byte rows
    assert flat_space(bshd(1, 2, 300, 3, 15), "flatv") == [] != flat_space(bshd(1, 2, 300, 3, 15))


def test_problems_it_refuses_say_why():
    cfg = flat_space(bshd(2, 2, 30, 3, 67))[0]
    tile = TileProblem(2, 30, 67, 134, 60, 2, ())
    assert "flat moves RowsProblems" in strided_problems(cfg, tile, 16)[0]
    pitched = RowsProblem(2, 67, (Dim(16, 134, 2048 * 136), Dim(2048, 16 * 134, 136)))
    assert "output stride must be the row's bytes" in strided_problems(cfg, pitched, 16)[0]
    assert "pointers must be 2-byte aligned" in strided_problems(cfg, bshd(2, 2, 30, 3, 67), 1)[0]
    assert "without a cast" in strided_problems(cfg, bshd(4, 2, 30, 3, 67), 16)[0]


@pytest.mark.parametrize("key, why", [
    ("flat:e2:1x16:t256:v2:r1:p0:none:row:strided", "wider than an element"),
    ("flat:e8:1x16:t256:v16:r1:p0:none:row:strided", "flat moves"),
    ("flat:e2:8x16:t256:v16:r1:p0:none:row:strided", "runs a block"),
    ("flat:e2:4x16:t64:v16:r1:p0:none:row:strided", "whole warps"),
    ("flat:e2:1x16:t256:v16:r2:p0:none:row:strided", "no micro_rows"),
    ("flat:e2:1x4:t256:v16:r1:p0:none:row:strided", "whole vectors of 8"),
    ("flat:e1:1x64:t256:v16:r1:p0:none:row:strided", "at most 32 elements"),
    ("flat:e2:1x16:t256:v16:r1:p0:none:row", "layouts"),
    ("flatv:e2:1x8:t256:v8:r1:p0:none:row:strided", "16-byte vectors from 16-byte loads"),
    ("flatv:e1:1x128:t256:v16:r1:p0:none:row:strided", "64 bytes"),
])
def test_config_rules(key, why):
    with pytest.raises(ValueError, match=why):
        KernelConfig.from_key(key)


def test_the_launch_walks_runs_and_agrees_with_the_template():
    p = bshd(2, 8, 2048, 16, 67)
    cfg = KernelConfig.from_key("flat:e2:1x16:t256:v16:r1:p0:none:row:strided")
    assert strided_shape(p) == (1, 8 * 16 * 2048, 67) and launch_shape(cfg, p) == (1, 128, 2048 * 67)
    per_run = -(-(2048 * 67 * 2 // 16 + 1) // (256 * 2))     # vectors of a run (+1: an unaligned start), 512 a block
    assert cfg.blocks(launch_shape(cfg, p)) == 128 * per_run
    view = python_view(cfg)     # the sample shapes nvcc checks against flat.cu's grid (below)
    assert {(g.b, g.m, g.n, g.blocks) for g in view.grid} >= {(1, 1, 1, 1), (2, 4, 32, 8)}
    four = KernelConfig.from_key("flat:e2:4x16:t256:v16:r1:p0:none:row:strided")   # 4 runs of 64 threads a block
    per_run = -(-(2048 * 67 * 2 // 16 + 1) // (64 * 2))
    assert four.blocks(launch_shape(four, p)) == 128 // 4 * per_run
    assert four.blocks((1, 130, 2048 * 67)) == 33 * per_run                      # a last group of two runs
    assert {(g.b, g.m, g.n, g.blocks) for g in python_view(four).grid} >= {(1, 9, 47, 3), (2, 16, 32, 8)}


@pytest.mark.parametrize("arch", ["sm_90", pytest.param("sm_80", marks=pytest.mark.exhaustive)])
def test_candidates_compile_without_spills(tmp_path, arch):
    cfgs = {c for e in (1, 2, 4) for n in (3, 67) for c in flat_space(bshd(e, 2, 30, 3, n))}
    assert len(cfgs) == (len(flat.SHAPES) + 4) * 3 - 2     # int8: 2 vectors a thread at most (MAX_LOADS)
    assert max(c.tile_cols for c in cfgs) == flat.MAX_LOADS
    wide = {c for e in (1, 2, 4) for c in flat_space(bshd(e, 2, 30, 3, 67), "flatv")}
    assert len(wide) == len(flat.SHAPES) and max(c.tile_cols for c in wide) == 64
    cfgs |= wide | {flatv(e, 256, 4) for e in (2, 4)}     # the kernel takes them (keys), the space does not
    assert_compiles_without_spills(sorted(cfgs, key=lambda c: c.key), tmp_path, arch)


# -- the emulator against NumPy --------------------------------------------------------

def cases(rng, e):
    """Runs of odd bytes (every start alignment), rows of 1 to 3 elements (a
    vector wraps several rows), a run over several blocks, one row dimension,
    a pitched input, a flipped outer axis, runs shorter than a vector."""
    return [Case(rng, (2, 9, 3, 67), (0, 2, 1, 3), e), Case(rng, (5, 7, 35), (1, 0, 2), e, in_pad=1),
            Case(rng, (9, 5, 70), (1, 0, 2), e), Case(rng, (6, 40, 3), (1, 0, 2), e),
            Case(rng, (4, 37, 1), (1, 0, 2), e, in_pad=2), Case(rng, (2, 150, 3, 67), (0, 2, 1, 3), e),
            Case(rng, (9, 67), (0, 1), e, in_pad=1), Case(rng, (3, 4, 5, 7), (2, 0, 1, 3), e, flip=True),
            Case(rng, (7, 2, 1), (1, 0, 2), e)]


@pytest.mark.parametrize("e", [1, 2, 4])
def test_index_math_matches_numpy(e):
    rng = np.random.default_rng(e)
    cs = cases(rng, e)
    assert all(flat.runs(c.problem) for c in cs)
    cfgs = sorted({c for case in cs for c in flat_space(case.problem)}, key=lambda c: c.key)
    assert len(cfgs) == len(flat.SHAPES) - (2 if e == 1 else 0) + 4     # 4: several runs a block
    assert {c.tile_rows for c in cfgs} == set(flat.RUNS)
    assert run_cases(cfgs, cs) == len(cfgs) * len(cs)


@pytest.mark.parametrize("e", [1, 2, 4])
def test_flatv_index_math_matches_numpy(e):
    """flatv on the same cases, rows shorter than a vector included (a piece
    a row past the first two), one vector a thread and four: every load
    aligned and inside the input buffer (the emulator's check: from its first
    byte to the end of its 256-byte envelope), every store exact."""
    rng = np.random.default_rng(10 + e)
    cs = cases(rng, e)
    cfgs = [flatv(e), flatv(e, 256, 4)]
    assert all(c.variant == "flatv" and not strided_problems(c, case.problem, 16) for c in cfgs for case in cs)
    assert run_cases(cfgs, cs) == len(cfgs) * len(cs)


def test_flatv_moves_a_vector_in_fewer_wider_loads():
    """The emulator's sector count of one launch: flatv's loads request a
    third of flat's sectors or fewer, in under 60% of flat's instructions
    (each chunk 16 bytes, so about twice the bytes: neighbouring lanes' chunks
    overlap); the stores are the same (NOTES 66)."""
    from autotrans.emulate.emulator import strided_sector_counts
    for e, p in ((2, bshd(2, 2, 256, 4, 67)), (1, Case(np.random.default_rng(0), (120, 97, 70), (1, 0, 2), 1).problem)):
        base = strided_sector_counts(flat_space(p)[0], p)
        wide = strided_sector_counts(flatv(e), p)
        assert wide[0] < 0.6 * base[0] and wide[1] * 3 < base[1], (e, base, wide)
        assert wide[2:4] == base[2:4] and wide[5] == base[5] and base[4] < wide[4] < 3 * base[4]


def test_an_unaligned_output_pointer_and_a_wrong_stride_are_seen():
    """Runs from an output pointer 2 bytes past alignment land exactly; a
    problem whose inner input stride is off by an element does not (the
    check can fail)."""
    import dataclasses
    rng = np.random.default_rng(11)
    case = Case(rng, (3, 50, 4, 67), (0, 2, 1, 3), 2)
    cfg = flat_space(case.problem)[0]
    shifted = np.concatenate([np.zeros(2, np.uint8), case.dst])
    got = emulate_strided(cfg, case.problem, case.src, shifted, case.src_offset, case.dst_offset + 2)
    assert np.array_equal(got[2:], case.want)
    rows = case.problem.rows
    bad = dataclasses.replace(case.problem, rows=rows[:-1] + (dataclasses.replace(rows[-1], src=rows[-1].src - 2),))
    assert not np.array_equal(emulate_strided(cfg, bad, case.src, case.dst, case.src_offset, case.dst_offset),
                              case.want)


def test_runs_in_any_row_order():
    """run_problem walks short rows in input order, so the runs' dimension
    may come first: the launch moves it innermost (launch_problem), the
    emulator runs that, and the output is the same."""
    from autotrans.kernels.strided import launch_problem
    rng = np.random.default_rng(5)
    case = Case(rng, (60, 51, 35), (1, 0, 2), 2)     # rows (51, 60): the 60's output stride is the row's
    p = case.problem
    swapped = RowsProblem(p.elem, p.n, p.rows[::-1])
    assert swapped.rows[0].dst == 70 and flat.runs(swapped) == flat.runs(p) == (51, 60 * 35)
    cfg = flat_space(swapped)[0]
    assert launch_problem(cfg, swapped) == p and launch_problem(cfg, p) is p
    case.problem = swapped
    assert run_cases([cfg], [case]) == 1
