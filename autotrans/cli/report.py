"""``autotrans report``: a shape's tuning landscape (and peers) drawn to a picture."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..api.listing import find_record
from ..core.problem import as_bmn, elem_size, format_shape, gbps
from ..results.store import ResultCache
from ..tools.report import BAR_ORDER
from .common import (UserError, add_cache_dir, add_command, add_dtype, add_progress, gpu, note, output_file,
                     printable, shape_arg)

HELP = "draw a shape's tuning landscape (and peers) to a PNG or HTML file"
DESCRIPTION = (
    "Draws the tuning landscape of a cached shape (GB/s heatmaps over tile x threads, one panel\n"
    "per kernel family) and, on a GPU, bars of autotrans (tuned and untuned), torch,\n"
    "torch.compile, CuPy, cuBLAS and JAX against the copy roofline (the faster of memcpy and\n"
    "a 16-byte copy). A shape that is not cached is tuned first (GPU needed).")
EXAMPLES = ("  autotrans report 8192x8192 -o landscape.png\n"
            "  autotrans report 4097x4095 --dtype float16 -o report.html")
SUFFIXES = (".png", ".html", ".htm", ".svg", ".pdf")


def register(sub) -> None:
    sp = add_command(sub, "report", run, HELP, DESCRIPTION, EXAMPLES)
    sp.add_argument("shape", type=shape_arg, metavar="SHAPE", help="MxN or BxMxN")
    add_dtype(sp)
    sp.add_argument("-o", "--output", metavar="FILE",
                    help="picture to write: .png, or .html for a page embedding it "
                         "(default: autotrans-SHAPE-DTYPE.png)")
    sp.add_argument("--no-bars", action="store_true", help="skip the comparison with other transposes")
    add_progress(sp, "no progress bars if tuning")
    add_cache_dir(sp)


def bars_from_row(row: dict, nbytes: int) -> dict[str, float]:
    """GB/s per label of BAR_ORDER ("autotrans", "torch", ..., "memcpy", "copy16") from
    one benchmark.run() row; missing or None timings are left out."""
    out = {}
    for label in BAR_ORDER:
        us = row.get(f"{label}_us")
        if isinstance(us, (int, float)) and not isinstance(us, bool) and us > 0:
            out[label] = gbps(nbytes, us)
    return out


def _as_dict(record) -> dict:
    """The stored JSON form of a record (what tools.report draws)."""
    return record if isinstance(record, dict) else record.to_json()


def _record(args, name: str, e: int, dev, why) -> dict:
    """The tuning record to draw: this GPU's (tuned now if missing), else any device's."""
    from ..api import tune
    from ..tuning.runner import key_for
    if dev is not None:
        record = ResultCache(args.cache_dir).get(key_for(as_bmn(args.shape), e))
        if record is None:
            note(f"{name} is not cached for this GPU: tuning it first")
            record = tune(args.shape, args.dtype, cache_dir=args.cache_dir,
                          progress=False if args.no_progress else None)
        return _as_dict(record)
    found = find_record(args.shape, e, args.cache_dir)
    if found is None:
        raise UserError(f"{name} is not cached (in {args.cache_dir} or the shipped "
                        f"results) and there is no GPU to tune it ({why})")
    return _as_dict(found[1])


def _bars(args, e: int):
    """(GB/s bars or None, a note for the title or "") on this GPU."""
    try:
        from ..tools.bench import run as run_bench
    except ImportError:
        return None, "\n(comparison bars skipped: autotrans.benchmark is not available)"
    rows = run_bench([(args.shape, args.dtype)], peers=True)
    nbytes = int(np.prod(as_bmn(args.shape))) * e
    return (bars_from_row(rows[0], nbytes) if rows else None), ""


def run(args, seen) -> int:
    from ..tools import report

    shape, dt = args.shape, args.dtype
    e = elem_size(dt)
    name = f"{format_shape(shape)} {dt.name}"
    out = Path(args.output or f"autotrans-{format_shape(shape)}-{dt.name}.png")
    if out.suffix.lower() not in SUFFIXES:
        raise UserError(f"{out}: the report is a .png picture or an .html page")
    output_file(out, args.cache_dir, "write the report to")
    dev, why = gpu()
    record = _record(args, name, e, dev, why)
    title = report.default_title(record)
    bars = None
    if dev is None:
        title += "\n(no GPU here: comparison bars skipped)"
    elif not args.no_bars:
        bars, extra = _bars(args, e)
        title += extra
    path = report.render(record, out, bars=bars, title=title,
                         protected=ResultCache(args.cache_dir).own_files)
    print(printable(f"wrote {path}"))
    return 0
