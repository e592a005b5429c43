"""Where autotrans keeps things on disk, and the two ways it writes there:
private folders (mode 0700, owned by the user) and atomic file writes."""
from __future__ import annotations

import functools
import os
import stat
import tempfile
from pathlib import Path

import platformdirs

ENV_DIR = "AUTOTRANS_CACHE_DIR"


class UnsafePath(OSError):
    """A folder autotrans would write kernels into is not the user's own."""


def cache_root(path: str | Path | None = None) -> Path:
    """The cache folder: ``path`` if given, else $AUTOTRANS_CACHE_DIR, else the
    user cache directory (platformdirs)."""
    if path:
        return Path(path)
    env = os.environ.get(ENV_DIR)
    return Path(env) if env else Path(platformdirs.user_cache_dir("autotrans"))


@functools.lru_cache(maxsize=None)
def template_dir() -> Path:
    """The folder holding the kernel templates and families: the checkout's
    ``cuda_templates/``, or the installed copy."""
    here = Path(__file__).resolve().parent.parent
    for d in (here.parent / "cuda_templates", here / "cuda_templates"):
        if (d / "common.cuh").is_file():
            return d
    raise FileNotFoundError("autotrans: cuda_templates/ not found beside the package")


def private_dir(path: Path) -> Path:
    """``path`` as a folder only this user can write: created with mode 0700;
    an existing one must be a real folder owned by the user and writable by
    nobody else (UnsafePath otherwise)."""
    path = Path(path)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(f"{path} is not a folder")
    if st.st_uid != os.getuid():
        raise UnsafePath(f"{path} belongs to another user (uid {st.st_uid}); refusing to use it")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafePath(f"{path} can be written by other users (mode {stat.S_IMODE(st.st_mode):o}); "
                         "refusing to use it")
    return path


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder,
    fsync'd, then renamed over it: readers see the old file or the new one."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
