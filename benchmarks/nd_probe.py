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
"""
from __future__ import annotations

import argparse
import json
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


def label(shape, dtype, axes) -> str:
    return f"{'x'.join(map(str, shape))} {dtype} {axes}"


def probe(shape, dtype, axes) -> dict:
    import numpy as np

    from autotrans.core import layout
    from autotrans.results.keys import problem_text
    from autotrans.tuning.strided import default_strided, run_problem, tune_problem
    e = np.dtype(dtype).itemsize
    strides = tuple(int(s) for s in np.empty(shape, dtype).strides)
    problem = run_problem(layout.canonical(shape, strides, e, axes))
    rec = tune_problem(problem, save=False, progress=False)
    frac = {c.key: rec.memcpy_us / c.median_us for c in rec.candidates}

    def best(variant):
        keys = [k for k in frac if k.startswith(variant + ":")]
        k = max(keys, key=frac.get, default=None)
        return {"key": k, "of_memcpy": frac.get(k)}
    pick = default_strided(problem).key
    return {"case": label(shape, dtype, axes), "problem": type(problem).__name__,
            "batch": len(getattr(problem, "batch", ())), "m": problem.m, "n": problem.n,
            "memcpy_us": rec.memcpy_us, "ndtile": best("ndtile"), "ndshift": best("ndshift"),
            "untuned": {"key": pick, "of_memcpy": frac.get(pick)}, "failures": len(rec.failures),
            "problem_text": problem_text(problem), "all": frac}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for nd_probe.json")
    ap.add_argument("--cases", default="", help="only cases whose label matches this regex")
    args = ap.parse_args(argv)
    rows, out = [], Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for shape, dtype, axes in CASES:
        if not re.search(args.cases, label(shape, dtype, axes)):
            continue
        r = probe(shape, dtype, axes)
        rows.append(r)
        f = {k: (r[k]["of_memcpy"] or 0) for k in ("ndtile", "ndshift", "untuned")}
        print(f"{r['case']:42s} {r['problem']} batch {r['batch']} {r['m']}x{r['n']}: "
              f"ndtile {f['ndtile']:.3f} ndshift {f['ndshift']:.3f} untuned {f['untuned']:.3f} "
              f"[{r['ndshift']['key']}] fail {r['failures']}", flush=True)
        (out / "nd_probe.json").write_text(json.dumps(rows, indent=1) + "\n")   # each case: a run cut short keeps them
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
