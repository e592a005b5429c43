"""``autotrans explain``: which kernel transpose() would use for a shape, and why."""
from __future__ import annotations

from ..core.problem import format_shape
from .common import UserError, add_cache_dir, add_command, add_dtype, printable, shape_arg

HELP = "say which kernel transpose() would use for a shape, and why"
DESCRIPTION = (
    "Prints the config transpose() would pick for a shape and dtype (tuned for this shape,\n"
    "shipped, nearest tuned shape, or the default) and the reason. Without a GPU, name the\n"
    "device with --fingerprint.")
EXAMPLES = ("  autotrans explain 8192x8192\n"
            "  autotrans explain 4096x4096 --dtype float16 "
            "--fingerprint 'NVIDIA H200|sm_90|132sm|driver 580.95.05|cuda 13.0'")


def register(sub) -> None:
    sp = add_command(sub, "explain", run, HELP, DESCRIPTION, EXAMPLES)
    sp.add_argument("shape", type=shape_arg, metavar="SHAPE", help="MxN or BxMxN")
    add_dtype(sp)
    sp.add_argument("--fingerprint", metavar="TEXT",
                    help="device fingerprint to ask about (needed without a GPU)")
    add_cache_dir(sp)


def run(args, seen) -> int:
    from ..api import explain
    from ..backend.cuda import GPUUnavailable

    try:
        choice = explain(args.shape, args.dtype, fingerprint=args.fingerprint, cache_dir=args.cache_dir)
    except GPUUnavailable as exc:
        raise UserError(f"no GPU to ask ({exc}); pass --fingerprint 'NAME|sm_XX|NNsm|driver D|cuda C' "
                        "to explain the choice for another device") from None
    print(printable(f"{format_shape(args.shape)} {args.dtype.name}: {choice}"))
    if choice.entry is not None:
        print(printable(f"  from: {format_shape(choice.entry.shape)} on {choice.entry.device}"))
    return 0
