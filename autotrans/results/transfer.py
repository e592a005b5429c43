"""Export files, read (every row validated) and written (atomically, to
regular files only)::

    {"format": "autotrans-cache", "schema": 1,
     "entries":  [{"key": CACHE KEY TEXT,   "record": STORED RECORD}, ...],
     "problems": [{"key": PROBLEM KEY TEXT, "record": STORED RECORD}, ...]}

"entries" holds transpose results (CacheKey text ``v1|...``); "problems" holds
strided canonical problems' results (ProblemKey text ``p1|...``, the schema in
the key; each record also checked as ResultCache.put_problem checks it). A
file without "problems" (every file written before it existed) reads as it
always did; a ProblemKey under "entries" or a CacheKey under "problems" is an
invalid row. Each invalid row gives one line naming it ("entry 3: ...",
"problem row 0: ...") and is left out; a file that is not an export at all
is a ValueError.
"""
from __future__ import annotations

import gc
import json
import os
import re
import stat
import warnings
from contextlib import contextmanager
from pathlib import Path

from ..core.paths import atomic_write
from .errors import InvalidRecordWarning
from .keys import PROBLEM_SCHEMA, SCHEMA_VERSION, CacheKey, ProblemKey
from .record import TuneRecord, check_problem_record

EXPORT_FORMAT = "autotrans-cache"
MAX_EXPORT_BYTES = 4 << 30
SQLITE_MAGIC = b"SQLite format 3\x00"
_ENTRY_FIELDS = frozenset({"key", "record"})


@contextmanager
def without_gc():
    """Pause the cyclic garbage collector: building millions of acyclic objects
    (a big export's entries) otherwise triggers full collections over and over."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def parse_export(data, name: str, convert=None) -> tuple[list, list[str]]:
    """(valid (key, record) pairs, one problem per invalid entry) of an export
    file's transpose entries; ValueError if it is not an export at all. With
    ``convert``, each valid pair is given as ``convert(key, record)`` instead
    (the record is not kept). Problem rows are not read (see
    :func:`parse_export_all`)."""
    entries, problems, _, _ = _parse_any(data, name, convert, False)
    return entries, problems


def parse_export_all(data, name: str, convert=None) -> tuple[list, list[str], list, list[str]]:
    """:func:`parse_export`, and the same of the strided problem rows: (valid
    pairs, a problem per invalid entry, valid problem pairs (ProblemKey,
    record), a problem per invalid problem row)."""
    return _parse_any(data, name, convert, True)


def _parse_any(data, name: str, convert, with_problems: bool) -> tuple:
    convert = convert or _pair
    with without_gc():
        try:
            return _scan_export(data, name, _lists(convert, with_problems))
        except _NotPlain:
            return _parse_export(data, name, _lists(convert, with_problems))


def _pair(key, record):
    return key, record


class _Rows:
    """One list of an export file: its valid rows (as ``convert(key, record)``)
    and one line per invalid one."""

    __slots__ = ("check", "label", "convert", "valid", "invalid")

    def __init__(self, check, label: str, convert):
        self.check, self.label, self.convert = check, label, convert
        self.valid, self.invalid = [], []

    def take(self, entry, i: int) -> None:
        try:
            key, record = self.check(entry)
        except ValueError as exc:
            self.invalid.append(f"{self.label} {i}: {exc}")
            return
        self.valid.append(self.convert(key, record))


def _lists(convert, with_problems: bool) -> dict:
    """The lists to take, by field name (the problem rows only ``with_problems``)."""
    lists = {"entries": _Rows(_entry, "entry", convert)}
    if with_problems:
        lists["problems"] = _Rows(_problem_entry, "problem row", convert)
    return lists


def _result(lists: dict) -> tuple:
    rows, strided = lists["entries"], lists.get("problems")
    return (rows.valid, rows.invalid) + ((strided.valid, strided.invalid) if strided else ([], []))


def _parse_export(data, name: str, lists: dict) -> tuple:
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{name} is not an autotrans cache export (not JSON: {exc})") from None
    except ValueError as exc:       # JSON Python cannot hold: an integer of over 4300 digits
        raise ValueError(f"{name} is not an autotrans cache export ({exc})") from None
    except RecursionError:
        raise ValueError(f"{name} is not an autotrans cache export (nested too deeply)") from None
    _check_doc(doc, name)
    for field, rows in lists.items():
        for i, entry in enumerate(doc.get(field, ())):
            rows.take(entry, i)
    return _result(lists)


def _check_doc(doc, name: str) -> None:
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise ValueError(f"{name} is not an autotrans cache export (no \"format\": \"{EXPORT_FORMAT}\")")
    schema = doc.get("schema")
    if type(schema) is not int or schema != SCHEMA_VERSION:      # true and 1.0 equal 1
        raise ValueError(f"{name} has cache schema {schema!r:.40}; "
                         f"this version of autotrans reads schema {SCHEMA_VERSION}")
    if not isinstance(doc.get("entries"), list):
        raise ValueError(f"{name} is not an autotrans cache export (no \"entries\" list)")
    if not isinstance(doc.get("problems", []), list):
        raise ValueError(f"{name} is not an autotrans cache export (its \"problems\" is not a list)")


def _entry(entry) -> tuple[CacheKey, TuneRecord]:
    if not isinstance(entry, dict) or entry.keys() != _ENTRY_FIELDS:
        raise ValueError("not {\"key\": ..., \"record\": {...}}")
    key = CacheKey.from_text(entry["key"])
    if key.schema != SCHEMA_VERSION:
        raise ValueError(f"key schema {key.schema}, expected {SCHEMA_VERSION}")
    return key, TuneRecord.from_json(entry["record"], key)


def _problem_entry(entry) -> tuple[ProblemKey, TuneRecord]:
    """A problem row, checked as ResultCache.put_problem checks a record."""
    if not isinstance(entry, dict) or entry.keys() != _ENTRY_FIELDS:
        raise ValueError("not {\"key\": ..., \"record\": {...}}")
    key = ProblemKey.from_text(entry["key"])
    if key.schema != PROBLEM_SCHEMA:
        raise ValueError(f"problem key schema {key.schema}, expected {PROBLEM_SCHEMA}")
    return key, check_problem_record(TuneRecord.from_json(entry["record"], key), key)


# -- the same, one entry at a time ---------------------------------------------------
#
# json.loads of a whole export builds every entry's objects before the first is
# checked (and frees them all after). Scanning the top-level object here, with
# json's own scanner for each value, checks each entry as it is read and keeps
# only what ``convert`` returns. Anything unusual (a JSON error, a repeated name,
# a top level that is not an object) raises _NotPlain: then json.loads decides.

_WS = re.compile(r"[ \t\n\r]*")       # JSON whitespace, as json.decoder skips it
_SCAN = json.decoder.JSONDecoder().scan_once   # one JSON value at an index: (value, end)


class _NotPlain(Exception):
    pass


def _scan_export(data, name: str, lists: dict) -> tuple:
    try:
        s = data if isinstance(data, str) else data.decode(json.detect_encoding(data), "surrogatepass")
        doc = {}
        c, i = _next(s, 0)
        if c != "{":
            raise _NotPlain
        if s[i:i + 1] == "}":
            i = _WS.match(s, i + 1).end()
        else:
            while True:
                if s[i:i + 1] != '"':
                    raise _NotPlain
                field, i = json.decoder.scanstring(s, i + 1)
                c, i = _next(s, i)
                if c != ":" or field in doc:          # (json.loads keeps a repeated name's last value)
                    raise _NotPlain
                if field in lists and s[i:i + 1] == "[":
                    doc[field], i = [], _scan_entries(s, i + 1, lists[field])
                else:
                    doc[field], i = _SCAN(s, i)
                c, i = _next(s, i)
                if c == "}":
                    break
                if c != ",":
                    raise _NotPlain
        if i != len(s):
            raise _NotPlain
    except (ValueError, TypeError, AttributeError, StopIteration, RecursionError):
        raise _NotPlain from None
    _check_doc(doc, name)
    return _result(lists)


def _scan_entries(s: str, i: int, rows: _Rows) -> int:
    """Take each element of the array whose "[" ends at ``i``; returns the index after its "]"."""
    i = _WS.match(s, i).end()
    if s[i:i + 1] == "]":
        return i + 1
    n = 0
    take = rows.take
    while True:
        entry, i = _SCAN(s, i)
        take(entry, n)
        n += 1
        c, i = _next(s, i)
        if c == "]":
            return i
        if c != ",":
            raise _NotPlain


def _next(s: str, i: int) -> tuple[str, int]:
    """The character at the first non-space from ``i``, and the index of the first non-space after it."""
    i = _WS.match(s, i).end()
    return s[i:i + 1], _WS.match(s, i + 1).end()


def _read_bytes(path) -> bytes:
    """The content of an export file: a regular file of at most MAX_EXPORT_BYTES (ValueError otherwise)."""
    path = Path(path)
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path} is not an autotrans cache export (not a regular file)")
        if st.st_size > MAX_EXPORT_BYTES:
            raise ValueError(f"{path} is over {MAX_EXPORT_BYTES >> 30} GiB; not an autotrans cache export")
        return f.read(MAX_EXPORT_BYTES + 1)


def read_export(path, convert=None) -> tuple[list, list[str]]:
    """:func:`parse_export` of the file at ``path`` (a regular file of at most
    MAX_EXPORT_BYTES; ValueError otherwise)."""
    return parse_export(_read_bytes(path), str(Path(path)), convert)


def read_export_all(path, convert=None) -> tuple[list, list[str], list, list[str]]:
    """:func:`parse_export_all` of the file at ``path`` (as :func:`read_export`)."""
    return parse_export_all(_read_bytes(path), str(Path(path)), convert)


def warn_skipped(problems: list[str], where: str, stacklevel: int = 3) -> None:
    """One warning counting the invalid entries skipped (none if there were none)."""
    if problems:
        n = len(problems)
        warnings.warn(f"skipped {n} invalid entr{'y' if n == 1 else 'ies'} of {where} "
                      f"(first: {problems[0][:300]})", InvalidRecordWarning, stacklevel=stacklevel + 1)


def load_export(path) -> list[tuple[CacheKey, TuneRecord]]:
    """The valid (key, record) pairs of an export file (one warning counts the
    invalid ones); ValueError if it is not an export."""
    entries, problems = read_export(path)
    warn_skipped(problems, str(path))
    return entries


def export_text(entries, problem_rows=()) -> str:
    """The export file's text for (CacheKey, record) and (ProblemKey, record) pairs."""
    doc = {"format": EXPORT_FORMAT, "schema": SCHEMA_VERSION,
           "entries": [{"key": k.text, "record": r.to_json()} for k, r in entries],
           "problems": [{"key": k.text, "record": r.to_json()} for k, r in problem_rows]}
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def export_target(path, protected, verb: str = "export to") -> Path:
    """Where an export to ``path`` is written (symlinks followed): a regular file
    or a new name in an existing folder. ValueError for the cache's own files
    (``protected``), SQLite databases, directories, devices and other
    non-regular files; the messages say "refusing to VERB PATH"."""
    path = Path(path)
    real = Path(os.path.realpath(path))
    guarded = {Path(os.path.realpath(p)) for p in protected}
    if real in guarded:
        raise ValueError(f"refusing to {verb} {path}: it is the cache's own file {real}")
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return real
    except OSError as exc:
        raise ValueError(f"refusing to {verb} {path}: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ValueError(f"refusing to {verb} {path}: it is a directory")
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        raise ValueError(f"refusing to {verb} {path}: it is a device")
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"refusing to {verb} {path}: it is not a regular file")
    if any(os.path.exists(p) and os.path.samefile(real, p) for p in protected):
        raise ValueError(f"refusing to {verb} {path}: it is the cache's own file")
    try:
        with open(real, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError:
        head = b""
    if head == SQLITE_MAGIC:
        raise ValueError(f"refusing to {verb} {path}: it is an SQLite database")
    return real


def write_export(path, text: str, protected) -> None:
    """Write an export's ``text`` atomically to ``path`` (see :func:`export_target`)."""
    atomic_write(export_target(path, protected), text.encode("utf-8"))
