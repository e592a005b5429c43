"""The ``autotrans`` command line: tune, show, bench, export, import, clear,
report, explain, banks and sectors (one module per command or group, each with its
subparser and run function; this module only assembles them).

User errors (a bad shape, an unknown dtype, no GPU for a command that needs
one, a missing file, a bad config key, a cache folder that is a file) print
one line, ``autotrans: error: ...``, on stderr and exit non-zero; set
AUTOTRANS_DEBUG=1 to see tracebacks.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys

from ..core.paths import ENV_DIR
from ..core.version import VERSION
from . import banks, bench, explain, report, sectors, show, transfer, tune
from .common import (EXIT_ERROR, EXIT_USAGE, PROG, Parser, UserError, cache_env, cache_folder, err,
                     warnings_as_lines)

MODULES = (tune, show, bench, transfer, report, explain, banks, sectors)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command."""
    p = Parser(prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
               description="Autotuned CUDA matrix transposes: tune, inspect and share results.",
               epilog="examples:\n  autotrans tune 8192x8192 --dtype float16\n  autotrans show --all\n"
                      "  autotrans report 8192x8192 -o landscape.png\n\n"
                      f"The cache folder is ${ENV_DIR}, else the user cache directory;\n"
                      "every command takes --help.")
    p.add_argument("--version", action="version", version=f"%(prog)s {VERSION}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for module in MODULES:
        module.register(sub)
    return p


def _parse(argv):
    """(Namespace, None), or (None, exit status) for --help, --version and usage errors."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if getattr(args, "check", None):
            args.check(args)
    except SystemExit as exc:
        return None, exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return None, EXIT_USAGE
    return args, None


def main(argv=None) -> int:
    """Run the command line; returns the exit status."""
    args, code = _parse(argv)
    if args is None:
        return code
    debug = os.environ.get("AUTOTRANS_DEBUG", "").strip() not in ("", "0")
    seen: list = []
    try:
        if hasattr(args, "cache_dir"):
            args.cache_dir = cache_folder(args.cache_dir)
        with warnings_as_lines(seen), cache_env(getattr(args, "cache_dir", None)):
            return args.func(args, seen)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout went away (autotrans show | head): exit quietly
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except MemoryError:
        if debug:
            raise
        err("out of host memory (is the shape too large?)")
        return EXIT_ERROR
    except (UserError, ValueError, TypeError, OSError, RuntimeError) as exc:
        if debug:
            raise
        _report(exc)
        return EXIT_ERROR


def _report(exc: Exception) -> None:
    """One error line for an exception that ended a command."""
    from ..backend.cuda import GPUUnavailable
    if isinstance(exc, GPUUnavailable):
        err(f"no GPU: {exc}")
    elif isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        err(f"{exc.filename}: {exc.strerror}")
    else:
        err(exc)


__all__ = ["main", "build_parser", "UserError"]
