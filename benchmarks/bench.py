"""Benchmark autotrans against the copy roofline and its peers on one GPU.

The zoo and the held-out shapes, against cudaMemcpy and a 16-byte copy kernel,
torch eager, torch.compile, CuPy, cuBLAS geam and XLA, in one process
(method: autotrans/tools/bench/). After every case
it rewrites benchmarks/results/<gpu>.json and the report <gpu>.md made from it;
at the end it measures tune() time in fresh processes.

    python benchmarks/bench.py                  # zoo + held-out shapes + tune() times
    python benchmarks/bench.py --quick          # 20 cases
    python benchmarks/bench.py --cases 'float16$' --no-tune-times
    python benchmarks/bench.py --resume         # finish a run that --budget-s cut short
    python benchmarks/bench.py --list           # the cases (no GPU needed)

Run benchmarks/grid.py first when the kernels or the search space changed: the
untuned column uses the shipped results in cache/.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from autotrans.tools import bench as bm

REPO = Path(__file__).resolve().parent.parent
TUNE_TIME_CASES = (((16384, 16384), "float32"), ((4097, 4095), "float32"))
TUNE_TIME_RESERVE_S = 60.0     # of the budget, kept for the tune() time runs


def select(args) -> list[bm.Case]:
    cases = bm.quick() if args.quick else bm.zoo() + bm.held_out()
    if args.held_out_only:
        cases = [c for c in cases if c.held_out]
    if args.cases:
        rx = re.compile(args.cases)
        cases = [c for c in cases if rx.search(c.name)]
    return cases


def default_name(gpu_name: str) -> str:
    """"NVIDIA H200" -> "h200"."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", gpu_name.lower()) if w and w != "nvidia"]
    return words[0] if words else "gpu"


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[8:13]))
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results"), help="folder (default: %(default)s)")
    ap.add_argument("--name", help="file name stem (default: from the GPU's name, e.g. h200)")
    ap.add_argument("--quick", action="store_true", help="a subset of 20 cases")
    ap.add_argument("--cases", metavar="REGEX", help="only cases whose name (e.g. 4097x4095:float16) matches")
    ap.add_argument("--held-out-only", action="store_true", help="only the held-out shapes")
    ap.add_argument("--reps", type=int, default=bm.REPS, help="repetitions per case (default: %(default)s)")
    ap.add_argument("--budget-s", type=float, default=480.0,
                    help="start no case after this many seconds (default: %(default)s); --resume finishes")
    ap.add_argument("--resume", action="store_true", help="keep the cases the result file already holds")
    ap.add_argument("--no-peers", action="store_true", help="skip torch, torch.compile, CuPy, cuBLAS and XLA")
    ap.add_argument("--no-jax", action="store_true", help="skip XLA")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--no-tune", action="store_true", help="do not tune cases missing from the user cache")
    ap.add_argument("--no-tune-times", action="store_true", help="skip the tune() time runs")
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    return ap


def list_cases(cases) -> None:
    for c in cases:
        print(f"{c.name:24} {c.nbytes / bm.MIB:9.2f} MiB  {bm.band(c.nbytes):5}  "
              f"{'aligned' if c.aligned else 'unaligned':9}  {','.join(c.classes)}"
              f"{'  held-out' if c.held_out else ''}")
    print(f"{len(cases)} cases")


def tune_times(doc, json_path, md_path) -> None:
    doc["tune_times"] = []
    for shape, dt in TUNE_TIME_CASES:
        t = bm.tune_time(bm.Case(shape, dt))
        doc["tune_times"].append(t)
        bm.write(doc, json_path, md_path)
        print(f"tune() {t['name']}: cold {t['cold_s']} s, with kernels compiled {t['warm_s']} s"
              + (f" ({t['error']})" if t["error"] else ""), flush=True)


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        cases = select(args)
    except re.error as exc:
        print(f"bench.py: error: bad --cases pattern: {exc}", file=sys.stderr)
        return 2
    if args.list:
        list_cases(cases)
        return 0
    if not cases:
        print("bench.py: error: no case matches", file=sys.stderr)
        return 2
    dev = bm.device_or_error("bench.py")
    if dev is None:
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = args.name or default_name(dev.id.name)
    json_path, md_path = out / f"{stem}.json", out / f"{stem}.md"
    reserve = 0.0 if args.no_tune_times else TUNE_TIME_RESERVE_S
    print(f"{len(cases)} cases on {dev.id.text}; writing {json_path} and {md_path}", flush=True)
    try:
        doc = bm.run_suite(cases, json_path, md_path, budget_s=max(0.0, args.budget_s - reserve),
                           resume=args.resume, peers=not args.no_peers, jax=not args.no_jax,
                           torch_compile=not args.no_compile, tune=not args.no_tune, reps=args.reps)
    except ValueError as exc:
        print(f"bench.py: error: {exc}", file=sys.stderr)
        return 2
    if not args.no_tune_times and not doc["not_run"]:
        tune_times(doc, json_path, md_path)
    for label, n, met, missed, _ in bm.summary(doc):
        if n:
            print(f"{label}: {met} of {n}" + (f"; missed: {', '.join(missed)}" if missed else ""))
    if doc["not_run"]:
        print(f"{len(doc['not_run'])} cases not run: run again with --resume", flush=True)
    print(f"wrote {json_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
