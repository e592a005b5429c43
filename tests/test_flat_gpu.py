"""The flat family on the GPU: every flat and flatv candidate of odd rows
(1-, 2- and 4-byte elements, runs of odd bytes, the runs' dimension first or
last, rows shorter than a vector) verified bit-exactly by tune_problem
(guards included) and timed; and permute() of such a problem, its cache
holding a flat or a flatv winner, equal to NumPy."""
from __future__ import annotations

import numpy as np
import pytest

from autotrans import families
from autotrans.results.store import ResultCache
from autotrans.tuning.strided import run_problem, strided_candidates, tune_problem

from test_problem_keys import canon

pytestmark = pytest.mark.gpu

CASES = [((4, 300, 8, 67), (0, 2, 1, 3), np.float16), ((300, 311, 70), (1, 0, 2), np.int8),
         ((301, 257, 67), (1, 0, 2), np.int8), ((97, 211, 263), (1, 0, 2), np.float32),
         ((513, 129, 35), (1, 0, 2), np.float16), ((16, 512, 12, 3), (0, 2, 1, 3), np.float32)]


@pytest.mark.parametrize("shape, axes, dtype", CASES, ids=lambda v: str(v))
def test_every_flat_candidate_is_exact(tmp_path, shape, axes, dtype):
    from autotrans.backend.cuda import device
    problem = run_problem(canon(shape, axes, dtype))
    flats = [c for c in strided_candidates(problem, device().limits) if c.variant in ("flat", "flatv")]
    shapes = len(families.of("flat").SHAPES)
    one = problem.elem == 1                                # canonical() may fuse int8 pairs (rows of 70)
    wide = shapes if one and problem.n >= 16 else 0       # flatv: rows of 16 int8 or more
    runs = 2 * (len(families.of("flat").RUNS) - 1)          # the untuned shape and 256 x 1 at 2 and 4 runs a block
    assert len(flats) == shapes - (2 if one else 0) + runs + wide   # 1-byte elements: MAX_LOADS
    rec = tune_problem(problem, cache=ResultCache(tmp_path / "c"), progress=False, reps=3, configs=flats)
    assert rec.failures == (), rec.failures
    assert {c.key for c in rec.candidates} == {c.key for c in flats} and rec.best.variant in ("flat", "flatv")


@pytest.mark.parametrize("variant", ["flat", "flatv"])
def test_permute_runs_a_tuned_flat_kernel_exactly(variant):
    import autotrans
    from autotrans.api import launch
    from test_permute_gpu import host_random, to_torch, torch_host
    shape, axes = (301, 257, 67), (1, 0, 2)                 # rows of 67 int8: flatv's candidates
    problem = run_problem(canon(shape, axes, np.int8))
    flats = [c for c in strided_candidates(problem) if c.variant == variant]
    rec = tune_problem(problem, progress=False, reps=3, configs=flats)     # into the tests' cache folder
    ch = autotrans.explain(shape, "int8", axes=axes)
    assert ch.source == "tuned" and ch.config == rec.best and rec.best.variant == variant
    launch.forget()
    h = host_random(shape, np.int8, 6)
    got = torch_host(autotrans.permute(to_torch(h), axes))
    assert got.tobytes() == np.ascontiguousarray(h.transpose(axes)).tobytes()
