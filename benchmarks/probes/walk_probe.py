"""Probe (not a library kernel; NOTES 38): walk_probe.cu's strip-walking
transpose against autotrans' tuned kernel and the roofline, on odd-alignment
shapes (2-D) and the 3-D (2,1,0) sub-word orders. One process; every contender
interleaved per repetition, the L2 flushed and a spin before each timed launch,
CUDA events around the launch; medians. Every walk output is checked byte for
byte against torch before it is timed.

    nvcc -arch=sm_90 -cubin -O3 -std=c++17 -I cuda_templates \
         benchmarks/probes/walk_probe.cu -o walk_probe.sm90.cubin
    python benchmarks/probes/walk_probe.py walk_probe.sm90.cubin [--reps 15] [--cases REGEX] [--out DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import struct
import sys
import tempfile

VARIANTS = {  # name: (E, W, H, NT, S, Q), as WALK_VARIANTS in walk_probe.cu
    "w1_64_128_256_4q4": (1, 64, 128, 256, 4, 4),
    "w1_256_64_256_4q2": (1, 256, 64, 256, 4, 2),
    "w1_256_32_256_4q4": (1, 256, 32, 256, 4, 4),
    "w1_256_64_512_3q2": (1, 256, 64, 512, 3, 2),
    "w1_512_32_512_3q2": (1, 512, 32, 512, 3, 2),
    "w1_512_32_256_3q2": (1, 512, 32, 256, 3, 2),
    "w1_128_64_256_4q4": (1, 128, 64, 256, 4, 4),
    "w2_64_64_256_4q4": (2, 64, 64, 256, 4, 4),
    "w2_128_32_256_4q4": (2, 128, 32, 256, 4, 4),
    "w2_256_32_512_3q2": (2, 256, 32, 512, 3, 2),
    "w2_256_16_256_4q4": (2, 256, 16, 256, 4, 4),
    "w2_128_64_256_3q2": (2, 128, 64, 256, 3, 2),
    "w4_32_32_256_4q4": (4, 32, 32, 256, 4, 4),
    "w4_64_32_256_3q2": (4, 64, 32, 256, 3, 2),
    "w4_128_16_512_3q2": (4, 128, 16, 512, 3, 2),
    "w4_64_16_256_4q4": (4, 64, 16, 256, 4, 4),
    "w1_272_32_256_4q4": (1, 272, 32, 256, 4, 4),
    "w1_272_64_256_3q2": (1, 272, 64, 256, 3, 2),
    "w1_272_32_512_4q4": (1, 272, 32, 512, 4, 4),
    "w2_136_32_256_4q4": (2, 136, 32, 256, 4, 4),
    "w2_136_16_256_4q4": (2, 136, 16, 256, 4, 4),
    "w2_136_32_256_3q2": (2, 136, 32, 256, 3, 2),
}
# (label, shape, dtype, axes): 2-D cases are transposes, 3-D ones permutes
CASES = [
    ("4097x4095 int8", (4097, 4095), "int8", None),
    ("8191x8193 int8", (8191, 8193), "int8", None),
    ("10000x3333 int8", (10000, 3333), "int8", None),
    ("16384x16384 int8 (aligned)", (16384, 16384), "int8", None),
    ("4097x4095 float16", (4097, 4095), "float16", None),
    ("50257x768 float16", (50257, 768), "float16", None),
    ("4097x4095 float32", (4097, 4095), "float32", None),
    ("4093x4099 float32", (4093, 4099), "float32", None),
    ("511x1031x257 int8 (2,1,0)", (511, 1031, 257), "int8", (2, 1, 0)),
    ("263x509x257 float16 (2,1,0)", (263, 509, 257), "float16", (2, 1, 0)),
    ("257x509x263 float32 (2,1,0)", (257, 509, 263), "float32", (2, 1, 0)),
]


def smem_of(e, w, h, nt, s, q):
    """walk::K<...>::SMEM (walk_probe.cu), in Python (tests/test_probes.py checks it)."""
    kv, r = 16 // e, 4 // e
    nvc = -(-w // kv)
    nvrp = nvc + 1
    while nvc < 8 and (r * nvrp) % 8 != 4:
        nvrp += 1
    rwp = q * h * e // 4 + 1
    skew = (32 // nvc - kv * rwp) % 32
    return s * h * nvrp * 16 + nvc * (kv * rwp + skew) * 4


def walk_args(shape, e, axes):
    """(B, M, N, ldi, ldo, bsi, bso) in bytes for the walk kernel."""
    if axes is None:
        m, n = shape
        return 1, m, n, n * e, m * e, 0, 0
    a, b, c = shape                       # (2,1,0): out[c, b, a] = in[a, b, c]
    assert tuple(axes) == (2, 1, 0)
    return b, a, c, b * c * e, b * a * e, c * e, a * e


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cubin")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--out", default=None)
    ap.add_argument("--cases", default=None, help="substring of the labels to run")
    ap.add_argument("--ncu", nargs=2, metavar=("VARIANT", "L"), default=None,
                    help="profile mode: after tuning, one launch of the library's kernel and of VARIANT with "
                         "chunk L between cudaProfilerStart/Stop (run under ncu --profile-from-start off)")
    a = ap.parse_args(argv)
    os.environ.setdefault("AUTOTRANS_CACHE_DIR", tempfile.mkdtemp(prefix="walkprobe-"))   # tune() stores here
    import torch
    import autotrans
    from autotrans.backend import cuda as drv
    from autotrans.tools.bench.gpu import Gpu
    gpu = Gpu()
    mod = drv.load_module("walkprobe", open(a.cubin, "rb").read())
    fns = {}
    for name, v in VARIANTS.items():
        f = mod.function(name, struct.Struct("PP8q"))
        f.set_max_dynamic_smem(smem_of(*v))
        fns[name] = f
    sms = drv.device().sms
    results = []
    for label, shape, dt, axes in CASES:
        if a.cases and not re.search(a.cases, label):
            continue
        tdt = getattr(torch, dt)
        e = torch.empty((), dtype=tdt).element_size()
        x = torch.randint(-128, 127, shape, dtype=torch.int8, device="cuda") if e == 1 else \
            torch.randn(shape, device="cuda").to(tdt)
        ref = (x.T if axes is None else x.permute(*axes)).contiguous()
        y = torch.empty_like(ref)
        nbytes = x.numel() * e
        # the library's tuned kernel
        if axes is None:
            autotrans.tune(shape, dt, progress=False)
            lib_call = lambda: autotrans.transpose(x, out=y)
        else:
            from autotrans.core.layout import canonical
            from autotrans.tuning.strided import run_problem, tune_problem
            canon = canonical(x.shape, tuple(s * e for s in x.stride()), e, axes)
            tune_problem(run_problem(canon), progress=False)
            autotrans.forget()
            lib_call = lambda: autotrans.permute(x, axes, out=y)
        lib_key = autotrans.explain(shape, dt, axes=axes)
        lib_call(); torch.cuda.synchronize()
        assert torch.equal(y, ref), label
        if a.ncu:
            name, L = a.ncu[0], int(a.ncu[1])
            ve, w, h, nt, s_, q = VARIANTS[name]
            B, M, N, ldi, ldo, bsi, bso = walk_args(shape, e, axes)
            blocks = B * ceil(N, w) * ceil(M, L)
            go = fns[name].launcher((blocks, 1, 1), (nt, 1, 1), smem_of(ve, w, h, nt, s_, q))
            gpu.flush(); torch.cuda.synchronize()
            torch.cuda.profiler.start()
            lib_call()
            gpu.flush()
            go(0, x.data_ptr(), y.data_ptr(), B, M, N, ldi, ldo, bsi, bso, L)
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
            print(f"{label}: profiled {lib_key} and {name} L{L}", flush=True)
            continue
        contenders = {"autotrans tuned": lib_call,
                      "memcpy": lambda: y.view(-1).copy_(x.view(-1)),
                      "copy16": lambda: gpu.copy16(y.data_ptr(), x.data_ptr(), nbytes)}
        B, M, N, ldi, ldo, bsi, bso = walk_args(shape, e, axes)
        walks = {}
        for name, (ve, w, h, nt, s, q) in VARIANTS.items():
            if ve != e:
                continue
            strips = -(-N // w)
            ls = sorted({h * ceil(ceil(M, d), h) for d in (1, 2, 4, 8, 16, 32)})
            for L in ls:
                blocks = B * strips * -(-M // L)
                if blocks > 2**31 - 1 or blocks < sms // 2 and L != ls[0]:
                    continue
                argv_ = (x.data_ptr(), y.data_ptr(), B, M, N, ldi, ldo, bsi, bso, L)
                go = fns[name].launcher((blocks, 1, 1), (nt, 1, 1), smem_of(ve, w, h, nt, s, q))
                walks[f"{name} L{L} ({blocks} blocks)"] = (lambda go=go, argv_=argv_: go(0, *argv_))
        # check every walk contender
        bad = []
        for k, call in walks.items():
            y.fill_(0x5A if e == 1 else 7)
            call(); torch.cuda.synchronize()
            if not torch.equal(y, ref):
                bad.append(k)
        for k in bad:
            print(f"  WRONG OUTPUT: {label} {k}", flush=True)
            walks.pop(k)
        # first pass: every walk contender, few reps; keep the best 5
        t1 = time_all(gpu, torch, {**contenders, **walks}, 5)
        best = sorted(walks, key=lambda k: t1[k][0])[:5]
        final = {**contenders, **{k: walks[k] for k in best}}
        t = time_all(gpu, torch, final, a.reps)
        roof = min(t["memcpy"][0], t["copy16"][0])
        row = {"case": label, "bytes": nbytes, "lib": str(getattr(lib_key, "config", lib_key))[:120],
               "times": {k: v for k, v in t.items()}, "roofline_us": roof, "wrong": bad}
        results.append(row)
        print(f"\n{label}: {nbytes / 2**20:.1f} MiB, roofline {roof:.1f} µs", flush=True)
        for k, (med, q1, q3) in sorted(t.items(), key=lambda kv: kv[1][0]):
            print(f"  {k:45s} {med:8.1f} µs ({q1:.1f}-{q3:.1f})  {roof / med:.3f} of roofline", flush=True)
    if a.out:
        import datetime
        with open(os.path.join(a.out, "walk_probe.json"), "w") as f:
            json.dump({"gpu": drv.device().id.text, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                       "method": __doc__.split("\n\n")[0], "results": results}, f, indent=1)
    return 0


def ceil(a: int, b: int) -> int:
    return -(-a // b)


def time_all(gpu, torch, calls: dict, reps: int) -> dict:
    """{name: (median, q1, q3)} in µs: every call once per repetition, the order rotating,
    the L2 flushed and a 40 µs spin before each, CUDA events around the call alone."""
    names = list(calls)
    samples = {k: [] for k in names}
    for r in range(reps):
        order = names[r % len(names):] + names[:r % len(names)]
        ev = []
        for k in order:
            s, t = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            gpu.flush()
            gpu.spin(40.0)
            s.record()
            calls[k]()
            t.record()
            ev.append((k, s, t))
        torch.cuda.synchronize()
        for k, s, t in ev:
            samples[k].append(s.elapsed_time(t) * 1000.0)
    out = {}
    for k, v in samples.items():
        q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
        out[k] = (statistics.median(v), q[0], q[2])
    return out


if __name__ == "__main__":
    sys.exit(main())
