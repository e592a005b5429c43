"""What every command shares: one-line errors and warnings, text made safe for
a terminal, the cache folder, the GPU, the argument types and the subparser
builder."""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import unicodedata
import warnings
from pathlib import Path

import numpy as np

from ..core.paths import ENV_DIR, cache_root
from ..core.problem import parse_dtype, parse_shape
from ..results.store import FILENAME, CacheWarning, ResultCache
from ..results.transfer import export_target

PROG = "autotrans"
EXIT_ERROR = 1
EXIT_USAGE = 2
MAX_MESSAGE = 600
# Control characters, format characters (bidi overrides, zero-width joiners),
# line/paragraph separators and lone surrogates: shown as escapes, never sent
# to the terminal as they are.
_UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}


class UserError(Exception):
    """A problem to report in one line, without a traceback."""


# ----------------------------------------------------------------------------
# Text for the terminal
# ----------------------------------------------------------------------------

def _escape(ch: str) -> str:
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def printable(text) -> str:
    """``text`` (anything: str() is taken) with every control or formatting
    character written as a visible escape (ESC -> ``\\x1b``), so that text
    read from a cache or a file cannot drive the terminal."""
    return "".join(_escape(c) if unicodedata.category(c) in _UNSAFE_CATEGORIES else c
                   for c in str(text))


def one_line(message) -> str:
    """Any message as one printable line of bounded length."""
    text = printable(" ".join(str(message).split()))
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 3] + "..."


def plural(n: int, word: str, many: str | None = None) -> str:
    """"1 entry", "2 entries"."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def err(message) -> None:
    """``autotrans: error: MESSAGE`` on stderr."""
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)


def note(message) -> None:
    """``autotrans: MESSAGE`` on stderr."""
    print(f"{PROG}: {one_line(message)}", file=sys.stderr)


@contextlib.contextmanager
def warnings_as_lines(seen: list):
    """Show warnings as one ``autotrans: warning: ...`` line each (a line once,
    however often it is warned); collect them in ``seen`` as (category, text)."""
    def show(message, category, filename, lineno, file=None, line=None):
        shown = (category, str(message)) in seen
        seen.append((category, str(message)))
        if not shown:
            print(f"{PROG}: warning: {one_line(message)}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = show
        yield


def cache_write_failed(seen: list) -> bool:
    """Whether a CacheWarning was among the warnings ``seen``."""
    return any(issubclass(c, CacheWarning) for c, _ in seen)


# ----------------------------------------------------------------------------
# The cache folder and the GPU
# ----------------------------------------------------------------------------

def cache_folder(cache_dir) -> Path:
    """The cache folder a command will use (--cache-dir, else $AUTOTRANS_CACHE_DIR,
    else the user cache directory); the cache file itself stands for its folder.
    UserError if that path, or the nearest existing folder above it, is not a folder."""
    folder = cache_root(cache_dir)
    if folder.name == FILENAME and folder.is_file():
        return folder.parent
    origin = "--cache-dir" if cache_dir else f"${ENV_DIR}" if os.environ.get(ENV_DIR) else "cache folder"
    for p in (folder, *folder.parents):
        if p.exists() or p.is_symlink():
            if not p.is_dir():
                where = "is" if p == folder else f"is inside {p}, which is"
                raise UserError(f"{origin} {folder} {where} not a folder (a cache folder holds "
                                f"{FILENAME}); point it at a folder")
            break
    return folder


@contextlib.contextmanager
def cache_env(cache_dir):
    """Point AUTOTRANS_CACHE_DIR at ``cache_dir`` while the command runs, so that
    everything (tuning, compiled kernels, benchmark runs) uses that folder."""
    if not cache_dir:
        yield
        return
    old = os.environ.get(ENV_DIR)
    os.environ[ENV_DIR] = str(cache_dir)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV_DIR, None)
        else:
            os.environ[ENV_DIR] = old


def gpu():
    """(DeviceInfo, None) or (None, reason)."""
    from ..backend.cuda import GPUUnavailable, device
    try:
        return device(), None
    except GPUUnavailable as exc:
        return None, str(exc)


def need_gpu(what: str):
    """The DeviceInfo; UserError naming ``what`` if there is no usable GPU."""
    dev, why = gpu()
    if dev is None:
        raise UserError(f"no GPU: {what} needs an NVIDIA GPU and PyCUDA ({why})")
    return dev


def example_keys() -> dict:
    """Config keys for help texts, made by this version's KernelConfig."""
    from ..kernels.config import classic
    from ..tuning.space import default_config
    return {"tile_key": classic("tile", 4).key, "vec_key": default_config((8192, 8192), 4).key}


# ----------------------------------------------------------------------------
# Parsing
# ----------------------------------------------------------------------------

_LOOKS_NUMERIC = re.compile(r"-\d")


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``autotrans: error: ...``), where an
    argument starting with a minus and a digit ("-3x4") is a (bad) positional,
    not an unknown option."""

    def error(self, message):
        hint = f" (see '{self.prog} --help')"
        print(f"{PROG}: error: {one_line(message)}{hint}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)

    def _parse_optional(self, arg_string):
        if _LOOKS_NUMERIC.match(arg_string):
            return None
        return super()._parse_optional(arg_string)


def shape_arg(text):
    """argparse type: a shape through core.problem.parse_shape."""
    try:
        return parse_shape(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def dtype_arg(text):
    """argparse type: a dtype through core.problem.parse_dtype."""
    try:
        return parse_dtype(text)
    except TypeError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def dir_arg(text):
    """argparse type for --cache-dir: a folder, or the cache file (its folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty --cache-dir names no folder (leave it out for the default)")
    p = Path(text).expanduser()
    if p.is_file() and p.name == FILENAME:
        return p.parent
    if p.exists() and not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a cache folder")
    return p


def output_file(name, cache_dir, verb: str) -> Path:
    """Where a command writes its output file ``name``, checked before any work:
    UserError if its folder does not exist, or it is a folder, a device, an
    SQLite database or the cache's own file (results.transfer.export_target)."""
    parent = Path(name).resolve().parent
    if not parent.is_dir():
        raise UserError(f"{name}: the folder {parent} does not exist")
    try:
        return export_target(name, ResultCache(cache_dir).own_files, verb)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def add_command(sub, name: str, run, help: str, description: str, examples: str) -> Parser:
    """A subparser for ``name`` whose --help ends with ``examples`` (lines of
    ``autotrans NAME ...``; ``{tile_key}`` and ``{vec_key}`` are filled in), set
    to call ``run(args, seen)``."""
    if "{" in examples:
        examples = examples.format(**example_keys())
    sp = sub.add_parser(name, help=help, description=description,
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        epilog="examples:\n" + examples)
    sp.set_defaults(func=run)
    return sp


def add_cache_dir(sp) -> None:
    sp.add_argument("--cache-dir", type=dir_arg, metavar="DIR",
                    help=f"cache folder (default: ${ENV_DIR}, else the user cache directory)")


def add_dtype(sp, many: bool = False) -> None:
    if many:
        sp.add_argument("--dtype", type=dtype_arg, action="append", metavar="DTYPE",
                        help="NumPy dtype; repeat for several (default: float32)")
    else:
        sp.add_argument("--dtype", type=dtype_arg, default=np.dtype(np.float32), metavar="DTYPE",
                        help="NumPy dtype, e.g. float16, float32, float64, complex64 (default: float32)")


def add_progress(sp, what: str = "no progress bars") -> None:
    sp.add_argument("--no-progress", action="store_true", help=what)
