"""Rules for the untuned choice, judged on GPU times taken at the benchmark's
own shapes. The leave-one-out over the shipped grid (untuned_loo.py) reads the
tuner's first-pass medians of 5 samples. The rule it favoured in session 17
did not hold up on the GPU (NOTES 30).

On the GPU (--measure), each dense zoo and held-out case times its pool of
configs: every config an untuned rule could plausibly pick (pool()). Each
config is checked bit-exactly, then all are timed interleaved, the L2 flushed
before every launch, as the benchmark times its contenders. Without a GPU, the
default run reads that file. It reports how today's choose() does against the
best of each pool. Edit the rule in autotrans/api/select.py and run again.

    python benchmarks/untuned_pool.py --measure [--extra] [--budget-s 400] [--reps 15]   # GPU: writes --data
    python benchmarks/untuned_pool.py [--worst 10]                              # no GPU: reads --data
    python benchmarks/untuned_pool.py --plan                                    # no GPU: pool sizes

A case's pool: configs that are candidates for its shape (space.admits) and
are within POOL_TIE of the fastest on a nearby shipped shape, at most
POOL_PER_ROW per shape. The nearby shapes are the POOL_NEAR nearest by
log-distance, the POOL_CLASS nearest of the case's shape class, and the one
choose() takes. choose()'s pick, Table.nearest's (choose() without its exact
hit and whole-tile rule) and the built-in default are always in it.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autotrans.api.select import Table, shape_class          # noqa: E402
from autotrans.core.device import Limits                      # noqa: E402
from autotrans.kernels.config import KernelConfig             # noqa: E402
from autotrans.results.shipped import for_device, shipped_entries   # noqa: E402
from autotrans.tools import bench as bm                       # noqa: E402
from autotrans.tools.bench.cases import parse_cases           # noqa: E402
from autotrans.tuning.space import admits, default_config, space_id   # noqa: E402

FORMAT = "autotrans-untuned-pool"
DATA = REPO / "benchmarks" / "results" / "untuned-pool-h200.json"
POOL_TIE = 0.10        # configs within this of a nearby shape's fastest
POOL_PER_ROW = 10
POOL_NEAR, POOL_CLASS = 4, 3
H200_LIMITS = Limits(1024, 232448)   # --plan's device; a data file names its own
# --extra: shift tiles of 32 KiB, outside the space (8-16 KiB), which touch fewer
# sectors on odd shapes (NOTES 33); timed where they can run, beside the pool.
WIDE_SHIFT = tuple(f"shift:e{e}:{t}:v16:r{4 // e}:p{4 // e}:{sw}:col" for e, t, sw in (
    (1, "128x256:t512", "none"), (1, "128x256:t512", "xor"), (1, "256x128:t512", "none"),
    (1, "256x128:t512", "xor"), (1, "256x128:t256", "none"), (2, "128x128:t512", "xor"),
    (2, "128x128:t512", "none"), (2, "64x256:t512", "xor"), (2, "128x128:t256", "xor"),
    (4, "64x128:t512", "xor"), (4, "64x128:t512", "none"), (4, "128x64:t512", "xor"), (4, "64x128:t256", "xor")))
# --defaults: held-out shapes for the built-in defaults (NOTES 55), none in the zoo:
# 1- and 2-byte 16-byte-aligned matrices tiled whole or not by the large vec
# default, in few or many blocks; odd float16 (the shift default); batches of
# small matrices (the skinny default). The old defaults are timed beside them.
DEFAULT_CASES = """
12288x12288  int8     square,whole-many
6144x6144    int8     square,whole-few
3072x2048    int8     rect,whole-few
640x4096     int8     rect,edge
256x32x1024  int8     batched,edge
8x4096x2048  int8     batched,whole-many
4096x6144    float16  rect,whole-many
2048x2048    float16  square,whole-few
3000x2048    float16  rect,edge
40x512x256   float16  batched,whole-few
24x1024x1024 float16  batched,whole-many
2049x3001    float16  odd
777x5003     float16  odd
12345x999    float16  odd
3000x12x20   float32  batched,small
1000x24x40   float32  batched,small
512x32x64    float16  batched,small
256x16x128   int8     batched,small
2000x8x24    float32  batched,small
2500x10x10   float32  batched,small
1500x32x16   float32  batched,small
5000x16x16   float16  batched,small
800x24x40    float16  batched,small
4096x4x64    int8     batched,small
2000x24x32   int8     batched,small
1000x16x8    float64  batched,small
6000x6x20    float32  batched,small2
3000x16x32   float16  batched,small2
10000x8x8    float64  batched,small2
777x20x48    int8     batched,small2
8x16x16      float32  batched,small2
64x32x16     float16  batched,small2
20000x4x4    float32  batched,small2
1200x40x24   float16  batched,small2
3000x30x16   int8     batched,small2
2048x12x12   float64  batched,small2
"""
OLD_DEFAULTS = ("vec:e1:256x256:t512:v16:r4:p0:xor:col", "vec:e2:128x128:t256:v16:r2:p0:xor:col",
                "shift:e2:64x128:t256:v16:r2:p2:xor:col",
                # whole tiles of 4 KiB for batches of small matrices, against the skinny default
                *(f"whole:e{e}:32x{4096 // 32 // e}:t{t}:v16:r1:p0:none:row" for e in (1, 2, 4, 8) for t in (128, 256)))
MIB = 1 << 20


def cases(defaults: bool = False) -> list[bm.Case]:
    """The zoo and held-out cases that run a kernel (a side of 1 is a copy);
    with ``defaults``, DEFAULT_CASES instead."""
    if defaults:
        return parse_cases(DEFAULT_CASES, held_out=True)
    return [c for c in bm.zoo() + bm.held_out() if 1 not in c.bmn[1:]]


class Shipped:
    """The shipped records per element size, and choose()'s Table over them."""

    def __init__(self, pairs=None, limits: Limits = H200_LIMITS, fingerprint: str | None = None):
        self.limits = limits
        self.pairs: dict = {}
        for k, r in for_device(shipped_entries() if pairs is None else pairs, fingerprint):
            if len(getattr(k, "shape", ())) == 3:
                self.pairs.setdefault(k.elem_bytes, []).append((k, r))
        self._tables: dict = {}

    def table(self, e: int) -> Table:
        if e not in self._tables:
            self._tables[e] = Table([("shipped", k, r) for k, r in self.pairs.get(e, [])], e, self.limits)
        return self._tables[e]


def _near_ties(rec) -> list[str]:
    """Keys of rec's generic configs within POOL_TIE of its fastest generic one."""
    timed = sorted((c.median_us, c.key) for c in rec.candidates if "@" not in c.key and c.median_us > 0)
    return [k for t, k in timed if t <= (1 + POOL_TIE) * timed[0][0]][:POOL_PER_ROW] if timed else []


def pool(shipped: Shipped, bmn, e: int, extra=()) -> list[KernelConfig]:
    """The configs to time for (bmn, e): see the module's docstring; and the
    keys of ``extra`` of this element size that can run it."""
    pairs, logs = shipped.pairs.get(e, []), [math.log(x) for x in bmn]
    others = [(math.dist(logs, [math.log(x) for x in k.shape]), k.text, k, r) for k, r in pairs if k.shape != bmn]
    others.sort(key=lambda t: t[:2])
    want = shape_class(bmn, e)
    same = [t for t in others if shape_class(t[2].shape, e) == want]
    choice = shipped.table(e).choose(bmn)
    rows = others[:POOL_NEAR] + same[:POOL_CLASS] + [t for t in others if t[2] == choice.entry]
    keys = [choice.config.key, shipped.table(e).nearest(bmn).config.key, default_config(bmn, e, shipped.limits).key]
    keys += [k for *_, r in rows for k in _near_ties(r)]
    keys += [k for k in extra if KernelConfig.from_key(k).elem_bytes == e]
    out = []
    for k in dict.fromkeys(keys):
        cfg = KernelConfig.from_key(k)
        if not cfg.fixed and cfg.pointer_align <= 16 and admits(cfg, bmn, shipped.limits):
            out.append(cfg)
    return out


# -- the GPU run ------------------------------------------------------------------

def measure(out: Path, reps: int, budget_s: float, extra=(), defaults: bool = False) -> int:
    """Time every case's pool on this GPU into ``out`` (rewritten after each case;
    cases it already holds for this GPU and space are kept)."""
    from autotrans.build.compile import compile_configs
    from autotrans.tools.bench import gpu
    dev = bm.device_or_error("untuned_pool")
    if dev is None:
        return 2
    shipped = Shipped(limits=dev.limits, fingerprint=dev.id.text)
    doc = _resumed(out, dev.id.text) or {"format": FORMAT, "version": 1, "meta": {
        "fingerprint": dev.id.text, "space": space_id(), "reps": reps, "pool_tie": POOL_TIE,
        "limits": [dev.limits.max_threads, dev.limits.smem_per_block], "extra": list(extra),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "method": "each config checked bit-exactly, then all of a case's pool timed interleaved: "
                  "L2 flush, spin, CUDA events around the launch, the order rotating each repetition"},
        "cases": []}
    done = {c["name"] for c in doc["cases"]}
    extra = doc["meta"].get("extra", [])
    todo = [(c, pool(shipped, c.bmn, c.elem_bytes, extra)) for c in cases(defaults) if c.name not in done]
    t0 = time.perf_counter()
    compiled = compile_configs([cfg for _, p in todo for cfg in p], dev.arch)
    print(f"compiled {len(compiled)} configs in {time.perf_counter() - t0:.0f} s", flush=True)
    g = gpu.Gpu()
    try:
        for i, (case, cfgs) in enumerate(todo):
            if time.perf_counter() - t0 > budget_s:
                print(f"budget: {len(todo) - i} cases not run (run again to resume)", flush=True)
                break
            doc["cases"].append(_time_pool(g, case, cfgs, compiled, reps))
            _write(out, doc)
            print(f"[{i + 1}/{len(todo)}] {case.name}: {len(cfgs)} configs", flush=True)
    finally:
        g.close()
    return 0


def _time_pool(g, case, cfgs, compiled, reps: int) -> dict:
    """One case's pool on the GPU (g: a bench Gpu): each config checked, then all timed interleaved."""
    from autotrans.backend import cuda as driver
    from autotrans.tools.bench import check, gpu
    from autotrans.tools.bench.measure import measure as timed_rounds, spin_us
    from autotrans.tuning import loader
    from autotrans.tools.bench.results import Entry
    from autotrans.tuning.timing import Stats
    data = gpu.Data(g, case)
    entries, failed = [], {}
    try:
        for cfg in cfgs:
            c = compiled[cfg.key]
            if not c.ok:
                failed[cfg.key] = "compile: " + c.error[-200:]
                continue
            go = loader.load(cfg, c).launcher(case.bmn)
            e = Entry(cfg.key, lambda src, go=go, y=data.y: (go(src, y), y)[1])
            why = check.output(g, e, case, data)
            if why:
                failed[cfg.key] = f"{why[0]}: {why[1]}"
            else:
                entries.append(e)
        errors: dict = {}
        spin = spin_us(entries, data, errors)
        samples, _ = timed_rounds(g, entries, data, spin, None, errors, reps)
        failed |= {k: f"failed: {v}" for k, v in errors.items()}
        times = {k: Stats.of(s).to_dict() for k, s in samples.items() if s and k not in errors}
    finally:
        driver.synchronize()
        data.release()
    return {"name": case.name, "bmn": list(case.bmn), "elem_bytes": case.elem_bytes, "times": times,
            "failed": failed}


def _resumed(out: Path, fingerprint: str) -> dict | None:
    try:
        doc = load(out)
    except (OSError, ValueError):
        return None
    meta = doc["meta"]
    return doc if meta.get("fingerprint") == fingerprint and meta.get("space") == space_id() else None


def _write(out: Path, doc: dict) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(out)


# -- reading and judging ------------------------------------------------------------

def load(path: Path) -> dict:
    """The data file, checked; ValueError with one line saying what is wrong."""
    try:
        doc = json.loads(Path(path).read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("meta"), dict):
        raise ValueError(f"{path}: not an {FORMAT} file")
    if not isinstance(doc.get("cases"), list):
        raise ValueError(f"{path}: no list of cases")
    lim = doc["meta"].get("limits")
    if not (isinstance(lim, list) and len(lim) == 2 and all(isinstance(x, int) and x > 0 for x in lim)):
        raise ValueError(f"{path}: meta.limits is not [max threads, shared memory bytes]")
    for c in doc["cases"]:
        ok = (isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("times"), dict)
              and isinstance(c.get("bmn"), list) and len(c["bmn"]) == 3
              and all(isinstance(x, int) and x > 0 for x in c["bmn"]) and c.get("elem_bytes") in (1, 2, 4, 8, 16)
              and all(isinstance(t, dict) and isinstance(t.get("median_us"), (int, float)) and t["median_us"] > 0
                      for t in c["times"].values()))
        if not ok:
            raise ValueError(f"{path}: a malformed case: {str(c)[:120]}")
    return doc


@dataclass(frozen=True)
class Pick:
    """choose()'s pick on one measured case, against the fastest of its pool."""
    name: str
    nbytes: int
    source: str
    config: str
    frac: float | None      # pool's fastest / the pick's median; None: the pick was not timed there
    best: str
    default: float | None = None   # the same for the built-in default (default_config)


def judge(doc: dict, shipped: Shipped) -> list[Pick]:
    """Pick rows for the cases of doc that timed at least one config."""
    out = []
    for c in doc["cases"]:
        times = {k: t["median_us"] for k, t in c["times"].items()}
        if not times:
            continue
        bmn, e = tuple(c["bmn"]), c["elem_bytes"]
        choice = shipped.table(e).choose(bmn)
        best = min(times, key=times.get)
        t = times.get(choice.config.key)
        td = times.get(default_config(bmn, e, shipped.limits).key)
        out.append(Pick(c["name"], math.prod(bmn) * e, choice.source, choice.config.key,
                        None if t is None else times[best] / t, best, None if td is None else times[best] / td))
    return out


def _geomean(xs) -> float | None:
    return math.exp(statistics.mean(math.log(x) for x in xs)) if xs else None


def report(picks: list[Pick], worst: int) -> str:
    bands = [("all", picks), ("< 1 MiB", [p for p in picks if p.nbytes < MIB]),
             ("1-16 MiB", [p for p in picks if MIB <= p.nbytes < 16 * MIB]),
             (">= 16 MiB", [p for p in picks if p.nbytes >= 16 * MIB])]
    lines = ["| cases | n | pick not timed | geomean best/pick | >= 0.95 | min | default: geomean | min |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, ps in bands:
        known = [p.frac for p in ps if p.frac is not None]
        gm = _geomean(known)
        dflt = [p.default for p in ps if p.default is not None]
        lines.append(f"| {label} | {len(ps)} | {len(ps) - len(known)} | {'–' if gm is None else f'{gm:.3f}'} "
                     f"| {sum(x >= 0.95 for x in known)} | {min(known, default=float('nan')):.2f} "
                     f"| {'–' if not dflt else f'{_geomean(dflt):.3f}'} | {min(dflt, default=float('nan')):.2f} |")
    if worst:
        lines += ["", f"Worst {worst}:", ""]
        lines += [f"- {p.name}: {p.frac:.2f} ({p.source}: `{p.config}`; fastest `{p.best}`)"
                  for p in sorted((p for p in picks if p.frac is not None), key=lambda p: p.frac)[:worst]]
    return "\n".join(lines) + "\n"


def extras_report(doc: dict) -> str:
    """The cases where an --extra config was timed: its fastest against the pool's fastest."""
    extra, lines = set(doc["meta"].get("extra") or ()), []
    for c in doc["cases"]:
        times = {k: t["median_us"] for k, t in c["times"].items()}
        ours = {k: t for k, t in times.items() if k in extra}
        rest = {k: t for k, t in times.items() if k not in extra}
        if ours and rest:
            a, b = min(ours, key=ours.get), min(rest, key=rest.get)
            lines.append(f"- {c['name']}: `{a}` {ours[a]:.2f} µs, pool's fastest `{b}` {rest[b]:.2f} µs "
                         f"({rest[b] / ours[a]:.3f})")
    return ("\nExtra configs (pool's fastest / extra's fastest; above 1: the extra is faster):\n\n"
            + "\n".join(lines) + "\n") if lines else ""


def plan(shipped: Shipped, defaults: bool = False) -> str:
    pools = [(c, pool(shipped, c.bmn, c.elem_bytes, OLD_DEFAULTS if defaults else ())) for c in cases(defaults)]
    unique = {cfg.key for _, p in pools for cfg in p}
    sizes = [len(p) for _, p in pools]
    return (f"{len(pools)} cases, {sum(sizes)} timings of {len(unique)} distinct configs "
            f"(pools of {min(sizes)}-{max(sizes)}, median {statistics.median(sizes):.0f})\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[12:15]))
    ap.add_argument("--data", default=str(DATA), help="the pool times (default: %(default)s)")
    ap.add_argument("--measure", action="store_true", help="time the pools on this GPU into --data")
    ap.add_argument("--plan", action="store_true", help="print the pools' sizes (no GPU)")
    ap.add_argument("--extra", action="store_true",
                    help="with --measure: also time the 32 KiB shift tiles (WIDE_SHIFT) where they can run")
    ap.add_argument("--defaults", action="store_true",
                    help="with --measure: the held-out DEFAULT_CASES, with the old defaults (OLD_DEFAULTS) as extras")
    ap.add_argument("--reps", type=int, default=15, help="repetitions per pool (default: %(default)s)")
    ap.add_argument("--budget-s", type=float, default=400.0, help="start no case after this (default: %(default)s)")
    ap.add_argument("--worst", type=int, default=10, help="list this many worst picks")
    args = ap.parse_args(argv)
    if args.measure:
        extra = (WIDE_SHIFT if args.extra else ()) + (OLD_DEFAULTS if args.defaults else ())
        return measure(Path(args.data), max(1, args.reps), args.budget_s, extra, args.defaults)
    if args.plan:
        print(plan(Shipped(), args.defaults), end="")
        return 0
    if not Path(args.data).exists():
        print(f"untuned_pool: error: no data file {args.data}: run with --measure on the GPU first", file=sys.stderr)
        return 2
    try:
        doc = load(Path(args.data))
    except (OSError, ValueError) as exc:
        print(f"untuned_pool: error: {exc}", file=sys.stderr)
        return 2
    if doc["meta"].get("space") != space_id():
        print(f"untuned_pool: note: {args.data} was measured for space {doc['meta'].get('space')}, "
              f"not today's {space_id()}", file=sys.stderr)
    shipped = Shipped(limits=Limits(*doc["meta"]["limits"]), fingerprint=doc["meta"].get("fingerprint"))
    print(f"{doc['meta'].get('fingerprint')}: choose()'s pick over the shipped results it uses, and the built-in "
          f"default, as the fastest of each case's pool over their times\n")
    print(report(judge(doc, shipped), args.worst) + extras_report(doc), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
