"""CacheKey: what a tuning result depends on, and its stable storage text; ProblemKey:
the same for a strided canonical problem (core.layout TileProblem, RowsProblem)."""
from __future__ import annotations

import functools
import operator
import re
from dataclasses import dataclass, field

from ..core.device import DeviceId
from ..core.layout import CASTS, MAX_BATCH, MAX_RANK, Dim, NdTileProblem, RowsProblem, TileProblem
from ..core.problem import ELEM_SIZES, MAX_DIM
from ..kernels.config import EPILOGUES
from ..kernels.strided import strided_shape

SCHEMA_VERSION = 1
TABLE = f"results_v{SCHEMA_VERSION}"
MAX_KEY_CHARS = 400

_KEY_TEXT = re.compile(r"^v(\d{1,6})\|([^|]+)\|e(\d{1,2})\|(\d{1,19})x(\d{1,19})x(\d{1,19})\|(.+)$", re.S)


@functools.lru_cache(maxsize=1024)
def _device(text) -> DeviceId:
    """``DeviceId.from_text``, memoised (keys repeat a few devices)."""
    return DeviceId.from_text(text)


def as_int(value, name: str) -> int:
    """``value`` as a plain int (numpy ints too); ValueError for floats, bools, text."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an int, not {value!r:.60}")
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an int, not {value!r:.60}") from None


def normal_shape(shape) -> tuple:
    """``(M, N)`` -> ``(1, M, N)``; ValueError unless two or three positive ints."""
    if type(shape) in (tuple, list) and len(shape) == 3 and all(type(d) is int for d in shape) \
            and 1 <= min(shape) and max(shape) <= 2 ** 62:
        return tuple(shape)
    if isinstance(shape, (str, bytes, dict)):
        raise ValueError(f"shape must be 2 or 3 ints, not {shape!r:.60}")
    try:
        dims = tuple(as_int(d, "shape") for d in shape)
    except TypeError:
        raise ValueError(f"shape must be 2 or 3 ints, not {shape!r:.60}") from None
    if len(dims) == 2:
        dims = (1, *dims)
    if len(dims) != 3 or min(dims) < 1 or max(dims) > 2 ** 62:
        raise ValueError(f"shape must be 2 or 3 positive ints, not {shape!r:.60}")
    return dims


@dataclass(frozen=True)
class CacheKey:
    """What a tuning result depends on; ``text`` is its stable storage key.

    ``device`` is a DeviceId's text (a DeviceId is accepted and turned into it);
    ``device_id`` is the parsed identity."""

    device: str
    templates: str
    shape: tuple
    elem_bytes: int
    schema: int = SCHEMA_VERSION
    device_id: DeviceId = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        dev = self.device if isinstance(self.device, DeviceId) else _device(str(self.device)) \
            if isinstance(self.device, str) else DeviceId.from_text(self.device)
        object.__setattr__(self, "device_id", dev)
        object.__setattr__(self, "device", dev.text)
        object.__setattr__(self, "shape", normal_shape(self.shape))
        if type(self.elem_bytes) is not int:
            object.__setattr__(self, "elem_bytes", as_int(self.elem_bytes, "elem_bytes"))
        if type(self.schema) is not int:
            object.__setattr__(self, "schema", as_int(self.schema, "schema"))
        t = self.templates
        if not isinstance(t, str) or not t or "|" in t or len(t) > 100 or not t.isprintable():
            raise ValueError(f"templates must be printable text without '|', not {t!r:.60}")
        if self.elem_bytes not in ELEM_SIZES:
            raise ValueError(f"elem_bytes must be one of {ELEM_SIZES}, not {self.elem_bytes!r}")
        if self.schema < 0:
            raise ValueError(f"schema must be >= 0, not {self.schema!r}")

    @property
    def text(self) -> str:
        """``v{schema}|{templates}|e{elem_bytes}|{B}x{M}x{N}|{device}``."""
        text = self.__dict__.get("_text")       # (computed once: the fields are frozen)
        if text is None:
            b, m, n = self.shape
            text = self.__dict__["_text"] = \
                f"v{self.schema}|{self.templates}|e{self.elem_bytes}|{b}x{m}x{n}|{self.device}"
        return text

    @classmethod
    def from_text(cls, s: str) -> "CacheKey":
        """Inverse of :attr:`text`; ValueError unless ``s`` is a canonical key text."""
        match = _KEY_TEXT.match(s) if isinstance(s, str) and len(s) <= MAX_KEY_CHARS else None
        if not match:
            raise ValueError(f"not a cache key: {s!r:.120}")
        schema, templates, elem, b, m, n, device = match.groups()
        shape = (int(b), int(m), int(n))
        try:
            fixed = _fixed_fields(device, templates, elem, schema) \
                if 1 <= min(shape) and max(shape) <= 2 ** 62 else None
        except ValueError:
            fixed = None
        if fixed is None:        # an invalid part: the constructor names the first one
            key = cls(device, templates, shape, int(elem), int(schema))
        else:                    # (the fields as the constructor would set them, without its checks)
            key = object.__new__(cls)
            key.__dict__.update(fixed, shape=shape)
        if key.text != s:
            raise ValueError(f"not a canonical cache key: {s!r:.120}")
        return key

    @property
    def hardware(self) -> str:
        """The device model without driver and toolkit (``DeviceId.hardware``)."""
        return self.device_id.hardware


@functools.lru_cache(maxsize=1024)
def _fixed_fields(device: str, templates: str, elem_bytes: str, schema: str) -> dict:
    """The fields other than shape of a valid key (ValueError otherwise); keys repeat a few."""
    k = CacheKey(device, templates, (1, 1, 1), int(elem_bytes), int(schema))
    return {"device": k.device, "templates": k.templates, "elem_bytes": k.elem_bytes, "schema": k.schema,
            "device_id": k.device_id}


# -- strided problems ---------------------------------------------------------------
#
# A strided canonical problem (core.layout TileProblem or RowsProblem) is keyed by
# the whole problem: its kind, element size, matrix or row sides, pitches and each
# decomposed dimension's (size, src, dst), since the pitches decide the fastest
# config. Its rows live in their own table (PROBLEM_TABLE) of the same file.

PROBLEM_SCHEMA = 1
PROBLEM_TABLE = f"problems_v{PROBLEM_SCHEMA}"
MAX_PROBLEM_KEY_CHARS = 1000

_PROBLEM_KEY = re.compile(r"^p(\d{1,6})\|([^|]+)\|([^|]+)\|([^|]+)\|(.+)$", re.S)
_N = r"(\d{1,19})"
_TILE_TEXT = re.compile(rf"^tile:e{_N}:{_N}x{_N}:ldi{_N}:ldo{_N}:sci{_N}:b\(([0-9/,]*)\)(?::o{_N})?$")
_ROWS_TEXT = re.compile(rf"^rows:e{_N}:n{_N}:r\(([0-9/,]*)\)(?::o{_N})?$")
_DIM_TEXT = re.compile(rf"^{_N}/{_N}/{_N}$")


def _positive(value, name: str) -> int:
    v = as_int(value, name)
    if not 1 <= v <= MAX_DIM:
        raise ValueError(f"{name} must be in [1, 2**62], not {v}")
    return v


def _stride(value, name: str, elem: int) -> int:
    v = _positive(value, name)
    if v % elem:
        raise ValueError(f"{name} {v} is not a multiple of the element size {elem}")
    return v


def _dims_of(dims, what: str, elem: int, least: int, out_elem: int) -> tuple:
    if isinstance(dims, (str, bytes)) or not hasattr(dims, "__len__"):
        raise ValueError(f"{what} must be a tuple of Dim, not {dims!r:.60}")
    if not least <= len(dims) <= MAX_BATCH:
        raise ValueError(f"{what} must have {least} to {MAX_BATCH} dimensions, not {len(dims)}")
    out = []
    for i, d in enumerate(dims):
        if not isinstance(d, Dim):
            raise ValueError(f"{what}[{i}] must be a Dim, not {d!r:.60}")
        out.append(Dim(_positive(d.size, f"{what}[{i}] size"), _stride(d.src, f"{what}[{i}] src", elem),
                       _stride(d.dst, f"{what}[{i}] dst", out_elem)))
    return tuple(out)


def check_problem(problem) -> "TileProblem | RowsProblem":
    """The problem with plain-int fields, checked: TypeError unless a
    TileProblem, NdTileProblem (checked by check_nd) or RowsProblem;
    ValueError (naming the first problem) unless its element sizes (in and
    out: out_elem, a cast's) are of ELEM_SIZES, sides are positive, strides
    and pitches positive multiples of the element size (output ones of the
    output's), at most MAX_BATCH decomposed dimensions (a RowsProblem has at
    least one) and at most 2**62 bytes moved or spanned."""
    if isinstance(problem, NdTileProblem):
        return check_nd(problem)
    if not isinstance(problem, (TileProblem, RowsProblem)):
        raise TypeError(f"a strided problem is a TileProblem, NdTileProblem or RowsProblem, "
                        f"not {type(problem).__name__}")
    e = as_int(problem.elem, "elem")
    if e not in ELEM_SIZES:
        raise ValueError(f"elem must be one of {ELEM_SIZES}, not {e}")
    eo = as_int(problem.out_elem, "out_elem")
    if eo not in ELEM_SIZES:
        raise ValueError(f"out_elem must be one of {ELEM_SIZES}, not {eo}")
    if isinstance(problem, TileProblem):
        p = TileProblem(e, _positive(problem.m, "m"), _positive(problem.n, "n"),
                        _stride(problem.ldi, "ldi", e), _stride(problem.ldo, "ldo", eo),
                        _stride(problem.sci, "sci", e), _dims_of(problem.batch, "batch", e, 0, eo), eo)
        sides = [(p.m, p.ldi, eo), (p.n, p.sci, p.ldo)] + [(d.size, d.src, d.dst) for d in p.batch]
    else:
        p = RowsProblem(e, _positive(problem.n, "n"), _dims_of(problem.rows, "rows", e, 1, eo), eo)
        sides = [(p.n, e, eo)] + [(d.size, d.src, d.dst) for d in p.rows]
    count = 1
    for size, _, _ in sides:
        count *= size
    span_in = sum((n - 1) * s for n, s, _ in sides) + e
    span_out = sum((n - 1) * s for n, _, s in sides) + eo
    if count * max(e, eo) > MAX_DIM or span_in > MAX_DIM or span_out > MAX_DIM:
        raise ValueError(f"the problem moves or spans over 2**62 bytes: {problem_text(p)[:120]}")
    return p


def _dims_text(dims) -> str:
    return ",".join(f"{d.size}/{d.src}/{d.dst}" for d in dims)


def problem_text(problem) -> str:
    """A checked strided problem's stable text:
    ``tile:e{elem}:{m}x{n}:ldi{ldi}:ldo{ldo}:sci{sci}:b({size}/{src}/{dst},...)`` or
    ``rows:e{elem}:n{n}:r({size}/{src}/{dst},...)``, dimensions outermost first;
    then ``:o{out_elem}`` where the output's elements (a cast's) are of another
    size (nothing where they are the input's: texts from before casts read the
    same); an NdTileProblem's: nd_text."""
    p = problem
    if isinstance(p, NdTileProblem):
        return nd_text(p)
    out = "" if p.out_elem == p.elem else f":o{p.out_elem}"
    if isinstance(p, TileProblem):
        return f"tile:e{p.elem}:{p.m}x{p.n}:ldi{p.ldi}:ldo{p.ldo}:sci{p.sci}:b({_dims_text(p.batch)})" + out
    return f"rows:e{p.elem}:n{p.n}:r({_dims_text(p.rows)})" + out


def _parse_dims(text: str) -> tuple:
    out = []
    for part in text.split(",") if text else ():
        m = _DIM_TEXT.match(part)
        if not m:
            raise ValueError(f"bad dimension {part!r:.60} (size/src/dst)")
        out.append(Dim(*map(int, m.groups())))
    return tuple(out)


def problem_from_text(s: str) -> "TileProblem | RowsProblem":
    """Inverse of :func:`problem_text`; ValueError unless ``s`` is the canonical
    text of a valid strided problem."""
    try:
        if not isinstance(s, str) or len(s) > MAX_PROBLEM_KEY_CHARS:
            raise ValueError("not text of a bounded length")
        tile, rows, nd = _TILE_TEXT.match(s), _ROWS_TEXT.match(s), _ND_TEXT.match(s)
        if nd:
            e, ms, ns, sci, batch, out = nd.groups()
            p = NdTileProblem(int(e), _parse_pairs(ms), _parse_pairs(ns), int(sci), _parse_dims(batch),
                              int(out or e))
        elif tile:
            e, m, n, ldi, ldo, sci, batch, out = tile.groups()
            p = TileProblem(int(e), int(m), int(n), int(ldi), int(ldo), int(sci), _parse_dims(batch),
                            int(out or e))
        elif rows:
            e, n, dims, out = rows.groups()
            p = RowsProblem(int(e), int(n), _parse_dims(dims), int(out or e))
        else:
            raise ValueError("expected tile:e..:MxN:ldi..:ldo..:sci..:b(...), rows:e..:n..:r(...) "
                             "or ndtile:e..:m(...):n(...):sci..:b(...)")
        p = check_problem(p)
    except ValueError as exc:
        raise ValueError(f"not a strided problem: {s!r:.160} ({exc})") from None
    if problem_text(p) != s:
        raise ValueError(f"not a canonical strided problem text: {s!r:.160} (written {problem_text(p)!r:.160})")
    return p


# -- fused tiles (NdTileProblem) ------------------------------------------------------

_ND_TEXT = re.compile(rf"^ndtile:e{_N}:m\(([0-9/,]*)\):n\(([0-9/,]*)\):sci{_N}:b\(([0-9/,]*)\)(?::o{_N})?$")
_PAIR_TEXT = re.compile(rf"^{_N}/{_N}$")


def check_nd(problem: NdTileProblem) -> NdTileProblem:
    """check_problem of an NdTileProblem: ValueError unless its element sizes
    (in and out) are of ELEM_SIZES, each side has 1 or more (size, stride)
    pairs of positive sizes and positive multiples of the element size (sci
    too; the n side's output strides of the output's), at most MAX_BATCH batch
    dims and MAX_RANK dims in all, and at most 2**62 bytes moved or spanned."""
    e = as_int(problem.elem, "elem")
    if e not in ELEM_SIZES:
        raise ValueError(f"elem must be one of {ELEM_SIZES}, not {e}")
    eo = as_int(problem.out_elem, "out_elem")
    if eo not in ELEM_SIZES:
        raise ValueError(f"out_elem must be one of {ELEM_SIZES}, not {eo}")
    sides = []
    for what, pairs, unit in (("m_side", problem.m_side, e), ("n_side", problem.n_side, eo)):
        if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__len__") or not 1 <= len(pairs) <= MAX_RANK:
            raise ValueError(f"{what} must be 1 to {MAX_RANK} (size, stride) pairs, not {pairs!r:.60}")
        side = []
        for i, pair in enumerate(pairs):
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise ValueError(f"{what}[{i}] must be a (size, stride) pair, not {pair!r:.60}")
            side.append((_positive(pair[0], f"{what}[{i}] size"), _stride(pair[1], f"{what}[{i}] stride", unit)))
        sides.append(tuple(side))
    p = NdTileProblem(e, sides[0], sides[1], _stride(problem.sci, "sci", e),
                      _dims_of(problem.batch, "batch", e, 0, eo), eo)
    dims = p.dims()
    if len(dims) > MAX_RANK:
        raise ValueError(f"an NdTileProblem has at most {MAX_RANK} dims in all, not {len(dims)}")
    count = 1
    for d in dims:
        count *= d.size
    span_in = sum((d.size - 1) * d.src for d in dims) + e
    span_out = sum((d.size - 1) * d.dst for d in dims) + eo
    if count * max(e, eo) > MAX_DIM or span_in > MAX_DIM or span_out > MAX_DIM:
        raise ValueError(f"the problem moves or spans over 2**62 bytes: {nd_text(p)[:120]}")
    return p


def nd_text(p: NdTileProblem) -> str:
    """``ndtile:e{elem}:m({size}/{src},...):n({size}/{dst},...):sci{sci}:b({size}/{src}/{dst},...)``:
    each side's pairs innermost first, batch dims outermost first; then
    ``:o{out_elem}`` where a cast's output elements are of another size."""
    pairs = [",".join(f"{a}/{b}" for a, b in side) for side in (p.m_side, p.n_side)]
    out = "" if p.out_elem == p.elem else f":o{p.out_elem}"
    return f"ndtile:e{p.elem}:m({pairs[0]}):n({pairs[1]}):sci{p.sci}:b({_dims_text(p.batch)})" + out


def _parse_pairs(text: str) -> tuple:
    out = []
    for part in text.split(",") if text else ():
        m = _PAIR_TEXT.match(part)
        if not m:
            raise ValueError(f"bad side dimension {part!r:.60} (size/stride)")
        out.append((int(m[1]), int(m[2])))
    return tuple(out)


def check_op(problem, cast: str, epilogue: str) -> None:
    """ValueError unless ``cast`` ("none" or one of core.layout.CASTS) and
    ``epilogue`` (one of EPILOGUES; not both) fit the checked ``problem``: a cast
    converts its elem bytes to its out_elem bytes, and only a cast changes them."""
    if not isinstance(epilogue, str) or epilogue not in EPILOGUES:
        raise ValueError(f"epilogue must be one of {EPILOGUES}, not {epilogue!r:.40}")
    if cast != "none" and (not isinstance(cast, str) or cast not in CASTS):
        raise ValueError(f"cast must be 'none' or one of core.layout.CASTS, not {cast!r:.40}")
    if epilogue != "none" and cast != "none":
        raise ValueError(f"a problem takes a cast or an epilogue, not both ({cast}, {epilogue})")
    p = problem
    if (p.elem, p.out_elem) != (CASTS[cast] if cast != "none" else (p.elem, p.elem)):
        raise ValueError(f"cast {cast} does not convert the problem's {p.elem}-byte elements to "
                         f"{p.out_elem}-byte ones")


@dataclass(frozen=True)
class ProblemKey:
    """What a strided problem's tuning result depends on; ``text`` is its
    stable storage key in PROBLEM_TABLE:
    ``p{schema}|{templates}|{problem_text}|{op}|{device}``, op the cast where
    there is one, else the epilogue.

    ``device`` is a DeviceId's text (a DeviceId is accepted and turned into it),
    ``templates`` the search space id, ``problem`` a TileProblem or RowsProblem
    (checked, stored with plain ints), ``epilogue`` one of EPILOGUES, ``cast``
    "none" or one of core.layout.CASTS converting the problem's elem bytes to
    its out_elem bytes (a problem that changes the element size needs one). The
    record's fields it is checked against (TuneRecord.from_json takes this key
    as it takes a CacheKey): ``elem_bytes`` (the problem's elem), ``shape``
    (the (B, M, N) its kernel walks, kernels.strided.strided_shape) and
    ``device``."""

    device: str
    templates: str
    problem: "TileProblem | RowsProblem"
    epilogue: str = "none"
    schema: int = PROBLEM_SCHEMA
    cast: str = "none"
    device_id: DeviceId = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        dev = self.device if isinstance(self.device, DeviceId) else _device(self.device) \
            if isinstance(self.device, str) else DeviceId.from_text(self.device)
        object.__setattr__(self, "device_id", dev)
        object.__setattr__(self, "device", dev.text)
        object.__setattr__(self, "problem", check_problem(self.problem))
        object.__setattr__(self, "schema", as_int(self.schema, "schema"))
        t = self.templates
        if not isinstance(t, str) or not t or "|" in t or len(t) > 100 or not t.isprintable():
            raise ValueError(f"templates must be printable text without '|', not {t!r:.60}")
        check_op(self.problem, self.cast, self.epilogue)
        if self.schema < 0:
            raise ValueError(f"schema must be >= 0, not {self.schema!r}")

    @property
    def kind(self) -> str:
        """``tile``, ``ndtile`` or ``rows``."""
        if isinstance(self.problem, NdTileProblem):
            return "ndtile"
        return "tile" if isinstance(self.problem, TileProblem) else "rows"

    @property
    def elem_bytes(self) -> int:
        return self.problem.elem

    @property
    def shape(self) -> tuple:
        """The (B, M, N) the problem's kernel walks (what its record's shape is)."""
        return strided_shape(self.problem)

    @property
    def problem_text(self) -> str:
        return problem_text(self.problem)

    @property
    def text(self) -> str:
        """``p{schema}|{templates}|{problem_text}|{op}|{device}``."""
        text = self.__dict__.get("_text")
        if text is None:
            op = self.cast if self.cast != "none" else self.epilogue
            text = self.__dict__["_text"] = (f"p{self.schema}|{self.templates}|{self.problem_text}|"
                                             f"{op}|{self.device}")
        return text

    @classmethod
    def from_text(cls, s: str) -> "ProblemKey":
        """Inverse of :attr:`text`; ValueError unless ``s`` is a canonical problem key text."""
        match = _PROBLEM_KEY.match(s) if isinstance(s, str) and len(s) <= MAX_PROBLEM_KEY_CHARS else None
        if not match:
            raise ValueError(f"not a problem key: {s!r:.160}")
        schema, templates, problem, op, device = match.groups()
        cast, epilogue = (op, "none") if op in CASTS else ("none", op)
        try:
            key = cls(device, templates, problem_from_text(problem), epilogue, int(schema), cast)
        except ValueError as exc:
            raise ValueError(f"not a problem key: {s!r:.160} ({exc})") from None
        if key.text != s:
            raise ValueError(f"not a canonical problem key: {s!r:.160}")
        return key

    @property
    def hardware(self) -> str:
        return self.device_id.hardware
