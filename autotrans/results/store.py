"""On-disk cache of tuning results, built on sqlitedict.

One SQLite file (``results.sqlite``) per cache folder, one table per schema
version, one JSON-encoded record per :class:`CacheKey`.  Writers in all
processes are serialised by an exclusive ``flock`` on ``results.sqlite.lock``;
readers take no lock.  Each write statement is its own SQLite transaction, so a
killed writer leaves either the whole entry or none of it.
"""
from __future__ import annotations

import copy
import fcntl
import functools
import json
import logging
import operator
import os
import random
import re
import sqlite3
import tempfile
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlitedict import SqliteDict

from ..core.device import DeviceId
from ..core.paths import ENV_DIR, atomic_write, cache_root
from ..core.problem import ELEM_SIZES as ELEM_BYTES

SCHEMA_VERSION = 1
TABLE = f"results_v{SCHEMA_VERSION}"
FILENAME = "results.sqlite"
EXPORT_FORMAT = "autotrans-cache"
POLICIES = ("faster", "keep", "replace")
TIMEOUT_S = 30.0

# sqlitedict logs every failed statement at ERROR level before re-raising it in
# the caller; we handle those errors, so keep them off stderr unless the
# application configures logging itself.
logging.getLogger("sqlitedict").addHandler(logging.NullHandler())


class CacheWarning(UserWarning):
    """The cache could not be used as asked (not writable, corrupt, ...)."""


# ----------------------------------------------------------------------------
# Keys
# ----------------------------------------------------------------------------

_KEY_TEXT = re.compile(r"^v(\d+)\|([^|]+)\|e(\d+)\|(\d+)x(\d+)x(\d+)\|(.+)$", re.S)


@dataclass(frozen=True)
class CacheKey:
    """What a tuning result depends on; ``text`` is its stable storage key."""

    device: str
    templates: str
    shape: tuple
    elem_bytes: int
    schema: int = SCHEMA_VERSION

    def __post_init__(self):
        object.__setattr__(self, "shape", _normal_shape(self.shape))
        object.__setattr__(self, "elem_bytes", _int(self.elem_bytes, "elem_bytes"))
        object.__setattr__(self, "schema", _int(self.schema, "schema"))
        if not isinstance(self.device, str) or not self.device:
            raise ValueError(f"device must be a non-empty string, not {self.device!r}")
        if not isinstance(self.templates, str) or not self.templates or "|" in self.templates:
            raise ValueError(f"templates must be a non-empty string without '|', not {self.templates!r}")
        if self.elem_bytes not in ELEM_BYTES:
            raise ValueError(f"elem_bytes must be one of {ELEM_BYTES}, not {self.elem_bytes!r}")
        if self.schema < 0:
            raise ValueError(f"schema must be >= 0, not {self.schema!r}")

    @property
    def text(self) -> str:
        """``v{schema}|{templates}|e{elem_bytes}|{B}x{M}x{N}|{device}``."""
        b, m, n = self.shape
        return f"v{self.schema}|{self.templates}|e{self.elem_bytes}|{b}x{m}x{n}|{self.device}"

    @classmethod
    def from_text(cls, s: str) -> "CacheKey":
        """Inverse of :attr:`text`; ValueError unless ``s`` is a canonical key text."""
        match = _KEY_TEXT.match(s) if isinstance(s, str) else None
        if not match:
            raise ValueError(f"not a cache key: {s!r}")
        schema, templates, elem, b, m, n, device = match.groups()
        key = cls(device, templates, (int(b), int(m), int(n)), int(elem), int(schema))
        if key.text != s:
            raise ValueError(f"not a canonical cache key: {s!r}")
        return key

    @property
    def hardware(self) -> str:
        """The ``name|sm_XX|NNsm`` part of ``device`` (no driver/toolkit)."""
        try:
            return DeviceId.from_text(self.device).hardware
        except ValueError:
            return self.device


def _int(value, name: str) -> int:
    """``value`` as a plain int (numpy ints too); ValueError for floats, bools, text."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an int, not {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an int, not {value!r}") from None


def _normal_shape(shape) -> tuple:
    """``(M, N)`` -> ``(1, M, N)``; checks for three positive ints."""
    try:
        dims = tuple(_int(d, "shape") for d in shape)
    except TypeError:
        raise ValueError(f"shape must be 2 or 3 ints, not {shape!r}") from None
    if len(dims) == 2:
        dims = (1, *dims)
    if len(dims) != 3 or min(dims) < 1:
        raise ValueError(f"shape must be 2 or 3 positive ints, not {shape!r}")
    return dims


# ----------------------------------------------------------------------------
# Low-level helpers: locking, retrying, sqlitedict sessions
# ----------------------------------------------------------------------------


def _is_busy(exc: sqlite3.Error) -> bool:
    """True for SQLITE_BUSY / SQLITE_LOCKED ("database is locked")."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED
    return "locked" in str(exc) or "busy" in str(exc)


def _retry(fn, deadline: float):
    """Call ``fn()``, retrying busy/locked errors with backoff until ``deadline``."""
    delay = 0.01
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay * random.uniform(0.5, 1.5))
        delay = min(2 * delay, 1.0)


@contextmanager
def _flock(path: Path, deadline: float):
    """Hold an exclusive flock on ``path`` (created if needed) until exit."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"timed out waiting for the writer lock {path}") from None
                time.sleep(delay * random.uniform(0.5, 1.5))
                delay = min(2 * delay, 0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def _session(path: Path, write: bool, action):
    """Open the table, run ``action(db)``, close again; returns its result.

    Writes use autocommit, so every statement is one transaction and errors
    surface in the caller (sqlitedict's non-autocommit commit() can hang
    forever when COMMIT hits "database is locked").
    """
    db = SqliteDict(str(path), tablename=TABLE, flag="c" if write else "r",
                    autocommit=write, encode=json.dumps, decode=json.loads,
                    outer_stack=False)
    try:
        if write:
            db.conn.execute("PRAGMA synchronous=FULL")  # sqlitedict sets OFF
        result = action(db)
        db.commit()  # raises any error left by a queued statement
        return result
    finally:
        _close(db)


def _close(db: SqliteDict) -> None:
    """Close ``db`` and stop its thread, even after an error."""
    try:
        db.close(do_log=False)
    except Exception:
        db.close(do_log=False, force=True)


def _integrity_problem(path: Path) -> str | None:
    """None if ``path`` is a sound SQLite file, else a description of the damage."""
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=5)
    try:
        rows = con.execute("PRAGMA quick_check").fetchall()
    except sqlite3.OperationalError:
        raise  # busy, unreadable, ...: not evidence of corruption
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        con.close()
    return None if rows == [("ok",)] else "; ".join(str(r[0]) for r in rows)[:300]


def _time_us(record: dict) -> float:
    """``record["time_us"]`` as a float; infinity when missing or not a number."""
    t = record.get("time_us") if isinstance(record, dict) else None
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else float("inf")


def _plan_import(current: dict, entries, policy: str):
    """Which imported entries to write, and the added/replaced/kept counts."""
    updates, counts = {}, {"added": 0, "replaced": 0, "kept": 0}
    for key, record in entries:
        text = key.text
        old = updates.get(text, current.get(text))
        if old is None:
            outcome = "added"
        elif policy == "replace" or (policy == "faster" and _time_us(record) < _time_us(old)):
            outcome = "replaced"
        else:
            outcome = "kept"
        counts[outcome] += 1
        if outcome != "kept":
            updates[text] = record
    return updates, counts


# ----------------------------------------------------------------------------
# The cache
# ----------------------------------------------------------------------------


class ResultCache:
    """Tuning results keyed by :class:`CacheKey`, in ``cache_root(root)/results.sqlite``.

    Reads never raise for environmental problems (missing, unreadable or
    locked cache: they warn and return nothing); writes warn and report failure.
    """

    def __init__(self, root: str | Path | None = None, *, timeout: float = TIMEOUT_S):
        self.folder = cache_root(root)
        self.path = self.folder / FILENAME
        self.lock_path = self.folder / (FILENAME + ".lock")
        self.timeout = timeout
        self._checked = False

    def __repr__(self) -> str:
        return f"ResultCache({str(self.folder)!r})"

    # -- reading --------------------------------------------------------------

    def get(self, key: CacheKey) -> dict | None:
        """The record stored for ``key``, or None."""
        return self._read(lambda db: db.get(key.text), None)

    def items(self, device: str | None = None) -> list[tuple[CacheKey, dict]]:
        """All (key, record) pairs, optionally only for ``device``; sorted by key text."""
        rows = self._read(lambda db: list(db.iteritems()), [])
        out = []
        for text, record in sorted(rows, key=lambda row: row[0]):
            try:
                key = CacheKey.from_text(text)
            except ValueError:
                continue
            if key.schema == SCHEMA_VERSION and device in (None, key.device):
                out.append((key, record))
        return out

    def _read(self, action, default):
        """``action(db)`` on a read-only session; ``default`` if there is no usable table."""
        deadline = time.monotonic() + self.timeout
        try:
            self._check_once(deadline)
            if not self.path.is_file():  # sqlitedict's flag 'r' raises (and
                return default           # leaves an empty file) for a missing file
            return _retry(lambda: _session(self.path, False, action), deadline)
        except RuntimeError:  # "Refusing to create a new table ... in read-only DB mode"
            return default
        except (OSError, sqlite3.Error) as exc:
            warnings.warn(f"autotrans cache {self.path} could not be read ({exc}); "
                          "treating it as empty", CacheWarning, stacklevel=3)
            return default

    # -- writing --------------------------------------------------------------

    def put(self, key: CacheKey, record: dict) -> bool:
        """Store ``record`` for ``key``; False (with a warning) if the cache is not writable."""
        if key.schema != SCHEMA_VERSION:
            raise ValueError(f"key has schema {key.schema}, this cache stores schema {SCHEMA_VERSION}")
        if not isinstance(record, dict):
            raise TypeError(f"record must be a dict, not {type(record).__name__}")
        record = json.loads(json.dumps(record))  # JSON-able or TypeError, now

        def run(deadline):
            self._apply(deadline, updates={key.text: record})
            return True

        return self._write(run, False)

    def delete(self, keys) -> int:
        """Remove ``keys`` (a CacheKey or an iterable of them); returns how many existed."""
        texts = {k.text for k in ([keys] if isinstance(keys, CacheKey) else keys)}

        def run(deadline):
            gone = [t for t in self._snapshot(deadline) if t in texts]
            self._apply(deadline, deletions=gone)
            return len(gone)

        return self._write(run, 0)

    def clear(self, device: str | None = None) -> int:
        """Remove all entries, or only those of ``device``; returns how many."""
        def run(deadline):
            gone = [t for t in self._snapshot(deadline)
                    if device is None or _device_of(t) == device]
            self._apply(deadline, deletions=gone, everything=device is None)
            return len(gone)

        return self._write(run, 0)

    def import_json(self, path, policy: str = "faster") -> dict:
        """Merge an export file into this cache; returns added/replaced/kept counts.

        ``policy``: "faster" keeps whichever record has the smaller
        ``time_us``, "keep" never overwrites, "replace" always does.
        """
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
        entries = load_export(path)

        def run(deadline):
            updates, counts = _plan_import(self._snapshot(deadline), entries, policy)
            self._apply(deadline, updates=updates)
            return counts

        return self._write(run, {"added": 0, "replaced": 0, "kept": 0})

    def export_json(self, path, device: str | None = None) -> int:
        """Write entries (optionally only ``device``'s) to an export file; returns the count."""
        entries = self.items(device)
        doc = {"format": EXPORT_FORMAT, "schema": SCHEMA_VERSION,
               "entries": [{"key": k.text, "record": r} for k, r in entries]}
        atomic_write(Path(path), (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())
        return len(entries)

    def _write(self, run, default):
        """``run(deadline)`` holding the writer lock; warn and return ``default`` on failure."""
        deadline = time.monotonic() + self.timeout
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with _flock(self.lock_path, deadline):
                self._check_once(deadline, locked=True)
                return run(deadline)
        except (OSError, sqlite3.Error, RuntimeError) as exc:
            warnings.warn(f"autotrans cache {self.path} is not writable ({exc}); "
                          "nothing was changed", CacheWarning, stacklevel=3)
            return default

    def _snapshot(self, deadline: float) -> dict:
        """All stored {key text: record}; call with the writer lock held."""
        return _retry(lambda: _session(self.path, True, lambda db: dict(db.iteritems())), deadline)

    def _apply(self, deadline, updates=None, deletions=(), everything=False):
        """Write ``updates`` and remove ``deletions`` (idempotent, so retried whole)."""
        def action(db):
            if everything:
                db.clear()
            else:
                for text in deletions:
                    if text in db:
                        del db[text]
            if updates:
                db.update(updates)

        _retry(lambda: _session(self.path, True, action), deadline)

    # -- corruption -----------------------------------------------------------

    def _check_once(self, deadline: float, locked: bool = False) -> None:
        """On first use, move a corrupt cache file aside (with a warning)."""
        if self._checked or not self.path.is_file():
            return
        if _retry(lambda: _integrity_problem(self.path), deadline):
            if locked:
                self._move_aside(deadline)
            else:
                try:
                    self.folder.mkdir(parents=True, exist_ok=True)
                    with _flock(self.lock_path, deadline):
                        self._move_aside(deadline)
                except OSError as exc:
                    warnings.warn(f"autotrans cache {self.path} is corrupt and could not be "
                                  f"moved aside ({exc})", CacheWarning, stacklevel=4)
        self._checked = True

    def _move_aside(self, deadline: float) -> None:
        """Re-check (lock held) and rename a corrupt file to ``*.corrupt-<timestamp>``."""
        problem = self.path.is_file() and _retry(lambda: _integrity_problem(self.path), deadline)
        if not problem:
            return  # another process already dealt with it
        dest = self.path.with_name(f"{FILENAME}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 1
        while dest.exists():
            dest, n = dest.with_name(f"{FILENAME}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{n}"), n + 1
        os.replace(self.path, dest)  # (SQLite already dealt with any hot journal when checking)
        warnings.warn(f"autotrans cache {self.path} is corrupt ({problem}); moved it to "
                      f"{dest} and started a fresh cache", CacheWarning, stacklevel=5)


def _device_of(text: str) -> str | None:
    """The device part of a key text, or None for junk."""
    try:
        return CacheKey.from_text(text).device
    except ValueError:
        return None


# ----------------------------------------------------------------------------
# Export files and shipped results
# ----------------------------------------------------------------------------


def load_export(path) -> list[tuple[CacheKey, dict]]:
    """The (key, record) pairs of an export file; ValueError if it is not one."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not an autotrans cache export (not JSON: {exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise ValueError(f"{path} is not an autotrans cache export (no \"format\": \"{EXPORT_FORMAT}\")")
    if doc.get("schema") != SCHEMA_VERSION:
        raise ValueError(f"{path} has cache schema {doc.get('schema')!r}; "
                         f"this version of autotrans reads schema {SCHEMA_VERSION}")
    if not isinstance(doc.get("entries"), list):
        raise ValueError(f"{path} is not an autotrans cache export (no \"entries\" list)")
    return [_entry(path, i, e) for i, e in enumerate(doc["entries"])]


def _entry(path: Path, i: int, entry) -> tuple[CacheKey, dict]:
    """One export entry as (key, record); ValueError naming the entry if malformed."""
    if not isinstance(entry, dict) or not isinstance(entry.get("record"), dict):
        raise ValueError(f"{path}: entry {i} is not {{\"key\": ..., \"record\": {{...}}}}")
    try:
        key = CacheKey.from_text(entry.get("key"))
    except ValueError as exc:
        raise ValueError(f"{path}: entry {i}: {exc}") from None
    if key.schema != SCHEMA_VERSION:
        raise ValueError(f"{path}: entry {i} has key schema {key.schema}, expected {SCHEMA_VERSION}")
    return key, entry["record"]


def shipped_dir() -> Path:
    """The repository's top-level ``cache/`` folder, or the package's ``shipped/``."""
    here = Path(__file__).resolve().parent.parent
    repo = here.parent / "cache"
    return repo if repo.is_dir() else here / "shipped"


def shipped_entries(folder: str | Path | None = None) -> list[tuple[CacheKey, dict]]:
    """All entries of the ``*.json`` exports in ``folder`` (default :func:`shipped_dir`).

    Read once per process and folder; files that are not valid exports are
    skipped with a warning.
    """
    folder = Path(folder) if folder is not None else shipped_dir()
    return copy.deepcopy(list(_shipped(str(folder.resolve()))))


@functools.lru_cache(maxsize=None)
def _shipped(folder: str) -> tuple:
    """Cached body of :func:`shipped_entries`."""
    entries = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            entries.extend(load_export(path))
        except (OSError, ValueError) as exc:
            warnings.warn(f"skipping shipped cache file {path}: {exc}", CacheWarning, stacklevel=3)
    return tuple(entries)
