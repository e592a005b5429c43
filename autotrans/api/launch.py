"""transpose(): the hot path. A plan per input layout, worked out once; the
kernel per (shape, element size, pointer alignment), chosen and loaded once."""
from __future__ import annotations

import os

import numpy as np

from ..backend import cuda as driver
from ..backend import memory
from ..core.problem import as_bmn, dtype_of_size, elem_size
from ..tuning import loader, runner
from .select import choose

TUNE_ENV = "AUTOTRANS_TUNE"


_kernels: dict = {}
_plans: dict = {}


def forget() -> None:
    """Drop the in-process memo of configs and kernels (after the cache changed)."""
    _kernels.clear()
    _plans.clear()


def _want_tune(tune) -> bool:
    if tune is not None:
        return bool(tune)
    return os.environ.get(TUNE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def kernel_for(shape, elem_bytes: int, align: int = 16, tune=None):
    """The loaded kernel transpose() launches for this shape and pointer
    alignment (memoised); tunes first on a miss if tune (or AUTOTRANS_TUNE)."""
    bmn = as_bmn(shape)
    memo = (bmn, elem_bytes, align)
    k = _kernels.get(memo)
    if k is None:
        dev = driver.device()
        choice = choose(bmn, elem_bytes, dev.id.text, dev.limits, align=align)
        if choice.source not in ("exact", "shipped") and _want_tune(tune):
            runner.tune(bmn, dtype_of_size(elem_bytes))
            forget()
            choice = choose(bmn, elem_bytes, dev.id.text, dev.limits, align=align)
        k = _kernels[memo] = loader.kernel(choice.config)
    return k


def _check_input(x) -> int:
    if isinstance(x, np.ndarray):
        raise TypeError("autotrans.transpose expects a pycuda GPUArray, got a NumPy array in host "
                        "memory; copy it to the GPU first with pycuda.gpuarray.to_gpu(x)")
    if not driver.is_gpuarray(x):
        raise TypeError(f"autotrans.transpose expects a pycuda GPUArray, got {type(x).__name__}")
    if x.ndim not in (2, 3):
        raise ValueError(f"expected a 2-D (M, N) or 3-D batched (B, M, N) array, got {x.ndim}-D "
                         f"shape {x.shape}")
    e = elem_size(x.dtype)
    if not x.flags.c_contiguous:
        order = "Fortran-ordered" if x.flags.f_contiguous else "non-contiguous (a slice or strided view)"
        raise ValueError(f"the input is {order}; autotrans needs C-contiguous arrays (copy it first)")
    return e


class _Plan:
    """Everything a transpose of one input layout needs, worked out once."""

    def __init__(self, x, tune):
        self.e = _check_input(x)
        self.bmn = as_bmn(x.shape)
        self.dtype = x.dtype
        self.oshape = tuple(x.shape[:-2]) + (x.shape[-1], x.shape[-2])
        self.empty = x.size == 0
        self.tune = tune
        self.new_out = memory.OutputMaker(self.oshape, self.dtype)
        self.launchers = {}   # (src | dst) & 15 -> launch(src, dst, stream)

    def launch(self, src: int, dst: int, stream) -> None:
        low = (src | dst) & 15
        f = self.launchers.get(low)
        if f is None:
            align = 16 if low == 0 else low & -low
            f = self.launchers[low] = kernel_for(self.bmn, self.e, align, self.tune).launcher(self.bmn)
        f(src, dst, stream)


def _check_out(x, out, oshape) -> None:
    if not driver.is_gpuarray(out):
        raise TypeError(f"out must be a pycuda GPUArray, got {type(out).__name__}")
    if tuple(out.shape) != oshape or out.dtype != x.dtype:
        raise ValueError(f"out must have shape {oshape} and dtype {x.dtype}, "
                         f"got {tuple(out.shape)} {out.dtype}")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous")
    if x.nbytes and x.ptr < out.ptr + out.nbytes and out.ptr < x.ptr + x.nbytes:
        raise ValueError("out overlaps the input; a transpose cannot be done in place here")


def transpose(x, out=None, stream=None, *, tune=None):
    """Transpose a C-contiguous GPUArray: (M, N) -> (N, M), or a batch
    (B, M, N) -> (B, N, M). Writes into ``out`` if given, else returns a new
    array. Uses the best cached config for this GPU and shape (see explain());
    tune=True (or AUTOTRANS_TUNE=1) tunes shapes that have no cached result."""
    try:
        plan = _plans[(type(x), x.shape, x.dtype, x.strides, tune)]
    except (KeyError, AttributeError, TypeError):
        plan = _Plan(x, tune)
        _plans[(type(x), x.shape, x.dtype, x.strides, tune)] = plan
    if out is None:
        out = plan.new_out()
    else:
        _check_out(x, out, plan.oshape)
    if not plan.empty:
        plan.launch(int(x.gpudata), int(out.gpudata), stream)
    return out
