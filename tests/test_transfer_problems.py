"""Export, import and clear of strided problems' rows (ProblemKey, the
problems_v1 table) beside the transpose entries: real SQLite caches and
export files in tmp folders, the command line through autotrans.cli.main."""
from __future__ import annotations

import json
import sqlite3
import time
import warnings

import numpy as np
import pytest

from autotrans.cli import main
from autotrans.core import layout
from autotrans.core.device import DeviceId
from autotrans.core.problem import dtype_of_size, gbps
from autotrans.kernels.config import KernelConfig
from autotrans.results import db
from autotrans.results.keys import PROBLEM_TABLE, TABLE, CacheKey, ProblemKey
from autotrans.results.record import Candidate, TuneRecord, check_problem_record
from autotrans.results.store import (CacheBusy, CacheWriteError, InvalidRecordWarning, ResultCache,
                                     parse_export, parse_export_all)
from autotrans.tuning.strided import strided_candidates

from conftest import A100, H200, make_record

from test_problem_keys import SPACE, canon


ROWS = canon((8, 32, 4, 16), (0, 2, 1, 3), np.float16)             # (B, S, H, D) -> (B, H, S, D)
TILE = canon((30, 100), (1, 0), view=np.s_[:, 10:90])              # a transposed slice
BATCHED = canon((6, 50, 40), (0, 2, 1), view=np.s_[::2, :, :30])   # a batch of pitched matrices
PROBLEMS = [ROWS, TILE, BATCHED]


def pkey(problem=TILE, device=H200) -> ProblemKey:
    return ProblemKey(device, SPACE, problem)


def problem_record(key: ProblemKey, time_us=10.0, date="2026-01-02T03:04:05+00:00", configs=None) -> TuneRecord:
    """A valid record for ``key``: its problem's strided candidates, made-up timings."""
    cfgs = list(configs or strided_candidates(key.problem))
    nbytes = layout.moved_bytes(key.problem)
    rows = tuple(Candidate(c.key, time_us * (1 + i / 10), time_us * (1 + i / 10), time_us * (1 + i / 10), 5,
                           gbps(nbytes, time_us * (1 + i / 10)), 32, i < 2) for i, c in enumerate(cfgs[:3]))
    return TuneRecord(cfgs[0], key.shape, key.elem_bytes, dtype_of_size(key.elem_bytes).name, time_us, time_us,
                      time_us, gbps(nbytes, time_us), time_us * 0.9, gbps(nbytes, time_us * 0.9), 0.9, rows, (),
                      DeviceId.from_text(key.device), 50 << 20, date, 1.5, (("space", SPACE),))


def ckey(shape=(1, 64, 128), device=H200) -> CacheKey:
    return CacheKey(device, SPACE, shape, 4)


def filled(folder) -> ResultCache:
    """A cache with a transpose entry per device and every problem's row per device."""
    rc = ResultCache(folder)
    for dev in (H200, A100):
        k = ckey(device=dev)
        assert rc.put(k, make_record(k.shape, 4, dev, n_candidates=2))
        for p in PROBLEMS:
            assert rc.put_problem(pkey(p, dev), problem_record(pkey(p, dev)))
    return rc


def raw_rows(rc: ResultCache) -> dict:
    """Every stored row of both tables, exactly as stored."""
    con = sqlite3.connect(rc.path)
    try:
        return {t: con.execute(f'SELECT * FROM "{t}" ORDER BY key').fetchall()
                for t in (TABLE, PROBLEM_TABLE) if db.has_table(con, t)}
    finally:
        con.close()


def export_doc(entries=(), problems=None) -> dict:
    """An export document of (key, record) pairs; without ``problems``, in the
    format written before problem rows existed (no "problems" list)."""
    doc = {"format": "autotrans-cache", "schema": 1,
           "entries": [{"key": k.text, "record": _json(r)} for k, r in entries]}
    if problems is not None:
        doc["problems"] = [{"key": k.text, "record": _json(r)} for k, r in problems]
    return doc


def _json(record):
    return record.to_json() if isinstance(record, TuneRecord) else record


def write(path, doc) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


def invalid_warnings(w) -> list[str]:
    return [str(x.message) for x in w if issubclass(x.category, InvalidRecordWarning)]


# -- export and import: the API ---------------------------------------------------------


def test_round_trip_into_a_fresh_cache_keeps_problem_rows_equal(tmp_path):
    src = filled(tmp_path / "src")
    out = tmp_path / "all.json"
    assert src.export_file(out) == (2, 6)
    doc = json.loads(out.read_text())
    assert sorted(doc) == ["entries", "format", "problems", "schema"]
    assert [e["key"] for e in doc["problems"]] == sorted(pkey(p, d).text for p in PROBLEMS for d in (H200, A100))
    assert [e["key"] for e in doc["entries"]] == sorted(ckey(device=d).text for d in (H200, A100))
    dst = ResultCache(tmp_path / "dst")
    share = {"added": 6, "replaced": 0, "kept": 0, "skipped": 0}
    assert dst.import_json(out) == {"added": 8, "replaced": 0, "kept": 0, "skipped": 0, "problems": share}
    assert dst.problem_items() == src.problem_items() and len(dst.problem_items()) == 6
    assert dst.items() == src.items()
    assert raw_rows(dst) == raw_rows(src)                     # the very same stored text
    again = dst.import_json(out)
    assert again["problems"] == {"added": 0, "replaced": 0, "kept": 6, "skipped": 0} and again["kept"] == 8
    text, n = src.export_text()
    assert n == 8 and text == out.read_text()
    assert ResultCache(tmp_path / "dst2").import_text(text)["problems"]["added"] == 6


def test_export_of_one_device_filters_problem_rows_too(tmp_path):
    src = filled(tmp_path / "src")
    text, n, p = src.export_rows(A100)
    doc = json.loads(text)
    assert (n, p) == (1, 3)
    assert [e["key"] for e in doc["problems"]] == sorted(pkey(q, A100).text for q in PROBLEMS)
    assert src.export_json(tmp_path / "a100.json", device=A100) == 4
    dst = ResultCache(tmp_path / "dst")
    dst.import_json(tmp_path / "a100.json")
    assert dst.problem_items() == src.problem_items(A100) and dst.problem_items(H200) == []
    assert src.export_rows("no such GPU")[1:] == (0, 0)


def test_a_file_without_problem_rows_imports_as_before(tmp_path):
    entries = [(ckey(s), make_record(s, 4, H200, n_candidates=2)) for s in ((1, 64, 128), (2, 32, 32))]
    old = write(tmp_path / "old.json", export_doc(entries))         # no "problems" at all
    rc = ResultCache(tmp_path / "c")
    assert rc.import_json(old) == {"added": 2, "replaced": 0, "kept": 0, "skipped": 0}
    assert [k for k, _ in rc.items()] == sorted((k for k, _ in entries), key=lambda k: k.text)
    assert PROBLEM_TABLE not in raw_rows(rc) and rc.problem_items() == []
    got, bad = parse_export(open(old, "rb").read(), "old.json")
    assert [k for k, _ in got] == [k for k, _ in entries] and bad == []
    # a cache without problem rows exports an empty list and imports with the same counts
    text, n, p = rc.export_rows()
    assert (n, p) == (2, 0) and json.loads(text)["problems"] == []
    assert ResultCache(tmp_path / "d").import_text(text) == {"added": 2, "replaced": 0, "kept": 0, "skipped": 0}


def test_parse_export_leaves_problem_rows_to_parse_export_all(tmp_path):
    k, r = pkey(), problem_record(pkey())
    text = json.dumps(export_doc([], [(k, r)]))
    assert parse_export(text, "x") == ([], [])
    assert parse_export_all(text, "x") == ([], [], [(k, r)], [])


def test_both_readers_of_a_file_give_the_same_problem_rows(tmp_path):
    """The one-entry-at-a-time scanner and json.loads (taken for anything
    unusual, here a repeated name) agree on the problem rows."""
    src = filled(tmp_path / "src")
    text, _ = src.export_text()
    bad = {"key": pkey(ROWS).text, "record": problem_record(pkey()).to_json()}
    text = text.replace('"problems": [', '"problems": [' + json.dumps(bad) + ",", 1)
    repeated = '{"format": "not this one", ' + text.lstrip()[1:]
    plain, loaded = parse_export_all(text, "x"), parse_export_all(repeated, "x")
    assert plain == loaded and len(plain[2]) == 6 and len(plain[3]) == 1
    assert plain[3][0].startswith("problem row 0: ")


@pytest.mark.parametrize("policy, outcome, winner", [
    ("faster", {"added": 1, "replaced": 1, "kept": 1}, {"fast": "theirs", "slow": "ours"}),
    ("keep", {"added": 1, "replaced": 0, "kept": 2}, {"fast": "ours", "slow": "ours"}),
    ("replace", {"added": 1, "replaced": 2, "kept": 0}, {"fast": "theirs", "slow": "theirs"}),
])
def test_import_policies_apply_to_problem_rows(tmp_path, policy, outcome, winner):
    fast, slow, new = pkey(TILE), pkey(ROWS), pkey(BATCHED)
    rc = ResultCache(tmp_path / "c")
    ours = {fast: problem_record(fast, 10.0), slow: problem_record(slow, 10.0)}
    for k, r in ours.items():
        assert rc.put_problem(k, r)
    theirs = {fast: problem_record(fast, 5.0, date="2026-02-01T00:00:00+00:00"),
              slow: problem_record(slow, 20.0, date="2026-02-02T00:00:00+00:00"), new: problem_record(new)}
    f = write(tmp_path / "theirs.json", export_doc([], theirs.items()))
    counts = rc.import_json(f, policy=policy)
    assert counts["problems"] == {**outcome, "skipped": 0} and counts["added"] == 1
    assert rc.get_problem(new) == theirs[new]
    for name, k in (("fast", fast), ("slow", slow)):
        assert rc.get_problem(k) == (theirs if winner[name] == "theirs" else ours)[k]


# -- untrusted rows --------------------------------------------------------------------------


def _dense(key):
    rec = problem_record(key).to_json()
    cfg = KernelConfig("tile", 4, 32, 32, 256, pad=1)
    return dict(rec, config=cfg.to_dict(), key=cfg.key)


CORRUPT = {      # name: (the problem row, what its one line says)
    "not a key": (lambda: {"key": "p1|junk", "record": problem_record(pkey()).to_json()}, "not a problem key"),
    "a cache key": (lambda: {"key": ckey().text, "record": make_record((1, 64, 128), 4, H200, n_candidates=2)},
                    "not a problem key"),
    "schema 2": (lambda: {"key": pkey().text.replace("p1|", "p2|"), "record": problem_record(pkey()).to_json()},
                 "problem key schema 2"),
    "another device's record": (lambda: {"key": pkey(device=A100).text, "record": problem_record(pkey()).to_json()},
                                "differs from the key's"),
    "another problem's record": (lambda: {"key": pkey(BATCHED).text, "record": problem_record(pkey()).to_json()},
                                 "shape"),
    "a dense config": (lambda: {"key": pkey().text, "record": _dense(pkey())}, "dense config"),
    "a config that cannot run it": (lambda: {"key": pkey().text, "record": problem_record(
        pkey(), configs=strided_candidates(layout.RowsProblem(4, 8, (layout.Dim(3, 64, 32),)))).to_json()},
        "cannot run"),
    "a negative time": (lambda: {"key": pkey().text, "record": dict(problem_record(pkey()).to_json(), gbps=-1.0)},
                        "gbps"),
    "an extra field": (lambda: {"key": pkey().text, "record": problem_record(pkey()).to_json(), "x": 1},
                       'not {"key"'),
    "not an object": (lambda: ["p1|x", {}], 'not {"key"'),
}


@pytest.mark.parametrize("name", sorted(CORRUPT))
def test_a_corrupt_problem_row_is_one_line_and_changes_nothing(tmp_path, name):
    rc = filled(tmp_path / "c")
    before = raw_rows(rc)
    row, says = CORRUPT[name]
    doc = export_doc([], [])
    doc["problems"] = [row()]
    f = write(tmp_path / "bad.json", doc)
    for policy in ("replace", "faster"):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            counts = ResultCache(rc.folder).import_json(f, policy=policy)
        lines = invalid_warnings(w)
        assert len(w) == len(lines) == 1, [str(x.message) for x in w]
        assert "skipped 1 invalid entry of" in lines[0] and "(first: problem row 0: " in lines[0], lines[0]
        assert says in lines[0] and "\n" not in lines[0]
        assert counts == {"added": 0, "replaced": 0, "kept": 0, "skipped": 1,
                          "problems": {"added": 0, "replaced": 0, "kept": 0, "skipped": 1}}
        assert raw_rows(rc) == before


def test_rows_in_the_wrong_list_are_invalid_and_good_ones_still_import(tmp_path):
    rc = ResultCache(tmp_path / "c")
    good = pkey(ROWS)
    doc = export_doc([], [(good, problem_record(good))])
    doc["entries"] = [{"key": pkey().text, "record": problem_record(pkey()).to_json()}]   # a problem row
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        counts = rc.import_json(write(tmp_path / "f.json", doc))
    assert counts["skipped"] == 1 and counts["problems"] == {"added": 1, "replaced": 0, "kept": 0, "skipped": 0}
    assert "(first: entry 0: not a cache key" in invalid_warnings(w)[0]
    assert [k for k, _ in rc.problem_items()] == [good] and rc.items() == []


@pytest.mark.parametrize("problems", [{"key": "x"}, "rows", 3, None])
def test_a_problems_field_that_is_not_a_list_is_not_an_export(tmp_path, problems):
    rc = filled(tmp_path / "c")
    before = raw_rows(rc)
    doc = export_doc([(ckey((2, 8, 8)), make_record((2, 8, 8), 4, H200, n_candidates=2))])
    doc["problems"] = problems
    with pytest.raises(ValueError, match=r'not an autotrans cache export \(its "problems" is not a list\)'):
        rc.import_json(write(tmp_path / "f.json", doc))
    assert raw_rows(rc) == before


JUNK = [None, True, -1, 0, 2 ** 70, 1e308, "x", "", [], {}, [1, 2, 3], {"a": 1}, float("inf"), float("nan")]


def test_junk_in_any_field_of_a_problem_row_is_skipped_never_raised():
    """Every field of a good row (record, candidate, device), each set to junk:
    the row is valid or skipped with its line; nothing else is raised."""
    k = pkey(BATCHED)
    good = problem_record(k).to_json()
    rows = []
    for field in good:
        rows += [{"key": k.text, "record": dict(good, **{field: j})} for j in JUNK]
    for field in good["candidates"][0]:
        rows += [{"key": k.text, "record": dict(good, candidates=[dict(good["candidates"][0], **{field: j})])}
                 for j in JUNK]
    for field in good["device"]:
        rows += [{"key": k.text, "record": dict(good, device=dict(good["device"], **{field: j}))} for j in JUNK]
    rows += [{"key": j, "record": good} for j in JUNK] + [{"key": k.text, "record": j} for j in JUNK]
    doc = export_doc([], [])
    doc["problems"] = rows
    valid, bad, problem_valid, problem_bad = parse_export_all(json.dumps(doc), "junk")
    assert valid == bad == []
    assert len(problem_valid) + len(problem_bad) == len(rows) and len(problem_bad) > len(rows) * 0.8
    assert all(line.startswith("problem row ") for line in problem_bad)
    assert all(check_problem_record(TuneRecord.from_json(r.to_json(), key), key) == r for key, r in problem_valid)


def test_import_is_one_transaction_over_both_tables(tmp_path):
    """A problems table that cannot take the rows fails the import: the
    transpose entries of the same file are not written either."""
    rc = ResultCache(tmp_path / "c")
    k = ckey()
    assert rc.put(k, make_record(k.shape, 4, H200, n_candidates=2))
    con = sqlite3.connect(rc.path)
    with con:
        con.execute(f'CREATE TABLE "{PROBLEM_TABLE}" (key TEXT PRIMARY KEY)')    # no value column
    con.close()
    before = raw_rows(rc)
    new = ckey((2, 16, 16))
    f = write(tmp_path / "f.json", export_doc([(new, make_record(new.shape, 4, H200, n_candidates=2))],
                                              [(pkey(), problem_record(pkey()))]))
    with pytest.raises(CacheWriteError, match="nothing was changed"):
        rc.import_json(f, policy="replace")
    assert raw_rows(rc) == before and rc.get(new) is None


def test_a_busy_cache_imports_no_problem_row(tmp_path):
    rc = filled(tmp_path / "c")
    before = raw_rows(rc)
    f = write(tmp_path / "f.json", export_doc([], [(pkey(), problem_record(pkey(), 1.0))]))
    with db.flock(rc.lock_path, time.monotonic() + 5):
        with pytest.raises(CacheBusy, match="nothing was changed"):
            ResultCache(rc.folder, timeout=0.3).import_json(f)
    assert raw_rows(rc) == before
    assert ResultCache(rc.folder).import_json(f)["problems"]["replaced"] == 1       # free again: it goes in
    assert rc.get_problem(pkey()) == problem_record(pkey(), 1.0)


# -- clear -----------------------------------------------------------------------------------


def test_clear_counts_and_removes_problem_rows(tmp_path):
    rc = filled(tmp_path / "c")
    assert rc.clear_each(device=A100) == (1, 3)
    assert [k.device for k, _ in rc.problem_items()] == [H200] * 3 and len(rc.items()) == 1
    assert rc.clear_each() == (1, 3)
    assert raw_rows(rc) == {TABLE: [], PROBLEM_TABLE: []}
    assert rc.clear_each() == (0, 0) and rc.clear() == 0


# -- the command line ----------------------------------------------------------------------


def cli(capsys, *args):
    """(exit status, stdout, stderr) of autotrans.cli.main(args)."""
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_export_import_round_trip(tmp_path, capsys):
    src = filled(tmp_path / "src")
    out = tmp_path / "all.json"
    code, stdout, _ = cli(capsys, "export", out, "--cache-dir", src.folder)
    assert code == 0 and "exported 2 entries and 6 strided-problem entries from" in stdout, stdout
    code, stdout, stderr = cli(capsys, "import", out, "--cache-dir", tmp_path / "dst")
    assert code == 0, stderr
    assert "2 added, 0 replaced, 0 kept; strided problems: 6 added, 0 replaced, 0 kept" in stdout, stdout
    assert ResultCache(tmp_path / "dst").problem_items() == src.problem_items()
    code, stdout, stderr = cli(capsys, "export", "-", "--device", A100, "--cache-dir", src.folder)
    assert code == 0 and "exported 1 entry and 3 strided-problem entries " in stderr, stderr
    assert len(json.loads(stdout)["problems"]) == 3


def test_cli_export_of_a_device_with_only_problem_rows(tmp_path, capsys):
    rc = ResultCache(tmp_path / "c")
    assert rc.put_problem(pkey(device=A100), problem_record(pkey(device=A100)))
    code, stdout, stderr = cli(capsys, "export", tmp_path / "x.json", "--device", A100, "--cache-dir", rc.folder)
    assert code == 0 and "exported 0 entries and 1 strided-problem entry from" in stdout
    assert "no entries for device" not in stderr
    code, _, stderr = cli(capsys, "export", tmp_path / "y.json", "--device", H200, "--cache-dir", rc.folder)
    assert code == 0 and "no entries for device" in stderr and A100 in stderr    # its devices are named


def test_cli_import_of_a_corrupt_problem_row_is_one_warning_line(tmp_path, capsys):
    rc = filled(tmp_path / "c")
    before = raw_rows(rc)
    doc = export_doc([], [])
    doc["problems"] = [{"key": pkey().text, "record": _dense(pkey())}]
    f = write(tmp_path / "bad.json", doc)
    code, stdout, stderr = cli(capsys, "import", f, "--policy", "replace", "--cache-dir", rc.folder)
    assert code == 0
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("autotrans: warning: skipped 1 invalid entry"), stderr
    assert "problem row 0: config tile:" in lines[0] and "dense config" in lines[0]
    assert "0 added, 0 replaced, 0 kept; strided problems: 0 added, 0 replaced, 0 kept, 1 skipped" in stdout
    assert raw_rows(rc) == before


def test_cli_clear_counts_and_removes_problem_rows(tmp_path, capsys):
    rc = filled(tmp_path / "c")
    code, _, stderr = cli(capsys, "clear", "--cache-dir", rc.folder)      # stdin is no terminal
    assert code != 0 and "2 cached results and 6 strided-problem results" in stderr and "--yes" in stderr
    assert len(rc.problem_items()) == 6
    code, stdout, _ = cli(capsys, "clear", "--device", A100, "--yes", "--cache-dir", rc.folder)
    assert code == 0 and "removed 1 cached result and 3 strided-problem results from" in stdout, stdout
    assert {k.device for k, _ in rc.problem_items()} == {H200} and [k for k, _ in rc.items()] == [ckey()]
    code, stdout, _ = cli(capsys, "clear", "--yes", "--cache-dir", rc.folder)
    assert code == 0 and "removed 1 cached result and 3 strided-problem results from" in stdout, stdout
    assert raw_rows(rc) == {TABLE: [], PROBLEM_TABLE: []}


def test_cli_clear_of_problem_rows_only(tmp_path, capsys):
    rc = ResultCache(tmp_path / "c")
    for p in PROBLEMS:
        assert rc.put_problem(pkey(p), problem_record(pkey(p)))
    code, stdout, _ = cli(capsys, "clear", "-y", "--cache-dir", rc.folder)
    assert code == 0 and "removed 0 cached results and 3 strided-problem results from" in stdout, stdout
    assert rc.problem_items() == []
    code, stdout, _ = cli(capsys, "clear", "-y", "--cache-dir", rc.folder)
    assert code == 0 and "nothing to clear" in stdout
