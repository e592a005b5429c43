"""The job: a batch of matrices of some element size, validated in one place.

A transpose moves bytes, so a problem names an element *size*, never a dtype.
Every shape and dtype that reaches autotrans, from Python or the command line,
goes through ``as_bmn``/``elem_size`` (or ``parse_shape``/``parse_dtype``).
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass

import numpy as np

ELEM_SIZES = (1, 2, 4, 8, 16)
# Kernel arguments are 64-bit; a dimension is also a byte count's factor, so
# this bounds every offset the kernels compute.
MAX_DIM = 2 ** 62


def _dim(value, shape) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"shape {shape!r}: dimensions must be integers, not {value!r}")
    try:
        d = operator.index(value)
    except TypeError:
        raise ValueError(f"shape {shape!r}: dimensions must be integers, not {value!r}") from None
    if d < 0:
        raise ValueError(f"shape {shape!r}: dimensions must be >= 0, not {d}")
    if d > MAX_DIM:
        raise ValueError(f"shape {shape!r}: dimension {d} is over the limit of 2**62")
    return d


def as_bmn(shape) -> tuple[int, int, int]:
    """(M, N) or (B, M, N) as a (B, M, N) tuple of ints >= 0; ValueError for
    anything else (floats, bools, text, other ranks, negative dimensions)."""
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__len__"):
        raise ValueError(f"shape must be (M, N) or (B, M, N), got {shape!r}")
    t = tuple(_dim(s, shape) for s in shape)
    if len(t) == 2:
        t = (1,) + t
    if len(t) != 3:
        raise ValueError(f"shape must be (M, N) or (B, M, N), got {shape!r}")
    return t


def positive_bmn(shape) -> tuple[int, int, int]:
    """as_bmn, and every dimension at least 1 (what tuning and caching need)."""
    bmn = as_bmn(shape)
    nonempty(shape)
    return bmn


def nonempty(shape) -> tuple:
    """A shape of ints (any rank) as a tuple; ValueError if a dimension is
    below 1 (an empty job: nothing to tune)."""
    t = tuple(shape)
    if any(d < 1 for d in t):
        raise ValueError(f"shape {t!r} is empty: every dimension must be at least 1")
    return t


# The dtype names of ml_dtypes (NumPy knows them only through it).
ML_DTYPES = frozenset({"bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
                       "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn",
                       "float6_e2m3fn", "float6_e3m2fn", "int2", "int4", "uint2", "uint4"})


def as_dtype(dtype) -> np.dtype:
    """np.dtype(dtype), importing ml_dtypes for its names (bfloat16, float8_*);
    TypeError naming what is missing or unknown."""
    try:
        return np.dtype(dtype)
    except (TypeError, ValueError, SyntaxError) as exc:
        first = exc
    if not (isinstance(dtype, str) and dtype in ML_DTYPES):
        raise TypeError(f"unknown dtype {dtype!r} ({first})") from None
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError(f"dtype {dtype!r} needs the ml_dtypes package (pip install ml_dtypes)") from None
    try:
        return np.dtype(getattr(ml_dtypes, dtype))
    except (AttributeError, TypeError):
        raise TypeError(f"unknown dtype {dtype!r} (the ml_dtypes installed has no such type)") from None


def elem_size(dtype) -> int:
    """Element size in bytes of a NumPy dtype; TypeError if autotrans cannot move it."""
    dt = as_dtype(dtype)
    if dt.hasobject:
        raise TypeError(f"dtype {dt} holds Python objects and cannot be transposed on the GPU")
    if dt.subdtype is not None:
        raise TypeError(f"dtype {dt} is a sub-array type; pass its element type and a larger shape")
    if dt.itemsize not in ELEM_SIZES:
        raise TypeError(f"dtype {dt} has itemsize {dt.itemsize}; supported sizes are {ELEM_SIZES}")
    return dt.itemsize


def dtype_of_size(elem_bytes: int) -> np.dtype:
    """A NumPy dtype with this element size (the kernels only see bytes)."""
    return np.dtype({1: np.uint8, 2: np.uint16, 4: np.float32, 8: np.float64, 16: np.complex128}[elem_bytes])


def gbps(nbytes: int, us: float) -> float:
    """Effective bandwidth of a transpose of nbytes in us: bytes read plus written."""
    return 2 * nbytes / (us * 1e-6) / 1e9


_SHAPE = re.compile(r"^\s*[0-9]+(\s*[xX*,]\s*[0-9]+){1,2}\s*$", re.ASCII)


def parse_shape(text: str) -> tuple:
    """"8192x8192" -> (8192, 8192); "4x512x512" -> (4, 512, 512) (a batch).

    ValueError ("bad shape ...") for anything else: other ranks, zero or
    negative dimensions, digits other than ASCII 0-9, dimensions over MAX_DIM."""
    if not isinstance(text, str):
        raise ValueError(f"bad shape {text!r:.60}: expected text like 8192x8192 or 4x512x512")
    shown = repr(text if len(text) <= 60 else text[:50] + "...")
    if not _SHAPE.match(text):
        if any(c.isdigit() and not c.isascii() for c in text):
            why = "dimensions must be written with the ASCII digits 0-9"
        elif re.fullmatch(r"\s*-?[0-9]+(\s*[xX*,]\s*-?[0-9]+){1,2}\s*", text, re.ASCII):
            why = "dimensions must be positive"
        else:
            why = "expected MxN or BxMxN with positive integers, like 8192x8192 or 4x512x512"
        raise ValueError(f"bad shape {shown}: {why}")
    parts = [p.lstrip("0") or "0" for p in re.split(r"\s*[xX*,]\s*", text.strip())]
    if any(len(p) > len(str(MAX_DIM)) for p in parts) or max(map(int, parts)) > MAX_DIM:
        raise ValueError(f"bad shape {shown}: dimensions must be at most 2**62 ({MAX_DIM})")
    dims = tuple(int(p) for p in parts)
    if min(dims) < 1:
        raise ValueError(f"bad shape {shown}: dimensions must be positive")
    as_bmn(dims)
    return dims


def parse_dtype(text) -> np.dtype:
    """A NumPy dtype autotrans can move (a name like "float16", or a dtype);
    TypeError naming the problem otherwise, including structured, sub-array,
    raw-void and object dtypes."""
    if text is None:
        raise TypeError("dtype None names no type; name one (e.g. float32)")
    dt = as_dtype(text)
    if dt.kind == "V" and dt.subdtype is None:
        what = "a structured type" if dt.fields is not None else "raw bytes"
        raise TypeError(f"dtype {text!r} is {what}; name a plain type of its size "
                        "(e.g. uint8, float32, complex64)")
    elem_size(dt)
    return dt


def format_shape(shape) -> str:
    """(1, M, N) and (M, N) -> "MxN"; (B, M, N) -> "BxMxN"."""
    b, m, n = as_bmn(shape)
    return f"{m}x{n}" if b == 1 else f"{b}x{m}x{n}"


@dataclass(frozen=True)
class Problem:
    """One transpose job: B matrices of M x N elements of elem_bytes bytes,
    (B, M, N) -> (B, N, M)."""
    batch: int
    rows: int
    cols: int
    elem_bytes: int

    @classmethod
    def of(cls, shape, dtype) -> "Problem":
        return cls(*as_bmn(shape), elem_size(dtype))

    @property
    def bmn(self) -> tuple[int, int, int]:
        return (self.batch, self.rows, self.cols)

    @property
    def nbytes(self) -> int:
        return self.batch * self.rows * self.cols * self.elem_bytes
