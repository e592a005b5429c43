"""The search space: which configs to try for a shape, element size and device.

Constraints are applied here, before anything compiles: the config must be valid
(config.KernelConfig.problems), fit the device (threads, shared memory), and its
vector width must match the alignment of the shape's rows.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

from .config import CLASSIC_NAMES, KernelConfig, as_bmn, classic
from .templates import templates_hash

# Bump when the enumeration below changes: cache keys include it.
SPACE_VERSION = 3

ORDERS = ("col", "row")   # tile walks tried for the vector tiles (col won on the H200)
# Input rows whose pitch is a multiple of this also try the band walk (xor vec
# tiles): on the H200, 8192x8192 complex128 (128 KiB rows) went from 0.92 to
# 0.96 of memcpy with it, while 16384x16384 float32 (64 KiB rows) lost 1-3%.
BAND_PITCH = 128 * 1024

THREADS = (64, 128, 256, 512, 1024)
TILE_BYTES = (4096, 65536)

# Within the register budget, ptxas 13.0 still spills a few bytes in these
# (at 40-64 registers, sm_90 and/or sm_80); they are left out so that every
# kernel of the default space is spill-free (tests/test_compile.py checks it).
_PTXAS_SPILLS = frozenset({
    "vec:e1:512x128:t512:v16:r4:p0:xor:col",
    "vec:e2:256x64:t256:v16:r8:p0:xor:band", "vec:e2:256x64:t256:v16:r8:p0:xor:row",
    "vec:e2:256x64:t256:v16:r8:p8:none:col", "vec:e2:64x256:t256:v16:r8:p0:xor:band",
    "vec:e2:64x256:t256:v16:r8:p0:xor:row", "vec:e2:64x256:t256:v16:r8:p8:none:col",
    "vec:e4:128x128:t512:v16:r4:p0:xor:band", "vec:e4:256x64:t512:v16:r1:p0:xor:band",
    "vec:e4:256x64:t512:v16:r1:p0:xor:row", "vec:e4:32x32:t64:v8:r1:p0:xor:row",
    "vec:e4:64x64:t256:v8:r1:p0:xor:row", "vec:e8:128x64:t512:v16:r1:p0:xor:band",
    "vec:e8:128x64:t512:v16:r1:p0:xor:row",
})


@dataclass(frozen=True)
class Limits:
    """What a device allows a block; defaults are every CUDA GPU's minimum."""
    max_threads: int = 1024
    smem_per_block: int = 48 * 1024    # with the opt-in attribute, where the device has more

    def problems(self, cfg: KernelConfig) -> list[str]:
        p = []
        if cfg.threads > self.max_threads:
            p.append(f"{cfg.threads} threads > device limit {self.max_threads}")
        if cfg.smem_bytes > self.smem_per_block:
            p.append(f"{cfg.smem_bytes} B shared memory > device limit {self.smem_per_block}")
        return p


def space_id() -> str:
    """Identifies templates plus search space, for cache keys."""
    return f"{templates_hash()}-s{SPACE_VERSION}"


def _classics(e: int) -> list[KernelConfig]:
    out = [classic(n, e) for n in CLASSIC_NAMES]
    for t in (8, 16, 32, 64):
        for nt, pad, sw in itertools.product((t * t // 4, t * t // 2, 256), (0, 1), ("none", "xor")):
            if pad and sw == "xor":
                continue
            try:
                out.append(KernelConfig("tile", e, t, t, nt, pad=pad, swizzle=sw))
            except ValueError:
                pass
    out.append(KernelConfig("naive", e, 4, 32, 128))
    out.append(KernelConfig("remapped", e, 32, 4, 128))
    return out


def _vecs(e: int) -> list[KernelConfig]:
    out = []
    sides = [s for s in (8, 16, 32, 64, 128, 256, 512) if 32 <= s * e <= 1024]
    for tr, tc, v, nt in itertools.product(sides, sides, (4, 8, 16), THREADS):
        if v < e or max(tr, tc) > 4 * min(tr, tc) or not TILE_BYTES[0] <= tr * tc * e <= TILE_BYTES[1]:
            continue
        k = v // e
        for r in sorted({max(1, 4 // e), k}):
            for pad, sw in ((0, "xor"), (k, "none")):
                try:
                    c = KernelConfig("vec", e, tr, tc, nt, v, r, pad, sw)
                except ValueError:
                    continue
                if _register_budget_ok(c) and (sw == "xor" or nt == 256):
                    out.append(c)
    return out


def _shifts(e: int) -> list[KernelConfig]:
    """The shift tiles (1-, 2- and 4-byte elements, column walk): 8-16 KiB tiles,
    128-512 threads, transposed rows padded by a word, skewed or not. On the H200
    (4097x4095) these held the best of each element size; smaller or larger tiles,
    64 or 1024 threads, unpadded rows and the row walk were 1-40% slower."""
    if e > 4:
        return []
    out, r = [], 4 // e
    sides = [s for s in (8, 16, 32, 64, 128, 256, 512) if 32 <= s * e <= 1024]
    for tr, tc, nt, sw in itertools.product(sides, sides, (128, 256, 512), ("xor", "none")):
        if max(tr, tc) <= 4 * min(tr, tc) and 8192 <= tr * tc * e <= 16384:
            try:
                out.append(KernelConfig("shift", e, tr, tc, nt, 16, r, r, sw, "col"))
            except ValueError:
                pass
    return out


def _register_budget_ok(c: KernelConfig) -> bool:
    """Keeps vec tiles whose per-thread vectors in flight fit in registers.

    loads = vectors a thread holds after the load phase, stores = vectors it
    holds before the store phase; their words must stay within a budget (tighter
    for 1024-thread blocks, where ptxas targets 32 registers, and for 128-thread
    blocks, where it spilled at the limit). Measured with ptxas 13.0 for sm_90
    and sm_80: the default space compiles without spills (tests/test_compile.py).
    """
    loads = (c.tile_rows // c.micro_rows) * (c.tile_cols // c.vec_elems) // c.threads * c.micro_rows
    stores = c.tile_cols * (c.tile_rows // c.vec_elems) // c.threads
    words = (loads + stores) * c.vec_bytes // 4
    if c.threads == 1024:
        return loads + stores <= 8 and words <= 16
    return loads + stores <= 16 and words < (64 if c.threads <= 128 else 65)


def default_space(elem_bytes: int) -> list[KernelConfig]:
    """Every config the tuner may try for this element size, before shape and
    device constraints."""
    vectors = [dataclasses.replace(c, order=o) for o in ORDERS for c in _vecs(elem_bytes)]
    bands = [dataclasses.replace(c, order="band") for c in _vecs(elem_bytes) if c.swizzle == "xor"]
    return [c for c in dict.fromkeys(_classics(elem_bytes) + vectors + _shifts(elem_bytes) + bands)
            if c.key not in _PTXAS_SPILLS]


def fit_problems(cfg: KernelConfig, shape, limits: Limits = Limits()) -> list[str]:
    """Why cfg cannot run this shape on a device with these limits (empty: it can)."""
    p = limits.problems(cfg)
    if not cfg.aligned_for(shape):
        _, m, n = as_bmn(shape)
        p.append(f"rows of {n} and {m} elements of {cfg.elem_bytes} B are not "
                 f"{cfg.vec_bytes}-byte aligned")
    return p


def widest_vector(shape, elem_bytes: int) -> int:
    """The widest global access (bytes) that every row of this shape is aligned to."""
    _, m, n = as_bmn(shape)
    for v in (16, 8, 4):
        if (m * elem_bytes) % v == 0 and (n * elem_bytes) % v == 0:
            return v
    return elem_bytes


def candidates(shape, elem_bytes: int, limits: Limits = Limits()) -> list[KernelConfig]:
    """The default space, constrained to this shape and device. Vector tiles at
    a quarter of the widest aligned width or less are left out: on the H200
    they never came within 10% of the wider ones. Shift tiles are tried only
    where rows are not 16-byte aligned (elsewhere vec does the same with less),
    the band walk only where the input row pitch is a multiple of BAND_PITCH."""
    widest = widest_vector(shape, elem_bytes)
    banded = as_bmn(shape)[2] * elem_bytes % BAND_PITCH == 0
    return [c for c in default_space(elem_bytes) if not fit_problems(c, shape, limits)
            and not (c.variant == "vec" and 4 * c.vec_bytes <= widest)
            and not (c.variant == "shift" and widest >= 16)
            and (banded or c.order != "band")]


# Untuned defaults per (element size, vector width), from tuning on the H200
# (benchmarks/results): the winners' shape of tile, threads and micro-rows.
_DEFAULTS = {
    (1, 16): (256, 256, 512, 4), (1, 8): (256, 256, 512, 8), (1, 4): (64, 128, 256, 4),
    (2, 16): (128, 128, 256, 2), (2, 8): (128, 128, 512, 4), (2, 4): (64, 64, 256, 2),
    (4, 16): (64, 64, 256, 4), (4, 8): (64, 64, 256, 2), (4, 4): (64, 32, 256, 1),
    (8, 16): (32, 64, 256, 1), (8, 8): (64, 32, 256, 1),
    (16, 16): (64, 32, 256, 1),
}


# Where 16-byte vec tiles cannot run, 1- and 2-byte elements go faster through
# shift tiles than through narrower vec tiles (H200, 4097x4095).
_SHIFT_DEFAULTS = {1: (128, 64, 256, 4), 2: (64, 128, 256, 2)}


def default_config(shape, elem_bytes: int, limits: Limits = Limits(), max_vec: int = 16) -> KernelConfig:
    """A good config without tuning: the widest vector tile this shape's rows
    (and pointers, max_vec) allow, a shift tile for 1- and 2-byte elements where
    16-byte vectors do not fit, else the seeds' best classic tile."""
    for v in (16, 8, 4):
        if v <= max_vec and (elem_bytes, v) in _DEFAULTS:
            tr, tc, nt, r = _DEFAULTS[(elem_bytes, v)]
            cfg = KernelConfig("vec", elem_bytes, tr, tc, nt, v, r, 0, "xor", "col")
            if not fit_problems(cfg, shape, limits):
                return cfg
        if v == 16 and elem_bytes in _SHIFT_DEFAULTS:
            tr, tc, nt, r = _SHIFT_DEFAULTS[elem_bytes]
            cfg = KernelConfig("shift", elem_bytes, tr, tc, nt, 16, r, r, "xor", "col")
            if not fit_problems(cfg, shape, limits):
                return cfg
    return classic("seed", elem_bytes)
