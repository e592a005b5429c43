"""Render the CUDA kernel templates in ``cuda_templates/`` for a KernelConfig."""
from __future__ import annotations

import functools
import hashlib
import struct
from pathlib import Path

import jinja2

from ..core.paths import template_dir
from .config import KernelConfig

# Bump when the rendering code (not the templates) changes what is generated.
GENERATOR_VERSION = 1
SOURCES = (".cu", ".cuh")   # what the templates hash covers (the space's rules: tuning.space.SPACE_VERSION)
ARGS = struct.Struct("PPiii")   # every transpose kernel's parameters (AT_KERNEL_ENTRY)


@functools.lru_cache(maxsize=None)
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(template_dir())),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                              autoescape=False)


def template_file(cfg: KernelConfig) -> Path:
    return template_dir() / cfg.family.TEMPLATE


def render(cfg: KernelConfig) -> str:
    """One kernel's source, preceded by a #line pointing into its template."""
    path = template_file(cfg)
    body = _env().get_template(path.name).render(name=cfg.name, c=cfg)
    return f'#line 1 "{_c_string(str(path))}"\n{body}'


def _c_string(text: str) -> str:
    """text as the inside of a C string literal (paths with quotes or backslashes)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def render_unit(cfgs) -> str:
    """A translation unit holding several kernels (compile with -I template_dir())."""
    return '#include "common.cuh"\n' + "\n".join(render(c) for c in cfgs)


@functools.lru_cache(maxsize=None)
def templates_hash(directory: Path | None = None) -> str:
    """Hash of every template file and the generator version: cache entries and
    compiled kernels made from other templates are never reused."""
    h = hashlib.sha256(f"generator={GENERATOR_VERSION}\n".encode())
    for p in sorted(Path(directory or template_dir()).iterdir()):
        if p.suffix in SOURCES:
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]
