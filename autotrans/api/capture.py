"""Shapes met in real runs, for tuning later (Kernel Launcher's capture workflow).

With ``AUTOTRANS_CAPTURE=FILE``, transpose() appends each (shape, dtype) it
served without an exact tuned result to FILE, and permute() each strided
problem it ran without one (its problem text, cast and epilogue), one JSON
line each, once per process; many processes may append at once (each line is
one O_APPEND write under an exclusive lock). ``autotrans tune --from FILE``
tunes them all.
"""
from __future__ import annotations

import fcntl
import json
import os
import stat
import threading
from pathlib import Path

import numpy as np

from ..core.problem import parse_dtype, positive_bmn
from ..results.keys import check_op, problem_from_text, problem_text

ENV = "AUTOTRANS_CAPTURE"
MAX_FILE_BYTES = 64 << 20
_seen: set = set()
_lock = threading.Lock()


def note(bmn, dtype) -> None:
    """Append (shape, dtype) to $AUTOTRANS_CAPTURE, once per process (no-op without it)."""
    item = (tuple(bmn), np.dtype(dtype).name)
    _append(item, {"shape": list(item[0]), "dtype": item[1]})


def note_problem(problem, cast: str = "none", epilogue: str = "none") -> None:
    """Append a strided problem (with its cast and epilogue) to $AUTOTRANS_CAPTURE,
    once per process (no-op without it)."""
    text = problem_text(problem)
    _append((text, cast, epilogue), {"problem": text, "cast": cast, "epilogue": epilogue})


def _append(item, line: dict) -> None:
    """One JSON line to $AUTOTRANS_CAPTURE, unless this process wrote ``item`` already."""
    path = os.environ.get(ENV)
    if not path:
        return
    with _lock:
        if item in _seen:
            return
        _seen.add(item)
    line = (json.dumps(line) + "\n").encode()
    try:
        # O_NONBLOCK: a FIFO (or device) there must not stall the transpose
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):   # anything else is skipped
                fcntl.flock(fd, fcntl.LOCK_EX)
                os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass   # capturing is best effort: a transpose never fails for it


def read(path) -> list[tuple[tuple, np.dtype]]:
    """The captured (shape, dtype) pairs of a capture file, deduplicated, in
    first-seen order; ValueError naming the first bad line."""
    return read_all(path)[0]


def read_problems(path) -> list[tuple]:
    """The captured strided problems of a capture file as (problem, cast,
    epilogue), deduplicated, in first-seen order; ValueError naming the first bad line."""
    return read_all(path)[1]


def read_all(path) -> tuple[list, list]:
    """(shape pairs, problems) of a capture file: every line one or the other."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: not a regular file")
    with open(path, "rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{path}: over {MAX_FILE_BYTES >> 20} MiB; not a capture file")
    shapes: dict = {}
    problems: dict = {}
    for i, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            if isinstance(d, dict) and "problem" in d:
                item = _problem(d)
                problems.setdefault((problem_text(item[0]),) + item[1:], item)
            else:
                shape, dt = positive_bmn(d["shape"]), parse_dtype(d["dtype"])
                shapes.setdefault((shape, dt.name), (shape, dt))
        except (ValueError, TypeError, KeyError, RecursionError) as exc:    # RecursionError: JSON nested too deep
            raise ValueError(f"{path}:{i}: not a capture line ({exc})") from None
    return list(shapes.values()), list(problems.values())


def _problem(d: dict) -> tuple:
    """(problem, cast, epilogue) of a problem line, each checked (keys.check_op)."""
    if set(d) != {"problem", "cast", "epilogue"}:
        raise ValueError(f"a problem line holds problem, cast and epilogue, not {sorted(d)}")
    problem = problem_from_text(d["problem"])
    check_op(problem, d["cast"], d["epilogue"])
    return problem, d["cast"], d["epilogue"]
