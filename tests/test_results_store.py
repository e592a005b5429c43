"""The store against what is on disk (issue 16): bad rows, paths that are not
files, export targets that must not be overwritten, imports that are all or
nothing, busy caches and full disks. Real files, real processes, no mocks."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from autotrans.results.store import CacheBusy, CacheKey, InvalidRecordWarning, ResultCache
from autotrans.tuning.space import space_id

from conftest import A100, H200, make_record

REPO = Path(__file__).resolve().parent.parent


def key(i=0, device=H200):
    return CacheKey(device, space_id(), (1 + i % 5, 16, 16 + i), 4)


def rec(i=0, device=H200, time_scale=1.0):
    return make_record(key(i, device).shape, 4, device, n_candidates=2, time_scale=time_scale)


def filled(tmp_path, n=3) -> ResultCache:
    rc = ResultCache(tmp_path / "cache")
    for i in range(n):
        assert rc.put(key(i), rec(i))
    return rc


def raw_rows(rc) -> list:
    con = sqlite3.connect(rc.path)
    try:
        return con.execute('SELECT key, value FROM "results_v1" ORDER BY key').fetchall()
    finally:
        con.close()


def insert_raw(rc, rows):
    con = sqlite3.connect(rc.path)
    with con:
        con.executemany('INSERT OR REPLACE INTO "results_v1" (key, value) VALUES (?, ?)', rows)
    con.close()


def export_file(path, entries):
    path.write_text(json.dumps({"format": "autotrans-cache", "schema": 1,
                                "entries": [{"key": k, "record": r} for k, r in entries]}))
    return path


BAD_ROWS = [
    (key(10).text, "not json {"),
    (key(11).text, "[1, 2, 3]"),
    (key(12).text, json.dumps(dict(rec(12), time_us=-5.0))),
    (key(13).text, json.dumps(dict(rec(13), config=4))),
    (key(14).text, b"\x00\xff binary"),
    ("not a key at all", json.dumps(rec(0))),
    (key(15).text, json.dumps(make_record(key(15).shape, 16, n_candidates=1))),
]


# -- bad rows ------------------------------------------------------------------------


def test_bad_rows_are_skipped_with_one_warning_everywhere(tmp_path):
    rc = filled(tmp_path)
    insert_raw(rc, BAD_ROWS)
    from autotrans import cached, explain

    def one_warning(fn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fn()
        assert [w.category for w in caught] == [InvalidRecordWarning], [str(w.message) for w in caught]
        assert f"skipped {len(BAD_ROWS)} invalid entries" in str(caught[0].message)
        return out

    items = one_warning(rc.items)
    assert [k for k, _ in items] == [key(0), key(1), key(2)]
    assert len(one_warning(lambda: cached(all_devices=True, cache_dir=rc.folder))) == 3
    assert one_warning(lambda: explain((3, 16, 18), "float32", fingerprint=H200,
                                       cache_dir=rc.folder)).config.elem_bytes == 4
    text, n = one_warning(rc.export_text)
    assert n == 3 and len(json.loads(text)["entries"]) == 3
    out = tmp_path / "out.json"
    assert one_warning(lambda: rc.export_json(out)) == 3
    other = ResultCache(tmp_path / "other")
    assert other.import_json(out) == {"added": 3, "replaced": 0, "kept": 0, "skipped": 0}
    # an import over the bad rows replaces them (even under "keep") and counts them as replaced
    bad_keys_file = export_file(tmp_path / "fix.json", [(key(10).text, rec(10)), (key(11).text, rec(11))])
    assert rc.import_json(bad_keys_file, policy="keep") == {"added": 0, "replaced": 2, "kept": 0, "skipped": 0}
    assert rc.get(key(10)).to_json() == rec(10)
    # clear always works: every row goes, valid or not
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rc.clear() == 3 + len(BAD_ROWS)
    assert raw_rows(rc) == []


def test_clear_of_one_device_with_bad_rows(tmp_path):
    rc = filled(tmp_path)
    assert rc.put(key(7, A100), rec(7, A100))
    insert_raw(rc, BAD_ROWS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rc.clear(device=A100) == 1
        assert rc.clear(device=H200) == 3 + len(BAD_ROWS) - 1    # all but the junk key
    assert [k for k, _ in raw_rows(rc)] == ["not a key at all"]


def test_get_of_a_bad_row_is_none_with_a_warning(tmp_path):
    rc = filled(tmp_path)
    insert_raw(rc, BAD_ROWS)
    with pytest.warns(InvalidRecordWarning, match="skipped 1 invalid entry"):
        assert rc.get(key(15)) is None          # 16-byte config under a 4-byte key
    assert rc.get(key(1)).to_json() == rec(1)


# -- paths that are not database files ----------------------------------------------------


CHILD = r'''
import sys, warnings
from autotrans.results.store import ResultCache
sys.path.insert(0, sys.argv[2])
from conftest import make_record
rc = ResultCache(sys.argv[1], timeout=2)
print(len(rc.items()), rc.get(__import__("autotrans").CacheKey(
    "NVIDIA H200|sm_90|132sm|driver 580.95.05|cuda 13.0", "t", (8, 8), 4)))
print(rc.put(__import__("autotrans").CacheKey("NVIDIA H200|sm_90|132sm|driver 580.95.05|cuda 13.0",
      "t", (8, 8), 4), make_record((8, 8), 4, n_candidates=1)))
print(rc.clear())
'''


def run_child(folder):
    r = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(REPO / "tests")], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "Exception in thread" not in r.stderr, r.stderr
    return r.stdout.split("\n"), [line for line in r.stderr.splitlines() if "Warning" in line]


@pytest.mark.parametrize("kind, says", [
    ("directory", "a directory"), ("dangling", "a dangling symlink"), ("loop", "a symlink loop"),
    ("fifo", "not a regular file"),
])
def test_results_sqlite_that_is_not_a_file(tmp_path, kind, says):
    folder = tmp_path / "c"
    folder.mkdir()
    db = folder / "results.sqlite"
    if kind == "directory":
        db.mkdir()
        (db / "keep").write_text("mine")
    elif kind == "dangling":
        db.symlink_to(tmp_path / "nowhere")
    elif kind == "loop":
        db.symlink_to(folder / "results.sqlite")
    else:
        os.mkfifo(db)
    out, warns = run_child(folder)
    assert out[:3] == ["0 None", "False", "0"], out
    assert len(warns) == 3 and all(says in w for w in warns), warns     # one per call
    assert "could not be read" in warns[0] and "not writable" in warns[1]
    assert not (tmp_path / "nowhere").exists()              # nothing written through the link
    if kind == "directory":
        assert (db / "keep").read_text() == "mine"


def test_corrupt_file_in_a_read_only_folder(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "results.sqlite").write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 40)
    before = (folder / "results.sqlite").read_bytes()
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK) and os.geteuid() == 0:
            pytest.skip("running as root: a read-only folder can still be written")
        out, warns = run_child(folder)
    finally:
        folder.chmod(0o755)
    assert out[:3] == ["0 None", "False", "0"], out
    assert "corrupt" in warns[0] and "could not be moved aside" in warns[0]
    assert (folder / "results.sqlite").read_bytes() == before


def test_corrupt_file_never_prints_a_thread_traceback(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "results.sqlite").write_bytes(b"\x13" * 8192)
    out, warns = run_child(folder)
    assert out[:3] == ["0 None", "True", "1"], out
    assert len(warns) == 1 and "corrupt" in warns[0] and "moved it to" in warns[0]


# -- export targets ---------------------------------------------------------------------


def test_export_refuses_what_it_must_not_overwrite(tmp_path):
    rc = filled(tmp_path)
    rc.path.with_name("results.sqlite-journal").write_bytes(b"")
    before = rc.path.read_bytes()
    (tmp_path / "dir").mkdir()
    (tmp_path / "to-db").symlink_to(rc.path)
    (tmp_path / "to-dir").symlink_to(tmp_path / "dir")
    os.link(rc.path, tmp_path / "hardlink.json")
    other = ResultCache(tmp_path / "other")
    other.put(key(), rec())
    os.mkfifo(tmp_path / "fifo")
    refused = {rc.path: "cache's own file", rc.lock_path: "cache's own file",
               rc.path.with_name("results.sqlite-journal"): "cache's own file",
               rc.path.with_name("results.sqlite-wal"): "cache's own file",
               tmp_path / "to-db": "cache's own file", tmp_path / "hardlink.json": "cache's own file",
               tmp_path / "dir": "directory", tmp_path / "to-dir": "directory",
               Path("/dev/null"): "device", tmp_path / "fifo": "not a regular file",
               other.path: "SQLite database"}
    for target, says in refused.items():
        with pytest.raises(ValueError, match=says):
            rc.export_json(target)
    assert rc.path.read_bytes() == before
    assert Path("/dev/null").is_char_device()
    assert len(rc.items()) == 3 and len(other.items()) == 1


def test_export_writes_regular_files_atomically_through_symlinks(tmp_path):
    rc = filled(tmp_path)
    old = tmp_path / "old.json"
    old.write_text("previous export")
    (tmp_path / "link.json").symlink_to(old)
    assert rc.export_json(tmp_path / "link.json") == 3
    assert (tmp_path / "link.json").is_symlink()
    assert len(json.loads(old.read_text())["entries"]) == 3
    assert rc.export_json(tmp_path / "new.json", device=A100) == 0
    assert json.loads((tmp_path / "new.json").read_text())["entries"] == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "link.json", "new.json", "old.json"]


# -- import: one transaction -------------------------------------------------------------


def test_import_waits_for_a_busy_cache_then_says_it_is_busy(tmp_path):
    import fcntl
    rc = filled(tmp_path)
    before = raw_rows(rc)
    f = export_file(tmp_path / "in.json", [(key(9).text, rec(9))])
    fd = os.open(rc.lock_path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        t0 = time.monotonic()
        with pytest.raises(CacheBusy, match="is busy.*nothing was changed"):
            ResultCache(rc.folder, timeout=0.5).import_json(f)
        assert 0.5 <= time.monotonic() - t0 < 5
    finally:
        os.close(fd)
    con = sqlite3.connect(rc.path, isolation_level=None)   # a writer outside autotrans
    con.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(CacheBusy, match="is busy"):
            ResultCache(rc.folder, timeout=0.5).import_json(f)
    finally:
        con.execute("ROLLBACK")
        con.close()
    assert raw_rows(rc) == before
    assert ResultCache(rc.folder).import_json(f)["added"] == 1


FULL_DISK = r'''
import json, resource, signal, sys
from autotrans.results.store import CacheWriteError, ResultCache
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)        # writes past the limit fail with EFBIG
rc = ResultCache(sys.argv[1])
limit = rc.path.stat().st_size + 20_000
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    rc.import_json(sys.argv[2])
except CacheWriteError as exc:
    print("refused:", exc)
'''


def test_a_full_disk_leaves_the_table_exactly_as_it_was(tmp_path):
    rc = filled(tmp_path)
    before = raw_rows(rc)
    entries = [(key(i).text, rec(i, time_scale=0.5)) for i in range(3, 60)]
    entries += [(key(i).text, rec(i, time_scale=0.5)) for i in range(3)]   # faster: would replace
    f = export_file(tmp_path / "big.json", entries)
    r = subprocess.run([sys.executable, "-c", FULL_DISK, str(rc.folder), str(f)], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("refused: could not write the autotrans cache"), r.stdout + r.stderr
    assert "nothing was changed" in r.stdout
    assert raw_rows(rc) == before
    assert ResultCache(rc.folder).import_json(f) == {"added": 57, "replaced": 3, "kept": 0, "skipped": 0}


KILLED_IMPORT = r'''
import sys
from autotrans.results.store import ResultCache
print("ready", flush=True)
while True:
    ResultCache(sys.argv[1]).import_json(sys.argv[2], policy="replace")
    ResultCache(sys.argv[1]).clear()
'''


def test_a_killed_import_leaves_all_or_nothing(tmp_path):
    rc = filled(tmp_path, 0)
    entries = [(key(i).text, rec(i)) for i in range(400)]
    f = export_file(tmp_path / "in.json", entries)
    seen = set()
    for delay in (0.3, 0.6, 0.9, 1.2, 1.5, 1.8):
        p = subprocess.Popen([sys.executable, "-c", KILLED_IMPORT, str(rc.folder), str(f)], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=30)
        n = len(raw_rows(rc)) if rc.path.exists() else 0
        assert n in (0, 400), n
        seen.add(n)
    assert len(ResultCache(rc.folder).items()) in (0, 400)


def _generated_export(path, n):
    """An export of n small valid entries (one template record, keys varied)."""
    base = make_record((1, 16, 16), 4, n_candidates=1, failures=0)
    lines = []
    for i in range(n):
        b, m, nn = 1 + i % 97, 16 + (i // 97) % 50, 16 + i // (97 * 50)
        r = dict(base, shape=[b, m, nn])
        lines.append(json.dumps({"key": CacheKey(H200, "gen", (b, m, nn), 4).text, "record": r}))
    path.write_text('{"format": "autotrans-cache", "schema": 1, "entries": [\n' + ",\n".join(lines) + "\n]}\n")
    return path


def _change_counter(path) -> int:
    """SQLite's file change counter (header bytes 24-27): one more for every
    committed write transaction (the cache uses the rollback journal)."""
    with open(path, "rb") as f:
        f.seek(24)
        return int.from_bytes(f.read(4), "big")


@pytest.mark.slow
def test_import_of_200000_entries_is_one_transaction(tmp_path):
    """A big import writes every entry in one transaction (its speed is
    benchmarks/import_speed.py's to measure), and a repeat keeps them all
    without writing."""
    f = _generated_export(tmp_path / "big.json", 200_000)
    rc = ResultCache(tmp_path / "cache")
    rc.put(key(0), rec(0))
    before = _change_counter(rc.path)
    assert rc.import_json(f) == {"added": 200_000, "replaced": 0, "kept": 0, "skipped": 0}
    assert _change_counter(rc.path) == before + 1
    con = sqlite3.connect(rc.path)
    assert con.execute('SELECT count(*) FROM "results_v1"').fetchone() == (200_001,)
    con.close()
    assert rc.import_json(f) == {"added": 0, "replaced": 0, "kept": 200_000, "skipped": 0}
    assert _change_counter(rc.path) == before + 1
