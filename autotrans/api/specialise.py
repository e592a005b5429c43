"""Untuned shapes and strided problems compiled for themselves, in the background.

A shape served without an exact result runs a nearest shape's config (or the
default), generic: its sizes are kernel arguments. Compiled for the shape
(KernelConfig.fixed: the sizes as constants, the index math folded) the same
config ran 2-10% faster on kernels of 4-25 µs (NOTES 17), which is where
untuned shapes fell furthest behind tuned ones. So the first call of such a
shape queues that compile on one background thread and runs the generic
kernel; calls after the cubin is in the kernel store run the fixed one (later
processes at once). No call waits for nvcc; without nvcc, where the fixed
kernel fails to build or spills, and past MAX_BUILDS shapes a process, the
generic kernel stays. AUTOTRANS_SPECIALISE=0 turns it off. On an H100 it took
untuned/tuned over 23 cases of 1-19 MiB from 0.911 to 0.939 (NOTES 58).

permute()'s strided problems do the same where their config was not tuned
for the problem (strided_candidate: the config compiled for the launch,
KernelConfig.fixed_args): on an H100 the flat family's kernels so compiled
took 30-32 registers where the generic ones take 32-40 and ran 1-5% faster,
up to 35 MiB and beyond (NOTES 67).
"""
from __future__ import annotations

import os
import queue
import threading

from ..build.compile import compile_configs, find_compiled
from ..core.layout import moved_bytes
from ..kernels.config import KernelConfig
from ..kernels.strided import launch_args, strided_problems

ENV = "AUTOTRANS_SPECIALISE"
MAX_BYTES = 32 << 20     # larger shapes run long enough that constant sizes gain nothing (NOTES 17)
MAX_STRIDED_BYTES = 256 << 20   # strided problems: flat gained 1% at 97 MiB, 4-5% at 20-35 (NOTES 67)
MAX_BUILDS = 64          # builds queued a process at most: many shapes (varying lengths) stay generic

_jobs: queue.Queue = queue.Queue()
_asked: set = set()      # (config key, arch) queued in this process
_lock = threading.Lock()
_worker: list = []       # the background thread, once started
failures: list = []      # (config key, what went wrong) of background compiles, for explain and tests


def _after_fork() -> None:
    """A forked child has no worker thread: it starts its own when it asks."""
    global _jobs, _lock
    _jobs, _lock = queue.Queue(), threading.Lock()
    _asked.clear()
    _worker.clear()


os.register_at_fork(after_in_child=_after_fork)


def enabled() -> bool:
    """On unless AUTOTRANS_SPECIALISE turns it off (0, false, no or off)."""
    return os.environ.get(ENV, "").strip().lower() not in ("0", "false", "no", "off")


def candidate(cfg: KernelConfig, bmn, elem_bytes: int) -> KernelConfig | None:
    """cfg compiled for ``bmn`` where that may pay: a generic dense config, a
    shape of at most MAX_BYTES, and a fixed config with no problems; else None."""
    if cfg.fixed or cfg.layout != "dense" or bmn[0] * bmn[1] * bmn[2] * elem_bytes > MAX_BYTES:
        return None
    fixed = cfg.fixed_to(bmn)
    return None if fixed.problems() else fixed


def strided_candidate(cfg: KernelConfig, problem, align: int) -> KernelConfig | None:
    """cfg compiled for this strided problem's launch (kernels.strided.
    launch_args) where that may pay: a generic strided config, a problem
    writing at most MAX_STRIDED_BYTES, and a fixed config that runs it at
    ``align``; else None."""
    if cfg.fixed or cfg.layout != "strided" or moved_bytes(problem) > MAX_STRIDED_BYTES:
        return None
    fixed = cfg.fixed_to_args(launch_args(cfg, problem)[1])
    return None if fixed.problems() or strided_problems(fixed, problem, align) else fixed


def ready(fixed: KernelConfig, arch: str, on_built=None, *, capped: bool = True) -> bool:
    """Whether ``fixed``'s cubin for ``arch`` is in the kernel store, built
    without spills. If it is not and was not asked for before in this process
    (nor, ``capped``, MAX_BUILDS others), its compile is queued; ``on_built()``
    runs on the background thread once it is in the store."""
    try:
        hit = find_compiled(fixed, arch)
    except Exception:            # no nvcc, or one that cannot say its version: generic kernels only
        return False
    if hit is not None:
        return _usable(hit)
    with _lock:
        if (fixed.key, arch) in _asked or (capped and len(_asked) >= MAX_BUILDS):
            return False
        _asked.add((fixed.key, arch))
        if not _worker:
            _worker.append(threading.Thread(target=_work, name="autotrans-specialise", daemon=True))
            _worker[0].start()
    _jobs.put((fixed, arch, on_built))
    return False


def wait(timeout: float | None = None) -> bool:
    """Block until every queued compile is done (True) or ``timeout`` s pass (False)."""
    if not _worker:
        return True              # nothing was ever queued
    done = threading.Event()
    _jobs.put((None, None, done.set))
    return done.wait(timeout)


def _usable(compiled) -> bool:
    info = compiled.info or {}
    return compiled.ok and not info.get("spill_stores") and not info.get("spill_loads")


def _work() -> None:
    while True:
        cfg, arch, on_built = _jobs.get()
        try:
            if cfg is None:          # wait()'s marker: everything before it is done
                on_built()
                continue
            built = compile_configs([cfg], arch, jobs=1)[cfg.key]
            if not _usable(built):
                failures.append((cfg.key, built.error or f"spills: {built.info}"))
            elif on_built is not None:
                on_built()
        except Exception as exc:     # a background compile never surfaces in a transpose
            failures.append((getattr(cfg, "key", "?"), f"{type(exc).__name__}: {exc}"))
