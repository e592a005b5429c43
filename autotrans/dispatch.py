"""transpose(): pick a config for a shape (cache hit, nearest tuned shape, or a
default), launch it; explain() and cached() say what was chosen and stored."""
from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass

import numpy as np

from . import driver
from .cache import CacheKey, ResultCache, shipped_entries
from .compile import compile_configs
from .config import KernelConfig, as_bmn, dtype_of_size, elem_size
from .space import Limits, default_config, fit_problems, space_id

TUNE_ENV = "AUTOTRANS_TUNE"


@dataclass(frozen=True)
class Choice:
    """The config transpose() uses for a shape, and why."""
    config: KernelConfig
    source: str                  # "exact", "shipped", "nearest", "default"
    entry: CacheKey | None = None
    reason: str = ""

    def __str__(self) -> str:
        return f"{self.config.key}  [{self.source}] {self.reason}"


def _hardware(fingerprint: str) -> str:
    return "|".join(fingerprint.split("|")[:3])


def _config_of(record: dict) -> KernelConfig | None:
    try:
        return KernelConfig.from_dict(record["config"])
    except (KeyError, TypeError, ValueError):
        return None


def _tuned(fingerprint: str, elem_bytes: int, cache: ResultCache, shipped):
    """(source, key, record) of results usable on this device: own cache first."""
    sid, hw = space_id(), _hardware(fingerprint)
    own = [("exact", k, r) for k, r in cache.items(device=fingerprint)
           if k.templates == sid and k.elem_bytes == elem_bytes]
    shipped = [("shipped", k, r) for k, r in (shipped_entries() if shipped is None else shipped)
               if k.hardware == hw and k.templates == sid and k.elem_bytes == elem_bytes]
    return own + shipped


def _distance(a, b) -> float:
    return math.dist([math.log(x) for x in a], [math.log(x) for x in b])


def choose(shape, elem_bytes: int, fingerprint: str, limits: Limits = Limits(),
           cache: ResultCache | None = None, align: int = 16, shipped=None) -> Choice:
    """The config for (shape, elem_bytes) on the device with this fingerprint.

    Order: an exact entry of the user's cache, then of the shipped results, then
    the tuned shape nearest in (log B, log M, log N), then a built-in default.
    Entries whose config cannot run here (device limits, row or pointer
    alignment ``align``) are skipped, with a warning for exact hits.
    ``shipped``: the shipped (key, record) list (default: cache.shipped_entries()).
    """
    bmn = as_bmn(shape)
    cache = cache if cache is not None else ResultCache()
    usable = []
    for source, key, rec in _tuned(fingerprint, elem_bytes, cache, shipped):
        cfg = _config_of(rec)
        if cfg is None:
            continue
        why = fit_problems(cfg, bmn, limits) + ([f"pointers aligned to {align} B < {cfg.pointer_align}"]
                                                if cfg.pointer_align > align else [])
        if tuple(key.shape) == bmn:
            if not why:
                return Choice(cfg, source, key, "tuned for this shape"
                              + (" (shipped with autotrans)" if source == "shipped" else ""))
            warnings.warn(f"autotrans: cached config {cfg.key} for {bmn} cannot run here "
                          f"({'; '.join(why)}); using another", RuntimeWarning, stacklevel=3)
        elif not why:
            usable.append((_distance(key.shape, bmn), source != "exact", key, cfg))
    if usable:
        d, _, key, cfg = min(usable, key=lambda u: u[:2])
        return Choice(cfg, "nearest", key, f"nearest tuned shape {'x'.join(map(str, key.shape))} "
                                           f"(log-distance {d:.2f})")
    cfg = default_config(bmn, elem_bytes, limits, max_vec=align)
    return Choice(cfg, "default", None, "no tuned result for this device and element size")


def explain(shape, dtype=np.float32, *, fingerprint: str | None = None, cache_dir=None) -> Choice:
    """Which config transpose() would use for ``shape`` and ``dtype``, and why.
    Without a GPU, pass the ``fingerprint`` of the device to ask about."""
    limits = Limits()
    if fingerprint is None:
        dev = driver.device()
        fingerprint, limits = dev.fingerprint, dev.limits
    return choose(shape, elem_size(dtype), fingerprint, limits, ResultCache(cache_dir))


def cached(all_devices: bool = False, *, fingerprint: str | None = None, cache_dir=None) -> list[dict]:
    """Cached best configs as rows (shape, dtype, config, us, GB/s, fraction of
    memcpy, date, versions, device), for this GPU or, with all_devices, all."""
    if not all_devices and fingerprint is None:
        fingerprint = driver.device().fingerprint
    rows = []
    for key, rec in ResultCache(cache_dir).items(device=None if all_devices else fingerprint):
        rows.append({"device": key.device, "shape": tuple(key.shape), "elem_bytes": key.elem_bytes,
                     "dtype": rec.get("dtype", f"{key.elem_bytes}B"), "config": rec.get("key"),
                     "time_us": rec.get("time_us"), "gbps": rec.get("gbps"),
                     "frac_memcpy": rec.get("frac_memcpy"), "date": rec.get("date"),
                     "versions": rec.get("versions", {}), "current": key.templates == space_id()})
    return rows


# -- launching --------------------------------------------------------------

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
        choice = choose(bmn, elem_bytes, dev.fingerprint, dev.limits, align=align)
        if choice.source not in ("exact", "shipped") and _want_tune(tune):
            from .tuner import tune as run_tune
            run_tune(bmn, dtype_of_size(elem_bytes))
            choice = choose(bmn, elem_bytes, dev.fingerprint, dev.limits, align=align)
        c = compile_configs([choice.config], dev.arch)[choice.config.key]
        k = _kernels[memo] = driver.Kernel(choice.config, c)
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
        self.new_out = driver.OutputMaker(self.oshape, self.dtype)
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
