"""The ``autotrans`` command line: tune, show, bench, export, import, clear,
report, explain and banks.

User errors (a bad shape, an unknown dtype, no GPU for a command that needs
one, a missing file, a bad config key) print one line, ``autotrans: error:
...``, on stderr and exit non-zero; set AUTOTRANS_DEBUG=1 to see tracebacks.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import re
import sys
import warnings
from pathlib import Path

import numpy as np

from ..core.paths import ENV_DIR, cache_root
from ..core.problem import as_bmn, elem_size, format_shape, gbps, parse_dtype, parse_shape
from ..core.version import VERSION as __version__
from ..api.listing import find_record
from ..results.store import FILENAME, POLICIES, CacheWarning, ResultCache

PROG = "autotrans"
EXIT_ERROR = 1
EXIT_USAGE = 2
MAX_MESSAGE = 600


class UserError(Exception):
    """A problem to report in one line, without a traceback."""


# ----------------------------------------------------------------------------
# Pure helpers (tests call these directly)
# ----------------------------------------------------------------------------

def one_line(message) -> str:
    """Any message as one line of bounded length."""
    text = " ".join(str(message).split())
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 3] + "..."


def _fmt_date(value) -> str:
    if not isinstance(value, str) or not value:
        return ""
    try:
        return datetime.datetime.fromisoformat(value).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return value[:16]


def _num(value, fmt: str) -> str:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return format(value, fmt) if ok else "-"


STALE_MARK = "*"
STALE_NOTE = (f"{STALE_MARK} made by other kernel templates or search space than this autotrans "
              "(stale: transpose() does not use it; re-tune the shape)")


def table_rows(rows, show_device: bool = False) -> tuple[list[str], list[list[str]]]:
    """Headers and text cells for ``autotrans show`` from autotrans.cached() rows,
    sorted by device, element size and size; stale entries are marked."""
    headers = ["shape", "dtype", "config", "µs", "GB/s", "of memcpy", "date"]
    if show_device:
        headers.append("device")

    def order(r):
        shape = tuple(r.get("shape") or (0, 0, 0))
        return (str(r.get("device")), r.get("elem_bytes") or 0, int(np.prod(shape)), shape,
                not r.get("current", True))

    out = []
    for r in sorted(rows, key=order):
        config = str(r.get("config") or "?")
        if not r.get("current", True):
            config += " " + STALE_MARK
        frac = r.get("frac_memcpy")
        cells = [format_shape(r["shape"]), str(r.get("dtype") or ""), config,
                 _num(r.get("time_us"), ".1f"), _num(r.get("gbps"), ".0f"),
                 _num(frac, ".0%") if frac is not None else "-", _fmt_date(r.get("date"))]
        if show_device:
            cells.append(str(r.get("device", "")))
        out.append(cells)
    return headers, out


def summary_line(result) -> str:
    """One line per tuned shape: the winner and how it compares to memcpy."""
    memcpy_gbps = result.record.get("memcpy_gbps") if isinstance(result.record, dict) else None
    mem = f"memcpy {result.memcpy_us:.1f} µs"
    if isinstance(memcpy_gbps, (int, float)):
        mem += f" / {memcpy_gbps:.0f} GB/s"
    return (f"{format_shape(result.shape)} {result.dtype}: {result.best.key}  "
            f"{result.time_us:.1f} µs  {result.gbps:.0f} GB/s = {result.frac_memcpy:.0%} of memcpy "
            f"({mem}; {len(result.candidates)} timed, {len(result.failures)} failed)")


def bars_from_row(row: dict, nbytes: int) -> dict[str, float]:
    """GB/s per label ("autotrans", "seed", "torch", "cupy", "jax", "memcpy") from
    one benchmark.run() row; missing or None timings are left out."""
    out = {}
    for label in ("autotrans", "seed", "torch", "cupy", "jax", "memcpy"):
        us = row.get(f"{label}_us")
        if isinstance(us, (int, float)) and not isinstance(us, bool) and us > 0:
            out[label] = gbps(nbytes, us)
    return out


# ----------------------------------------------------------------------------
# Plumbing: errors, warnings, the GPU
# ----------------------------------------------------------------------------


def _err(message) -> None:
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)


def _note(message) -> None:
    print(f"{PROG}: {one_line(message)}", file=sys.stderr)


@contextlib.contextmanager
def _warnings_as_lines(seen: list):
    """Show warnings as one ``autotrans: warning: ...`` line each; collect them."""
    def show(message, category, filename, lineno, file=None, line=None):
        seen.append((category, str(message)))
        print(f"{PROG}: warning: {one_line(message)}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = show
        yield


@contextlib.contextmanager
def _cache_env(cache_dir):
    """Point AUTOTRANS_CACHE_DIR at --cache-dir while the command runs, so that
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


def _gpu():
    """(DeviceInfo, None) or (None, reason)."""
    from ..backend.cuda import GPUUnavailable, device
    try:
        return device(), None
    except GPUUnavailable as exc:
        return None, str(exc)


def _need_gpu(what: str):
    dev, why = _gpu()
    if dev is None:
        raise UserError(f"no GPU: {what} needs an NVIDIA GPU and PyCUDA ({why})")
    return dev


def _cache_write_failed(seen: list) -> bool:
    return any(issubclass(c, CacheWarning) for c, _ in seen)


def _jsonable(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.dtype):
        return o.name
    if isinstance(o, type) and issubclass(o, np.generic):
        return np.dtype(o).name
    if isinstance(o, Path):
        return str(o)
    return str(o)


# ----------------------------------------------------------------------------
# Commands
# ----------------------------------------------------------------------------


def cmd_tune(args, seen) -> int:
    from .. import api

    _need_gpu("tune")
    progress = False if args.no_progress else None
    failed = 0
    for shape in args.shapes:
        try:
            res = api.tune(shape, args.dtype, cache_dir=args.cache_dir, progress=progress)
        except (ValueError, RuntimeError) as exc:
            from ..backend.cuda import GPUUnavailable
            if isinstance(exc, GPUUnavailable):
                raise
            _err(f"{format_shape(shape)} {args.dtype.name}: {exc}")
            failed += 1
            continue
        print(summary_line(res), flush=True)
    if _cache_write_failed(seen):
        _err("results could not be saved to the cache (see the warning above)")
        return EXIT_ERROR
    return EXIT_ERROR if failed else 0


def cmd_show(args, seen) -> int:
    from rich.console import Console
    from rich.table import Table

    from ..api import cached
    from ..backend.cuda import GPUUnavailable

    show_all = args.all
    try:
        rows = cached(all_devices=show_all, cache_dir=args.cache_dir)
    except GPUUnavailable as exc:
        _note(f"note: no GPU here ({str(exc).split('(')[0].strip()}); showing cached results "
              "of every device")
        show_all = True
        rows = cached(all_devices=True, cache_dir=args.cache_dir)
    folder = cache_root(args.cache_dir)
    if not rows:
        print(f"no cached results{'' if show_all else ' for this GPU'} in {folder}"
              + ("" if show_all else " (--all shows other GPUs')"))
        return 0
    headers, cells = table_rows(rows, show_device=show_all)
    table = Table(title=f"autotrans cache: {folder / FILENAME}", title_justify="left")
    for h in headers:
        right = h in ("µs", "GB/s", "of memcpy")
        table.add_column(h, justify="right" if right else "left", no_wrap=h != "device")
    for c in cells:
        table.add_row(*c)
    console = Console(width=None if sys.stdout.isatty() else 400, highlight=False)
    console.print(table)
    if any(not r.get("current", True) for r in rows):
        console.print(STALE_NOTE)
    return 0


def cmd_bench(args, seen) -> int:
    try:
        from ..tools import benchmark
    except ImportError as exc:
        raise UserError(f"autotrans.benchmark is not available in this installation ({exc})") from None
    _need_gpu("bench")
    cases = [(shape, dt) for dt in args.dtype for shape in args.shapes]
    kwargs = {"peers": not args.no_peers}
    if args.no_progress:
        kwargs["progress"] = False
    rows = benchmark.run(cases, **kwargs)
    print(benchmark.markdown(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=_jsonable) + "\n", encoding="utf-8")
        _note(f"wrote {len(rows)} rows to {args.json}")
    return 0


def cmd_export(args, seen) -> int:
    parent = Path(args.file).resolve().parent
    if not parent.is_dir():
        raise UserError(f"{args.file}: the folder {parent} does not exist")
    cache = ResultCache(args.cache_dir)
    n = cache.export_json(args.file, device=args.device)
    print(f"exported {n} entr{'y' if n == 1 else 'ies'} from {cache.path} to {args.file}")
    if n == 0 and args.device:
        devices = sorted({k.device for k, _ in cache.items()})
        _note(f"warning: no entries for device {args.device!r}; devices in the cache: "
              + ("; ".join(devices) if devices else "none"))
    return 0


def cmd_import(args, seen) -> int:
    if not Path(args.file).is_file():
        raise UserError(f"{args.file}: no such file")
    cache = ResultCache(args.cache_dir)
    counts = cache.import_json(args.file, policy=args.policy)
    if _cache_write_failed(seen):
        raise UserError(f"nothing was imported: the cache {cache.path} is not writable")
    print(f"imported {args.file} into {cache.path} (policy {args.policy}): "
          f"{counts['added']} added, {counts['replaced']} replaced, {counts['kept']} kept")
    return 0


def cmd_clear(args, seen) -> int:
    cache = ResultCache(args.cache_dir)
    n = len(cache.items(device=args.device))
    what = f"{n} cached result{'' if n == 1 else 's'}" + (f" of {args.device}" if args.device else "")
    if n == 0:
        print(f"nothing to clear in {cache.path}")
        return 0
    if not args.yes:
        if not sys.stdin or not sys.stdin.isatty():
            raise UserError(f"refusing to remove {what} without confirmation (stdin is not a "
                            "terminal); pass --yes")
        try:
            answer = input(f"Remove {what} from {cache.path}? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing removed")
            return EXIT_ERROR
    gone = cache.clear(device=args.device)
    if _cache_write_failed(seen):
        raise UserError(f"the cache {cache.path} could not be cleared")
    print(f"removed {gone} cached result{'' if gone == 1 else 's'} from {cache.path}")
    return 0


def cmd_report(args, seen) -> int:
    from ..tools import report
    from ..api import tune
    from ..tuning.runner import key_for

    shape, dt = args.shape, args.dtype
    e = elem_size(dt)
    name = f"{format_shape(shape)} {dt.name}"
    out = Path(args.output or f"autotrans-{format_shape(shape)}-{dt.name}.png")
    if out.suffix.lower() not in (".png", ".html", ".htm", ".svg", ".pdf"):
        raise UserError(f"{out}: the report is a .png picture or an .html page")
    dev, why = _gpu()
    if dev is not None:
        record = ResultCache(args.cache_dir).get(key_for(as_bmn(shape), e))
        if record is None:
            _note(f"{name} is not cached for this GPU: tuning it first")
            record = tune(shape, dt, cache_dir=args.cache_dir,
                          progress=False if args.no_progress else None).record
    else:
        found = find_record(shape, e, args.cache_dir)
        if found is None:
            raise UserError(f"{name} is not cached (in {cache_root(args.cache_dir)} or the shipped "
                            f"results) and there is no GPU to tune it ({why})")
        record = found[1]
    title = report.default_title(record)
    bars = None
    if dev is None:
        title += "\n(no GPU here: comparison bars skipped)"
    elif args.no_bars:
        pass
    else:
        try:
            from ..tools import benchmark
        except ImportError:
            title += "\n(comparison bars skipped: autotrans.benchmark is not available)"
        else:
            rows = benchmark.run([(shape, dt)], peers=True)
            nbytes = int(np.prod(as_bmn(shape))) * e
            bars = bars_from_row(rows[0], nbytes) if rows else None
    path = report.render(record, out, bars=bars, title=title)
    print(f"wrote {path}")
    return 0


def cmd_explain(args, seen) -> int:
    from ..api import explain
    from ..backend.cuda import GPUUnavailable

    try:
        choice = explain(args.shape, args.dtype, fingerprint=args.fingerprint, cache_dir=args.cache_dir)
    except GPUUnavailable as exc:
        raise UserError(f"no GPU to ask ({exc}); pass --fingerprint 'NAME|sm_XX|NNsm|driver D|cuda C' "
                        "to explain the choice for another device") from None
    print(f"{format_shape(args.shape)} {args.dtype.name}: {choice}")
    if choice.entry is not None:
        print(f"  from: {format_shape(choice.entry.shape)} on {choice.entry.device}")
    return 0


def cmd_banks(args, seen) -> int:
    from ..emulate.banks import bank_report
    from ..kernels.config import KernelConfig

    try:
        cfg = KernelConfig.from_key(args.key)
    except ValueError as exc:
        raise UserError(f"{exc}; keys look like {_example_keys()['tile_key']}") from None
    accesses = bank_report(cfg)
    print(f"{cfg.key}: {cfg.threads} threads, {cfg.smem_bytes} B shared memory")
    if not accesses:
        print("  no shared-memory accesses")
        return 0
    for a in accesses:
        print(f"  {a}")
    worst = {}
    for a in accesses:
        worst[a.phase] = max(worst.get(a.phase, 0), a.ways)
    print("worst: " + ", ".join(f"{p} {w}-way" for p, w in worst.items()))
    return 0


# ----------------------------------------------------------------------------
# The parser
# ----------------------------------------------------------------------------


def _example_keys() -> dict:
    """Config keys for help texts, made by this version's KernelConfig."""
    from ..kernels.config import classic
    from ..tuning.space import default_config
    return {"tile_key": classic("tile", 4).key, "vec_key": default_config((8192, 8192), 4).key}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``autotrans: error: ...``."""

    def error(self, message):
        hint = f" (see '{self.prog} --help')"
        print(f"{PROG}: error: {one_line(message)}{hint}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _shape_arg(text):
    try:
        return parse_shape(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _dtype_arg(text):
    try:
        return parse_dtype(text)
    except TypeError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _dir_arg(text):
    p = Path(text).expanduser()
    if p.is_file() and p.name == FILENAME:  # the cache file itself: use its folder
        return p.parent
    if p.exists() and not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a cache folder")
    return p


COMMANDS = {
    "tune": ("tune shapes on this GPU and cache the fastest kernels",
             "Tunes each shape (MxN, or BxMxN for a batch of B matrices): compiles the search space,\n"
             "verifies every candidate bit-exactly, times them against memcpy and caches the winner.",
             "  autotrans tune 8192x8192\n"
             "  autotrans tune 8192x8192 4097x4095 --dtype float16\n"
             "  autotrans tune 64x512x512 --dtype float64 --no-progress"),
    "show": ("show the cached best kernels (this GPU, or --all)",
             "Lists the cached best configs: shape, dtype, config, µs, GB/s, fraction of memcpy, date.\n"
             "Without a GPU it lists every device's entries. Stale entries are marked with *.",
             "  autotrans show\n"
             "  autotrans show --all\n"
             "  autotrans show --cache-dir ./shared-cache"),
    "bench": ("compare tuned kernels with memcpy, the seed kernel, torch, CuPy and JAX",
              "Benchmarks autotrans on each shape against memcpy, the seed kernel and (unless\n"
              "--no-peers) torch, CuPy and JAX, and prints a markdown table.",
              "  autotrans bench 8192x8192 4096x4096\n"
              "  autotrans bench 8192x8192 --dtype float16 --dtype float32 --json bench.json"),
    "export": ("write cached results to a JSON file",
               "Writes the cached results (every device, or only --device's) to a JSON export file.\n"
               "Needs no GPU.",
               "  autotrans export results.json\n"
               "  autotrans export h200.json --device 'NVIDIA H200|sm_90|132sm|driver 580.95.05|cuda 13.0'"),
    "import": ("merge a JSON export file into the cache",
               "Merges an export file into the cache. --policy faster (default) keeps whichever\n"
               "result is faster, keep never overwrites an entry, replace always does.",
               "  autotrans import results.json\n"
               "  autotrans import results.json --policy replace"),
    "clear": ("remove cached results",
              "Removes cached results (all, or only --device's), after asking on a terminal.\n"
              "Without a terminal, pass --yes.",
              "  autotrans clear\n"
              "  autotrans clear --yes\n"
              "  autotrans clear --device 'NVIDIA A100-SXM4-80GB|sm_80|108sm|driver 550.54.15|cuda 12.4' --yes"),
    "report": ("draw a shape's tuning landscape (and peers) to a PNG or HTML file",
               "Draws the tuning landscape of a cached shape (GB/s heatmaps over tile x threads, one panel\n"
               "per kernel family) and, on a GPU, bars of autotrans, the seed kernel, torch and CuPy\n"
               "against memcpy. A shape that is not cached is tuned first (GPU needed).",
               "  autotrans report 8192x8192 -o landscape.png\n"
               "  autotrans report 4097x4095 --dtype float16 -o report.html"),
    "explain": ("say which kernel transpose() would use for a shape, and why",
                "Prints the config transpose() would pick for a shape and dtype (tuned for this shape,\n"
                "shipped, nearest tuned shape, or the default) and the reason. Without a GPU, name the\n"
                "device with --fingerprint.",
                "  autotrans explain 8192x8192\n"
                "  autotrans explain 4096x4096 --dtype float16 "
                "--fingerprint 'NVIDIA H200|sm_90|132sm|driver 580.95.05|cuda 13.0'"),
    "banks": ("print the shared-memory bank conflicts of a config key (CPU only)",
              "Runs the kernel's index math on the CPU (nvcc builds a host emulator) and prints every\n"
              "shared-memory access of an interior tile with its n-way bank conflict.",
              "  autotrans banks {tile_key}\n"
              "  autotrans banks {vec_key}"),
}


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    p = _Parser(prog=PROG, formatter_class=fmt,
                description="Autotuned CUDA matrix transposes: tune, inspect and share results.",
                epilog="examples:\n  autotrans tune 8192x8192 --dtype float16\n  autotrans show --all\n"
                       "  autotrans report 8192x8192 -o landscape.png\n\n"
                       f"The cache folder is ${ENV_DIR}, else the user cache directory;\n"
                       "every command takes --help.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    def command(name):
        help_, desc, examples = COMMANDS[name]
        return sub.add_parser(name, help=help_, description=desc, formatter_class=fmt,
                              epilog="examples:\n" + examples.format(**_example_keys()))

    def cache_dir(sp):
        sp.add_argument("--cache-dir", type=_dir_arg, metavar="DIR",
                        help=f"cache folder (default: ${ENV_DIR}, else the user cache directory)")

    def dtype(sp, many=False):
        if many:
            sp.add_argument("--dtype", type=_dtype_arg, action="append", metavar="DTYPE",
                            help="NumPy dtype; repeat for several (default: float32)")
        else:
            sp.add_argument("--dtype", type=_dtype_arg, default=np.dtype(np.float32), metavar="DTYPE",
                            help="NumPy dtype, e.g. float16, float32, float64, complex64 (default: float32)")

    sp = command("tune")
    sp.add_argument("shapes", nargs="+", type=_shape_arg, metavar="SHAPE", help="MxN or BxMxN")
    dtype(sp)
    cache_dir(sp)
    sp.add_argument("--no-progress", action="store_true", help="no progress bars")
    sp.set_defaults(func=cmd_tune)

    sp = command("show")
    sp.add_argument("--all", action="store_true", help="every device's results, not only this GPU's")
    cache_dir(sp)
    sp.set_defaults(func=cmd_show)

    sp = command("bench")
    sp.add_argument("shapes", nargs="+", type=_shape_arg, metavar="SHAPE", help="MxN or BxMxN")
    dtype(sp, many=True)
    sp.add_argument("--json", metavar="FILE", help="also write the rows to this JSON file")
    sp.add_argument("--no-peers", action="store_true", help="skip torch, CuPy and JAX")
    sp.add_argument("--no-progress", action="store_true", help="no progress bars")
    cache_dir(sp)
    sp.set_defaults(func=cmd_bench)

    sp = command("export")
    sp.add_argument("file", metavar="FILE", help="JSON file to write")
    who = sp.add_mutually_exclusive_group()
    who.add_argument("--all", action="store_true", help="every device's results (the default)")
    who.add_argument("--device", metavar="TEXT", help="only this device fingerprint's results")
    cache_dir(sp)
    sp.set_defaults(func=cmd_export)

    sp = command("import")
    sp.add_argument("file", metavar="FILE", help="JSON export file to read")
    sp.add_argument("--policy", choices=POLICIES, default="faster",
                    help="on conflicts: keep the faster result (default), keep the cached one, "
                         "or replace it")
    cache_dir(sp)
    sp.set_defaults(func=cmd_import)

    sp = command("clear")
    sp.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    sp.add_argument("--device", metavar="TEXT", help="only this device fingerprint's results")
    cache_dir(sp)
    sp.set_defaults(func=cmd_clear)

    sp = command("report")
    sp.add_argument("shape", type=_shape_arg, metavar="SHAPE", help="MxN or BxMxN")
    dtype(sp)
    sp.add_argument("-o", "--output", metavar="FILE",
                    help="picture to write: .png, or .html for a page embedding it "
                         "(default: autotrans-SHAPE-DTYPE.png)")
    sp.add_argument("--no-bars", action="store_true", help="skip the comparison with other transposes")
    sp.add_argument("--no-progress", action="store_true", help="no progress bars if tuning")
    cache_dir(sp)
    sp.set_defaults(func=cmd_report)

    sp = command("explain")
    sp.add_argument("shape", type=_shape_arg, metavar="SHAPE", help="MxN or BxMxN")
    dtype(sp)
    sp.add_argument("--fingerprint", metavar="TEXT",
                    help="device fingerprint to ask about (needed without a GPU)")
    cache_dir(sp)
    sp.set_defaults(func=cmd_explain)

    sp = command("banks")
    sp.add_argument("key", metavar="KEY", help=f"config key, e.g. {_example_keys()['tile_key']}")
    sp.set_defaults(func=cmd_banks)
    return p


def main(argv=None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if getattr(args, "dtype", None) is None and args.command == "bench":
        args.dtype = [np.dtype(np.float32)]
    debug = os.environ.get("AUTOTRANS_DEBUG", "").strip() not in ("", "0")
    seen: list = []
    try:
        with _warnings_as_lines(seen), _cache_env(getattr(args, "cache_dir", None)):
            return args.func(args, seen)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout went away (autotrans show | head): exit quietly
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except (UserError, ValueError, TypeError, OSError, RuntimeError) as exc:
        if debug:
            raise
        from ..backend.cuda import GPUUnavailable
        if isinstance(exc, GPUUnavailable):
            _err(f"no GPU: {exc}")
        elif isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
            _err(f"{exc.filename}: {exc.strerror}")
        else:
            _err(exc)
        return EXIT_ERROR
