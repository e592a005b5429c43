import dataclasses

import numpy as np
import pytest

from autotrans.core.problem import ELEM_SIZES, as_bmn, dtype_of_size, elem_size
from autotrans.kernels.config import CLASSIC_NAMES, KernelConfig, classic
from autotrans.tuning.space import default_space


def test_key_is_explicit_and_stable():
    cfg = KernelConfig("vec", 4, 64, 32, 128, 16, 4, 0, "xor", "col")
    assert cfg.key == "vec:e4:64x32:t128:v16:r4:p0:xor:col"
    assert cfg.name == "at_vec_e4_64x32_t128_v16_r4_p0_xor_col"


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_key_and_dict_round_trip_for_whole_space(e):
    for cfg in default_space(e):
        assert KernelConfig.from_key(cfg.key) == cfg
        assert KernelConfig.from_dict(cfg.to_dict()) == cfg
        assert hash(cfg) == hash(KernelConfig.from_key(cfg.key))


def test_config_is_frozen():
    cfg = classic("padded", 4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.pad = 2


def test_vec_bytes_defaults_to_element_size():
    assert KernelConfig("tile", 8, 32, 32, 256).vec_bytes == 8


@pytest.mark.parametrize("kwargs, why", [
    (dict(variant="nope", elem_bytes=4, tile_rows=32, tile_cols=32, threads=256), "variant"),
    (dict(variant="tile", elem_bytes=3, tile_rows=32, tile_cols=32, threads=256), "elem_bytes"),
    (dict(variant="tile", elem_bytes=4, tile_rows=24, tile_cols=32, threads=256), "powers of two"),
    (dict(variant="shift", elem_bytes=2, tile_rows=80, tile_cols=64, threads=128, vec_bytes=16, micro_rows=2,
          pad=2, layout="strided"), "powers of two"),                        # only ndshift's rows may be odd
    (dict(variant="ndshift", elem_bytes=2, tile_rows=80, tile_cols=48, threads=128, vec_bytes=16, micro_rows=2,
          pad=2, layout="strided"), "powers of two"),                        # its columns may not
    (dict(variant="ndshift", elem_bytes=1, tile_rows=72, tile_cols=128, threads=128, vec_bytes=16, micro_rows=4,
          pad=4, layout="strided"), r"whole output vectors \(16 elements\)"),
    (dict(variant="tile", elem_bytes=4, tile_rows=32, tile_cols=32, threads=2048), "threads"),
    (dict(variant="tile", elem_bytes=4, tile_rows=32, tile_cols=32, threads=100), "threads"),
    (dict(variant="naive", elem_bytes=4, tile_rows=8, tile_cols=32, threads=128), "one thread per element"),
    (dict(variant="vec", elem_bytes=4, tile_rows=64, tile_cols=64, threads=256, vec_bytes=2), "vec_bytes"),
    (dict(variant="vec", elem_bytes=1, tile_rows=128, tile_cols=128, threads=256, vec_bytes=16,
          micro_rows=2), "micro_rows"),
    (dict(variant="vec", elem_bytes=4, tile_rows=64, tile_cols=64, threads=256, vec_bytes=16,
          micro_rows=4, pad=1), "pad"),
    (dict(variant="vec", elem_bytes=4, tile_rows=16, tile_cols=16, threads=1024, vec_bytes=16,
          micro_rows=4), "threads must divide"),
    (dict(variant="tile", elem_bytes=4, tile_rows=32, tile_cols=32, threads=256, order="zigzag"), "order"),
    (dict(variant="vec", elem_bytes=4, tile_rows=64, tile_cols=64, threads=256, vec_bytes=32, micro_rows=4),
     r"vec_bytes must be one of \(1, 2, 4, 8, 16\) and micro_rows"),     # 32-byte vectors: rows casts only
    (dict(variant="rows", elem_bytes=4, tile_rows=64, tile_cols=64, threads=256, vec_bytes=32, layout="strided"),
     "rows' 32-byte vectors are for casts only"),
    (dict(variant="tile", elem_bytes=4, tile_rows=32, tile_cols=32, threads=256, swizzle="rot"), "swizzle"),
])
def test_invalid_configs_say_why(kwargs, why):
    with pytest.raises(ValueError, match=why):
        KernelConfig(**kwargs)


@pytest.mark.parametrize("bad", ["vec:e4", "vec:e4:64x32:t256:v16:r4:p0:xor", "x" * 10, ""])
def test_from_key_rejects_junk(bad):
    with pytest.raises(ValueError):
        KernelConfig.from_key(bad)


def test_shared_memory_layouts():
    assert classic("tile", 4).smem_bytes == 32 * 32 * 4
    assert classic("padded", 4).smem_bytes == 32 * 33 * 4
    assert KernelConfig("vec", 2, 64, 32, 128, 16, 2, 8, "none").smem_bytes == 32 * (64 + 8) * 2
    assert classic("naive", 4).smem_bytes == 0


def test_shift_tiles_take_any_alignment_and_read_a_vector_more_rows():
    cfg = KernelConfig.from_key("shift:e1:128x128:t256:v16:r4:p4:none:col")
    assert cfg.key == "shift:e1:128x128:t256:v16:r4:p4:none:col"
    assert cfg.aligned_for((4097, 4095)) and cfg.pointer_align == 1
    # raw rows: 128 + 16 rows of 9 vectors; transposed: 128 rows of 128 + 16 + 4 bytes
    assert cfg.smem_bytes == 144 * 9 * 16 + 128 * 148
    # skewed: each of the 7 later groups of 16 transposed rows starts 20 words later
    skewed = dataclasses.replace(cfg, swizzle="xor")
    assert skewed.smem_bytes == cfg.smem_bytes + 7 * 20 * 4
    vec = KernelConfig.from_key("vec:e1:128x128:t256:v16:r4:p0:xor:col")
    assert vec.pointer_align == 16 and not vec.aligned_for((4097, 4095))


@pytest.mark.parametrize("key, why", [
    ("shift:e4:64x256:t256:v16:r1:p0:xor:col", "32 vectors"),   # 64 vectors per tile row
    ("shift:e4:256x64:t256:v16:r1:p0:xor:col", "32 vectors"),   # 64 vectors per output row
    ("shift:e4:64x64:t256:v4:r1:p0:xor:col", "16-byte vectors"),
    ("shift:e8:64x64:t256:v16:r1:p0:xor:col", "16-byte vectors"),
    ("shift:e1:64x64:t256:v16:r16:p0:xor:col", "one-word chunks"),
    ("shift:e2:64x64:t256:v16:r2:p1:xor:col", "multiple of 4"),
])
def test_shift_limits(key, why):
    with pytest.raises(ValueError, match=why):
        KernelConfig.from_key(key)


def test_blocks_and_alignment():
    cfg = KernelConfig("vec", 4, 64, 32, 128, 16, 4, 0, "xor")
    assert cfg.blocks((3, 65, 33)) == 3 * 2 * 2
    assert cfg.aligned_for((8, 12)) and not cfg.aligned_for((8, 13)) and not cfg.aligned_for((13, 8))
    assert classic("seed", 4).aligned_for((4097, 4095))


@pytest.mark.parametrize("dtype, size", [(np.int8, 1), (np.float16, 2), (np.float32, 4), (np.int64, 8),
                                         (np.complex64, 8), (np.complex128, 16), ("V16", 16), (bool, 1)])
def test_elem_size(dtype, size):
    assert elem_size(dtype) == size


@pytest.mark.parametrize("dtype", [object, "V3", "V32", "U3"])
def test_elem_size_rejects_what_cannot_move(dtype):
    with pytest.raises(TypeError):
        elem_size(dtype)


def test_dtype_of_size_and_shapes():
    assert [dtype_of_size(e).itemsize for e in ELEM_SIZES] == list(ELEM_SIZES)
    assert as_bmn((5, 7)) == (1, 5, 7) and as_bmn((2, 5, 7)) == (2, 5, 7)
    with pytest.raises(ValueError):
        as_bmn((5,))


def test_classic_variants_by_name():
    for e in ELEM_SIZES:
        got = {n: classic(n, e) for n in CLASSIC_NAMES}
        assert got["naive"].variant == "naive" and got["remapped"].variant == "remapped"
        assert got["padded"].pad == 1 and got["swizzled"].swizzle == "xor" and got["tile"].pad == 0
        assert got["seed"].threads == 256 and got["seed"].tile_rows == 32
    with pytest.raises(ValueError, match="unknown classic"):
        classic("fastest", 4)


def test_a_fixed_shape_is_part_of_the_key_and_round_trips():
    cfg = KernelConfig.from_key("vec:e4:64x16:t128:v8:r1:p0:xor:col")
    f = cfg.fixed_to((256, 256))
    assert f.key == "vec:e4:64x16:t128:v8:r1:p0:xor:col@1x256x256" and f.fixed_shape == (1, 256, 256)
    assert KernelConfig.from_key(f.key) == f and KernelConfig.from_dict(f.to_dict()) == f
    assert f.to_dict()["fixed"] == "1x256x256" and "fixed" not in cfg.to_dict()
    assert f.name != cfg.name and f.name.isidentifier()
    assert f.generic() == cfg and cfg.generic() is cfg and cfg.fixed_shape is None
    assert f.fixed_to((3, 8, 16)).fixed == "3x8x16"


@pytest.mark.parametrize("key, why", [
    ("vec:e4:64x16:t128:v8:r1:p0:xor:col@0x256x256", "fixed must be '' or a shape 'BxMxN'"),
    ("vec:e4:64x16:t128:v8:r1:p0:xor:col@1x0256x256", "fixed must be '' or a shape 'BxMxN'"),
    ("vec:e4:64x16:t128:v8:r1:p0:xor:col@1x256x257", "not 8-byte aligned"),
    ("tile:e4:32x32:t256:v4:r1:p1:none:row:strided@1x64x64", "a strided config's fixed must be a launch's"),
    ("vec:e4:64x16:t128:v8:r1:p0:xor:col@1.64.64.0.0.4.0", "fixed must be '' or a shape 'BxMxN'"),
    ("naive:e1:8x32:t256:v1:r1:p0:none:row@1x1x" + "9" * 12, "needs"),
])
def test_a_fixed_shape_that_cannot_run_is_refused(key, why):
    with pytest.raises(ValueError, match=why):
        KernelConfig.from_key(key)
    with pytest.raises(ValueError, match="not a KernelConfig key"):
        KernelConfig.from_key("vec:e4:64x16:t128:v8:r1:p0:xor:col@1x256")
    with pytest.raises(ValueError, match="fixed must be"):
        KernelConfig("tile", 4, 32, 32, 256, fixed="256x256")


FLAT = "flat:e2:4x16:t128:v16:r1:p0:none:row:strided"


def test_a_strided_config_compiled_for_one_launch_keeps_its_values_in_the_key():
    cfg = KernelConfig.from_key(FLAT)
    args = (1, 6, 67, 0, 0, 2, 2, 3, 2, 1, 1, 1, 1, 1, -134, 2144, 0, 0, 0, 0, 0, 4020, 134, 0, 0, 0, 0, 0)
    f = cfg.fixed_to_args(args)
    assert f.key == FLAT + "@1.6.67.0.0.2.2.2.3.2.n134.2144.4020.134" and f.fixed_args == args
    assert KernelConfig.from_key(f.key) == f and KernelConfig.from_dict(f.to_dict()) == f
    assert f.fixed_shape is None and f.generic() == cfg and cfg.fixed_args is None
    assert f.name.isidentifier() and f.name != cfg.name
    none = cfg.fixed_to_args((1, 5, 3, 0, 0, 2, 0) + (1,) * 7 + (0,) * 14)   # no dimensions
    assert none.key.endswith("@1.5.3.0.0.2.0.0") and none.fixed_args[7:] == (1,) * 7 + (0,) * 14
    nd = (1, 6, 67, 0, 0, 2, 1, 3, 1, 5, 1, 1, 1, 258, 2, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0)
    assert cfg.fixed_to_args(nd).fixed == "1.6.67.0.0.2.1.7.3.1.5.1.1.1.258.2.0.0.0.0.0.0.0.7.0.0.0.0.0"   # slots past nb
    assert cfg.fixed_to_args(nd).fixed_args == nd


@pytest.mark.parametrize("args", [(1, 6, 67, 0, 0, 2, 2), (1, 6, 67, 0, 0, 2, 1) + (1,) * 7 + (0,) * 15])
def test_values_that_are_no_launch_are_refused(args):
    with pytest.raises(ValueError, match="not the at::StridedArgs values of a launch"):
        KernelConfig.from_key(FLAT).fixed_to_args(args)


@pytest.mark.parametrize("fixed", ["1.6.67.0.0.2.1.1.3.2", "1.6.67.0.0.2.1.1.3.2.4.5", "0.6.67.0.0.2.1.1.3.2.4",
                                   "1.6.67.0.0.2.1.1.0.2.4", "1.6.67.0.0.2.1.1.3.02.4", "1.6.67.0.0.2.1.1.3.n0.4",
                                   "1.6.67.0.0.2.8.0", "1.6.67.0.0.2.1.8" + ".1" * 8 + ".0" * 16,
                                   "1.6.67.0.0.2.1.2.3.1.2.0.4.0",      # a last slot kept that is unused
                                   "1..6", "1.6.67.0.0.2.1.1.3.2.4."])
def test_a_strided_fixed_value_list_that_is_no_launch_is_refused(fixed):
    with pytest.raises(ValueError, match="a strided config's fixed must be a launch's"):
        KernelConfig.from_key(f"{FLAT}@{fixed}")


def test_a_strip_follows_the_order_in_the_key_and_round_trips():
    cfg = KernelConfig.from_key("shift:e4:64x32:t256:v16:r1:p1:none:col:strided:f32>bf16")
    s = dataclasses.replace(cfg, strip=4)
    assert s.key == "shift:e4:64x32:t256:v16:r1:p1:none:col:s4:strided:f32>bf16"
    assert KernelConfig.from_key(s.key) == s and KernelConfig.from_dict(s.to_dict()) == s
    assert s.to_dict()["strip"] == 4 and "strip" not in cfg.to_dict() and cfg.strip == 1
    assert s.name != cfg.name and s.name.isidentifier()
    # a strip is one launch block: blocks = B x row tiles x ceil(column tiles / strip)
    assert s.blocks((2, 65, 33 * 9)) == 2 * 2 * 3 and cfg.blocks((2, 65, 33 * 9)) == 2 * 2 * 10
    # raw rows start at a sector: 16 more bytes a raw row than the one-tile config's
    assert s.smem_bytes == cfg.smem_bytes + (64 + 8) * 16


@pytest.mark.parametrize("key, why", [
    ("shift:e1:128x128:t256:v16:r4:p4:xor:col:s3:strided", "power of two up to 16"),
    ("shift:e1:128x128:t256:v16:r4:p4:xor:col:s32:strided", "power of two up to 16"),
    ("shift:e1:128x128:t256:v16:r4:p4:xor:col:s2", "strips of tiles are for strided kernels"),
    ("vec:e4:64x64:t256:v16:r4:p0:xor:col:s2:strided", "vec kernels move one tile a block"),
    ("shift:e1:128x128:t256:v16:r4:p4:xor:col:s1:strided", "strip 1 not at all"),
    ("shift:e1:128x128:t256:v16:r4:p4:xor:col:s04:strided", "without leading zeros"),
    ("shift:e1:128x128:t256:v16:r4:p4:xor:col:s004:strided", "without leading zeros"),
])
def test_a_strip_that_cannot_be_is_refused(key, why):
    with pytest.raises(ValueError, match=why):
        KernelConfig.from_key(key)


def test_seams_mark_the_strip_in_the_key_and_round_trip():
    """KernelConfig.seam: ``m`` after the strip (``:s8m``); in to_dict only when set."""
    cfg = KernelConfig.from_key("shift:e4:64x32:t256:v16:r1:p1:none:col:s4:strided:f32>bf16")
    s = dataclasses.replace(cfg, seam=1)
    assert s.key == "shift:e4:64x32:t256:v16:r1:p1:none:col:s4m:strided:f32>bf16"
    assert KernelConfig.from_key(s.key) == s and KernelConfig.from_dict(s.to_dict()) == s
    assert s.to_dict()["seam"] == 1 and "seam" not in cfg.to_dict() and cfg.seam == 0
    assert s.name != cfg.name and s.name.isidentifier() and s.blocks((2, 65, 297)) == cfg.blocks((2, 65, 297))
    # the previous matrix's last out_vec_elems (8) rows: raw rows, and 8 more elements a transposed row
    raw = (64 + 8 + 8) * (32 * 4 + 32)
    assert s.smem_bytes == raw + 32 * (8 + 64 + 8 + 1) * 4 and cfg.smem_bytes == raw - 8 * (32 * 4 + 32) + 32 * 73 * 4


@pytest.mark.parametrize("key, why", [
    ("shift:e1:128x128:t256:v16:r4:p4:xor:col:s1m:strided", "strip 1 not at all"),
    ("shift:e1:128x128:t256:v16:r4:p4:xor:col:sm:strided", "layout must be one of"),
    ("shift:e1:128x128:t256:v16:r4:p4:xor:col:s2mm:strided", "not a KernelConfig key"),
    ("shift:e1:128x128:t256:v16:r4:p4:xor:col:s2m", "strips of tiles are for strided kernels"),
])
def test_seams_that_cannot_be_are_refused(key, why):
    with pytest.raises(ValueError, match=why):
        KernelConfig.from_key(key)
    shift = KernelConfig.from_key("shift:e1:128x128:t256:v16:r4:p4:xor:col:strided")
    with pytest.raises(ValueError, match="seams are written by strips of tiles"):
        dataclasses.replace(shift, seam=1)
    with pytest.raises(ValueError, match="seam must be 0 or 1"):
        dataclasses.replace(shift, strip=2, seam=2)
    tile = KernelConfig.from_key("tile:e4:32x32:t256:v4:r1:p1:none:row:strided")
    with pytest.raises(ValueError, match="tile kernels write no seams"):
        dataclasses.replace(tile, seam=1)


def test_as_config_takes_a_config_or_its_key_only():
    from autotrans.kernels.config import as_config
    cfg = classic("tile", 4)
    assert as_config(cfg) is cfg and as_config(cfg.key) == cfg
    with pytest.raises(TypeError, match="expected a KernelConfig or its key, not NoneType"):
        as_config(None)
    with pytest.raises(ValueError, match="not a KernelConfig key"):
        as_config("tile")
