"""``autotrans sectors``: the global-memory sectors a launch touches (CPU only)."""
from __future__ import annotations

from ..core.problem import format_shape
from .common import UserError, add_command, example_keys, printable, shape_arg

HELP = "print the 32-byte global-memory sectors a config's launch touches (CPU only)"
DESCRIPTION = (
    "Runs one whole launch of the kernel's index math on the CPU (nvcc builds a host\n"
    "emulator) and counts its global-memory warp instructions and the 32-byte sectors\n"
    "they touch, loads and stores apart, against the bytes / 32 a perfect pass costs.\n"
    "Where the L2 limits a transpose (rows at odd alignments), the fraction of a copy's\n"
    "speed it reaches is about ideal / sectors. A strided config (a strip of shift tiles)\n"
    "moves the shape as transpose() would run it: as the strided tile problem of its bytes.")
EXAMPLES = ("  autotrans sectors {vec_key} 4096x4096\n"
            "  autotrans sectors shift:e1:128x128:t256:v16:r4:p4:none:col 4097x4095\n"
            "  autotrans sectors shift:e1:128x128:t256:v16:r4:p4:none:col:s4:strided 4097x4095")


def register(sub) -> None:
    sp = add_command(sub, "sectors", run, HELP, DESCRIPTION, EXAMPLES)
    sp.add_argument("key", metavar="KEY", help=f"config key, e.g. {example_keys()['vec_key']}")
    sp.add_argument("shape", type=shape_arg, metavar="SHAPE", help="MxN or BxMxN")
    sp.add_argument("--offset", type=int, default=0, metavar="BYTES",
                    help="bytes by which both pointers miss 256-byte alignment (default: 0)")


def run(args, seen) -> int:
    from ..emulate.sectors import sectors
    from ..kernels.config import KernelConfig

    try:
        cfg = KernelConfig.from_key(args.key)
    except ValueError as exc:
        raise UserError(f"{exc}; keys look like {example_keys()['vec_key']}") from None
    if not 0 <= args.offset < 256 or args.offset % cfg.pointer_align:
        raise UserError(f"--offset {args.offset}: must be in [0, 256) and a multiple of {cfg.key}'s "
                        f"pointer alignment ({cfg.pointer_align} B)")
    try:
        s = sectors(cfg, args.shape, args.offset)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    print(printable(f"{cfg.key} on {format_shape(args.shape)}: {s.nbytes} bytes, ideal {s.ideal} sectors "
                    f"each way"))
    print(f"  loads  {s.load_insts:>10} instructions {s.load_sectors:>11} sectors  {s.read_ratio:.3f} x ideal")
    print(f"  stores {s.store_insts:>10} instructions {s.store_sectors:>11} sectors  {s.write_ratio:.3f} x ideal")
    print(f"  both ways {s.ratio:.3f} x ideal: an L2-bound launch reaches about {1 / s.ratio:.2f} of a copy")
    return 0
