"""Strided launches: a TileProblem or RowsProblem (autotrans.core.layout) as a
strided kernel's one parameter, at::StridedArgs (templates.STRIDED_ARGS), and
which strided configs can run it.

A TileProblem's kernel walks B = prod(batch sizes) matrices of m x n elements
(strided_shape: (B, m, n), what KernelConfig.blocks and launch_problems take);
a RowsProblem's walks B = 1 "matrix" of prod(row sizes) rows of n elements.

Epilogues (KernelConfig.epilogue, e.g. a fused conjugate) and casts
(KernelConfig.cast, permute(x, axes, dtype=)) run only on strided kernels;
as_tile and as_rows describe a dense transpose and a copy as strided problems,
so that those run with an epilogue or a cast too (as_strided: any canonical
problem). A cast's problems carry the output's element size (out_elem: the
canonical(..., out_itemsize=) of core.layout), its configs the cast:
strided_candidates(problem, align, cast=config.cast_for("float32", "bfloat16")).

An NdTileProblem (fused tiles, core.layout.fuse_tile) walks B = prod(batch
sizes) matrices of M x N fused rows and columns; its StridedArgs encoding is
nd_args'. A cast's carries out_elem as the others do (the ndtile family casts).
"""
from __future__ import annotations

import math

from .. import families
from ..core.layout import MAX_BATCH, CopyProblem, Dim, NdTileProblem, RowsProblem, TileProblem, TransposeProblem
from ..core.problem import ELEM_SIZES
from .config import CAST_SIZES, CASTS, EPILOGUE_GROUPS, EPILOGUES, KernelConfig
from .templates import STRIDED_ARGS

__all__ = ["problem_space", "strided_shape", "launch_shape", "launch_problem", "launch_args", "strided_args", "nd_args", "pack", "pointer_alignment",
           "strided_problems",
           "strided_space", "strided_candidates", "epilogue_problems", "as_tile", "as_rows", "as_strided",
           "dense_tile", "dense_problems",
           "byte_extent"]

MAX_ALIGN = 256   # pointer_alignment's cap
COPY_ROW = 1024   # as_rows: bytes of a row at most (the rows family's widest tile row)


def _dims(problem):
    if isinstance(problem, (TileProblem, NdTileProblem)):
        return problem.batch
    if isinstance(problem, RowsProblem):
        return problem.rows
    raise TypeError(f"a strided launch takes a TileProblem, NdTileProblem or RowsProblem, "
                    f"not {type(problem).__name__}")


def strided_shape(problem: TileProblem | RowsProblem) -> tuple[int, int, int]:
    """The (B, M, N) a strided kernel walks for this problem: an NdTileProblem's
    B matrices as one of B * M rows (ndtile.cu), a RowsProblem's rows as one
    matrix too."""
    dims = _dims(problem)
    count = math.prod(d.size for d in dims)
    if isinstance(problem, TileProblem):
        return count, problem.m, problem.n
    if isinstance(problem, NdTileProblem):
        return 1, count * problem.m, problem.n
    return 1, count, problem.n


def launch_shape(cfg: KernelConfig, problem: TileProblem | RowsProblem) -> tuple[int, int, int]:
    """The (B, M, N) whose blocks (KernelConfig.blocks) config cfg launches for
    this problem: strided_shape's, but ndshift's tiles, which do not span
    matrices, walk an NdTileProblem's B matrices of M x N apart, and the flat
    family walks a RowsProblem's runs (1, runs, elements a run: flat.py's runs)."""
    if cfg.variant == "ndshift" and isinstance(problem, NdTileProblem):
        return math.prod(d.size for d in problem.batch), problem.m, problem.n
    if hasattr(cfg.family, "runs"):
        runs = cfg.family.runs(problem)
        if runs is not None:
            return (1, *runs)
    return strided_shape(problem)


def launch_problem(cfg: KernelConfig, problem):
    """The problem as cfg's kernel walks it: the flat family's rows with its runs'
    dimension innermost (flat.py's as_runs; the same rows in another order),
    any other as it is."""
    if hasattr(cfg.family, "as_runs"):
        return cfg.family.as_runs(problem) or problem
    return problem


def launch_args(cfg: KernelConfig, problem) -> tuple[tuple[int, int, int], tuple]:
    """(launch_shape, the StridedArgs values after the pointers) of a launch of
    cfg on this problem (pointers set at launch: strided_args' [2:])."""
    return launch_shape(cfg, problem), strided_args(launch_problem(cfg, problem), 0, 0)[2:]


def strided_args(problem: TileProblem | RowsProblem, src_ptr: int, dst_ptr: int) -> tuple:
    """The values of at::StridedArgs for this problem, in STRIDED_ARGS' order:
    in, out, B, M, N, ldi, ldo, sci, nb, size[MAX_BATCH], src[...], dst[...]
    (unused dimensions: size 1, strides 0). A RowsProblem's ldi and ldo are 0
    and its sci the element size (unused). An NdTileProblem's: nd_args'."""
    if isinstance(problem, NdTileProblem):
        return nd_args(problem, src_ptr, dst_ptr)
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
    (its strided_problems), an epilogue that fits it (epilogue_problems), and
    a grid within the launch limit; a config compiled for one launch
    (KernelConfig.fixed_args) runs only the problem of that launch."""
    if cfg.layout != "strided":
        return [f"{cfg.key} is a dense config: strided problems need layout 'strided'"]
    fam = cfg.family
    p = list(fam.strided_problems(cfg, problem, align)) or epilogue_problems(cfg.epilogue, problem)
    if not p and cfg.fixed and cfg.fixed_args != launch_args(cfg, problem)[1]:
        p.append(f"it is compiled for another launch ({cfg.fixed[:80]})")
    if not p:
        p = cfg.launch_problems(launch_shape(cfg, problem))
    return p


def epilogue_problems(epilogue: str, problem: TileProblem | RowsProblem) -> list[str]:
    """Why an epilogue does not fit this problem (empty when it does).

    An epilogue acts on G-byte groups of the output counted from the output
    pointer (KernelConfig.epilogue_group; conj32: 8, a complex64; conj64: 16,
    a complex128), so the problem's output must be made of whole groups from
    there: every output stride (a TileProblem's ldo and batch strides, a
    RowsProblem's row strides) a multiple of G, and what lands contiguously
    whole groups: a TileProblem's elements (tiles move elements between
    output rows, so a smaller one would split a group over two rows), a
    RowsProblem's rows (its elements may be smaller: canonical() moves rows
    in words as wide as the alignment allows). The output pointer itself needs
    no alignment beyond the config's: the kernels count groups from it."""
    if epilogue not in EPILOGUES:
        raise ValueError(f"epilogue must be one of {EPILOGUES}, not {epilogue!r:.40}")
    dims = _dims(problem)
    if epilogue == "none":
        return []
    g = EPILOGUE_GROUPS[epilogue]
    p = []
    if isinstance(problem, NdTileProblem):    # as a TileProblem: elements move between output rows
        if problem.elem % g:
            p.append(f"epilogue {epilogue} acts on {g}-byte groups: a tile problem's {problem.elem}-byte elements "
                     f"would split them over output rows (elements must be multiples of {g} B)")
        outs = tuple(s for _, s in problem.n_side) + tuple(d.dst for d in dims)
    elif isinstance(problem, TileProblem):
        if problem.elem % g:
            p.append(f"epilogue {epilogue} acts on {g}-byte groups: a tile problem's {problem.elem}-byte elements "
                     f"would split them over output rows (elements must be multiples of {g} B)")
        outs = (problem.ldo,) + tuple(d.dst for d in dims)
    else:
        if (problem.n * problem.elem) % g:
            p.append(f"epilogue {epilogue} acts on {g}-byte groups: rows of {problem.n * problem.elem} B are not "
                     "whole groups")
        outs = tuple(d.dst for d in dims)
    if any(s % g for s in outs):
        p.append(f"epilogue {epilogue} acts on {g}-byte groups counted from the output pointer: output strides "
                 f"must be multiples of {g} B, not {[s for s in outs if s % g][:3]}")
    return p


def _check_cast(elem_bytes: int, epilogue: str, cast: str) -> None:
    if cast not in CASTS:
        raise ValueError(f"cast must be 'none' or one of kernels.config.CASTS, not {cast!r:.40}")
    if cast != "none" and CAST_SIZES[cast][0] != elem_bytes:
        raise ValueError(f"cast {cast} reads {CAST_SIZES[cast][0]}-byte elements, not {elem_bytes}-byte ones")
    if cast != "none" and epilogue != "none":
        raise ValueError(f"a cast and an epilogue do not combine (epilogue {epilogue!r}, cast {cast!r})")


def strided_space(elem_bytes: int, epilogue: str = "none", cast: str = "none") -> list[KernelConfig]:
    """Every family's strided candidates for this element size, epilogue and
    cast (valid configs that pass the family's keep filter), in family order:
    with an epilogue, those of the families that list it in their EPILOGUES
    (tile and vec only for elements of whole groups); with a cast (CASTS:
    elem_bytes its input's; no epilogue), those of the families that take
    casts (TAKES_CASTS: tile, vec, shift, rows, ndtile), from their strided_space(elem_bytes,
    out_elem_bytes). ValueError for an unknown epilogue or cast, or a cast of
    other elements."""
    if epilogue not in EPILOGUES:
        raise ValueError(f"epilogue must be one of {EPILOGUES}, not {epilogue!r:.40}")
    _check_cast(elem_bytes, epilogue, cast)
    out = []
    for fam in families.modules():
        if "strided" not in getattr(fam, "LAYOUTS", ("dense",)):
            continue
        if epilogue not in getattr(fam, "EPILOGUES", ("none",)):
            continue
        if cast != "none" and not getattr(fam, "TAKES_CASTS", False):
            continue
        kws = fam.strided_space(elem_bytes) if cast == "none" else fam.strided_space(elem_bytes, CAST_SIZES[cast][1])
        for kw in kws:
            try:
                c = KernelConfig(**kw, epilogue=epilogue, cast=cast)
            except ValueError:
                continue
            if getattr(fam, "keep", None) is None or fam.keep(c):
                out.append(c)
    return list(dict.fromkeys(out))


def problem_space(problem, epilogue: str = "none", cast: str = "none") -> list[KernelConfig]:
    """Candidates for this one strided problem beside strided_space's: each
    family's problem_space(problem, out_elem_bytes) (rows: row-sized tiles for
    rows of sub-word accesses), valid configs of this epilogue and cast only."""
    _check_cast(problem.elem, epilogue, cast)
    eo = CAST_SIZES[cast][1] if cast != "none" else None
    out = []
    for fam in families.modules():
        takes = epilogue in getattr(fam, "EPILOGUES", ("none",))
        if not takes or (cast != "none" and not getattr(fam, "TAKES_CASTS", False)):
            continue
        for kw in getattr(fam, "problem_space", lambda p, eo: ())(problem, eo):
            try:
                out.append(KernelConfig(**kw, epilogue=epilogue, cast=cast))
            except ValueError:
                continue
    return list(dict.fromkeys(out))


def strided_candidates(problem: TileProblem | RowsProblem, align: int, epilogue: str = "none",
                       cast: str = "none") -> list[KernelConfig]:
    """The configs of strided_space(problem.elem, epilogue, cast) that can run
    this problem with pointers aligned to ``align`` bytes (strided_problems
    empty), in strided_space's order; device limits (threads, shared memory)
    are the caller's to apply. A problem that changes the element size
    (out_elem != elem) has candidates only with a cast of those sizes."""
    _dims(problem)
    return [c for c in strided_space(problem.elem, epilogue, cast) if not strided_problems(c, problem, align)]


def as_tile(problem: TransposeProblem) -> TileProblem:
    """A dense batched transpose as the TileProblem it is: input (B, M, N)
    row-major to output (B, N, M); m = M (the output's last axis), n = N (the
    input's fastest), ldi = N * elem, ldo = M * out_elem, sci = elem, and one
    batch dimension (src = M * N * elem, dst = M * N * out_elem) where B > 1;
    out_elem: the problem's (its cast's output elements, else elem)."""
    if not isinstance(problem, TransposeProblem):
        raise TypeError(f"as_tile takes a TransposeProblem, not {type(problem).__name__}")
    e, eo, (b, m, n) = problem.elem, problem.out_elem, problem.bmn
    batch = (Dim(b, m * n * e, m * n * eo),) if b > 1 else ()
    return TileProblem(e, m, n, n * e, m * eo, e, batch, eo)


def dense_tile(bmn, elem_bytes: int) -> TileProblem:
    """A dense (B, M, N) transpose of ``elem_bytes`` elements as the
    TileProblem a strided config runs it as (as_tile: same bytes, same
    output); strided_shape of it is (B, M, N)."""
    return as_tile(TransposeProblem(elem_bytes, tuple(bmn)))


def dense_problems(cfg: KernelConfig, bmn, align: int) -> list[str]:
    """Why a strided config cannot run the dense transpose (B, M, N) of its
    element size with pointers aligned to ``align`` bytes (empty when it
    can): a plain move (no epilogue, no cast) of dense_tile(bmn) that
    strided_problems allows. A dense shape's tuning record may hold such a
    config (a strip of shift tiles for odd rows); transpose() then launches
    it with dense_tile's arguments."""
    if cfg.layout != "strided":
        return [f"{cfg.key} is a dense config"]
    if cfg.epilogue != "none" or cfg.cast != "none":
        return [f"{cfg.key} has an epilogue or a cast: a transpose moves elements as they are"]
    return strided_problems(cfg, dense_tile(bmn, cfg.elem_bytes), align)


def as_rows(problem: CopyProblem, align: int = 16) -> RowsProblem:
    """An identity copy of nbytes as a RowsProblem: rows of the largest power
    of two up to COPY_ROW bytes dividing nbytes, one row dimension (none for
    a single row), in elements of the largest size of ELEM_SIZES dividing both
    nbytes and ``align`` (the pointers' alignment), so that rows kernels of
    the widest accesses the pointers allow can run it.

    A cast's copy (out_elem != elem, or elem > 1: canonical(...,
    out_itemsize=)) keeps its elements (``align`` plays no part): rows of the
    largest power of two of them dividing their count whose wider side is at
    most COPY_ROW bytes, row strides of the row's input and output bytes."""
    if not isinstance(problem, CopyProblem):
        raise TypeError(f"as_rows takes a CopyProblem, not {type(problem).__name__}")
    nbytes = problem.nbytes
    if nbytes <= 0:
        raise ValueError(f"as_rows: a copy of {nbytes} bytes moves nothing")
    e, eo = problem.elem, problem.out_elem
    if (e, eo) != (1, 1):
        count = nbytes // e
        row = min(count & -count, COPY_ROW // max(e, eo))
        return RowsProblem(e, row, (Dim(count // row, row * e, row * eo),) if count > row else (), eo)
    low = nbytes & -nbytes
    e = max(s for s in ELEM_SIZES if low % s == 0 and align % s == 0)
    row = min(low, COPY_ROW)
    count = nbytes // row
    return RowsProblem(e, row // e, (Dim(count, row, row),) if count > 1 else ())


def as_strided(problem, align: int = 16) -> TileProblem | RowsProblem:
    """Any canonical problem as a strided kernel's: a TransposeProblem through
    as_tile, a CopyProblem through as_rows (with ``align``: the pointers'
    alignment), a TileProblem or RowsProblem as it is. What a permute() that
    casts (or conjugates) launches, whatever canonical() found."""
    if isinstance(problem, TransposeProblem):
        return as_tile(problem)
    if isinstance(problem, CopyProblem):
        return as_rows(problem, align)
    _dims(problem)
    return problem


def byte_extent(problem: TileProblem | RowsProblem) -> tuple[tuple[int, int], tuple[int, int]]:
    """The bytes a launch may touch, relative to its pointers: ((input lo, hi),
    (output lo, hi)), hi exclusive; (0, 0) for an empty problem."""
    e, eo = problem.elem, problem.out_elem
    if isinstance(problem, NdTileProblem):
        sides = [(d.size, d.src, d.dst) for d in problem.dims()]
    elif isinstance(problem, TileProblem):
        sides = [(problem.m, problem.ldi, eo), (problem.n, problem.sci, problem.ldo)]
        sides += [(d.size, d.src, d.dst) for d in problem.batch]
    else:
        sides = [(problem.n, e, eo)] + [(d.size, d.src, d.dst) for d in _dims(problem)]
    if any(size <= 0 for size, _, _ in sides):
        return (0, 0), (0, 0)
    out = []
    for k, last in ((1, e), (2, eo)):
        lo = sum(min(0, (s[0] - 1) * s[k]) for s in sides)
        hi = sum(max(0, (s[0] - 1) * s[k]) for s in sides)
        out.append((lo, hi + last))
    return out[0], out[1]


# -- fused tiles (NdTileProblem, the ndtile family) ------------------------------------

ND_COUNTS = MAX_BATCH - 1   # the slot whose size holds an NdTileProblem's side counts (nd_args)


def nd_args(problem: NdTileProblem, src_ptr: int, dst_ptr: int) -> tuple:
    """at::StridedArgs of an NdTileProblem (what cuda_templates/ndtile.cu reads):

    B, M, N: prod(batch sizes), the fused rows (prod of the m side's sizes)
    and columns (the n side's), though the kernel walks B * M rows
    (strided_shape); ldi: the input stride of the m side's
    outermost dim, ldo: the output stride of the n side's outermost dim, sci
    the input column pitch; nb: the batch dims, in slots [0, nb) as every
    strided kernel has them (size, src, dst; outermost first); then the m
    side's other dims, innermost first, as (size, src, 0) in slots [nb, nb +
    km - 1), then the n side's others, innermost first, as (size, 0, dst) in
    [nb + km - 1, nb + km + kn - 2). Slot ND_COUNTS (the last) holds size =
    (km - 1) | (kn - 1) << 8, strides 0: so nb + km + kn <= MAX_BATCH + 1
    (MAX_RANK). Unused slots: size 1, strides 0. With one dim a side, the
    values are a TileProblem's (ldi, ldo, sci, batch)."""
    if not isinstance(problem, NdTileProblem):
        raise TypeError(f"nd_args takes an NdTileProblem, not {type(problem).__name__}")
    km, kn = len(problem.m_side), len(problem.n_side)
    slots = [(d.size, d.src, d.dst) for d in problem.batch]
    slots += [(s, src, 0) for s, src in problem.m_side[:-1]] + [(s, 0, dst) for s, dst in problem.n_side[:-1]]
    if not (km and kn) or len(slots) > ND_COUNTS:
        raise ValueError(f"an NdTileProblem launch takes 1 to {ND_COUNTS + 1} dims a side and at most "
                         f"{ND_COUNTS + 2} in all, not {km} + {kn} + {len(problem.batch)} batch")
    slots += [(1, 0, 0)] * (ND_COUNTS - len(slots)) + [((km - 1) | (kn - 1) << 8, 0, 0)]
    b, m, n = math.prod(d.size for d in problem.batch), problem.m, problem.n
    return (src_ptr, dst_ptr, b, m, n, problem.m_side[-1][1], problem.n_side[-1][1], problem.sci,
            len(problem.batch), *(t[0] for t in slots), *(t[1] for t in slots), *(t[2] for t in slots))
