"""Old templates against new, same configs, one process: did a move of the
kernel code change its speed? (Run on the GPU.)

    python benchmarks/same_kernels.py --old OLD_TEMPLATE_DIR --old-args PPiii [--out DIR]

For every result shipped in cache/ (its shape and winning config), both
versions of the kernel are rendered, compiled, checked bit-exactly and timed
interleaved: L2 flushed (a memset of twice its size) before every timed launch,
CUDA events around the launch alone, median and IQR of --reps launches each.
"""
from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path

import jinja2

from autotrans.backend import cuda as driver
from autotrans.backend import memory
from autotrans.build import nvcc
from autotrans.build.nvcc import FLAGS
from autotrans.kernels.config import KernelConfig
from autotrans.kernels.templates import ARGS
from autotrans.results.store import shipped_entries
from autotrans.tuning import loader, verify
from autotrans.tuning.timing import Stats


def old_kernel(cfg, old: Path, args_fmt: str):
    """cfg rendered from the old templates: launch(src, dst, B, M, N)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(old)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True)
    body = env.get_template(cfg.family.TEMPLATE).render(name=cfg.name, c=cfg)
    blob, log = nvcc.run({"unit.cu": '#include "common.cuh"\n' + body}, "unit.cu",
                         ["-cubin", f"-arch={driver.device().arch}", *FLAGS], includes=[old])
    if blob is None:
        raise RuntimeError(f"old {cfg.key} failed to compile: {log[-1500:]}")
    fn = driver.cuda().module_from_buffer(blob).get_function(cfg.name)
    if cfg.smem_bytes > driver.STATIC_SMEM_LIMIT:
        fn.set_attribute(driver.cuda().function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, cfg.smem_bytes)
    pack = struct.Struct(args_fmt).pack
    return lambda src, dst, shape: fn._launch_kernel((cfg.blocks(shape), 1, 1), (cfg.threads, 1, 1),
                                                     pack(src, dst, *shape), cfg.smem_bytes, None)


def timed(launches: dict, flush, reps: int) -> dict:
    samples = {k: [] for k in launches}
    for _ in range(reps):
        for k, go in launches.items():
            flush()
            a, b = driver.event(), driver.event()
            a.record()
            go()
            b.record()
            b.synchronize()
            samples[k].append(b.time_since(a) * 1000.0)
    return {k: Stats.of(v) for k, v in samples.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, type=Path, help="folder of the old cuda_templates")
    ap.add_argument("--old-args", default="PPiii", help="struct format of the old kernels' parameters")
    ap.add_argument("--reps", type=int, default=25)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    dev = driver.device()
    l2 = memory.alloc(2 * dev.l2_bytes)
    flush = lambda: memory.memset(l2, 0, 2 * dev.l2_bytes)
    rows = []
    for key, rec in shipped_entries():
        if key.hardware != dev.id.hardware:
            continue
        cfg, shape = KernelConfig.from_dict(rec["config"]), tuple(key.shape)
        bufs = verify.Buffers(shape, cfg.elem_bytes, 7)
        new, old = loader.kernel(cfg), old_kernel(cfg, args.old, args.old_args)
        bad = [bufs.verify(k) for k in (new, old)]
        src, dst = bufs.src, bufs.dst
        st = timed({"new": lambda: new(src, dst, shape), "old": lambda: old(src, dst, shape)}, flush, args.reps)
        row = {"shape": list(shape), "config": cfg.key, "new_us": st["new"].median_us, "old_us": st["old"].median_us,
               "new_iqr_us": st["new"].iqr_us, "old_iqr_us": st["old"].iqr_us, "verify": bad,
               "ratio": st["old"].median_us / st["new"].median_us}
        rows.append(row)
        print(f"{'x'.join(map(str, shape))} e{cfg.elem_bytes} {cfg.key}: new {row['new_us']:.1f} us, "
              f"old {row['old_us']:.1f} us, old/new {row['ratio']:.3f} {bad}", flush=True)
    ratios = sorted(r["ratio"] for r in rows)
    print(f"old/new over {len(rows)} shipped cases: min {ratios[0]:.3f}, median {ratios[len(ratios) // 2]:.3f}, "
          f"max {ratios[-1]:.3f}; new args {ARGS.format}")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "same_kernels.json").write_text(json.dumps(rows, indent=1))
    return 0 if all(r["verify"] == [None, None] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
