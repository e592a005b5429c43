"""tune(): search, compile, verify bit-exactly, time, compare with memcpy, store."""
from __future__ import annotations

import contextlib
import datetime
import functools
import random
import sys
import time

import numpy as np

from ..backend import cuda as driver
from ..build.compile import compile_configs
from ..build.nvcc import find_nvcc, nvcc_version
from ..core.problem import elem_size, gbps, positive_bmn
from ..core.version import VERSION
from ..kernels.config import KernelConfig
from ..kernels.strided import dense_problems
from ..results.record import MAX_ROWS, MAX_TEXT, Candidate, Failure, TuneRecord, dtype_name
from ..results.store import CacheKey, ResultCache
from . import timing
from .loader import load
from .space import candidates, default_config, space_id
from .verify import Buffers

TUNE_ALIGN = 16       # pointer alignment of the tuner's buffers (allocations are 256-aligned)
CUTOFF = 1.1          # a candidate this much slower than the best so far (both first launches) stops there
AGREE = 1.25          # ... where its first two launches agree: the slower within this of the faster
RETIME_SLOWER = 1.25  # a re-time whose medians run this much over the first pass's was disturbed
RETIME_TRIES = 3      # re-times taken at most, while disturbed
# tune() also times its fastest configs compiled for the shape (KernelConfig.fixed)
# where the fastest runs under this: there the folded index math is 2-12% (NOTES 28).
FIXED_BELOW_US = 25.0


TuneResult = TuneRecord   # what tune() returns is the record it stores


@contextlib.contextmanager
def _progress(enabled: bool):
    if not enabled:
        yield lambda desc, total: (lambda n=1: None)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    with Progress(TextColumn("{task.description:<22}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), transient=False) as bar:
        def stage(desc, total):
            task = bar.add_task(desc, total=total)
            return lambda n=1: bar.advance(task, n)
        yield stage


def stops_early(samples, best: float) -> bool:
    """Whether a candidate stops after its first launches: both clearly slower
    than the best so far (CUTOFF) and agreeing with each other (AGREE). Two that
    disagree hold an outlier (a host stall timed with the launch: 7.2 and 21.7 µs
    where the config runs 6.5), and the candidate takes all its launches."""
    lo, hi = min(samples), max(samples)
    return lo >= CUTOFF * best and hi <= AGREE * lo


def _time(kernel, bufs, reps: int, best: float) -> timing.Stats:
    """Median of ``reps`` launches, each after an L2 flush; a candidate clearly
    slower than the best so far stops after two (stops_early)."""
    t = timing.Timer(bufs.launcher(kernel), bufs.before)
    t.take(min(2, reps))
    if not stops_early(t.samples, best):
        t.take(reps - len(t.samples))
    return t.stats()


def _run_candidates(cfgs, compiled, bufs, reps, tick, best: float = float("inf")):
    timed, failures = {}, []
    for cfg in cfgs:
        c = compiled[cfg.key]
        if not c.ok:
            failures.append(Failure(cfg.key, "compile", c.error[-500:]))
            tick()
            continue
        try:
            kernel = load(cfg, c)
            reason = bufs.verify(kernel)
        except driver.cuda().Error as e:
            failures.append(Failure(cfg.key, "launch", str(e)[:MAX_TEXT]))
            tick()
            continue
        if reason:
            failures.append(Failure(cfg.key, "verify", str(reason)[:MAX_TEXT]))
        else:
            stats = _time(kernel, bufs, reps, best)
            best = min(best, stats.median_us)
            timed[cfg.key] = (kernel, stats)
        tick()
    return timed, failures


def tune(shape, dtype=np.float32, *, configs=None, cache_dir=None, save: bool = True,
         progress: bool | None = None, reps: int = 5, top: int = 5) -> TuneResult:
    """Find the fastest verified transpose kernel for ``shape`` ((M, N) or
    (B, M, N)) and ``dtype`` on the current GPU, and store it in the cache.

    configs: the candidates (default: the search space for this shape); a
    strided config among them runs the shape as kernels.strided.dense_tile
    (ValueError if it cannot), and transpose() does the same where it wins.
    progress: show progress bars (default: when stderr is a terminal).
    """
    t0 = time.perf_counter()
    check_counts(reps, top)
    e = elem_size(dtype)
    bmn = positive_bmn(shape)
    given = _given(configs, bmn) if configs is not None else None
    dev = driver.device()
    cfgs = given if given is not None else candidates(bmn, e, dev.limits)
    cfgs = default_first([c for c in cfgs if c.elem_bytes == e], default_config(bmn, e, dev.limits))
    if not cfgs:
        raise ValueError(f"no candidate configs for shape {bmn} and {e}-byte elements")
    fixed = functools.partial(fixed_variants, bmn) if configs is None else None
    res = tune_candidates(cfgs, functools.partial(Buffers, bmn, e), bmn, np.dtype(dtype), str(bmn),
                          progress=progress, reps=reps, top=top, t0=t0, variants=fixed)
    if save:
        ResultCache(cache_dir).put(key_for(bmn, e), res)
    return res


def check_counts(reps, top) -> None:
    """ValueError unless ``reps`` (launches timed per candidate) and ``top``
    (fastest re-timed) are positive ints; checked before anything compiles."""
    for name, v in (("reps", reps), ("top", top)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, not {v!r:.40}")


def _given(configs, bmn) -> list[KernelConfig]:
    """A caller's candidates for a dense shape: KernelConfigs, strided ones
    able to transpose it (TypeError, ValueError naming the first that is not)."""
    out = list(configs)
    for c in out:
        if not isinstance(c, KernelConfig):
            raise TypeError(f"configs must be KernelConfigs, not {type(c).__name__}")
        why = dense_problems(c, bmn, TUNE_ALIGN) if c.layout == "strided" else []
        if why:
            raise ValueError(f"{c.key} cannot transpose {'x'.join(map(str, bmn))}: {why[0]}")
    return out


def fixed_variants(bmn, cfgs, best_us: float) -> list[KernelConfig]:
    """The dense configs of cfgs compiled for the one shape bmn
    (KernelConfig.fixed), where the fastest runs under FIXED_BELOW_US."""
    if best_us >= FIXED_BELOW_US:
        return []
    return [c.fixed_to(bmn) for c in cfgs if c.layout == "dense" and not c.fixed]


def default_first(cfgs, first) -> list[KernelConfig]:
    """cfgs with the untuned default ``first`` moved to the front (a fast one
    first sets the early-stop bar), the rest in their order."""
    return sorted(cfgs, key=lambda c: c != first)


def tune_candidates(cfgs, make_buffers, bmn, dt, what: str, *, progress: bool | None, reps: int, top: int,
                    t0: float, variants=None) -> TuneRecord:
    """The search tune() and tuning.strided.tune_problem share: compile cfgs,
    verify each bit-exactly on the buffers make_buffers(seed) gives (a
    verify.TimedBuffers) and time it; then the same for variants(the ``top``
    fastest configs, the fastest's median) where given (tune():
    fixed_variants), but for those that spill; re-time the ``top`` fastest
    of all interleaved with a memcpy of the same bytes; the record (bmn: the
    shape the kernels walk, dt: the dtype; t0: when tuning began), not
    stored. RuntimeError naming ``what`` when no candidate passes verification."""
    show = sys.stderr.isatty() if progress is None else progress
    arch = driver.device().arch
    with _progress(show) as stage:
        compiled = compile_configs(cfgs, arch, progress=stage("compiling", len(cfgs)))
        bufs = make_buffers(random.getrandbits(32))
        timed, failures = _run_candidates(cfgs, compiled, bufs, reps, stage("verifying + timing", len(cfgs)))
        best_us = min((s.median_us for _, s in timed.values()), default=0.0)
        extra = [c for c in (variants(_fastest(timed, top), best_us) if variants and timed else [])
                 if c.key not in timed]
        if extra:
            compiled |= compile_configs(extra, arch, progress=stage("compiling variants", len(extra)))
            spilled = [Failure(c.key, "compile", f"spills {_spills(compiled[c.key])} bytes") for c in extra
                       if _spills(compiled[c.key])]
            extra = [c for c in extra if not _spills(compiled[c.key])]
            more, fails = _run_candidates(extra, compiled, bufs, reps, stage("verifying + timing", len(extra)),
                                          best=best_us)
            timed |= more
            failures += spilled + fails
    if not timed:
        raise RuntimeError(f"no candidate passed verification for {what}: {failures[:3]}")
    best_keys = [c.key for c in _fastest(timed, top)]
    for _ in range(RETIME_TRIES):
        final = timing.interleaved({**{k: bufs.launcher(timed[k][0]) for k in best_keys},
                                   "memcpy": bufs.memcpy_launcher()}, bufs.before)
        if not disturbed({k: timed[k][1] for k in best_keys}, final):
            break
    stats = {k: s for k, (_, s) in timed.items()} | final
    mem = stats.pop("memcpy")
    order = ranked(stats, set(best_keys))
    return _result(bmn, dt, compiled, stats, mem, order, set(best_keys), failures, bufs.nbytes, t0)


def disturbed(first: dict, final: dict) -> bool:
    """Whether the interleaved re-time (key -> timing.Stats) ran slower than
    the first pass (the same keys) on most candidates: the median of their
    ratios over RETIME_SLOWER. One grid record's re-time read 15-20 µs for
    kernels the first pass timed at 6.1, and its memcpy 17.5: a disturbed
    GPU or host, not the kernels."""
    r = sorted(final[k].median_us / first[k].median_us for k in first if k in final and first[k].median_us > 0)
    return bool(r) and r[len(r) // 2] > RETIME_SLOWER


def retime_suspect(record: TuneRecord) -> bool:
    """Whether a stored record's re-timed best runs over RETIME_SLOWER times
    the fastest candidate of its first pass (its re-time was disturbed: see
    disturbed(); benchmarks/grid.py --resume tunes such a shape again)."""
    again = [c.median_us for c in record.candidates if c.retimed]
    first = [c.median_us for c in record.candidates if not c.retimed and c.median_us > 0]
    return bool(again and first) and min(again) > RETIME_SLOWER * min(first)


def _spills(compiled) -> int:
    """Bytes a compiled kernel spills (stores + loads); the space's candidates
    never do (CI checks), a variant for one shape can, and is then left out."""
    info = compiled.info or {}
    return int(info.get("spill_stores", 0)) + int(info.get("spill_loads", 0)) if compiled.ok else 0


def _fastest(timed: dict, top: int) -> list[KernelConfig]:
    """The configs of the ``top`` fastest timed candidates (key -> (kernel, Stats)), fastest first."""
    return [timed[k][0].cfg for k in sorted(timed, key=lambda k: timed[k][1].median_us)[:top]]


def ranked(stats: dict, retimed: set) -> list:
    """The keys of ``stats`` (key -> timing.Stats) best first: the re-timed
    ones, then the rest, each by median, a tie by key; the first is the winner."""
    return sorted(stats, key=lambda k: (k not in retimed, stats[k].median_us, k))


def key_for(bmn, elem_bytes: int, fingerprint: str | None = None) -> CacheKey:
    return CacheKey(fingerprint or driver.device().id.text, space_id(), tuple(bmn), elem_bytes)


def _result(bmn, dt, compiled, stats, mem, order, retimed, failures, nbytes, t0) -> TuneRecord:
    """The record of a tuning run: candidates listed in ``order`` (ranked()), the first the winner."""
    dev = driver.device()
    rows = [Candidate(k, stats[k].median_us, stats[k].q1_us, stats[k].q3_us, stats[k].n,
                      gbps(nbytes, stats[k].median_us), (compiled[k].info or {}).get("registers"), k in retimed)
            for k in order]
    best = order[0]
    b = stats[best]
    versions = {"autotrans": VERSION, "space": space_id(), "nvcc": nvcc_version(find_nvcc()),
                "cuda": dev.id.cuda, "driver": dev.id.driver}
    return TuneRecord(
        KernelConfig.from_key(best), tuple(bmn), dt.itemsize, dtype_name(dt), b.median_us, b.q1_us, b.q3_us,
        gbps(nbytes, b.median_us), mem.median_us, gbps(nbytes, mem.median_us), mem.median_us / b.median_us,
        tuple(rows[:MAX_ROWS]), tuple(failures[:MAX_ROWS]), dev.id, dev.l2_bytes,
        datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        round(time.perf_counter() - t0, 3), tuple(sorted(versions.items())))
