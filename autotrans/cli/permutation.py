"""What ``--axes`` commands share (tune, explain): N-d SHAPE arguments, AXES,
and a canonical problem (core.layout) in one line."""
from __future__ import annotations

import argparse
import re

from ..core import layout
from ..core.problem import MAX_DIM, format_shape, parse_shape


class Shape(tuple):
    """A parsed SHAPE argument (1 to 8 dimensions) and, where it is not a
    transpose() shape (2 or 3 dimensions), why not (``problem``)."""
    problem: str | None = None


_ANY_SHAPE = re.compile(r"^\s*[0-9]+(\s*[xX*,]\s*[0-9]+)*\s*$", re.ASCII)


def parse_nd_shape(text: str) -> tuple:
    """"64x512x16x64" -> (64, 512, 16, 64): 1 to MAX_RANK (8) positive
    dimensions, written as parse_shape takes them; ValueError ("bad shape
    ...") for anything else."""
    try:
        return parse_shape(text)
    except ValueError as exc:
        first = exc
    if not isinstance(text, str) or not _ANY_SHAPE.match(text):
        raise first
    shown = repr(text if len(text) <= 60 else text[:50] + "...")
    parts = [p.lstrip("0") or "0" for p in re.split(r"\s*[xX*,]\s*", text.strip())]
    if len(parts) > layout.MAX_RANK:
        raise ValueError(f"bad shape {shown}: at most {layout.MAX_RANK} dimensions (with --axes; "
                         "MxN or BxMxN without)")
    if any(len(p) > len(str(MAX_DIM)) for p in parts) or max(map(int, parts)) > MAX_DIM:
        raise ValueError(f"bad shape {shown}: dimensions must be at most 2**62 ({MAX_DIM})")
    dims = tuple(int(p) for p in parts)
    if min(dims) < 1:
        raise ValueError(f"bad shape {shown}: dimensions must be positive")
    return dims


def shape_arg(text):
    """argparse type: a Shape (parse_nd_shape); whether its rank suits the
    command (2 or 3 without --axes) is checked once all arguments are read."""
    try:
        dims = parse_nd_shape(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    out = Shape(dims)
    if len(dims) not in (2, 3):
        try:
            parse_shape(text)
        except ValueError as exc:
            out.problem = str(exc)
    return out


def axes_arg(text):
    """argparse type: "0,2,1,3" -> (0, 2, 1, 3) (checked against the shape's rank later)."""
    if not isinstance(text, str) or not re.fullmatch(r"\s*[0-9]{1,2}(\s*,\s*[0-9]{1,2}){0,%d}\s*"
                                                   % (layout.MAX_RANK - 1), text, re.ASCII):
        raise argparse.ArgumentTypeError(f"bad axes {text!r:.60}: expected comma-separated axis numbers like "
                                         "0,2,1,3 (at most 8)")
    return tuple(int(a) for a in text.split(","))



def describe(problem) -> str:
    """A canonical problem in one line (strided ones by their cache text)."""
    from ..results.keys import problem_text
    if isinstance(problem, layout.CopyProblem):
        return f"copy of {problem.nbytes} bytes"
    if isinstance(problem, layout.TransposeProblem):
        return f"transpose {format_shape(problem.bmn)} of {problem.elem}-byte elements"
    return problem_text(problem)
