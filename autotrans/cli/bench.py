"""``autotrans bench``: tuned kernels against the copy roofline and the frameworks."""
from __future__ import annotations

import json

import numpy as np

from ..core.paths import atomic_write
from .common import (UserError, add_cache_dir, add_command, add_dtype, add_progress, need_gpu,
                     note, output_file, shape_arg)

HELP = "compare tuned kernels with the copy roofline, torch, CuPy and JAX"
DESCRIPTION = ("Benchmarks autotrans on each shape against the copy roofline (memcpy and a 16-byte\n"
               "copy kernel) and (unless --no-peers) torch, CuPy and JAX, and prints a markdown table.")
EXAMPLES = ("  autotrans bench 8192x8192 4096x4096\n"
            "  autotrans bench 8192x8192 --dtype float16 --dtype float32 --json bench.json")


def register(sub) -> None:
    sp = add_command(sub, "bench", run, HELP, DESCRIPTION, EXAMPLES)
    sp.add_argument("shapes", nargs="+", type=shape_arg, metavar="SHAPE", help="MxN or BxMxN")
    add_dtype(sp, many=True)
    sp.add_argument("--json", metavar="FILE", help="also write the rows to this JSON file")
    sp.add_argument("--no-peers", action="store_true", help="skip torch, CuPy and JAX")
    add_progress(sp)
    add_cache_dir(sp)


def jsonable(o):
    """json.dumps default= for benchmark rows: NumPy scalars and dtypes, paths."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.dtype):
        return o.name
    if isinstance(o, type) and issubclass(o, np.generic):
        return np.dtype(o).name
    return str(o)


def run(args, seen) -> int:
    try:
        from ..tools.bench import markdown, run as run_bench
    except ImportError as exc:
        raise UserError(f"autotrans.benchmark is not available in this installation ({exc})") from None
    target = output_file(args.json, args.cache_dir, "write the rows to") if args.json else None
    need_gpu("bench")
    dtypes = args.dtype or [np.dtype(np.float32)]
    cases = [(shape, dt) for dt in dtypes for shape in args.shapes]
    kwargs = {"peers": not args.no_peers}
    if args.no_progress:
        kwargs["progress"] = False
    rows = run_bench(cases, **kwargs)
    print(markdown(rows))
    if args.json:
        atomic_write(target, (json.dumps(rows, indent=1, default=jsonable) + "\n").encode())
        note(f"wrote {len(rows)} rows to {args.json}")
    return 0
