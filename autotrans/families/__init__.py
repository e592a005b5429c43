"""The kernel families. Each lives in ``cuda_templates/``: ``FAMILY.py`` (its
parameters' rules, shared-memory size, alignment needs and search space) beside
its template ``FAMILY.cu``, so that adding a family touches that one folder.

A family module defines VARIANTS, TEMPLATE, problems(c), smem_bytes(c),
aligned_for(c, m, n), pointer_align(c), space(elem_bytes) (keyword arguments of
candidate dense configs) and optionally keep(c) (a filter on the built configs),
blocks(c, b, m, n) (a grid other than one block per tile), shape_space(elem_bytes, m, n)
(keyword arguments of candidates for that one shape, beside space()'s) and WIDE_VECS
(vec_bytes it takes beyond ELEM_SIZES; its problems(c) says when) and odd_side(c)
("rows" or "cols": the side of c that may be a multiple other than a power of two).
Families that run strided launches (KernelConfig.layout "strided": the
TileProblems, NdTileProblems and RowsProblems of autotrans.core.layout) also define LAYOUTS
(the layouts they take; without it, ("dense",)), strided_problems(c, problem,
align) (why c cannot run that problem, with pointers aligned to align bytes)
and strided_space(elem_bytes) (keyword arguments of strided candidates), and
optionally problem_space(problem, out_elem_bytes) (candidates for that one strided
problem beside strided_space's: rows' row-sized tiles, flat's runs).
"""
from __future__ import annotations

import functools
import importlib

from autotrans.core.paths import template_dir

__path__ = [str(template_dir())]   # the family modules sit beside their templates

NAMES = ("naive", "tile", "vec", "shift", "rows", "skinny", "ndtile", "whole", "flat")


@functools.lru_cache(maxsize=None)
def modules() -> tuple:
    """Every family module, in search-space order."""
    return tuple(importlib.import_module(f"{__name__}.{n}") for n in NAMES)


@functools.lru_cache(maxsize=None)
def _by_variant() -> dict:
    return {v: m for m in modules() for v in m.VARIANTS}


def of(variant: str):
    """The family module that generates ``variant``; KeyError if none does."""
    return _by_variant()[variant]


def variants() -> tuple:
    """Every variant name, in family order."""
    return tuple(_by_variant())
