"""tune_problem on the GPU: every strided candidate of a rows and a tile problem
compiled, verified bit-exactly (guards included) and timed; the record stored
under its ProblemKey and found by best_strided; the checker catches a wrong
output; ``autotrans tune SHAPE --axes`` and ``show`` end to end."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autotrans.core import layout
from autotrans.core.layout import RowsProblem, TileProblem
from autotrans.kernels.strided import launch_args
from autotrans.results.keys import problem_text
from autotrans.results.store import ResultCache
from autotrans.tuning.strided import (StridedBuffers, best_strided, problem_key, problem_rows,
                                      strided_candidates, tune_problem)

from test_problem_keys import canon

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parent.parent


ROWS = canon((8, 256, 16, 64), (0, 2, 1, 3), np.float16)            # (B, S, H, D) -> (B, H, S, D)
ODD_ROWS = canon((33, 7, 3), (1, 0, 2))                              # 12-byte rows: 4-byte words
TILE = canon((1000, 3000), (1, 0), view=np.s_[:, 100:2900])          # a transposed slice
GATHER = canon((700, 900), (1, 0), view=np.s_[::2, ::3])             # columns strided too
BATCHED = canon((6, 500, 400), (0, 2, 1), np.float16, view=np.s_[::2, :, :300])
ODD_TILE = canon((301, 7, 263), (2, 1, 0), np.int8)                  # rows of 263 and 301 B, pitches at any byte


@pytest.mark.parametrize("problem", [ROWS, ODD_ROWS, TILE, GATHER, BATCHED, ODD_TILE], ids=problem_text)
def test_tune_problem_verifies_every_candidate_and_stores_the_winner(tmp_path, problem):
    from autotrans.backend.cuda import device
    assert isinstance(problem, (RowsProblem, TileProblem))
    rc = ResultCache(tmp_path / "c")
    dev = device()
    cfgs = strided_candidates(problem, dev.limits)
    rec = tune_problem(problem, cache=rc, progress=False, reps=3)
    assert rec.failures == (), rec.failures
    keys = {c.key for c in rec.candidates}
    assert {k for k in keys if "@" not in k} == {c.key for c in cfgs}    # every candidate verified and timed
    fixed = [c.config for c in rec.candidates if c.config.fixed]         # and the fastest, compiled for this launch
    assert 1 <= len(fixed) <= 5 and all(f.generic() in cfgs for f in fixed)
    assert all(f.fixed_args == launch_args(f, problem)[1] for f in fixed)
    assert rec.best.layout == "strided" and rec.best.generic() in cfgs
    assert rec.shape == problem_key(problem).shape and rec.elem_bytes == problem.elem
    assert rec.time_us == min(c.median_us for c in rec.candidates if c.retimed)
    assert 0 < rec.frac_memcpy < 1.5 and rec.memcpy_us > 0
    assert rc.get_problem(problem_key(problem)) == rec
    assert best_strided(problem, dev.id.text, rc) == rec.best
    assert best_strided(problem, dev.id, rc, align=problem.elem) is not None
    rows = problem_rows(cache=rc)
    assert [r["problem"] for r in rows] == [problem_text(problem)] and rows[0]["current"]


ODD_CAST = layout.canonical((301, 7, 263), layout.c_strides((301, 7, 263), 4), 4, (2, 1, 0), out_itemsize=2)


@pytest.mark.parametrize("problem, cast", [(ODD_TILE, "none"), (BATCHED, "none"), (ODD_CAST, "f32>bf16")],
                         ids=["int8 (2,1,0)", "float16 view", "float32->bfloat16 (2,1,0)"])
def test_strips_of_shift_tiles_verify_on_the_gpu(problem, cast):
    """KernelConfig.strip: strips of 2, 4 and 8 of every strided shift candidate,
    with seams (KernelConfig.seam) and without, each verified bit-exactly
    (guard bands included) by the tuner, on rows at any byte alignment,
    batched views, and a cast."""
    import dataclasses
    base = [c for c in strided_candidates(problem, cast=cast) if c.variant == "shift"]
    cfgs = [dataclasses.replace(c, strip=k, seam=m) for c in base for k in (2, 4, 8) for m in (0, 1)]
    assert base and all(c.strip > 1 for c in cfgs)
    rec = tune_problem(problem, save=False, progress=False, reps=2, top=3, configs=cfgs, cast=cast)
    assert rec.failures == (), rec.failures
    assert {c.key for c in rec.candidates} == {c.key for c in cfgs}


def _fused(shape, axes, dtype, view=np.s_[...], batch=False):
    from autotrans.tuning.strided import run_problem
    p = run_problem(canon(shape, axes, dtype, view=view))
    assert isinstance(p, layout.NdTileProblem) and bool(p.batch) == batch, p
    return p


@pytest.mark.parametrize("problem", [
    _fused((37, 5, 29, 41), (3, 2, 1, 0), np.int8),                  # rows of 41 B at any alignment
    _fused((41, 9, 3, 97), (3, 2, 1, 0), np.float16),
    _fused((9, 70, 37), (2, 1, 0), np.float32, view=np.s_[:, ::2]),   # every other row: a 3-D (2, 1, 0)
    _fused((7, 65, 29, 61), (2, 0, 3, 1), np.float16, batch=True),   # 7 matrices of 65 x 1769
    _fused((5, 130, 9, 41), (2, 0, 3, 1), np.int8, batch=True),      # 5 matrices of 130 x 369
], ids=["int8 4-D", "float16 4-D", "float32 3-D view", "float16 4-D batch", "int8 4-D batch"])
def test_ndshift_verifies_on_the_gpu(problem):
    """Every candidate of a fused problem, ndshift (shift tiles through offset
    tables, NOTES 49; batch dims since session 30) and ndtile alike, verified
    bit-exactly (guard bands included) by the tuner, then timed."""
    cfgs = strided_candidates(problem)
    assert {c.variant for c in cfgs} == {"ndtile", "ndshift"}
    rec = tune_problem(problem, save=False, progress=False, reps=2, top=3)
    assert rec.failures == (), rec.failures
    assert {c.key for c in rec.candidates if not c.config.fixed} == {c.key for c in cfgs}
    assert {c.config.generic() for c in rec.candidates if c.config.fixed} <= set(cfgs)   # compiled for the launch too


def test_tune_problem_without_saving(tmp_path):
    rc = ResultCache(tmp_path / "c")
    rec = tune_problem(ODD_ROWS, cache=rc, save=False, progress=False, reps=2,
                       configs=strided_candidates(ODD_ROWS)[:2])
    assert len(rec.candidates) == 2 and rc.problem_items() == []


def test_tune_problem_refuses_configs_that_cannot_run_it():
    with pytest.raises(ValueError, match="cannot run"):
        tune_problem(TILE, save=False, progress=False, configs=strided_candidates(ROWS)[:1])


class _Copy:
    """A stand-in kernel whose launch copies the input's first bytes to the
    output (a real GPU write, of the wrong bytes)."""

    def __init__(self, cfg, nbytes):
        self.cfg, self.nbytes = cfg, nbytes     # cfg: the launch shape's, a real candidate's

    def strided_launcher(self, bmn, args):
        from autotrans.backend import memory
        return lambda src, dst, stream=0: memory.memcpy_dtod(dst, src, self.nbytes)


def test_the_checker_catches_wrong_output_and_guard_writes():
    from autotrans.backend.cuda import device
    from autotrans.tuning.loader import kernel
    bufs = StridedBuffers(TILE, seed=5)
    good = kernel(strided_candidates(TILE, device().limits)[0])
    assert bufs.verify(good) is None
    wrong, guards = map(int, re.findall(r"\d+", bufs.verify(_Copy(good.cfg, bufs.out_bytes))))
    assert wrong > bufs.out_bytes // 2 and guards == 0
    wrong, guards = map(int, re.findall(r"\d+", bufs.verify(_Copy(good.cfg, bufs.out_bytes + 2048))))
    assert wrong > bufs.out_bytes // 2 and 1900 < guards <= 2048      # (random bytes may equal POISON)
    assert bufs.verify(good) is None                                    # each check starts afresh


@pytest.fixture
def run(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOTRANS_DEBUG", "COLUMNS")}
    env["AUTOTRANS_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")

    def go(*args):
        return subprocess.run([sys.executable, "-m", "autotrans", *map(str, args)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    go.cache = cache
    return go


def test_cli_tunes_a_permutation_and_show_lists_it(run):
    r = run("tune", "8x256x16x64", "--axes", "0,2,1,3", "--dtype", "float16", "--no-progress")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"8x256x16x64 float16 axes 0,2,1,3: {problem_text(ROWS)}"
    assert lines[1].startswith(f"{problem_text(ROWS)}: rows:e16:") and "of memcpy" in lines[1]
    assert [k.problem for k, _ in ResultCache(run.cache).problem_items()] == [ROWS]
    r = run("show")
    assert r.returncode == 0 and problem_text(ROWS) in r.stdout
    r = run("tune", "300x800", "--axes", "1,0", "--no-progress")           # a dense transpose: tune()
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "300x800 float32 axes 1,0: transpose 300x800 of 4-byte elements"
    assert [k.shape for k, _ in ResultCache(run.cache).items()] == [(1, 300, 800)]
