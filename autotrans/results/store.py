"""The on-disk cache of tuning results: ``results.sqlite`` in the cache folder.

One table per schema version, one JSON record per :class:`CacheKey`, in the
layout sqlitedict uses (see :mod:`.db`); strided canonical problems' records
(also TuneRecords) under :class:`ProblemKey` in a table of their own
(PROBLEM_TABLE), read and written by the ``*_problem`` methods under the same
rules. Every record read is validated (:class:`TuneRecord`); invalid rows are
skipped with one warning. Writers in
all processes are serialised by an exclusive ``flock`` on
``results.sqlite.lock`` and write in one SQLite transaction each, so a killed
or failing writer leaves everything or nothing; readers take no lock.
"""
from __future__ import annotations

import os
import sqlite3
import time
import warnings
from pathlib import Path

from ..core.paths import cache_root
from . import db
from .errors import CacheBusy, CacheReadError, CacheWarning, CacheWriteError, InvalidRecordWarning
from .keys import PROBLEM_SCHEMA, PROBLEM_TABLE, SCHEMA_VERSION, TABLE, CacheKey, ProblemKey
from .record import TuneRecord, check_problem_record, dumps, loads, loads_problem
from .shipped import shipped_dir, shipped_entries
from .transfer import (EXPORT_FORMAT, export_target, export_text, load_export, parse_export,
                       parse_export_all, read_export, read_export_all, warn_skipped, without_gc,
                       write_export)

FILENAME = "results.sqlite"
POLICIES = ("faster", "keep", "replace")
TIMEOUT_S = 30.0
_SOUND: set = set()          # identities of database files found sound in this process

__all__ = ["ResultCache", "CacheKey", "ProblemKey", "TuneRecord", "PROBLEM_TABLE",
           "CacheWarning", "InvalidRecordWarning", "CacheBusy",
           "CacheReadError", "CacheWriteError", "FILENAME", "POLICIES", "SCHEMA_VERSION", "TABLE", "EXPORT_FORMAT",
           "shipped_entries", "shipped_dir", "load_export", "read_export", "parse_export",
           "read_export_all", "parse_export_all"]

_SELECT = f'SELECT key, value FROM "{TABLE}" ORDER BY key'
_SELECT_PROBLEMS = f'SELECT key, value FROM "{PROBLEM_TABLE}" ORDER BY key'


def _device_of(text: str, key_type=CacheKey) -> str | None:
    """The device part of a key text (of key_type), or None for junk."""
    try:
        return key_type.from_text(text).device
    except ValueError:
        return None


def _problem_device_of(text: str) -> str | None:
    return _device_of(text, ProblemKey)


def _decode(rows, device: str | None, problems: list, key_type=CacheKey, schema: int = SCHEMA_VERSION,
            load=loads) -> list[tuple]:
    """Valid (key, record) pairs of stored rows of one table (its key type,
    schema and record loader; default the transpose results'), optionally
    only ``device``'s; a problem noted per invalid row."""
    out = []
    for text, value in rows:
        try:
            key = key_type.from_text(text)
            if key.schema != schema:
                raise ValueError(f"schema {key.schema} key in the schema {schema} table")
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if device not in (None, key.device):
            continue
        try:
            out.append((key, load(value, key)))
        except ValueError as exc:
            problems.append(f"{text[:300]}: {exc}")
    return out


def _decode_problems(rows, device: str | None, problems: list) -> list[tuple[ProblemKey, TuneRecord]]:
    """_decode for rows of the problems' table."""
    return _decode(rows, device, problems, ProblemKey, PROBLEM_SCHEMA, loads_problem)


def _stored(key: CacheKey | ProblemKey, record: TuneRecord) -> tuple:
    """What an import keeps of a valid entry: (key text, time, stored text, None),
    or (key text, time, None, the problem) for a record over the size limit."""
    try:
        return key.text, record.time_us, dumps(record), None
    except ValueError as exc:
        return key.text, record.time_us, None, f"{key.text[:160]}: {exc}"


class ResultCache:
    """Tuning results keyed by :class:`CacheKey`, in ``cache_root(root)/results.sqlite``.

    Reads never raise for environmental problems (missing, unreadable, busy or
    corrupt cache: they warn and return nothing); put/delete/clear warn and
    report failure; import_json raises (CacheBusy, CacheWriteError) and then
    has changed nothing.
    """

    def __init__(self, root: str | Path | None = None, *, timeout: float = TIMEOUT_S):
        self.folder = cache_root(root)
        self.path = self.folder / FILENAME
        self.lock_path = self.folder / (FILENAME + ".lock")
        self.timeout = timeout
        self._checked = False
        self._corrupt: str | None = None     # damage found but not moved aside

    def __repr__(self) -> str:
        return f"ResultCache({str(self.folder)!r})"

    @property
    def own_files(self) -> list[Path]:
        """The database and the files SQLite and autotrans keep beside it."""
        return [self.path, self.lock_path] + [self.folder / (FILENAME + s) for s in ("-journal", "-wal", "-shm")]

    # -- reading --------------------------------------------------------------

    def get(self, key: CacheKey) -> TuneRecord | None:
        """The valid record stored for ``key``, or None."""
        rows = self._read(f'SELECT key, value FROM "{TABLE}" WHERE key = ?', (key.text,))
        problems: list = []
        found = _decode(rows, None, problems)
        warn_skipped(problems, f"the autotrans cache {self.path}")
        return found[0][1] if found else None

    def items(self, device: str | None = None, *, strict: bool = False) -> list[tuple[CacheKey, TuneRecord]]:
        """All valid (key, record) pairs, optionally only ``device``'s; sorted by
        key text. ``strict``: CacheReadError where the cache exists but cannot be
        read (else a warning and nothing)."""
        problems: list = []
        out = _decode(self._read(_SELECT, strict=strict), device, problems)
        warn_skipped(problems, f"the autotrans cache {self.path}")
        return out

    def get_problem(self, key: ProblemKey) -> TuneRecord | None:
        """The valid record stored for a strided problem's ``key``, or None."""
        rows = self._read(f'SELECT key, value FROM "{PROBLEM_TABLE}" WHERE key = ?', (key.text,),
                          PROBLEM_TABLE)
        problems: list = []
        found = _decode_problems(rows, None, problems)
        warn_skipped(problems, f"the autotrans cache {self.path}")
        return found[0][1] if found else None

    def problem_items(self, device: str | None = None, *,
                      strict: bool = False) -> list[tuple[ProblemKey, TuneRecord]]:
        """All valid strided problems' (key, record) pairs, optionally only
        ``device``'s; sorted by key text. ``strict``: as :meth:`items`'."""
        problems: list = []
        out = _decode_problems(self._read(_SELECT_PROBLEMS, (), PROBLEM_TABLE, strict), device, problems)
        warn_skipped(problems, f"the autotrans cache {self.path}")
        return out

    def row_counts(self) -> tuple[int, int]:
        """How many rows each table holds, valid or not (transpose entries,
        strided problems); what :meth:`clear` without a device removes."""
        count = 'SELECT count(*) FROM "{}"'
        return tuple(sum(n for (n,) in self._read(count.format(t), (), t)) for t in (TABLE, PROBLEM_TABLE))

    def _read(self, sql: str, args=(), table: str = TABLE, strict: bool = False) -> list:
        """Rows of ``sql``; none (with a warning) if the cache cannot be read,
        or, ``strict``, CacheReadError."""
        deadline = time.monotonic() + self.timeout
        try:
            problem = db.path_problem(self.path)
            if problem:
                raise CacheWriteError(f"it is {problem}")
            self._check_once(deadline)
            if self._corrupt and strict:
                raise CacheWriteError(f"it is corrupt ({self._corrupt})")
            if self._corrupt or not self.path.exists():
                return []                     # (corrupt: warned when found)
            return db.read(self.path, deadline, sql, args, table)
        except CacheBusy as exc:
            if strict:
                raise CacheReadError(f"the autotrans cache {self.path} is busy ({exc})") from None
            self._warn(f"is busy ({exc}); treating it as empty")
        except (CacheWriteError, OSError, sqlite3.Error) as exc:
            if strict:
                raise CacheReadError(f"the autotrans cache {self.path} could not be read ({exc})") from None
            self._warn(f"could not be read ({exc}); treating it as empty")
        return []

    def _warn(self, what: str, stacklevel: int = 4) -> None:
        warnings.warn(f"autotrans cache {self.path} {what}", CacheWarning, stacklevel=stacklevel)

    # -- writing --------------------------------------------------------------

    def put(self, key: CacheKey, record: TuneRecord | dict) -> bool:
        """Store ``record`` for ``key`` (ValueError if invalid or not for this key);
        False (with a warning) if the cache cannot be written."""
        if key.schema != SCHEMA_VERSION:
            raise ValueError(f"key has schema {key.schema}, this cache stores schema {SCHEMA_VERSION}")
        if isinstance(record, TuneRecord):
            record = record.checked(key)
        elif isinstance(record, dict):
            record = TuneRecord.from_json(record, key)
        else:
            raise TypeError(f"record must be a TuneRecord, not {type(record).__name__}")
        text = dumps(record)

        def action(con):
            con.execute(f'INSERT OR REPLACE INTO "{TABLE}" (key, value) VALUES (?, ?)', (key.text, text))
            return True

        return self._write(action, False)

    def put_problem(self, key: ProblemKey, record: TuneRecord | dict) -> bool:
        """Store a strided problem's ``record`` for ``key`` (ValueError if invalid,
        not for this key or not of strided configs that can run its problem);
        False (with a warning) if the cache cannot be written."""
        if not isinstance(key, ProblemKey):
            raise TypeError(f"key must be a ProblemKey, not {type(key).__name__}")
        if key.schema != PROBLEM_SCHEMA:
            raise ValueError(f"key has schema {key.schema}, this cache stores problems of schema "
                             f"{PROBLEM_SCHEMA}")
        if isinstance(record, TuneRecord):
            record = record.checked(key)
        elif isinstance(record, dict):
            record = TuneRecord.from_json(record, key)
        else:
            raise TypeError(f"record must be a TuneRecord, not {type(record).__name__}")
        text = dumps(check_problem_record(record, key))

        def action(con):
            con.execute(db.make_table(PROBLEM_TABLE))
            con.execute(f'INSERT OR REPLACE INTO "{PROBLEM_TABLE}" (key, value) VALUES (?, ?)', (key.text, text))
            return True

        return self._write(action, False)

    def delete(self, keys) -> int:
        """Remove ``keys`` (a CacheKey or ProblemKey, or an iterable of them);
        returns how many existed."""
        keys = [keys] if isinstance(keys, (CacheKey, ProblemKey)) else list(keys)
        texts = {t: sorted({k.text for k in keys if isinstance(k, c)})
                 for t, c in ((TABLE, CacheKey), (PROBLEM_TABLE, ProblemKey))}

        def action(con):
            return sum(con.execute(f'DELETE FROM "{table}" WHERE key = ?', (t,)).rowcount
                       for table, ts in texts.items() if ts and db.has_table(con, table) for t in ts)

        return self._write(action, 0)

    def clear(self, device: str | None = None) -> int:
        """Remove all entries (valid or not) of both tables, or only those of
        ``device``; returns how many."""
        return sum(self.clear_each(device))

    def clear_each(self, device: str | None = None) -> tuple[int, int]:
        """:meth:`clear`, returning how many transpose entries and how many
        strided problem rows it removed."""
        def one(con, table, device_of):
            if not db.has_table(con, table):
                return 0
            if device is None:
                return con.execute(f'DELETE FROM "{table}"').rowcount
            gone = [(t,) for (t,) in con.execute(f'SELECT key FROM "{table}"') if device_of(t) == device]
            con.executemany(f'DELETE FROM "{table}" WHERE key = ?', gone)
            return len(gone)

        def action(con):
            return one(con, TABLE, _device_of), one(con, PROBLEM_TABLE, _problem_device_of)

        return self._write(action, (0, 0))

    def import_json(self, path, policy: str = "faster") -> dict:
        """Merge an export file (its entries and strided problem rows) into this
        cache in one transaction; returns the true added/replaced/kept/skipped
        counts of all rows and, if the file has problem rows, under "problems"
        the same four counts of those alone.

        ``policy``: "faster" keeps whichever record has the smaller ``time_us``,
        "keep" never overwrites a valid entry, "replace" always does. Invalid
        rows are skipped (one warning); ValueError if the file is not an
        export; CacheBusy or CacheWriteError if the cache could not be written,
        and then nothing was changed.
        """
        _check_policy(policy)
        with without_gc():
            return self._import_entries(read_export_all(path, _stored), policy, str(path))

    def import_text(self, text, policy: str = "faster", name: str = "<stdin>") -> dict:
        """:meth:`import_json` of an export file's content (str or bytes)."""
        _check_policy(policy)
        with without_gc():
            return self._import_entries(parse_export_all(text, name, _stored), policy, name)

    def _import_entries(self, parsed, policy, name) -> dict:
        """Merge parse_export_all()'s _stored() rows, (key text, time, stored
        text or None, its problem), into both tables in one transaction."""
        entries, invalid, problem_entries, problem_invalid = parsed
        texts, invalid = _by_key(entries, invalid)
        problem_texts, problem_invalid = _by_key(problem_entries, problem_invalid)
        warn_skipped(invalid + problem_invalid, name, stacklevel=5)

        def action(con):
            counts = _merge(con, TABLE, _SELECT, _decode, texts, policy)
            share = {"added": 0, "replaced": 0, "kept": 0}
            if problem_texts:
                con.execute(db.make_table(PROBLEM_TABLE))
                share = _merge(con, PROBLEM_TABLE, _SELECT_PROBLEMS, _decode_problems, problem_texts, policy)
            return counts, share

        counts, share = self._write(action, None, raise_errors=True)
        counts["skipped"], share["skipped"] = len(invalid), len(problem_invalid)
        if not any(share.values()):
            return counts
        return {**{k: n + share[k] for k, n in counts.items()}, "problems": share}

    def _write(self, action, default, raise_errors: bool = False):
        """``action(con)`` in one transaction under the writer lock. On failure:
        raise (``raise_errors``) or warn and return ``default``."""
        deadline = time.monotonic() + self.timeout
        try:
            problem = db.path_problem(self.path)
            if problem:
                raise CacheWriteError(f"it is {problem}")
            self.folder.mkdir(parents=True, exist_ok=True)
            with db.flock(self.lock_path, deadline):
                self._check_once(deadline, locked=True)
                if self._corrupt:
                    raise CacheWriteError(f"it is corrupt ({self._corrupt}) and could not be moved aside")
                return db.transaction(self.path, deadline, action)
        except CacheBusy as exc:
            if raise_errors:
                raise CacheBusy(f"the autotrans cache {self.path} is busy: {exc}; waited "
                                f"{self.timeout:g} s; nothing was changed, try again") from None
            self._warn(f"is busy ({exc}); nothing was changed")
        except (CacheWriteError, OSError, sqlite3.Error) as exc:
            if raise_errors:
                raise CacheWriteError(f"could not write the autotrans cache {self.path} ({exc}); "
                                      "nothing was changed") from None
            self._warn(f"is not writable ({exc}); nothing was changed")
        return default

    # -- export ---------------------------------------------------------------

    def export_rows(self, device: str | None = None) -> tuple[str, int, int]:
        """The export file's text of the valid entries and strided problem rows
        (optionally only ``device``'s), and how many of each there are;
        CacheReadError if the cache exists but cannot be read."""
        entries, problem_rows = self.items(device, strict=True), self.problem_items(device, strict=True)
        return export_text(entries, problem_rows), len(entries), len(problem_rows)

    def export_text(self, device: str | None = None) -> tuple[str, int]:
        """:meth:`export_rows`'s text and its count of rows of both kinds."""
        text, n, p = self.export_rows(device)
        return text, n + p

    def export_file(self, path, device: str | None = None) -> tuple[int, int]:
        """Write entries and strided problem rows (optionally only ``device``'s)
        to an export file, atomically; returns how many of each. ValueError
        (before anything is read or written) if ``path`` is not a regular file
        or a new name: the cache's own files, SQLite databases, directories and
        devices are refused."""
        export_target(path, self.own_files)
        text, n, p = self.export_rows(device)
        write_export(path, text, self.own_files)
        return n, p

    def export_json(self, path, device: str | None = None) -> int:
        """:meth:`export_file`, returning the count of rows of both kinds."""
        return sum(self.export_file(path, device))

    # -- corruption -----------------------------------------------------------

    def _check_once(self, deadline: float, locked: bool = False) -> None:
        """On first use, move a corrupt cache file aside (with a warning)."""
        if self._checked or not self.path.is_file():
            return
        ident = db.identity(self.path)
        if ident in _SOUND:
            self._checked = True
            return
        problem = db.integrity_problem(self.path, deadline)
        if problem is None:
            _SOUND.add(ident)
        elif locked:
            self._move_aside(deadline)
        else:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                with db.flock(self.lock_path, deadline):
                    self._move_aside(deadline)
            except (OSError, CacheBusy) as exc:
                self._corrupt = problem
                self._warn(f"is corrupt ({problem}) and could not be moved aside ({exc}); "
                           "treating it as empty", stacklevel=6)
        self._checked = True

    def _move_aside(self, deadline: float) -> None:
        """Re-check (lock held) and rename a corrupt file to ``*.corrupt-<timestamp>``."""
        problem = self.path.is_file() and db.integrity_problem(self.path, deadline)
        if not problem:
            return  # another process already dealt with it
        stamp = time.strftime('%Y%m%d-%H%M%S')
        dest, n = self.path.with_name(f"{FILENAME}.corrupt-{stamp}"), 1
        while dest.exists():
            dest, n = self.path.with_name(f"{FILENAME}.corrupt-{stamp}-{n}"), n + 1
        try:
            os.replace(self.path, dest)  # (SQLite already dealt with any hot journal when checking)
        except OSError as exc:
            self._corrupt = problem
            self._warn(f"is corrupt ({problem}) and could not be moved aside ({exc}); "
                       "treating it as empty", stacklevel=7)
            return
        self._warn(f"is corrupt ({problem}); moved it to {dest} and started a fresh cache", stacklevel=7)


def _by_key(entries, invalid: list) -> tuple[dict, list]:
    """{key text: [(time, stored text), ...]} of _stored() rows in file order,
    and ``invalid`` plus a line per row over the stored size limit."""
    texts = {}
    for text, time_us, encoded, problem in entries:
        if problem is None:
            texts.setdefault(text, []).append((time_us, encoded))
        else:
            invalid = invalid + [problem]
    return texts, invalid


def _merge(con, table: str, select: str, decode, texts: dict, policy: str) -> dict:
    """Merge ``texts`` (of :func:`_by_key`) into ``table`` by ``policy``, each
    row in file order against what is stored (``decode``: its rows' reader);
    returns the added/replaced/kept counts."""
    stored = {t for (t,) in con.execute(f'SELECT key FROM "{table}"') if t in texts}
    current = {}
    if policy != "replace" and stored:
        rows = [row for row in con.execute(select) if row[0] in stored]
        current = {k.text: r.time_us for k, r in decode(rows, None, [])}   # invalid ones lose
    counts = {"added": 0, "replaced": 0, "kept": 0}
    updates = {}
    for text, records in texts.items():
        old = current.get(text)
        exists = text in stored
        for time_us, encoded in records:
            if not exists:
                outcome = "added"
            elif old is None or policy == "replace" or (policy == "faster" and time_us < old):
                outcome = "replaced"
            else:
                outcome = "kept"
            counts[outcome] += 1
            if outcome != "kept":
                updates[text], old, exists = encoded, time_us, True
    con.executemany(f'INSERT OR REPLACE INTO "{table}" (key, value) VALUES (?, ?)', updates.items())
    return counts


def _check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
