"""ProblemKey (a strided canonical problem's cache key) and the problems' table
of the store, on real SQLite files in tmp folders (no GPU)."""
from __future__ import annotations

import json
import sqlite3
import time
import warnings

import numpy as np
import pytest

from autotrans.core import layout
from autotrans.core.device import DeviceId
from autotrans.core.layout import CopyProblem, Dim, RowsProblem, TileProblem, TransposeProblem
from autotrans.core.problem import dtype_of_size, gbps
from autotrans.kernels.config import KernelConfig
from autotrans.kernels import strided as kernels_strided
from autotrans.kernels.strided import strided_shape
from autotrans.results import db
from autotrans.results.keys import (PROBLEM_TABLE, CacheKey, ProblemKey, check_problem, problem_from_text,
                                    problem_text)
from autotrans.results.record import Candidate, TuneRecord
from autotrans.results.store import CacheWarning, InvalidRecordWarning, ResultCache
from autotrans.tuning.strided import strided_candidates

from conftest import A100, H200, make_record

SPACE = "0123456789abcdef-s4"


def canon(shape, axes, dtype=np.float32, view=None):
    """The canonical problem of permuting a host array of ``shape`` (or a view of it)."""
    x = np.zeros(shape, dtype)
    if view is not None:
        x = x[view]
    return layout.canonical(x.shape, x.strides, x.itemsize, axes)


ROWS = canon((64, 512, 16, 64), (0, 2, 1, 3), np.float16)              # (B, S, H, D) -> (B, H, S, D)
TILE = canon((300, 1000), (1, 0), view=np.s_[:, 100:900])              # a transposed slice
GATHER = canon((70, 300), (1, 0), view=np.s_[::2, ::3])                # columns strided too
BATCHED = canon((6, 50, 40), (0, 2, 1), view=np.s_[::2, :, :30])       # batch of pitched matrices
PROBLEMS = [ROWS, TILE, GATHER, BATCHED]


def pkey(problem=ROWS, device=H200, templates=SPACE):
    return ProblemKey(device, templates, problem)


def problem_record(key: ProblemKey, *, best=None, n_candidates=3, time_us=10.0, configs=None) -> TuneRecord:
    """A valid record for ``key`` of the strided candidates that run its
    problem (``best``: the one to put first), with made-up timings."""
    cfgs = list(configs or strided_candidates(key.problem))
    if best is not None:
        cfgs = [best] + [c for c in cfgs if c != best]
    nbytes = layout.moved_bytes(key.problem)
    rows = tuple(Candidate(c.key, time_us * (1 + i / 10), time_us * (1 + i / 10), time_us * (1 + i / 10), 5,
                           gbps(nbytes, time_us * (1 + i / 10)), 32, i < 2)
                 for i, c in enumerate(cfgs[:n_candidates]))
    dev = DeviceId.from_text(key.device)
    return TuneRecord(cfgs[0], key.shape, key.elem_bytes, dtype_of_size(key.elem_bytes).name, time_us, time_us,
                      time_us, gbps(nbytes, time_us), time_us * 0.9, gbps(nbytes, time_us * 0.9), 0.9, rows, (),
                      dev, 50 << 20, "2026-01-02T03:04:05+00:00", 1.5, (("space", key.templates),))


def raw_insert(rc: ResultCache, rows, table=PROBLEM_TABLE):
    con = sqlite3.connect(rc.path)
    with con:
        con.execute(db.make_table(table))
        con.executemany(f'INSERT OR REPLACE INTO "{table}" (key, value) VALUES (?, ?)', rows)
    con.close()


def raw_keys(rc: ResultCache, table=PROBLEM_TABLE) -> list:
    con = sqlite3.connect(rc.path)
    try:
        return [k for (k,) in con.execute(f'SELECT key FROM "{table}" ORDER BY key')]
    finally:
        con.close()


@pytest.fixture
def rc(tmp_path):
    return ResultCache(tmp_path / "c")


# -- the problems and their text -----------------------------------------------------


def test_the_problems_are_strided_ones():
    assert isinstance(ROWS, RowsProblem) and all(isinstance(p, TileProblem) for p in PROBLEMS[1:])
    assert GATHER.sci != GATHER.elem and BATCHED.batch


def test_problem_text_is_explicit_and_stable():
    assert problem_text(ROWS) == "rows:e16:n8:r(64/1048576/1048576,16/128/65536,512/2048/128)"
    assert problem_text(TILE) == "tile:e4:300x800:ldi4000:ldo1200:sci4:b()"
    t = TileProblem(4, 3, 5, 8, 12, 4, (Dim(7, 1000, 60),))
    assert problem_text(t) == "tile:e4:3x5:ldi8:ldo12:sci4:b(7/1000/60)"


@pytest.mark.parametrize("problem", PROBLEMS)
def test_problem_text_round_trip(problem):
    text = problem_text(problem)
    assert problem_from_text(text) == problem
    assert problem_text(problem_from_text(text)) == text


def test_key_text_format_and_round_trip():
    k = pkey()
    assert k.text == (f"p1|{SPACE}|rows:e16:n8:r(64/1048576/1048576,16/128/65536,512/2048/128)|none|{H200}")
    assert (k.kind, k.elem_bytes, k.epilogue, k.schema) == ("rows", 16, "none", 1)
    assert k.shape == strided_shape(ROWS) == (1, 64 * 16 * 512, 8)
    assert k.hardware == "NVIDIA H200|sm_90|132sm"
    for p in PROBLEMS:
        key = pkey(p, A100)
        back = ProblemKey.from_text(key.text)
        assert back == key and hash(back) == hash(key) and back.problem == p and back.device == A100
    assert pkey(TILE).kind == "tile" and pkey(TILE).shape == (1, TILE.m, TILE.n)


def test_key_accepts_a_device_id_and_numpy_ints():
    p = TileProblem(np.int64(4), np.int32(3), 5, np.int64(8), 12, 4, (Dim(np.int64(7), 1000, 60),))
    k = ProblemKey(DeviceId.from_text(H200), SPACE, p)
    assert k.device == H200 and type(k.problem.m) is int and type(k.problem.batch[0].size) is int
    assert k == ProblemKey(H200, SPACE, TileProblem(4, 3, 5, 8, 12, 4, (Dim(7, 1000, 60),)))


GOOD = pkey().text


@pytest.mark.parametrize("junk", [
    "", "x", GOOD.replace("p1|", "v1|"), GOOD.replace("n8", "n08"), GOOD.replace("n8", "n 8"),
    GOOD.replace("e16", "e3"), GOOD.replace("n8", "n0"), GOOD.replace("64/1048576", "64/1048577"),
    GOOD.replace("|none|", "|relu|"), GOOD.replace("|none|", "||"), GOOD.replace("cuda 13.0", "cuda"),
    GOOD.replace("rows:", "copy:"), GOOD.replace("r(64", "r(0"), GOOD.replace(",512/2048/128)", ")x"),
    GOOD.replace("p1|", "p-1|"), GOOD.replace("(64/1048576/1048576,16/128/65536,512/2048/128)", "()"),
    GOOD.replace("(64/", "(" + "2/16/16," * 7 + "64/"),             # 10 row dimensions
    f"p1|{SPACE}|tile:e4:3x5:ldi8:ldo12:sci4:b({','.join(['2/8/8'] * 8)})|none|{H200}",  # 8 batch dimensions
    f"p1|{SPACE}|tile:e4:3x5:ldi8:ldo12:sci6:b()|none|{H200}",       # sci not a multiple of elem
    f"p1|{SPACE}|tile:e4:{2**62}x5:ldi8:ldo12:sci4:b()|none|{H200}",  # over 2**62 bytes
    CacheKey(H200, SPACE, (1, 64, 64), 4).text, GOOD + "x" * 1000,
])
def test_key_from_text_rejects_junk(junk):
    with pytest.raises(ValueError, match="not a (canonical )?problem key"):
        ProblemKey.from_text(junk)


@pytest.mark.parametrize("junk", [None, 12, b"p1|x"])
def test_key_from_text_rejects_what_is_not_text(junk):
    with pytest.raises(ValueError, match="not a problem key"):
        ProblemKey.from_text(junk)


def test_a_cast_has_its_own_key_slot():
    """A cast-permutation's key names the cast where the epilogue goes (they
    never combine): its own entry, read back as written; a cast must convert
    the problem's element sizes, and a problem that changes them needs one."""
    cast = layout.canonical((300, 1000), (4000, 4), 4, (1, 0), 16, out_itemsize=2)
    tile = kernels_strided.as_strided(cast)
    k = ProblemKey(H200, SPACE, tile, cast="f32>bf16")
    assert k.text.endswith(f"|f32>bf16|{H200}") and ProblemKey.from_text(k.text) == k
    assert ProblemKey.from_text(k.text).cast == "f32>bf16" and k != ProblemKey(H200, SPACE, tile, cast="f32>f16")
    assert ProblemKey.from_text(pkey(TILE).text).cast == "none"
    with pytest.raises(ValueError, match="does not convert"):
        ProblemKey(H200, SPACE, tile)                                   # 4 -> 2 bytes without a cast
    with pytest.raises(ValueError, match="does not convert"):
        ProblemKey(H200, SPACE, TILE, cast="f32>bf16")                  # a cast of a 4 -> 4 byte problem
    with pytest.raises(ValueError, match="cast must be"):
        ProblemKey(H200, SPACE, tile, cast="f32>f8")
    assert ProblemKey.from_text(k.text.replace("|f32>bf16|", "|f32>f16|")).cast == "f32>f16"
    with pytest.raises(ValueError, match="not a problem key"):
        ProblemKey.from_text(k.text.replace("|f32>bf16|", "|f64>f32|"))   # 8 -> 4 bytes: not this problem's

def test_key_constructor_validation():
    for p in (CopyProblem(64), TransposeProblem(4, (1, 8, 8)), "rows:e4:n1:r(2/4/4)", None):
        with pytest.raises(TypeError, match="TileProblem or RowsProblem"):
            ProblemKey(H200, SPACE, p)
    bad = {
        "elem must be": RowsProblem(3, 4, (Dim(2, 12, 12),)),
        "n must be": RowsProblem(4, 0, (Dim(2, 12, 12),)),
        "rows must have 1 to 7": RowsProblem(4, 2, ()),
        r"rows\[0\] src": RowsProblem(4, 2, (Dim(2, -8, 8),)),
        r"rows\[0\] size must be an int": RowsProblem(4, 2, (Dim(True, 8, 8),)),
        r"rows\[0\] must be a Dim": RowsProblem(4, 2, ((2, 8, 8),)),
        "ldo 6 is not a multiple": TileProblem(4, 3, 5, 8, 6, 4, ()),
        "batch must have 0 to 7": TileProblem(4, 3, 5, 8, 12, 4, (Dim(2, 8, 8),) * 8),
        "over 2..62 bytes": TileProblem(4, 2 ** 40, 2 ** 40, 4, 4, 4, ()),
    }
    for match, p in bad.items():
        with pytest.raises(ValueError, match=match):
            ProblemKey(H200, SPACE, p)
    with pytest.raises(ValueError, match="templates"):
        ProblemKey(H200, "a|b", ROWS)
    with pytest.raises(ValueError, match="epilogue"):
        ProblemKey(H200, SPACE, ROWS, epilogue="scale")
    with pytest.raises(ValueError, match="device"):
        ProblemKey("no device", SPACE, ROWS)


def test_check_problem_returns_a_clean_copy():
    assert check_problem(ROWS) == ROWS
    assert check_problem(TILE) is not TILE and check_problem(TILE) == TILE


# -- the store: the problems' table ----------------------------------------------------


def test_put_get_round_trip(rc):
    k = pkey()
    rec = problem_record(k)
    assert rc.get_problem(k) is None
    assert rc.put_problem(k, rec)
    got = rc.get_problem(k)
    assert got == rec and got.best.layout == "strided" and got.shape == k.shape
    assert rc.put_problem(k, rec.to_json())          # the stored form is accepted too
    assert rc.get_problem(pkey(device=A100)) is None
    assert rc.get_problem(pkey(templates="other-s4")) is None
    assert rc.get_problem(pkey(TILE)) is None


def test_problem_rows_live_in_their_own_table_of_the_same_file(rc):
    k = pkey()
    assert rc.put_problem(k, problem_record(k))
    ck = CacheKey(H200, SPACE, (1, 64, 128), 4)
    assert rc.put(ck, make_record(ck.shape, 4, H200, n_candidates=2))
    assert raw_keys(rc) == [k.text]
    assert raw_keys(rc, "results_v1") == [ck.text]
    assert [key for key, _ in rc.items()] == [ck]
    assert [key for key, _ in rc.problem_items()] == [k]
    con = sqlite3.connect(rc.path)
    value = con.execute(f'SELECT value FROM "{PROBLEM_TABLE}"').fetchone()[0]
    con.close()
    assert json.loads(value)["key"] == problem_record(k).best.key


def test_sqlitedict_reads_the_problems_table(rc):
    sqlitedict = pytest.importorskip("sqlitedict")
    k = pkey(TILE)
    assert rc.put_problem(k, problem_record(k))
    with sqlitedict.SqliteDict(str(rc.path), tablename=PROBLEM_TABLE, encode=json.dumps,
                               decode=json.loads, flag="r") as d:
        assert list(d.keys()) == [k.text]
        assert TuneRecord.from_json(d[k.text], k) == problem_record(k)


def test_reads_of_a_missing_file_create_nothing(rc):
    assert rc.problem_items() == [] and rc.get_problem(pkey()) is None
    assert not rc.path.exists()


def test_items_sorted_and_filtered_by_device(rc):
    keys = [pkey(p, d) for p in PROBLEMS for d in (H200, A100)]
    for k in reversed(keys):
        assert rc.put_problem(k, problem_record(k))
    got = rc.problem_items()
    assert [k.text for k, _ in got] == sorted(k.text for k in keys)
    assert {k for k, _ in rc.problem_items(device=A100)} == {k for k in keys if k.device == A100}
    assert all(r == problem_record(k) for k, r in got)


def test_put_problem_rejects_invalid_records(rc):
    k = pkey(TILE)
    with pytest.raises(TypeError, match="ProblemKey"):
        rc.put_problem(CacheKey(H200, SPACE, (1, 8, 8), 4), problem_record(k))
    with pytest.raises(TypeError, match="TuneRecord"):
        rc.put_problem(k, "a record")
    dense = KernelConfig("tile", 4, 32, 32, 256, pad=1)
    with pytest.raises(ValueError, match="dense config"):
        rc.put_problem(k, problem_record(k, best=dense))
    rows_cfg = strided_candidates(RowsProblem(4, 8, (Dim(3, 64, 32),)))[0]
    with pytest.raises(ValueError, match="cannot run"):
        rc.put_problem(k, problem_record(k, configs=[rows_cfg]))
    with pytest.raises(ValueError, match="shape"):
        rc.put_problem(pkey(GATHER), problem_record(k))               # another problem's record
    with pytest.raises(ValueError, match="elem_bytes"):
        rc.put_problem(pkey(ROWS), problem_record(k))
    with pytest.raises(ValueError, match="time_us"):
        rc.put_problem(k, dict(problem_record(k).to_json(), time_us=float("nan")))
    with pytest.raises(ValueError, match="schema"):
        rc.put_problem(ProblemKey(H200, SPACE, TILE, schema=2), problem_record(k))
    assert not rc.path.exists()


def test_invalid_rows_are_skipped_with_one_warning(rc):
    good = [pkey(p) for p in PROBLEMS]
    for k in good:
        assert rc.put_problem(k, problem_record(k))
    tile = pkey(TILE)
    dense = problem_record(tile).to_json()
    dense["config"] = KernelConfig("tile", 4, 32, 32, 256, pad=1).to_dict()
    dense["key"] = "tile:e4:32x32:t256:v4:r1:p1:none:row"
    other = pkey(TileProblem(TILE.elem, TILE.m, TILE.n, TILE.ldi, TILE.ldo + 4, TILE.sci, ()), A100)
    bad = [
        ("not a key", json.dumps(problem_record(tile).to_json())),
        (tile.text.replace("ldi", "ldi0"), json.dumps(problem_record(tile).to_json())),
        (pkey(TILE, A100).text, "not json {"),
        (pkey(ROWS, A100).text, json.dumps(dense)),                              # dense config
        (other.text, json.dumps(problem_record(tile).to_json())),                 # another device's record
        (pkey(GATHER, A100).text, json.dumps(dict(problem_record(pkey(GATHER, A100)).to_json(), gbps=-1.0))),
        (pkey(GATHER, A100).text.replace("p1|", "p2|"), json.dumps(problem_record(pkey(GATHER, A100)).to_json())),
    ]
    raw_insert(rc, bad)
    fresh = ResultCache(rc.folder)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = fresh.problem_items()
    assert [k for k, _ in got] == sorted(good, key=lambda k: k.text)
    warned = [x for x in w if issubclass(x.category, InvalidRecordWarning)]
    assert len(w) == len(warned) == 1 and f"skipped {len(bad)} invalid entries" in str(warned[0].message)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert fresh.get_problem(pkey(ROWS, A100)) is None
        assert fresh.get_problem(tile) == problem_record(tile)
    assert len(w) == 1 and "skipped 1 invalid entry" in str(w[0].message)


def test_clear_and_delete_cover_the_problems_table(rc):
    keys = [pkey(p, d) for p in PROBLEMS for d in (H200, A100)]
    for k in keys:
        assert rc.put_problem(k, problem_record(k))
    ck = CacheKey(A100, SPACE, (1, 64, 128), 4)
    assert rc.put(ck, make_record(ck.shape, 4, A100, n_candidates=2))
    raw_insert(rc, [("junk key", "junk")])
    assert rc.delete(keys[0]) == 1 and rc.delete([keys[0], keys[1]]) == 1
    assert rc.get_problem(keys[1]) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InvalidRecordWarning)
        assert rc.clear(device=A100) == len(PROBLEMS) - 1 + 1                  # and the dense entry
        assert {k for k, _ in rc.problem_items()} == {k for k in keys[2:] if k.device == H200}
        assert rc.items() == []
        assert rc.clear() == len(PROBLEMS) - 1 + 1                             # the rest and the junk row
    assert raw_keys(rc) == [] and rc.problem_items() == []


def test_clear_of_a_cache_without_the_problems_table(rc):
    ck = CacheKey(H200, SPACE, (1, 64, 128), 4)
    assert rc.put(ck, make_record(ck.shape, 4, H200, n_candidates=2))
    assert rc.clear() == 1 and rc.delete(pkey()) == 0


def test_a_busy_cache_changes_nothing_and_says_so(tmp_path):
    rc = ResultCache(tmp_path / "c", timeout=0.3)
    k = pkey()
    assert rc.put_problem(k, problem_record(k))
    other = pkey(TILE)
    with db.flock(rc.lock_path, time.monotonic() + 5):
        with pytest.warns(CacheWarning, match="busy"):
            assert rc.put_problem(other, problem_record(other)) is False
        assert [key for key, _ in rc.problem_items()] == [k]          # readers take no lock
    assert rc.get_problem(other) is None


def test_configs_with_an_epilogue_are_no_candidates_and_no_winners(rc):
    import dataclasses
    if "epilogue" not in {f.name for f in dataclasses.fields(KernelConfig)}:
        pytest.skip("KernelConfig has no epilogue field in this tree")
    k = pkey(ROWS)
    plain = strided_candidates(ROWS)
    conj = dataclasses.replace(plain[0], epilogue="conj64")
    assert all(c.epilogue == "none" for c in plain)
    with pytest.raises(ValueError, match="epilogue 'conj64', the key 'none'"):
        rc.put_problem(k, problem_record(k, configs=[conj] + plain))
    with pytest.raises(ValueError, match="candidate 1: config .* epilogue"):
        rc.put_problem(k, problem_record(k, configs=[plain[0], conj]))
    assert not rc.path.exists()
