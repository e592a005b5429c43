"""Render the CUDA kernel templates in ``cuda_templates/`` for a KernelConfig."""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import jinja2

from .config import KernelConfig

# Bump when the rendering code (not the templates) changes what is generated.
GENERATOR_VERSION = 1

_FILES = {"naive": "naive.cu", "remapped": "naive.cu", "tile": "tile.cu", "vec": "vec.cu", "shift": "shift.cu"}


@functools.lru_cache(maxsize=None)
def template_dir() -> Path:
    """The folder holding the .cu templates: the checkout's, or the installed copy."""
    here = Path(__file__).resolve().parent
    for d in (here.parent / "cuda_templates", here / "cuda_templates"):
        if (d / "common.cuh").is_file():
            return d
    raise FileNotFoundError("autotrans: cuda_templates/ not found beside the package")


@functools.lru_cache(maxsize=None)
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(template_dir())),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                              autoescape=False)


def template_file(cfg: KernelConfig) -> Path:
    return template_dir() / _FILES[cfg.variant]


def render(cfg: KernelConfig) -> str:
    """One kernel's source, preceded by a #line pointing into its template."""
    path = template_file(cfg)
    body = _env().get_template(path.name).render(name=cfg.name, c=cfg)
    return f'#line 1 "{path}"\n{body}'


def render_unit(cfgs) -> str:
    """A translation unit holding several kernels (compile with -I template_dir())."""
    return '#include "common.cuh"\n' + "\n".join(render(c) for c in cfgs)


@functools.lru_cache(maxsize=None)
def templates_hash(directory: Path | None = None) -> str:
    """Hash of every template file and the generator version: cache entries and
    compiled kernels made from other templates are never reused."""
    h = hashlib.sha256(f"generator={GENERATOR_VERSION}\n".encode())
    for p in sorted(Path(directory or template_dir()).iterdir()):
        if p.suffix in (".cu", ".cuh"):
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]
