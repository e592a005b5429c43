"""The search space: which configs to try for a shape, element size and device.

Constraints are applied here, before anything compiles: the config must be valid
(config.KernelConfig.problems), fit the device (threads, shared memory), and its
vector width must match the alignment of the shape's rows.
"""
from __future__ import annotations

import dataclasses
import functools

from .. import families
from ..families import skinny as _skinny
from ..families import whole as _whole
from ..core.device import Limits
from ..core.problem import as_bmn
from ..kernels.config import CLASSIC_NAMES, KernelConfig, classic
from ..kernels.templates import templates_hash

# Bump when the enumeration below changes: cache keys include it.
SPACE_VERSION = 18  # 7: the whole family, 32- and 64-byte rows casts; 8: tall strided shift tiles; 9: shift casts;
                    # 10: skinny tiles of 4 KiB, two vectors a thread, unpadded; 11: ndshift's 80-row tiles;
                    # 12: wide short tiles (skinny's shape_space); 13: wide narrow tiles (few long columns);
                    # 14: ndtile casts; 15: row-sized rows tiles (rows.problem_space);
                    # 16: the flat family (flat.problem_space);
                    # 17: flat at 128 threads of one vector, the untuned shape first;
                    # 18: flatv (16-byte loads) for rows of 16 1-byte elements or more; flat at 2 and 4 runs a block

ORDERS = ("col", "row")   # tile walks tried for the vector tiles (col won on the H200)
SKINNY = _skinny.VARIANTS  # narrow and short (cuda_templates/skinny.py)
SKINNY_BYTES = 64          # a side this short (bytes) takes a skinny tile untuned (skinny_default)
SKINNY_FILL = 4            # skinny tiles are tried where the short side fills more than 1/4 of theirs
# Input rows whose pitch is a multiple of this also try the band walk (xor vec
# tiles): on the H200, 8192x8192 complex128 (128 KiB rows) went from 0.92 to
# 0.96 of memcpy with it, while 16384x16384 float32 (64 KiB rows) lost 1-3%.
BAND_PITCH = 128 * 1024

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
    "vec:e8:64x64:t256:v16:r1:p0:xor:band",   # 64-bit arguments: 4 bytes at 40 registers (sm_90)
    "whole:e16:32x16:t64:v16:r1:p0:none:row", "whole:e16:32x32:t128:v16:r1:p0:none:row",   # 4 bytes (sm_80)
})


def space_id() -> str:
    """Identifies templates plus search space, for cache keys."""
    return f"{templates_hash()}-s{SPACE_VERSION}"


def _family_space(fam, e: int) -> list[KernelConfig]:
    """A family's candidates that are valid configs and pass its own filter."""
    out = []
    for kw in fam.space(e):
        try:
            c = KernelConfig(**kw)
        except ValueError:
            continue
        if getattr(fam, "keep", None) is None or fam.keep(c):
            out.append(c)
    return out


def default_space(elem_bytes: int) -> list[KernelConfig]:
    """Every config the tuner may try for this element size, before shape and
    device constraints: the classic variants, every family's space, the vector
    tiles in each walk of ORDERS and, xor-swizzled, in the band walk."""
    space = {f.VARIANTS[0]: _family_space(f, elem_bytes) for f in families.modules()}
    vecs = space.pop("vec")
    walks = [dataclasses.replace(c, order=o) for o in ORDERS for c in vecs]
    bands = [dataclasses.replace(c, order="band") for c in vecs if c.swizzle == "xor"]
    shifts = space.pop("shift")
    out = [classic(n, elem_bytes) for n in CLASSIC_NAMES] + space.pop("tile") + space.pop("naive")
    out += walks + shifts + bands + [c for rest in space.values() for c in rest]
    return [c for c in dict.fromkeys(out) if c.key not in _PTXAS_SPILLS]


def fit_problems(cfg: KernelConfig, shape, limits: Limits = Limits()) -> list[str]:
    """Why cfg cannot run this shape on a device with these limits (empty: it can)."""
    p = limits.problems(cfg.threads, cfg.smem_bytes)
    if not cfg.aligned_for(shape):
        _, m, n = as_bmn(shape)
        if cfg.variant == "whole":
            p.append(f"{m}x{n} matrices of {cfg.elem_bytes} B do not fit {cfg.key}'s blocks or are not whole "
                     f"{cfg.vec_bytes}-byte vectors")
        elif cfg.variant in SKINNY:
            p.append(f"the short side ({_skinny.side_of(cfg, m, n)} elements) is longer than "
                     f"{cfg.key}'s {_skinny.short_side(cfg)} (skinny tiles take rows at any alignment)")
        else:
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
    """The default space and the families' configs for this shape
    (shape_space), constrained to this shape and device (admits())."""
    return [c for c in default_space(elem_bytes) + shape_space(shape, elem_bytes) if admits(c, shape, limits)]


def shape_space(shape, elem_bytes: int) -> list[KernelConfig]:
    """The configs families offer for this shape alone (a family's optional
    shape_space(e, m, n): the wide skinny tiles), valid ones only."""
    _, m, n = as_bmn(shape)
    out = []
    for fam in families.modules():
        for kw in getattr(fam, "shape_space", lambda e, m, n: ())(elem_bytes, m, n):
            try:
                out.append(KernelConfig(**kw))
            except ValueError:
                continue
    return out


def admits(cfg: KernelConfig, shape, limits: Limits = Limits()) -> bool:
    """Whether cfg is one of this shape's candidates on this device. Vector
    tiles at a quarter of the widest aligned width or less are left out: on
    the H200 they never came within 10% of the wider ones. Shift tiles are
    tried only where rows are not 16-byte aligned (elsewhere vec does the same
    with less), the band walk only where the input row pitch is a multiple of
    BAND_PITCH. Skinny tiles run only where the shape's short side fits them
    (aligned_for) and are tried only where it fills more than a quarter of
    theirs; whole tiles only where a block holds at least whole.MIN_MATRICES
    matrices."""
    widest = widest_vector(shape, cfg.elem_bytes)
    _, m, n = as_bmn(shape)
    v = cfg.variant
    return (not fit_problems(cfg, shape, limits)
            and not (v == "vec" and 4 * cfg.vec_bytes <= widest)
            and not (v == "shift" and widest >= 16)
            and not (v in SKINNY and SKINNY_FILL * _skinny.side_of(cfg, m, n) <= _skinny.short_side(cfg))
            and not (v == "whole" and _whole.per_block(cfg, m, n) < _whole.MIN_MATRICES)
            and (n * cfg.elem_bytes % BAND_PITCH == 0 or cfg.order != "band"))


# Untuned defaults per (element size, vector width), from tuning on the H200
# (benchmarks/results): the winners' shape of tile, threads and micro-rows.
_DEFAULTS = {
    (1, 16): (256, 256, 512, 4), (1, 8): (256, 256, 512, 8), (1, 4): (64, 128, 256, 4),
    (2, 16): (128, 128, 256, 2), (2, 8): (128, 128, 512, 4), (2, 4): (64, 64, 256, 2),
    (4, 16): (64, 64, 256, 4), (4, 8): (64, 64, 256, 2), (4, 4): (64, 32, 256, 1),
    (8, 16): (32, 64, 256, 1), (8, 8): (64, 32, 256, 1),
    (16, 16): (64, 32, 256, 1),
}


# The large 1- and 2-byte tiles above win only on matrices they tile whole, in
# many blocks; elsewhere (edge tiles, few blocks) they ran at 0.12-0.85 of the
# fastest of each shape's pool (untuned_pool.py, H100 and H200), where these
# smaller tiles (row walk) ran at 0.87-1.00: over the pools' 1- and 2-byte
# vec-default shapes 0.55-0.85 -> 0.95-0.98 of the fastest (NOTES 55).
_SMALL_DEFAULTS = {(1, 16): (64, 128, 128, 4), (2, 16): (128, 64, 256, 2)}
BIG_TILE_BLOCKS = 1024   # the large tile where it tiles the matrices whole in at least this many blocks

# Where 16-byte vec tiles cannot run, 1- and 2-byte elements go faster through
# shift tiles than through narrower vec tiles (H200, 4097x4095). float16's
# 64x64 ran within 0.928/0.949 of each pool's fastest on the H100/H200 against
# 0.905/0.923 for 64x128, but behind it on three held-out odd shapes (0.966
# against 0.979, NOTES 55): 64x128 stays.
_SHIFT_DEFAULTS = {1: (128, 64, 256, 4), 2: (64, 128, 256, 2)}


def _vec_default(shape, elem_bytes: int, v: int) -> KernelConfig:
    """The untuned vec tile of this element size and vector width for a shape:
    _DEFAULTS', or _SMALL_DEFAULTS' (row walk) where that tile would leave
    edge tiles or make fewer than BIG_TILE_BLOCKS blocks."""
    tr, tc, nt, r = _DEFAULTS[(elem_bytes, v)]
    b, m, n = as_bmn(shape)
    if (elem_bytes, v) in _SMALL_DEFAULTS and (m % tr or n % tc or b * (m // tr) * (n // tc) < BIG_TILE_BLOCKS):
        tr, tc, nt, r = _SMALL_DEFAULTS[(elem_bytes, v)]
        return KernelConfig("vec", elem_bytes, tr, tc, nt, v, r, 0, "xor", "row")
    return KernelConfig("vec", elem_bytes, tr, tc, nt, v, r, 0, "xor", "col")


def skinny_default(shape, elem_bytes: int, limits: Limits = Limits()) -> KernelConfig | None:
    """The untuned skinny tile for a shape with a short side, else None.

    A side of s <= SKINNY_BYTES bytes that a skinny config holds (the space's
    short sides go to 32 elements and 128 bytes: in effect s <= 32 elements of
    1 and 2 bytes, 16 of 4, 8 of 8, 4 of 16) is short: a tile family's tile (32
    to 256 elements a side) then moves mostly nothing on that side, in narrow
    accesses where s * elem_bytes is not a multiple of 16 (on the H200 1000000x8
    int8 ran at 0.19 of a copy, 262144x3 and 17x100003 float16 at 0.49-0.51),
    while a skinny tile moves whole 16-byte vectors of the long side. The pick:
    narrow where the columns are the short side (else short), of the space's
    smallest short side that holds it, a tile of 8 KiB where the long side
    allows, four vectors a thread, unpadded where the side is odd, else padded
    (skinny.untuned)."""
    _, m, n = as_bmn(shape)
    side = min(m, n)
    if side * elem_bytes > SKINNY_BYTES:
        return None
    variant = "narrow" if n <= m else "short"
    fits = [c for c in _skinny_space(elem_bytes) if c.variant == variant and _skinny.untuned(c, side)
            and not fit_problems(c, shape, limits)]
    return min(fits, key=lambda c: _skinny.short_side(c), default=None)


@functools.lru_cache(maxsize=None)
def _skinny_space(elem_bytes: int) -> tuple[KernelConfig, ...]:
    """The skinny configs of default_space(elem_bytes) (once: default_config is on transpose()'s path)."""
    return tuple(c for c in default_space(elem_bytes) if c.variant in SKINNY)


WHOLE_DEFAULT_BYTES = 4096   # whole_default's block: this many bytes of whole matrices


def whole_default(shape, elem_bytes: int, limits: Limits = Limits()) -> KernelConfig | None:
    """The untuned tile for a batch of small matrices, else None: the whole
    family's 4 KiB block (256 threads, one 16-byte vector each) where it holds
    at least whole.MIN_MATRICES matrices of whole vectors. On an H100 over 11
    such batches (matrices of 256 B to 2 KiB, 1 to 8 bytes an element) it ran
    at 0.92-1.00 of the fastest of each pool, where the skinny default ran at
    0.29-0.83 (untuned_pool.py --defaults, NOTES 55)."""
    b, m, n = as_bmn(shape)
    if b < 2 or elem_bytes > 8:
        return None
    cfg = KernelConfig("whole", elem_bytes, 32, WHOLE_DEFAULT_BYTES // 32 // elem_bytes, 256, 16, 1, 0, "none", "row")
    if _whole.per_block(cfg, m, n) < _whole.MIN_MATRICES or fit_problems(cfg, shape, limits):
        return None
    return cfg


WIDE_DEFAULT_BYTES = 128   # wide_default's tile: this many bytes of each input row


def wide_default(shape, elem_bytes: int, limits: Limits = Limits()) -> KernelConfig | None:
    """The untuned wide tile for few long rows or columns that are not
    16-byte aligned (skinny.wide_rows: 33-512 of them, the other side 16
    times as long), else None. Few rows: the short tile of
    WIDE_DEFAULT_BYTES of each row, unpadded, the fewest threads; on an
    H100 over nine such shapes (1- to 8-byte elements, 100-363 rows, 40-131
    MiB) it ran at 0.93-0.99 of a memcpy where the rest of the space's best
    ran 0.76-0.96 (NOTES 59). Few columns: skinny.narrow_default (NOTES 60).
    Rows 16-byte aligned keep the vec tiles (480x40000 complex64: 0.96, the
    wide tiles behind)."""
    b, m, n = as_bmn(shape)
    if widest_vector(shape, elem_bytes) >= 16:
        return None
    if _skinny.wide_rows(elem_bytes, m, n) is not None:
        kws = [kw for kw in _skinny.shape_space(elem_bytes, m, n)
               if kw["variant"] == "short" and kw["tile_cols"] * elem_bytes == WIDE_DEFAULT_BYTES]
    else:
        kws = [kw for kw in [_skinny.narrow_default(elem_bytes, m, n)] if kw]
    for kw in kws:
        cfg = KernelConfig(**kw)
        if not fit_problems(cfg, shape, limits):
            return cfg
    return None


def default_config(shape, elem_bytes: int, limits: Limits = Limits(), max_vec: int = 16) -> KernelConfig:
    """A good config without tuning: a whole tile for a batch of small
    matrices (whole_default, where pointers are 16-byte aligned), a wide
    short tile for few long rows that are not 16-byte aligned (wide_default),
    a skinny tile where one side is short
    (skinny_default; they take pointers at any element alignment), else the
    widest vector tile this shape's rows (and pointers, max_vec) allow, a shift
    tile for 1- and 2-byte elements where 16-byte vectors do not fit, else the
    seeds' best classic tile."""
    whole = whole_default(shape, elem_bytes, limits) if max_vec >= 16 else None
    if whole is not None:
        return whole
    wide = wide_default(shape, elem_bytes, limits)
    if wide is not None:
        return wide
    skinny = skinny_default(shape, elem_bytes, limits)
    if skinny is not None:
        return skinny
    for v in (16, 8, 4):
        if v <= max_vec and (elem_bytes, v) in _DEFAULTS:
            cfg = _vec_default(shape, elem_bytes, v)
            if not fit_problems(cfg, shape, limits):
                return cfg
        if v == 16 and elem_bytes in _SHIFT_DEFAULTS:
            tr, tc, nt, r = _SHIFT_DEFAULTS[elem_bytes]
            cfg = KernelConfig("shift", elem_bytes, tr, tc, nt, 16, r, r, "xor", "col")
            if not fit_problems(cfg, shape, limits):
                return cfg
    return classic("seed", elem_bytes)
