"""Global-memory sectors from the emulator (autotrans.emulate.sectors): real
nvcc, the templates' own index math run on the host, counted by hand."""
import math

import pytest

from autotrans.emulate.sectors import SECTOR, sectors
from autotrans.kernels.config import KernelConfig, classic


def test_an_aligned_vector_tile_touches_each_sector_once_each_way():
    cfg = KernelConfig("vec", 4, 64, 64, 256, 16, 4, 0, "xor", "col")
    s = sectors(cfg, (512, 256))
    assert s.nbytes == 512 * 256 * 4 and s.ideal == s.nbytes // SECTOR
    assert (s.load_sectors, s.store_sectors) == (s.ideal, s.ideal) and s.ratio == 1.0
    assert s.load_bytes == s.store_bytes == s.nbytes
    # 16-byte accesses: a warp instruction moves 512 bytes
    assert s.load_insts == s.store_insts == s.nbytes // 512


def test_lanes_that_sit_out_an_access_still_pair_with_their_warp():
    """An aligned shift tile's lanes skip the spare raw vector of each row (no
    shift to make up): their later loads must still count in the same warp
    instructions as their neighbours' (at::idle_g), so the loads cost the tile's
    TR + K rows plus at most one sector split per instruction, not the 1.28x
    ideal that pairing lanes by their own access counts gave."""
    cfg = KernelConfig.from_key("shift:e4:128x32:t256:v16:r1:p1:none:col")
    s = sectors(cfg, (1024, 768))
    rows = cfg.tile_rows + cfg.vec_bytes // cfg.elem_bytes
    assert s.load_bytes == s.nbytes * rows // cfg.tile_rows
    assert s.ideal * rows // cfg.tile_rows <= s.load_sectors <= s.ideal * rows // cfg.tile_rows + s.load_insts
    assert s.store_sectors == s.ideal


def test_the_naive_kernel_writes_a_sector_per_element():
    """naive: consecutive threads read along an input row (coalesced) and write
    down an output column, each 4-byte store in a sector of its own."""
    s = sectors(classic("naive", 4), (256, 256))
    assert s.read_ratio == 1.0 and s.write_ratio == SECTOR / 4
    assert "8.000 x ideal" in str(s)


def test_odd_rows_cost_the_sectors_their_span_touches():
    """A 1 x N int8 matrix of one tile row is read as it is: one row of
    TC bytes at offset 0 spans ceil(TC / 32) sectors; at an odd pointer
    offset one more, as the span then straddles a sector boundary."""
    cfg = KernelConfig("shift", 1, 128, 128, 256, 16, 4, 4, "none", "col")
    shape = (3 * 128 + 1, 2 * 128 + 1)          # odd both ways: shift tiles, overlapping last tiles
    s0 = sectors(cfg, shape)
    s5 = sectors(cfg, shape, offset=5)
    assert s0.nbytes == s5.nbytes and s0.load_bytes > s0.nbytes    # the tile's K extra rows, the overlap
    assert s0.read_ratio > 1.25 and s0.write_ratio > 1.0
    assert s5.load_sectors != s0.load_sectors or s5.store_sectors != s0.store_sectors
    # every access is accounted for: a sector holds 32 bytes, so no fewer than bytes / 32
    for s in (s0, s5):
        assert s.load_sectors >= math.ceil(s.load_bytes / SECTOR) and s.store_sectors >= math.ceil(s.store_bytes / 32)


def test_wider_odd_tiles_touch_fewer_sectors_per_byte():
    """What limits the odd int8 shapes (NOTES 33): a 128x256 shift tile shares
    fewer boundary sectors per byte than a 64x128 one."""
    shape = (1025, 1023)
    small = sectors(KernelConfig("shift", 1, 64, 128, 256, 16, 4, 4, "none", "col"), shape)
    wide = sectors(KernelConfig("shift", 1, 128, 256, 512, 16, 4, 4, "none", "col"), shape)
    assert wide.ratio < small.ratio


@pytest.mark.parametrize("cfg, shape, why", [
    (KernelConfig("vec", 4, 64, 64, 256, 16, 4, 0, "xor", "col"), (1001, 1000), "aligned to 16 bytes"),
    (KernelConfig("vec", 4, 64, 64, 256, 16, 4, 0, "xor", "col").fixed_to((512, 512)), (512, 1024),
     "compiled for the shape 1x512x512 only"),
    (KernelConfig("vec", 4, 64, 64, 256, 16, 4, 0, "xor", "col", layout="strided"), (1001, 1000),
     "cannot transpose 1x1001x1000"),
])
def test_configs_that_cannot_run_the_shape_are_refused(cfg, shape, why):
    with pytest.raises(ValueError, match=why):
        sectors(cfg, shape)


def _strided(shape, axes, e, out=None):
    from autotrans.api.permute import as_strided
    from autotrans.core import layout
    problem = layout.canonical(shape, layout.c_strides(shape, e), e, axes, 16, out_itemsize=out)
    return as_strided(problem, 16, "none" if out is None else {(4, 2): "f32>bf16"}[(e, out)])


def test_rows_of_whole_sectors_move_each_sector_once():
    """(B, S, H, D) -> (B, H, S, D) with 128-byte rows: the rows family copies whole sectors."""
    from autotrans.emulate.sectors import strided_sectors
    problem = _strided((2, 64, 4, 64), (0, 2, 1, 3), 2)
    s = strided_sectors(KernelConfig.from_key("rows:e16:128x8:t256:v16:r1:p0:none:row:strided"), problem)
    assert s.nbytes == 2 * 64 * 4 * 64 * 2 and (s.read_ratio, s.write_ratio) == (1.0, 1.0)


def test_a_cast_counts_the_output_against_its_own_bytes():
    from autotrans.emulate.sectors import strided_sectors
    problem = _strided((256, 256), (1, 0), 4, out=2)
    s = strided_sectors(KernelConfig.from_key("vec:e4:64x64:t256:v16:r4:p0:xor:col:strided:f32>bf16"), problem)
    assert (s.nbytes, s.out_nbytes) == (256 * 256 * 4, 256 * 256 * 2)
    assert s.store_bytes == s.out_nbytes and (s.read_ratio, s.write_ratio) == (1.0, 1.0)


def test_an_odd_3d_order_costs_more_sectors_than_bytes():
    """(2, 1, 0) of an odd int8 cube, as fused tiles (ndtile) of 1-byte
    accesses: rows of 31 and 65 bytes at odd offsets span more sectors than
    their bytes fill, so each side costs more than bytes / 32."""
    from autotrans.core.layout import NdTileProblem
    from autotrans.emulate.sectors import strided_sectors
    problem = _strided((33, 65, 31), (2, 1, 0), 1)
    assert isinstance(problem, NdTileProblem)
    s = strided_sectors(KernelConfig.from_key("ndtile:e1:32x32:t256:v1:r1:p4:none:row:strided"), problem)
    assert s.nbytes == 33 * 65 * 31 and s.load_bytes == s.store_bytes == s.nbytes
    assert s.read_ratio > 1.0 and s.write_ratio > 1.0


def test_a_strip_reads_no_sector_of_a_row_twice():
    """Shift tiles side by side on odd rows both read the sector their row
    segments share; a strip of them (KernelConfig.strip) moves it from one
    tile's raw row to the next in shared memory: on 1027-byte rows of 64-byte
    tile segments the loads fall from about 1.5x ideal towards the tile's
    (TR + K) / TR, more so the longer the strip, and stores do not change.
    On sector-aligned rows there was no shared sector to save."""
    import dataclasses

    from autotrans.core.layout import TileProblem
    from autotrans.emulate.sectors import strided_sectors
    one = KernelConfig.from_key("shift:e1:128x64:t128:v16:r4:p4:none:col:strided")
    rows = (one.tile_rows + 16) / one.tile_rows
    odd = TileProblem(1, 128, 1024, 1027, 128, 1, ())
    s1, s2, s4 = (strided_sectors(dataclasses.replace(one, strip=k), odd) for k in (1, 2, 4))
    assert min(s.load_bytes for s in (s1, s2, s4)) >= s1.nbytes * rows   # each tile's TR + K rows
    assert s1.read_ratio > 1.5 > 1.3 > s2.read_ratio > 1.2 > s4.read_ratio > rows
    assert s1.store_sectors == s2.store_sectors == s4.store_sectors
    aligned = TileProblem(1, 128, 1024, 1024, 128, 1, ())
    a1, a4 = (strided_sectors(dataclasses.replace(one, strip=k), aligned) for k in (1, 4))
    assert a4.load_sectors <= a1.load_sectors <= a1.ideal * rows


def test_seams_write_the_vector_two_rows_share_in_one_store():
    """The (2, 1, 0) order of an odd int8 shape: 511-byte output rows follow one
    another along the batch axis, and each row's first and last bytes went out
    in pieces (1-, 2-, 4- and 8-byte stores, each a sector of its own: a
    quarter more store sectors than the output's). With seams (KernelConfig.seam)
    the top tile writes the vector two rows share whole: stores fall to
    within 10% of the output's, for a few more load sectors (the previous
    matrix's last 16 rows of each top tile), and the bound rises."""
    import dataclasses

    from autotrans.core.layout import Dim, TileProblem
    from autotrans.emulate.sectors import strided_sectors
    strip = KernelConfig.from_key("shift:e1:256x64:t256:v16:r4:p4:none:col:s8:strided")
    order = TileProblem(1, 511, 257, 257 * 24, 511 * 24, 1, (Dim(24, 257, 511),))   # (511, 24, 257) (2, 1, 0)
    a, b = (strided_sectors(dataclasses.replace(strip, seam=m), order) for m in (0, 1))
    assert a.write_ratio > 1.25 and b.write_ratio < 1.1
    assert a.load_sectors < b.load_sectors < a.load_sectors * 1.06
    assert b.ratio < a.ratio - 0.07
    # output rows that do not follow one another along a batch axis (a dense 2-D shape): no seams
    dense = TileProblem(1, 511, 257, 257, 511, 1, ())
    c, d = (strided_sectors(dataclasses.replace(strip, seam=m), dense) for m in (0, 1))
    assert (c.load_sectors, c.store_sectors) == (d.load_sectors, d.store_sectors)


def test_a_strided_config_counts_a_dense_shape_as_transpose_runs_it():
    """sectors() of a strided config on a dense shape: its dense_tile (what a
    dense record holding it launches). A strip of shift tiles on odd rows
    reads fewer sectors than the dense shift tile of the same geometry (whose
    last tiles overlap and whose tiles read their shared sectors twice); one
    that cannot run the shape, or an offset, is refused."""
    from autotrans.emulate.sectors import sectors
    dense = KernelConfig.from_key("shift:e2:64x64:t256:v16:r2:p2:none:col")
    strip = KernelConfig.from_key("shift:e2:64x64:t256:v16:r2:p2:none:col:s4:strided")
    a, b = sectors(dense, (517, 1029)), sectors(strip, (517, 1029))
    assert a.nbytes == b.nbytes == 517 * 1029 * 2
    assert b.load_sectors < a.load_sectors * 0.9 and b.ratio < a.ratio
    with pytest.raises(ValueError, match="at offset 0 only"):
        sectors(strip, (517, 1029), 2)
    vec = KernelConfig.from_key("vec:e2:64x64:t256:v16:r2:p0:xor:col:strided")
    with pytest.raises(ValueError, match="cannot transpose 1x517x1029"):
        sectors(vec, (517, 1029))


def test_a_key_counts_as_its_config_and_anything_else_is_refused():
    cfg = classic("tile", 4)
    assert sectors(cfg.key, (64, 96)) == sectors(cfg, (64, 96))
    with pytest.raises(TypeError, match="expected a KernelConfig or its key, not NoneType"):
        sectors(None, (64, 96))
