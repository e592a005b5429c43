"""The untuned choice, old rule against new, on the GPU: the nearest tuned
shape's winner (select.Table with neighbours=1) against the config fastest on
average over the select.NEIGHBOURS nearest (the default), both from the
shipped results only, on the zoo and held-out shapes where the two differ.
Timed as bench.py times (one process, the contenders interleaved, the L2
flushed and a spin before every launch, CUDA events, medians), every output
checked byte for byte; the tuned config (tune() into the user cache) is the
reference.

    python benchmarks/untuned_ab.py [--cases REGEX] [--reps 15] [--no-tune]

Writes benchmarks/results/<gpu>-untuned-ab.json and .md.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import re
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autotrans.tools import bench as bm                      # noqa: E402

RULES = {"old": 1, "new": None}      # neighbours per rule (None: select.NEIGHBOURS)


def choices(case, tables) -> dict:
    return {rule: t.choose(case.bmn) for rule, t in tables.items()}


def tables_for(elem_bytes: int, dev, empty) -> dict:
    from autotrans.api.select import NEIGHBOURS, Table, usable_entries
    entries = usable_entries(dev.id.text, elem_bytes, empty)
    return {rule: Table(entries, elem_bytes, dev.limits, neighbours=k or NEIGHBOURS) for rule, k in RULES.items()}


def time_case(bench, case, picks: dict, tune: bool, reps: int) -> dict:
    """Median µs per contender (old, new, tuned), each output checked first."""
    from autotrans.tools.bench import check, ours
    from autotrans.tools.bench.gpu import Data
    from autotrans.tools.bench.measure import measure, spin_us
    data = Data(bench.gpu, case)
    try:
        entries = [ours._entry(rule, case, data, c) for rule, c in picks.items()]
        if tune:
            t = ours.tuned_entry(bench, case, data)
            if isinstance(t, bm.Result):
                return {"error": f"tuned: {t.status} {t.note}"}
            entries.append(t)
        for e in entries:
            why = check.output(bench.gpu, e, case, data)
            if why:
                return {"error": f"{e.name}: {why[0]} {why[1]}"}
        errors: dict = {}
        spin = spin_us(entries, data, errors)
        samples, _ = measure(bench.gpu, entries, data, spin, None, errors, reps)
        if errors:
            return {"error": "; ".join(f"{k}: {v}" for k, v in errors.items())}
        return {e.name: {"median_us": statistics.median(samples[e.name]), "config": e.config} for e in entries}
    finally:
        bench._clean_up(data)


def markdown(doc: dict) -> str:
    rows = doc["rows"]
    timed = [r for r in rows if "old" in r.get("us", {})]
    lines = [f"# Untuned choice: the nearest's winner (old) against the consensus of the nearest {doc['neighbours']} "
             f"(new)", "", doc["meta"], "",
             f"{len(rows)} cases; the rules differ on {len(timed)}; each of those timed {doc['reps']} times "
             "interleaved, L2 flushed before every launch, medians.", "",
             "| case | MiB | old µs | new µs | old / new | tuned µs | old of tuned | new of tuned |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    gains, old_ok, new_ok, n_ref = [], 0, 0, 0
    for r in timed:
        u = r["us"]
        o, n, t = u["old"]["median_us"], u["new"]["median_us"], u.get("tuned", {}).get("median_us")
        gains.append(o / n)
        if t:
            n_ref += 1
            old_ok += t / o >= 0.95
            new_ok += t / n >= 0.95
        lines.append(f"| {r['name']}{' (held out)' if r['held_out'] else ''} | {r['mib']:.2f} | {o:.2f} | {n:.2f} | "
                     f"{o / n:.3f} | {'' if not t else f'{t:.2f}'} | {'' if not t else f'{t / o:.3f}'} | "
                     f"{'' if not t else f'{t / n:.3f}'} |")
    errs = [r for r in rows if "error" in r.get("us", {})]
    if gains:
        g = math.exp(statistics.mean(map(math.log, gains)))
        lines += ["", f"Geometric mean old / new time over the {len(gains)} differing cases: {g:.3f} "
                      f"(> 1: the new rule is faster); new faster by > 2% on {sum(x > 1.02 for x in gains)}, "
                      f"slower by > 2% on {sum(x < 1 / 1.02 for x in gains)}."]
    if n_ref:
        lines.append(f"At least 0.95 of tuned: old {old_ok}, new {new_ok} of {n_ref}.")
    lines += [f"- {r['name']}: {r['us']['error']}" for r in errs]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", metavar="REGEX")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--no-tune", action="store_true", help="no tuned reference")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results"))
    args = ap.parse_args(argv)
    dev = bm.device_or_error("untuned_ab")
    if dev is None:
        return 1
    from autotrans.results.store import ResultCache
    from autotrans.api.select import NEIGHBOURS
    cases = bm.zoo() + bm.held_out()
    if args.cases:
        cases = [c for c in cases if re.search(args.cases, c.name)]
    empty = ResultCache(tempfile.mkdtemp(prefix="autotrans-ab-empty-"))
    bench = bm.Bench(peers=False, tune=not args.no_tune, reps=args.reps)
    tables: dict = {}
    rows = []
    try:
        for i, case in enumerate(cases):
            t = tables.setdefault(case.elem_bytes, tables_for(case.elem_bytes, dev, empty))
            picks = choices(case, t)
            row = {"name": case.name, "mib": case.nbytes / bm.MIB, "held_out": case.held_out,
                   "configs": {k: c.config.key for k, c in picks.items()}, "us": {}}
            if picks["old"].config != picks["new"].config and 1 not in case.bmn[1:]:
                row["us"] = time_case(bench, case, picks, not args.no_tune, args.reps)
                print(f"[{i + 1}/{len(cases)}] {case.name}: {json.dumps(row['us'])}", flush=True)
            rows.append(row)
    finally:
        bench.close()
    meta = (f"{dev.id.text}; {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}; "
            f"python benchmarks/untuned_ab.py{' ' + ' '.join(argv or sys.argv[1:]) if (argv or sys.argv[1:]) else ''}")
    doc = {"meta": meta, "neighbours": NEIGHBOURS, "reps": args.reps, "rows": rows}
    words = [w for w in re.split(r"[^a-z0-9]+", dev.id.name.lower()) if w and w != "nvidia"]
    stem = Path(args.out) / f"{words[0] if words else 'gpu'}-untuned-ab"
    stem.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
    stem.with_suffix(".md").write_text(markdown(doc))
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
