"""Tune the shipped grid on this GPU and export it as the shipped results
(cache/h200.json), which choose() uses on the same GPU model when the user's
cache has no entry for a shape.

The grid (autotrans.tools.bench.grid()) covers, for every element size,
the classes the choice depends on: row-byte alignment of both sides (16-byte,
the element size only, and the alignments between), aspect ratio (square,
tall and wide, skinny both ways), size against L2 and the SM count (a few tiles
up to 128 MiB), and batches of small and of large matrices. It tunes into a
temporary cache folder (the compiled kernels stay in the kernel store), and
rewrites the export every few shapes, so a run cut short still leaves one.
Then the strided problems of autotrans.tools.bench.problem_grid() (permutations
that run a strided kernel: rows, odd 3-D and 4-D orders, casts, conjugates),
shipped in the same export for permute() (api.strided_select).

    python benchmarks/grid.py                # about 6 minutes on an H200
    python benchmarks/grid.py --list         # the grid (no GPU needed)
    python benchmarks/grid.py --resume       # keep the shapes and problems the export already holds
    python benchmarks/grid.py --resume --problems-only   # tune the missing strided problems, no shape
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from autotrans.cli.permutation import describe
from autotrans.tools import bench as bm

REPO = Path(__file__).resolve().parent.parent
EXPORT_EVERY = 8


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "cache" / "h200.json"), help="export file (default: %(default)s)")
    ap.add_argument("--budget-s", type=float, default=300.0,
                    help="start no tune after this many seconds (default: %(default)s)")
    ap.add_argument("--resume", action="store_true", help="keep the current entries of --out, tune the rest")
    ap.add_argument("--problems-only", action="store_true", help="tune no shape, only the strided problems")
    ap.add_argument("--list", action="store_true", help="print the grid and exit")
    return ap


def _resume(cache, path: Path, fingerprint: str, space: str) -> set:
    """Import the export's entries and problem rows of this device and space,
    but those whose re-time was disturbed (runner.retime_suspect: tuned
    again); the (shape, size) pairs and the problem key texts it keeps."""
    from autotrans.tuning.runner import retime_suspect
    if not path.is_file():
        return set()
    cache.import_json(path)
    rows = cache.items() + cache.problem_items()
    suspect = [k for k, r in rows if retime_suspect(r)]
    for k in suspect:
        print(f"{getattr(k, 'problem_text', None) or 'x'.join(map(str, k.shape))}: its re-time was disturbed; "
              "tuning it again")
    cache.delete([k for k, _ in rows if k.device != fingerprint or k.templates != space] + suspect)
    return ({(tuple(k.shape), k.elem_bytes) for k, _ in cache.items()}
            | {k.text for k, _ in cache.problem_items()})


def _tune_problems(cases, cache, have: set, fingerprint: str, deadline: float, save) -> list[str]:
    """Tune the strided problems of ``cases`` (PermuteCase) missing from
    ``have`` into ``cache``, calling ``save()`` every EXPORT_EVERY of them (a
    run cut short keeps what it tuned); the names of those that failed."""
    from autotrans.tuning.strided import problem_key, tune_problem
    failed = []
    for i, c in enumerate(cases):
        if i and i % EXPORT_EVERY == 0:
            save()
        problem, cast, epilogue = c.problem()
        if problem_key(problem, fingerprint, cast, epilogue).text in have:
            continue
        if time.monotonic() > deadline:
            print(f"time budget spent: {c.name} and later problems not tuned (run again with --resume)")
            break
        t = time.monotonic()
        try:
            res = tune_problem(problem, cache=cache, progress=False, cast=cast, epilogue=epilogue)
        except Exception as exc:   # one problem's failure must not lose the others
            failed.append(c.name)
            print(f"[problem {i + 1}/{len(cases)}] {c.name}: FAILED {bm.one_line(exc)}", flush=True)
            continue
        print(f"[problem {i + 1}/{len(cases)}] {c.name}: {res.best.key} {res.time_us:.1f} µs = "
              f"{res.frac_memcpy:.3f} of memcpy [{time.monotonic() - t:.1f} s]", flush=True)
    return failed


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    cases = bm.grid()
    problems = bm.problem_grid()
    if args.list:
        for c in cases:
            print(f"{c.name:24} {c.nbytes / bm.MIB:9.2f} MiB  {','.join(c.classes)}")
        print(f"{len(cases)} shapes")
        for c in problems:
            print(f"{c.name:40} {','.join(c.classes)}: {describe(c.problem()[0])}")
        print(f"{len(problems)} strided problems")
        return 0
    from autotrans import api
    from autotrans.results.store import ResultCache
    from autotrans.tuning.space import space_id
    dev = bm.device_or_error("grid.py")
    if dev is None:
        return 2
    out, t0, failed = Path(args.out), time.monotonic(), []
    with tempfile.TemporaryDirectory(prefix="autotrans-grid-") as d:
        cache = ResultCache(d)
        have = _resume(cache, out, dev.id.text, space_id()) if args.resume else set()
        todo = [] if args.problems_only else [c for c in cases if (c.bmn, c.elem_bytes) not in have]
        print(f"{len(todo)} of {len(cases)} shapes to tune on {dev.id.text}", flush=True)
        for i, c in enumerate(todo):
            if time.monotonic() - t0 > args.budget_s:
                print(f"time budget spent: {len(todo) - i} shapes not tuned (run again with --resume)")
                break
            t = time.monotonic()
            try:
                res = api.tune(c.bmn, c.dtype, cache_dir=d, progress=False)
            except Exception as exc:   # one shape's failure must not lose the others
                failed.append(c.name)
                print(f"[{i + 1}/{len(todo)}] {c.name}: FAILED {bm.one_line(exc)}", flush=True)
                continue
            print(f"[{i + 1}/{len(todo)}] {c.name} ({','.join(c.classes)}): {res.best.key} "
                  f"{res.time_us:.1f} µs = {res.frac_memcpy:.3f} of memcpy "
                  f"[{time.monotonic() - t:.1f} s, {time.monotonic() - t0:.0f} s in all]", flush=True)
            if (i + 1) % EXPORT_EVERY == 0:
                cache.export_json(out, device=dev.id.text)
        cache.export_json(out, device=dev.id.text)
        failed += _tune_problems(problems, cache, have, dev.id.text, t0 + args.budget_s,
                                 lambda: cache.export_file(out, device=dev.id.text))
        n, p = cache.export_file(out, device=dev.id.text)
    print(f"exported {n} tuned shapes and {p} strided problems to {out} in {time.monotonic() - t0:.0f} s"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
