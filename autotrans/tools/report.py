"""A picture of one shape's tuning: the landscape of candidates and, optionally,
bars comparing autotrans with other transposes against the copy roofline.

    from autotrans import report
    report.render(record, "8192x8192.png", bars={"autotrans": 4210.0, "memcpy": 4390.0})

``record`` is a TuneRecord (what tune() returns and the cache holds) or its
stored JSON form. The landscape
has one heatmap panel per kernel family (variant and shared-memory layout):
tile shape (input rows x cols) down, threads per block across, and the best
GB/s over the remaining parameters (vector width, micro rows, pad amount) in
each cell (other parameters, like the block order, are folded into the
cell's maximum too). matplotlib draws off-screen through its Agg canvas, never touching
pyplot's global backend.
"""
from __future__ import annotations

import base64
import html
import io
from collections import defaultdict
from pathlib import Path

from ..core.problem import format_shape
from ..kernels.config import KernelConfig
from ..core.paths import atomic_write
from ..results.record import TuneRecord, config_of_key
from ..results.transfer import export_target

BAR_ORDER = ("autotrans", "untuned", "torch", "torch_compile", "cupy", "geam", "jax", "memcpy", "copy16")
ROOFLINE_BARS = ("memcpy", "copy16")   # the roofline: the faster of the two copies
_LAYOUTS = {"xor": "xor swizzle", "pad": "padded", "plain": "plain"}


def family(cfg: KernelConfig) -> str:
    """The panel a config belongs to: its variant and shared-memory layout."""
    if cfg.variant in ("naive", "remapped"):
        return cfg.variant
    layout = "xor" if cfg.swizzle == "xor" else "pad" if cfg.pad else "plain"
    return f"{cfg.variant} / {_LAYOUTS[layout]}"


_VARIANT_ORDER = ("vec", "shift", "tile", "naive", "remapped")
_LAYOUT_ORDER = tuple(_LAYOUTS.values())


def _family_order(name: str):
    variant, _, layout = name.partition(" / ")
    return (_VARIANT_ORDER.index(variant) if variant in _VARIANT_ORDER else len(_VARIANT_ORDER),
            _LAYOUT_ORDER.index(layout) if layout in _LAYOUT_ORDER else -1, name)


def as_record(record: TuneRecord | dict) -> TuneRecord:
    """A TuneRecord, or the stored JSON form of one (validated: ValueError if invalid)."""
    return record if isinstance(record, TuneRecord) else TuneRecord.from_json(record)


def candidate_gbps(record: TuneRecord | dict) -> dict[str, float]:
    """{config key: GB/s} of the record's timed candidates (the best, where a key repeats)."""
    out: dict[str, float] = {}
    for row in as_record(record).candidates:
        out[row.key] = max(row.gbps, out.get(row.key, 0.0))
    return out


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def landscape(record: TuneRecord | dict) -> dict[str, dict]:
    """Heatmap data per family: {family: {"tiles": [(rows, cols)], "threads": [n],
    "gbps": {(tile, threads): best GB/s}, "keys": {(tile, threads): best key},
    "failed": {(tile, threads)}}}, families in a fixed order."""
    record = as_record(record)
    fams: dict[str, dict] = defaultdict(lambda: {"gbps": {}, "keys": {}, "failed": set()})
    for key, g in candidate_gbps(record).items():
        cfg = config_of_key(key)
        f = fams[family(cfg)]
        cell = ((cfg.tile_rows, cfg.tile_cols), cfg.threads)
        if g > f["gbps"].get(cell, -1.0):
            f["gbps"][cell], f["keys"][cell] = g, key
    for row in record.failures:
        cfg = config_of_key(row.key)
        f = fams[family(cfg)]
        cell = ((cfg.tile_rows, cfg.tile_cols), cfg.threads)
        if cell not in f["gbps"]:
            f["failed"].add(cell)
    out = {}
    for name in sorted(fams, key=_family_order):
        f = fams[name]
        cells = set(f["gbps"]) | f["failed"]
        f["tiles"] = sorted({t for t, _ in cells}, key=lambda t: (t[0] * t[1], t[0]))
        f["threads"] = sorted({n for _, n in cells})
        out[name] = dict(f)
    return out


def default_title(record: TuneRecord | dict) -> str:
    """"SHAPE DTYPE on DEVICE: best KEY  N GB/s (F% of memcpy)"."""
    r = as_record(record)
    head = f"{format_shape(r.shape)} {r.dtype}"
    if r.device is not None:
        head += f" on {r.device.name}"
    return head + f": best {r.best.key}  {r.gbps:.0f} GB/s ({r.frac_memcpy:.0%} of memcpy)"


def _draw_family(ax, name: str, fam: dict, norm, cmap, best_key: str | None):
    import numpy as np

    tiles, threads = fam["tiles"], fam["threads"]
    grid = np.full((len(tiles), len(threads)), np.nan)
    for (tile, nt), g in fam["gbps"].items():
        grid[tiles.index(tile), threads.index(nt)] = g
    cmap = cmap.with_extremes(bad="#e6e6e6")
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, aspect="auto",
                   interpolation="nearest")
    ax.set_xticks(range(len(threads)), [str(t) for t in threads])
    ax.set_yticks(range(len(tiles)), [f"{r}x{c}" for r, c in tiles])
    ax.set_xlabel("threads per block")
    ax.set_ylabel("tile (rows x cols)")
    ax.set_title(name, fontsize=10)
    small = len(tiles) * len(threads) <= 80
    for i, tile in enumerate(tiles):
        for j, nt in enumerate(threads):
            cell = (tile, nt)
            if cell in fam["gbps"]:
                g = fam["gbps"][cell]
                light = norm(g) < 0.55
                if small:
                    ax.text(j, i, f"{g:.0f}", ha="center", va="center", fontsize=7,
                            color="white" if light else "black")
                if fam["keys"][cell] == best_key:
                    ax.add_patch(_rect(j, i, "red"))
            elif cell in fam["failed"]:
                ax.text(j, i, "x", ha="center", va="center", fontsize=9, color="#b00000")
    return im


def _rect(j, i, color):
    from matplotlib.patches import Rectangle
    return Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor=color, linewidth=2.5)


def roofline_gbps(bars: dict) -> float | None:
    """The roofline of a set of bars (GB/s): the faster of its copies (ROOFLINE_BARS), None without one."""
    return max((float(bars[k]) for k in ROOFLINE_BARS if _is_number(bars.get(k)) and bars[k] > 0), default=None)


def _draw_bars(ax, bars: dict, roofline: float | None):
    labels = [k for k in BAR_ORDER if k in bars] + sorted(k for k in bars if k not in BAR_ORDER)
    values = [float(bars[k]) for k in labels]
    roof = roofline if _is_number(roofline) and roofline > 0 else roofline_gbps(bars)
    colors = ["#d62728" if k == "autotrans" else "#7f7f7f" if k in ROOFLINE_BARS else "#1f77b4"
              for k in labels]
    y = range(len(labels))
    ax.barh(list(y), values, color=colors)
    ax.set_yticks(list(y), labels)
    ax.invert_yaxis()
    ax.set_xlabel("GB/s (read + write)")
    ax.set_title("against the copy roofline (the faster of memcpy and a 16-byte copy)", fontsize=10)
    top = max(values + ([roof] if roof else []))
    ax.set_xlim(0, top * 1.3)
    if roof:
        ax.axvline(roof, color="black", linestyle="--", linewidth=1)
    for yi, v in zip(y, values):
        note = f"{v:.0f}" + (f"  ({v / roof:.0%})" if roof else "")
        ax.text(v + top * 0.01, yi, note, va="center", fontsize=8)


def figure(record: TuneRecord | dict, bars: dict | None = None, title: str | None = None):
    """The matplotlib Figure (with an Agg canvas) of :func:`render`."""
    from matplotlib import colormaps
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

    record = as_record(record)
    fams = landscape(record)
    bars = {k: v for k, v in (bars or {}).items() if _is_number(v) and v > 0}
    panels = len(fams) + (1 if bars else 0)
    if panels == 0:
        raise ValueError("the record has no timed candidates with a valid config key to draw")
    ncols = min(3, panels)
    nrows = -(-panels // ncols)
    fig = Figure(figsize=(5.2 * ncols, 4.2 * nrows + 0.6), layout="constrained")
    FigureCanvasAgg(fig)
    values = [g for f in fams.values() for g in f["gbps"].values()]
    roof = record.memcpy_gbps
    vmax = max(values + ([roof] if _is_number(roof) else [])) if values else 1.0
    norm = Normalize(vmin=0.0, vmax=vmax)
    cmap = colormaps["viridis"]
    axes = [fig.add_subplot(nrows, ncols, i + 1) for i in range(panels)]
    heat = []
    for ax, (name, fam) in zip(axes, fams.items()):
        heat.append((ax, _draw_family(ax, name, fam, norm, cmap, record.best.key)))
    if heat:
        label = "best GB/s in cell" + (f" (memcpy {roof:.0f})" if _is_number(roof) else "")
        fig.colorbar(heat[0][1], ax=[a for a, _ in heat], label=label, shrink=0.9)
    if bars:
        _draw_bars(axes[len(fams)], bars, roof)
    fig.suptitle(title if title is not None else default_title(record), fontsize=12)
    return fig


def _html(record: TuneRecord, png: bytes, title: str) -> str:
    rows = sorted(candidate_gbps(record).items(), key=lambda kv: -kv[1])[:10]
    trs = "\n".join(f"<tr><td><code>{html.escape(k)}</code></td><td>{g:.0f}</td></tr>"
                    for k, g in rows)
    t = html.escape(title)
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title>\n"
            "<style>body{font-family:sans-serif;margin:2em} td,th{padding:2px 10px;text-align:left}"
            "</style></head>\n<body>\n"
            f"<h1>{t}</h1>\n"
            f"<img alt=\"autotrans tuning report\" src=\"data:image/png;base64,"
            f"{base64.b64encode(png).decode('ascii')}\">\n"
            f"<h2>Fastest candidates</h2>\n<table><tr><th>config</th><th>GB/s</th></tr>\n{trs}\n</table>\n"
            "</body></html>\n")


def render(record: TuneRecord | dict, path, bars: dict | None = None, title: str | None = None,
           protected=()) -> Path:
    """Draw the landscape of ``record`` (and ``bars``: label -> GB/s, e.g.
    "autotrans", "torch", "cupy", "memcpy", "copy16": BAR_ORDER) to ``path``: a PNG, or an
    HTML page embedding the PNG when ``path`` ends in .html (other extensions
    matplotlib knows, like .svg or .pdf, work too). Returns the path. The file
    is replaced atomically; ValueError (before drawing) for targets that are
    not regular files or new names, SQLite databases and ``protected`` paths
    (the cache's own files)."""
    path = Path(path)
    fmt = "html" if path.suffix.lower() in (".html", ".htm") else (path.suffix.lower().lstrip(".") or "png")
    target = export_target(path, protected, "write the report to")
    record = as_record(record)
    fig = figure(record, bars, title)
    if fmt != "html" and fmt not in fig.canvas.get_supported_filetypes():
        raise ValueError(f"cannot write a picture to {path}: use .png, .html, .svg or .pdf")
    buf = io.BytesIO()
    fig.savefig(buf, format="png" if fmt == "html" else fmt, dpi=110)
    data = buf.getvalue()
    if fmt == "html":
        data = _html(record, data, title if title is not None else default_title(record)).encode("utf-8")
    atomic_write(target, data)
    return path
