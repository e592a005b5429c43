"""Shared-memory bank conflicts of a config, from the kernel's own index math.

The addresses come from the emulator (the template code run on the host); this
module only counts. Shared memory has 32 banks of 4 bytes. A warp's access is
served in groups of threads that together request at most 128 bytes (all 32
threads for 1/2/4-byte accesses, 16 for 8-byte, 8 for 16-byte); within a group,
n different 4-byte words in one bank cost n wavefronts (an n-way conflict),
while threads reading the same word share it.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..core.layout import Dim, NdTileProblem, TileProblem
from ..kernels.config import KernelConfig, as_config
from ..kernels.strided import strided_problems
from .emulator import strided_trace, trace

BANKS = 32
PHASES = ("load", "mid", "store", "tables")   # the emulator's phase numbers (ndshift's tables: 3)


@dataclass(frozen=True)
class BankAccess:
    """One shared-memory access instruction of an interior tile."""
    phase: str    # "load" (global -> shared), "mid" (shared -> shared), "store" (shared -> global),
                  # or "tables" (ndshift's rows' and columns' offsets, before the load)
    seq: int      # the thread's n-th shared-memory access in that phase
    op: str       # "st.shared" or "ld.shared"
    bytes: int    # access width per thread
    ways: int     # worst n-way bank conflict over the block's warps

    def __str__(self) -> str:
        return f"{self.phase:5} #{self.seq:<3} {self.op} {self.bytes:2}B  {self.ways}-way"


def group_ways(accesses) -> int:
    """n-way conflict of one thread group's (offset, bytes) accesses."""
    words = defaultdict(set)
    for off, nbytes in accesses:
        for w in range(off // 4, (off + nbytes - 1) // 4 + 1):
            words[w % BANKS].add(w)
    return max((len(s) for s in words.values()), default=0)


def warp_ways(accesses) -> int:
    """n-way conflict of one warp instruction: accesses in thread order."""
    nbytes = accesses[0][1]
    per = BANKS if nbytes <= 4 else 128 // nbytes
    return max(group_ways(accesses[i:i + per]) for i in range(0, len(accesses), per))


def bank_report(cfg: KernelConfig, accesses=None) -> list[BankAccess]:
    """Every shared-memory access of an interior tile with its n-way conflict.

    A thread's n-th access in a phase is taken to be one instruction across its
    warp; where some threads skip an access (the shift tile's extra raw vector of
    a row that happens to be aligned), later ones can be grouped wrongly and show
    a conflict that is not there. A strided config's block is traced on
    bank_problem(cfg), the tiles of a strip together. cfg: a KernelConfig or
    its key. accesses: block_trace(cfg) where the caller has it."""
    cfg = as_config(cfg)
    groups = defaultdict(list)
    for phase, tid, seq, off, nbytes, store in (block_trace(cfg) if accesses is None else accesses):
        groups[(phase, seq, store, nbytes, tid // 32)].append((tid, off, nbytes))
    worst = {}
    for (phase, seq, store, nbytes, _warp), acc in groups.items():
        ways = warp_ways([(o, b) for _, o, b in sorted(acc)])
        k = (phase if cfg.strip == 1 else phase % 3, seq, store, nbytes)   # a strip's tile k: 3k, 3k + 1, 3k + 2
        worst[k] = max(worst.get(k, 0), ways)
    return [BankAccess(PHASES[p], s, "st.shared" if st else "ld.shared", b, w)
            for (p, s, st, b), w in sorted(worst.items())]


def block_trace(cfg: KernelConfig) -> list[tuple[int, int, int, int, int, int]]:
    """The shared-memory accesses of the block bank_report counts: (phase,
    thread, seq, offset, bytes, store) of an interior tile (emulator.trace),
    a strided config's of one block of bank_problem (emulator.strided_trace)."""
    cfg = as_config(cfg)
    if cfg.layout == "strided":
        problem = bank_problem(cfg)
        block = 0 if isinstance(problem, NdTileProblem) else cfg.blocks((1, problem.m, problem.n))
        return strided_trace(cfg, problem, block)
    # shift tiles run only where rows are not 16-byte aligned, and their reads
    # depend on the rows' offsets: trace them on such a shape
    return trace(cfg, (2 * cfg.tile_rows + 1, 2 * cfg.tile_cols - 1) if cfg.variant == "shift" else None)


def bank_problem(cfg: KernelConfig) -> TileProblem | NdTileProblem:
    """The strided problem a strided config's bank report traces: two matrices
    of two tiles (or strips) by two, the second's first block traced (a top
    tile with a previous matrix, so seams run), output rows following one
    another along the batch axis; for shift tiles, odd sides (rows at every
    alignment). ndshift's: one fused matrix of two tiles by two, odd sides,
    its first block traced. ValueError for a config that cannot run it (a
    family of other problems: rows, ndtile)."""
    e, eo = cfg.elem_bytes, cfg.out_elem_bytes
    if cfg.variant == "ndshift":
        m, n = 2 * cfg.tile_rows + 1, 2 * cfg.tile_cols + 1
        return NdTileProblem(e, ((m, n * e),), ((n, m * e),), e, ())
    odd = 1 if cfg.variant == "shift" else 0
    m, n = 2 * cfg.tile_rows + odd, 2 * cfg.tile_cols * cfg.strip + odd
    problem = TileProblem(e, m, n, n * e, 2 * m * eo, e, (Dim(2, m * n * e, m * eo),), eo)
    why = strided_problems(cfg, problem, 16)
    if why:
        raise ValueError(f"no bank report for {cfg.key}: it cannot run a tile problem ({why[0]})")
    return problem


def worst_ways(cfg: KernelConfig) -> dict[str, int]:
    """The worst conflict of each phase: {"load": n, "store": n}, and "mid" for
    templates with a middle phase (empty for no shared memory)."""
    cfg = as_config(cfg)
    out: dict[str, int] = {}
    for a in bank_report(cfg):
        out[a.phase] = max(out.get(a.phase, 0), a.ways)
    return out
