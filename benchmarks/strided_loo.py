"""How good the nearest-problem pick for a strided problem is, measured
without a GPU: leave one out over probe results that hold every candidate's
time. For each fused N-d problem of a results file (one GPU), the nearest
other problem of its class (api.strided_select's problem_class and
log-distance) stands in for the shipped or user results; its table gives
(a) its winner, the pick before session 40, and (b) the config predicted
fastest here (api.predict's score: its time there, scaled by the tile fill
and spread here, fill weighted by --weight). Each pick is read from the
left-out problem's own table, as a fraction of that table's best.

    python benchmarks/strided_loo.py [--weight 1.0] [FILE.json ...]

Files: nd_probe.py's JSON (rows with "case" and "all": config key ->
fraction of a memcpy; "problem_text" where written, else the problem is
rebuilt from the case label). Default: every benchmarks/results/nd-*.json.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from autotrans.api import predict                                    # noqa: E402
from autotrans.api.strided_select import problem_class              # noqa: E402
from autotrans.kernels.config import KernelConfig                   # noqa: E402
from autotrans.kernels.strided import launch_shape, strided_problems, strided_shape  # noqa: E402
from autotrans.results.keys import problem_from_text                # noqa: E402

SMS = 132   # H100 and H200 alike


def problem_of(row: dict):
    """The fused problem of a probe row: its problem_text, else rebuilt from
    its label ("126x65x124x33 int8 (2, 0, 3, 1)")."""
    if row.get("problem_text"):
        return problem_from_text(row["problem_text"])
    from nd_probe import fused_problem
    shape, dtype, axes = re.match(r"(\S+) (\w+) \((.*)\)", row["case"]).groups()
    return fused_problem(tuple(int(v) for v in shape.split("x")), dtype,
                         tuple(int(a) for a in axes.split(",")))


def _runs(key: str, problem) -> bool:
    return not strided_problems(KernelConfig.from_key(key), problem, 16)


def winner(table: dict, here) -> str | None:
    """The table's fastest config that runs ``here``."""
    return next((k for k, _ in sorted(table.items(), key=lambda kv: -kv[1]) if _runs(k, here)), None)


def predicted(table: dict, there, here, weight: float, margin: float = predict.RERANK_MARGIN) -> str | None:
    """The table's config (tuned on ``there``) predicted fastest on ``here``
    (predict.margin_pick: the table's winner that runs here stays unless
    another is predicted ``margin`` faster)."""
    best, scored = max(table.values()), {}
    for k, frac in table.items():
        if not _runs(k, here):
            continue
        cfg = KernelConfig.from_key(k)
        t0 = launch_shape(cfg, there)
        t = predict.Timed(cfg, frac / best, predict.fill(cfg, t0), predict.spread(cfg, t0, SMS))
        scored[cfg] = predict.score(t, launch_shape(cfg, here), SMS, weight)
    top = winner(table, here)
    pick = predict.margin_pick(scored, KernelConfig.from_key(top) if top else None, margin)
    return pick.key if pick else None


def leave_one_out(rows: list[dict], weight: float, margin: float = predict.RERANK_MARGIN) -> list[tuple]:
    """(case, nearest case, winner's fraction of the best, prediction's) per left-out row."""
    cases = [(r["case"], problem_of(r), {k: v for k, v in r["all"].items() if v}) for r in rows if r.get("all")]
    logs = {name: tuple(math.log(max(x, 1)) for x in strided_shape(p)) for name, p, _ in cases}
    out = []
    for name, p, table in cases:
        near = [(math.dist(logs[n], logs[name]), n, q, t) for n, q, t in cases
                if n != name and problem_class(q) == problem_class(p)]
        if not near:
            continue
        _, n, q, t = min(near, key=lambda x: x[0])
        old, new = winner(t, p), predicted(t, q, p, weight, margin)
        if old in table and new in table:
            best = max(table.values())
            out.append((name, n, table[old] / best, table[new] / best))
    return out


def _gm(xs) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help="probe JSON files (default: benchmarks/results/nd-*.json)")
    ap.add_argument("--weight", type=float, default=predict.STRIDED_FILL_WEIGHT,
                    help="fill weight of the prediction (default: %(default)s, api.predict.STRIDED_FILL_WEIGHT)")
    ap.add_argument("--margin", type=float, default=predict.RERANK_MARGIN,
                    help="the winner stays unless another is predicted this much faster "
                         "(default: %(default)s, api.predict.RERANK_MARGIN)")
    args = ap.parse_args(argv)
    files = args.files or sorted(str(p) for p in (REPO / "benchmarks" / "results").glob("nd-*.json"))
    print("| file | problems | nearest's winner: geomean (worst) | predicted: geomean (worst) |")
    print("|---|---:|---:|---:|")
    every = []
    for f in files:
        rows = leave_one_out(json.loads(Path(f).read_text()), args.weight, args.margin)
        every += rows
        if rows:
            old, new = [r[2] for r in rows], [r[3] for r in rows]
            print(f"| {Path(f).name} | {len(rows)} | {_gm(old):.3f} ({min(old):.2f}) | {_gm(new):.3f} ({min(new):.2f}) |")
    old, new = [r[2] for r in every], [r[3] for r in every]
    print(f"| all | {len(every)} | {_gm(old):.3f} ({min(old, default=0):.2f}) | {_gm(new):.3f} ({min(new, default=0):.2f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
