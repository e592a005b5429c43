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
    n = len(args.unpack(bytes(args.size)))
    values = [0x1000 + 16 * i for i in range(n)]
    buf, extra, size = driver._scratch(args, tuple(values[lead:]))
    driver._lead(args, lead).pack_into(buf, 0, *values[:lead])
    assert buf.raw == args.pack(*values)
    assert size.value == args.size == len(buf.raw)
    assert extra[1] == ctypes.addressof(buf) and extra[3] == ctypes.addressof(size)
    assert (extra[0], extra[2], extra[4]) == (driver.LAUNCH_PARAM_BUFFER_POINTER, driver.LAUNCH_PARAM_BUFFER_SIZE,
                                              None)
    assert driver._fields(args) == n


def test_lead_keeps_native_offsets():
    mixed = struct.Struct("PiqHP")
    assert driver._lead(mixed, 3).size == struct.calcsize("Piq")
    assert driver._lead(STRIDED_ARGS, 2).format in ("PP", "@PP")
    assert driver._lead(ARGS, 5).size == ARGS.size
    assert driver._lead(struct.Struct("2q3P"), 3).format in ("qqP", "@qqP")

