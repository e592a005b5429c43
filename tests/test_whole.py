"""The whole family (cuda_templates/whole.py, whole.cu): batches of small
matrices, several whole matrices a block. Its configs are as documented and
compile without spills, its grid agrees between Python and C++, its template
code run on the host matches NumPy bit for bit on every batch it takes (ragged
last blocks, vectors that span rows and matrices, one-element sides), its
padding spreads the store phase over the banks, and the search space offers
it only where a block holds several matrices."""
import numpy as np
import pytest

from autotrans.build.compile import compile_configs
from autotrans.emulate.emulator import blocks
from autotrans.families import whole
from autotrans.kernels.config import ELEM_SIZES, KernelConfig
from autotrans.tuning.space import Limits, candidates, default_space, fit_problems

from test_emulator import check, random_array   # the emulator's bit-exact check
from test_skinny import phase_ways              # block 0's worst bank conflict per phase


def whole_space(e):
    return [c for c in default_space(e) if c.variant == "whole"]


# -- the space and the config rules ---------------------------------------------

@pytest.mark.parametrize("e", ELEM_SIZES)
def test_space_is_as_documented(e):
    cfgs = whole_space(e)
    assert 10 <= len(cfgs) <= 60
    for c in cfgs:
        assert whole.capacity(c) in whole.CAPACITY and c.smem_bytes == whole.capacity(c)
        assert c.vec_bytes in whole.VEC_SIZES and c.vec_bytes >= e and c.threads in whole.THREADS
        steps = whole.capacity(c) // c.vec_bytes // c.threads
        assert 1 <= steps <= whole.MAX_STEPS[c.vec_bytes]
    assert {c.pad for c in cfgs} == {0, 1}


@pytest.mark.parametrize("key, why", [
    ("whole:e4:32x32:t128:v2:r1:p0:none:row", "vec_bytes must be one of"),
    ("whole:e8:32x16:t128:v4:r1:p0:none:row", ">= elem_bytes"),
    ("whole:e4:32x32:t128:v16:r2:p0:none:row", "micro_rows 1"),
    ("whole:e4:32x32:t128:v16:r1:p2:none:row", "pad 0 or 1"),
    ("whole:e4:32x32:t128:v16:r1:p0:none:col", "order row"),
    ("whole:e1:32x512:t64:v16:r1:p0:none:row", "1 to 8 a thread"),
])
def test_bad_configs_say_why(key, why):
    with pytest.raises(ValueError, match=why.replace("(", r"\(").replace(")", r"\)")):
        KernelConfig.from_key(key)


def test_per_block_and_grid():
    c = KernelConfig.from_key("whole:e4:32x32:t128:v16:r1:p1:none:row")      # 4 KiB
    assert whole.per_block(c, 8, 16) == 4096 // (8 * (64 + 4)) == 7
    assert c.blocks((4096, 8, 16)) == -(-4096 // 7)
    assert c.blocks((5, 33, 33)) == 0 and c.launch_problems((5, 33, 33)) == [
        f"{c.key}: a 33x33 matrix does not fit its blocks"]
    assert c.aligned_for((8, 16)) and not c.aligned_for((3, 5)) and not c.aligned_for((64, 64))
    assert "do not fit" in fit_problems(c, (2, 64, 64))[0]


GRID = [(1, 1, 1), (0, 4, 4), (7, 1, 16), (4096, 8, 16), (5, 33, 33), (3, 1023, 1), (2**40, 2, 2),
        (2, 2**31 + 5, 3 * 2**31 - 1)]


@pytest.mark.parametrize("key", ["whole:e4:32x32:t128:v16:r1:p1:none:row", "whole:e1:32x512:t256:v16:r1:p0:none:row",
                                 "whole:e16:32x32:t256:v16:r1:p1:none:row"])
def test_cpp_grid_agrees_with_python(key):
    cfg = KernelConfig.from_key(key)
    assert blocks(cfg, GRID) == [cfg.blocks(s) for s in GRID]


# -- bit-exact on the host -------------------------------------------------------

SHAPES = [(1, 1, 1), (3, 1, 1), (2, 1, 16), (5, 16, 1), (4096 // 64, 8, 16), (13, 8, 16), (9, 4, 6), (11, 6, 4),
          (7, 2, 2), (10, 7, 8), (6, 32, 32), (5, 3, 16), (17, 5, 5), (3, 12, 20), (4, 33, 33), (2, 45, 90),
          (31, 2, 24), (8, 16, 16)]


def fitting(c):
    return [s for s in SHAPES if whole.per_block(c, s[1], s[2]) >= 1 and c.aligned_for(s[1:])]


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_every_config_matches_numpy(e):
    rng = np.random.default_rng(e)
    items = [(c, random_array(rng, s, e)) for c in whole_space(e) for s in fitting(c)]
    assert len(items) >= 4 * len(whole_space(e))
    check(items)


def test_a_full_capacity_matrix_and_ragged_last_blocks():
    c = KernelConfig.from_key("whole:e2:32x64:t128:v16:r1:p1:none:row")      # 4 KiB, 2-byte elements
    rng = np.random.default_rng(3)
    big = (3, 36, 50)                        # one matrix a block: 36 rows of 100 + 4 bytes
    assert whole.per_block(c, 36, 50) == 1
    items = [(c, random_array(rng, big, 2))] + [(c, random_array(rng, (b, 8, 8), 2)) for b in (1, 15, 16, 17)]
    check(items)


# -- bank conflicts ----------------------------------------------------------------

def test_padding_spreads_the_gather_over_the_banks():
    """(B, 32, 32) 2-byte matrices, 16-byte vectors: each lane gathers 8 rows of
    one column, and the lanes of a warp take 4 column pieces of 8 columns. With
    64-byte rows the lanes of a column meet in one bank (4-way); a word after
    each row moves them 4 banks apart."""
    plain, padded = (KernelConfig.from_key(f"whole:e2:32x128:t256:v16:r1:p{p}:none:row") for p in (0, 1))
    assert phase_ways(plain, (4, 32, 32))[("store", "ld")] == 4
    assert phase_ways(padded, (4, 32, 32))[("store", "ld")] == 1


# -- where the space offers it ------------------------------------------------------

def test_offered_only_where_a_block_holds_several_matrices():
    lim = Limits()
    assert any(c.variant == "whole" for c in candidates((4096, 8, 16), 4, lim))
    assert any(c.variant == "whole" for c in candidates((1024, 32, 32), 2, lim))
    assert not any(c.variant == "whole" for c in candidates((256, 64, 64), 4, lim))   # 16 KiB matrices
    assert not any(c.variant == "whole" for c in candidates((720, 1280), 1, lim))
    for c in candidates((512, 33, 33), 4, lim):
        if c.variant == "whole":
            assert whole.per_block(c, 33, 33) >= whole.MIN_MATRICES and c.vec_bytes == 4


def test_every_whole_config_compiles_without_spills(tmp_path):
    cfgs = [c for e in ELEM_SIZES for c in whole_space(e)]
    out = compile_configs(cfgs, "sm_90", root=tmp_path)
    bad = {k: c.error[-300:] for k, c in out.items() if not c.ok}
    assert not bad, bad
    for key, c in out.items():
        info = c.info
        assert 0 < info["registers"] <= 64, (key, info)
        assert info["spill_stores"] == 0 and info["spill_loads"] == 0 and info["stack"] == 0, (key, info)
