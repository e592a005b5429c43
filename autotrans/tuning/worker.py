"""A tuning worker (one per GPU, started by tuning.parallel):

    python -m autotrans.tuning.worker '{"cache_dir": null, "jobs": [[[1, 512, 512], "float32"], ...]}'

Tunes each job on the one GPU it sees and prints one JSON line per job.
"""
from __future__ import annotations

import json
import os
import sys


def main(spec: str) -> int:
    from .runner import tune
    d = json.loads(spec)
    for shape, dtype in d["jobs"]:
        line = {"shape": shape, "dtype": dtype, "device": os.environ.get("CUDA_VISIBLE_DEVICES")}
        try:
            res = tune(shape, dtype, cache_dir=d.get("cache_dir"), progress=False)
            line.update(ok=True, summary=str(res))
        except Exception as exc:   # reported to the parent, which decides; the next job still runs
            line.update(ok=False, error=f"{type(exc).__name__}: {exc}")
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
