"""TuneRecord: one shape's tuning result, typed, validated in one place.

``TuneRecord.from_json(obj, key)`` is the only way a stored, imported or
shipped record becomes usable: every field is checked against the schema
below and against the key it is stored under; ``to_json()`` gives the stored
form back (the JSON of the shipped ``cache/*.json`` entries). A strided
problem's record is a TuneRecord too, stored under a ProblemKey (its shape:
the (B, M, N) the kernel walks), and ``loads_problem``/``check_problem_record``
also check that its configs are strided ones that can run the problem.
"""
from __future__ import annotations

import datetime
import functools
import json
import math
import re
import warnings
from dataclasses import dataclass

import numpy as np

from ..core.device import DeviceId
from ..core.problem import ELEM_SIZES, dtype_of_size
from ..kernels.config import KernelConfig
from ..kernels.strided import MAX_ALIGN, dense_problems, strided_problems
from .keys import CacheKey, ProblemKey, normal_shape

MAX_ROWS = 4096              # candidate rows, and failure rows, per record
MAX_TEXT = 2000              # characters of a failure reason
MAX_NAME = 100               # characters of any other string
MAX_CONFIG_KEY = 800         # of a config key (a strided one compiled for a launch holds its values)
MAX_VERSIONS = 16
MAX_RECORD_BYTES = 4 << 20   # of a record's stored JSON
MAX_COUNT = 10 ** 9

RECORD_FIELDS = ("config", "key", "shape", "elem_bytes", "dtype", "time_us", "q1_us", "q3_us", "gbps",
                 "memcpy_us", "memcpy_gbps", "frac_memcpy", "candidates", "failures", "device", "date",
                 "seconds", "versions")
CANDIDATE_FIELDS = ("key", "median_us", "q1_us", "q3_us", "n", "gbps", "registers", "retimed")
FAILURE_FIELDS = ("key", "stage", "reason")
DEVICE_FIELDS = ("name", "cc", "sms", "l2_bytes", "driver", "cuda", "fingerprint")
_FIELD_SETS = {f: frozenset(f) for f in (RECORD_FIELDS, CANDIDATE_FIELDS, FAILURE_FIELDS, DEVICE_FIELDS)}
_INT_STR = frozenset({int, str})
_INF = math.inf


def _prefixed(exc: ValueError, what: str) -> ValueError:
    """``exc`` with its message prefixed by ``what`` (once)."""
    return exc if str(exc).startswith(what) else ValueError(f"{what}: {exc}")


class _Fields:
    """Read access by stored field name (``rec["time_us"]``), for code written
    against the stored JSON form."""

    def __getitem__(self, name: str):
        return self.to_json()[name]


# -- checks: each returns the clean value or raises ValueError ----------------


def _number(obj: dict, name: str, *, zero: bool = False) -> float:
    v = obj[name]
    if type(v) is float and 0.0 < v < math.inf:
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
            or v < 0 or (v == 0 and not zero):
        raise ValueError(f"{name} must be a {'non-negative' if zero else 'positive'} finite number, "
                         f"not {v!r:.40}")
    return float(v)


def _count(obj: dict, name: str, low: int = 0, high: int = MAX_COUNT) -> int:
    v = obj[name]
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        raise ValueError(f"{name} must be an int in [{low}, {high}], not {v!r:.40}")
    return v


def _text(obj: dict, name: str, limit: int = MAX_NAME) -> str:
    v = obj[name]
    if not isinstance(v, str) or len(v) > limit:
        raise ValueError(f"{name} must be text of at most {limit} characters, not {v!r:.40}")
    return v


def _object(obj, what: str, fields: tuple) -> dict:
    """``obj`` as a dict with exactly ``fields``; ValueError naming missing or unknown ones."""
    if not isinstance(obj, dict):
        raise ValueError(f"{what} must be a JSON object, not {type(obj).__name__}")
    if obj.keys() != _FIELD_SETS[fields]:
        missing = [f for f in fields if f not in obj]
        extra = sorted(str(k)[:40] for k in obj if k not in fields)[:5]
        raise ValueError(f"{what}: " + "; ".join(
            ([f"missing {', '.join(missing)}"] if missing else [])
            + ([f"unknown field(s) {', '.join(extra)}"] if extra else [])))
    return obj


def _list(obj: dict, name: str) -> list:
    v = obj[name]
    if not isinstance(v, list) or len(v) > MAX_ROWS:
        raise ValueError(f"{name} must be a list of at most {MAX_ROWS} rows, "
                         f"not {type(v).__name__}{f' of {len(v)}' if isinstance(v, list) else ''}")
    return v


def _quartiles(q1: float, mid: float, q3: float, what: str) -> None:
    if not q1 <= mid <= q3:
        raise ValueError(f"{what}: quartiles out of order ({q1} <= {mid} <= {q3} fails)")


@functools.lru_cache(maxsize=65536)
def config_of_key(key: str) -> KernelConfig:
    """``KernelConfig.from_key``, memoised (records repeat the same few hundred keys)."""
    return KernelConfig.from_key(key)


@functools.lru_cache(maxsize=4096)
def _config_json(cfg: KernelConfig) -> dict:
    """``cfg.to_dict()``, memoised (callers copy it)."""
    return cfg.to_dict()


def _config(obj) -> tuple[KernelConfig, str]:
    """(config, its key) of a record's config object."""
    if not isinstance(obj, dict) or len(obj) > 16:
        raise ValueError(f"config must be a KernelConfig's fields, not {obj!r:.60}")
    items = tuple(obj.items())
    if set(map(type, obj.values())) <= _INT_STR:    # plain values: a memo hit is exact (4.0 is not 4)
        return _config_memo(items)
    return _config_of(items)


@functools.lru_cache(maxsize=4096)
def _config_memo(items: tuple) -> tuple[KernelConfig, str]:
    return _config_of(items)


def _config_of(items: tuple) -> tuple[KernelConfig, str]:
    try:
        ordered = tuple(sorted(items))
        hash(ordered)
        cfg = KernelConfig.from_dict(dict(ordered))
    except TypeError:       # unhashable values, missing fields: not a config anyway
        raise ValueError(f"not a KernelConfig: {dict(items)!r:.60}") from None
    return cfg, cfg.key


@functools.lru_cache(maxsize=4096)
def _strided_misfit(best: KernelConfig, shape: tuple) -> str:
    """Why a dense shape's record may not hold ``best`` ('' when it may): a
    strided config there must run the shape's transpose (kernels.strided
    dense_problems); dense configs are checked elsewhere."""
    if best.layout != "strided":
        return ""
    why = dense_problems(best, shape, MAX_ALIGN)
    return f"config {best.key} cannot transpose {'x'.join(map(str, shape))}: {why[0]}" if why else ""


def _row_config(key, elem_bytes: int, what: str) -> str:
    if not isinstance(key, str) or len(key) > MAX_CONFIG_KEY:
        raise ValueError(f"{what}: key must be a config key, not {key!r:.40}")
    cfg = config_of_key(key)
    if cfg.elem_bytes != elem_bytes:
        raise ValueError(f"{what}: config {key} is for {cfg.elem_bytes}-byte elements, "
                         f"the record for {elem_bytes}-byte ones")
    return key


_DTYPE = re.compile(r"^[a-z][a-z0-9\[\]]{0,31}$")


@functools.lru_cache(maxsize=256)
def _dtype_size(name: str) -> int:
    """Item size of a canonical NumPy dtype name; ValueError for anything else."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dt = np.dtype(name) if _DTYPE.match(name) else None
    except (TypeError, ValueError):
        dt = None
    if dt is None or dt.name != name or dt.hasobject or dt.itemsize not in ELEM_SIZES:
        raise ValueError(f"dtype must be a NumPy dtype name of 1 to 16 bytes, not {name!r:.40}")
    return dt.itemsize


def dtype_name(dtype) -> str:
    """The name a record stores for ``dtype``: its NumPy name where that names
    it back, else the plain dtype of its size (uint8, ..., complex128)."""
    dt = np.dtype(dtype)
    try:
        _dtype_size(dt.name)
        return dt.name
    except ValueError:
        return dtype_of_size(dt.itemsize).name


# -- rows ------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate(_Fields):
    """One timed candidate: its config key, time quartiles (µs) and bandwidth."""
    key: str
    median_us: float
    q1_us: float
    q3_us: float
    n: int
    gbps: float
    registers: int | None = None
    retimed: bool = False

    @property
    def config(self) -> KernelConfig:
        return config_of_key(self.key)

    @classmethod
    def from_json(cls, obj, elem_bytes: int, i: int = 0) -> "Candidate":
        what = f"candidate {i}"
        try:
            return cls._parse(_object(obj, what, CANDIDATE_FIELDS), elem_bytes, what)
        except ValueError as exc:
            raise _prefixed(exc, what) from None

    @classmethod
    def _parse(cls, obj: dict, elem_bytes: int, what: str) -> "Candidate":
        regs = obj["registers"]
        if regs is not None:
            _count(obj, "registers", 0, 1 << 16)
        if not isinstance(obj["retimed"], bool):
            raise ValueError(f"{what}: retimed must be true or false, not {obj['retimed']!r:.20}")
        row = cls(_row_config(obj["key"], elem_bytes, what), _number(obj, "median_us"),
                  _number(obj, "q1_us"), _number(obj, "q3_us"), _count(obj, "n", 1),
                  _number(obj, "gbps"), regs, obj["retimed"])
        _quartiles(row.q1_us, row.median_us, row.q3_us, what)
        return row

    def to_json(self) -> dict:
        return {"key": self.key, "median_us": self.median_us, "q1_us": self.q1_us, "q3_us": self.q3_us,
                "n": self.n, "gbps": self.gbps, "registers": self.registers, "retimed": self.retimed}


@dataclass(frozen=True)
class Failure(_Fields):
    """A candidate that did not make it: its key, the stage (compile, launch,
    verify) and why."""
    key: str
    stage: str
    reason: str

    @classmethod
    def from_json(cls, obj, elem_bytes: int, i: int = 0) -> "Failure":
        what = f"failure {i}"
        try:
            obj = _object(obj, what, FAILURE_FIELDS)
            return cls(_row_config(obj["key"], elem_bytes, what), _text(obj, "stage"),
                       _text(obj, "reason", MAX_TEXT))
        except ValueError as exc:
            raise _prefixed(exc, what) from None

    def to_json(self) -> dict:
        return {"key": self.key, "stage": self.stage, "reason": self.reason}


def _device(obj) -> tuple[DeviceId, int]:
    try:
        obj = _object(obj, "device", DEVICE_FIELDS)
        cc, sms, l2 = obj["cc"], obj["sms"], obj["l2_bytes"]
        if type(cc) is list and len(cc) == 2 and type(cc[0]) is int and type(cc[1]) is int \
                and type(sms) is int and type(l2) is int:      # plain numbers: a memo hit is exact
            try:
                return _device_memo(obj["name"], cc[0], cc[1], sms, l2, obj["driver"], obj["cuda"],
                                    obj["fingerprint"])
            except TypeError:        # unhashable values: checked (and refused) in full
                pass
        return _device_fields(obj)
    except ValueError as exc:
        raise _prefixed(exc, "device") from None


@functools.lru_cache(maxsize=256)
def _device_memo(name, major, minor, sms, l2, driver, cuda, fingerprint) -> tuple[DeviceId, int]:
    """_device_fields of a device object given as its field values (records repeat a few devices)."""
    return _device_fields({"name": name, "cc": [major, minor], "sms": sms, "l2_bytes": l2, "driver": driver,
                           "cuda": cuda, "fingerprint": fingerprint})


def _device_fields(obj: dict) -> tuple[DeviceId, int]:
    cc = obj["cc"]
    if not (isinstance(cc, list) and len(cc) == 2
            and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 99 for c in cc)) \
            or not 0 <= cc[1] <= 9:
        raise ValueError(f"device cc must be [major, minor], not {cc!r:.40}")
    dev = DeviceId(_text(obj, "name"), f"sm_{cc[0]}{cc[1]}", _count(obj, "sms", 1, 1 << 20),
                   _text(obj, "driver"), _text(obj, "cuda"))
    if obj["fingerprint"] != dev.text:
        raise ValueError(f"device fingerprint {obj['fingerprint']!r:.120} does not match its "
                         f"fields ({dev.text})")
    return dev, _count(obj, "l2_bytes", 0, 1 << 40)


def _date(obj: dict) -> str:
    v = _text(obj, "date", 40)
    try:
        datetime.datetime.fromisoformat(v)
    except ValueError:
        raise ValueError(f"date must be an ISO 8601 date, not {v!r:.40}") from None
    return v


def _versions(obj) -> tuple:
    if not isinstance(obj, dict) or len(obj) > MAX_VERSIONS:
        raise ValueError(f"versions must be an object of at most {MAX_VERSIONS} names")
    try:
        return _versions_memo(tuple(obj.items()))
    except TypeError:        # unhashable values: checked (and refused) in full
        return _versions_checked(obj)


@functools.lru_cache(maxsize=1024)
def _versions_memo(items: tuple) -> tuple:
    return _versions_checked(dict(items))


def _versions_checked(obj: dict) -> tuple:
    if len(obj) > MAX_VERSIONS:
        raise ValueError(f"versions must be an object of at most {MAX_VERSIONS} names")
    for k in obj:
        if not isinstance(k, str) or len(k) > MAX_NAME:
            raise ValueError(f"versions: name {k!r:.40} is not a short text")
        _text(obj, k)
    return tuple(sorted(obj.items()))


# -- the record ------------------------------------------------------------------


@dataclass(frozen=True)
class TuneRecord(_Fields):
    """What tune() found for one shape and element size on one device: the best
    config, its time and bandwidth against memcpy, and every candidate's timing
    or failure. (``autotrans.TuneResult`` is this type.)"""
    best: KernelConfig
    shape: tuple                 # (B, M, N)
    elem_bytes: int
    dtype: str                   # the NumPy dtype name it was tuned with
    time_us: float               # median
    q1_us: float
    q3_us: float
    gbps: float
    memcpy_us: float
    memcpy_gbps: float
    frac_memcpy: float           # memcpy time / best time
    candidates: tuple = ()       # Candidate rows: re-timed first, then by median
    failures: tuple = ()         # Failure rows
    device: DeviceId | None = None
    l2_bytes: int = 0
    date: str = ""               # ISO 8601, UTC
    seconds: float = 0.0         # how long tuning took
    versions: tuple = ()         # sorted (name, version) pairs: autotrans, space, nvcc, cuda, driver

    def __str__(self) -> str:
        return (f"{'x'.join(map(str, self.shape))} {self.dtype}: {self.best.key}  "
                f"{self.time_us:.1f} us  {self.gbps:.0f} GB/s  {self.frac_memcpy:.2f} of memcpy "
                f"({len(self.candidates)} timed, {len(self.failures)} failed)")

    @property
    def record(self) -> dict:
        """The stored JSON form (as :meth:`to_json`), for code written against dict records."""
        return self.to_json()

    @classmethod
    def from_json(cls, obj, key: CacheKey | None = None) -> "TuneRecord":
        """The record of a stored JSON object; ValueError naming the first problem.

        With ``key``, the record must also agree with it: element size (of the
        record, its best config and every candidate), shape and device."""
        try:
            if type(obj) is dict and obj.keys() == _RECORD_SET:
                rec = _plain_record(obj, key)
                if rec is not None:
                    return rec
            return cls._parse(obj, key)
        except RecursionError:
            raise ValueError("record is nested too deeply") from None

    @classmethod
    def _parse(cls, obj, key: CacheKey | None) -> "TuneRecord":
        obj = _object(obj, "record", RECORD_FIELDS)
        e = _count(obj, "elem_bytes", 1, 16)
        shape = normal_shape(obj["shape"]) if isinstance(obj["shape"], list) and len(obj["shape"]) == 3 \
            else _bad(f"shape must be a list [B, M, N], not {obj['shape']!r:.40}")
        best, best_key = _config(obj["config"])
        dev, l2 = _device(obj["device"])
        if key is not None:
            if e != key.elem_bytes:
                _bad(f"elem_bytes {e} differs from the key's {key.elem_bytes}")
            if shape != key.shape:
                _bad(f"shape {list(shape)} differs from the key's {list(key.shape)}")
            if dev.text != key.device:
                _bad(f"device {dev.text!r} differs from the key's {key.device!r}")
        if best.elem_bytes != e:
            _bad(f"config {best.key} is for {best.elem_bytes}-byte elements, the record for {e}-byte ones")
        if best.fixed_shape is not None and best.fixed_shape != shape:
            _bad(f"config {best.key} is compiled for the shape {best.fixed}, the record is of "
                 f"{'x'.join(map(str, shape))}")
        if obj["key"] != best_key:
            _bad(f"key {obj['key']!r:.60} is not its config's key {best.key}")
        if isinstance(key, CacheKey) and _strided_misfit(best, shape):
            _bad(_strided_misfit(best, shape))
        if _dtype_size(_text(obj, "dtype")) != e:
            _bad(f"dtype {obj['dtype']} is not {e} bytes")
        rec = cls(best, shape, e, obj["dtype"], _number(obj, "time_us"), _number(obj, "q1_us"),
                  _number(obj, "q3_us"), _number(obj, "gbps"), _number(obj, "memcpy_us"),
                  _number(obj, "memcpy_gbps"), _number(obj, "frac_memcpy"),
                  tuple(Candidate.from_json(r, e, i) for i, r in enumerate(_list(obj, "candidates"))),
                  tuple(Failure.from_json(r, e, i) for i, r in enumerate(_list(obj, "failures"))),
                  dev, l2, _date(obj), _number(obj, "seconds", zero=True), _versions(obj["versions"]))
        _quartiles(rec.q1_us, rec.time_us, rec.q3_us, "record")
        return rec

    def to_json(self) -> dict:
        """The stored form: a JSON object of plain types."""
        device = _device_json(self.device, self.l2_bytes)
        return {"config": dict(_config_json(self.best)), "key": self.best.key, "shape": list(self.shape),
                "elem_bytes": self.elem_bytes, "dtype": self.dtype, "time_us": self.time_us,
                "q1_us": self.q1_us, "q3_us": self.q3_us, "gbps": self.gbps, "memcpy_us": self.memcpy_us,
                "memcpy_gbps": self.memcpy_gbps, "frac_memcpy": self.frac_memcpy,
                "candidates": [c.to_json() for c in self.candidates],
                "failures": [f.to_json() for f in self.failures], "device": device,
                "date": self.date, "seconds": self.seconds, "versions": dict(self.versions)}

    def checked(self, key: CacheKey | None = None) -> "TuneRecord":
        """This record after the same validation as a stored one (ValueError if it fails)."""
        return TuneRecord.from_json(json.loads(dumps(self)), key)


def _bad(problem: str):
    raise ValueError(problem)


def _device_json(d: DeviceId | None, l2_bytes: int) -> dict | None:
    if d is None:
        return None
    return {"name": d.name, "cc": [int(d.arch[3:-1]), int(d.arch[-1])], "sms": d.sms, "l2_bytes": l2_bytes,
            "driver": d.driver, "cuda": d.cuda, "fingerprint": d.text}


# -- the fast path: plainly typed records ---------------------------------------------
#
# What json.loads gives for a valid stored record (exact JSON types, every check
# passing) is accepted here with fewer Python calls; for anything else these
# return None and TuneRecord._parse decides, naming the first problem. Every
# check here is one of _parse's or stricter, and a record accepted here is the
# one _parse returns, so from_json accepts (and refuses) exactly what _parse does.

_RECORD_SET, _CANDIDATE_SET, _FAILURE_SET = (_FIELD_SETS[f] for f in (RECORD_FIELDS, CANDIDATE_FIELDS,
                                                                      FAILURE_FIELDS))


def _new(cls, fields: dict):
    """``cls(**fields)`` without the frozen dataclass's __init__, for validated
    values of every field (Candidate, Failure, TuneRecord have no __post_init__)."""
    obj = object.__new__(cls)
    obj.__dict__.update(fields)
    return obj


def _plain_record(o: dict, key: CacheKey | None) -> TuneRecord | None:
    e, shape, t, q1, q3, g = o["elem_bytes"], o["shape"], o["time_us"], o["q1_us"], o["q3_us"], o["gbps"]
    mu, mg, fm, sec, dt, date = (o["memcpy_us"], o["memcpy_gbps"], o["frac_memcpy"], o["seconds"], o["dtype"],
                                 o["date"])
    if not (type(e) is int and 1 <= e <= 16 and type(shape) is list and len(shape) == 3
            and type(t) is float and type(q1) is float and type(q3) is float and type(g) is float
            and type(mu) is float and type(mg) is float and type(fm) is float and type(sec) is float
            and 0.0 < q1 <= t <= q3 < _INF and 0.0 < g < _INF and 0.0 < mu < _INF and 0.0 < mg < _INF
            and 0.0 < fm < _INF and 0.0 <= sec < _INF and type(dt) is str and len(dt) <= MAX_NAME
            and type(date) is str and len(date) <= 40):
        return None
    try:
        shape = normal_shape(shape)
        best, best_key = _config(o["config"])
        dev, l2 = _device(o["device"])
        if key is not None and (e != key.elem_bytes or shape != key.shape or dev.text != key.device) \
                or best.elem_bytes != e or o["key"] != best_key or _dtype_size(dt) != e \
                or best.fixed_shape is not None and best.fixed_shape != shape \
                or isinstance(key, CacheKey) and _strided_misfit(best, shape):
            return None
        candidates, failures = _plain_candidates(o["candidates"], e), _plain_failures(o["failures"], e)
        if candidates is None or failures is None:
            return None
        datetime.datetime.fromisoformat(date)
        versions = _versions(o["versions"])
    except (ValueError, TypeError, RecursionError):
        return None           # _parse finds (and names) the problem
    return _new(TuneRecord, {
        "best": best, "shape": shape, "elem_bytes": e, "dtype": dt, "time_us": t, "q1_us": q1, "q3_us": q3,
        "gbps": g, "memcpy_us": mu, "memcpy_gbps": mg, "frac_memcpy": fm, "candidates": candidates,
        "failures": failures, "device": dev, "l2_bytes": l2, "date": date, "seconds": sec,
        "versions": versions})


def _plain_candidates(rows, e: int) -> tuple | None:
    if type(rows) is not list or len(rows) > MAX_ROWS:
        return None
    out = []
    for r in rows:
        if type(r) is not dict or r.keys() != _CANDIDATE_SET:
            return None
        k, med, q1, q3, n, g, regs, rt = (r["key"], r["median_us"], r["q1_us"], r["q3_us"], r["n"], r["gbps"],
                                          r["registers"], r["retimed"])
        if not (type(med) is float and type(q1) is float and type(q3) is float and type(g) is float
                and 0.0 < q1 <= med <= q3 < _INF and 0.0 < g < _INF and type(n) is int and 1 <= n <= MAX_COUNT
                and (regs is None or type(regs) is int and 0 <= regs <= 1 << 16) and type(rt) is bool
                and type(k) is str and len(k) <= MAX_CONFIG_KEY and config_of_key(k).elem_bytes == e):
            return None
        out.append(_new(Candidate, {"key": k, "median_us": med, "q1_us": q1, "q3_us": q3, "n": n, "gbps": g,
                                    "registers": regs, "retimed": rt}))
    return tuple(out)


def _plain_failures(rows, e: int) -> tuple | None:
    if type(rows) is not list or len(rows) > MAX_ROWS:
        return None
    out = []
    for r in rows:
        if type(r) is not dict or r.keys() != _FAILURE_SET:
            return None
        k, stage, reason = r["key"], r["stage"], r["reason"]
        if not (type(k) is str and len(k) <= MAX_CONFIG_KEY and type(stage) is str and len(stage) <= MAX_NAME
                and type(reason) is str and len(reason) <= MAX_TEXT and config_of_key(k).elem_bytes == e):
            return None
        out.append(_new(Failure, {"key": k, "stage": stage, "reason": reason}))
    return tuple(out)


# -- the stored text ---------------------------------------------------------------


def dumps(record: TuneRecord) -> str:
    """The JSON text stored for ``record`` (``json.dumps(record.to_json())``);
    ValueError if over MAX_RECORD_BYTES."""
    try:
        text = _encode(record)
    except (TypeError, ValueError, AttributeError):   # not plainly typed: json.dumps decides
        text = json.dumps(record.to_json())     # (non-finite numbers cannot pass validation)
    if len(text) > MAX_RECORD_BYTES:
        raise ValueError(f"record is {len(text)} bytes, over the limit of {MAX_RECORD_BYTES}")
    return text


def loads(text, key: CacheKey | None = None) -> TuneRecord:
    """The record of a stored JSON text (str or bytes); ValueError for anything invalid."""
    if not isinstance(text, (str, bytes)):
        raise ValueError(f"stored value is {type(text).__name__}, not JSON text")
    if len(text) > MAX_RECORD_BYTES:
        raise ValueError(f"record is {len(text)} bytes, over the limit of {MAX_RECORD_BYTES}")
    try:
        obj = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"stored value is not JSON ({exc})") from None
    except RecursionError:
        raise ValueError("stored value is nested too deeply") from None
    return TuneRecord.from_json(obj, key)


# -- json.dumps(record.to_json()), written directly -------------------------------------

_STR = json.encoder.encode_basestring_ascii     # json.dumps's string form (ensure_ascii)
_FLOAT = float.__repr__                         # and its form of finite floats


def _encode(r: TuneRecord) -> str:
    """``json.dumps(r.to_json())`` of a plainly typed record (what validation
    gives), about 4x faster; TypeError (or ValueError, AttributeError) for
    anything else."""
    b, m, n = r.shape
    e, t, q1, q3, g, mu, mg, fm, sec = (r.elem_bytes, r.time_us, r.q1_us, r.q3_us, r.gbps, r.memcpy_us,
                                        r.memcpy_gbps, r.frac_memcpy, r.seconds)
    if type(r) is not TuneRecord or not type(b) is type(m) is type(n) is type(e) is type(r.l2_bytes) is int \
            or not math.isfinite(t + q1 + q3 + g + mu + mg + fm + sec):     # (finite sum: all finite)
        raise TypeError("not a plainly typed record")
    return (f'{_head(r.best)}{b}, {m}, {n}], "elem_bytes": {e}, "dtype": {_STR(r.dtype)}, '
            f'"time_us": {_FLOAT(t)}, "q1_us": {_FLOAT(q1)}, "q3_us": {_FLOAT(q3)}, "gbps": {_FLOAT(g)}, '
            f'"memcpy_us": {_FLOAT(mu)}, "memcpy_gbps": {_FLOAT(mg)}, "frac_memcpy": {_FLOAT(fm)}, '
            f'"candidates": [{", ".join(map(_candidate_text, r.candidates))}], '
            f'"failures": [{", ".join(map(_failure_text, r.failures))}], '
            f'"device": {_device_text(r.device, r.l2_bytes)}, "date": {_STR(r.date)}, '
            f'"seconds": {_FLOAT(sec)}, "versions": {_versions_text(r.versions)}}}')


@functools.lru_cache(maxsize=4096)
def _head(cfg: KernelConfig) -> str:
    return f'{{"config": {json.dumps(cfg.to_dict())}, "key": {json.dumps(cfg.key)}, "shape": ['


@functools.lru_cache(maxsize=256)
def _device_text(d: DeviceId | None, l2_bytes: int) -> str:
    return json.dumps(_device_json(d, l2_bytes))


_VERSIONS_TEXT: dict = {}       # plain (name, version) pairs -> their JSON


def _versions_text(versions: tuple) -> str:
    text = _VERSIONS_TEXT.get(versions)
    if text is None:
        text = json.dumps(dict(versions))
        if len(_VERSIONS_TEXT) < 1024 and all(type(p) is tuple and len(p) == 2 and type(p[0]) is str
                                              and type(p[1]) is str for p in versions):
            _VERSIONS_TEXT[versions] = text       # (kept only where equal means the same JSON)
    return text


def _candidate_text(c: Candidate) -> str:
    n, regs, rt = c.n, c.registers, c.retimed
    if type(c) is not Candidate or type(n) is not int or not (regs is None or type(regs) is int) \
            or type(rt) is not bool or not math.isfinite(c.median_us + c.q1_us + c.q3_us + c.gbps):
        raise TypeError("not a plainly typed candidate")
    return (f'{{"key": {_STR(c.key)}, "median_us": {_FLOAT(c.median_us)}, "q1_us": {_FLOAT(c.q1_us)}, '
            f'"q3_us": {_FLOAT(c.q3_us)}, "n": {n}, "gbps": {_FLOAT(c.gbps)}, '
            f'"registers": {"null" if regs is None else regs}, "retimed": {"true" if rt else "false"}}}')


def _failure_text(f: Failure) -> str:
    if type(f) is not Failure:
        raise TypeError("not a Failure")
    return f'{{"key": {_STR(f.key)}, "stage": {_STR(f.stage)}, "reason": {_STR(f.reason)}}}'


# -- strided problems' records -------------------------------------------------------


def check_problem_record(record: TuneRecord, key: ProblemKey) -> TuneRecord:
    """``record`` (already checked against ``key`` as any record is) if it fits a
    strided problem: its best config a strided one that can run the key's
    problem (at any pointer alignment: that is the caller's to check), every
    candidate a strided config, and all of the key's epilogue; ValueError
    naming the first problem."""
    best = record.best
    if best.layout != "strided":
        raise ValueError(f"config {best.key} is a dense config; a strided problem's needs layout 'strided'")
    why = strided_problems(best, key.problem, MAX_ALIGN)
    if why:
        raise ValueError(f"config {best.key} cannot run {key.problem_text[:120]}: {why[0]}")
    for i, c in enumerate(record.candidates):
        if c.config.layout != "strided":
            raise ValueError(f"candidate {i}: config {c.key} is a dense config")
    rows = [(f"candidate {i}: config", c.config) for i, c in enumerate(record.candidates)]
    for what, cfg in [("config", best)] + rows:
        epilogue = getattr(cfg, "epilogue", "none")      # (KernelConfig.epilogue: being added)
        if epilogue != key.epilogue:
            raise ValueError(f"{what} {cfg.key} has the epilogue {epilogue!r}, the key {key.epilogue!r}")
    return record


def loads_problem(text, key: ProblemKey) -> TuneRecord:
    """The record of a stored JSON text under a problem key; ValueError for anything invalid."""
    return check_problem_record(loads(text, key), key)
