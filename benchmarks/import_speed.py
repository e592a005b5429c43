"""How long importing a big export file into the result cache takes (issue 16:
200,000 entries in <= 10 s wall).

Builds an export of N entries shaped like the tests' ``_generated_export``
(one realistic 16x16 float32 record, its shape varied per key), then imports
it into an empty cache in a fresh ``python -c`` process, 3 times: wall and CPU
of ``ResultCache.import_json`` alone, and wall of the whole process.

    python benchmarks/import_speed.py [--entries 200000] [--out benchmarks/results]

prints a markdown table and writes import_speed.md and import_speed.json into --out.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
H200 = "NVIDIA H200|sm_90|132sm|driver 580.95.05|cuda 13.0"
CHILD = """
import json, sys, time
c0 = time.process_time()
from autotrans.results.store import ResultCache
rc = ResultCache(sys.argv[1])
t0, c1 = time.perf_counter(), time.process_time()
counts = rc.import_json(sys.argv[2])
wall, cpu = time.perf_counter() - t0, time.process_time() - c1
print(json.dumps({"import_wall_s": wall, "import_cpu_s": cpu, "process_cpu_s": time.process_time(),
                  "counts": counts}))
"""


def template_record() -> dict:
    """A stored record like the tests' make_record((1, 16, 16), 4, n_candidates=1, failures=0)."""
    from autotrans import __version__
    from autotrans.core.device import DeviceId
    from autotrans.core.problem import gbps
    from autotrans.results.record import Candidate, TuneRecord
    from autotrans.tuning.space import candidates, space_id

    shape, nbytes = (1, 16, 16), 16 * 16 * 4
    memcpy_us = 2 * nbytes / 4.4e12 * 1e6
    cfg = candidates(shape, 4)[0]
    med = memcpy_us * 1.07
    row = Candidate(cfg.key, med, med * 0.99, med * 1.01, 7, gbps(nbytes, med), 24, False)
    dev = DeviceId.from_text(H200)
    versions = {"autotrans": __version__, "space": space_id(), "nvcc": "13.0.88", "cuda": dev.cuda,
                "driver": dev.driver}
    rec = TuneRecord(cfg, shape, 4, "float32", row.median_us, row.q1_us, row.q3_us, row.gbps, memcpy_us,
                     gbps(nbytes, memcpy_us), memcpy_us / med, (row,), (), dev, 50 << 20,
                     "2025-11-30T09:41:07+00:00", 41.5, tuple(sorted(versions.items())))
    return rec.to_json()


def write_export(path: Path, n: int) -> int:
    """An export of ``n`` valid entries (one template record, keys varied); returns its bytes."""
    from autotrans.results.keys import CacheKey

    base = template_record()
    lines = []
    for i in range(n):
        b, m, nn = 1 + i % 97, 16 + (i // 97) % 50, 16 + i // (97 * 50)
        r = dict(base, shape=[b, m, nn])
        lines.append(json.dumps({"key": CacheKey(H200, "gen", (b, m, nn), 4).text, "record": r}))
    head = '{"format": "autotrans-cache", "schema": 1, "entries": [\n'
    path.write_text(head + ",\n".join(lines) + "\n]}\n")
    return path.stat().st_size


def run_once(export: Path, cache: Path) -> dict:
    """One import into the empty cache ``cache``, in a fresh process."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, str(cache), str(export)], cwd=REPO, env=env,
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["process_wall_s"] = time.perf_counter() - t0
    return res


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="import-speed-") as tmp:
        export = Path(tmp) / "export.json"
        size = write_export(export, args.entries)
        runs = [run_once(export, Path(tmp) / f"cache{i}") for i in range(args.repeats)]
    for r in runs:
        if r["counts"] != {"added": args.entries, "replaced": 0, "kept": 0, "skipped": 0}:
            raise SystemExit(f"unexpected import counts {r['counts']}")
    cols = ("import_wall_s", "import_cpu_s", "process_wall_s", "process_cpu_s")
    median = {c: statistics.median(r[c] for r in runs) for c in cols}
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "python": platform.python_version(), "cpu_count": os.cpu_count(), "entries": args.entries,
              "export_bytes": size, "method": "ResultCache(empty folder).import_json(export) in a fresh "
              "`python -c` process; import_* time that call alone, process_* the whole process "
              "(wall measured by the parent)", "runs": runs, "median": median}
    lines = [f"Import of {args.entries:,} entries ({size / 2**20:.0f} MiB), {result['date']}, Python "
             f"{result['python']}, {result['cpu_count']} CPUs", "",
             "| run | import wall s | import CPU s | process wall s | process CPU s |",
             "|---|---|---|---|---|"]
    for name, r in [*((str(i + 1), r) for i, r in enumerate(runs)), ("median", median)]:
        lines.append(f"| {name} | " + " | ".join(f"{r[c]:.2f}" for c in cols) + " |")
    table = "\n".join(lines) + "\n"
    print(table, end="")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "import_speed.md").write_text(table)
    (args.out / "import_speed.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
