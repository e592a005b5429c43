"""Which config a shape gets: an exact cache hit, the shipped result, the
nearest tuned shape, or a default; explain() says which and why."""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..backend import cuda as driver
from ..core.device import DeviceId, Limits
from ..core.problem import as_bmn, elem_size
from ..kernels.config import KernelConfig
from ..results.store import CacheKey, ResultCache, shipped_entries
from ..tuning.space import default_config, fit_problems, space_id


@dataclass(frozen=True)
class Choice:
    """The config transpose() uses for a shape, and why."""
    config: KernelConfig
    source: str                  # "exact", "shipped", "nearest", "default"
    entry: CacheKey | None = None
    reason: str = ""

    def __str__(self) -> str:
        return f"{self.config.key}  [{self.source}] {self.reason}"


def _config_of(record: dict) -> KernelConfig | None:
    try:
        return KernelConfig.from_dict(record["config"])
    except (KeyError, TypeError, ValueError):
        return None


def _tuned(fingerprint: str, elem_bytes: int, cache: ResultCache, shipped):
    """(source, key, record) of results usable on this device: own cache first."""
    sid, hw = space_id(), DeviceId.from_text(fingerprint).hardware
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
        fingerprint, limits = dev.id.text, dev.limits
    return choose(shape, elem_size(dtype), fingerprint, limits, ResultCache(cache_dir))
