"""What the results layer warns about and raises."""
from __future__ import annotations


class CacheWarning(UserWarning):
    """The cache could not be used as asked (not writable, busy, corrupt, ...)."""


class InvalidRecordWarning(UserWarning):
    """Entries of a cache, an export file or the shipped results were invalid and skipped."""


class CacheBusy(RuntimeError):
    """Another process held the cache for longer than the timeout."""


class CacheWriteError(RuntimeError):
    """A write to the cache failed (disk full, read-only, ...); nothing was changed."""


class CacheReadError(RuntimeError):
    """The cache exists but could not be read (unreadable, busy, damaged)."""
