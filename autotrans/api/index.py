"""The winners transpose() chooses from, per (cache file, device, element size):
read once per process through select.usable_entries() and read again only when
the cache file changes (its mtime, size or inode), so a shape never seen before
costs a lookup, not a parse of every stored record. Thread-safe."""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from ..core.device import Limits
from ..core.paths import ENV_DIR
from ..core.problem import as_bmn
from ..results.store import ResultCache
from . import select


@dataclass(frozen=True)
class Stamp:
    """What says the cache file changed: its mtime, size and inode, and SQLite's
    file change counter (header bytes 24-27, bumped by every committed write in
    rollback-journal mode, so two writes within one clock tick still differ).
    All None while the file is missing."""
    mtime_ns: int | None
    size: int | None
    inode: int | None
    counter: bytes | None = None

    @classmethod
    def of(cls, path: Path) -> "Stamp":
        try:
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())
                f.seek(24)
                counter = f.read(4)
        except OSError:
            return cls(None, None, None)
        return cls(st.st_mtime_ns, st.st_size, st.st_ino, counter)


class Index:
    """select.usable_entries() per (cache file, fingerprint, element size), kept
    until the file's Stamp changes; loads counts the reads (for tests)."""

    def __init__(self, shipped=None):
        self._shipped = shipped
        self._tables: dict = {}
        self._lock = threading.Lock()
        self.loads = 0

    def table(self, fingerprint: str, elem_bytes: int, limits: Limits, cache: ResultCache) -> select.Table:
        """The prepared select.Table of this cache file, device and element size."""
        key = (str(cache.path), fingerprint, elem_bytes, limits)
        stamp = Stamp.of(cache.path)
        hit = self._tables.get(key)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        with self._lock:
            hit = self._tables.get(key)
            if hit is not None and hit[0] == stamp:
                return hit[1]
            # the stamp is taken before reading: a write during the read makes the next call read again
            found = select.usable_entries(fingerprint, elem_bytes, cache, shipped=self._shipped)
            table = select.Table(found, elem_bytes, limits)
            self._tables[key] = (stamp, table)
            self.loads += 1
            return table

    def choose(self, shape, elem_bytes: int, fingerprint: str, limits: Limits = Limits(),
               cache: ResultCache | None = None, align: int = 16) -> select.Choice:
        """select.choose() over the indexed entries (cache: default ResultCache())."""
        bmn = as_bmn(shape)
        if min(bmn) < 1:
            return select.choose(bmn, elem_bytes, fingerprint, limits, entries=[], align=align)
        cache = cache if cache is not None else _default_cache()
        return self.table(fingerprint, elem_bytes, limits, cache).choose(bmn, align)

    def clear(self) -> None:
        with self._lock:
            self._tables.clear()


def _default_cache() -> ResultCache:
    """ResultCache() of the folder the environment names now, made once per folder."""
    env = os.environ.get(ENV_DIR)
    rc = _caches.get(env)
    if rc is None:
        rc = _caches[env] = ResultCache()
    return rc


_caches: dict = {}
INDEX = Index()
