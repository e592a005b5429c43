"""Device memory through PyCUDA: autotrans' memory pool, new output arrays, copies."""
from __future__ import annotations

import functools
import threading

import numpy as np

from . import cuda as _cuda
from .cuda import cuda, gpuarray, memory_pool, pycuda_current


def empty(shape, dtype):
    """A new C-contiguous GPUArray from autotrans' memory pool (no driver call
    once the pool holds a block of that size)."""
    return _empty()(shape, dtype, allocator=memory_pool().allocate)


@functools.lru_cache(maxsize=None)
def _empty():
    return gpuarray().GPUArray


class OutputMaker:
    """Makes new C-contiguous GPUArrays of one shape and dtype from the pool, at
    a fraction of GPUArray()'s cost: the attributes are those of one array made
    the usual way, and only the memory is new."""

    def __init__(self, shape, dtype):
        with pycuda_current():                         # GPUArray() asks the device for its launch grid
            proto = _empty()(shape, dtype, gpudata=0)  # no memory: only its attributes are kept
        self._cls, self._nbytes, self._alloc = type(proto), proto.nbytes, memory_pool().allocate
        self._attrs = {k: v for k, v in vars(proto).items() if k != "gpudata"}

    def __call__(self):
        a = self._cls.__new__(self._cls)
        a.__dict__.update(self._attrs)
        if not self._nbytes:
            a.gpudata = None
        elif threading.get_ident() == _cuda._home.thread:
            a.gpudata = self._alloc(self._nbytes)
        else:
            with pycuda_current():      # PyCUDA's context stack is per thread
                a.gpudata = self._alloc(self._nbytes)
        return a


def alloc(nbytes: int):
    return cuda().mem_alloc(max(1, int(nbytes)))


def htod(ptr, array) -> None:
    cuda().memcpy_htod(int(ptr), array)


def dtoh(ptr, nbytes: int):
    """nbytes from the device as a NumPy uint8 array."""
    out = np.empty(nbytes, np.uint8)
    cuda().memcpy_dtoh(out, int(ptr))
    return out


def memset(ptr, value: int, nbytes: int) -> None:
    cuda().memset_d8(int(ptr), value, nbytes)


def memcpy_dtod(dst, src, nbytes: int, stream=None) -> None:
    cuda().memcpy_dtod_async(int(dst), int(src), nbytes, stream)
