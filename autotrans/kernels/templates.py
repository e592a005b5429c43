"""Render the CUDA kernel templates in ``cuda_templates/`` for a KernelConfig."""
from __future__ import annotations

import functools
import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path

import jinja2

from ..core.layout import MAX_BATCH
from ..core.paths import template_dir
from .config import KernelConfig

# Bump when the rendering code (not the templates) changes what is generated.
GENERATOR_VERSION = 3
SOURCES = (".cu", ".cuh")   # what the templates hash covers (the space's rules: tuning.space.SPACE_VERSION)
NOT_KERNELS = ("verify.cu", "roofline.cu", "emulate.cu")   # programs beside the templates
ARGS = struct.Struct("PPqqq")   # every transpose kernel's one parameter, at::Args {in, out, B, M, N}
ARG_FIELDS = ("in", "out", "B", "M", "N")
# A strided kernel's one parameter, at::StridedArgs {in, out, B, M, N, ldi, ldo, sci,
# nb, size[MAX_BATCH], src[MAX_BATCH], dst[MAX_BATCH]} (native layout; 240 bytes
# on 64-bit hosts); autotrans.kernels.strided.strided_args gives its values.
STRIDED_ARGS = struct.Struct("PPqqqqqqi" + "q" * (3 * MAX_BATCH))
STRIDED_ARG_FIELDS = ("in", "out", "B", "M", "N", "ldi", "ldo", "sci", "nb", "size", "src", "dst")


def field_offsets(fmt: str) -> tuple[int, ...]:
    """Byte offset of each field of a native-layout struct format of one-letter
    codes (C's alignment rules: each field aligned to its own size)."""
    if not fmt.isalpha():
        raise ValueError(f"field_offsets takes one-letter native codes, not {fmt!r}")
    return tuple(struct.calcsize(fmt[:i] + "0" + fmt[i]) for i in range(len(fmt)))


def strided_offsets() -> tuple[int, ...]:
    """Byte offset of each of STRIDED_ARG_FIELDS in STRIDED_ARGS (an array: its first element)."""
    offs = field_offsets(STRIDED_ARGS.format)
    return offs[:9] + (offs[9], offs[9 + MAX_BATCH], offs[9 + 2 * MAX_BATCH])


@dataclass(frozen=True)
class GridSample:
    """A shape and the blocks Python launches for it (checked by AT_AGREE_GRID)."""
    b: int
    m: int
    n: int
    blocks: int


@dataclass(frozen=True)
class PythonView:
    """What Python believes of a kernel; every template static_asserts it
    (AT_AGREE, AT_AGREE_GRID, and AT_AGREE_ARGS or, strided, AT_AGREE_STRIDED_ARGS
    in kernel.cuh). layout picks the kernel entry and the argument check."""
    smem: int
    threads: int
    tile_rows: int
    tile_cols: int
    grid: tuple[GridSample, ...]
    args_size: int
    args_offsets: tuple[int, ...]
    layout: str = "dense"
    max_batch: int = MAX_BATCH
    fixed: tuple = ()       # the (B, M, N) of a config with a fixed shape; a strided one's fixed_args

    @property
    def entry(self) -> str:
        """The kernel entry macro (kernel.cuh) of this layout (and fixed shape or launch)."""
        if self.layout == "strided":
            return "AT_STRIDED_FIXED_ENTRY" if self.fixed else "AT_STRIDED_ENTRY"
        return "AT_FIXED_ENTRY" if self.fixed else "AT_KERNEL_ENTRY"

    @property
    def fixed_args(self) -> str:
        """What follows (name, threads) in the entry: the fixed shape's sizes, or
        a strided launch's at::StridedArgs values after the pointers (its
        initializer's: B, M, N, ldi, ldo, sci, nb, {sizes}, {src}, {dst})."""
        if self.layout != "strided" or not self.fixed:
            return "".join(f", {x}LL" for x in self.fixed)
        v, m = self.fixed, self.max_batch
        dims = ["{" + ", ".join(f"{x}LL" for x in v[7 + i * m:7 + (i + 1) * m]) + "}" for i in range(3)]
        return "".join(f", {x}LL" for x in v[:6]) + f", {v[6]}, " + ", ".join(dims)

    @property
    def args_check(self) -> str:
        """The argument check, as the template's line renders it."""
        if self.layout == "strided":
            vals = (self.max_batch, self.args_size, *self.args_offsets)
            return "AT_AGREE_STRIDED_ARGS(" + ", ".join(map(str, vals)) + ")"
        return "AT_AGREE_ARGS(" + ", ".join(map(str, (self.args_size, *self.args_offsets))) + ")"


def grid_shapes(cfg: KernelConfig) -> tuple[tuple[int, int, int], ...]:
    """Sample shapes whose block counts are checked at compile time: 1x1, ragged,
    batched, exact tiles, and one past 2^31 a side (64-bit dimensions)."""
    tr, tc = cfg.tile_rows, cfg.tile_cols
    return ((1, 1, 1), (1, 2 * tr + 1, 3 * tc - 1), (3, tr + 1, tc), (2, 4 * tr, 2 * tc),
            (2, 2**31 + 5, 3 * 2**31 - 1))


def python_view(cfg: KernelConfig) -> PythonView:
    """Python's view of cfg's kernel (strided: blocks of the (B, M, N) that
    strided.strided_shape gives, its argument struct STRIDED_ARGS; a fixed
    shape's sizes, which its entry takes)."""
    grid = tuple(GridSample(*s, cfg.blocks(s)) for s in grid_shapes(cfg))
    if cfg.layout == "strided":
        return PythonView(cfg.smem_bytes, cfg.threads, cfg.tile_rows, cfg.tile_cols, grid,
                          STRIDED_ARGS.size, strided_offsets(), "strided", fixed=cfg.fixed_args or ())
    return PythonView(cfg.smem_bytes, cfg.threads, cfg.tile_rows, cfg.tile_cols, grid,
                      ARGS.size, field_offsets(ARGS.format), fixed=cfg.fixed_shape or ())


@functools.lru_cache(maxsize=None)
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(template_dir())),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                              autoescape=False)


def template_file(cfg: KernelConfig) -> Path:
    return template_dir() / cfg.family.TEMPLATE


def render(cfg: KernelConfig, view: PythonView | None = None) -> str:
    """One kernel's source, preceded by a #line pointing into its template.
    view: what the kernel's static_asserts check (python_view(cfg) unless given);
    its layout and fixed shape (cfg's) pick the kernel entry and its arguments."""
    path = template_file(cfg)
    body = _env().get_template(path.name).render(name=cfg.name, c=cfg, py=view or python_view(cfg))
    return f'#line 1 "{_c_string(str(path))}"\n{body}'


def _c_string(text: str) -> str:
    """text as the inside of a C string literal (paths with quotes or backslashes)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def render_unit(cfgs) -> str:
    """A translation unit holding several kernels (compile with -I template_dir())."""
    return '#include "common.cuh"\n' + "\n".join(render(c) for c in cfgs)


@functools.lru_cache(maxsize=None)
def templates_hash(directory: Path | None = None) -> str:
    """Hash of every file transpose kernels are made from (the shared headers and
    the families' templates; not the checker, benchmark or emulator programs)
    and the generator version: cache entries and compiled kernels made from
    other templates are never reused."""
    h = hashlib.sha256(f"generator={GENERATOR_VERSION}\n".encode())
    for p in sorted(Path(directory or template_dir()).iterdir()):
        if p.suffix in SOURCES and p.name not in NOT_KERNELS:
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]
