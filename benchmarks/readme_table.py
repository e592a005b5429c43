"""Print the README's results table (markdown) from a benchmark result file.

    python benchmarks/readme_table.py                          # benchmarks/results/h200.json
    python benchmarks/readme_table.py results.json --all       # every case
    python benchmarks/readme_table.py --cases 8192x8192:float32 1024x1024:float32
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autotrans.tools import bench as bm

REPO = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default=str(REPO / "benchmarks" / "results" / "h200.json"))
    ap.add_argument("--all", action="store_true", help="every case, not only the README's selection")
    ap.add_argument("--cases", nargs="+", metavar="NAME", help="these cases (SHAPE:DTYPE), in this order")
    args = ap.parse_args(argv)
    try:
        doc = bm.load_results(args.file)
    except ValueError as exc:
        print(f"readme_table.py: error: {exc}", file=sys.stderr)
        return 2
    print(bm.readme_table(doc, "all" if args.all else args.cases), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
