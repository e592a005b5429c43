import pytest

from autotrans.config import ELEM_SIZES, KernelConfig
from autotrans.space import (Limits, candidates, default_config, default_space, fit_problems,
                             widest_vector)

H200 = Limits(max_threads=1024, smem_per_block=232448)


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_large_square_has_at_least_100_candidates(e):
    assert len(candidates((8192, 8192), e, H200)) >= 100


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_space_holds_every_variant_and_parameter(e):
    space = default_space(e)
    assert len(set(space)) == len(space)
    assert {c.variant for c in space} == {"naive", "remapped", "tile", "vec"}
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
        assert cfg.vec_bytes <= max(max_vec, e)
