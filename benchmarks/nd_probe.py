"""ndshift against ndtile on fused N-d permutations (NdTileProblems), by class:
1-, 2- and 4-byte elements, with and without batch dims, small and large
fused matrices. Each problem is what permute() runs for the permutation
(tuning.strided.run_problem of its canonical problem); every candidate of
both variants is verified and timed by the tuner (tune_problem: interleaved
with a memcpy of the same bytes, the L2 flushed before every timed launch,
CUDA events, medians), nothing saved. Prints and writes, per problem, the
best of each variant and the untuned rule's pick (default_strided), as
fractions of the memcpy in the same run (the JSON: every candidate's too).

    python benchmarks/nd_probe.py --out /tmp/nd               # every case
    python benchmarks/nd_probe.py --out /tmp/nd --cases int8  # labels matching a regex
    python benchmarks/nd_probe.py --out /tmp/nd --sectors     # sector bounds instead (no GPU)
    python benchmarks/nd_probe.py --out /tmp/nd --grid        # ndshift's tiles over grid_cases()
    python benchmarks/nd_probe.py --out /tmp/nd --grid --odd  # and its tiles of 72 and 112 rows
    python benchmarks/nd_probe.py --out /tmp/nd --grid --both --cases float32   # ndtile's too
    python benchmarks/nd_probe.py --table /tmp/nd/nd_probe.json --title "H100"   # a markdown table

--table renders a result file: per case the best of each variant, the untuned
pick of the run, and the pick of the rule at rendering (default_strided then) with its
fraction from the same run (blank where it was not among the run's candidates).

With --sectors, each candidate's bound is the emulator's count (ideal sectors
of reading the input and writing the output once, over the sectors the launch
touches: autotrans.emulate.strided_sectors), about a minute a case.
"""
from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path

CASES = [  # (shape, dtype, axes)
    ((133, 65, 129, 61), "int8", (3, 2, 1, 0)),      # no batch: 4 dims a side
    ((67, 65, 129, 61), "float16", (3, 2, 1, 0)),
    ((33, 65, 129, 61), "float32", (3, 2, 1, 0)),
    ((133, 65, 129, 61), "int8", (2, 0, 3, 1)),      # a batch dim
    ((67, 65, 129, 61), "float16", (2, 0, 3, 1)),
    ((33, 65, 129, 61), "float32", (2, 0, 3, 1)),
    ((133, 65, 129, 61), "int8", (1, 3, 0, 2)),
    ((67, 65, 129, 61), "float16", (1, 3, 0, 2)),
    ((33, 65, 129, 61), "float32", (1, 3, 0, 2)),
    ((45, 24000, 61), "int8", (2, 1, 0)),            # 3-D (2, 1, 0) of small matrices
    ((45, 12000, 61), "float16", (2, 1, 0)),
    ((61, 33, 1021, 33), "int8", (3, 1, 0, 2)),      # 33-element runs on both sides
    ((61, 33, 1021, 33), "int8", (1, 3, 2, 0)),
    ((9, 17, 515, 443), "float16", (0, 3, 2, 1)),
]


def grid_cases() -> list:
    """--grid: (batch, m, x, y) (2, 0, 3, 1) orders (fused matrices of m rows,
    batched) and (45, c, y) (2, 1, 0) ones (long fused rows of y columns), about
    32 MiB of int8, 16 MiB of float16 and 32 MiB of float32 each."""
    cases = []
    for dtype, size in (("int8", 32 << 20), ("float16", 16 << 20), ("float32", 32 << 20)):
        for m in (65, 97, 200, 544, 3000):
            for y in (33, 110, 513):
                x = max(1, 4096 // y) if m < 1000 else 3
                cases.append(((max(1, size // (m * x * y)), m, x, y), dtype, (2, 0, 3, 1)))
        for y in (40, 100, 250, 1000, 4000):
            cases.append(((45, size // (45 * y), y), dtype, (2, 1, 0)))
    return cases


def heldout_cases() -> list:
    """--heldout: float32 cases of grid_cases()'s classes at sizes no rule was
    fitted to (fused matrices of 81, 113 and 300 rows; rows of 150-2000 columns)."""
    cases = [((max(1, (32 << 20) // (m * (4096 // y) * y * 4)), m, 4096 // y, y), "float32", (2, 0, 3, 1))
             for m in (81, 113, 300) for y in (47, 260)]
    return cases + [((45, (32 << 20) // (45 * y * 4), y), "float32", (2, 1, 0)) for y in (150, 600, 2000)]


def label(shape, dtype, axes) -> str:
    return f"{'x'.join(map(str, shape))} {dtype} {axes}"


def odd_configs(problem) -> list:
    """--odd: ndshift's odd-row tiles outside the tuning space (odd_row_space) that can run problem."""
    from autotrans import families
    from autotrans.kernels.config import KernelConfig
    from autotrans.kernels.strided import strided_problems
    cfgs = [KernelConfig(**d) for d in families.of("ndshift").odd_row_space(problem.elem)]
    return [c for c in cfgs if not strided_problems(c, problem, 16)]


def probe(shape, dtype, axes, variant: str = "", odd: bool = False) -> dict:
    """Every candidate (of variant, where given; with odd_configs, where odd)
    tuned and timed (fractions of the memcpy in the same run)."""
    from autotrans.backend.cuda import device
    from autotrans.results.keys import problem_text
    from autotrans.tuning.strided import strided_candidates, tune_problem
    problem = fused_problem(shape, dtype, axes)
    cfgs = [c for c in strided_candidates(problem, device().limits) if not variant or c.variant == variant]
    rec = tune_problem(problem, save=False, progress=False, configs=cfgs + (odd_configs(problem) if odd else []))
    frac = {c.key: rec.memcpy_us / c.median_us for c in rec.candidates}
    return summary((shape, dtype, axes), problem, frac, memcpy_us=rec.memcpy_us,
                   failures=len(rec.failures), problem_text=problem_text(problem))


def bounds(shape, dtype, axes, odd: bool = False) -> dict:
    """Every ndshift and ndtile candidate's sector bound (no GPU), and where
    odd, odd_configs' too."""
    from autotrans.emulate.sectors import strided_sectors
    from autotrans.tuning.strided import strided_candidates
    problem = fused_problem(shape, dtype, axes)
    frac = {}
    for c in strided_candidates(problem) + (odd_configs(problem) if odd else []):
        if c.variant in ("ndshift", "ndtile"):
            s = strided_sectors(c, problem)
            frac[c.key] = (s.ideal + s.out_ideal) / (s.load_sectors + s.store_sectors)
    return summary((shape, dtype, axes), problem, frac, failures=0)


def fused_problem(shape, dtype, axes):
    """The problem permute() runs for x.transpose(axes) of a C-contiguous x."""
    import numpy as np

    from autotrans.core import layout
    from autotrans.tuning.strided import run_problem
    e = np.dtype(dtype).itemsize
    return run_problem(layout.canonical(shape, layout.c_strides(shape, e), e, axes))


def summary(case, problem, frac: dict, **extra) -> dict:
    """A case's row: the best of each variant and the untuned pick, by frac (key -> fraction)."""
    from autotrans.tuning.strided import default_strided

    def best(variant):
        k = max((k for k in frac if k.startswith(variant + ":")), key=frac.get, default=None)
        return {"key": k, "fraction": frac.get(k)}
    pick = default_strided(problem).key
    return {"case": label(*case), "problem": type(problem).__name__,
            "batch": len(getattr(problem, "batch", ())), "m": problem.m, "n": problem.n,
            "ndtile": best("ndtile"), "ndshift": best("ndshift"),
            "untuned": {"key": pick, "fraction": frac.get(pick)}, **extra, "all": frac}


def table(rows: list, title: str = "") -> str:
    """Markdown of a result file's rows (see --table)."""
    from autotrans.tuning.strided import default_strided
    out = [f"# nd_probe.py {title}".rstrip(), "",
           "Fractions of a memcpy of the same bytes in the same run (see nd_probe.py's docstring).", "",
           "| case | fused | best ndtile | best ndshift | run's untuned pick | the rule at rendering |",
           "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        shape, dtype, axes = _parse(r["case"])
        now = default_strided(fused_problem(shape, dtype, axes)).key
        f = r["all"].get(now)
        cell = lambda x: f"{x['fraction']:.3f} `{x['key']}`" if x["fraction"] is not None else "—"  # noqa: E731
        out.append(f"| {r['case']} | {'batch ' if r['batch'] else ''}{r['m']}x{r['n']} | {cell(r['ndtile'])} "
                   f"| {cell(r['ndshift'])} | {cell(r['untuned'])} | {cell({'key': now, 'fraction': f})} |")
    out += ["", _fit(rows)]
    return "\n".join(out) + "\n"


def _fit(rows: list) -> str:
    """How near the rule's ndshift picks (at rendering) come to the best ndshift tile."""
    from autotrans.tuning.strided import default_strided
    ratio = []
    for r in rows:
        now = default_strided(fused_problem(*_parse(r["case"]))).key
        if now.startswith("ndshift:") and r["all"].get(now) and r["ndshift"]["fraction"]:
            ratio.append(r["all"][now] / r["ndshift"]["fraction"])
    if not ratio:
        return "The rule at rendering picks ndshift on none of these cases."
    return (f"The rule at rendering picks ndshift on {len(ratio)} of {len(rows)} cases: its pick runs at "
            f"{math.exp(sum(map(math.log, ratio)) / len(ratio)):.3f} of the best ndshift tile's "
            f"speed (geometric mean), {min(ratio):.3f} at worst.")


def _parse(case: str):
    """(shape, dtype, axes) of a label()."""
    dims, dtype, axes = case.split(" ", 2)
    return tuple(map(int, dims.split("x"))), dtype, tuple(int(a) for a in axes.strip("()").split(",") if a.strip())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="folder for nd_probe.json")
    ap.add_argument("--table", metavar="JSON", help="print a markdown table of a result file instead")
    ap.add_argument("--title", default="", help="the table's title (the GPU it ran on)")
    ap.add_argument("--cases", default="", help="only cases whose label matches this regex")
    ap.add_argument("--grid", action="store_true",
                    help="the ndshift candidates alone over grid_cases(); writes nd_grid.json")
    ap.add_argument("--heldout", action="store_true",
                    help="heldout_cases() instead, every candidate (float32 classes at sizes no rule saw)")
    ap.add_argument("--both", action="store_true",
                    help="with --grid: ndtile's candidates too (4-byte elements, where the two compete)")
    ap.add_argument("--odd", action="store_true",
                    help="also ndshift's tiles of 72 and 112 rows (not in the tuning space)")
    ap.add_argument("--sectors", action="store_true",
                    help="the emulator's sector bounds instead of timings (no GPU); writes nd_bounds.json")
    args = ap.parse_args(argv)
    if args.table:
        print(table(json.loads(Path(args.table).read_text()), args.title), end="")
        return 0
    if not args.out:
        ap.error("--out is required (or --table)")
    rows, out = [], Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = "nd_bounds.json" if args.sectors else "nd_grid.json" if args.grid else "nd_probe.json"
    cases = grid_cases() if args.grid else heldout_cases() if args.heldout else CASES
    for shape, dtype, axes in cases:
        if not re.search(args.cases, label(shape, dtype, axes)):
            continue
        if type(fused_problem(shape, dtype, axes)).__name__ != "NdTileProblem":
            continue                                      # (grid cases whose matrices are not fused)
        r = (bounds(shape, dtype, axes, args.odd) if args.sectors else
             probe(shape, dtype, axes, "ndshift" if args.grid and not args.both else "", args.odd))
        rows.append(r)
        f = {k: (r[k]["fraction"] or 0) for k in ("ndtile", "ndshift", "untuned")}
        print(f"{r['case']:42s} {r['problem']} batch {r['batch']} {r['m']}x{r['n']}: "
              f"ndtile {f['ndtile']:.3f} ndshift {f['ndshift']:.3f} untuned {f['untuned']:.3f} "
              f"[{r['ndshift']['key']}] fail {r['failures']}", flush=True)
        (out / name).write_text(json.dumps(rows, indent=1) + "\n")   # each case: a run cut short keeps them
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
