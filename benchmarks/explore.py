"""Print the tuning landscape of a few cases: the top candidates, the classic
variants and memcpy, from real tune() runs (nothing is saved to the cache).

    python benchmarks/explore.py 8192x8192:float32 16384x16384:int8 --top 12
"""
import argparse
import dataclasses
import json
import os
import time

import numpy as np

import autotrans
from autotrans.kernels.config import CLASSIC_NAMES, ORDERS, KernelConfig, classic


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="+", help="SHAPE:DTYPE, e.g. 8192x8192:float32")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--json", help="write every candidate's numbers here")
    ap.add_argument("--orders", action="store_true",
                    help="also time the top configs with the other tile orders")
    args = ap.parse_args()
    dump = []
    for case in args.cases:
        shape_s, dt = case.split(":")
        shape = tuple(int(s) for s in shape_s.split("x"))
        t = time.perf_counter()
        res = autotrans.tune(shape, np.dtype(dt), save=False, progress=False)
        cold = time.perf_counter() - t
        t = time.perf_counter()
        autotrans.tune(shape, np.dtype(dt), save=False, progress=False)
        warm = time.perf_counter() - t
        mem_gbps = res.record["memcpy_gbps"]
        print(f"\n== {case}: memcpy {res.memcpy_us:.1f} us = {mem_gbps:.0f} GB/s; "
              f"tune {cold:.1f} s cold, {warm:.1f} s warm; {len(res.candidates)} timed, "
              f"{len(res.failures)} failed")
        for f in res.failures[:5]:
            print("   FAIL", f["key"], f["stage"], f["reason"][:200])
        rows = {r["key"]: r for r in res.candidates}
        for r in res.candidates[:args.top]:
            print(f"   {r['key']:46} {r['median_us']:9.1f} us  iqr {r['q3_us'] - r['q1_us']:6.1f}  "
                  f"{r['gbps']:6.0f} GB/s  {res.memcpy_us / r['median_us']:.3f}  regs {r['registers']}")
        for name in CLASSIC_NAMES:
            r = rows.get(classic(name, np.dtype(dt).itemsize).key)
            if r:
                print(f"   classic {name:10} {r['median_us']:9.1f} us  {res.memcpy_us / r['median_us']:.3f}")
        dump.append(res.record)
        if args.orders:
            top = [KernelConfig.from_key(r["key"]) for r in res.candidates[:6]]
            variants = [dataclasses.replace(c, order=o) for c in top for o in ORDERS]
            res2 = autotrans.tune(shape, np.dtype(dt), configs=variants, save=False, progress=False)
            print(f"   -- orders (memcpy {res2.memcpy_us:.1f} us):")
            for r in res2.candidates:
                print(f"   {r['key']:46} {r['median_us']:9.1f} us  {res2.memcpy_us / r['median_us']:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dump, f)


if __name__ == "__main__":
    main()
