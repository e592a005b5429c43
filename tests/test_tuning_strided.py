"""Tuning strided problems without a GPU: the candidates, the host side of
verification (checked against the kernels' own code through the emulator),
best_strided's lookup, ``autotrans tune SHAPE --axes`` and ``autotrans show``
with strided entries (real subprocesses, real cache files)."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autotrans.cli import main
from autotrans.core import layout
from autotrans.core.device import Limits
from autotrans.core.layout import Dim, RowsProblem, TileProblem, TransposeProblem
from autotrans.emulate.emulator import emulate_strided_many
from autotrans.kernels.strided import problem_space, strided_problems, strided_space
from autotrans.results.keys import ProblemKey, problem_text
from autotrans.results.store import ResultCache
from autotrans.tuning.space import space_id
from autotrans.tuning.strided import (SHORT_ROW, TUNE_ALIGN, best_strided, default_strided, extents, host_buffers,
                                      problem_key, problem_rows, run_problem, strided_candidates)
from autotrans.tuning.verify import GUARD, POISON

from conftest import A100, H200
from test_problem_keys import BATCHED, GATHER, PROBLEMS, ROWS, TILE, canon, problem_record

REPO = Path(__file__).resolve().parent.parent
SMALL_ROWS = canon((3, 40, 5, 24), (0, 2, 1, 3), np.float16)          # rows of 48 bytes: 16-byte words
ODD_ROWS = canon((5, 7, 3), (1, 0, 2), np.float32)                     # rows of 12 bytes: 4-byte words
SMALL_TILE = canon((70, 300), (1, 0), view=np.s_[:, 10:250])
SMALL = [SMALL_ROWS, ODD_ROWS, SMALL_TILE, canon((70, 300), (1, 0), view=np.s_[::2, ::3]),
         canon((6, 50, 40), (0, 2, 1), view=np.s_[::2, :, :30]), canon((9,), (0,), view=np.s_[::3])]


def _gpu_reason():
    from autotrans.backend.cuda import GPUUnavailable, device
    try:
        device()
        return None
    except GPUUnavailable as exc:
        return str(exc)


@pytest.fixture(scope="session")
def no_gpu():
    if _gpu_reason() is None:
        pytest.skip("a GPU is available here; this test covers the no-GPU behaviour")


# -- candidates ------------------------------------------------------------------------


def test_small_problems_are_strided_ones():
    assert isinstance(SMALL_ROWS, RowsProblem) and SMALL_ROWS.elem == 16
    assert isinstance(ODD_ROWS, RowsProblem) and ODD_ROWS.elem == 4
    assert all(isinstance(p, TileProblem) for p in SMALL[2:])
    assert SMALL[-1].n == 1                                                # a 1-d gather


@pytest.mark.parametrize("problem", PROBLEMS + SMALL, ids=problem_text)
def test_candidates_are_every_strided_config_that_runs_the_problem(problem):
    cfgs = strided_candidates(problem)
    assert cfgs and len({c.key for c in cfgs}) == len(cfgs)
    assert cfgs[0] == default_strided(problem)
    space = strided_space(problem.elem) + problem_space(problem)
    runs = [c for c in space if not strided_problems(c, problem, TUNE_ALIGN)
            and not Limits().problems(c.threads, c.smem_bytes)]
    assert set(cfgs) == set(runs)
    assert all(c.layout == "strided" and c.elem_bytes == problem.elem for c in cfgs)
    family = {"rows", "flat", "flatv"} if isinstance(problem, RowsProblem) else {"tile", "vec", "shift"}
    assert {c.variant for c in cfgs} <= family


def test_candidates_follow_the_problem_alignment_and_limits():
    assert {c.variant for c in strided_candidates(TILE)} == {"tile", "vec", "shift"}   # 4-byte elements
    assert {c.variant for c in strided_candidates(GATHER)} == {"tile"}        # columns apart: no vectors
    odd = strided_candidates(ODD_ROWS)                                       # rows of 12 bytes:
    assert {c.vec_bytes for c in odd if c.variant == "rows"} == {4}           # rows in 4-byte accesses,
    assert {c.vec_bytes for c in odd if c.variant == "flat"} == {16}          # flat runs in 16-byte stores
    assert not any(c.variant == "flatv" for c in odd)                        # flatv: rows of 16 bytes or more
    at4 = strided_candidates(TILE, align=4)
    assert max(c.vec_bytes for c in at4 if c.variant != "shift") == 4
    assert any(c.variant == "shift" for c in at4)                            # realigns rows at any element
    small = Limits(max_threads=256, smem_per_block=16 * 1024)
    few = strided_candidates(BATCHED, small)
    assert few and all(c.threads <= 256 and c.smem_bytes <= 16 * 1024 for c in few)
    assert len(few) < len(strided_candidates(BATCHED))


@pytest.mark.parametrize("problem", PROBLEMS + SMALL, ids=problem_text)
def test_the_default_is_the_widest_family_then_the_tile_row_nearest_a_row(problem):
    """Nearest in log2 distance, a tile row longer than the row counting twice
    (flat, where it runs, first: its untuned shape)."""
    cfgs, best = strided_candidates(problem), default_strided(problem)
    variants = {c.variant for c in cfgs}
    if best.variant == "shift":          # _shift_default: rows no 16-byte vec tile reads
        assert not any(c.variant == "vec" and c.vec_bytes == 16 for c in cfgs)
        return
    if "flat" in variants:
        assert (best.variant, best.threads, best.tile_cols) == ("flat", 128, 16)
        return
    assert best.variant == ("rows" if "rows" in variants else "vec" if "vec" in variants else "tile")
    assert best.vec_bytes == max(c.vec_bytes for c in cfgs if c.variant == best.variant)
    row = problem.n * problem.elem

    def distance(c):
        t = c.tile_cols * c.elem_bytes
        return np.log2(row / t) if t <= row else 2 * np.log2(t / row)
    peers = [c for c in cfgs if (c.variant, c.vec_bytes) == (best.variant, best.vec_bytes)]
    assert distance(best) == min(map(distance, peers))


def test_the_default_fills_a_row_and_follows_the_epilogue():
    assert default_strided(ROWS).tile_cols * ROWS.elem == ROWS.n * ROWS.elem == 128    # not a 64-byte tile row
    pairs = canon((60, 40), (1, 0), np.complex64, view=np.s_[:, :30])                    # 8-byte elements
    conj = default_strided(pairs, epilogue="conj32")
    assert conj.epilogue == "conj32" and dataclasses.replace(conj, epilogue="none") == default_strided(pairs)
    assert default_strided(pairs, epilogue="conj64") is None                             # 16-byte groups
    assert default_strided(TILE, epilogue="conj32") is None                              # 4-byte elements
    with pytest.raises(ValueError, match="epilogue must be one of"):
        default_strided(TILE, epilogue="conj")


def test_rows_of_sub_word_accesses_default_to_flat_or_a_row_sized_tile():
    """(B, S, H, D) float16 with D = 67 (134-byte rows: 2-byte accesses) and
    int8 rows of 70 (35 two-byte words) write runs: flat's untuned shape is
    the pick (H200: 0.47 -> 0.70 and 0.50 -> 0.76 of a memcpy, NOTES 65).
    The same rows into a padded output (no runs) take rows' row-sized tiles,
    the first, 64 threads of 4 rows (H100: 0.27 -> 0.60 and 0.35 -> 0.63,
    NOTES 63). Rows of 4-byte accesses (263 float32), 16-byte ones and casts
    keep the space alone; rows too long for a row-sized tile's 16 vectors a
    thread take the rule."""
    odd = layout.canonical((8, 64, 16, 67), layout.c_strides((8, 64, 16, 67), 2), 2, (0, 2, 1, 3))
    words = run_problem(layout.canonical((60, 51, 70), layout.c_strides((60, 51, 70), 1), 1, (1, 0, 2)))
    assert (odd.elem, odd.n, words.elem, words.n) == (2, 67, 2, 35)
    assert default_strided(odd).key == "flat:e2:1x16:t128:v16:r1:p0:none:row:strided"
    assert default_strided(words).key == "flat:e2:1x16:t128:v16:r1:p0:none:row:strided"
    odd = RowsProblem(2, 67, (Dim(16, 134, 64 * 136), Dim(64, 16 * 134, 136)))       # output rows padded
    words = RowsProblem(2, 35, (Dim(60, 51 * 70, 72), Dim(51, 70, 60 * 72)))
    assert default_strided(odd).key == "rows:e2:8x96:t64:v2:r1:p0:none:row:strided"
    assert default_strided(words).key == "rows:e2:8x64:t64:v2:r1:p0:none:row:strided"
    sized = {c.key for c in strided_candidates(odd) if c.tile_cols == 96}
    assert sized == {"rows:e2:8x96:t64:v2:r1:p0:none:row:strided", "rows:e2:16x96:t128:v2:r1:p0:none:row:strided",
                     "rows:e2:4x96:t64:v2:r1:p0:none:row:strided", "rows:e2:8x96:t128:v2:r1:p0:none:row:strided"}
    f32 = run_problem(layout.canonical((25, 50, 263), layout.c_strides((25, 50, 263), 4), 4, (1, 0, 2)))
    aligned = layout.canonical((8, 64, 16, 64), layout.c_strides((8, 64, 16, 64), 2), 2, (0, 2, 1, 3))
    cast = layout.canonical((8, 64, 16, 67), layout.c_strides((8, 64, 16, 67), 2), 2, (0, 2, 1, 3), out_itemsize=4)
    for p, c in ((f32, "none"), (aligned, "none"), (cast, "f16>f32")):
        assert all(x.tile_cols & (x.tile_cols - 1) == 0 for x in strided_candidates(p, cast=c)), problem_text(p)
    long = layout.canonical((4, 64, 8, 301), layout.c_strides((4, 64, 8, 301), 2), 2, (0, 2, 1, 3))
    assert default_strided(long).tile_cols & (default_strided(long).tile_cols - 1) == 0


@pytest.mark.parametrize("dtype, geometry", [(np.int8, (128, 64, 128)), (np.float16, (64, 64, 256)),
                                             (np.float32, (64, 64, 256))])
def test_odd_rows_default_to_a_shift_tile(dtype, geometry):
    """Rows no 16-byte vector tile can read go through shift tiles (on the H200
    2.2-3.4x the scalar tiles'; float32 on an H100 within 0.971 of the best
    against 0.936 for the scalar vec tile); rows vec16 reads do not, nor
    float32 matrices under 64 rows or columns."""
    odd = canon((301, 7, 263), (2, 1, 0), dtype)                  # rows of 263 and 301 elements
    got = default_strided(odd)
    assert (got.variant, got.tile_rows, got.tile_cols, got.threads) == ("shift", *geometry)
    assert default_strided(odd, align=1) == (got if dtype == np.int8 else None)   # shift takes any element alignment
    aligned = canon((320, 7, 256), (2, 1, 0), dtype)
    assert default_strided(aligned).variant == "vec" and default_strided(aligned).vec_bytes == 16
    narrow = default_strided(canon((301, 7, 63), (2, 1, 0), dtype))
    assert narrow.variant == ("vec" if dtype == np.float32 else "shift")


def test_odd_casts_from_float32_default_to_a_shift_tile():
    """A float32 -> 16-bit cast whose rows no 16-byte vec tile reads takes the
    shift tile of _SHIFT_CAST_DEFAULT (on the H200 0-29% faster than the
    scalar vec tile, NOTES 39); aligned rows keep the vec tile, the same
    float32 rows without a cast the float32 shift default, and a cast from
    16-bit elements the 16-bit shift default."""
    from autotrans.kernels.strided import as_strided

    def cast_problem(shape, e, eo):
        return as_strided(layout.canonical(shape, (shape[1] * e, e), e, (1, 0), 16, out_itemsize=eo))
    for cast in ("f32>bf16", "f32>f16"):
        got = default_strided(cast_problem((4099, 8191), 4, 2), cast=cast)
        assert (got.variant, got.tile_rows, got.tile_cols, got.threads, got.cast) == ("shift", 64, 32, 256, cast)
        assert default_strided(cast_problem((4096, 8192), 4, 2), cast=cast).variant == "vec"
    plain = default_strided(cast_problem((4099, 8191), 4, 4))          # no cast: _SHIFT_DEFAULT's 64 x 64
    assert (plain.variant, plain.tile_rows, plain.tile_cols, plain.cast) == ("shift", 64, 64, "none")
    wide = default_strided(cast_problem((4099, 8191), 2, 4), cast="bf16>f32")
    assert (wide.variant, wide.tile_rows, wide.tile_cols, wide.threads) == ("shift", 64, 64, 256)


def test_candidates_refuse_what_is_not_a_strided_problem():
    with pytest.raises(TypeError, match="TileProblem or RowsProblem"):
        strided_candidates(TransposeProblem(4, (1, 64, 64)))
    with pytest.raises(ValueError, match="elem"):
        strided_candidates(RowsProblem(3, 4, (Dim(2, 12, 12),)))


# -- the host side of verification -----------------------------------------------------


@pytest.mark.parametrize("problem", SMALL, ids=problem_text)
def test_host_buffers(problem):
    src, want, before = host_buffers(problem, seed=7)
    in_bytes, out_bytes = extents(problem)
    assert src.size == in_bytes >= layout.moved_bytes(problem) and want.size == before.size == out_bytes + 2 * GUARD
    assert (want[:GUARD] == POISON).all() and (want[-GUARD:] == POISON).all()
    assert np.array_equal(want[:GUARD], before[:GUARD]) and np.array_equal(want[-GUARD:], before[-GUARD:])
    ref = layout.apply(problem, src, out_bytes)
    assert np.array_equal(want[GUARD:-GUARD], ref)                      # a dense output: every byte written
    assert (before[GUARD:-GUARD] == ~ref).all()                           # so no unwritten byte can pass
    assert not np.array_equal(host_buffers(problem, seed=8)[0], src)


def test_host_buffers_of_an_output_with_gaps_and_one_that_overlaps():
    gaps = RowsProblem(4, 1, (Dim(3, 4, 8),))                             # every other output word
    _, want, before = host_buffers(gaps, 1)
    out = want[GUARD:-GUARD]
    assert out.size == 20 and (out[4:8] == POISON).all() and (out[12:16] == POISON).all()
    assert np.array_equal(before[GUARD + 4:GUARD + 8], out[4:8])
    with pytest.raises(ValueError, match="overlaps itself"):
        host_buffers(RowsProblem(4, 2, (Dim(3, 8, 4),)), 1)


def test_every_candidate_verifies_through_the_emulator():
    """What StridedBuffers.verify checks on the GPU, run on the kernels' own
    code: each candidate's launch into the prefilled guarded buffer leaves
    exactly ``want``; one that misses rows, or reads other data, does not."""
    items, wants = [], []
    for p in SMALL:
        src, want, before = host_buffers(p, seed=3)
        for c in strided_candidates(p):
            items.append((c, p, src, before, 0, GUARD))
            wants.append(want)
    got = emulate_strided_many(items)
    wrong = [it[0].key for it, g, w in zip(items, got, wants) if not np.array_equal(g, w)]
    assert wrong == [] and len(items) > 30
    c, p, src, before, *_ = items[0]
    d = p.rows[0]
    short = RowsProblem(p.elem, p.n, (layout.Dim(d.size - 1, d.src, d.dst),) + p.rows[1:])   # misses rows
    other_src = host_buffers(p, seed=4)[0]                                                   # other data
    for got in emulate_strided_many([(c, short, src, before, 0, GUARD), (c, p, other_src, before, 0, GUARD)]):
        assert not np.array_equal(got, wants[0])
        assert np.array_equal(got[:GUARD], wants[0][:GUARD])


# -- best_strided -----------------------------------------------------------------------


def test_best_strided_finds_exactly_this_problem_on_this_device(tmp_path):
    rc = ResultCache(tmp_path / "c")
    key = problem_key(TILE, H200)
    assert key == ProblemKey(H200, space_id(), TILE)
    cfgs = strided_candidates(TILE)
    vec16 = next(c for c in cfgs if c.variant == "vec" and c.vec_bytes == 16)
    scalar = next(c for c in cfgs if c.variant == "tile")
    assert best_strided(TILE, H200, rc) is None
    assert rc.put_problem(key, problem_record(key, best=vec16, configs=[vec16, scalar], n_candidates=2))
    assert best_strided(TILE, H200, rc) == vec16
    assert best_strided(TILE, key.device_id, rc) == vec16
    assert best_strided(TILE, A100, rc) is None
    assert best_strided(GATHER, H200, rc) is None
    moved = TileProblem(TILE.elem, TILE.m, TILE.n, TILE.ldi + 16, TILE.ldo, TILE.sci, TILE.batch)
    assert best_strided(moved, H200, rc) is None                         # other pitches: another problem
    assert best_strided(TILE, H200, rc, align=4) == scalar               # the fastest that runs at 4 bytes
    stale = ProblemKey(H200, "0123456789abcdef-s0", ROWS)
    assert rc.put_problem(stale, problem_record(stale))
    assert best_strided(ROWS, H200, rc) is None                          # made by other templates


def test_a_cast_tunes_and_is_found_under_its_own_key(tmp_path):
    """A cast-transpose's candidates are the configs of that cast (the untuned
    one first), its verification reference is the cast's (core.layout.apply
    with it), and its result is stored and found under the cast's key only."""
    from autotrans.kernels.strided import as_strided
    p = as_strided(layout.canonical((300, 1000), (4000, 4), 4, (1, 0), 16, out_itemsize=2))
    cfgs = strided_candidates(p, cast="f32>bf16")
    assert len(cfgs) > 3 and all(c.cast == "f32>bf16" for c in cfgs)
    assert cfgs[0] == default_strided(p, cast="f32>bf16")
    assert strided_candidates(p) == []                                  # 4 -> 2 bytes: only casts move it
    src, want, before = host_buffers(p, 5, "f32>bf16")
    ref = layout.apply(p, src, extents(p)[1], "f32>bf16")
    assert np.array_equal(want[GUARD:-GUARD], ref) and np.array_equal(before[GUARD:-GUARD], ~ref)
    assert not np.array_equal(host_buffers(p, 5, "f32>f16")[1], want)   # another cast, other bytes
    rc = ResultCache(tmp_path / "c")
    key = problem_key(p, H200, "f32>bf16")
    assert rc.put_problem(key, problem_record(key, best=cfgs[1], configs=cfgs[:2], n_candidates=2))
    assert best_strided(p, H200, rc, cast="f32>bf16") == cfgs[1]
    assert best_strided(p, H200, rc, cast="f32>f16") is None
    assert [r["problem"] for r in problem_rows(cache=rc, fingerprint=H200)] == [problem_text(p) + " cast f32>bf16"]
    from autotrans.api import explain
    got = explain((300, 1000), "float32", axes=(1, 0), to="bfloat16", fingerprint=H200, cache_dir=tmp_path / "c")
    assert (got.problem, got.config, got.source) == (p, cfgs[1], "tuned")
    other = explain((300, 1000), "float32", axes=(1, 0), to="float16", fingerprint=H200, cache_dir=tmp_path / "c")
    assert other.source == "untuned" and other.config.cast == "f32>f16"
    with pytest.raises(ValueError, match="need axes"):
        explain((300, 1000), "float32", to="bfloat16", fingerprint=H200)
    one_row = as_strided(layout.canonical((4,), (4,), 4, (0,), 16, out_itemsize=2))   # no row dimension: no key
    assert one_row.rows == () and best_strided(one_row, H200, rc, cast="f32>bf16") is None


def test_a_conjugate_tunes_and_is_found_under_its_own_key(tmp_path):
    """permute(conj=True)'s problems: candidates of that epilogue only (the
    untuned one first), a reference with every imaginary part's sign bit
    flipped (and nothing else), a result stored and found under the
    epilogue's key only, which explain() then names."""
    from autotrans.api import explain
    from autotrans.api.permute import as_strided
    p = as_strided(layout.canonical((300, 1000), (8000, 8), 8, (1, 0), 16), 16)
    cfgs = strided_candidates(p, epilogue="conj32")
    assert len(cfgs) > 3 and all(c.epilogue == "conj32" for c in cfgs)
    assert cfgs[0] == default_strided(p, epilogue="conj32")
    assert all(c.epilogue == "none" for c in strided_candidates(p))
    src, plain, _ = host_buffers(p, 5)
    _, want, before = host_buffers(p, 5, epilogue="conj32")
    flip = np.zeros(want.size - 2 * GUARD, np.uint8)
    flip[7::8] = 0x80                                                   # the imaginary float32's sign bit
    assert np.array_equal(want[GUARD:-GUARD], plain[GUARD:-GUARD] ^ flip)
    assert np.array_equal(before[GUARD:-GUARD], ~want[GUARD:-GUARD])
    assert np.array_equal(want[:GUARD], plain[:GUARD]) and np.array_equal(want[-GUARD:], plain[-GUARD:])
    ref = np.ascontiguousarray(src.view(np.complex64).reshape(300, 1000).T.conj())   # x.T.conj(), bit for bit
    assert want[GUARD:-GUARD].tobytes() == ref.tobytes()
    rc = ResultCache(tmp_path / "c")
    key = problem_key(p, H200, epilogue="conj32")
    assert rc.put_problem(key, problem_record(key, best=cfgs[1], configs=cfgs[:2], n_candidates=2))
    assert best_strided(p, H200, rc, epilogue="conj32") == cfgs[1]
    assert best_strided(p, H200, rc) is None                            # the plain permutation: not tuned
    assert [r["problem"] for r in problem_rows(cache=rc, fingerprint=H200)] == [problem_text(p) + " conj32"]
    got = explain((300, 1000), "complex64", axes=(1, 0), conj=True, fingerprint=H200, cache_dir=tmp_path / "c")
    assert (got.problem, got.config, got.source) == (p, cfgs[1], "tuned")
    assert "tuned for this problem" in str(got)
    fresh = explain((300, 1000), "complex64", axes=(1, 0), conj=True, fingerprint=A100, cache_dir=tmp_path / "d")
    assert fresh.source == "untuned" and "] untuned rule" in str(fresh)
    assert str(fresh).endswith(" (tune it with --axes --conj)")
    fresh = explain((300, 1000), "complex64", axes=(1, 0), conj=True, fingerprint=H200, cache_dir=tmp_path / "d")
    assert fresh.source == "nearest" and fresh.config.epilogue == "conj32"      # a shipped conj32 problem's
    plain_choice = explain((300, 1000), "complex64", axes=(1, 0), fingerprint=H200, cache_dir=tmp_path / "c")
    assert plain_choice.source != "tuned" or plain_choice.config.epilogue == "none"


def test_problem_rows(tmp_path):
    rc = ResultCache(tmp_path / "c")
    for k in (problem_key(TILE, H200), problem_key(ROWS, A100), ProblemKey(H200, "0123456789abcdef-s0", ROWS)):
        assert rc.put_problem(k, problem_record(k))
    rows = problem_rows(all_devices=True, cache=rc)
    assert len(rows) == 3 and {r["problem"] for r in rows} == {problem_text(TILE), problem_text(ROWS)}
    mine = problem_rows(fingerprint=H200, cache=tmp_path / "c")
    assert sorted(r["current"] for r in mine) == [False, True]
    r = next(r for r in mine if r["current"])
    assert (r["kind"], r["config"], r["device"]) == ("tile", problem_record(problem_key(TILE, H200)).best.key, H200)


# -- the command line -------------------------------------------------------------------


@pytest.fixture
def run(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOTRANS_DEBUG", "COLUMNS")}
    env["AUTOTRANS_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")

    def go(*args):
        return subprocess.run([sys.executable, "-m", "autotrans", *map(str, args)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    go.cache = cache
    return go


def one_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("autotrans: error: "), err
    return lines[0]


@pytest.mark.parametrize("args, needle", [
    (["64x512x16x64", "--axes", "0,2,1"], "axes (0, 2, 1) are not a permutation of 0..3"),
    (["64x512x16x64", "--axes", "0,2,1,1"], "not a permutation"),
    (["8x8", "--axes", "1,a"], "bad axes '1,a'"),
    (["8x8", "--axes", "-1,0"], "bad axes"),
    (["8x8", "--axes", ""], "bad axes"),
    (["8x8", "4x4", "--axes", "1,0"], "exactly one SHAPE"),
    (["--axes", "1,0"], "exactly one SHAPE"),
    (["8x8", "--axes", "1,0", "--from", "x.jsonl"], "no --from"),
    (["8x8", "--axes", "1,0", "--devices", "all"], "no --from or --devices"),
    (["1x2x3x4x5x6x7x8x9", "--axes", "0,1,2,3,4,5,6,7,8"], "at most 8 dimensions"),
    (["4x0x4", "--axes", "0,1,2"], "bad shape '4x0x4': dimensions must be positive"),
    (["4x0x4x4", "--axes", "0,1,2,3"], "dimensions must be positive"),
    (["81x", "--axes", "0"], "bad shape '81x'"),
    (["64x512x16x64"], "bad shape '64x512x16x64': expected MxN or BxMxN"),  # no --axes: as before
    (["12"], "bad shape '12'"),
    (["8x8", "--axes", "1,0", "--dtype", "float33"], "unknown dtype"),
    (["8x8", "--to", "bfloat16"], "--to needs --axes"),
    (["8x8", "--axes", "1,0", "--to", "int8"], "casts between integers and floats are not built"),
    (["8x8", "--axes", "1,0", "--to", "float33"], "cast dst must be one of"),
])
def test_tune_axes_argument_errors(capsys, tmp_path, args, needle):
    assert main(["tune", *args, "--cache-dir", str(tmp_path), "--no-progress"]) == 2
    out, err = capsys.readouterr()
    assert needle in one_error(err) and out == ""


@pytest.mark.parametrize("shape, axes, dtype, printed", [
    ("64x512x16x64", "0,2,1,3", "float16", problem_text(ROWS)),
    ("300x800", "1,0", "float32", "transpose 300x800 of 4-byte elements"),
    ("4x8x2", "1,0,2", "float32", "transpose 4x8 of 8-byte elements"),
    ("2x3x4x5x6x7x8x9", "7,6,5,4,3,2,1,0", "int8", "ndtile:e1:m(2/181440,3/60480,4/15120,5/3024):n(9/40320,"),   # fused
])
def test_tune_axes_prints_the_problem_then_needs_a_gpu(run, no_gpu, shape, axes, dtype, printed):
    r = run("tune", shape, "--axes", axes, "--dtype", dtype, "--no-progress")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stdout.splitlines() == [r.stdout.splitlines()[0]]
    assert r.stdout.startswith(f"{shape} {dtype} axes {axes}: {printed}")
    assert "no GPU" in one_error(r.stderr) and "Traceback" not in r.stderr
    assert not (run.cache / "results.sqlite").exists()


def test_tune_axes_with_a_cast_prints_the_strided_problem_then_needs_a_gpu(run, no_gpu):
    r = run("tune", "300x800", "--axes", "1,0", "--to", "bfloat16", "--no-progress")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stdout == ("300x800 float32 axes 1,0 to bfloat16 (cast f32>bf16): "
                        "tile:e4:300x800:ldi3200:ldo600:sci4:b():o2\n")       # what permute(dtype=) runs
    assert "no GPU" in one_error(r.stderr)


def test_tune_axes_with_conj_prints_the_strided_problem_then_needs_a_gpu(run, no_gpu):
    r = run("tune", "300x800", "--axes", "1,0", "--dtype", "complex64", "--conj", "--no-progress")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stdout.startswith("300x800 complex64 axes 1,0 conj (conj32): tile:e8:300x800:"), r.stdout
    assert "no GPU" in one_error(r.stderr)
    real = run("tune", "300x800", "--axes", "1,0", "--dtype", "float64", "--conj", "--no-progress")
    plain = run("tune", "300x800", "--axes", "1,0", "--dtype", "float64", "--no-progress")
    assert real.stdout == plain.stdout and "conj" not in real.stdout   # a real array's conjugate is itself


def test_tune_axes_with_conj_of_a_real_dtype_says_it_changes_nothing(run):
    r = run("tune", "8x1x16", "--axes", "1,0,2", "--conj", "--no-progress")     # a copy: runs without a GPU
    assert r.returncode == 0 and r.stdout.startswith("8x1x16 float32 axes 1,0,2: copy of 512 bytes\n")
    assert r.stderr == ("autotrans: --conj changes nothing for float32: a real array's conjugate is itself "
                        "(as permute(conj=True))\n")

@pytest.mark.parametrize("argv, message", [
    (["300x800", "--conj"], "--conj needs --axes"),
    (["300x800", "--axes", "1,0", "--conj", "--to", "float16"], "--conj needs --axes, and takes no --to"),
])
def test_tune_conj_misuse_is_one_line(run, argv, message):
    r = run("tune", *argv)
    assert r.returncode == 2 and message in one_error(r.stderr), r.stderr


def test_tune_axes_of_a_copy_needs_nothing(run):
    r = run("tune", "8x1x16", "--axes", "1,0,2", "--no-progress")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.splitlines() == ["8x1x16 float32 axes 1,0,2: copy of 512 bytes",
                                     "a copy: nothing to tune (permute() runs it as a device-to-device copy)"]


def test_show_lists_strided_entries(run, no_gpu):
    rc = ResultCache(run.cache)
    rows_key, tile_key = problem_key(ROWS, H200), problem_key(TILE, A100)
    stale = ProblemKey(H200, "0123456789abcdef-s0", GATHER)
    for k in (rows_key, tile_key, stale):
        assert rc.put_problem(k, problem_record(k, time_us=12.5))
    r = run("show")
    assert r.returncode == 0, r.stderr
    assert "no cached results" not in r.stdout and "strided problems" in r.stdout
    for k in (rows_key, tile_key, stale):
        line = next(line for line in r.stdout.splitlines() if k.problem_text in line)
        best = problem_record(k).best.key
        assert best in line and "12.5" in line and "90%" in line and k.device in line
        assert (f"{best} *" in line) == (k is stale)
    assert "stale" in r.stdout


def test_show_of_an_empty_cache_still_says_so(run, no_gpu):
    r = run("show")
    assert r.returncode == 0 and "no cached results" in r.stdout


def test_short_or_narrowed_rows_run_in_input_order():
    """run_problem walks (B,S,H,D) -> (B,H,S,D) rows in input order (consecutive
    rows read contiguous bytes) below SHORT_ROW output bytes a row or when a cast
    narrows them, in output order otherwise; the reordered problem moves the
    same bytes to the same places (host reference)."""
    def rows(shape, e, out=None):
        return layout.canonical(shape, tuple(int(s) for s in np.zeros(shape, f"V{e}").strides), e, (0, 2, 1, 3),
                                16, **({} if out is None else {"out_itemsize": out}))
    short = rows((4, 64, 32, 8), 4)                            # 32-byte rows
    assert short.n * short.elem == 32 < SHORT_ROW
    walked = run_problem(short)
    assert [d.src for d in walked.rows] == sorted((d.src for d in short.rows), reverse=True)
    assert [d.src for d in short.rows] != [d.src for d in walked.rows]       # canonical: output order
    assert set(walked.rows) == set(short.rows)
    for a, b in zip(host_buffers(short, 5), host_buffers(walked, 5)):
        assert np.array_equal(a, b)
    long = rows((4, 64, 16, 64), 2)                             # 128-byte rows stay in output order
    assert run_problem(long) is long
    narrowed = rows((4, 64, 16, 64), 4, 2)                      # 256 bytes in, 128 out
    assert run_problem(narrowed, "f32>bf16").rows == walked_rows(narrowed)
    widened = rows((4, 64, 16, 64), 2, 4)                       # 128 in, 256 out
    assert run_problem(widened, "bf16>f32") is widened


def test_the_bshd_cast_tries_32_byte_vectors_first():
    """(8,4096,16,64) float32 -> bfloat16 (0,2,1,3), rows of 256 B in and 128
    out: the candidates hold rows' 32-byte vectors (2 x 16 B loaded, 16 B
    stored) of 1, 2 and 4 rows a thread besides the 16-byte ones, and the
    untuned rule takes the widest, of a tile row as long as the row. The
    default verifies through the emulator on a smaller batch of the layout."""
    from autotrans.kernels.strided import as_strided

    def bshd(shape):
        return run_problem(as_strided(layout.canonical(shape, layout.c_strides(shape, 4), 4, (0, 2, 1, 3),
                                                       out_itemsize=2)), "f32>bf16")
    p = bshd((8, 4096, 16, 64))
    cfgs = strided_candidates(p, cast="f32>bf16")
    wide = {f"rows:e4:{r}x64:t256:v32:r1:p0:none:row:strided:f32>bf16" for r in (32, 64, 128)}
    assert wide <= {c.key for c in cfgs} and {c.vec_bytes for c in cfgs} == {4, 8, 16, 32}
    assert cfgs[0] == default_strided(p, cast="f32>bf16")
    assert cfgs[0].key == "rows:e4:64x64:t256:v32:r1:p0:none:row:strided:f32>bf16"
    small = bshd((2, 40, 3, 64))
    src, want, before = host_buffers(small, 7, "f32>bf16")
    got = emulate_strided_many([(cfgs[0], small, src, before, 0, GUARD)])[0]
    assert np.array_equal(got, want)


def walked_rows(p):
    return tuple(sorted(p.rows, key=lambda d: -d.src))


def test_fixed_variants_are_the_configs_compiled_for_the_launch_and_compile_in_every_family():
    """tune_problem's variants: each config compiled for the problem's launch
    (its at::StridedArgs values constants), which runs that problem only;
    every strided family's compiles with real nvcc (AT_STRIDED_FIXED_ENTRY)."""
    from autotrans.api.permute import as_strided
    from autotrans.build.compile import compile_configs
    from autotrans.kernels.strided import launch_args
    from autotrans.tuning.strided import fixed_variants
    probs = [run_problem(layout.canonical(s, layout.c_strides(s, e), e, a)) for s, e, a in
             (((2, 64, 4, 67), 2, (0, 2, 1, 3)), ((9, 50, 64), 4, (1, 0, 2)),
              ((7, 9, 11, 13), 1, (3, 1, 0, 2)), ((5, 6, 7, 9), 8, (3, 1, 0, 2)))]
    probs.append(as_strided(layout.canonical((300, 1000), (4000, 4), 4, (1, 0), 16), 16))   # a 2-D tile
    picked = []
    for p in probs:
        firsts = list({c.variant: c for c in reversed(strided_candidates(p))}.values())
        fixed = fixed_variants(p, firsts + [firsts[0].fixed_to_args(launch_args(firsts[0], p)[1])], 1.0)
        assert len(fixed) == len(firsts) and [f.generic() for f in fixed] == firsts     # a fixed one stays out
        assert all(f.fixed_args == launch_args(f, p)[1] and not strided_problems(f, p, TUNE_ALIGN) for f in fixed)
        other = next(q for q in probs if q is not p)
        assert all(strided_problems(f, other, TUNE_ALIGN) for f in fixed)
        picked += fixed
    assert {"flat", "rows", "tile", "vec", "shift", "ndtile", "ndshift"} <= {f.variant for f in picked}
    built = compile_configs(picked, "sm_90")
    assert all(built[f.key].ok for f in picked), [built[f.key].error for f in picked if not built[f.key].ok][:1]
