"""The GPU side of the benchmark: roofline.cu's kernels (fill, 16-byte copy,
reference transpose, byte diffs), the tuner's L2 flush and spin, and a case's
buffers."""
from __future__ import annotations

import functools
import sys
import zlib

import numpy as np

from ...backend import cuda as driver
from ...backend import memory
from ...build.compile import compile_file
from ...core.paths import template_dir
from ...tuning.verify import L2Flush
from .cases import MIB, Case

FLUSH_MIN_BYTES = 256 * MIB     # the L2 flush writes max(2 x L2, this)
BLOCK = (256, 1, 1)

SIGNATURES = {"at_copy16": 3, "at_fill": 8, "at_transpose_ref": 7,
               "at_count_transpose_diff": 7, "at_count_diff": 4}


def device_or_error(prog: str):
    """The GPU to run on, or None after printing one error line for ``prog``."""
    try:
        return driver.device()
    except driver.GPUUnavailable as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return None


@functools.lru_cache(maxsize=None)
def _kernels() -> dict:
    """roofline.cu's kernels, compiled for this GPU and loaded (every parameter 64-bit)."""
    c = compile_file(template_dir() / "roofline.cu", driver.device().arch)
    mod = driver.load_module(c.object, c.image())
    return {name: driver.function(mod, name, "Q" * n) for name, n in SIGNATURES.items()}


_FLOAT_MASKS = {   # per float part size: (and, or) for even words, then for odd words
    2: (0xBFFFBFFF, 0x20002000, 0xBFFFBFFF, 0x20002000),
    4: (0xBFFFFFFF, 0x20000000, 0xBFFFFFFF, 0x20000000),
    8: (0xFFFFFFFF, 0x00000000, 0xBFFFFFFF, 0x20000000),
}


def fill_masks(dtype) -> tuple[int, int, int, int]:
    """(and_even, or_even, and_odd, or_odd) applied to the input's 32-bit words
    (little-endian): for floats, the top exponent bit cleared and the next one
    set, so every value is finite and normal, and its complement too."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return _FLOAT_MASKS[dt.itemsize]
    if dt.kind == "c":
        return _FLOAT_MASKS[dt.itemsize // 2]
    return (0xFFFFFFFF, 0, 0xFFFFFFFF, 0)


class Gpu:
    """roofline.cu's kernels and the L2 flush on the current GPU, on the legacy default stream."""

    def __init__(self):
        self.dev = driver.device()
        self.k = _kernels()
        self._l2 = L2Flush(FLUSH_MIN_BYTES)
        self.flush_bytes = self._l2.nbytes
        self._count = memory.alloc(8)

    def _grid(self, n: int) -> tuple:
        return (int(max(1, min(-(-n // BLOCK[0]), 32 * self.dev.sms))), 1, 1)

    def flush(self) -> None:
        """Write the whole flush buffer (a new value each time)."""
        self._l2.flush()

    def spin(self, us: float) -> None:
        self._l2.spin(us)

    def copy16(self, dst: int, src: int, nbytes: int) -> None:
        blocks = max(1, -(-(nbytes // 16) // (4 * BLOCK[0])))
        self.k["at_copy16"]((blocks, 1, 1), BLOCK, dst, src, nbytes)

    def fill(self, ptr: int, nbytes: int, seed: int, dtype, flip: bool) -> None:
        self.k["at_fill"](self._grid(-(-nbytes // 4)), BLOCK, ptr, nbytes, seed & 0xFFFFFFFF,
                          *fill_masks(dtype), 0xFFFFFFFF if flip else 0)

    def prefill_wrong(self, out: int, src: int, bmn, e: int) -> None:
        """out = the complement of transpose(src)."""
        self.k["at_transpose_ref"](self._grid(int(np.prod(bmn)) * e), BLOCK, out, src, *bmn, e, 0xFF)

    def transpose_diff(self, out: int, src: int, bmn, e: int) -> int:
        """Bytes of out that differ from transpose(src) (waits for the result)."""
        memory.memset(self._count, 0, 8)
        self.k["at_count_transpose_diff"](self._grid(int(np.prod(bmn)) * e), BLOCK, out, src, *bmn, e,
                                          int(self._count))
        return self._read()

    def copy_diff(self, a: int, b: int, nbytes: int) -> int:
        memory.memset(self._count, 0, 8)
        self.k["at_count_diff"](self._grid(nbytes), BLOCK, a, b, nbytes, int(self._count))
        return self._read()

    def _read(self) -> int:
        return int.from_bytes(memory.dtoh(self._count, 8).tobytes(), "little")

    def close(self) -> None:
        self._l2.free()
        self._count.free()


class Data:
    """A case's buffers: the input x, its complement xc, one output y."""

    def __init__(self, gpu: Gpu, case: Case):
        n, seed = case.nbytes, zlib.crc32(case.name.encode())
        self._bufs = [memory.alloc(n) for _ in range(3)]
        self.x, self.xc, self.y = (int(b) for b in self._bufs)
        gpu.fill(self.x, n, seed, case.dtype, flip=False)
        gpu.fill(self.xc, n, seed, case.dtype, flip=True)

    def other(self, src: int) -> int:
        """The other input (x for xc, xc for x)."""
        return self.xc if src == self.x else self.x

    def release(self) -> None:
        for b in self._bufs:
            b.free()
        self._bufs = []
