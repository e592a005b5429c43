"""``autotrans show``: the cached best kernels as a table."""
from __future__ import annotations

import datetime
import sys

import numpy as np

from ..core.problem import format_shape
from ..results.store import FILENAME
from .common import add_cache_dir, add_command, note, printable

HELP = "show the cached best kernels (this GPU, or --all; --shipped: autotrans' own)"
DESCRIPTION = ("Lists the cached best configs: shape, dtype, config, µs, GB/s, fraction of memcpy, date;\n"
               "then those of strided problems (permute()'s tile and rows problems, tuned with\n"
               "autotrans tune SHAPE --axes ...), by the problem's text and a permutation that runs it\n"
               "(the fused shape: size-1 axes dropped, axes that stay adjacent merged). Without a GPU it lists every\n"
               "device's entries. Stale entries are marked with *. 'of memcpy' is a cudaMemcpy's time\n"
               "for the same bytes, timed beside the kernel, over the kernel's; cudaMemcpy is slower than a\n"
               "16-byte copy kernel on odd byte counts, so a transpose can read above 1.00 there\n"
               "(benchmarks/bench.py measures against the faster of the two). --shipped lists the\n"
               "results that ship with autotrans instead (tuned on this GPU's model, or with --all\n"
               "every model's), which transpose() and permute() use where the cache has none.")
EXAMPLES = ("  autotrans show\n"
            "  autotrans show --all\n"
            "  autotrans show --shipped\n"
            "  autotrans show --cache-dir ./shared-cache")

STALE_MARK = "*"
STALE_NOTE = (f"{STALE_MARK} made by other kernel templates or search space than this autotrans "
              "(stale: transpose() does not use it; re-tune the shape)")


def register(sub) -> None:
    sp = add_command(sub, "show", run, HELP, DESCRIPTION, EXAMPLES)
    sp.add_argument("--all", action="store_true", help="every device's results, not only this GPU's")
    sp.add_argument("--shipped", action="store_true",
                    help="the results shipped with autotrans, not the cache's (this GPU's model, else its sibling's: same architecture and SM count; or --all)")
    add_cache_dir(sp)


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


def table_rows(rows, show_device: bool = False) -> tuple[list[str], list[list[str]]]:
    """Headers and printable text cells for ``autotrans show`` from
    autotrans.cached() rows, sorted by device, element size and size; stale
    entries are marked."""
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
        out.append([printable(c) for c in cells])
    return headers, out


def problem_table_rows(rows, show_device: bool = False) -> tuple[list[str], list[list[str]]]:
    """Headers and printable text cells for the strided problems' table from
    tuning.strided.problem_rows() rows, sorted by device, element size, bytes
    moved and problem; stale entries are marked."""
    headers = ["problem", "permutation", "config", "µs", "GB/s", "of memcpy", "date"]
    if show_device:
        headers.append("device")

    def order(r):
        return (str(r.get("device")), r.get("elem_bytes") or 0, int(np.prod(r.get("shape") or (0,))),
                str(r.get("problem")), not r.get("current", True))

    out = []
    for r in sorted(rows, key=order):
        config = str(r.get("config") or "?") + ("" if r.get("current", True) else " " + STALE_MARK)
        frac = r.get("frac_memcpy")
        cells = [str(r.get("problem") or "?"), str(r.get("permutation") or "?"), config, _num(r.get("time_us"), ".1f"), _num(r.get("gbps"), ".0f"),
                 _num(frac, ".0%") if frac is not None else "-", _fmt_date(r.get("date"))]
        if show_device:
            cells.append(str(r.get("device", "")))
        out.append([printable(c) for c in cells])
    return headers, out


def _table(title: str, headers, cells):
    from rich.table import Table
    from rich.text import Text
    # Text cells: nothing read from the cache is taken for rich markup.
    table = Table(title=Text(title), title_justify="left")
    for h in headers:
        right = h in ("µs", "GB/s", "of memcpy")
        table.add_column(h, justify="right" if right else "left", no_wrap=h != "device")
    for c in cells:
        table.add_row(*map(Text, c))
    return table


def run(args, seen) -> int:
    from rich.console import Console
    from rich.text import Text

    from ..api import cached
    from ..backend.cuda import GPUUnavailable
    from ..results.shipped import shipped_dir
    from ..tuning.strided import problem_rows

    show_all, shipped = args.all, args.shipped

    def rows_of(every: bool) -> tuple[list, list]:
        return (cached(all_devices=every, cache_dir=args.cache_dir, shipped=shipped),
                problem_rows(all_devices=every, cache=args.cache_dir, shipped=shipped))

    try:
        rows, strided = rows_of(show_all)
    except GPUUnavailable as exc:
        note(f"note: no GPU here ({str(exc).split('(')[0].strip()}); showing "
             f"{'shipped' if shipped else 'cached'} results of every device")
        show_all = True
        rows, strided = rows_of(True)
    folder = printable(shipped_dir() if shipped else args.cache_dir)
    where = f"shipped with autotrans: {folder}" if shipped else f"autotrans cache: {folder}/{FILENAME}"
    if not rows and not strided:
        print(f"no {'shipped' if shipped else 'cached'} results{'' if show_all else ' for this GPU'} in {folder}"
              + ("" if show_all else " (--all shows other GPUs')"))
        return 0
    console = Console(width=None if sys.stdout.isatty() else 400, highlight=False)
    if rows:
        console.print(_table(where, *table_rows(rows, show_device=show_all)))
    if strided:
        console.print(_table(f"strided problems (permute), {where}",
                             *problem_table_rows(strided, show_device=show_all)))
    if any(not r.get("current", True) for r in rows + strided):
        console.print(Text(STALE_NOTE))
    return 0
