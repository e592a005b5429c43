"""The kernel store: compiled kernels and emulators, content-addressed.

Objects are named by the SHA-256 of their bytes and checked against it when
read; index entries name objects by that hash alone (never a path). The store
folder is private to the user (mode 0700, owned by them); if it cannot be
created, a private temporary folder (mkdtemp) serves this process instead.
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
import tempfile
import warnings
from pathlib import Path

from ..core.paths import UnsafePath, atomic_write, cache_root, private_dir

_OBJECT = re.compile(r"^[0-9a-f]{64}$")
MAX_INDEX_BYTES = 1 << 16


class StoreError(RuntimeError):
    """An object in the kernel store is missing or does not match its hash."""


def kernel_dir(root: str | Path | None = None) -> Path:
    """The store folder: ``root``, else <cache root>/kernels; a private
    temporary folder (with a warning) when that cannot be created or written.
    UnsafePath if it exists but is not the user's own."""
    return _usable(Path(root) if root else cache_root() / "kernels")


@functools.lru_cache(maxsize=None)
def _usable(d: Path) -> Path:
    try:
        private_dir(d)
        tempfile.TemporaryFile(dir=d).close()
        return d
    except UnsafePath:
        raise
    except OSError as exc:
        fallback = Path(tempfile.mkdtemp(prefix="autotrans-kernels-"))
        warnings.warn(f"autotrans: {d} cannot be written ({exc.strerror or exc}); compiled kernels "
                      f"are kept in {fallback} for this process", RuntimeWarning, stacklevel=3)
        return fallback


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Store:
    """Objects and index entries under one private folder."""

    def __init__(self, root: str | Path | None = None):
        self.root = kernel_dir(root)

    def put(self, data: bytes, mode: int = 0o600) -> str:
        """Store bytes; returns their hash (the object's name)."""
        name = digest(data)
        path = self._object(name)
        if not path.is_file():
            private_dir(path.parent)
            atomic_write(path, data, mode)
        return name

    def get(self, name: str) -> bytes:
        """The object's bytes, checked against its name (StoreError otherwise)."""
        try:
            data = self._object(name).read_bytes()
        except OSError as exc:
            raise StoreError(f"kernel store object {name} cannot be read ({exc})") from None
        if digest(data) != name:
            raise StoreError(f"kernel store object {name} does not match its hash; "
                             f"remove {self.root} to rebuild the store")
        return data

    def path(self, name: str) -> Path:
        """The object's file after checking its bytes (for programs that run it)."""
        self.get(name)
        return self._object(name)

    def _object(self, name: str) -> Path:
        if not isinstance(name, str) or not _OBJECT.match(name):
            raise StoreError(f"not a kernel store object name: {name!r:.80}")
        return self.root / "objects" / name[:2] / name

    def index_get(self, kind: str, key: str) -> dict | None:
        """The index entry of ``key`` (a text) under ``kind``, if it names an object."""
        path = self._entry(kind, key)
        try:
            if path.stat().st_size > MAX_INDEX_BYTES:
                return None
            entry = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or not _OBJECT.match(str(entry.get("object", ""))):
            return None
        return entry

    def index_put(self, kind: str, key: str, entry: dict) -> None:
        path = self._entry(kind, key)
        private_dir(path.parent)
        atomic_write(path, json.dumps(entry).encode(), 0o600)

    def _entry(self, kind: str, key: str) -> Path:
        return self.root / "index" / kind / f"{digest(key.encode())[:32]}.json"
