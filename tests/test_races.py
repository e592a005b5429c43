"""emulate.races: shared-memory races of a block, from the emulator's trace,
phases grouped by the barriers between them. Real nvcc and the host emulator."""
import dataclasses

import pytest

from autotrans.emulate.banks import block_trace
from autotrans.emulate.races import Race, interval_of, races
from autotrans.kernels.config import KernelConfig
from autotrans.kernels.strided import strided_space

STRIP = KernelConfig.from_key("shift:e2:128x64:t256:v16:r2:p2:xor:col:s4m:strided")


def test_a_strip_issues_the_next_tiles_loads_while_the_current_one_stores():
    assert [interval_of(STRIP, p) for p in range(9)] == [0, 1, 2, 2, 3, 4, 4, 5, 6]
    one = dataclasses.replace(STRIP, strip=1, seam=0)
    assert [interval_of(one, p) for p in range(3)] == [0, 1, 2]


def test_races_are_bytes_two_threads_touch_between_the_same_barriers_one_writing():
    acc = [(0, 0, 0, 16, 4, 1), (0, 1, 0, 16, 4, 0),   # thread 0 writes what thread 1 reads: a race
           (1, 2, 0, 32, 4, 1), (1, 2, 1, 32, 4, 0),   # one thread's own write and read: none
           (2, 3, 0, 48, 4, 0), (2, 4, 0, 48, 4, 0),   # two readers: none
           (0, 5, 0, 64, 4, 1), (1, 6, 0, 64, 4, 1)]   # writes in two intervals: none
    got = races(KernelConfig.from_key("tile:e4:32x32:t256:v4:r1:p1:none:row"), acc)
    assert got == [Race(0, b, (0,), (1,)) for b in range(16, 20)]
    assert "byte 16 written by threads [0], read by [1]" in str(got[0])


@pytest.mark.parametrize("e, cast", [(1, "none"), (2, "none"), (4, "none"), (4, "f32>bf16"), (1, "i8>i32")])
def test_strips_and_seams_of_shift_tiles_do_not_race(e, cast):
    """The first strided shift tile of each element size (and two casts), one
    tile a block, strips of 2 and 8, with seams and without: no byte of shared
    memory two threads touch between the same barriers with one writing (the
    ring copy and the next tile's cp.asyncs in the current tile's store
    interval included); the same trace with every phase in one interval races."""
    base = next(c for c in strided_space(e, cast=cast) if c.variant == "shift")
    cfgs = [base] + [dataclasses.replace(base, strip=k, seam=m) for k in (2, 8) for m in (0, 1)]
    for cfg in cfgs:
        acc = block_trace(cfg)
        assert races(cfg, acc) == [], (cfg.key, races(cfg, acc)[:2])
        assert races(cfg, acc, interval=lambda p: 0), cfg.key


@pytest.mark.parametrize("key", ["vec:e4:64x64:t256:v16:r4:p0:xor:col", "vec:e1:128x128:t256:v16:r4:p0:xor:col",
                                 "shift:e1:128x128:t256:v16:r4:p4:xor:col", "tile:e8:32x32:t256:v8:r1:p1:none:col",
                                 "vec:e4:64x64:t256:v16:r4:p0:xor:col:strided"])
def test_dense_and_one_tile_kernels_do_not_race(key):
    assert races(KernelConfig.from_key(key)) == []


@pytest.mark.exhaustive
@pytest.mark.parametrize("e", [1, 2, 4])
def test_every_strip_and_seam_of_every_shift_tile_does_not_race(e):
    """Strips of 2 and 8 (a strip of 4 runs the same code) of every strided
    shift tile, with seams and without."""
    for base in (c for c in strided_space(e) if c.variant == "shift"):
        for k in (2, 8):
            for m in (0, 1):
                cfg = dataclasses.replace(base, strip=k, seam=m)
                assert races(cfg) == [], cfg.key


def test_a_key_is_checked_as_its_config_and_anything_else_is_refused():
    assert races(STRIP.key) == races(STRIP)
    with pytest.raises(TypeError, match="expected a KernelConfig or its key, not NoneType"):
        races(None)
