"""Kernel configurations: one frozen type with an explicit, stable key.

A transpose moves bytes, so a config names an element *size*, never a dtype.
Geometry is given in the input's orientation: a tile is ``tile_rows`` input
rows by ``tile_cols`` input columns; it becomes ``tile_cols`` output rows.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from .. import families
from ..core import layout
from ..core.problem import ELEM_SIZES, as_bmn

SWIZZLES = ("none", "xor")
ORDERS = ("row", "col", "band")
# What a kernel's one parameter is: "dense" (at::Args, a B x M x N row-major
# input) or "strided" (at::StridedArgs: a TileProblem or RowsProblem of
# autotrans.core.layout, packed by autotrans.kernels.strided).
LAYOUTS = ("dense", "strided")
# What a strided kernel's store phase does to the bytes it writes (families
# that take one list it in their EPILOGUES): "none", or a fused conjugate,
# defined on the output's bytes counted from the output pointer: "conj32"
# flips bit 7 of byte 7 of every 8-byte group (the sign of a complex64's
# imaginary part), "conj64" bit 7 of byte 15 of every 16-byte group
# (complex128's). EPILOGUE_GROUPS: the bytes over which each pattern repeats.
EPILOGUES = ("none", "conj32", "conj64")
EPILOGUE_GROUPS = {"none": 1, "conj32": 8, "conj64": 16}
# What a strided kernel converts each element to on the way (families that
# take casts say so with TAKES_CASTS): "none", or a cast "SRC>DST" of
# core.layout.CAST_TYPES (f16, bf16, f32, f64, i8..i64, u8..u64), whose
# conversion cuda_templates/cast.cuh does in integer arithmetic, bit for bit
# as NumPy's astype (ml_dtypes' for bfloat16; core.layout.cast_reference).
# CAST_SIZES: each cast's (input, output) element bytes. cast_for maps dtype
# names to a cast.
CASTS = ("none",) + tuple(layout.CASTS)
CAST_SIZES = dict(layout.CASTS)

_KEY = re.compile(
    r"^(?P<variant>[a-z]+):e(?P<elem_bytes>\d+):(?P<tile_rows>\d+)x(?P<tile_cols>\d+)"
    r":t(?P<threads>\d+):v(?P<vec_bytes>\d+):r(?P<micro_rows>\d+):p(?P<pad>\d+)"
    r":(?P<swizzle>[a-z]+):(?P<order>[a-z]+)(?::s(?P<strip>[0-9]+)(?P<seam>m)?)?(?::(?P<layout>[a-z]+))?(?::(?P<epilogue>[a-z][a-z0-9]*))?"
    r"(?::(?P<cast>[a-z]+[0-9]+>[a-z]+[0-9]+))?(?:@(?P<fixed>[0-9]+x[0-9]+x[0-9]+|[0-9n.]+))?$", re.ASCII)
# KernelConfig.fixed: "" or a shape "BxMxN" (no leading zeros), each side in [1, MAX_FIXED_SIDE];
# strided configs: a launch's at::StridedArgs values after the pointers, "."-joined (_FIXED_ARGS).
_FIXED = re.compile(r"^[1-9][0-9]{0,18}x[1-9][0-9]{0,18}x[1-9][0-9]{0,18}$", re.ASCII)
_FIXED_ARGS = re.compile(r"^(0|n?[1-9][0-9]{0,18})(\.(0|n?[1-9][0-9]{0,18}))*$", re.ASCII)
MAX_FIXED_SIDE = 2**62
_INTS = ("elem_bytes", "tile_rows", "tile_cols", "threads", "vec_bytes", "micro_rows", "pad", "strip", "seam")
MAX_STRIP = 16         # tiles a block moves (KernelConfig.strip)
MAX_TILE = 1024        # elements a tile side; bounds shared memory and the bank report
MAX_BLOCKS = 2**31 - 1  # a launch's grid (x) limit; the kernels index blocks and tiles in 32 bits


def _launch_values(text: str) -> list[int]:
    """The integers of a strided config's ``fixed`` text ("."-joined, n for minus)."""
    return [-int(t[1:]) if t[0] == "n" else int(t) for t in text.split(".")]


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
    transposed rows instead of permuting chunks), ``rows`` (strided launches only:
    rows of contiguous elements gathered from strided places, vec_bytes-wide
    accesses, no shared memory).
    pad: elements added to each shared-memory row. swizzle: ``xor`` permutes
    elements (tile) or ``vec_bytes`` chunks (vec) within a shared-memory
    row. order: how consecutive blocks walk the tiles (row-major, column-major,
    or row-major within bands of 32 tile columns). layout: the kernel's
    parameter, ``dense`` (at::Args) or ``strided`` (at::StridedArgs; families
    that take it list it in their LAYOUTS; ``rows`` takes only it).
    epilogue: what the store phase does to the output's bytes (EPILOGUES;
    strided configs of families that list it in their EPILOGUES only).
    cast: what each element becomes on the way (CASTS; strided configs of
    families with TAKES_CASTS, no epilogue); elem_bytes is then the input's
    element size (the cast's), out_elem_bytes the output's, and vec_bytes
    the wider of a thread's load and store (vec_elems elements of each; rows
    casts also take 32 and 64, moved as 16-byte accesses: rows.py's WIDE_VECS).
    fixed: "" (the kernel takes any shape), or the one dense shape "BxMxN"
    the kernel is compiled for, its sizes compile-time constants (the index
    math folds: 2-12% faster on kernels of a few microseconds, NOTES 28);
    launched on that shape only. tune() adds these for its fastest configs.
    A strided config's: the one launch's at::StridedArgs values after the
    pointers (fixed_to_args' text), constants in its kernel; launched with
    those values only (fixed_args).
    strip: the tiles a block moves one after another, side by side along its
    input rows (1, or a power of two up to MAX_STRIP in families that list
    STRIPS, strided configs only: neighbouring tiles then read no sector of
    a row twice).
    seam: 0, or 1 (strips of families that list SEAMS): where the output's
    rows follow one another along a batch dimension (its output stride the
    row's bytes), the 16-byte vector that holds the end of one output row
    and the start of the next is written whole, by the next row's first
    tile (it also reads the previous matrix's last rows), not in pieces by
    two tiles.
    The rules of each variant live in its family module (cuda_templates/FAMILY.py).
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
    layout: str = "dense"   # after the older fields, so that positional constructions keep working
    epilogue: str = "none"  # after the others, for the same reason
    cast: str = "none"      # after the others, for the same reason
    fixed: str = ""         # after the others, for the same reason
    strip: int = 1          # after the others, for the same reason
    seam: int = 0           # last, for the same reason

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v, want = getattr(self, f.name), int if f.name in _INTS else str
            if type(v) is not want:
                raise ValueError(f"KernelConfig field {f.name} must be {want.__name__}, not {v!r:.50}")
        if self.vec_bytes == 0:
            object.__setattr__(self, "vec_bytes", max(self.elem_bytes, self.out_elem_bytes))
        bad = self.problems()
        if bad:
            raise ValueError(f"invalid KernelConfig {self.key}: " + "; ".join(bad))

    # -- identity ---------------------------------------------------------
    @property
    def key(self) -> str:
        """Stable text key; the field order is fixed here, not by the dataclass.
        A strip other than 1 follows the order (``:col:s4``; with seams ``:col:s4m``). Dense configs'
        keys carry no layout (they predate it); strided ones end in
        ``:strided``; an epilogue other than ``none`` follows (``:conj32``),
        then a cast other than ``none`` (``:f32>bf16``), then a fixed shape
        (``@1x256x256``)."""
        return (f"{self.variant}:e{self.elem_bytes}:{self.tile_rows}x{self.tile_cols}"
                f":t{self.threads}:v{self.vec_bytes}:r{self.micro_rows}:p{self.pad}"
                f":{self.swizzle}:{self.order}" + ("" if self.strip == 1 else f":s{self.strip}")
                + ("m" if self.seam else "")
                + ("" if self.layout == "dense" else f":{self.layout}")
                + ("" if self.epilogue == "none" else f":{self.epilogue}")
                + ("" if self.cast == "none" else f":{self.cast}")
                + (f"@{self.fixed}" if self.fixed else ""))

    @classmethod
    def from_key(cls, key: str) -> "KernelConfig":
        """Inverse of ``key``; ValueError for anything that is not a valid config's key."""
        m = _KEY.match(key) if isinstance(key, str) else None
        if not m:
            raise ValueError(f"not a KernelConfig key: {key!r}")
        d = {k: v for k, v in m.groupdict().items() if v is not None}
        if d.get("layout") == "dense":    # a dense key names no layout: one key per config
            raise ValueError(f"not a KernelConfig key: {key!r} (dense keys end at the order)")
        if d.get("epilogue") == "none":   # nor does any key name the epilogue "none"
            raise ValueError(f"not a KernelConfig key: {key!r} (keys without an epilogue end before it)")
        if d.get("strip") is not None and (d["strip"] == "1" or d["strip"] != str(int(d["strip"]))):  # nor strip 1
            raise ValueError(f"not a KernelConfig key: {key!r} (a strip is written without leading zeros, and strip 1 not at all)")
        if d.get("seam") is not None:
            d["seam"] = "1"
        return cls(**{k: (int(v) if k in _INTS else v) for k, v in d.items()})

    @property
    def name(self) -> str:
        """The CUDA kernel's name: a C identifier derived from the key."""
        return "at_" + re.sub(r"[^0-9a-zA-Z]", "_", self.key)

    def to_dict(self) -> dict:
        """The fields as a dict; a dense config's has no ``layout``, one
        without an epilogue no ``epilogue``, one without a cast no ``cast`` and
        one without a fixed shape no ``fixed`` (records stored before the
        fields existed, and those stored since, read the same)."""
        d = dataclasses.asdict(self)
        if self.layout == "dense":
            del d["layout"]
        if self.epilogue == "none":
            del d["epilogue"]
        if self.cast == "none":
            del d["cast"]
        if not self.fixed:
            del d["fixed"]
        if self.strip == 1:
            del d["strip"]
        if not self.seam:
            del d["seam"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "KernelConfig":
        """A config from to_dict()'s fields (``layout`` missing: dense;
        ``epilogue`` or ``cast`` missing: none; ``fixed`` missing: "";
        ``strip`` missing: 1; ``seam`` missing: 0);
        ValueError for missing, extra or mistyped ones."""
        names = {f.name for f in dataclasses.fields(cls)}
        if not isinstance(d, dict) or set(d) - names or not {"variant", "elem_bytes"} <= set(d):
            raise ValueError(f"not a KernelConfig: {d!r:.200}")
        return cls(**d)

    def __str__(self) -> str:
        return self.key

    # -- fixed shapes -----------------------------------------------------
    @property
    def fixed_shape(self) -> tuple[int, int, int] | None:
        """The (B, M, N) a dense kernel is compiled for (``fixed``), or None."""
        return tuple(map(int, self.fixed.split("x"))) if self.fixed and self.layout == "dense" else None

    @property
    def fixed_args(self) -> tuple[int, ...] | None:
        """The at::StridedArgs values after the pointers (kernels.strided.
        launch_args' second item: MAX_BATCH sizes and strides each, unused
        ones 1 and 0) a strided kernel is compiled for (``fixed``), or None."""
        if not self.fixed or self.layout != "strided":
            return None
        v = _launch_values(self.fixed)
        k, pad = v[7], layout.MAX_BATCH - v[7]
        dims = [v[8 + i * k:8 + (i + 1) * k] + [d] * pad for i, d in enumerate((1, 0, 0))]
        return tuple(v[:7] + dims[0] + dims[1] + dims[2])

    def fixed_to_args(self, args) -> "KernelConfig":
        """This strided config compiled for one launch: ``args``, the
        at::StridedArgs values after the pointers (as fixed_args gives them).
        Its ``fixed``: B.M.N.ldi.ldo.sci.nb, then k (the dimension slots up to
        the last one used: size not 1 or a stride not 0) and their k sizes,
        input strides and output strides; n for minus."""
        a, m = [int(x) for x in args], layout.MAX_BATCH
        if len(a) != 7 + 3 * m:
            raise ValueError(f"not the at::StridedArgs values of a launch: {tuple(args)!r:.200}")
        slots = [(a[7 + d], a[7 + m + d], a[7 + 2 * m + d]) for d in range(m)]
        k = max((d + 1 for d in range(m) if slots[d] != (1, 0, 0)), default=0)
        kept = a[:7] + [k] + [s[i] for i in range(3) for s in slots[:k]]
        return dataclasses.replace(self, fixed=".".join(f"n{-x}" if x < 0 else str(x) for x in kept))

    def fixed_to(self, shape) -> "KernelConfig":
        """This config compiled for the one (B,) M, N ``shape`` (dense configs only)."""
        return dataclasses.replace(self, fixed="x".join(map(str, as_bmn(shape))))

    def generic(self) -> "KernelConfig":
        """This config without a fixed shape (it takes any shape)."""
        return dataclasses.replace(self, fixed="") if self.fixed else self

    # -- derived geometry -------------------------------------------------
    @property
    def out_elem_bytes(self) -> int:
        """The output's element size: the cast's, else elem_bytes."""
        return CAST_SIZES[self.cast][1] if self.cast in CAST_SIZES else self.elem_bytes

    @property
    def vec_elems(self) -> int:
        """Elements per global access (K): vec_bytes of the wider of the
        input's and output's elements (a cast loads K * elem_bytes and
        stores K * out_elem_bytes)."""
        return self.vec_bytes // max(self.elem_bytes, self.out_elem_bytes)

    @property
    def epilogue_group(self) -> int:
        """Bytes of the output over which the epilogue's pattern repeats
        (EPILOGUE_GROUPS: 8 for conj32, 16 for conj64, 1 for none)."""
        return EPILOGUE_GROUPS.get(self.epilogue, 1)

    @property
    def family(self):
        """The family module (cuda_templates/FAMILY.py) that generates this config."""
        return families.of(self.variant)

    @property
    def smem_bytes(self) -> int:
        """Dynamic shared memory per block, as the template lays it out."""
        return self.family.smem_bytes(self)

    def blocks(self, shape) -> int:
        """Blocks (one per tile, or the family's own grid: its blocks()) for a
        (B,) M, N shape (a strided config's shape: autotrans.kernels.strided.strided_shape
        of its problem)."""
        b, m, n = as_bmn(shape)
        own = getattr(self.family, "blocks", None)
        if own is not None:
            return own(self, b, m, n)
        return b * (-(-m // self.tile_rows)) * (-(-n // (self.tile_cols * self.strip)))

    def launch_problems(self, shape) -> list[str]:
        """Why this config cannot launch on a (B,) M, N shape (empty when it can).

        Dimensions are 64-bit in the kernels, but a launch has at most
        MAX_BLOCKS blocks (one per tile; the grid's limit), and within it the
        kernels' per-block index math is 32-bit: block index, tiles per matrix
        (at most the blocks of one matrix) and tile coordinates."""
        b, m, n = as_bmn(shape)
        blocks = self.blocks((b, m, n))
        if blocks == 0 and b * m * n:
            return [f"{self.key}: a {m}x{n} matrix does not fit its blocks"]
        if blocks <= MAX_BLOCKS:
            return []
        return [f"{self.key}: shape {b}x{m}x{n} needs {blocks} blocks of {self.tile_rows}x{self.tile_cols} "
                f"tiles; a launch takes at most 2^31-1 ({MAX_BLOCKS}), and the kernels index blocks and a "
                "matrix's tiles in 32 bits: split the batch or use larger tiles"]

    def check_launch(self, shape) -> None:
        """ValueError naming the limit where launch_problems(shape) finds any."""
        p = self.launch_problems(shape)
        if p:
            raise ValueError("; ".join(p))

    def aligned_for(self, shape) -> bool:
        """Whether every input and output row of this shape is aligned as the
        config needs (only vec tiles need more than the element size)."""
        _, m, n = as_bmn(shape)
        return self.family.aligned_for(self, m, n)

    @property
    def pointer_align(self) -> int:
        """The alignment (bytes) the kernel needs of the input and output pointers."""
        return self.family.pointer_align(self)

    # -- validity ---------------------------------------------------------
    def problems(self) -> list[str]:
        """Reasons this config cannot be generated (empty when valid)."""
        if self.variant not in families.variants():
            return [f"variant must be one of {families.variants()}"]
        if self.elem_bytes not in ELEM_SIZES:
            return [f"elem_bytes must be one of {ELEM_SIZES}"]
        p = []
        if self.swizzle not in SWIZZLES:
            p.append(f"swizzle must be one of {SWIZZLES}")
        if self.order not in ORDERS:
            p.append(f"order must be one of {ORDERS}")
        if self.layout not in LAYOUTS:
            p.append(f"layout must be one of {LAYOUTS}")
        elif self.layout not in getattr(self.family, "LAYOUTS", ("dense",)):
            p.append(f"{self.variant} kernels take the layouts {getattr(self.family, 'LAYOUTS', ('dense',))}, "
                     f"not {self.layout!r}")
        if self.epilogue not in EPILOGUES:
            p.append(f"epilogue must be one of {EPILOGUES}")
        elif self.epilogue != "none" and self.layout != "strided":
            p.append(f"epilogue {self.epilogue!r} runs in strided kernels' store phase: layout must be 'strided'")
        elif self.epilogue not in getattr(self.family, "EPILOGUES", ("none",)):
            p.append(f"{self.variant} kernels take the epilogues {getattr(self.family, 'EPILOGUES', ('none',))}, "
                     f"not {self.epilogue!r}")
        p += self._cast_problems()
        p += self._fixed_problems()
        p += self._strip_problems() + self._seam_problems()
        odd = getattr(self.family, "odd_side", lambda c: None)(self)   # a family's side of any multiple
        if (not ((odd == "rows" or _pow2(self.tile_rows)) and (odd == "cols" or _pow2(self.tile_cols)))
                or max(self.tile_rows, self.tile_cols) > MAX_TILE):
            p.append(f"tile sides must be powers of two up to {MAX_TILE}"
                     + (f" ({odd}: a multiple its family takes)" if odd else ""))
        if not (32 <= self.threads <= 1024 and self.threads % 32 == 0):
            p.append("threads must be a multiple of 32 in [32, 1024]")
        if not 0 <= self.pad <= max(self.tile_rows, self.tile_cols):
            p.append("pad must be between 0 and the tile side")
        wide = getattr(self.family, "WIDE_VECS", ())   # wider vectors a family takes (rows: of casts)
        if self.vec_bytes not in ELEM_SIZES + wide or self.micro_rows < 1:
            p.append(f"vec_bytes must be one of {ELEM_SIZES}"
                     + (f" (or, {self.variant} casts, {wide})" if wide else "") + " and micro_rows >= 1")
        return p or self.family.problems(self) or self._fixed_launch_problems()

    def _fixed_launch_problems(self) -> list[str]:
        """Why this config cannot run its own fixed shape (empty when it can, or has none)."""
        shape = self.fixed_shape
        if shape is None:
            return []
        if not self.aligned_for(shape):
            return [f"its rows of the fixed shape {self.fixed} are not {self.vec_bytes}-byte aligned"]
        return self.launch_problems(shape)

    def _fixed_problems(self) -> list[str]:
        """Why the fixed shape does not fit this config (empty when it does)."""
        if not self.fixed:
            return []
        if self.layout == "strided":
            return self._fixed_args_problems()
        if not _FIXED.match(self.fixed) or max(self.fixed_shape) > MAX_FIXED_SIDE:
            return [f"fixed must be '' or a shape 'BxMxN' of sizes 1 to 2^62, not {self.fixed!r:.60}"]
        if self.layout != "dense":
            return ["a fixed shape is for dense kernels: layout must be 'dense'"]
        return []

    def _fixed_args_problems(self) -> list[str]:
        """Why a strided config's fixed launch values are not a launch's (empty when they are)."""
        bad = [f"a strided config's fixed must be a launch's at::StridedArgs values (B.M.N.ldi.ldo.sci.nb.k, "
               f"then k sizes, input and output strides; n for minus), not {self.fixed!r:.80}"]
        if not _FIXED_ARGS.match(self.fixed):
            return bad
        v = _launch_values(self.fixed)
        if len(v) < 8 or not 0 <= v[6] <= layout.MAX_BATCH or not 0 <= v[7] <= layout.MAX_BATCH:
            return bad
        k = v[7]
        if len(v) != 8 + 3 * k or min(v[:3]) < 1 or min(v[8:8 + k], default=1) < 1 \
                or max(map(abs, v)) > MAX_FIXED_SIDE or k and (v[7 + k], v[7 + 2 * k], v[7 + 3 * k]) == (1, 0, 0):
            return bad      # the last slot kept is a used one: one text per launch
        return []

    def _strip_problems(self) -> list[str]:
        """Why the strip does not fit this config (empty when it does)."""
        if self.strip == 1:
            return []
        if not _pow2(self.strip) or self.strip > MAX_STRIP:
            return [f"strip must be a power of two up to {MAX_STRIP}, not {self.strip}"]
        if not getattr(self.family, "STRIPS", False):
            return [f"{self.variant} kernels move one tile a block (strip 1)"]
        if self.layout != "strided":
            return ["strips of tiles are for strided kernels: layout must be 'strided'"]
        return []

    def _seam_problems(self) -> list[str]:
        """Why seams do not fit this config (empty when they do, or where it has none)."""
        if self.seam == 0:
            return []
        if self.seam != 1:
            return [f"seam must be 0 or 1, not {self.seam}"]
        if not getattr(self.family, "SEAMS", False):
            return [f"{self.variant} kernels write no seams"]
        if self.strip == 1:
            return ["seams are written by strips of tiles: strip must be 2 or more"]
        return []

    def _cast_problems(self) -> list[str]:
        """Why the cast does not fit this config (empty when it does)."""
        c = self.cast
        if c not in CASTS:
            return [f"cast must be 'none' or 'SRC>DST' of {tuple(layout.CAST_TYPES)} (kernels.config.CASTS), "
                    f"not {c!r:.40}"]
        if c == "none":
            return []
        if self.layout != "strided":
            return [f"cast {c!r} runs in strided kernels' store phase: layout must be 'strided'"]
        if not getattr(self.family, "TAKES_CASTS", False):
            return [f"{self.variant} kernels take no casts"]
        if self.epilogue != "none":
            return [f"a cast and an epilogue do not combine (epilogue {self.epilogue!r}, cast {c!r})"]
        if self.elem_bytes != CAST_SIZES[c][0]:
            return [f"cast {c} reads {CAST_SIZES[c][0]}-byte elements: elem_bytes must be {CAST_SIZES[c][0]}"]
        return []


def as_config(cfg) -> KernelConfig:
    """A KernelConfig as it is, or one from its key (KernelConfig.from_key);
    TypeError for anything else."""
    if isinstance(cfg, KernelConfig):
        return cfg
    if isinstance(cfg, str):
        return KernelConfig.from_key(cfg)
    raise TypeError(f"expected a KernelConfig or its key, not {type(cfg).__name__}")


# NumPy-style dtype names -> core.layout.CAST_TYPES tags (cast_for).
DTYPE_TAGS = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
              "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
              "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64"}


def cast_for(src: str, dst: str) -> str:
    """The cast (CASTS) that converts dtype ``src`` to dtype ``dst``, by
    NumPy-style names ("float32", "bfloat16", "int8", "uint16", ...): "none"
    where the bits do not change (the same dtype, or integers of one width),
    the integer casts by what they do (narrowing "i{a}>i{b}" whatever the
    signedness, widening after the input's signedness: "i8>i32" for int8 to
    int32 or uint32, "u8>u32" for uint8 to either). ValueError for other
    names and for casts between integers and floats (not built)."""
    tags = []
    for what, name in (("src", src), ("dst", dst)):
        if not isinstance(name, str) or name not in DTYPE_TAGS:
            raise ValueError(f"cast {what} must be one of {tuple(DTYPE_TAGS)}, not {name!r:.40}")
        tags.append(DTYPE_TAGS[name])
    a, b = tags
    sa, sb = layout.CAST_TYPES[a], layout.CAST_TYPES[b]
    if a == b:
        return "none"
    if (a[0] in "iu") != (b[0] in "iu"):
        raise ValueError(f"casts between integers and floats are not built: {src} to {dst}")
    if a[0] not in "iu":
        return f"{a}>{b}"
    if sa == sb:
        return "none"
    return f"i{8 * sa}>i{8 * sb}" if sb < sa else f"{a[0]}{8 * sa}>{a[0]}{8 * sb}"


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
