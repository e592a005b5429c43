"""permute() against torch eager, torch.compile and CuPy on N-d permutations, in one process.

Method: every implementation timed on the same data, interleaved within each
repetition; before every timed launch the L2 is flushed (a 512 MiB write);
CUDA events around the launch alone (a spin kernel keeps the GPU busy while
the host enqueues it, so the events hold the kernel alone; autotrans writes a
preallocated out=, and its host time per call is reported apart); medians and IQR of
--reps repetitions. The roofline is the faster of cudaMemcpy device-to-device
(torch's copy_ of contiguous bytes) and a 16-byte vector copy kernel
(cuda_templates/roofline.cu) of the same bytes, both in the same run (each
copy's output checked whole too: random input, zeroed output). Every output is
checked byte for byte against torch's x.permute(axes).contiguous() (with
conj: out.copy_(x.permute(axes).conj()); with a cast to D:
x.permute(axes).contiguous().to(D), torch eager out.copy_(x.permute(axes)) into
an out of D, and the roofline a copy of (input + output bytes) / 2, what moves
the same bytes in and out). torch.compile: the same expression
compiled for each case (dynamo reset, dynamic=False), its own output
allocation included. CuPy: ascontiguousarray(x.transpose(axes)) (.conj() after,
with conj). autotrans is timed as later calls run it: a kernel compiled for
the shape or launch that the first call queued (AUTOTRANS_SPECIALISE, where
nothing was tuned for the problem) is built before the timing starts.

    python benchmarks/permute_bench.py --out benchmarks/results            # untuned: permute.md
    python benchmarks/permute_bench.py --out benchmarks/results --tuned    # permute-tuned.md
    python benchmarks/permute_bench.py --out benchmarks/results --render   # .md again from .json (no GPU)
    python benchmarks/permute_bench.py --out /tmp/pb --tuned --cases '^3-D int8'   # only some cases

With --tuned, each case's problem is tuned first (tune() for a batched
transpose, tune_problem for the strided problem permute() runs, with its cast
or conjugating epilogue) into the run's temporary cache.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import re
import sys
import tempfile
import time
from pathlib import Path

CASES = [  # (name, shape, dtype, axes, slice or None, what the target asks)
    ("BSHD->BHSD", (8, 4096, 16, 64), "float16", (0, 2, 1, 3), None, ">= 0.92"),
    ("BSHD->BHSD", (16, 2048, 32, 128), "float16", (0, 2, 1, 3), None, ">= 0.92"),
    ("BSHD->BHSD", (4, 4096, 32, 8), "float32", (0, 2, 1, 3), None, ">= 0.92"),
    ("BSHD->BHSD odd D", (8, 2048, 16, 67), "float16", (0, 2, 1, 3), None, ">= 0.85"),   # 134-byte rows
    ("odd rows", (600, 517, 70), "int8", (1, 0, 2), None, ">= 0.85"),                      # 70-byte rows
    *[("3-D", (257, 509, 263), "float32", ax, None, ">= 0.85")
      for ax in ((0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))],
    *[("4-D", (33, 65, 129, 61), "float32", ax, None, ">= 0.85")
      for ax in ((3, 2, 1, 0), (1, 3, 0, 2), (2, 0, 3, 1))],
    # sub-word 4-D orders (fused tiles of 1- and 2-byte elements; first run in session 30, NOTES 50)
    ("4-D int8", (133, 65, 129, 61), "int8", (3, 2, 1, 0), None, ">= 0.85"),
    ("4-D float16", (67, 65, 129, 61), "float16", (2, 0, 3, 1), None, ">= 0.85"),
    ("5-D", (17, 19, 23, 29, 61), "float64", (4, 2, 0, 3, 1), None, ">= 0.85"),
    ("3-D int8", (511, 1031, 257), "int8", (2, 1, 0), None, ">= 0.85"),
    ("3-D float16", (263, 509, 257), "float16", (2, 1, 0), None, ">= 0.85"),
    ("batched transpose", (64, 1024, 1024), "float16", (0, 2, 1), None, "transpose() +-3%"),
    ("strided 2-D view", (8192, 8448), "float32", (1, 0), (slice(None), slice(128, 8320)), "transpose() +-5%"),
    ("Hermitian (conj)", (8, 2048, 2048), "complex64", (0, 2, 1), None, ">= torch, CuPy", {"conj": True}),
    ("Hermitian (conj)", (4096, 4096), "complex128", (1, 0), None, ">= torch, CuPy", {"conj": True}),
    ("BHSD conj", (8, 4096, 16, 64), "complex64", (0, 2, 1, 3), None, ">= torch, CuPy", {"conj": True}),
    ("cast-transpose", (8192, 8192), "float32", (1, 0), None, ">= 0.92", {"to": "bfloat16"}),
    ("cast-transpose", (8192, 8192), "float32", (1, 0), None, ">= 0.92", {"to": "float16"}),
    ("cast-transpose", (16, 2048, 2048), "float32", (0, 2, 1), None, ">= 0.92", {"to": "bfloat16"}),
    ("cast BSHD->BHSD", (8, 4096, 16, 64), "float32", (0, 2, 1, 3), None, ">= 0.92", {"to": "bfloat16"}),
    ("cast-transpose", (4099, 8191), "float32", (1, 0), None, ">= 0.92", {"to": "bfloat16"}),
    ("cast-transpose", (8192, 8192), "bfloat16", (1, 0), None, ">= 0.92", {"to": "float32"}),
    # odd alignments: rows of neither side a multiple of 16 bytes (shift tiles' casts, NOTES 39)
    ("cast-transpose", (4099, 8191), "float32", (1, 0), None, ">= 0.92", {"to": "float16"}),
    ("cast-transpose", (5, 2049, 4097), "float32", (0, 2, 1), None, ">= 0.92", {"to": "bfloat16"}),
    ("cast-transpose", (4099, 8191), "bfloat16", (1, 0), None, ">= 0.92", {"to": "float32"}),
    ("cast 3-D", (257, 509, 263), "float32", (2, 1, 0), None, ">= 0.92", {"to": "bfloat16"}),
]


SPIN_CYCLES = 400_000       # ~0.2 ms of a spinning GPU: the host enqueues the launch meanwhile


def _timer(torch, flush, reps):
    def time_us(fn, host: list | None = None):
        flush.fill_(1)
        torch.cuda._sleep(SPIN_CYCLES)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        t0 = time.perf_counter()
        fn()
        if host is not None:
            host.append((time.perf_counter() - t0) * 1e6)
        e.record()
        e.synchronize()
        return s.elapsed_time(e) * 1e3
    return time_us


def _stats(xs):
    q = statistics.quantiles(xs, n=4)
    return {"median_us": statistics.median(xs), "q1_us": q[0], "q3_us": q[2]}


def _tune(autotrans, x, axes, to=None, conj=False) -> str:
    """Tune what permute(x, axes, dtype=to, conj=conj) runs into the current cache; the config tuned
    ('transpose' for tune()'s, '' for a copy)."""
    from autotrans.core.layout import CopyProblem, TransposeProblem
    from autotrans.core.problem import dtype_of_size
    from autotrans.kernels.config import CAST_SIZES, cast_for
    from autotrans.kernels.strided import as_strided
    from autotrans.tuning.strided import run_problem, tune_problem
    strides = tuple(s * x.element_size() for s in x.stride())
    cast = "none" if to is None else cast_for(str(x.dtype).removeprefix("torch."), to)
    if cast != "none":
        canon = autotrans.core_layout.canonical(x.shape, strides, x.element_size(), axes,
                                                out_itemsize=CAST_SIZES[cast][1])
        rec = tune_problem(run_problem(as_strided(canon), cast), progress=False, cast=cast)
        autotrans.forget()
        return rec.best.key
    if conj:                                   # every conjugating permutation runs as a strided problem
        canon = autotrans.core_layout.canonical(x.shape, strides, x.element_size(), axes)
        epilogue = {8: "conj32", 16: "conj64"}[x.element_size()]
        rec = tune_problem(run_problem(as_strided(canon)), progress=False, epilogue=epilogue)
        autotrans.forget()
        return rec.best.key
    canon = autotrans.core_layout.canonical(x.shape, strides, x.element_size(), axes)
    if isinstance(canon, CopyProblem):
        return ""
    if isinstance(canon, TransposeProblem):
        autotrans.tune(canon.bmn, dtype_of_size(canon.elem), progress=False)
        return "transpose"
    rec = tune_problem(run_problem(canon), progress=False)
    autotrans.forget()
    return rec.best.key


def run_case(torch, cp, autotrans, time_us, copy16, reps, shape, dtype, axes, sl, conj=False, to=None, tuned=False):
    dt = getattr(torch, dtype)
    base = torch.randint(-100, 100, shape, device="cuda").to(dt)
    if dt.is_complex:
        base = base + 1j * torch.randint(-100, 100, shape, device="cuda").to(dt)
    x = base[sl] if sl is not None else base
    tdt = getattr(torch, to) if to else None
    want = x.permute(axes).conj().contiguous().resolve_conj() if conj else x.permute(axes).contiguous()
    if tdt is not None:
        want = want.to(tdt)
    out = torch.empty_like(want)
    tuned_as = _tune(autotrans, x, axes, to, conj) if tuned else None
    autotrans.permute(x, axes, out=out, conj=conj, dtype=tdt)
    from autotrans.api import specialise
    specialise.wait(600)          # a build the first call queued (AUTOTRANS_SPECIALISE): what later calls run
    out.zero_()
    autotrans.permute(x, axes, out=out, conj=conj, dtype=tdt)
    torch.cuda.synchronize()
    exact = bool(torch.equal(out.view(torch.uint8), want.view(torch.uint8)))
    nbytes = (want.numel() * want.element_size() + x.numel() * x.element_size()) // 2   # what a copy moves
    a = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    torch._dynamo.reset()
    if conj:
        compiled = torch.compile(lambda t: torch.conj_physical(t.permute(axes)).contiguous(), dynamic=False)
    elif tdt is not None:
        compiled = torch.compile(lambda t: t.permute(axes).contiguous().to(tdt), dynamic=False)
    else:
        compiled = torch.compile(lambda t: t.permute(axes).contiguous(), dynamic=False)
    impls = {"autotrans": lambda: autotrans.permute(x, axes, out=out, conj=conj, dtype=tdt),
             "memcpy": lambda: b.copy_(a),
             "copy16": lambda: copy16(b.data_ptr(), a.data_ptr(), nbytes),
             "torch eager": (lambda: out.copy_(x.permute(axes).conj())) if conj else
                            (lambda: out.copy_(x.permute(axes))),
             "torch.compile": lambda: compiled(x)}
    if cp is not None and to != "bfloat16" and dtype != "bfloat16":
        cx = cp.asarray(x)
        if to:
            impls["cupy"] = lambda: cx.transpose(axes).astype(to, order="C")
    if cp is not None and not to:
        cx = cp.asarray(x)
        impls["cupy"] = ((lambda: cp.ascontiguousarray(cx.transpose(axes)).conj()) if conj else
                         (lambda: cp.ascontiguousarray(cx.transpose(axes))))
    if not conj and not to and (sl is not None or axes == (0, 2, 1)):
        dense = (x.contiguous(), torch.empty_like(want))
        impls["transpose() of the same bytes"] = lambda: autotrans.transpose(dense[0], out=dense[1])
    got = compiled(x)
    torch.cuda.synchronize()
    exact = exact and bool(torch.equal(got.view(torch.uint8), want.view(torch.uint8)))
    for name in ("memcpy", "copy16"):                # each roofline copy alone into a zeroed b
        b.zero_()
        impls[name]()
        torch.cuda.synchronize()
        exact = exact and bool(torch.equal(b, a))
    for f in impls.values():
        f()
    torch.cuda.synchronize()
    samples, host = {k: [] for k in impls}, []
    for _ in range(reps):
        for k, f in impls.items():
            samples[k].append(time_us(f, host if k == "autotrans" else None))
    res = {k: _stats(v) for k, v in samples.items()}
    copy = min(res["memcpy"]["median_us"], res["copy16"]["median_us"])
    for k, v in res.items():
        v["of_roofline"] = copy / v["median_us"]
    from autotrans.api.permute import as_strided
    from autotrans.kernels.config import cast_for
    from autotrans.tuning.strided import run_problem
    canon = autotrans.core_layout.canonical(x.shape, tuple(s * x.element_size() for s in x.stride()),
                                            x.element_size(), axes, 16, out_itemsize=want.element_size())
    cast = cast_for(dtype, to) if to else "none"
    kind = type(as_strided(canon, 16, cast) if to else run_problem(canon)).__name__   # what runs (fused tiles too)
    return {"exact": exact, "mib": nbytes / 2**20, "problem": kind, "results": res, "roofline_us": copy,
            "host_us": statistics.median(host), "tuned": tuned_as}


PEERS = ("torch eager", "torch.compile", "cupy")
SAME_BYTES = "transpose() of the same bytes"
LIMITS = ("What limits the misses: ncu's measurements in benchmarks/NOTES.md (entry 25: the odd 3-D and 4-D "
          "orders; entry 29: the 3-D int8 order).")


def misses(r) -> list[str]:
    """What one case's row misses: its target (a fraction of the roofline,
    within a percentage of transpose() of the same bytes, or faster than
    named peers), the issue's "at least as fast as torch eager, torch.compile
    and CuPy" (median ratios), and bit-exactness."""
    res, t = r["results"], r["target"]
    us = res["autotrans"]["median_us"]
    out = [] if r["exact"] else ["output not bit-exact"]
    if t.startswith(">= ") and t[3:4].isdigit():
        if res["autotrans"]["of_roofline"] < float(t[3:]):
            out.append(f"{res['autotrans']['of_roofline']:.3f} of the roofline (need {t})")
    elif t.startswith("transpose() +-") and SAME_BYTES in res:
        ratio, tol = res[SAME_BYTES]["median_us"] / us, float(t.removeprefix("transpose() +-").rstrip("%")) / 100
        if ratio < 1 - tol:
            out.append(f"transpose() of the same bytes / permute() {ratio:.3f} (need within {t[14:]})")
    peers = {k: res[k]["median_us"] for k in PEERS if k in res}
    if peers:
        best = min(peers, key=peers.get)
        if peers[best] < us:
            out.append(f"best peer / autotrans {peers[best] / us:.3f} ({best} {peers[best]:.1f} µs, "
                       f"autotrans {us:.1f} µs; need >= 1.00)")
    return out


def _misses_section(doc) -> list[str]:
    missed = [(r, m) for r in doc["cases"] for m in [misses(r)] if m]
    lines = ["", f"## Targets missed: {len(missed)} of {len(doc['cases'])} cases", ""]
    lines += [f"- {r['name']} {'x'.join(map(str, r['shape']))} {r['dtype']} {tuple(r['axes'])}: " + "; ".join(m)
              for r, m in missed]
    return lines + ["", LIMITS] if missed else lines + ["Every case met its target."]


def markdown(doc) -> str:
    lines = [f"# permute() on {doc['device']}" + (" (tuned)" if doc.get("tuned") else ""), "", doc["method"], "",
             *(["Tuned: " + doc["tuned"], ""] if doc.get("tuned") else []),
             *([doc["specialise"], ""] if doc.get("specialise") else []),
             "Columns after µs: fraction of the roofline (the faster of memcpy and the 16-byte copy of the "
             "same bytes, over the time); "
             "'transpose()': transpose() of a contiguous array of the same bytes.", "",
             "| case | shape | dtype | axes | MiB | problem | roofline µs | autotrans µs | of roofline | torch eager | torch.compile | "
             "CuPy | transpose() | target | exact | host µs |",
             "|---|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|"]
    for r in doc["cases"]:
        res = r["results"]
        f = lambda k: f"{res[k]['of_roofline']:.2f}" if k in res else "—"
        lines.append(f"| {r['name']} | {'x'.join(map(str, r['shape']))}{' view' if r['view'] else ''} | "
                     f"{r['dtype']} | {tuple(r['axes'])} | {r['mib']:.0f} | {r['problem']}{_tuned_as(r)} | "
                     f"{_roofline(r)} | {res['autotrans']['median_us']:.1f} | {f('autotrans')} | {f('torch eager')} | {f('torch.compile')} | "
                     f"{f('cupy')} | "
                     f"{f(SAME_BYTES)} | {r['target']} | {'yes' if r['exact'] else 'NO'} | {r['host_us']:.0f} |")
    return "\n".join(lines + _misses_section(doc)) + "\n"


def readme_table(untuned: dict, tuned: dict) -> str:
    """The README's permute() table from an untuned and a tuned run's
    documents: each case of both, autotrans' fraction of the roofline in
    each, and each peer's (one figure where both runs agree to 2 decimals,
    else untuned run / tuned run)."""
    key = lambda r: (r["name"], tuple(r["shape"]), r["dtype"], tuple(r["axes"]), r["view"])  # noqa: E731
    other = {key(r): r for r in tuned["cases"]}
    f = lambda r, k: f"{r['results'][k]['of_roofline']:.2f}" if r and k in r["results"] else "—"  # noqa: E731
    lines = ["| case | shape | dtype | axes | untuned | tuned | torch eager | torch.compile | CuPy |",
             "|---|---|---|---|---:|---:|---:|---:|---:|"]
    for r in untuned["cases"]:
        t = other.get(key(r))
        if t is None:
            continue
        peers = [f(r, k) if f(r, k) == f(t, k) else f"{f(r, k)} / {f(t, k)}" for k in PEERS]
        lines.append(f"| {r['name']} | {'x'.join(map(str, r['shape']))}{' view' if r['view'] else ''} | "
                     f"{r['dtype']} | {tuple(r['axes'])} | {f(r, 'autotrans')} | {f(t, 'autotrans')} | "
                     + " | ".join(peers) + " |")
    return "\n".join(lines) + "\n"


def _roofline(r) -> str:
    """The roofline's time and which copy set it (runs before the 16-byte copy: memcpy alone)."""
    res = r["results"]
    if "copy16" not in res:
        return f"{res['memcpy']['median_us']:.1f} (memcpy)"
    which = min(("memcpy", "copy16"), key=lambda k: res[k]["median_us"])
    return f"{res[which]['median_us']:.1f} ({which})"


def _tuned_as(r) -> str:
    t = r.get("tuned")
    return "" if not t else " (tuned: transpose())" if t == "transpose" else f" (tuned: `{t}`)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="folder for permute.json and permute.md (needed but with --readme)")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--tuned", action="store_true", help="tune each case first; write permute-tuned.json/.md")
    ap.add_argument("--cases", metavar="REGEX", help="only cases whose label (e.g. '3-D int8 511x1031x257 int8 (2, 1, 0)') matches")
    ap.add_argument("--render", action="store_true",
                    help="run nothing: write the .md again from the .json already in --out (no GPU)")
    ap.add_argument("--readme", nargs=2, metavar=("UNTUNED.json", "TUNED.json"),
                    help="run nothing: print the README's table from an untuned and a tuned run (no GPU)")
    args = ap.parse_args(argv)
    if args.readme:
        print(readme_table(*(json.loads(Path(f).read_text()) for f in args.readme)), end="")
        return 0
    if not args.out:
        ap.error("--out is required (but with --readme)")
    try:
        cases = selected(args.cases)
    except re.error as exc:
        ap.error(f"--cases: not a regular expression ({exc})")
    stem = "permute-tuned" if args.tuned else "permute"
    if args.render:
        (Path(args.out) / f"{stem}.md").write_text(markdown(json.loads((Path(args.out) / f"{stem}.json").read_text())))
        return 0
    os.environ.setdefault("AUTOTRANS_CACHE_DIR", tempfile.mkdtemp(prefix="autotrans-permute-"))
    import torch
    import autotrans
    import autotrans.core.layout as core_layout
    autotrans.core_layout = core_layout
    try:
        import cupy as cp
    except ImportError:
        cp = None
    flush = torch.empty(512 * 2**20, dtype=torch.uint8, device="cuda")
    time_us = _timer(torch, flush, args.reps)
    from autotrans.backend import cuda as driver
    from autotrans.tools.bench.gpu import Gpu
    copy16 = Gpu().copy16                       # on the legacy default stream, torch's current stream here
    doc = {"device": driver.device().id.text, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "method": __doc__.split("\n\n")[1].replace("\n", " "), "cases": []}
    if args.tuned:
        doc["tuned"] = __doc__.split("\n\n")[3].replace("\n", " ")
    from autotrans.api import specialise
    if not specialise.enabled():
        doc["specialise"] = "AUTOTRANS_SPECIALISE=0: generic kernels only (no build for the shape or launch)."
    for name, shape, dtype, axes, sl, target, *opts in cases:
        opts = opts[0] if opts else {}
        r = run_case(torch, cp, autotrans, time_us, copy16, args.reps, shape, dtype, axes, sl, **opts, tuned=args.tuned)
        doc["cases"].append({"name": name, "shape": shape, "dtype": dtype + (f"->{opts['to']}" if "to" in opts else ""),
                             "axes": axes, "view": sl is not None, **opts, "target": target, **r})
        print(name, shape, dtype, axes, r["problem"], {k: round(v["of_roofline"], 3) for k, v in r["results"].items()},
              "exact" if r["exact"] else "WRONG", flush=True)
        _write(Path(args.out), doc, stem)   # a run cut short keeps its cases
    return 0


def label(case) -> str:
    """A case's name, shape, dtype and axes, as --cases matches them."""
    name, shape, dtype, axes = case[:4]
    return f"{name} {'x'.join(map(str, shape))} {dtype} {tuple(axes)}"


def selected(pattern: str | None) -> list:
    """The CASES whose label matches the regular expression pattern (all for None)."""
    return [c for c in CASES if pattern is None or re.search(pattern, label(c))]


def _write(out: Path, doc: dict, stem: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    (out / f"{stem}.md").write_text(markdown(doc))


if __name__ == "__main__":
    sys.exit(main())
