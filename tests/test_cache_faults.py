"""ResultCache under real faults: concurrent processes, SIGKILL, corrupt files,
locked databases and folders that cannot be written.  No mocks."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from autotrans.results.store import CacheWarning, ResultCache

REPO = Path(__file__).resolve().parent.parent
DEVICE = "NVIDIA H200|sm_90|132sm|driver 580.159.04|cuda 13.0"

# Shared by the worker processes (run with ``python -W error -c``): any
# warning or exception makes the worker exit non-zero with a traceback.
WORKER_LIB = r'''
import hashlib, json, os, random, sys
from autotrans.core.device import DeviceId
from autotrans.kernels.config import classic
from autotrans.results.record import Failure, TuneRecord
from autotrans.results.store import CacheKey, ResultCache
DEVICE = "NVIDIA H200|sm_90|132sm|driver 580.159.04|cuda 13.0"
CFG = classic("tile", 4)

def key(i):
    return CacheKey(DEVICE, "tmplhash", (1 + i % 7, 64, 64 + i), 4)

def record(i, size, time_us=None, payload=None):
    """A valid record for key(i): ``seconds`` holds i, the failure reasons
    ``size`` bytes of payload after their sha256."""
    payload = os.urandom(size // 2).hex() if payload is None else payload
    chunks = [payload[j:j + 2000] for j in range(0, len(payload), 2000)]
    reasons = [hashlib.sha256(payload.encode()).hexdigest()] + chunks
    t = float(i + 1) if time_us is None else time_us
    return TuneRecord(CFG, key(i).shape, 4, "float32", t, t, t, 1.0, t, 1.0, 1.0, (),
                      tuple(Failure(CFG.key, "verify", r) for r in reasons), DeviceId.from_text(DEVICE),
                      0, "2025-01-01T00:00:00+00:00", float(i), ())

def index(record):
    return int(record.seconds)
'''
exec(WORKER_LIB)   # the same key(), record() and index() here

WRITER = WORKER_LIB + r'''
root, worker, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rc = ResultCache(root)
for n in range(count):
    i = worker * 1000 + n
    assert rc.put(key(i), record(i, size)) is True, "put failed"
    got = rc.get(key(i))
    assert got is not None and index(got) == i, f"lost {i}: {got!r:.200}"
    if n % 10 == 0:
        assert len(rc.items()) >= n + 1
print("done", flush=True)
'''

# Writes forever, printing each index once put() has returned.
KILLED_WRITER = WORKER_LIB + r'''
root, start = sys.argv[1], int(sys.argv[2])
rc = ResultCache(root)
print("ready", flush=True)
i = start
while True:
    assert rc.put(key(i), record(i, random.randint(50_000, 400_000)))
    print(i, flush=True)
    i += 1
'''

IMPORTER = WORKER_LIB + r'''
root, export = sys.argv[1], sys.argv[2]
print(json.dumps(ResultCache(root).import_json(export)), flush=True)
'''


def spawn(script, *args, **kw):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-W", "error", "-c", script, *map(str, args)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)


def finish(procs, timeout=90):
    """Wait for all; assert each exited 0 and return their stdouts."""
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        assert p.returncode == 0, f"worker failed (rc {p.returncode}):\n{err}"
        outs.append(out)
    return outs


def checksum_ok(record):
    reasons = [f.reason for f in record.failures]
    return hashlib.sha256("".join(reasons[1:]).encode()).hexdigest() == reasons[0]


def integrity(path):
    con = sqlite3.connect(path)
    try:
        return con.execute("PRAGMA integrity_check").fetchall()
    finally:
        con.close()


def rec(i, time_us=None):
    """A small deterministic record for key(i)."""
    return record(i, 0, time_us, payload="x" * 20)


def fill(rc, n, size=2000):
    for i in range(n):
        assert rc.put(key(i), record(i, 0, payload="x" * size))


# -- many processes ------------------------------------------------------------


def test_eight_processes_writing_at_once(tmp_path):
    workers, count = 8, 25
    procs = [spawn(WRITER, tmp_path, w, count, 3000) for w in range(workers)]
    assert all(out.strip() == "done" for out in finish(procs))
    items = ResultCache(tmp_path).items()
    assert len(items) == workers * count
    want = {key(w * 1000 + n) for w in range(workers) for n in range(count)}
    assert {k for k, _ in items} == want
    assert all(checksum_ok(r) for _, r in items)
    assert integrity(tmp_path / "results.sqlite") == [("ok",)]


def test_concurrent_faster_imports_keep_the_fastest(tmp_path):
    """Import is read-decide-write: without the writer lock, processes would
    overwrite each other's faster results."""
    keys = [key(i) for i in range(40)]
    times = {}
    for w in range(8):
        entries = []
        for k in keys:
            t = random.uniform(1, 100)
            times[k] = min(t, times.get(k, t))
            entries.append({"key": k.text, "record": rec(keys.index(k), t).to_json()})
        doc = {"format": "autotrans-cache", "schema": 1, "entries": entries}
        (tmp_path / f"w{w}.json").write_text(json.dumps(doc))
    root = tmp_path / "cache"
    procs = [spawn(IMPORTER, root, tmp_path / f"w{w}.json") for w in range(8)]
    counts = [json.loads(out) for out in finish(procs)]
    assert sum(c["added"] for c in counts) == len(keys)
    assert sum(sum(c.values()) for c in counts) == 8 * len(keys)
    got = dict(ResultCache(root).items())
    assert {k: r.time_us for k, r in got.items()} == times


def test_writers_wait_for_the_lock_file(tmp_path):
    """put() takes the flock on results.sqlite.lock and waits while another holds it."""
    rc = ResultCache(tmp_path, timeout=0.5)
    assert rc.put(key(0), rec(0))
    fd = os.open(rc.lock_path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        t0 = time.monotonic()
        with pytest.warns(CacheWarning, match="is busy .*writer lock"):
            assert rc.put(key(1), rec(1)) is False
        assert time.monotonic() - t0 >= 0.5
        assert rc.get(key(0)) == rec(0)  # readers take no lock
        assert rc.get(key(1)) is None
        threading.Timer(0.4, os.close, [fd]).start()  # closing releases it
        t0 = time.monotonic()
        assert ResultCache(tmp_path, timeout=10).put(key(1), rec(1)) is True
        assert time.monotonic() - t0 >= 0.35
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    assert rc.get(key(1)) == rec(1)


def test_database_locked_never_escapes(tmp_path):
    """sqlite locks held past sqlite's own 5 s busy timeout: an EXCLUSIVE lock
    (blocks readers and writers) on one cache, a reader's SHARED lock (blocks
    a writer's commit) on another.  Calls retry and succeed, or, past their
    own timeout, warn and return nothing; none raises or hangs."""
    ex, sh = ResultCache(tmp_path / "ex"), ResultCache(tmp_path / "sh")
    fill(ex, 3)
    fill(sh, 3)
    holders = []
    for rc, begin in ((ex, "BEGIN EXCLUSIVE"), (sh, "BEGIN")):
        con = sqlite3.connect(rc.path, isolation_level=None, check_same_thread=False)
        con.execute(begin)
        con.execute('SELECT count(*) FROM "results_v1"').fetchall()  # SHARED lock
        holders.append(con)
    results = {}

    def call(name, fn):
        try:
            results[name] = fn()
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            results[name] = exc

    hasty = dict(timeout=1)
    calls = {
        "ex_get": lambda: ResultCache(ex.folder).get(key(1)),
        "ex_items": lambda: len(ResultCache(ex.folder).items()),
        "ex_put": lambda: ResultCache(ex.folder).put(key(7), rec(7)),
        "ex_hasty_get": lambda: ResultCache(ex.folder, **hasty).get(key(1)),
        "ex_hasty_put": lambda: ResultCache(ex.folder, **hasty).put(key(8), rec(8)),
        "sh_get": lambda: ResultCache(sh.folder).get(key(2)),
        "sh_put": lambda: ResultCache(sh.folder).put(key(7), rec(7)),
        "sh_hasty_put": lambda: ResultCache(sh.folder, **hasty).put(key(8), rec(8)),
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=call, args=kv, daemon=True) for kv in calls.items()]
        for t in threads:
            t.start()
        time.sleep(6.5)
        for con in holders:
            con.execute("ROLLBACK")
            con.close()
        for t in threads:
            t.join(30)
    assert set(results) == set(calls), f"hung: {set(calls) - set(results)}"
    assert results["ex_get"] == record(1, 0, payload="x" * 2000)
    assert results["ex_items"] in (3, 4)
    assert results["ex_put"] is True and results["sh_put"] is True
    assert results["ex_hasty_get"] is None
    assert results["ex_hasty_put"] is False and results["sh_hasty_put"] is False
    assert results["sh_get"] == record(2, 0, payload="x" * 2000)
    texts = sorted(str(w.message) for w in caught)
    assert len(texts) == 3, texts
    assert sum("is busy" in t and "database is locked" in t and "treating it as empty" in t
               for t in texts) == 1, texts
    # a hasty put times out on sqlite's lock, or on the flock held by a waiting put
    assert sum("is busy" in t and ("database is locked" in t or "writer lock" in t)
               and "nothing was changed" in t for t in texts) == 2, texts
    assert not any("not writable" in t for t in texts), texts
    for rc in (ex, sh):
        assert rc.get(key(7)) == rec(7) and rc.get(key(8)) is None
        assert integrity(rc.path) == [("ok",)]


# -- SIGKILL ---------------------------------------------------------------------


def test_sigkill_mid_write_loses_nothing_committed(tmp_path):
    rng = random.Random(1234)
    confirmed, hot_journals = set(), 0
    for rnd in range(20):  # >= 6 kills, and on until one lands inside a transaction
        if rnd >= 6 and hot_journals:
            break
        proc = spawn(KILLED_WRITER, tmp_path, rnd * 1000)
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(rng.uniform(0.05, 0.4))
        os.kill(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL, err
        done = {int(line) for line in out.split()}
        assert done, f"round {rnd}: writer wrote nothing before the kill\n{err}"
        confirmed |= done
        journal = tmp_path / "results.sqlite-journal"
        hot_journals += journal.exists() and journal.stat().st_size > 0

        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "corrupt" warning, no read failure
            items = ResultCache(tmp_path).items()
        indices = {index(r) for _, r in items}
        assert confirmed <= indices, f"lost {sorted(confirmed - indices)}"
        assert len(indices - confirmed) <= rnd + 1  # at most the in-flight put per kill
        for k, r in items:
            assert checksum_ok(r), f"half-written entry {k.text}"
            assert k == key(index(r))
        assert integrity(tmp_path / "results.sqlite") == [("ok",)]
    # about half the kills leave a hot journal (a transaction cut short)
    assert hot_journals >= 1, "no kill landed inside a transaction; the test proved little"
    assert ResultCache(tmp_path).put(key(99_999), rec(99_999))


# -- corrupt files ---------------------------------------------------------------


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_corrupt_file_is_moved_aside(tmp_path, damage):
    rc = ResultCache(tmp_path)
    fill(rc, 60)
    db = tmp_path / "results.sqlite"
    if damage == "truncate":
        os.truncate(db, db.stat().st_size // 2)
    else:
        db.write_bytes(random.Random(7).randbytes(64 * 1024))
    bad = db.read_bytes()

    fresh = ResultCache(tmp_path)
    with pytest.warns(CacheWarning, match="corrupt") as caught:
        assert fresh.get(key(1)) is None
    moved = list(tmp_path.glob("results.sqlite.corrupt-*"))
    assert len(moved) == 1 and moved[0].read_bytes() == bad
    message = str(caught[0].message)
    assert str(db) in message and str(moved[0]) in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # checked once: no more warnings
        assert fresh.items() == []
        assert fresh.put(key(1), rec(1))
        assert fresh.get(key(1)) == rec(1)
        assert ResultCache(tmp_path).items() == [(key(1), rec(1))]
    assert integrity(db) == [("ok",)]


def test_corrupt_file_found_by_a_writer(tmp_path):
    db = tmp_path / "results.sqlite"
    db.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 40)
    rc = ResultCache(tmp_path)
    with pytest.warns(CacheWarning, match="corrupt"):
        assert rc.put(key(2), rec(2)) is True
    assert len(list(tmp_path.glob("results.sqlite.corrupt-*"))) == 1
    assert rc.items() == [(key(2), rec(2))]


def test_corruption_is_checked_once_per_instance(tmp_path):
    """A cache already checked by this instance is not re-checked per call
    (later damage shows up as a read warning); a new instance moves it aside."""
    rc = ResultCache(tmp_path)
    fill(rc, 5)
    assert rc.get(key(1)) is not None
    (tmp_path / "results.sqlite").write_bytes(b"\x13" * 8192)
    with pytest.warns(CacheWarning, match="could not be read"):
        assert rc.get(key(1)) is None
    for t in threading.enumerate():  # let the dead thread report within this test
        if t is not threading.current_thread():
            t.join(5)
    assert not list(tmp_path.glob("results.sqlite.corrupt-*"))
    with pytest.warns(CacheWarning, match="corrupt"):
        assert ResultCache(tmp_path).items() == []
    assert len(list(tmp_path.glob("results.sqlite.corrupt-*"))) == 1


# -- caches that cannot be written -------------------------------------------------


def _can_write(folder: Path) -> bool:
    try:
        (folder / "probe").touch()
    except OSError:
        return False
    (folder / "probe").unlink()
    return True


def _assert_read_only_behaviour(rc, expected_items):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rc.items() == expected_items
        assert rc.get(key(0)) == (expected_items[0][1] if expected_items else None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert rc.put(key(50), rec(50)) is False
        assert rc.delete([key(0)]) == 0
        assert rc.clear() == 0
    assert len(caught) == 3 and all(issubclass(w.category, CacheWarning) for w in caught)
    assert "not writable" in str(caught[0].message)
    assert rc.items() == expected_items


def test_read_only_directory(tmp_path):
    rc = ResultCache(tmp_path / "ro")
    fill(rc, 2, size=10)
    expected = rc.items()
    (tmp_path / "ro").chmod(0o555)
    (tmp_path / "ro" / "results.sqlite").chmod(0o444)
    (tmp_path / "ro" / "results.sqlite.lock").chmod(0o444)
    try:
        if _can_write(tmp_path / "ro"):
            pytest.skip("chmod does not stop writes here (running as root)")
        _assert_read_only_behaviour(ResultCache(tmp_path / "ro"), expected)
        empty = tmp_path / "empty_ro"
        empty.mkdir(mode=0o555)
        _assert_read_only_behaviour(ResultCache(empty), [])
        _assert_read_only_behaviour(ResultCache(empty / "sub"), [])
    finally:
        (tmp_path / "ro").chmod(0o755)
        if (tmp_path / "empty_ro").exists():
            (tmp_path / "empty_ro").chmod(0o755)


def test_read_only_file_in_writable_directory(tmp_path):
    rc = ResultCache(tmp_path)
    fill(rc, 2, size=10)
    expected = rc.items()
    (tmp_path / "results.sqlite").chmod(0o444)
    try:
        with open(tmp_path / "results.sqlite", "ab"):
            pytest.skip("chmod does not stop writes here (running as root)")
    except PermissionError:
        pass
    _assert_read_only_behaviour(ResultCache(tmp_path), expected)


def test_folder_that_cannot_be_created_parent_is_a_file(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a regular file, so no folder can be made under it")
    rc = ResultCache(blocker / "cache")
    _assert_read_only_behaviour(rc, [])
    assert blocker.is_file()


def test_folder_that_cannot_be_created_under_proc():
    _assert_read_only_behaviour(ResultCache("/proc/autotrans-cache-test/cache"), [])
