"""backend/driver.py's parameter blocks: a launcher packs the fixed tail once
and each call only its leading arguments; the bytes must be what packing all
of them at once gives (checked without a GPU: no driver call is made)."""
import ctypes
import struct

import pytest

from autotrans.backend import driver
from autotrans.kernels.templates import ARGS, STRIDED_ARGS


@pytest.mark.parametrize("args", [ARGS, STRIDED_ARGS, struct.Struct("PiqHP")], ids=["dense", "strided", "mixed"])
@pytest.mark.parametrize("lead", [0, 1, 2])
def test_tail_packed_once_then_lead_gives_the_whole_block(args, lead):
    n = driver._fields(args)
    values = [0x7F00_0000_1000 + 16 * i if code == "P" else i + 3
              for i, code in enumerate(_codes(args))]
    buf, extra, size = driver._scratch(args, tuple(values[lead:]))
    driver._lead(args, lead).pack_into(buf, 0, *values[:lead])
    assert buf.raw == args.pack(*values)
    assert size.value == args.size == len(buf.raw)
    assert extra[1] == ctypes.addressof(buf) and extra[3] == ctypes.addressof(size)
    assert (extra[0], extra[2], extra[4]) == (driver.LAUNCH_PARAM_BUFFER_POINTER, driver.LAUNCH_PARAM_BUFFER_SIZE,
                                              None)
    assert driver._fields(args) == n == len(_codes(args))


def test_lead_keeps_native_offsets():
    mixed = struct.Struct("PiqHP")
    assert driver._lead(mixed, 3).size == struct.calcsize("Piq")
    assert driver._lead(STRIDED_ARGS, 2).format in ("PP", "@PP")
    assert driver._lead(ARGS, 5).size == ARGS.size


def _codes(args: struct.Struct) -> list[str]:
    import re
    return [c for count, c in re.findall(r"(\d*)([a-zA-Z?])", args.format) for _ in range(int(count or 1))]
