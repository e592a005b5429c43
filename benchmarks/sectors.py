"""What limits the tuned kernels of a benchmark run: the 32-byte global-memory
sectors each case's tuned config touches (the emulator, autotrans.emulate.sectors:
the kernel's own index math, no GPU), beside the fraction of the roofline that
run measured. Where the L2 is the limit (rows at odd alignments), that fraction
is about ideal / sectors.

    python benchmarks/sectors.py [--results benchmarks/results/h200.json] [--min-mib 16] [--out FILE.md]
    python benchmarks/sectors.py --permute benchmarks/results/permute-tuned-edge.json [--out FILE.md]

With --permute, the cases of a permute_bench.py result file whose tuned kernel
is a strided config (the problem permute() gives it, rebuilt from the case's
shape, axes and dtypes; views are left out: the file does not hold their slices).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autotrans.emulate.sectors import sectors                 # noqa: E402
from autotrans.kernels.config import KernelConfig             # noqa: E402
from autotrans.tools import bench as bm                       # noqa: E402

MIB = 1 << 20
HEAD = ("| case | MiB | tuned config | loads × ideal | stores × ideal | ideal / sectors | measured of roofline |\n"
        "|---|---:|---|---:|---:|---:|---:|\n")


def rows_of(doc: dict, min_mib: float) -> list[dict]:
    """The result rows of at least min_mib whose tuned kernel ran (not a copy)."""
    out = []
    for row in doc["rows"]:
        t = row["results"].get("tuned") or {}
        if (t.get("status") == "ok" and t.get("config") not in (None, "copy") and t.get("frac_roofline")
                and row["nbytes"] >= min_mib * MIB):
            out.append(row)
    return out


def line(row: dict) -> str:
    t = row["results"]["tuned"]
    s = sectors(KernelConfig.from_key(t["config"]), tuple(row["bmn"]))
    return (f"| {row['name']} | {row['nbytes'] / MIB:.0f} | `{t['config']}` | {s.read_ratio:.3f} | "
            f"{s.write_ratio:.3f} | {1 / s.ratio:.3f} | {t['frac_roofline']:.3f} |\n")


PERMUTE_HEAD = ("| case | shape | axes | dtype | problem | tuned config | loads × ideal | stores × ideal "
                "| ideal / sectors | measured of {} |\n|---|---|---|---|---|---|---:|---:|---:|---:|\n")
ROOFLINES = ("memcpy", "the roofline")  # permute_bench runs before the 16-byte copy: cudaMemcpy alone


def permute_line(case: dict) -> str | None:
    """A permute_bench case's row, or None where its tuned kernel is not a strided config."""
    from autotrans.api.permute import as_strided
    from autotrans.core import layout
    from autotrans.core.problem import elem_size
    from autotrans.emulate.sectors import strided_sectors
    from autotrans.kernels.config import CAST_SIZES
    key = case.get("tuned") or ""
    if ":strided" not in key or case.get("view"):
        return None
    cfg = KernelConfig.from_key(key)
    shape, axes = tuple(case["shape"]), tuple(case["axes"])
    if cfg.cast != "none":                      # its sizes (NumPy alone does not know bfloat16)
        e, out = CAST_SIZES[cfg.cast]
    else:
        e, out = elem_size(case["dtype"]), None
    problem = as_strided(layout.canonical(shape, layout.c_strides(shape, e), e, axes, 16, out_itemsize=out), 16,
                         cfg.cast)
    s = strided_sectors(cfg, problem)
    return (f"| {case['name']} | {'x'.join(map(str, shape))} | {','.join(map(str, axes))} | {case['dtype']} | "
            f"{type(problem).__name__} | `{key}` | {s.read_ratio:.3f} | {s.write_ratio:.3f} | {1 / s.ratio:.3f} | "
            f"{case['results']['autotrans']['of_roofline']:.3f} |\n")


def permute_main(path: Path, out: str | None) -> int:
    import json
    try:
        doc = json.loads(path.read_text())
        cases = [c for c in doc["cases"] if isinstance(c, dict)]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"sectors: error: {path}: not a permute_bench result file ({exc})", file=sys.stderr)
        return 2
    both = any("copy16" in (c.get("results") or {}) for c in cases)
    of = ("the roofline, the faster of a cudaMemcpy and a 16-byte copy kernel" if both else "a cudaMemcpy")
    text = (f"# Sectors of the tuned strided kernels, {path.name}\n\n"
            f"Measured fractions: {doc.get('device', '?')}, {doc.get('date', '?')} (permute_bench.py, of {of} "
            "of the same bytes). Sectors: the emulator running each tuned config's index math over "
            "the whole launch on the CPU.\n\n" + PERMUTE_HEAD.format(ROOFLINES[both]))
    print(text, end="", flush=True)
    for case in cases:
        try:
            ln = permute_line(case)
        except (ValueError, KeyError, TypeError) as exc:
            ln = f"| {case.get('name')} | not counted: {str(exc)[:120]} |\n"
        if ln:
            text += ln
            print(ln, end="", flush=True)
    if out:
        Path(out).write_text(text)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--results", default=str(REPO / "benchmarks" / "results" / "h200.json"),
                    help="a bench.py result file (default: %(default)s)")
    ap.add_argument("--min-mib", type=float, default=16.0, help="cases of at least this size (default: %(default)s)")
    ap.add_argument("--permute", metavar="FILE", help="a permute_bench.py result file instead (strided kernels)")
    ap.add_argument("--out", help="also write the table to this markdown file")
    args = ap.parse_args(argv)
    if args.permute:
        return permute_main(Path(args.permute), args.out)
    try:
        doc = bm.load_results(Path(args.results))
    except (OSError, ValueError) as exc:
        print(f"sectors: error: {exc}", file=sys.stderr)
        return 2
    meta = doc.get("meta", {})
    text = (f"# Sectors of the tuned kernels, {Path(args.results).name}\n\n"
            f"Measured fractions: {meta.get('gpu', '?')}, {meta.get('date', '?')} (bench.py). Sectors: the "
            "emulator running each tuned config's index math over the whole launch on the CPU; a warp "
            f"instruction costs the 32-byte sectors its threads touch. Cases of {args.min_mib:g} MiB and more.\n\n"
            + HEAD)
    print(text, end="", flush=True)
    for row in rows_of(doc, args.min_mib):
        try:
            ln = line(row)
        except ValueError as exc:       # a config or shape this version cannot run
            ln = f"| {row['name']} | – | – | – | – | – | not counted: {str(exc)[:120]} |\n"
        text += ln
        print(ln, end="", flush=True)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
