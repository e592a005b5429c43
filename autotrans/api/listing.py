"""What the cache holds, as rows for people (autotrans show) and programs."""
from __future__ import annotations

from ..backend import cuda as driver
from ..core.problem import as_bmn
from ..results.store import ResultCache, shipped_entries
from ..tuning.space import space_id


def cached(all_devices: bool = False, *, fingerprint: str | None = None, cache_dir=None) -> list[dict]:
    """Cached best configs as rows (shape, dtype, config, us, GB/s, fraction of
    memcpy, date, versions, device), for this GPU or, with all_devices, all."""
    if not all_devices and fingerprint is None:
        fingerprint = driver.device().id.text
    rows = []
    for key, rec in ResultCache(cache_dir).items(device=None if all_devices else fingerprint):
        rows.append({"device": key.device, "shape": tuple(key.shape), "elem_bytes": key.elem_bytes,
                     "dtype": rec.get("dtype", f"{key.elem_bytes}B"), "config": rec.get("key"),
                     "time_us": rec.get("time_us"), "gbps": rec.get("gbps"),
                     "frac_memcpy": rec.get("frac_memcpy"), "date": rec.get("date"),
                     "versions": rec.get("versions", {}), "current": key.templates == space_id()})
    return rows


def find_record(shape, elem_bytes: int, cache_dir=None, device: str | None = None):
    """The newest cached tuning record of this shape and element size, of any
    device (or only ``device``): the user's cache first, then the results shipped
    with autotrans; current templates beat stale ones. Returns (CacheKey, record)
    or None. The record gets "shape", "elem_bytes" and "device" from the key
    where it lacks them."""
    bmn = as_bmn(shape)
    sid = space_id()
    for entries in (ResultCache(cache_dir).items(), shipped_entries()):
        hits = [(k, r) for k, r in entries
                if tuple(k.shape) == bmn and k.elem_bytes == elem_bytes and isinstance(r, dict)
                and (device is None or k.device == device)]
        if hits:
            key, rec = max(hits, key=lambda kr: (kr[0].templates == sid, str(kr[1].get("date", ""))))
            rec = dict(rec)
            rec.setdefault("shape", list(key.shape))
            rec.setdefault("elem_bytes", key.elem_bytes)
            rec.setdefault("device", key.device)
            return key, rec
    return None
