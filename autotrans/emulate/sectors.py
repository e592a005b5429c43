"""Global-memory sectors of a launch, from the kernel's own index math.

The addresses come from the emulator (the template code run on the host); this
module only compares. The L2 moves 32-byte sectors: a warp instruction costs
the sectors its threads' bytes fall in, however few of their bytes it uses.
Moving a matrix's bytes once costs bytes / 32 sectors each way; a tile read or
written at an odd alignment, rows read twice (overlapping tiles, a shift
tile's extra rows) or narrow accesses cost more. Taken per instruction, with
no L1 reuse between instructions: exact for what the SMs ask of the L2 where
loads bypass L1 (cp.async.cg: the shift tiles), an upper bound where 4- or
8-byte accesses of neighbouring instructions share sectors through L1, or
stores to one sector merge in the L2 (NOTES 33 checks it against ncu).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.layout import NdTileProblem, TileProblem
from ..core.problem import as_bmn
from ..kernels.config import KernelConfig, as_config
from ..kernels.strided import dense_problems, dense_tile
from .emulator import sector_counts, strided_sector_counts

SECTOR = 32


@dataclass(frozen=True)
class Sectors:
    """A launch's global-memory instructions and sectors, loads and stores apart."""
    nbytes: int            # the input's bytes (read once at best)
    load_insts: int
    load_sectors: int
    store_insts: int
    store_sectors: int
    load_bytes: int        # bytes the threads asked for
    store_bytes: int
    out_nbytes: int | None = None   # the output's bytes, where a cast makes them others (None: nbytes)

    @property
    def ideal(self) -> int:
        """Sectors of reading the input once."""
        return math.ceil(self.nbytes / SECTOR)

    @property
    def out_ideal(self) -> int:
        """Sectors of writing the output once."""
        return math.ceil((self.nbytes if self.out_nbytes is None else self.out_nbytes) / SECTOR)

    @property
    def read_ratio(self) -> float:
        """Load sectors over the ideal (1.0: every input byte read once, in whole sectors)."""
        return self.load_sectors / self.ideal

    @property
    def write_ratio(self) -> float:
        return self.store_sectors / self.out_ideal

    @property
    def ratio(self) -> float:
        """Sectors both ways over the ideal both ways."""
        return (self.load_sectors + self.store_sectors) / (self.ideal + self.out_ideal)

    def __str__(self) -> str:
        return (f"loads {self.load_insts} instructions, {self.load_sectors} sectors ({self.read_ratio:.3f} x ideal); "
                f"stores {self.store_insts} instructions, {self.store_sectors} sectors ({self.write_ratio:.3f} x ideal)")


def sectors(cfg: KernelConfig, shape, offset: int = 0) -> Sectors:
    """The sectors one launch of cfg on shape ((M, N) or (B, M, N)) touches;
    offset: bytes by which the pointers miss 256-byte alignment. A strided
    config runs the shape as transpose() runs it, kernels.strided.dense_tile
    (its pointers 256-byte aligned: offset 0 only). cfg: a KernelConfig or its key."""
    cfg = as_config(cfg)
    b, m, n = as_bmn(shape)
    if cfg.layout == "strided":
        why = dense_problems(cfg, (b, m, n), 256)
        if why or offset:
            raise ValueError(f"{cfg.key} cannot transpose {b}x{m}x{n}: {why[0]}" if why else
                             f"{cfg.key} is a strided config: its sectors are counted at offset 0 only")
        return strided_sectors(cfg, dense_tile((b, m, n), cfg.elem_bytes))
    return Sectors(b * m * n * cfg.elem_bytes, *sector_counts(cfg, (b, m, n), offset))


def strided_sectors(cfg: KernelConfig, problem) -> Sectors:
    """The sectors one strided launch of cfg moving ``problem`` (a
    TileProblem, RowsProblem or NdTileProblem) touches, its pointers 256-byte aligned.
    cfg: a KernelConfig or its key."""
    cfg = as_config(cfg)
    elems = _elements(problem)
    return Sectors(elems * problem.elem, *strided_sector_counts(cfg, problem),
                   out_nbytes=elems * (problem.out_elem or problem.elem))


def _elements(problem) -> int:
    """The elements a strided problem moves."""
    if isinstance(problem, NdTileProblem):
        return math.prod(d.size for d in problem.dims())
    if isinstance(problem, TileProblem):
        return problem.m * problem.n * math.prod(d.size for d in problem.batch)
    return problem.n * math.prod(d.size for d in problem.rows)


__all__ = ["SECTOR", "Sectors", "sectors", "strided_sectors"]
