"""Fused or not: permutations whose canonical problem is a TileProblem (a
batch of strided matrices), timed as it is and as its fused form
(core.layout.fuse_tile: an NdTileProblem, the batch dim fused into one side,
which ndshift moves in 16-byte vectors and ndtile in scalars); each row also
says which form run_problem (the untuned rule) runs. The cases: 3-D (2, 1, 0)
orders of 1-, 2- and 4-byte elements, odd and aligned, 32-128 MiB. Each form's
candidates are verified and timed by the tuner (tune_problem: interleaved
with a memcpy of the same bytes, the L2 flushed before every timed launch,
CUDA events, medians), nothing saved; fractions of that memcpy. With
--sectors, the emulator's sector bounds instead (no GPU; shift and ndshift
candidates and each form's untuned pick): the ideal sectors of reading the
input and writing the output once over the sectors the launch touches
(autotrans.emulate.strided_sectors).

    python benchmarks/fuse_probe.py --out /tmp/fp                # every case, on a GPU
    python benchmarks/fuse_probe.py --out /tmp/fp --sectors      # bounds (no GPU), a minute or two a case
    python benchmarks/fuse_probe.py --out /tmp/fp --cases int8   # labels matching a regex
    python benchmarks/fuse_probe.py --out /tmp/fp --grid         # grid_cases(): 21 classes
    python benchmarks/fuse_probe.py --out /tmp/fp --heldout      # the same over held-out sides
    python benchmarks/fuse_probe.py --out /tmp/fp --m-side       # fused into longer output rows
    python benchmarks/fuse_probe.py --table A.json B.json --title H100   # a markdown table (merged by case)
"""
from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path

CASES = [  # (shape, dtype, axes): C-contiguous x, x.transpose(axes)
    ((511, 1031, 257), "int8", (2, 1, 0)),       # permute_bench's
    ((263, 509, 257), "float16", (2, 1, 0)),     # permute_bench's
    ((257, 509, 263), "float32", (2, 1, 0)),     # permute_bench's
    ((1000, 131, 515), "int8", (2, 1, 0)),       # long matrices, few of them
    ((129, 4001, 131), "int8", (2, 1, 0)),       # small matrices, many
    ((512, 256, 512), "int8", (2, 1, 0)),        # 16-byte rows both sides
    ((400, 200, 401), "float16", (2, 1, 0)),
    ((130, 1000, 260), "float16", (2, 1, 0)),
    ((300, 333, 301), "float32", (2, 1, 0)),
]


GRID_SIDES = ((257, 263), (1001, 131), (131, 1001), (200, 3001), (3001, 200), (513, 127), (1024, 260))
HELDOUT_SIDES = ((97, 1537), (1537, 97), (777, 333), (389, 389), (1200, 100), (161, 2047))


def grid_cases(sides=GRID_SIDES) -> list:
    """--grid: 3-D (2, 1, 0) orders of 1-, 2- and 4-byte elements over classes of
    outer sizes (a, c) (odd and near-square, few long matrices, many short
    ones, 16-byte aligned rows), the middle (batch) size making about 32 MiB;
    --heldout: the same over HELDOUT_SIDES, which no rule was fitted to."""
    return [((a, max(1, (32 << 20) // (a * c * e)), c), dtype, (2, 1, 0))
            for dtype, e in (("int8", 1), ("float16", 2), ("float32", 4)) for a, c in sides]


def label(shape, dtype, axes) -> str:
    return f"{'x'.join(map(str, shape))} {dtype} {axes}"


def forms(shape, dtype, axes, m_side: bool = False):
    """(the TileProblem of the permutation, its fused NdTileProblem: fuse_tile's,
    with m_side the one of longer output rows), or None where the fusion does
    not apply. run_problem's choice between them is the untuned rule."""
    import numpy as np

    from autotrans.core import layout
    from autotrans.core.layout import TileProblem
    e = np.dtype(dtype).itemsize
    tile = layout.canonical(shape, layout.c_strides(shape, e), e, axes)
    fused = layout.fuse_tile(tile, m_side) if isinstance(tile, TileProblem) else None
    return (tile, fused) if fused is not None else None


def _best(frac: dict, pick: str) -> dict:
    k = max(frac, key=frac.get)
    return {"best": k, "fraction": frac[k], "untuned": pick, "untuned_fraction": frac.get(pick)}


def timed(problem) -> dict:
    """Every candidate's fraction of the memcpy in the same run (tuner-verified)."""
    from autotrans.backend.cuda import device
    from autotrans.tuning.strided import strided_candidates, tune_problem
    rec = tune_problem(problem, save=False, progress=False, configs=strided_candidates(problem, device().limits))
    return {c.key: rec.memcpy_us / c.median_us for c in rec.candidates}


def bounded(problem) -> dict:
    """The sector bound of the shift/ndshift candidates and the untuned pick."""
    from autotrans.emulate.sectors import strided_sectors
    from autotrans.tuning.strided import default_strided, strided_candidates
    pick = default_strided(problem).key
    frac = {}
    for c in strided_candidates(problem):
        if c.variant in ("shift", "ndshift") or c.key == pick:
            s = strided_sectors(c, problem)
            frac[c.key] = (s.ideal + s.out_ideal) / (s.load_sectors + s.store_sectors)
    return frac


def probe(shape, dtype, axes, sectors: bool, m_side: bool = False) -> dict | None:
    """A case's row: each form's best and untuned pick (and every candidate's
    fraction), and the form run_problem runs ("tile", "fused" or "other")."""
    from autotrans.tuning.strided import default_strided, run_problem
    both = forms(shape, dtype, axes, m_side)
    if both is None:
        return None
    runs = run_problem(both[0])
    row = {"case": label(shape, dtype, axes),
           "runs": "tile" if runs == both[0] else "fused" if runs == both[1] else "other"}
    for name, problem in zip(("tile", "fused"), both):
        frac = bounded(problem) if sectors else timed(problem)
        row[name] = {"problem": f"{'batch ' if problem.batch else ''}{problem.m}x{problem.n}",
                     **_best(frac, default_strided(problem).key), "all": frac}
    return row


def _form(row: dict, name: str) -> str:
    """A row's fused form, "M" (longer output rows) or "N" (longer input rows), by its problem text."""
    rows = lambda form: int(row[form]["problem"].split()[-1].split("x")[0])  # noqa: E731
    return "M" if rows(name) > rows("tile") else "N"


def _parse(case: str):
    """(shape, dtype, axes) of a label()."""
    dims, dtype, axes = case.split(" ", 2)
    return tuple(map(int, dims.split("x"))), dtype, tuple(int(a) for a in axes.strip("()").split(",") if a.strip())


def table(rows: list, title: str = "") -> str:
    """Markdown of result rows merged by case (see --table): each form's best
    and untuned pick (the rule's at rendering where the row holds every
    candidate's fraction, else the run's, marked *), the form run_problem
    runs at rendering, and how near that form's best and untuned pick come
    to the best of every form measured."""
    from autotrans.tuning.strided import run_problem
    cases: dict = {}
    for r in rows:
        d = cases.setdefault(r["case"], {})
        d["tile"], d[_form(r, "fused")] = r["tile"], r["fused"]
    out = [f"# fuse_probe.py {title}".rstrip(), "",
           "Fractions of a memcpy of the same bytes in the same run (see fuse_probe.py's docstring); each cell: "
           "the form's best / its untuned pick (the rule's at rendering; * the run's, where the file holds no "
           "per-candidate fractions). M: fused into longer output rows; N: into longer input rows.", "",
           "| case | tile | M | N | runs at rendering |", "|---|---|---|---|---|"]
    best, pick = [], []
    for case, d in cases.items():
        tile = forms(*_parse(case))[0]
        runs = run_problem(tile)
        kind = "tile" if runs == tile else "M" if runs.m > tile.m else "N"
        now = _untuned_now(tile, d)
        cell = lambda k: f"{d[k]['fraction']:.3f} / {now[k][0]:.3f}{now[k][1]}" if k in d else ""  # noqa: E731
        out.append(f"| {case} | {cell('tile')} | {cell('M')} | {cell('N')} | {kind} |")
        if kind in d:
            top = max(v["fraction"] for v in d.values())
            best.append(d[kind]["fraction"] / top)
            pick.append(now[kind][0] / top)
    geo = lambda xs: math.exp(sum(math.log(max(x, 1e-9)) for x in xs) / len(xs))  # noqa: E731
    out += ["", f"On the {len(best)} of {len(cases)} cases where the form run at rendering was measured, of the "
                f"best of every form measured: its best {geo(best):.3f} (geometric mean; worst {min(best):.3f}), "
                f"its untuned pick {geo(pick):.3f} (worst {min(pick):.3f})." if best else "No case's form was measured."]
    return "\n".join(out) + "\n"


def _untuned_now(tile, d: dict) -> dict:
    """Each measured form's untuned fraction: (the rule's pick at rendering, "")
    where the row holds every candidate's, else (the run's pick, "*")."""
    from autotrans.core import layout
    from autotrans.tuning.strided import default_strided
    problems = {"tile": tile}
    for m_side in (False, True):
        f = layout.fuse_tile(tile, m_side)
        if f is not None:
            problems["M" if f.m > tile.m else "N"] = f
    now = {}
    for k, v in d.items():
        frac = v["all"].get(default_strided(problems[k]).key) if "all" in v and k in problems else None
        now[k] = (frac, "") if frac is not None else (v["untuned_fraction"] or 0, "*")
    return now


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="folder for fuse_probe.json (fuse_bounds.json with --sectors)")
    ap.add_argument("--cases", default="", help="only cases whose label matches this regex")
    ap.add_argument("--sectors", action="store_true", help="the emulator's sector bounds instead (no GPU)")
    ap.add_argument("--grid", action="store_true", help="grid_cases() (21 classes of shapes) instead of CASES")
    ap.add_argument("--heldout", action="store_true", help="grid_cases(HELDOUT_SIDES) instead of CASES")
    ap.add_argument("--m-side", action="store_true", help="the fusion into longer output rows (fuse_tile's m_side)")
    ap.add_argument("--table", nargs="+", metavar="JSON", help="print a markdown table of result files instead")
    ap.add_argument("--title", default="", help="the table's title (the GPU it ran on)")
    args = ap.parse_args(argv)
    if args.table:
        print(table([r for f in args.table for r in json.loads(Path(f).read_text())], args.title), end="")
        return 0
    if not args.out:
        ap.error("--out is required (or --table)")
    out, rows = Path(args.out), []
    out.mkdir(parents=True, exist_ok=True)
    cases = grid_cases() if args.grid else grid_cases(HELDOUT_SIDES) if args.heldout else CASES
    for case in cases:
        if not re.search(args.cases, label(*case)):
            continue
        r = probe(*case, args.sectors, args.m_side)
        if r is None:
            continue
        rows.append(r)
        t, f = r["tile"], r["fused"]
        print(f"{r['case']:34s} runs {r['runs']:5s} tile {t['problem']}: best {t['fraction']:.3f} [{t['best']}] untuned "
              f"{t['untuned_fraction'] or 0:.3f} | fused {f['problem']}: best {f['fraction']:.3f} [{f['best']}] "
              f"untuned {f['untuned_fraction'] or 0:.3f}", flush=True)
        (out / ("fuse_bounds.json" if args.sectors else "fuse_probe.json")).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
