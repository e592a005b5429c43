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

from dataclasses import dataclass

import numpy as np

from ..kernels.config import KernelConfig, as_config
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
    grouped by ``interval`` (default: interval_of). cfg: a KernelConfig or its key."""
    cfg = as_config(cfg)
    acc = np.array(block_trace(cfg) if accesses is None else accesses, dtype=np.int64).reshape(-1, 6)
    if not len(acc):
        return []
    iv = np.array([(interval or (lambda p: interval_of(cfg, p)))(int(p)) for p in acc[:, 0]], np.int64)
    width = acc[:, 4]
    rep = np.repeat(np.arange(len(acc)), width)                    # one row per byte touched
    byte = acc[rep, 3] + np.arange(len(rep)) - np.repeat(np.cumsum(width) - width, width)
    key = iv[rep] << 32 | byte
    tid, store = acc[rep, 1], acc[rep, 5].astype(bool)
    pairs = np.unique(np.stack([key, tid]), axis=1)                # each (byte, thread) once
    keys, threads = np.unique(pairs[0], return_counts=True)
    racing = np.intersect1d(keys[threads > 1], key[store])[:limit]
    out = []
    for k in racing.tolist():
        on = key == k
        out.append(Race(k >> 32, k & 0xFFFFFFFF, tuple(sorted(set(tid[on & store].tolist()))),
                        tuple(sorted(set(tid[on & ~store].tolist())))))
    return out


__all__ = ["Race", "races", "interval_of"]
