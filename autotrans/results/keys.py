"""CacheKey: what a tuning result depends on, and its stable storage text."""
from __future__ import annotations

import functools
import operator
import re
from dataclasses import dataclass, field

from ..core.device import DeviceId
from ..core.problem import ELEM_SIZES

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
