"""``autotrans explain``: which kernel transpose() (or, with --axes, permute())
would use for a shape, and why."""
from __future__ import annotations

from ..core import layout
from ..core.problem import format_shape
from .common import UserError, add_cache_dir, add_command, add_dtype, printable
from .permutation import axes_arg, describe, shape_arg

HELP = "say which kernel transpose() or permute() would use for a shape, and why"
DESCRIPTION = (
    "Prints the config transpose() would pick for a shape and dtype (tuned for this shape,\n"
    "shipped, nearest tuned shape, or the default) and the reason. With --axes, the\n"
    "permutation numpy.transpose(x, AXES) of a C-contiguous x of SHAPE: its canonical\n"
    "problem, then what permute() runs for it (a copy, transpose()'s kernel, or a strided\n"
    "config: tuned for the problem, shipped, the nearest tuned problem's, or the untuned\n"
    "rule's). Without a GPU, name the device with --fingerprint.")
EXAMPLES = ("  autotrans explain 8192x8192\n"
            "  autotrans explain 4096x4096 --dtype float16 "
            "--fingerprint 'NVIDIA H200|sm_90|132sm|driver 580.95.05|cuda 13.0'\n"
            "  autotrans explain 64x512x16x64 --axes 0,2,1,3 --dtype float16\n"
            "  autotrans explain 300x400x500 --axes 2,1,0 --dtype complex64 --conj\n"
            "  autotrans explain 8192x8192 --axes 1,0 --to bfloat16")


def register(sub) -> None:
    sp = add_command(sub, "explain", run, HELP, DESCRIPTION, EXAMPLES)
    sp.add_argument("shape", type=shape_arg, metavar="SHAPE", help="MxN or BxMxN (with --axes: 1 to 8 dimensions)")
    sp.add_argument("--axes", type=axes_arg, metavar="0,2,1,...",
                    help="explain permute(x, AXES) of a C-contiguous array of SHAPE")
    sp.add_argument("--conj", action="store_true", help="with --axes: permute(..., conj=True)")
    sp.add_argument("--to", metavar="DTYPE", help="with --axes: permute(..., dtype=DTYPE), a cast in the same pass")
    add_dtype(sp)
    sp.add_argument("--fingerprint", metavar="TEXT",
                    help="device fingerprint to ask about (needed without a GPU)")
    add_cache_dir(sp)

    def check(args):
        if args.axes is None:
            if args.shape.problem:
                sp.error(f"argument SHAPE: {args.shape.problem}")
            if args.conj or args.to is not None:
                sp.error("--conj and --to need --axes")
            return
        e = args.dtype.itemsize
        try:
            layout.canonical(tuple(args.shape), layout.c_strides(args.shape, e), e, args.axes)
            if args.to is not None and args.to != args.dtype.name:   # its own dtype: no cast, as permute()
                from ..kernels.config import cast_for
                cast_for(args.dtype.name, args.to)
        except ValueError as exc:
            sp.error(f"--axes {','.join(map(str, args.axes))} of {'x'.join(map(str, args.shape))}"
                     f"{'' if args.to is None else ' --to ' + args.to}: {exc}")

    sp.set_defaults(check=check)


def run(args, seen) -> int:
    from ..api import explain
    from ..backend.cuda import GPUUnavailable

    try:
        choice = explain(tuple(args.shape), args.dtype, axes=args.axes, conj=args.conj, to=args.to,
                         fingerprint=args.fingerprint, cache_dir=args.cache_dir)
    except GPUUnavailable as exc:
        raise UserError(f"no GPU to ask ({exc}); pass --fingerprint 'NAME|sm_XX|NNsm|driver D|cuda C' "
                        "to explain the choice for another device") from None
    if args.axes is not None:
        return _permutation(args, choice)
    print(printable(f"{format_shape(args.shape)} {args.dtype.name}: {choice}"))
    if choice.entry is not None:
        print(printable(f"  from: {format_shape(choice.entry.shape)} on {choice.entry.device}"))
    return 0


def _permutation(args, choice) -> int:
    conj = (" conj" if args.conj else "") + ("" if args.to is None else f" to {args.to}")
    print(printable(f"{'x'.join(map(str, args.shape))} {args.dtype.name} axes {','.join(map(str, args.axes))}{conj}: "
                    f"{describe(choice.problem)}"))
    print(printable(f"  runs: {choice}"))
    entry = getattr(choice.transpose, "entry", None)
    if entry is not None:
        print(printable(f"  from: {format_shape(entry.shape)} on {entry.device}"))
    return 0
