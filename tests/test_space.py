import dataclasses

import pytest

from autotrans.kernels.config import ELEM_SIZES, KernelConfig
from autotrans.tuning.space import (Limits, candidates, default_config, default_space, fit_problems,
                             widest_vector)

H200 = Limits(max_threads=1024, smem_per_block=232448)


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_large_square_has_at_least_100_candidates(e):
    assert len(candidates((8192, 8192), e, H200)) >= 100


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_space_holds_every_variant_and_parameter(e):
    space = default_space(e)
    assert len(set(space)) == len(space)
    assert {c.variant for c in space} == {"naive", "remapped", "tile", "vec", "narrow", "short", "whole"} | \
        ({"shift"} if e <= 4 else set())
    sides = {c.tile_rows for c in space} | {c.tile_cols for c in space}
    assert {8, 16, 32, 64} <= sides
    assert {c.swizzle for c in space} == {"none", "xor"}
    assert {c.order for c in space} >= {"row", "col"}
    assert len({c.pad for c in space}) > 1 and len({c.threads for c in space}) > 2
    assert 16 in {c.vec_bytes for c in space}


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_constraints_apply_before_compiling(e):
    small = Limits(max_threads=256, smem_per_block=16 * 1024)
    for shape in [(8192, 8192), (4097, 4095), (1, 1), (3, 100, 36)]:
        for c in candidates(shape, e, small):
            assert c.threads <= 256 and c.smem_bytes <= 16 * 1024
            assert c.aligned_for(shape)
    assert len(candidates((8192, 8192), e, small)) < len(candidates((8192, 8192), e, H200))


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_shift_tiles_only_where_rows_are_not_16_byte_aligned(e):
    aligned = candidates((4096, 4096), e, H200)
    ragged = candidates((4097, 4095), e, H200)
    assert not any(c.variant == "shift" for c in aligned)
    shifts = [c for c in ragged if c.variant == "shift"]
    assert len(shifts) >= (10 if e <= 4 else 0) and (e <= 4 or not shifts)
    assert all(c.vec_bytes == 16 and c.micro_rows * e == 4 and c.order == "col" for c in shifts)
    # a tile row's and an output row's vectors each fit one warp's lanes
    assert all(2 <= c.tile_cols // c.vec_elems <= 32 and 2 <= c.tile_rows // c.vec_elems <= 32 for c in shifts)


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_band_walk_only_where_input_rows_are_a_multiple_of_128_kib(e):
    n = 128 * 1024 // e                                  # input rows of exactly 128 KiB
    banded = candidates((256, n), e, H200)
    bands = [c for c in banded if c.order == "band"]
    assert bands and all(c.variant == "vec" and c.swizzle == "xor" for c in bands)
    cols = {dataclasses.replace(c, order="band") for c in banded if c.order == "col" and c.variant == "vec"}
    assert len(bands) >= 10 and len(set(bands) & cols) >= 0.9 * len(bands)   # the col tiles, walked in bands
    for shape in [(256, n // 2), (256, n + 16 // e), (n, 256), (8192, 8192) if e < 16 else (4096, 4096)]:
        assert not any(c.order == "band" for c in candidates(shape, e, H200)), shape


def test_fit_problems_name_the_reason():
    cfg = KernelConfig("vec", 4, 256, 256, 1024, 16, 4, 0, "xor", "col")
    assert any("shared memory" in p for p in fit_problems(cfg, (1024, 1024), H200))
    assert any("aligned" in p for p in fit_problems(cfg, (1024, 1023), Limits(smem_per_block=1 << 20)))
    assert any("threads" in p for p in fit_problems(cfg, (1024, 1024), Limits(max_threads=512,
                                                                           smem_per_block=1 << 20)))
    assert fit_problems(cfg, (1024, 1024), Limits(smem_per_block=1 << 20)) == []


def test_widest_vector():
    assert widest_vector((4096, 4096), 4) == 16
    assert widest_vector((4097, 4095), 4) == 4
    assert widest_vector((4097, 4095), 8) == 8
    assert widest_vector((3, 5), 1) == 1
    assert widest_vector((2, 6), 2) == 4


@pytest.mark.parametrize("e", ELEM_SIZES)
@pytest.mark.parametrize("shape", [(8192, 8192), (4097, 4095), (1, 1), (64, 65536), (2, 18, 30)])
def test_default_config_always_runs(e, shape):
    for limits, max_vec in [(H200, 16), (Limits(), 16), (H200, 4), (H200, 1)]:
        cfg = default_config(shape, e, limits, max_vec=max_vec)
        assert fit_problems(cfg, shape, limits) == []
        assert cfg.pointer_align <= max(max_vec, e)


@pytest.mark.parametrize("shape, e, tile", [
    ((8192, 8192), 1, "256x256"), ((4, 4096, 4096), 1, "256x256"), ((4096, 32000), 1, "256x256"),
    ((2048, 16384), 1, "64x128"),        # tiled whole, but 512 blocks
    ((720, 1280), 1, "64x128"), ((65536, 384), 1, "64x128"), ((512, 128, 128), 1, "64x128"),
    ((8192, 8192), 2, "128x128"), ((64, 4096, 128), 2, "128x128"),
    ((96, 1024, 64), 2, "128x64"), ((50000, 1600), 2, "128x64"), ((1024, 1024), 2, "128x64")])
def test_default_vec_tile_is_large_only_where_it_tiles_whole_in_many_blocks(shape, e, tile):
    """1- and 2-byte 16-byte vec defaults: the large tile where it leaves no edge
    tiles and makes at least BIG_TILE_BLOCKS blocks, else the smaller row-walk tile
    (NOTES 55: on 720x1280 int8 the large tile ran at 0.12 of the fastest)."""
    cfg = default_config(shape, e, H200)
    assert (cfg.variant, cfg.vec_bytes, f"{cfg.tile_rows}x{cfg.tile_cols}") == ("vec", 16, tile)
    assert cfg.order == ("col" if tile in ("256x256", "128x128") else "row")
    assert fit_problems(cfg, shape, H200) == []


def test_default_config_takes_shift_tiles_for_unaligned_bytes_and_halves():
    for e, variant in [(1, "shift"), (2, "shift"), (4, "vec"), (8, "vec")]:
        assert default_config((4097, 4095), e, H200).variant == variant
        assert default_config((4096, 4096), e, H200).variant == "vec"
    assert default_config((4096, 4096), 1, H200, max_vec=2).variant == "shift"   # unaligned pointers
    assert default_config((4097, 4095), 2, H200).key == "shift:e2:64x128:t256:v16:r2:p2:xor:col"


@pytest.mark.parametrize("shape, e, want", [
    ((3000, 12, 20), 4, "whole:e4:32x32"), ((4096, 4, 64), 1, "whole:e1:32x128"), ((1000, 16, 8), 8, "whole:e8:32x16"),
    ((5000, 16, 16), 2, "whole:e2:32x64"), ((256, 16, 128), 1, "whole:e1:32x128"),
    ((1, 12, 20), 4, "short"),             # one matrix
    ((1000, 24, 40), 4, "vec"),            # 3840 B: one a block
    ((3000, 20, 30), 1, "short"),          # 600 B: not whole 16-byte vectors
    ((64, 8, 4), 16, "narrow")])           # complex128: no whole default
def test_default_for_a_batch_of_small_matrices_is_a_whole_tile(shape, e, want):
    cfg = default_config(shape, e, H200)
    assert cfg.key.startswith(want) and fit_problems(cfg, shape, H200) == []
    if cfg.variant == "whole":
        assert (cfg.threads, cfg.vec_bytes, cfg.smem_bytes) == (256, 16, 4096)
    assert default_config(shape, e, H200, max_vec=8).variant != "whole"      # pointers not 16-byte aligned
