"""api.strided_select: the strided config a permutation's problem runs (tuned,
shipped, nearest tuned problem, untuned rule), and results.shipped's problem
rows. Real sqlitedict caches and export files in tmp dirs; no GPU."""
import warnings

import numpy as np
import pytest

from autotrans.api.strided_select import choose_strided, problem_class, strided_config
from autotrans.core import layout
from autotrans.core.device import Limits
from autotrans.results.keys import ProblemKey
from autotrans.results.shipped import shipped_problems
from autotrans.results.store import ResultCache
from autotrans.results.transfer import export_text
from autotrans.tuning.space import space_id
from autotrans.api import predict
from autotrans.api.predict import rerank_problem
from autotrans.kernels.strided import strided_shape
from autotrans.tuning.strided import run_problem, runs_problem, strided_candidates

from conftest import A100, H200
from test_problem_keys import problem_record

LIMITS = Limits(smem_per_block=232448)
OTHER_DRIVER = "NVIDIA H200|sm_90|132sm|driver 999.1|cuda 13.1"


def canon(shape, view, dtype=np.float32):
    x = np.zeros(shape, dtype)[view]
    return layout.canonical(x.shape, x.strides, x.itemsize, (1, 0))


SMALL = canon((300, 1000), np.s_[:, 100:900])        # transposed slices, 16-byte aligned pitches
LARGE = canon((600, 2000), np.s_[:, 200:1800])
HUGE = canon((3000, 20000), np.s_[:, 200:18000])
ODD = canon((301, 1001), np.s_[:, 1:900])             # pitches of 4 bytes: another class


def key(problem, device=H200, templates=None, **kw):
    return ProblemKey(device, templates or space_id(), problem, **kw)


def tuned(problem, best_index=1, **kw):
    """A record of ``problem`` whose winner is its best_index-th strided candidate."""
    k = key(problem, **kw)
    cfgs = strided_candidates(problem, LIMITS, cast=k.cast, epilogue=k.epilogue)
    return k, problem_record(k, best=cfgs[best_index], configs=cfgs)


def choose(problem, cache, shipped=(), align=16, **kw):
    return choose_strided(problem, align, kw.pop("epilogue", "none"), H200, LIMITS, cache, shipped=list(shipped),
                          **kw)


def test_problem_class_is_kind_sizes_alignment_and_unit_inner_stride():
    assert problem_class(SMALL) == problem_class(LARGE) == ("TileProblem", 4, 4, 16, True)
    assert problem_class(ODD) == ("TileProblem", 4, 4, 4, True)
    gather = canon((70, 300), np.s_[::2, ::3])
    assert problem_class(gather)[-1] is False


def test_untuned_without_any_result(tmp_path):
    ch = choose(LARGE, ResultCache(tmp_path))
    assert (ch.config, ch.source) == (strided_config(LARGE, 16, LIMITS), "untuned")


def test_the_nearest_tuned_problem_of_the_same_class_gives_its_predicted_best(tmp_path):
    rc = ResultCache(tmp_path)
    for p in (SMALL, HUGE):
        assert rc.put_problem(*tuned(p))
    k, rec = tuned(ODD)
    assert rc.put_problem(k, rec)                     # nearer in size than HUGE, but of another class
    ch = choose(LARGE, rc)
    small = tuned(SMALL)[1]
    runs = lambda c: runs_problem(c, LARGE, 16, limits=LIMITS)
    assert ch.source == "nearest" and ch.config == rerank_problem(small, SMALL, LARGE, runs)
    assert ch.config in {c.config for c in small.candidates}
    assert "log-distance" in ch.reason
    assert rerank_problem(small, SMALL, SMALL, runs) == small.best    # where it was tuned: its winner
    assert choose(ODD, rc).source == "tuned"          # its own record stays first


def nd(shape, axes, e=2):
    return run_problem(layout.canonical(shape, layout.c_strides(shape, e), e, axes))


def test_a_nearest_tile_that_leaves_rows_idle_here_gives_way_to_one_that_fills_them(tmp_path):
    """A 64-row tile won 61-row matrices; on 65 rows it leaves half its rows
    idle, so the 80-row tile, 5% slower there, is predicted faster (the rule's
    pick too, and the H100's fastest on 65 rows: 0.73 of a memcpy against
    0.53, NOTES 53)."""
    there, here = nd((37, 61, 101, 53), (2, 0, 3, 1)), nd((67, 65, 129, 61), (2, 0, 3, 1))
    assert problem_class(there) == problem_class(here) and (there.m, here.m) == (61, 65)
    cands = {c.key: c for c in strided_candidates(there, LIMITS)}
    t64, t80 = cands["ndshift:e2:64x64:t256:v16:r2:p2:none:col:strided"], cands["ndshift:e2:80x64:t128:v16:r2:p2:xor:col:strided"]
    rc = ResultCache(tmp_path)
    k = key(there)
    rec = problem_record(k, best=t64, configs=[t64, t80], n_candidates=2)
    assert rec.candidates[1].median_us / rec.candidates[0].median_us == pytest.approx(1.1)
    assert rc.put_problem(k, rec)
    ch = choose(here, rc)
    assert (ch.config, ch.source) == (t80, "nearest") and "tile fill" in ch.reason
    assert choose(nd((37, 61, 103, 53), (2, 0, 3, 1)), rc).config == t64     # 61 rows again: the winner


def test_a_rows_winner_stays_where_its_idle_columns_move_no_bytes(tmp_path):
    """Rows of 251 float32 won by 4x256 (fill 0.98); rows of 263 fill half its
    second column block, which moves nothing there, so the winner stays
    (ROWS_FILL_WEIGHT 0): on an H100 untuned 130.7 µs with 64x16, the fill's
    pick, against 104.7 tuned with 4x256 (NOTES 63). A tile problem's idle
    rows do cost (the test above)."""
    there, here = nd((233, 457, 251), (1, 0, 2), 4), nd((257, 509, 263), (1, 0, 2), 4)
    assert isinstance(here, layout.RowsProblem) and problem_class(there) == problem_class(here)
    cands = {c.key: c for c in strided_candidates(there, LIMITS)}
    wide = cands["rows:e4:4x256:t128:v4:r1:p0:none:row:strided"]
    short = cands["rows:e4:64x16:t256:v4:r1:p0:none:row:strided"]
    rc = ResultCache(tmp_path)
    k = key(there)
    assert rc.put_problem(k, problem_record(k, best=wide, configs=[wide, short], n_candidates=2))
    ch = choose(here, rc)
    assert (ch.config, ch.source) == (wide, "nearest") and "its winner" in ch.reason
    assert predict.fill(short, strided_shape(here)) > 0.9 > 0.6 > predict.fill(wide, strided_shape(here))


def test_other_casts_epilogues_devices_and_templates_are_not_near(tmp_path):
    rc = ResultCache(tmp_path)
    assert rc.put_problem(*tuned(SMALL, device=A100))
    assert rc.put_problem(*tuned(SMALL, templates="0123456789abcdef-s1"))
    assert choose(LARGE, rc).source == "untuned"
    complex_small = canon((300, 1000), np.s_[:, 100:900], np.complex64)
    complex_large = canon((600, 2000), np.s_[:, 200:1800], np.complex64)
    assert rc.put_problem(*tuned(complex_small, epilogue="conj32"))
    assert choose(complex_large, rc).source == "untuned"
    conj = choose(complex_large, rc, epilogue="conj32")
    assert conj.source == "nearest" and conj.config.epilogue == "conj32"


def test_a_nearest_whose_configs_cannot_run_here_is_passed_over(tmp_path):
    """At 4-byte aligned pointers no 16-byte vector tile runs: a record
    holding only those is passed over, and the untuned rule runs."""
    rc = ResultCache(tmp_path)
    k = key(SMALL)
    vec16 = [c for c in strided_candidates(SMALL, LIMITS) if c.vec_bytes == 16][:2]
    assert len(vec16) == 2
    assert rc.put_problem(k, problem_record(k, best=vec16[0], configs=vec16))
    assert choose(LARGE, rc).config == vec16[0]
    assert choose(LARGE, rc, align=4).source == "untuned"


def test_a_shipped_result_of_the_same_gpu_model_serves_its_problem(tmp_path):
    rc = ResultCache(tmp_path)
    k, rec = tuned(LARGE, best_index=2, device=OTHER_DRIVER)
    ch = choose(LARGE, rc, shipped=[(k, rec)])
    assert (ch.config, ch.source) == (rec.best, "shipped")
    assert ch.reason.endswith("(shipped with autotrans, tuned on NVIDIA H200)")
    assert choose(SMALL, rc, shipped=[(k, rec)]).source == "nearest"
    a100 = tuned(LARGE, best_index=2, device=A100)
    assert choose(LARGE, rc, shipped=[a100]).source == "untuned"
    own = tuned(LARGE, best_index=3)
    assert rc.put_problem(*own)
    assert choose(LARGE, rc, shipped=[(k, rec)]).config == own[1].best        # the user's own result first


def test_shipped_problems_are_read_from_the_exports_problem_rows(tmp_path):
    k, rec = tuned(SMALL)
    bad = {"key": key(LARGE).text, "record": rec.to_json()}                  # another problem's record
    text = export_text([], [(k, rec)])
    (tmp_path / "h200.json").write_text(text)
    assert shipped_problems(tmp_path) == [(k, rec)]
    import json
    doc = json.loads(text)
    doc["problems"].append(bad)
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "x.json").write_text(json.dumps(doc))
    with pytest.warns(Warning, match="skipped 1 invalid"):
        got = shipped_problems(tmp_path / "more")
    assert got == [(k, rec)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert shipped_problems(tmp_path) == [(k, rec)]                     # read once per folder


def test_for_device_keeps_the_shipped_problems_of_the_devices_model():
    """results.shipped.for_device: a device takes the shipped rows of its
    model (any driver), none of another model's; None keeps them all."""
    from autotrans.results.shipped import for_device
    mine, other = tuned(LARGE, device=OTHER_DRIVER), tuned(SMALL, device=A100)
    assert for_device([mine, other], H200) == [mine]
    assert for_device([mine, other], A100) == [other]
    assert for_device([mine, other], None) == [mine, other]
    # a sibling model's rows (the same architecture and SM count) fill in the problems its own lack
    h100 = "NVIDIA H100 80GB HBM3|sm_90|132sm|driver 580.159.04|cuda 13.0"
    theirs, both = tuned(SMALL, device=h100), tuned(LARGE, device=h100)
    assert for_device([both, mine, theirs], H200) == [mine, theirs]
    assert for_device([both, mine, theirs], h100) == [both, theirs]


def test_problem_rows_shipped_are_the_shipped_problems_not_the_caches(tmp_path):
    from autotrans.tuning.strided import problem_rows
    rc = ResultCache(tmp_path)
    assert rc.put_problem(*tuned(SMALL))
    assert len(problem_rows(fingerprint=H200, cache=rc)) == 1
    assert len(problem_rows(all_devices=True, cache=rc, shipped=True)) == len(shipped_problems())


def test_a_single_row_without_a_key_takes_the_untuned_rule(tmp_path):
    from autotrans.kernels.strided import as_strided
    rc = ResultCache(tmp_path)
    assert rc.put_problem(*tuned(SMALL))
    one_row = as_strided(layout.canonical((4,), (4,), 4, (0,), 16, out_itemsize=2))
    ch = choose(one_row, rc, cast="f32>bf16")
    assert ch.source == "untuned" and ch.config.cast == "f32>bf16"
