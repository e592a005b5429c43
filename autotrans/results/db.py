"""The SQLite file under the cache: sqlitedict's layout, reached through sqlite3.

Each table (TABLES: the results, and the strided problems' results) is the
one ``SqliteDict(path, tablename=..., encode=json.dumps, decode=json.loads)``
reads and writes (``key TEXT PRIMARY KEY, value BLOB``,
JSON text values, rollback journal), so either can open the file. Going
through sqlite3 directly gives what sqlitedict's worker thread cannot: real
transactions (a write is all or nothing), bounded waits for a busy file, and
errors raised in the caller instead of tracebacks printed by another thread.
"""
from __future__ import annotations

import errno
import fcntl
import os
import random
import sqlite3
import stat
import time
from contextlib import contextmanager
from pathlib import Path

from .errors import CacheBusy
from .keys import PROBLEM_TABLE, TABLE

TABLES = (TABLE, PROBLEM_TABLE)     # the results and the strided problems' results, same layout


def make_table(name: str) -> str:
    """The statement creating table ``name`` (one of TABLES) if it is missing."""
    if name not in TABLES:
        raise ValueError(f"unknown table {name!r}")
    return f'CREATE TABLE IF NOT EXISTS "{name}" (key TEXT PRIMARY KEY, value BLOB)'


MAKE_TABLE = make_table(TABLE)


def path_problem(path: Path) -> str | None:
    """Why ``path`` cannot hold the database ("a directory", "a dangling
    symlink", ...), or None: a regular file, or nothing there yet."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "a dangling symlink" if os.path.islink(path) else None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            return None      # no folder there yet (writes will fail to make one)
        return "a symlink loop" if exc.errno == errno.ELOOP else f"not usable ({exc.strerror})"
    if stat.S_ISDIR(st.st_mode):
        return "a directory"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    return None


def is_busy(exc: sqlite3.Error) -> bool:
    """True for SQLITE_BUSY / SQLITE_LOCKED ("database is locked")."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (5, 6)
    return "locked" in str(exc) or "busy" in str(exc)


def _left(deadline: float) -> float:
    return max(0.05, deadline - time.monotonic())


@contextmanager
def flock(path: Path, deadline: float):
    """Hold an exclusive flock on ``path`` (created if needed) until exit;
    CacheBusy if another process holds it past ``deadline``."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    try:
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise CacheBusy(f"another process holds the writer lock {path}") from None
                time.sleep(delay * random.uniform(0.5, 1.5))
                delay = min(2 * delay, 0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def connect(path: Path, deadline: float, create: bool = False) -> sqlite3.Connection:
    """A connection with manual transactions that waits for locks until
    ``deadline``; read-write where the file may be written (so a hot journal
    left by a killed writer is rolled back), else read-only."""
    if create:
        mode = "rwc"
    else:
        mode = "rw" if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK) else "ro"
    con = sqlite3.connect(f"{Path(os.path.abspath(path)).as_uri()}?mode={mode}", uri=True,
                          timeout=_left(deadline), isolation_level=None, check_same_thread=False)
    con.text_factory = _text
    return con


def _text(raw: bytes) -> str:
    """A TEXT value as str; bytes that are not UTF-8 become U+FFFD, so one
    damaged row fails its own validation instead of the whole query."""
    return raw.decode("utf-8", "replace")


def _busy_to_error(exc: sqlite3.Error, path: Path):
    if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
        raise CacheBusy(f"{path} is locked by another process ({exc})") from None
    raise exc


def has_table(con: sqlite3.Connection, name: str) -> bool:
    """Whether the database on ``con`` has table ``name``."""
    return con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() \
        is not None


def read(path: Path, deadline: float, sql: str, args=(), table: str = TABLE) -> list:
    """Rows of ``sql`` on ``table`` (empty if it does not exist); CacheBusy
    when locked past ``deadline``; other sqlite3/OS errors raised as they are."""
    con = connect(path, deadline)
    try:
        try:
            found = has_table(con, table)
            return con.execute(sql, args).fetchall() if found else []
        except sqlite3.Error as exc:
            _busy_to_error(exc, path)
    finally:
        con.close()


def transaction(path: Path, deadline: float, action):
    """``action(con)`` inside one IMMEDIATE transaction, committed durably;
    rolled back (the table exactly as it was) if anything fails."""
    con = connect(path, deadline, create=True)
    try:
        try:
            con.execute("PRAGMA synchronous=FULL")
            con.execute("BEGIN IMMEDIATE")
            try:
                con.execute(MAKE_TABLE)
                result = action(con)
                con.execute("COMMIT")
                return result
            except BaseException:
                if con.in_transaction:
                    try:
                        con.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass    # SQLite rolls back a failed transaction's journal on next open
                raise
        except sqlite3.Error as exc:
            _busy_to_error(exc, path)
    finally:
        con.close()


def integrity_problem(path: Path, deadline: float) -> str | None:
    """None if ``path`` is a sound SQLite file, else a description of the damage
    (busy and unreadable files raise: they are no evidence of corruption)."""
    con = connect(path, deadline)
    try:
        rows = con.execute("PRAGMA quick_check").fetchall()
    except sqlite3.OperationalError as exc:
        _busy_to_error(exc, path)
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        con.close()
    return None if rows == [("ok",)] else "; ".join(str(r[0]) for r in rows)[:300]


def identity(path: Path):
    """What changes whenever the file does (device, inode, size, mtime), or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
