"""Do two template trees compile the same kernels to the same cubins? (No GPU.)

Prints, for a sample of configs (SAMPLE of each family, element size and
layout from the default dense and strided spaces, casts and epilogues, and the
fixed-shape kernels of the shipped results), the hash of the cubin nvcc makes
of each group of kernels with the templates of the autotrans package it
imports. Run it once per tree and compare the files: identical lines mean the
device code did not change, so the shipped results may be re-keyed to the new
templates hash rather than re-tuned (NOTES 20, 33, 37).

    PYTHONPATH=/path/to/old/checkout python benchmarks/same_cubins.py --out old.txt
    python benchmarks/same_cubins.py --out new.txt && diff old.txt new.txt
"""
from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from pathlib import Path

SAMPLE = 3   # configs of each (family, element size, layout, cast, epilogue)
ARCHES = ("sm_90",)


def sample_keys(repo: Path) -> list[str]:
    from autotrans.kernels.config import CAST_SIZES, ELEM_SIZES, EPILOGUES
    from autotrans.kernels.strided import strided_space
    from autotrans.tuning.space import default_space
    groups: dict[tuple, list[str]] = {}
    cfgs = [c for e in ELEM_SIZES for c in default_space(e)]
    cfgs += [c for e in ELEM_SIZES for epi in EPILOGUES for c in strided_space(e, epi)]
    cfgs += [c for cast, (e, _) in CAST_SIZES.items() for c in strided_space(e, cast=cast)]
    for c in sorted(cfgs, key=lambda c: c.key):
        g = groups.setdefault((c.variant, c.elem_bytes, c.layout, c.cast, c.epilogue), [])
        if len(g) < SAMPLE:
            g.append(c.key)
    fixed = sorted({e["record"]["key"] for e in json.loads((repo / "cache" / "h200.json").read_text())["entries"]
                    if "@" in e["record"]["key"]})
    return sorted(k for g in groups.values() for k in g) + fixed[::10]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--keys", help="read the configs from this file (one key a line) instead of sampling")
    a = ap.parse_args(argv)
    import autotrans
    from autotrans.build.compile import compile_configs
    from autotrans.kernels.config import KernelConfig
    repo = Path(__file__).resolve().parent.parent
    keys = Path(a.keys).read_text().split() if a.keys else sample_keys(repo)
    cfgs = [KernelConfig.from_key(k) for k in keys]
    lines = [f"# templates of {Path(autotrans.__file__).parent}"]
    with tempfile.TemporaryDirectory(prefix="autotrans-cubins-") as store:
        for arch in ARCHES:
            done = compile_configs(cfgs, arch, root=store)
            for k in keys:
                c = done[k]
                h = c.object if c.ok else "error:" + hashlib.sha256(c.error.encode()).hexdigest()[:16]
                lines.append(f"{arch} {k} {h}")   # store objects are named by their bytes' hash
    Path(a.out).write_text("\n".join(lines[1:]) + "\n")
    print(lines[0], f"{len(keys)} configs", sep="; ")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
