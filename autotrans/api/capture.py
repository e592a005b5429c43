"""Shapes met in real runs, for tuning later (Kernel Launcher's capture workflow).

With ``AUTOTRANS_CAPTURE=FILE``, transpose() appends each (shape, dtype) it
served without an exact tuned result to FILE, one JSON line each, once per
process and shape; many processes may append at once (each line is one
O_APPEND write under an exclusive lock). ``autotrans tune --from FILE`` tunes
them all.
"""
from __future__ import annotations

import fcntl
import json
import os
import threading
from pathlib import Path

import numpy as np

from ..core.problem import parse_dtype, positive_bmn

ENV = "AUTOTRANS_CAPTURE"
MAX_FILE_BYTES = 64 << 20
_seen: set = set()
_lock = threading.Lock()


def note(bmn, dtype) -> None:
    """Append (shape, dtype) to $AUTOTRANS_CAPTURE, once per process (no-op without it)."""
    path = os.environ.get(ENV)
    if not path:
        return
    item = (tuple(bmn), np.dtype(dtype).name)
    with _lock:
        if item in _seen:
            return
        _seen.add(item)
    line = (json.dumps({"shape": list(item[0]), "dtype": item[1]}) + "\n").encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass   # capturing is best effort: a transpose never fails for it


def read(path) -> list[tuple[tuple, np.dtype]]:
    """The captured (shape, dtype) pairs of a capture file, deduplicated, in
    first-seen order; ValueError naming the first bad line."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: not a regular file")
    with open(path, "rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{path}: over {MAX_FILE_BYTES >> 20} MiB; not a capture file")
    out: dict = {}
    for i, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            shape, dt = positive_bmn(d["shape"]), parse_dtype(d["dtype"])
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"{path}:{i}: not a capture line ({exc})") from None
        out.setdefault((shape, dt.name), (shape, dt))
    return list(out.values())
