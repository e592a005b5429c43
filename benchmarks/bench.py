"""The performance benchmark: autotrans against memcpy of the same bytes, the
seeds' best kernel, torch, CuPy and XLA, on the cases of the performance issue,
in one run on one GPU. Writes a markdown and a JSON file:

    python benchmarks/bench.py --out benchmarks/results           # all cases
    python benchmarks/bench.py 8192x8192:float32 --out /tmp/r      # chosen cases
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import autotrans
from autotrans.backend import cuda as driver
from autotrans.tools import benchmark
from autotrans.tuning.space import space_id

MIB = 1 << 20


def target(row):
    """(description, required fraction of memcpy) for a row, or None."""
    shape, e = tuple(row["shape"][1:]), np.dtype(row["dtype"]).itemsize
    nbytes = int(np.prod(row["shape"])) * e
    if shape == (4097, 4095):
        return "4097x4095", 0.90
    if shape in ((65536, 64), (64, 65536)):
        return "65536x64 / 64x65536", 0.80
    if shape == (1024, 1024):
        return "1024²: kernel <= 1.3x memcpy time", 1 / 1.3
    if nbytes >= 64 * MIB:
        return {1: ("≥64 MiB, 1-byte", 0.90), 2: ("≥64 MiB, 2-byte", 0.93)}.get(e, ("≥64 MiB, 4/8/16-byte", 0.95))
    return None


def targets_table(rows):
    lines = ["| case | target | autotrans | met | beats torch & CuPy | XLA time / autotrans time* |",
             "|---|---|---:|---|---|---:|"]
    for r in rows:
        t = target(r)
        peers = [r.get(k) for k in ("torch_us", "cupy_us") if r.get(k)]
        beats = all(r["autotrans_us"] < p for p in peers) if peers else None
        xla = r["jax_us"] / r["autotrans_us"] if r.get("jax_us") else None
        shape = "x".join(map(str, r["shape"][1:]))
        lines.append(f"| {shape} {r['dtype']} | {t[0] + ' ≥ ' + format(t[1], '.2f') if t else '–'} | "
                     f"{r['frac_memcpy']:.3f} | {'yes' if t and r['frac_memcpy'] >= t[1] else ('**no**' if t else '–')} | "
                     f"{'yes' if beats else ('**no**' if beats is False else '–')} | "
                     f"{xla if xla else float('nan'):.2f} |")
    return "\n".join(lines) + "\n"


def tune_times(shape, dtype):
    """tune() seconds in a fresh process with an empty kernel cache (cold), then
    in another fresh process with the kernels compiled (warm)."""
    code = ("import time, autotrans; t = time.perf_counter(); "
            f"autotrans.tune({tuple(shape)!r}, {dtype!r}, save=False, progress=False); "
            "print(time.perf_counter() - t)")
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, AUTOTRANS_CACHE_DIR=d)
        run = lambda: float(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                           capture_output=True, text=True).stdout.split()[-1])
        return {"shape": list(shape), "dtype": dtype, "cold_s": run(), "warm_s": run()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", help="SHAPE:DTYPE (default: the issue's cases)")
    ap.add_argument("--out", default="benchmarks/results", help="folder for results (default: %(default)s)")
    ap.add_argument("--name", default=None, help="file name stem (default: the GPU's name)")
    ap.add_argument("--export-cache", help="also export this device's tuned results to this JSON file")
    ap.add_argument("--tune-times", nargs="*", default=["16384x16384:float32", "4097x4095:float32"],
                    help="cases whose cold/warm tune() time to measure")
    args = ap.parse_args()
    cases = [(tuple(int(v) for v in c.split(":")[0].split("x")), c.split(":")[1]) for c in args.cases] \
        or benchmark.default_cases()
    dev = driver.device()
    rows = benchmark.run(cases, peers=True, progress=True)
    overhead = benchmark.call_overhead()
    tunes = [tune_times(tuple(int(v) for v in c.split(":")[0].split("x")), c.split(":")[1])
             for c in args.tune_times]
    meta = {"gpu": dev.id.name, "fingerprint": dev.id.text, "sms": dev.sms, "driver": dev.id.driver,
            "cuda": dev.id.cuda, "autotrans": autotrans.__version__, "space": space_id(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = args.name or dev.id.name.replace("NVIDIA ", "").replace(" ", "-").lower()
    (out / f"{stem}.json").write_text(json.dumps({"meta": meta, "rows": rows, "call_overhead": overhead,
                                                  "tune_times": tunes}, indent=1) + "\n")
    md = render(meta, rows, overhead, tunes)
    (out / f"{stem}.md").write_text(md)
    print(md)
    if args.export_cache:
        n = autotrans.ResultCache().export_json(args.export_cache, device=dev.id.text)
        print(f"exported {n} tuned results to {args.export_cache}")


def render(meta, rows, overhead, tunes) -> str:
    tt = "\n".join(f"| {'x'.join(map(str, t['shape']))} {t['dtype']} | {t['cold_s']:.2f} | {t['warm_s']:.2f} |"
                   for t in tunes)
    return (f"# autotrans benchmark: {meta['gpu']}\n\n"
            f"{meta['fingerprint']}, {meta['sms']} SMs; autotrans {meta['autotrans']} (space {meta['space']}); "
            f"{meta['date']}.\n\n"
            "Fractions are of a device-to-device memcpy of the same bytes measured in the same run "
            "(CUDA events, interleaved medians, input/output sets rotated so each run starts with a cold L2). "
            "*XLA: wall clock per jitted call (many in flight), against the same memcpy; an estimate, "
            "dominated by dispatch cost for small matrices.\n\n"
            + benchmark.markdown(rows) + "\n## Targets\n\n" + targets_table(rows)
            + f"\n## Call overhead (1024x1024 float32, wall time per call)\n\n"
              f"autotrans.transpose(x): {overhead['transpose_us']:.1f} µs; torch x.t().contiguous(): "
              f"{overhead.get('torch_us', float('nan')):.1f} µs\n"
            + "\n## tune() time (fresh process; cold = empty kernel cache)\n\n| case | cold s | warm s |\n"
              "|---|---:|---:|\n" + tt + "\n")


if __name__ == "__main__":
    main()
