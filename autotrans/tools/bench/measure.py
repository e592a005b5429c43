"""Timing: the spin before each launch, the interleaved repetitions (CUDA
events around each launch after an L2 flush; XLA by wall clock), and the
roofline's two copies."""
from __future__ import annotations

import time

from ...backend import cuda as driver
from ...backend import memory
from .cases import Case
from .gpu import Data, Gpu
from .results import Entry, one_line

REPS = 25                       # repetitions per case (medians and IQRs over these)
SPIN_MIN_US, SPIN_MAX_US = 20.0, 2000.0


def spin_us(entries, data: Data, errors: dict) -> float:
    """Twice the slowest host cost of a call (so the launch is queued
    before the start event runs), within [SPIN_MIN_US, SPIN_MAX_US].
    A contender that raises here is put in errors."""
    worst = 0.0
    for e in entries:
        t = time.perf_counter()
        try:
            for _ in range(3):
                e.call(data.x)
        except Exception as exc:
            errors[e.name] = one_line(exc)
            continue
        worst = max(worst, (time.perf_counter() - t) / 3 * 1e6)
        driver.synchronize()
    return float(min(SPIN_MAX_US, max(SPIN_MIN_US, 2 * worst + 10)))


def measure(gpu: Gpu, entries, data: Data, spin: float, xla, errors: dict, reps: int = REPS):
    """``reps`` repetitions; in each, every contender once after a flush and a
    spin, the order rotating. Returns (samples, XLA samples) in µs; a
    contender that raises is put in errors and left out from then on."""
    samples = {e.name: [] for e in entries}
    xla_samples = []
    for r in range(reps):
        k = r % max(1, len(entries))
        _round(gpu, entries[k:] + entries[:k], data, spin, errors, samples)
        if xla is not None and "jax" not in errors:
            us = _xla_call_us(gpu, xla, errors)
            if us is not None:
                xla_samples.append(us)
    return samples, xla_samples


def _round(gpu: Gpu, entries, data: Data, spin: float, errors: dict, samples: dict) -> None:
    """Every contender once, each between CUDA events after a flush and a spin."""
    pending = []
    for e in entries:
        if e.name in errors:
            continue
        start, end = driver.event(), driver.event()
        gpu.flush()
        gpu.spin(spin)
        start.record()
        try:
            e.call(data.x)
        except Exception as exc:
            errors[e.name] = one_line(exc)
            continue
        end.record()
        pending.append((e.name, start, end))
    driver.synchronize()
    for name, start, end in pending:
        samples[name].append(end.time_since(start) * 1000.0)


def _xla_call_us(gpu: Gpu, xla, errors: dict) -> float | None:
    """One XLA call after a flush, wall clock to completion (None if it raised)."""
    gpu.flush()
    driver.synchronize()
    t = time.perf_counter()
    try:
        xla.fn(xla.x).block_until_ready()
    except Exception as exc:
        errors["jax"] = one_line(exc)
        return None
    return (time.perf_counter() - t) * 1e6


def memcpy_entry(bench, case: Case, data: Data) -> Entry:
    """cudaMemcpy device to device of the case's bytes (half the roofline)."""
    y, n = data.y, case.nbytes

    def call(src):
        memory.memcpy_dtod(y, src, n)
        return y
    return Entry("memcpy", call, copy=True)


def copy16_entry(bench, case: Case, data: Data) -> Entry:
    """roofline.cu's 16-byte vector copy of the case's bytes (the other half)."""
    y, n, copy = data.y, case.nbytes, bench.gpu.copy16

    def call(src):
        copy(y, src, n)
        return y
    return Entry("copy16", call, copy=True)
