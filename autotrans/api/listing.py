"""What the cache holds, as rows for people (autotrans show) and programs."""
from __future__ import annotations

from ..backend import cuda as driver
from ..results.shipped import for_device, shipped_entries
from ..results.store import ResultCache
from ..tuning.space import space_id
from .select import find_record

__all__ = ["cached", "find_record"]


def cached(all_devices: bool = False, *, fingerprint: str | None = None, cache_dir=None,
           shipped: bool = False) -> list[dict]:
    """Cached best configs as rows (shape, dtype, config, us, GB/s, fraction of
    memcpy, date, versions, device), for this GPU or, with all_devices, all.
    With ``shipped``, the results shipped with autotrans instead of the
    cache's: those this GPU uses (its model's, any driver, else its sibling's:
    results.shipped.for_device), or all.
    Invalid entries are skipped (with one warning)."""
    if not all_devices and fingerprint is None:
        fingerprint = driver.device().id.text
    sid = space_id()
    want = None if all_devices else fingerprint
    pairs = for_device(shipped_entries(), want) if shipped else ResultCache(cache_dir).items(device=want)
    return [{"device": key.device, "shape": key.shape, "elem_bytes": key.elem_bytes, "dtype": rec.dtype,
             "config": rec.best.key, "time_us": rec.time_us, "gbps": rec.gbps,
             "frac_memcpy": rec.frac_memcpy, "date": rec.date, "versions": dict(rec.versions),
             "current": key.templates == sid}
            for key, rec in pairs]
