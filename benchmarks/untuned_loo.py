"""How good the untuned choice is on shapes the shipped grid does not hold,
measured without a GPU: leave one out. For each shipped (dense) shape, choose()
picks a config from the other shipped shapes of its element size, as it would
for an untuned shape; that config's time is read from the left-out shape's own
tuning record (tune() times every candidate), against the record's best.

    python benchmarks/untuned_loo.py [--shipped cache] [--worst 10] [--out FILE.md]

Each GPU model's export is judged on its own (a shape of one model chooses
from that model's other shapes). Prints, per model and per size against 1 and 16 MiB and per shape class (rows 16-byte
aligned or not, square, tall or wide, skinny, batched): the geometric mean of best / chosen,
how many reach 0.95, and the minimum (a config absent from the left-out
record's candidates, which then cannot run it or was not in its space, is counted apart;
so is one the tuner stopped after two launches that disagree, an outlier read
as slow before runner.stops_early took both: not a measurement; and a shape
whose record's re-time was disturbed, runner.retime_suspect: its best is not one).
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autotrans.api.select import Table, shape_class   # noqa: E402
from autotrans.core.device import Limits              # noqa: E402
from autotrans.results.shipped import shipped_entries  # noqa: E402
from autotrans.tuning.runner import AGREE, retime_suspect   # noqa: E402

MIB = 1 << 20


@dataclass(frozen=True)
class Loo:
    """One left-out shape: what choose() picked without it, and best / its time (None: not timed there)."""
    shape: tuple
    elem_bytes: int
    source: str
    config: str
    frac: float | None

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.elem_bytes


def measured(c) -> bool:
    """Whether a candidate row's time is a measurement: not two launches (the
    early stop) that disagree; its quartiles give them back (q1, q3 = lo + d/4, lo + 3d/4)."""
    if c.n != 2:
        return True
    d = 2 * (c.q3_us - c.q1_us)
    lo = c.q1_us - d / 4
    return lo > 0 and lo + d <= AGREE * lo


def leave_one_out(pairs, limits: Limits = Limits()) -> list[Loo]:
    """Loo rows of the (CacheKey, TuneRecord) pairs of dense problems (of one device: see models())."""
    entries = [("shipped", k, r) for k, r in pairs if len(getattr(k, "shape", ())) == 3]
    out = []
    for _, key, rec in entries:
        rest = [x for x in entries if x[1].elem_bytes == key.elem_bytes and x[1].shape != key.shape
                and x[1].device == key.device]
        choice = Table(rest, key.elem_bytes, limits).choose(key.shape)
        t = {c.key: c.median_us for c in rec.candidates if measured(c)}.get(choice.config.key)
        out.append(Loo(key.shape, key.elem_bytes, choice.source, choice.config.key,
                       None if t is None or retime_suspect(rec) else rec.time_us / t))
    return out


def models(pairs) -> dict[str, list]:
    """The (CacheKey, TuneRecord) pairs by GPU model (the fingerprint's first field), in name order."""
    out: dict[str, list] = {}
    for k, r in pairs:
        out.setdefault(k.device.split("|")[0], []).append((k, r))
    return dict(sorted(out.items()))


def summary(rows: list[Loo], label: str) -> str:
    known = [r.frac for r in rows if r.frac is not None]
    if not known:
        return f"| {label} | {len(rows)} | 0 | – | – | – |"
    gm = math.exp(statistics.mean(math.log(x) for x in known))
    return (f"| {label} | {len(rows)} | {len(rows) - len(known)} | {gm:.3f} | {sum(x >= 0.95 for x in known)} "
            f"| {min(known):.2f} |")


def kind(r: Loo) -> str:
    """A left-out shape's class as choose() sees it (select.shape_class), and batched or not."""
    align, skinny, aspect = shape_class(r.shape, r.elem_bytes)
    side = "skinny" if skinny else ("square" if aspect == 0 else "tall or wide")
    return f"{'16-byte rows' if align >= 16 else 'odd rows'}, {side}{', batched' if r.shape[0] > 1 else ''}"


def report(rows: list[Loo], worst: int) -> str:
    bands = [("all", rows), ("< 1 MiB", [r for r in rows if r.nbytes < MIB]),
             ("1-16 MiB", [r for r in rows if MIB <= r.nbytes < 16 * MIB]),
             (">= 16 MiB", [r for r in rows if r.nbytes >= 16 * MIB])]
    bands += [(k, [r for r in rows if kind(r) == k]) for k in sorted({kind(r) for r in rows})]
    lines = ["| shapes | n | not timed there | geomean best/chosen | >= 0.95 | min |", "|---|---:|---:|---:|---:|---:|"]
    lines += [summary(rs, label) for label, rs in bands]
    if worst:
        lines += ["", f"Worst {worst}:", ""]
        lines += [f"- {'x'.join(map(str, r.shape))} e{r.elem_bytes}: {r.frac:.2f} ({r.source}: `{r.config}`)"
                  for r in sorted((r for r in rows if r.frac is not None), key=lambda r: r.frac)[:worst]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shipped", default=str(REPO / "cache"), help="folder of exports (default: %(default)s)")
    ap.add_argument("--worst", type=int, default=10, help="list this many worst shapes")
    ap.add_argument("--out", help="also write the report to this markdown file")
    args = ap.parse_args(argv)
    text = "\n".join(f"## {model}\n\n" + report(leave_one_out(pairs), args.worst)
                     for model, pairs in models(shipped_entries(args.shipped)).items())
    print(text, end="")
    if args.out:
        Path(args.out).write_text(f"# Untuned choice, leave one out over {args.shipped}\n\n{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
