"""ResultCache / CacheKey behaviour on real sqlitedict files (no GPU)."""
from __future__ import annotations

import json
import threading
import warnings

import numpy as np
import pytest

from autotrans.results import store as cache_mod
from autotrans.results.store import (
    SCHEMA_VERSION,
    CacheKey,
    CacheWarning,
    InvalidRecordWarning,
    ResultCache,
    TuneRecord,
    load_export,
    shipped_dir,
    shipped_entries,
)

from conftest import make_record

H200 = "NVIDIA H200|sm_90|132sm|driver 580.159.04|cuda 13.0"
A100 = "NVIDIA A100-SXM4-80GB|sm_80|108sm|driver 550.54.15|cuda 12.4"


def key(shape=(1, 64, 128), device=H200, templates="t0abc", elem_bytes=4):
    return CacheKey(device=device, templates=templates, shape=shape, elem_bytes=elem_bytes)


def rec(time_us=10.0, k=None, **fields):
    """The stored form of a valid record for key ``k`` (default key()) timed at ``time_us``."""
    k = k or key()
    r = make_record(k.shape, k.elem_bytes, k.device, n_candidates=3)
    r.update(time_us=time_us, q1_us=time_us, q3_us=time_us, **fields)
    return r


def stored(pairs):
    """(key, stored form) of (key, TuneRecord) pairs."""
    return [(k, r.to_json()) for k, r in pairs]


@pytest.fixture(autouse=True)
def _errors_on_warnings_and_no_leaked_threads():
    """Unexpected warnings fail a test; every sqlitedict thread is joined."""
    before = threading.active_count()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
    assert threading.active_count() == before


@pytest.fixture
def rc(tmp_path):
    return ResultCache(tmp_path / "c")


# -- CacheKey ------------------------------------------------------------------


def test_key_text_is_stable():
    k = CacheKey(device=H200, templates="3f9a2c", shape=(8, 1024, 2048), elem_bytes=2)
    assert k.text == "v1|3f9a2c|e2|8x1024x2048|NVIDIA H200|sm_90|132sm|driver 580.159.04|cuda 13.0"
    assert k.hardware == "NVIDIA H200|sm_90|132sm"
    assert SCHEMA_VERSION == 1 and k.schema == 1


def test_key_from_text_is_the_inverse():
    for k in (key(), key((3, 5, 7), A100, "x", 16), key((9, 2), H200, "h", 1)):
        assert CacheKey.from_text(k.text) == k
        assert CacheKey.from_text(k.text).text == k.text
        assert k.device_id.text == k.device
    assert CacheKey.from_text(f"v7|h|e8|2x3x4|{A100}").schema == 7
    assert key(device=key().device_id) == key()          # a DeviceId is accepted


@pytest.mark.parametrize("junk", [
    "", "v1", "v1|h|e4|1x2x3", "v1|h|e4|1x2|dev", "1|h|e4|1x2x3|dev", "v1|h|e3|1x2x3|dev",
    "v1|h|e4|1x0x3|dev", "v1|h|e04|1x2x3|dev", "v1|h|e4|01x2x3|dev", "v1||e4|1x2x3|dev",
    "vx|h|e4|1x2x3|dev", None, 42, f"v1|h|e4|1x2x3|{H200}"[:-1] + "|", f"v1|h|e4|1x2x3|{H200}x" * 40,
    "v1|h|e4|1x2x3|NVIDIA H200|sm_90|132sm",      # device without driver and toolkit
])
def test_key_from_text_rejects_junk(junk):
    with pytest.raises(ValueError):
        CacheKey.from_text(junk)


def test_key_shape_normalisation_and_validation():
    assert key((64, 128)).shape == (1, 64, 128)
    assert key([64, 128]) == key((1, 64, 128))
    assert key((np.int64(2), 3, 4)).shape == (2, 3, 4)
    assert type(key((np.int64(2), 3, 4)).shape[0]) is int
    assert hash(key((64, 128))) == hash(key((1, 64, 128)))
    for bad in [(1,), (1, 2, 3, 4), (0, 5), (2.0, 3), "ab", 5]:
        with pytest.raises(ValueError):
            key(bad)
    for bad in [3, 4.0, True, 32]:
        with pytest.raises(ValueError):
            key(elem_bytes=bad)
    with pytest.raises(ValueError):
        key(templates="a|b")
    for bad in ("", "cpu", "NVIDIA H200|sm_90|132sm"):
        with pytest.raises(ValueError):
            key(device=bad)


# -- ResultCache basics --------------------------------------------------------


def test_round_trip(rc):
    k1, k2 = key((64, 128)), key((2, 64, 128))
    assert rc.get(k1) is None and rc.items() == []
    assert not rc.path.exists()  # reads create nothing
    assert rc.put(k1, rec(1.5, k1)) is True
    assert rc.put(k2, TuneRecord.from_json(rec(2.5, k2))) is True   # typed records too
    assert rc.path == rc.folder / "results.sqlite" and rc.path.is_file()
    got = rc.get(k1)
    assert isinstance(got, TuneRecord) and got.to_json() == rec(1.5, k1)
    assert got.time_us == 1.5 and got.best.key == rec(k=k1)["key"] and got.shape == (1, 64, 128)
    assert rc.get(key((1, 64, 128))) == got  # normalised shape, same entry
    assert stored(rc.items()) == sorted([(k1, rec(1.5, k1)), (k2, rec(2.5, k2))], key=lambda kv: kv[0].text)
    assert rc.put(k1, rec(0.5, k1)) and rc.get(k1).time_us == 0.5  # overwrite
    assert rc.delete([k1, key((7, 7))]) == 1
    assert rc.get(k1) is None and rc.get(k2) is not None
    assert rc.delete(k2) == 1 and rc.items() == []
    assert rc.put(k1, rec(k=k1)) and rc.put(k2, rec(k=k2))
    assert rc.clear() == 2 and rc.items() == [] and rc.clear() == 0


def test_reads_of_a_missing_file_create_nothing(rc):
    """sqlitedict's flag 'r' raises for a missing file (and its thread creates
    an empty one as it does); reads must do neither."""
    assert rc.get(key()) is None and rc.items() == []
    assert not rc.folder.exists()
    rc.folder.mkdir()
    assert rc.get(key()) is None and rc.items() == []
    assert list(rc.folder.iterdir()) == []


def test_stored_as_json_in_versioned_table(rc):
    import sqlite3

    rc.put(key(), rec(3.0))
    con = sqlite3.connect(rc.path)
    rows = con.execute(f'SELECT key, value FROM "results_v{SCHEMA_VERSION}"').fetchall()
    con.close()
    assert len(rows) == 1 and rows[0][0] == key().text
    assert json.loads(rows[0][1]) == rec(3.0)    # JSON, not pickle


def test_sqlitedict_reads_and_writes_the_same_file(rc):
    """The store stays a sqlitedict file: SqliteDict opens what ResultCache
    wrote, and ResultCache reads (and validates) what SqliteDict wrote."""
    from sqlitedict import SqliteDict

    rc.put(key(), rec(3.0))
    with SqliteDict(str(rc.path), tablename=f"results_v{SCHEMA_VERSION}", encode=json.dumps,
                    decode=json.loads, flag="r") as db:
        assert dict(db.items()) == {key().text: rec(3.0)}
    k2 = key((5, 5))
    with SqliteDict(str(rc.path), tablename=f"results_v{SCHEMA_VERSION}", encode=json.dumps,
                    decode=json.loads, autocommit=True) as db:
        db[k2.text] = rec(4.0, k2)
    assert stored(ResultCache(rc.folder).items()) == sorted([(key(), rec(3.0)), (k2, rec(4.0, k2))],
                                                            key=lambda kv: kv[0].text)


def test_put_rejects_invalid_records(rc):
    with pytest.raises(ValueError, match="unknown field"):
        rc.put(key(), dict(rec(), x=object()))
    with pytest.raises(ValueError, match="missing"):
        rc.put(key(), {"time_us": 1.0})
    with pytest.raises(ValueError, match="shape"):
        rc.put(key((8, 8)), rec())               # a record of another shape
    with pytest.raises(ValueError, match="elem_bytes"):
        rc.put(key(elem_bytes=2), TuneRecord.from_json(rec()))
    with pytest.raises(TypeError):
        rc.put(key(), [1, 2])
    with pytest.raises(ValueError, match="schema"):
        rc.put(CacheKey(H200, "t0abc", (8, 8), 4, schema=SCHEMA_VERSION + 1), rec())
    assert rc.items() == []


def test_items_filtered_by_device(rc):
    entries = [(key((i + 1, 8), dev), rec(i + 1, key((i + 1, 8), dev))) for i, dev in enumerate([H200, A100, H200])]
    for k, r in entries:
        rc.put(k, r)
    assert [k.device for k, _ in rc.items(H200)] == [H200, H200]
    assert stored(rc.items(A100)) == [entries[1]]
    assert rc.items("no such gpu") == []
    assert len(rc.items()) == 3
    assert rc.clear(A100) == 1
    assert rc.items(A100) == [] and len(rc.items()) == 2


def test_new_templates_hash_invalidates(rc):
    old, new = key(templates="hashA"), key(templates="hashB")
    assert old != new and old.text != new.text
    rc.put(old, rec())
    assert rc.get(old).to_json() == rec() and rc.get(new) is None
    assert rc.get(key(device=H200.replace("580.159.04", "999.0"))) is None  # other driver
    assert rc.get(key(elem_bytes=8)) is None
    with pytest.raises(ValueError):
        key(device=H200.replace("580.159.04", "999|0"))


def test_other_schema_table_is_invisible(rc):
    """A table written by another schema version is not read."""
    from sqlitedict import SqliteDict

    rc.folder.mkdir(parents=True)
    with SqliteDict(str(rc.path), tablename="results_v0", encode=json.dumps,
                    decode=json.loads, autocommit=True) as db:
        db[key().text.replace("v1|", "v0|", 1)] = rec()
    assert rc.items() == [] and rc.get(key()) is None
    assert rc.put(key(), rec(1.0)) and len(rc.items()) == 1


def test_env_override_and_explicit_root(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTRANS_CACHE_DIR", str(tmp_path / "env"))
    assert cache_mod.cache_root() == tmp_path / "env"
    assert ResultCache().path == tmp_path / "env" / "results.sqlite"
    assert ResultCache().put(key(), rec(1.0))
    explicit = ResultCache(tmp_path / "arg")
    assert explicit.path == tmp_path / "arg" / "results.sqlite"
    assert explicit.get(key()) is None  # argument beats the environment
    assert explicit.put(key(), rec(2.0))
    assert ResultCache().get(key()).time_us == 1.0
    assert ResultCache(str(tmp_path / "arg")).get(key()).time_us == 2.0
    monkeypatch.delenv("AUTOTRANS_CACHE_DIR")
    assert cache_mod.cache_root().name == "autotrans"  # platformdirs default


# -- export / import -----------------------------------------------------------


def test_export_import_round_trip(tmp_path):
    src = ResultCache(tmp_path / "src")
    for i, dev in enumerate([H200, A100, H200]):
        src.put(key((i + 1, 16), dev), rec(float(i + 1), key((i + 1, 16), dev)))
    out = tmp_path / "export.json"
    assert src.export_json(out) == 3
    doc = json.loads(out.read_text())
    assert doc["format"] == "autotrans-cache" and doc["schema"] == 1
    assert [e["key"] for e in doc["entries"]] == sorted(k.text for k, _ in src.items())
    assert not list(tmp_path.glob(".export.json.*"))  # no temp file left
    assert src.export_json(tmp_path / "h200.json", device=H200) == 2

    dst = ResultCache(tmp_path / "dst")
    assert dst.import_json(out) == {"added": 3, "replaced": 0, "kept": 0, "skipped": 0}
    assert dst.items() == src.items()
    assert dst.import_json(out) == {"added": 0, "replaced": 0, "kept": 3, "skipped": 0}
    text, n = src.export_text()
    assert n == 3 and json.loads(text) == doc
    assert load_export(out) == src.items()
    assert load_export(tmp_path / "h200.json") == src.items(H200)


def _export(path, entries):
    doc = {"format": "autotrans-cache", "schema": 1,
           "entries": [{"key": k.text, "record": r} for k, r in entries]}
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("local_t, file_t, policy, expect_t, outcome", [
    (5.0, 3.0, "faster", 3.0, "replaced"),  # file is faster
    (3.0, 5.0, "faster", 3.0, "kept"),      # local is faster
    (3.0, 3.0, "faster", 3.0, "kept"),      # tie: keep local
    (5.0, 3.0, "keep", 5.0, "kept"),
    (3.0, 5.0, "keep", 3.0, "kept"),
    (3.0, 5.0, "replace", 5.0, "replaced"),
    (5.0, 3.0, "replace", 3.0, "replaced"),
])
def test_import_policies(tmp_path, local_t, file_t, policy, expect_t, outcome):
    rc = ResultCache(tmp_path / "c")
    shared, local_only, file_only = key((8, 8)), key((9, 9)), key((10, 10))
    rc.put(shared, rec(local_t, shared, date="2025-01-01T00:00:00+00:00"))
    rc.put(local_only, rec(1.0, local_only))
    f = _export(tmp_path / "in.json", [(shared, rec(file_t, shared, date="2025-02-02T00:00:00+00:00")),
                                       (file_only, rec(2.0, file_only))])
    counts = rc.import_json(f, policy=policy)
    assert counts == {"added": 1, "replaced": int(outcome == "replaced"), "kept": int(outcome == "kept"),
                      "skipped": 0}
    assert rc.get(shared).time_us == expect_t
    assert rc.get(shared).date.startswith("2025-02" if outcome == "replaced" else "2025-01")
    assert rc.get(local_only).to_json() == rec(1.0, local_only)
    assert rc.get(file_only).to_json() == rec(2.0, file_only)


def test_import_default_policy_is_faster_and_invalid_entries_lose(tmp_path):
    """An invalid stored row is replaced by any valid import; invalid import
    entries (no time, a negative time) are skipped with one warning, and the
    fastest valid one wins."""
    rc = ResultCache(tmp_path / "c")
    a, b = key((1, 8)), key((2, 8))
    rc.put(b, rec(4.0, b))
    _raw_put(rc, a, {"config": {}})
    f = _export(tmp_path / "in.json", [(a, rec(9.0, a)), (b, {"config": {}}), (b, rec(2.0, b)),
                                       (b, rec(3.0, b)), (b, dict(rec(k=b), time_us=-1.0))])
    with pytest.warns(InvalidRecordWarning, match="skipped 2 invalid entries") as caught:
        assert rc.import_json(f) == {"added": 0, "replaced": 2, "kept": 1, "skipped": 2}
    assert len(caught) == 1
    assert rc.get(a).time_us == 9.0 and rc.get(b).time_us == 2.0
    with pytest.raises(ValueError, match="policy"):
        rc.import_json(f, policy="newest")


def _raw_put(rc, k, value):
    """Store ``value`` for ``k`` bypassing validation (a row another program wrote)."""
    import sqlite3
    rc.put(key((99, 99)), rec(k=key((99, 99))))   # creates the table
    con = sqlite3.connect(rc.path)
    with con:
        con.execute('INSERT OR REPLACE INTO "results_v1" (key, value) VALUES (?, ?)',
                    (k.text if isinstance(k, CacheKey) else k,
                     value if isinstance(value, (str, bytes)) else json.dumps(value)))
    con.close()
    rc.delete(key((99, 99)))


@pytest.mark.parametrize("content, match", [
    (b"\x00\xff garbage", "not an autotrans cache export"),
    (b"a,b,c\n1,2,3\n", "not an autotrans cache export"),
    (b"[1, 2]", "not an autotrans cache export"),
    (b'{"entries": []}', "not an autotrans cache export"),
    (b'{"format": "autotrans-cache", "schema": 99, "entries": []}', "schema 99"),
    (b'{"format": "autotrans-cache", "schema": 1}', "entries"),
    (b"[" * 100000 + b"]" * 100000, "not an autotrans cache export"),
    (b'{"format": "autotrans-cache", "schema": true, "entries": []}', "schema True"),
    (b'{"format": "autotrans-cache", "schema": 1.0, "entries": []}', "schema 1.0"),
    (b'{"format": "autotrans-cache", "schema": 1, "entries": [' + b"9" * 5000 + b"]}",
     r"bad.json is not an autotrans cache export \(Exceeds the limit"),
])
def test_import_of_non_export_raises_value_error(tmp_path, content, match):
    rc = ResultCache(tmp_path / "c")
    rc.put(key(), rec())
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        rc.import_json(bad)
    with pytest.raises(ValueError, match=match):
        load_export(bad)
    assert stored(rc.items()) == [(key(), rec())]
    # a sqlite cache file is not an export either
    with pytest.raises(ValueError, match="not an autotrans cache export"):
        rc.import_json(rc.path)


# -- shipped results -----------------------------------------------------------


def test_shipped_entries_from_a_folder(tmp_path):
    folder = tmp_path / "shipped"
    folder.mkdir()
    assert shipped_entries(folder) == []
    other = tmp_path / "other"
    other.mkdir()
    _export(other / "b.json", [(key((2, 8)), rec(2.0, key((2, 8))))])
    _export(other / "a.json", [(key((1, 8), A100), rec(1.0, key((1, 8), A100)))])
    (other / "notes.txt").write_text("not json, not globbed")
    got = shipped_entries(other)
    assert stored(got) == [(key((1, 8), A100), rec(1.0, key((1, 8), A100))), (key((2, 8)), rec(2.0, key((2, 8))))]
    got.clear()  # callers can't corrupt the per-process cache
    assert shipped_entries(other)[0][1].time_us == 1.0
    (other / "c.json").write_text("{}")  # read once per process: not seen
    assert len(shipped_entries(other)) == 2


def test_shipped_entries_skip_bad_files_with_warning(tmp_path):
    _export(tmp_path / "good.json", [(key(), rec()), (key((3, 3)), rec()), (key((4, 4)), 5)])
    (tmp_path / "bad.json").write_text("{}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert stored(shipped_entries(tmp_path)) == [(key(), rec())]
    assert [w.category for w in caught] == [CacheWarning, InvalidRecordWarning]
    assert "bad.json" in str(caught[0].message)
    assert "skipped 2 invalid entries" in str(caught[1].message)


def test_shipped_dir_is_the_repo_cache_folder():
    from pathlib import Path

    package = Path(cache_mod.__file__).resolve().parent.parent
    repo_cache = package.parent / "cache"  # git does not keep it while it is empty
    assert shipped_dir() == (repo_cache if repo_cache.is_dir() else package / "shipped")
    assert isinstance(shipped_entries(), list)
    for k, r in shipped_entries():  # whatever the repo ships must be valid
        assert k.schema == SCHEMA_VERSION and isinstance(r, TuneRecord)
    if repo_cache.is_dir():      # and is read whole: the stored form is unchanged
        for path in repo_cache.glob("*.json"):
            doc = json.loads(path.read_text())
            got = {k.text: r.to_json() for k, r in load_export(path)}
            assert got == {e["key"]: e["record"] for e in doc["entries"]}
