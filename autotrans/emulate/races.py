"""Shared-memory races of a block, from the kernel's own index math.

The emulator runs a block's threads one after another, phase by phase; on the
GPU the threads between two barriers run at once. Two threads that touch one
byte of shared memory between the same two barriers, one of them writing, race
(what compute-sanitizer's racecheck reports). A strip of tiles
(KernelConfig.strip) issues the next tile's loads while the current one
stores: its tile k's phases 3k (load), 3k + 1 (mid), 3k + 2 (store) fall in
the barrier intervals 2k (load; tile 0's alone), 2k + 1 (mid) and 2k + 2
(store, with tile k + 1's load); other kernels' phases each have their own.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..kernels.config import KernelConfig
from .banks import block_trace


@dataclass(frozen=True)
class Race:
    """A shared-memory byte two threads touch between the same two barriers, one writing."""
    interval: int        # the barrier interval (see the module's text)
    offset: int          # the byte
    writers: tuple       # threads that write it there
    readers: tuple       # threads that read it there

    def __str__(self) -> str:
        return (f"interval {self.interval}: byte {self.offset} written by threads {list(self.writers)[:4]}, "
                f"read by {list(self.readers)[:4]}")


def interval_of(cfg: KernelConfig, phase: int) -> int:
    """The barrier interval of an emulated phase (see the module's text)."""
    if cfg.strip == 1:
        return phase
    k, ph = divmod(phase, 3)
    return 0 if phase == 0 else 2 * k + ph if ph else 2 * k


def races(cfg: KernelConfig, accesses=None, interval=None, limit: int = 20) -> list[Race]:
    """Up to ``limit`` racing bytes of the block bank_report traces (or of
    ``accesses``: (phase, thread, seq, offset, bytes, store) tuples), phases
    grouped by ``interval`` (default: interval_of)."""
    interval = interval or (lambda p: interval_of(cfg, p))
    touched: dict = defaultdict(lambda: (set(), set()))
    for phase, tid, _seq, off, nbytes, store in (block_trace(cfg) if accesses is None else accesses):
        iv = interval(phase)
        for b in range(off, off + nbytes):
            touched[(iv, b)][1 if store else 0].add(tid)
    out = []
    for (iv, b), (readers, writers) in sorted(touched.items()):
        if writers and len(writers | readers) > 1:
            out.append(Race(iv, b, tuple(sorted(writers)), tuple(sorted(readers))))
            if len(out) >= limit:
                break
    return out


__all__ = ["Race", "races", "interval_of"]
