"""Kernel configurations: one frozen type with an explicit, stable key.

A transpose moves bytes, so a config names an element *size*, never a dtype.
Geometry is given in the input's orientation: a tile is ``tile_rows`` input
rows by ``tile_cols`` input columns; it becomes ``tile_cols`` output rows.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

ELEM_SIZES = (1, 2, 4, 8, 16)
VARIANTS = ("naive", "remapped", "tile", "vec", "shift")
SWIZZLES = ("none", "xor")
ORDERS = ("row", "col", "diag", "band")
VEC_SIZES = (4, 8, 16)

_KEY = re.compile(
    r"^(?P<variant>[a-z]+):e(?P<elem_bytes>\d+):(?P<tile_rows>\d+)x(?P<tile_cols>\d+)"
    r":t(?P<threads>\d+):v(?P<vec_bytes>\d+):r(?P<micro_rows>\d+):p(?P<pad>\d+)"
    r":(?P<swizzle>[a-z]+):(?P<order>[a-z]+)$"
)


def _pow2(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


@dataclass(frozen=True)
class KernelConfig:
    """One transpose kernel of the template family.

    variant: ``naive`` (one thread per element, coalesced reads), ``remapped``
    (coalesced writes), ``tile`` (shared-memory tile, scalar accesses), ``vec``
    (vectorised tile: ``vec_bytes`` per global access, ``micro_rows`` input rows
    transposed in registers per thread step; rows must be vec_bytes-aligned),
    ``shift`` (the vec tile for rows and pointers at any alignment, 1- to 4-byte
    elements: aligned 16-byte vectors copied raw into shared memory, realigned
    from there on the way in and out; each tile reads vec_elems more rows and
    alone writes the aligned output vectors that start in its rows, so only the
    ends of whole output rows are written in parts; swizzle ``xor`` skews its
    transposed rows instead of permuting chunks).
    pad: elements added to each shared-memory row. swizzle: ``xor`` permutes
    elements (tile) or ``vec_bytes`` chunks (vec) within a shared-memory
    row. order: how consecutive blocks walk the tiles (row-major, column-major,
    diagonal, or row-major within bands of 32 tile columns).
    """

    variant: str
    elem_bytes: int
    tile_rows: int
    tile_cols: int
    threads: int
    vec_bytes: int = 0
    micro_rows: int = 1
    pad: int = 0
    swizzle: str = "none"
    order: str = "row"

    def __post_init__(self):
        if self.vec_bytes == 0:
            object.__setattr__(self, "vec_bytes", self.elem_bytes)
        bad = self.problems()
        if bad:
            raise ValueError(f"invalid KernelConfig {self.key}: " + "; ".join(bad))

    # -- identity ---------------------------------------------------------
    @property
    def key(self) -> str:
        """Stable text key; the field order is fixed here, not by the dataclass."""
        return (f"{self.variant}:e{self.elem_bytes}:{self.tile_rows}x{self.tile_cols}"
                f":t{self.threads}:v{self.vec_bytes}:r{self.micro_rows}:p{self.pad}"
                f":{self.swizzle}:{self.order}")

    @classmethod
    def from_key(cls, key: str) -> "KernelConfig":
        m = _KEY.match(key)
        if not m:
            raise ValueError(f"not a KernelConfig key: {key!r}")
        d = m.groupdict()
        return cls(**{k: (v if k in ("variant", "swizzle", "order") else int(v)) for k, v in d.items()})

    @property
    def name(self) -> str:
        """The CUDA kernel's name: a C identifier derived from the key."""
        return "at_" + re.sub(r"[^0-9a-zA-Z]", "_", self.key)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "KernelConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def __str__(self) -> str:
        return self.key

    # -- derived geometry -------------------------------------------------
    @property
    def vec_elems(self) -> int:
        """Elements per global access (K)."""
        return self.vec_bytes // self.elem_bytes

    @property
    def smem_bytes(self) -> int:
        """Dynamic shared memory per block, as the templates lay it out."""
        if self.variant == "tile":
            return self.tile_rows * (self.tile_cols + self.pad) * self.elem_bytes
        if self.variant == "vec":
            return self.tile_cols * (self.tile_rows + self.pad) * self.elem_bytes
        if self.variant == "shift":   # raw rows, then the transposed tile (vec_elems more rows)
            rows, k, e = self.tile_rows + self.vec_elems, self.vec_elems, self.elem_bytes
            raw = rows * (self.tile_cols * e + self.vec_bytes)
            words, groups = (rows + self.pad) * e // 4, self.tile_cols // k
            skew = (32 // groups - k * words) % 32 if self.swizzle == "xor" else 0
            return raw + self.tile_cols * words * 4 + 4 * skew * (groups - 1)
        return 0

    def blocks(self, shape) -> int:
        """Blocks (one per tile) for a (B,) M, N shape."""
        b, m, n = as_bmn(shape)
        return b * (-(-m // self.tile_rows)) * (-(-n // self.tile_cols))

    def aligned_for(self, shape) -> bool:
        """Whether the config can run this shape: vec needs every row of input
        and output to start on a vec_bytes boundary; the others take any shape."""
        if self.variant != "vec":
            return True
        _, m, n = as_bmn(shape)
        v = self.vec_bytes
        return (m * self.elem_bytes) % v == 0 and (n * self.elem_bytes) % v == 0

    @property
    def pointer_align(self) -> int:
        """The alignment (bytes) the kernel needs of the input and output pointers."""
        return self.vec_bytes if self.variant == "vec" else self.elem_bytes

    # -- validity ---------------------------------------------------------
    def problems(self) -> list[str]:
        """Reasons this config cannot be generated (empty when valid)."""
        p = []
        e, v, tr, tc, nt = (self.elem_bytes, self.vec_bytes, self.tile_rows,
                            self.tile_cols, self.threads)
        if self.variant not in VARIANTS:
            return [f"variant must be one of {VARIANTS}"]
        if e not in ELEM_SIZES:
            return [f"elem_bytes must be one of {ELEM_SIZES}"]
        if self.swizzle not in SWIZZLES:
            p.append(f"swizzle must be one of {SWIZZLES}")
        if self.order not in ORDERS:
            p.append(f"order must be one of {ORDERS}")
        if not (_pow2(tr) and _pow2(tc)):
            p.append("tile sides must be powers of two")
        if not (32 <= nt <= 1024 and nt % 32 == 0):
            p.append("threads must be a multiple of 32 in [32, 1024]")
        if self.pad < 0:
            p.append("pad must be >= 0")
        if p:
            return p
        if self.variant in ("naive", "remapped"):
            if nt != tr * tc:
                p.append("naive/remapped use one thread per element: threads == tile_rows*tile_cols")
            if v != e or self.micro_rows != 1 or self.pad or self.swizzle != "none":
                p.append("naive/remapped take no vec_bytes, micro_rows, pad or swizzle")
        elif self.variant == "tile":
            if v != e or self.micro_rows != 1:
                p.append("tile uses scalar accesses: vec_bytes == elem_bytes, micro_rows == 1")
            if (tr * tc) % nt:
                p.append("threads must divide the tile")
        elif self.variant == "shift":
            p += self._shift_problems()
        else:
            p += self._vec_problems()
        return p

    def _shift_problems(self) -> list[str]:
        e, v, tr, tc, nt, r = (self.elem_bytes, self.vec_bytes, self.tile_rows,
                               self.tile_cols, self.threads, self.micro_rows)
        if e > 4 or v != 16 or r * e != 4:
            return ["shift moves 1-, 2- and 4-byte elements in 16-byte vectors, "
                    "with micro_rows*elem_bytes == 4 (one-word chunks)"]
        k, p = v // e, []
        if not (2 <= tc // k <= 32 and 2 <= tr // k <= 32):
            p.append("shift needs 2..32 vectors per tile row and per output row")
        elif (tc * (tr // k)) % nt:
            p.append("threads must divide the store phase's vectors")
        if (self.pad * e) % 4:
            p.append("shift's pad*elem_bytes must be a multiple of 4")
        return p

    def _vec_problems(self) -> list[str]:
        e, v, tr, tc, nt, r = (self.elem_bytes, self.vec_bytes, self.tile_rows,
                               self.tile_cols, self.threads, self.micro_rows)
        if v not in VEC_SIZES or v < e:
            return [f"vec_bytes must be one of {VEC_SIZES} and >= elem_bytes"]
        k = v // e
        p = []
        if not _pow2(r) or k % r or r * e < 4:
            p.append("micro_rows must be a power of two dividing vec_elems, with micro_rows*elem_bytes >= 4")
        if tr % k or tc % k:
            p.append("tile sides must be multiples of vec_elems")
        elif ((tr // r) * (tc // k)) % nt or (tc * (tr // k)) % nt:
            p.append("threads must divide both phases' vector steps")
        if (self.pad * e) % v:
            p.append("pad*elem_bytes must be a multiple of vec_bytes (keeps rows aligned)")
        return p


def as_bmn(shape) -> tuple[int, int, int]:
    """(M, N) or (B, M, N) as a (B, M, N) tuple of ints."""
    t = tuple(int(s) for s in shape)
    if len(t) == 2:
        return (1,) + t
    if len(t) == 3:
        return t
    raise ValueError(f"shape must be (M, N) or (B, M, N), got {shape!r}")


def elem_size(dtype) -> int:
    """Element size in bytes of a NumPy dtype; TypeError if autotrans cannot move it."""
    dt = np.dtype(dtype)
    if dt.hasobject:
        raise TypeError(f"dtype {dt} holds Python objects and cannot be transposed on the GPU")
    if dt.itemsize not in ELEM_SIZES:
        raise TypeError(f"dtype {dt} has itemsize {dt.itemsize}; supported sizes are {ELEM_SIZES}")
    return dt.itemsize


def dtype_of_size(elem_bytes: int) -> np.dtype:
    """A NumPy dtype with this element size (the kernels only see bytes)."""
    return np.dtype({1: np.uint8, 2: np.uint16, 4: np.float32, 8: np.float64, 16: np.complex128}[elem_bytes])


def classic(name: str, elem_bytes: int) -> KernelConfig:
    """The classic variants by name: naive, remapped, tile, padded, swizzled, seed
    (seed = the seeds' best: 32x8 threads on a padded 32x32 tile)."""
    e = elem_bytes
    presets = {
        "naive": KernelConfig("naive", e, 8, 32, 256),
        "remapped": KernelConfig("remapped", e, 32, 8, 256),
        "tile": KernelConfig("tile", e, 32, 32, 1024),
        "padded": KernelConfig("tile", e, 32, 32, 1024, pad=1),
        "swizzled": KernelConfig("tile", e, 32, 32, 1024, swizzle="xor"),
        "seed": KernelConfig("tile", e, 32, 32, 256, pad=1),
    }
    if name not in presets:
        raise ValueError(f"unknown classic variant {name!r}; choose from {sorted(presets)}")
    return presets[name]


CLASSIC_NAMES = ("naive", "remapped", "tile", "padded", "swizzled", "seed")
