"""Strided launches: a TileProblem or RowsProblem (autotrans.core.layout) as a
strided kernel's one parameter, at::StridedArgs (templates.STRIDED_ARGS), and
which strided configs can run it.

A TileProblem's kernel walks B = prod(batch sizes) matrices of m x n elements
(strided_shape: (B, m, n), what KernelConfig.blocks and launch_problems take);
a RowsProblem's walks B = 1 "matrix" of prod(row sizes) rows of n elements.
"""
from __future__ import annotations

import math

from .. import families
from ..core.layout import MAX_BATCH, RowsProblem, TileProblem
from .config import KernelConfig
from .templates import STRIDED_ARGS

__all__ = ["strided_shape", "strided_args", "pack", "pointer_alignment", "strided_problems", "strided_space",
           "byte_extent"]

MAX_ALIGN = 256   # pointer_alignment's cap


def _dims(problem):
    if isinstance(problem, TileProblem):
        return problem.batch
    if isinstance(problem, RowsProblem):
        return problem.rows
    raise TypeError(f"a strided launch takes a TileProblem or RowsProblem, not {type(problem).__name__}")


def strided_shape(problem: TileProblem | RowsProblem) -> tuple[int, int, int]:
    """The (B, M, N) a strided kernel walks for this problem."""
    dims = _dims(problem)
    count = math.prod(d.size for d in dims)
    if isinstance(problem, TileProblem):
        return count, problem.m, problem.n
    return 1, count, problem.n


def strided_args(problem: TileProblem | RowsProblem, src_ptr: int, dst_ptr: int) -> tuple:
    """The values of at::StridedArgs for this problem, in STRIDED_ARGS' order:
    in, out, B, M, N, ldi, ldo, sci, nb, size[MAX_BATCH], src[...], dst[...]
    (unused dimensions: size 1, strides 0). A RowsProblem's ldi and ldo are 0
    and its sci the element size (unused)."""
    dims = _dims(problem)
    if len(dims) > MAX_BATCH:
        raise ValueError(f"a strided launch decomposes at most {MAX_BATCH} dimensions, not {len(dims)}")
    b, m, n = strided_shape(problem)
    if isinstance(problem, TileProblem):
        pitches = (problem.ldi, problem.ldo, problem.sci)
    else:
        pitches = (0, 0, problem.elem)
    pad = MAX_BATCH - len(dims)
    sizes = tuple(d.size for d in dims) + (1,) * pad
    srcs = tuple(d.src for d in dims) + (0,) * pad
    dsts = tuple(d.dst for d in dims) + (0,) * pad
    return (src_ptr, dst_ptr, b, m, n, *pitches, len(dims), *sizes, *srcs, *dsts)


def pack(problem: TileProblem | RowsProblem, src_ptr: int, dst_ptr: int) -> bytes:
    """The kernel's parameter block (STRIDED_ARGS.pack of strided_args)."""
    return STRIDED_ARGS.pack(*strided_args(problem, src_ptr, dst_ptr))


def pointer_alignment(*ptrs: int) -> int:
    """The largest power of two, up to MAX_ALIGN, dividing every pointer."""
    acc = MAX_ALIGN
    for p in ptrs:
        acc |= p
    return acc & -acc


def strided_problems(cfg: KernelConfig, problem: TileProblem | RowsProblem, align: int) -> list[str]:
    """Why cfg cannot run this problem with pointers aligned to ``align`` bytes
    (empty when it can): a strided config of a family that takes the problem
    (its strided_problems), and a grid within the launch limit."""
    if cfg.layout != "strided":
        return [f"{cfg.key} is a dense config: strided problems need layout 'strided'"]
    fam = cfg.family
    p = list(fam.strided_problems(cfg, problem, align))
    if not p:
        p = cfg.launch_problems(strided_shape(problem))
    return p


def strided_space(elem_bytes: int) -> list[KernelConfig]:
    """Every family's strided candidates for this element size (valid configs
    that pass the family's keep filter), in family order."""
    out = []
    for fam in families.modules():
        if "strided" not in getattr(fam, "LAYOUTS", ("dense",)):
            continue
        for kw in fam.strided_space(elem_bytes):
            try:
                c = KernelConfig(**kw)
            except ValueError:
                continue
            if getattr(fam, "keep", None) is None or fam.keep(c):
                out.append(c)
    return list(dict.fromkeys(out))


def byte_extent(problem: TileProblem | RowsProblem) -> tuple[tuple[int, int], tuple[int, int]]:
    """The bytes a launch may touch, relative to its pointers: ((input lo, hi),
    (output lo, hi)), hi exclusive; (0, 0) for an empty problem."""
    e = problem.elem
    if isinstance(problem, TileProblem):
        sides = [(problem.m, problem.ldi, e), (problem.n, problem.sci, problem.ldo)]
        sides += [(d.size, d.src, d.dst) for d in problem.batch]
    else:
        sides = [(problem.n, e, e)] + [(d.size, d.src, d.dst) for d in _dims(problem)]
    if any(size <= 0 for size, _, _ in sides):
        return (0, 0), (0, 0)
    out = []
    for k in (1, 2):
        lo = sum(min(0, (s[0] - 1) * s[k]) for s in sides)
        hi = sum(max(0, (s[0] - 1) * s[k]) for s in sides)
        out.append((lo, hi + e))
    return out[0], out[1]
