"""Which config a shape gets: an exact cache hit, the shipped result, the
nearest tuned shape of a similar class, or a default; explain() says which and why."""
from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..backend import cuda as driver
from ..core.device import DeviceId, Limits
from ..core.problem import as_bmn, elem_size
from ..kernels.config import KernelConfig
from ..results.record import TuneRecord
from ..results.shipped import for_device
from ..results.store import CacheKey, ResultCache, shipped_entries
from ..tuning.space import default_config, space_id, whole_default, wide_default, widest_vector
from . import predict, specialise

SKINNY = 64          # a matrix with a side shorter than this is "skinny"
ASPECT = 4.0         # rows/cols beyond this (either way) is "tall" or "wide"
SIZE_BANDS = (1 / 32, 1 / 8, 1 / 2, 2)   # bytes / L2 that bound the size bands (NOTES 26)
L2_FALLBACK = 50 << 20                    # the L2 assumed where a record does not say

Entry = tuple  # (source, CacheKey, TuneRecord); source "exact" (the user's cache) or "shipped"


EMPTY = "an empty shape moves nothing"     # the reason explain() gives for one


@dataclass(frozen=True)
class Choice:
    """The config transpose() uses for a shape, and why."""
    config: KernelConfig
    source: str                  # "exact", "shipped", "nearest", "default"
    entry: CacheKey | None = None
    reason: str = ""

    def __str__(self) -> str:
        return f"{self.config.key}  [{self.source}] {self.reason}"


def _entries(cache: ResultCache, ship: list, elem_bytes: int | None, *, device: str | None = None,
             templates: str | None = None) -> list[Entry]:
    """(source, key, record) of the user's cache, then of the shipped pairs
    ``ship``: only valid records whose key and best config are of
    ``elem_bytes`` (any when None), of ``device`` (the user's cache; any
    when None), made by ``templates`` (any when None)."""
    def ok(k: CacheKey, r: TuneRecord) -> bool:
        return ((elem_bytes is None or (k.elem_bytes == elem_bytes and r.best.elem_bytes == elem_bytes))
                and r.best.elem_bytes == k.elem_bytes and (templates is None or k.templates == templates))

    own = [("exact", k, r) for k, r in cache.items(device=device) if ok(k, r)]
    return own + [("shipped", k, r) for k, r in ship if ok(k, r)]


def _shipped(shipped) -> list:
    """The caller's shipped (key, record) pairs, typed, or shipped_entries()."""
    return shipped_entries() if shipped is None else _typed(shipped)


def _typed(pairs) -> list:
    """(key, TuneRecord) pairs of a caller's list; stored-form dicts are validated, invalid ones dropped."""
    out = []
    for k, r in pairs:
        if not isinstance(r, TuneRecord):
            try:
                r = TuneRecord.from_json(r, k)
            except ValueError:
                continue
        out.append((k, r))
    return out


def usable_entries(fingerprint: str, elem_bytes: int, cache: ResultCache,
                   shipped=None) -> list[Entry]:
    """The tuned results choose() may use on the device with this fingerprint,
    for this element size: the user's own (same device and software), then the
    shipped ones (its GPU model's, else its sibling's: shipped.for_device),
    all made by the current templates.
    ``shipped``: the shipped (key, record) list (default: shipped_entries())."""
    dev = DeviceId.from_text(fingerprint)
    return _entries(cache, for_device(_shipped(shipped), dev.text), elem_bytes, device=dev.text,
                    templates=space_id())


def shape_class(bmn, elem_bytes: int) -> tuple:
    """(row alignment, skinny, aspect) of a shape: the widest vector every input
    and output row is aligned to; whether a side is under SKINNY; -1 tall, 0
    squarish, 1 wide."""
    _, m, n = bmn
    aspect = 0 if 1 / ASPECT <= n / m <= ASPECT else (1 if n > m else -1)
    return (widest_vector(bmn, elem_bytes), min(m, n) < SKINNY, aspect)


def size_band(bmn, elem_bytes: int, l2_bytes: int) -> int:
    """Which of the SIZE_BANDS the bytes of a shape fall in, against the L2."""
    nbytes = math.prod(bmn) * elem_bytes
    return sum(nbytes >= f * (l2_bytes or L2_FALLBACK) for f in SIZE_BANDS)


@dataclass(frozen=True)
class _Row:
    """One usable entry with what choose() needs of it worked out once."""
    source: str
    key: CacheKey
    cfg: KernelConfig
    fixed: tuple          # problems that do not depend on the shape (device limits)
    cls: tuple            # shape_class of the tuned shape
    logs: tuple           # log of its B, M, N
    band: int             # size_band of the tuned shape
    aligned: object       # the family's aligned_for(cfg, m, n)
    pointer_align: int
    text: str             # the key's text (the last tie-break)
    record: TuneRecord    # its timings of every candidate (predict.rerank)


SKINNY_VARIANTS = ("narrow", "short")   # the skinny family's variants (cuda_templates/skinny.py)


class Table:
    """usable_entries() of one element size prepared for choose() on a device
    with ``limits``: exact hits by shape, and every row's class, logs, family
    rules and device-limit problems found once, so choosing for a new shape
    costs a short loop of arithmetic."""

    def __init__(self, entries: list[Entry], elem_bytes: int, limits: Limits):
        self.elem_bytes, self.limits = elem_bytes, limits
        self.rows: list[_Row] = []          # rows that can run here, for nearest choices
        self._timed: dict = {}              # row text -> its predict.Timed table, made on first use
        self.exact: dict = {}               # shape -> every row of it, in entry order
        entries = [(s, k, r) for s, k, r in entries if r.best.elem_bytes == elem_bytes == k.elem_bytes]
        # entries are of this device's hardware: their L2 is this device's
        self.l2 = max((r.l2_bytes for _, _, r in entries), default=0)
        for source, key, rec in entries:
            cfg = rec.best
            row = _Row(source, key, cfg, tuple(limits.problems(cfg.threads, cfg.smem_bytes)),
                       shape_class(key.shape, elem_bytes), tuple(math.log(x) for x in key.shape),
                       size_band(key.shape, elem_bytes, self.l2), cfg.family.aligned_for, cfg.pointer_align,
                       key.text, rec)
            self.exact.setdefault(key.shape, []).append(row)
            if not row.fixed:       # another shape's nearest takes the config without its fixed shape
                self.rows.append(dataclasses.replace(row, cfg=cfg.generic()) if cfg.fixed else row)

    @staticmethod
    def _why(row: _Row, bmn, align: int) -> list[str]:
        why = list(row.fixed)
        cfg = row.cfg
        if not row.aligned(cfg, bmn[1], bmn[2]):
            why.append(f"rows of {bmn[2]} and {bmn[1]} elements of {cfg.elem_bytes} B are not "
                       f"{cfg.vec_bytes}-byte aligned")
        if row.pointer_align > align:
            why.append(f"pointers aligned to {align} B < {row.pointer_align}")
        return why

    def _table(self, row: _Row) -> list:
        """predict.timings() of the row's record, once."""
        t = self._timed.get(row.text)
        if t is None:
            t = self._timed[row.text] = predict.timings(row.record)
        return t

    def choose(self, bmn, align: int = 16) -> Choice:
        """choose() for a validated (B, M, N) over this table."""
        for row in self.exact.get(bmn, ()):
            why = self._why(row, bmn, align)
            if not why:
                return Choice(row.cfg, row.source, row.key, "tuned for this shape"
                              + (f" (shipped with autotrans, tuned on {row.key.device_id.name})"
                                 if row.source == "shipped" else ""))
            warnings.warn(f"autotrans: cached config {row.cfg.key} for {bmn} cannot run here "
                          f"({'; '.join(why)}); using another", RuntimeWarning, stacklevel=3)
        whole = whole_default(bmn, self.elem_bytes, self.limits) if align >= 16 else None
        if whole is not None:      # held-out batches: 0.92-1.00 of the fastest, nearest picks 0.45-0.90 (NOTES 55)
            return Choice(whole, "default", None, "a batch of small matrices: the whole family's 4 KiB tile")
        wide = wide_default(bmn, self.elem_bytes, self.limits)
        if wide is not None:       # 0.93-0.99 of a memcpy, the other tiles' best 0.76-0.96 (NOTES 59)
            return Choice(wide, "default", None, "few long rows, not 16-byte aligned: the wide short tile")
        return self.nearest(bmn, align)

    def nearest(self, bmn, align: int = 16) -> Choice:
        """choose()'s pick without an exact hit or a batch of small matrices:
        the nearest tuned shape's, the skinny default, or the default."""
        want, best, best_rank = shape_class(bmn, self.elem_bytes), None, None
        band = size_band(bmn, self.elem_bytes, self.l2)
        logs, (_, m, n), dist = tuple(math.log(x) for x in bmn), bmn, math.dist
        for row in self.rows:
            if row.pointer_align > align or row.key.shape == bmn or not row.aligned(row.cfg, m, n):
                continue
            c = row.cls
            rank = (c[0] != want[0], c[1] != want[1], abs(c[2] - want[2]), abs(row.band - band),
                    dist(row.logs, logs), row.source != "exact", row.text)
            if best_rank is None or rank < best_rank:
                best, best_rank = row, rank
        same = best is not None and best_rank[:3] == (False, False, 0)
        if best is not None and not same:
            cfg = default_config(bmn, self.elem_bytes, self.limits, max_vec=align)
            if cfg.variant in SKINNY_VARIANTS:   # a short side the skinny family holds whole beats another class's winner
                return Choice(cfg, "default", None, "a short side: the skinny family's default (no tuned shape "
                                                    "of this class)")
        if best is not None:
            cfg = predict.rerank(best.record, best.cfg, self._table(best), bmn, align, self.limits)
            how = "its winner" if cfg == best.cfg else "its timings scaled to this shape's tile fill and blocks"
            made = f"; shipped, tuned on {best.key.device_id.name}" if best.source == "shipped" else ""
            return Choice(cfg, "nearest", best.key, f"nearest tuned shape {'x'.join(map(str, best.key.shape))} "
                                                    f"({'same' if same else 'nearest'} shape class, "
                                                    f"log-distance {best_rank[4]:.2f}; {how}{made})")
        cfg = default_config(bmn, self.elem_bytes, self.limits, max_vec=align)
        return Choice(cfg, "default", None, "no tuned result for this device and element size")


def choose(shape, elem_bytes: int, fingerprint: str, limits: Limits = Limits(),
           cache: ResultCache | None = None, align: int = 16, shipped=None,
           entries: list[Entry] | None = None) -> Choice:
    """The config for (shape, elem_bytes) on the device with this fingerprint.

    Order: an exact entry of the user's cache, then of the shipped results;
    then the nearest tuned shape: of the same row-alignment class, skinny
    class and aspect class if there is one, then of the nearest size band
    (size_band: bytes against the L2), then nearest in (log B, log M,
    log N), and of the candidates its tuning timed, the one predicted
    fastest for this shape (predict.rerank); then a built-in default. Entries whose config cannot run here
    (device limits, row or pointer alignment ``align``) are skipped, with a
    warning for exact hits. ``entries``: usable_entries() gathered once
    (cache and shipped are then not read).
    """
    bmn = as_bmn(shape)
    if entries is None:
        entries = usable_entries(fingerprint, elem_bytes, cache if cache is not None else ResultCache(),
                                 shipped)
    if min(bmn) < 1:
        return Choice(default_config(bmn, elem_bytes, limits, max_vec=align), "default", None,
                      EMPTY)
    return Table(entries, elem_bytes, limits).choose(bmn, align)


def explain(shape, dtype=np.float32, *, fingerprint: str | None = None, cache_dir=None) -> Choice:
    """Which config transpose() would use for ``shape`` and ``dtype``, and why.
    Without a GPU, pass the ``fingerprint`` of the device to ask about."""
    limits = Limits()
    if fingerprint is None:
        dev = driver.device()
        fingerprint, limits = dev.id.text, dev.limits
    e = elem_size(dtype)
    choice = choose(shape, e, fingerprint, limits, ResultCache(cache_dir))
    fixed = specialise.candidate(choice.config, as_bmn(shape), e) \
        if choice.source != "exact" and specialise.enabled() and min(as_bmn(shape)) > 0 else None
    if fixed is None:
        return choice
    return dataclasses.replace(choice, reason=f"{choice.reason}; AUTOTRANS_SPECIALISE: compiled for this shape "
                                              f"in the background, then {fixed.key}")


def find_record(shape, elem_bytes: int, cache_dir=None, device: str | None = None,
                shipped=None) -> tuple[CacheKey, TuneRecord] | None:
    """The newest valid tuning record of this shape and element size, of any
    device (or only ``device``): the user's cache first, then the results shipped
    with autotrans; current templates beat stale ones. (CacheKey, TuneRecord) or None."""
    bmn = as_bmn(shape)
    sid = space_id()
    ship = [(k, r) for k, r in _shipped(shipped) if device is None or k.device == device]
    found = _entries(ResultCache(cache_dir), ship, elem_bytes, device=device)
    for source in ("exact", "shipped"):
        hits = [(k, r) for s, k, r in found if s == source and k.shape == bmn]
        if hits:
            return max(hits, key=lambda kr: (kr[0].templates == sid, kr[1].date))
    return None


__all__ = ["Choice", "Table", "choose", "explain", "usable_entries", "find_record", "shape_class", "size_band"]
