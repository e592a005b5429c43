"""``autotrans banks``: the shared-memory bank conflicts of a config (CPU only)."""
from __future__ import annotations

from .common import UserError, add_command, example_keys, printable

HELP = "print the shared-memory bank conflicts of a config key (CPU only)"
DESCRIPTION = (
    "Runs the kernel's index math on the CPU (nvcc builds a host emulator) and prints every\n"
    "shared-memory access of an interior tile with its n-way bank conflict (a strided config's:\n"
    "one block of two odd matrices whose output rows follow one another, strips and seams included),\n"
    "then any shared-memory races of that block (two threads, one byte, no barrier between).")
EXAMPLES = ("  autotrans banks {tile_key}\n"
            "  autotrans banks {vec_key}")


def register(sub) -> None:
    sp = add_command(sub, "banks", run, HELP, DESCRIPTION, EXAMPLES)
    sp.add_argument("key", metavar="KEY", help=f"config key, e.g. {example_keys()['tile_key']}")


def run(args, seen) -> int:
    from ..emulate.banks import bank_report, block_trace
    from ..emulate.races import races
    from ..kernels.config import KernelConfig

    try:
        cfg = KernelConfig.from_key(args.key)
    except ValueError as exc:
        raise UserError(f"{exc}; keys look like {example_keys()['tile_key']}") from None
    trace = block_trace(cfg)
    accesses = bank_report(cfg, trace)
    found = races(cfg, trace, limit=3)
    print(printable(f"{cfg.key}: {cfg.threads} threads, {cfg.smem_bytes} B shared memory"))
    if not accesses:
        print("  no shared-memory accesses")
        return 0
    for a in accesses:
        print(f"  {a}")
    worst = {}
    for a in accesses:
        worst[a.phase] = max(worst.get(a.phase, 0), a.ways)
    print("worst: " + ", ".join(f"{p} {w}-way" for p, w in worst.items()))
    print("races: " + ("; ".join(map(str, found)) if found else "none (no byte two threads touch between the "
                                                                 "same barriers, one writing)"))
    return 0
