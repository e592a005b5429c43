"""What a transpose() call costs on the host.

1. first call on an unseen shape, its config's kernel already loaded: 100
   float16 shapes (s, 4096) that share one config (GPUArray; torch too);
2. steady state, wall time per call including a synchronize, 1024x1024
   float32, each case in blocks of consecutive calls (its data as warm in the
   L2 as its own last call left it), the blocks interleaved round by round,
   their order rotated: autotrans on GPUArray /
   torch / CuPy, against PyCUDA's prepared call of the same kernel (the
   GPUArray path before issue 13), torch's x.mT.contiguous() and
   cupy.ascontiguousarray(x.T);
   and the same with out= (autotrans into a preallocated output; torch's
   out.copy_(x.mT));
3. the same calls split (torch needed): host time per call while the GPU is
   kept busy (a spin kernel first, then 200 calls, fewer than the launch
   queue holds), and GPU time per call with the queue full (events around
   those 200 calls: kernels back to back, L2-hot);
4. the memo's memory over 100,000 distinct shapes (RSS, memo sizes).

    python benchmarks/dispatch_cost.py --out benchmarks/results/dispatch

writes dispatch_cost.json and dispatch_cost.md into --out. A framework that is
not installed is left out of the tables.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BLOCK = 25        # steady-state calls timed in a row per case and round


def forget() -> None:
    from autotrans.api import forget as drop
    drop()


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _stats(seconds) -> dict:
    us = sorted(t * 1e6 for t in seconds)
    return {"median_us": statistics.median(us), "p10_us": us[len(us) // 10], "p90_us": us[9 * len(us) // 10],
            "n": len(us)}


def _frameworks():
    out = {}
    for name in ("torch", "cupy"):
        try:
            out[name] = __import__(name)
        except ImportError:
            pass
    return out


def first_calls(autotrans, driver, fw) -> dict:
    """Median first-call cost of unseen shapes whose kernel is loaded."""
    shapes = [(s, 4096) for s in range(2048, 2048 + 8 * 101, 8)]
    res = {}
    ga = driver.gpuarray()
    makers = {"gpuarray": lambda s: ga.empty(s, np.float16), "gpuarray_sync": driver.synchronize}
    if "torch" in fw:
        t = fw["torch"]
        makers["torch"] = lambda s: t.empty(s, dtype=t.float16, device="cuda")
        makers["torch_sync"] = t.cuda.synchronize
    for kind in ("gpuarray", "torch"):
        if kind not in makers:
            continue
        forget()
        xs = [makers[kind](s) for s in shapes]
        autotrans.transpose(xs[0])                 # compiles/loads the shared config
        makers[kind + "_sync"]()
        times = []
        for x in xs[1:]:
            t0 = time.perf_counter()
            autotrans.transpose(x)
            times.append(time.perf_counter() - t0)
        makers[kind + "_sync"]()
        res[kind] = _stats(times)
        del xs
    return res


def pycuda_reference(driver, g):
    """The GPUArray path before issue 13, as a same-run reference: PyCUDA's
    prepared call of the kernel transpose() picks, into a new GPUArray from
    autotrans' pool (no context or pointer checks)."""
    from autotrans.api import launch
    from autotrans.build.compile import compile_configs
    m, n = g.shape
    cfg = launch.kernel_for(g.shape, g.dtype.itemsize).cfg
    drv, ga, pool = driver.cuda(), driver.gpuarray(), driver.memory_pool()
    f = drv.module_from_buffer(compile_configs([cfg], driver.device().arch)[cfg.key].image()).get_function(cfg.name)
    f.prepare("PPqqq")
    if cfg.smem_bytes > 48 * 1024:
        f.set_attribute(drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, cfg.smem_bytes)
    grid, block = (cfg.blocks((1, m, n)), 1), (cfg.threads, 1, 1)

    def call():
        out = ga.GPUArray((n, m), g.dtype, allocator=pool.allocate)
        f.prepared_async_call(grid, block, None, g.gpudata, out.gpudata, 1, m, n, shared_size=cfg.smem_bytes)
        return out
    return call


def steady_cases(autotrans, driver, fw) -> dict:
    """name -> (call, synchronize) of the steady-state cases, 1024x1024 float32."""
    h = np.random.default_rng(0).random((1024, 1024), dtype=np.float32)
    cases = {}
    g = driver.gpuarray().to_gpu(h)
    go = driver.gpuarray().empty((1024, 1024), np.float32)
    cases["autotrans GPUArray"] = (lambda: autotrans.transpose(g), driver.synchronize)
    cases["autotrans GPUArray, out="] = (lambda: autotrans.transpose(g, out=go), driver.synchronize)
    cases["PyCUDA prepared call, same kernel (the path before issue 13)"] = (pycuda_reference(driver, g),
                                                                           driver.synchronize)
    if "torch" in fw:
        t = fw["torch"]
        tx = t.from_numpy(h).cuda()
        ty = t.empty((1024, 1024), device="cuda")
        cases["autotrans torch"] = (lambda: autotrans.transpose(tx), t.cuda.synchronize)
        cases["torch x.mT.contiguous()"] = (lambda: tx.mT.contiguous(), t.cuda.synchronize)
        cases["autotrans torch, out="] = (lambda: autotrans.transpose(tx, out=ty), t.cuda.synchronize)
        cases["torch out.copy_(x.mT)"] = (lambda: ty.copy_(tx.mT), t.cuda.synchronize)
    if "cupy" in fw:
        cp = fw["cupy"]
        cx = cp.asarray(h)
        cy = cp.empty((1024, 1024), np.float32)
        sync = cp.cuda.Device().synchronize
        cases["autotrans CuPy"] = (lambda: autotrans.transpose(cx), sync)
        cases["cupy.ascontiguousarray(x.T)"] = (lambda: cp.ascontiguousarray(cx.T), sync)
        cases["autotrans CuPy, out="] = (lambda: autotrans.transpose(cx, out=cy), sync)
        cases["CuPy out[...] = x.T"] = (lambda: cy.__setitem__(Ellipsis, cx.T), sync)
    return cases


def split(fw, cases: dict, reps: int = 15, calls: int = 200) -> dict:
    """Per case: median host µs per call with the GPU kept busy, and GPU µs per
    call with the launch queue full (all on the legacy default stream, where
    torch's spin kernel runs too)."""
    t = fw["torch"]
    out = {}
    for name, (call, sync) in cases.items():
        host, gpu = [], []
        for _ in range(reps):
            t.cuda.synchronize()
            t.cuda._sleep(100_000_000)                # ~50 ms: the calls below queue behind it
            s, e = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            s.record()
            t0 = time.perf_counter()
            for _ in range(calls):
                call()
            host.append((time.perf_counter() - t0) / calls)
            e.record()
            e.synchronize()
            sync()
            gpu.append(s.elapsed_time(e) * 1e-3 / calls)
        out[name] = {"host_us": statistics.median(host) * 1e6, "gpu_us": statistics.median(gpu) * 1e6}
    return out


def steady(autotrans, driver, fw, reps: int, cases: dict, block: int = BLOCK) -> dict:
    """Wall time per call, each followed by a synchronize. Each case runs in
    blocks of ``block`` timed calls after one untimed call, so every case finds
    the L2 as its own previous call left it (not as the case before it did);
    the blocks are interleaved round by round, their order rotated."""
    for call, sync in cases.values():
        for _ in range(20):
            call()
        sync()
    names = list(cases)
    times = {name: [] for name in cases}
    for r in range(max(1, reps // block)):
        for name in names[r % len(names):] + names[:r % len(names)]:
            call, sync = cases[name]
            call()
            sync()
            for _ in range(block):
                t0 = time.perf_counter()
                call()
                sync()
                times[name].append(time.perf_counter() - t0)
    return {name: _stats(t) for name, t in times.items()}


def memo_memory(autotrans, driver, fw, count: int) -> dict:
    """RSS and memo sizes while transposing ``count`` distinct shapes (s, 64)."""
    from autotrans.api import launch
    forget()
    cols = 64
    if "torch" in fw:
        t = fw["torch"]
        flat = t.zeros(count * cols, dtype=t.float16, device="cuda")
        view, sync = (lambda s: flat[: s * cols].view(s, cols)), t.cuda.synchronize
    else:
        flat = driver.gpuarray().zeros(count * cols, np.float16)
        view, sync = (lambda s: flat[: s * cols].reshape(s, cols)), driver.synchronize
    marks, t0 = [], time.perf_counter()
    for s in range(1, count + 1):
        autotrans.transpose(view(s))
        if s % (count // 10) == 0:
            sync()
            marks.append({"shapes": s, "rss_mib": round(_rss_mib(), 1), "plans": len(launch._plans),
                          "launchers": len(launch._launchers), "kernels": len(launch._kernels)})
    sync()
    return {"marks": marks, "seconds": time.perf_counter() - t0,
            "plan_limit": launch.PLAN_LIMIT, "launcher_limit": launch.LAUNCHER_LIMIT}


def markdown(doc: dict) -> str:
    lines = [f"# transpose() dispatch cost on {doc['device']}", ""]
    lines += ["## First call on an unseen shape (kernel loaded; 100 float16 (s, 4096) shapes)", "",
              "| input | median us | p10 us | p90 us |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {k} | {v['median_us']:.1f} | {v['p10_us']:.1f} | {v['p90_us']:.1f} |"
              for k, v in doc["first_call"].items()]
    lines += ["", "## Steady state, 1024x1024 float32, per call incl. synchronize "
              f"(blocks of {BLOCK} calls per case, interleaved)", "",
              "| call | median us | p10 us | p90 us |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {k} | {v['median_us']:.1f} | {v['p10_us']:.1f} | {v['p90_us']:.1f} |"
              for k, v in doc["steady"].items()]
    if doc.get("split"):
        lines += ["", "## The same calls split: host time (GPU kept busy) and GPU time (queue full, L2-hot)", "",
                  "| call | host us per call | GPU us per call |", "| --- | ---: | ---: |"]
        lines += [f"| {k} | {v['host_us']:.1f} | {v['gpu_us']:.2f} |" for k, v in doc["split"].items()]
    m = doc["memo"]
    lines += ["", f"## Memo over {m['marks'][-1]['shapes'] if m['marks'] else 0} distinct shapes "
              f"({m['seconds']:.1f} s; limits: {m['plan_limit']} plans, {m['launcher_limit']} launchers)", "",
              "| shapes | RSS MiB | plans | launchers | kernels |", "| ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['shapes']} | {r['rss_mib']} | {r['plans']} | {r['launchers']} | {r['kernels']} |"
              for r in m["marks"]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for dispatch_cost.json and dispatch_cost.md")
    ap.add_argument("--reps", type=int, default=1000, help="steady-state calls per case")
    ap.add_argument("--shapes", type=int, default=100_000, help="distinct shapes for the memo's memory")
    ap.add_argument("--cache-dir", help="cache folder (default: an empty temporary one)")
    args = ap.parse_args(argv)
    os.environ["AUTOTRANS_CACHE_DIR"] = args.cache_dir or tempfile.mkdtemp(prefix="autotrans-dispatch-")
    import autotrans
    from autotrans.backend import cuda as driver
    fw = _frameworks()
    doc = {"device": driver.device().id.text, "frameworks": {k: getattr(v, "__version__", "?") for k, v in fw.items()},
           "first_call": first_calls(autotrans, driver, fw)}
    cases = steady_cases(autotrans, driver, fw)
    doc["steady"] = steady(autotrans, driver, fw, args.reps, cases)
    doc["split"] = split(fw, cases) if "torch" in fw else {}
    doc["memo"] = memo_memory(autotrans, driver, fw, args.shapes)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "dispatch_cost.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / "dispatch_cost.md").write_text(markdown(doc))
    sys.stdout.write(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
