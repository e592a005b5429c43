"""Bit-exact verification on the GPU, the buffers candidates run on, and the
L2 flush that comes before every timed launch.

verify.cu's kernels fill the input with pseudo-random bytes that are a function
of (seed, offset) and check a transpose of it without a reference copy; the
output is first filled with the complement of the right answer, so no
unwritten byte can pass, and guard bands around it are poisoned.
"""
from __future__ import annotations

import functools

import numpy as np

from ..backend import cuda as driver
from ..backend import memory
from ..build.compile import compile_file
from ..core.paths import template_dir
from ..core.problem import as_bmn

GUARD = 4096          # poisoned bytes before and after the output while verifying
POISON = 0xA5
COUNTERS = 2          # the counting helpers' results: wrong output bytes, changed guard bytes
SPIN_US = 30.0        # after the flush, so the host has queued the timed launch before its start event


@functools.lru_cache(maxsize=None)
def _helpers() -> dict:
    c = compile_file(template_dir() / "verify.cu", driver.device().arch)
    mod = driver.load_module(c.object, c.image())
    return {"fill": driver.function(mod, "at_fill_pattern", "PQI"),
            "fill_not": driver.function(mod, "at_fill_not_transposed", "PqqqiI"),
            "check": driver.function(mod, "at_check_transpose", "PqqqiIP"),
            "count_ne": driver.function(mod, "at_count_ne", "PQBP"),
            "flush": driver.function(mod, "at_flush", "PQQ"),
            "spin": driver.function(mod, "at_spin", "Q")}


def _grid() -> tuple:
    return (driver.device().sms * 8, 1, 1)


def fill_pattern(ptr, nbytes: int, seed: int) -> None:
    """Fill with pseudo-random bytes that are a function of (seed, offset)."""
    _helpers()["fill"](_grid(), (256, 1, 1), int(ptr), nbytes, seed)


def fill_not_transposed(ptr, shape, elem_bytes: int, seed: int) -> None:
    """Fill a B x N x M output with the complement of its correct transpose."""
    b, m, n = as_bmn(shape)
    _helpers()["fill_not"](_grid(), (256, 1, 1), int(ptr), b, m, n, elem_bytes, seed)


@functools.lru_cache(maxsize=None)
def _counters():
    """Device memory for the counting helpers' results (allocated once)."""
    return memory.alloc(8 * COUNTERS)


def check_with_guards(ptr, shape, elem_bytes: int, seed: int, guards) -> tuple[int, int]:
    """(bytes of the B x N x M output at ptr that are not the transposed
    pattern, bytes of the guards that differ from their value), guards being
    (ptr, nbytes, value) triples. One read-back, which waits for the kernels."""
    base, h = int(_counters()), _helpers()
    b, m, n = as_bmn(shape)
    memory.memset(base, 0, 8 * COUNTERS)
    h["check"](_grid(), (256, 1, 1), int(ptr), b, m, n, elem_bytes, seed, base)
    for p, nbytes, value in guards:
        h["count_ne"](_grid(), (256, 1, 1), int(p), nbytes, value, base + 8)
    out = memory.dtoh(base, 8 * COUNTERS).tobytes()
    return int.from_bytes(out[:8], "little"), int.from_bytes(out[8:], "little")


class L2Flush:
    """Evicts the L2 before a timed launch: a kernel writes a buffer of
    max(2 x L2, min_bytes) with a new value each call (so nothing of the
    launch's data or code stays cached), then a spin keeps the stream busy
    while the host queues the launch."""

    def __init__(self, min_bytes: int = 0, spin_us: float = SPIN_US):
        self.nbytes = -(-max(2 * driver.device().l2_bytes, min_bytes) // 16) * 16
        self.spin_us, self.calls = spin_us, 0
        self._buf = memory.alloc(self.nbytes)

    def flush(self) -> None:
        self.calls += 1
        n16 = self.nbytes // 16
        grid = (int(min(-(-n16 // 256), 32 * driver.device().sms)), 1, 1)
        _helpers()["flush"](grid, (256, 1, 1), int(self._buf), n16, self.calls & 0xFFFFFFFF)

    def spin(self, us: float) -> None:
        if us > 0:
            _helpers()["spin"]((1, 1, 1), (1, 1, 1), int(us * 1000))

    def __call__(self) -> None:
        self.flush()
        self.spin(self.spin_us)

    def free(self) -> None:
        self._buf.free()


class TimedBuffers:
    """The input ``src`` (in_bytes) and output ``dst`` (out_bytes, between
    guard bands of GUARD bytes: ``_guarded``) that candidates are verified and
    timed on, and the L2 flush ``before`` each timed launch. Subclasses give
    _go (a kernel's launch(src, dst)) and _check (fill, run the kernel once,
    count what is wrong)."""

    def __init__(self, in_bytes: int, out_bytes: int, nbytes: int):
        """nbytes: the bytes a kernel moves (what memcpy_launcher copies)."""
        self.in_bytes, self.out_bytes, self.nbytes = in_bytes, out_bytes, nbytes
        self._src = memory.alloc(in_bytes)
        self._guarded = memory.alloc(out_bytes + 2 * GUARD)
        self.src, self.dst = int(self._src), int(self._guarded) + GUARD
        self.before = L2Flush()

    def _go(self, kernel):
        raise NotImplementedError

    def _check(self, kernel) -> tuple[int, int]:
        raise NotImplementedError

    def launcher(self, kernel):
        """launch(): one run of kernel on the buffers."""
        src, dst, go = self.src, self.dst, self._go(kernel)
        return lambda: go(src, dst)

    def memcpy_launcher(self):
        """launch(): a device-to-device copy of the bytes a kernel moves."""
        src, dst, n = self.src, self.dst, self.nbytes
        return lambda: memory.memcpy_dtod(dst, src, n)

    def verify(self, kernel) -> str | None:
        """None if the kernel writes exactly the right output and nothing else
        of the guarded buffer (guards included), else what it got wrong. The
        output is first filled with the complement of the right answer, so no
        unwritten byte can pass."""
        wrong, guards = self._check(kernel)
        if wrong or guards:
            return f"{wrong} wrong output bytes, {guards} guard bytes overwritten"
        return None


class Buffers(TimedBuffers):
    """TimedBuffers for a dense B x M x N transpose: the input holds
    fill_pattern's bytes, checked on the device (no reference copy)."""

    def __init__(self, shape, elem_bytes: int, seed: int):
        self.shape, self.e, self.seed = shape, elem_bytes, seed
        nbytes = int(np.prod(shape)) * elem_bytes
        super().__init__(nbytes, nbytes, nbytes)
        fill_pattern(self.src, self.nbytes, seed)

    def _go(self, kernel):
        return kernel.launcher(self.shape)

    def _check(self, kernel) -> tuple[int, int]:
        """Guard bands POISON, the output the complement of its transpose,
        one run of kernel (called as kernel(src, dst, shape)), the counts."""
        base, n = int(self._guarded), self.nbytes
        memory.memset(base, POISON, GUARD)
        memory.memset(base + GUARD + n, POISON, GUARD)
        fill_not_transposed(self.dst, self.shape, self.e, self.seed)
        kernel(self.src, self.dst, self.shape)
        return check_with_guards(self.dst, self.shape, self.e, self.seed,
                                 [(base, GUARD, POISON), (base + GUARD + n, GUARD, POISON)])
