import dataclasses

import pytest

from autotrans.emulate.banks import bank_report, group_ways, warp_ways, worst_ways
from autotrans.kernels.config import ELEM_SIZES, KernelConfig, classic


def test_group_ways_counts_distinct_words_per_bank():
    assert group_ways([(4 * i, 4) for i in range(32)]) == 1            # one word per bank
    assert group_ways([(128 * i, 4) for i in range(32)]) == 32         # all in bank 0
    assert group_ways([(0, 4)] * 32) == 1                              # broadcast
    assert group_ways([(0, 4), (128, 4), (4, 4)]) == 2
    assert group_ways([(i, 1) for i in range(32)]) == 1                # bytes of 8 words


def test_wide_accesses_are_served_in_thread_groups():
    # 16-byte accesses: 8 threads per 128-byte wavefront; consecutive chunks are free.
    assert warp_ways([(16 * i, 16) for i in range(32)]) == 1
    assert warp_ways([(256 * i, 16) for i in range(32)]) == 8


def test_classic_tiles():
    unpadded = worst_ways(classic("tile", 4))
    assert unpadded == {"load": 1, "store": 32}   # the transposed read of a 32x32 tile
    assert worst_ways(classic("padded", 4)) == {"load": 1, "store": 1}
    assert worst_ways(classic("swizzled", 4)) == {"load": 1, "store": 1}
    assert worst_ways(classic("naive", 4)) == {}


@pytest.mark.parametrize("e, tile, threads, micro", [(1, 128, 128, 4), (2, 64, 256, 2), (4, 64, 256, 4),
                                                    (8, 64, 256, 2), (16, 64, 256, 1)])
def test_chunk_swizzle_clears_conflicts_of_every_element_size(e, tile, threads, micro):
    assert max(worst_ways(classic("swizzled", e)).values()) == 1
    cfg = KernelConfig("vec", e, tile, tile, threads, 16, micro, 0, "xor", "col")
    assert worst_ways(cfg) == {"load": 1, "store": 1}
    plain = KernelConfig("vec", e, tile, tile, threads, 16, micro, 0, "none", "col")
    assert worst_ways(plain)["load"] > 1


def test_report_lists_every_access():
    cfg = KernelConfig("vec", 4, 64, 64, 256, 16, 4, 0, "xor", "col")
    rep = bank_report(cfg)
    loads = [a for a in rep if a.phase == "load"]
    assert len(loads) == 4 and all(a.op == "st.shared" and a.bytes == 16 for a in loads)
    assert [a.op for a in rep if a.phase == "store"] == ["ld.shared"] * 4
    assert "1-way" in str(rep[0])


@pytest.mark.parametrize("e, tr, tc", [(1, 128, 64), (1, 64, 256), (2, 64, 128), (4, 64, 64), (4, 32, 128)])
def test_shift_skew_spreads_the_mid_phase_chunk_stores(e, tr, tc):
    skewed = KernelConfig("shift", e, tr, tc, 256, 16, 4 // e, 4 // e, "xor", "col")
    plain = dataclasses.replace(skewed, swizzle="none")

    def worst(cfg, phase, op):
        return max(a.ways for a in bank_report(cfg) if a.phase == phase and a.op == op)
    assert worst(skewed, "mid", "st.shared") == 1 and worst(plain, "mid", "st.shared") > 1


def test_strided_configs_are_traced_on_their_bank_problem():
    """A strided config's report traces one block of bank_problem (the second
    matrix's first, so a strip's tiles and seams run): the shift skew spreads
    the mid phase's chunk stores there too, the strip's ring copy and the
    seams' rows add no worse conflict than the strip's own, and families of
    other problems are refused with the reason."""
    from autotrans.emulate.banks import bank_problem
    one = KernelConfig.from_key("shift:e2:128x64:t256:v16:r2:p2:xor:col:strided")
    strip, seam = dataclasses.replace(one, strip=4), dataclasses.replace(one, strip=4, seam=1)
    p = bank_problem(seam)
    assert (p.m, p.n) == (257, 513) and p.batch[0].dst == p.m * 2 and p.ldi % 16
    reports = [bank_report(c) for c in (one, strip, seam)]
    for rep in reports:
        assert max(a.ways for a in rep if a.phase == "mid" and a.op == "st.shared") == 1
    worst = [{ph: max(a.ways for a in rep if a.phase == ph) for ph in ("load", "mid", "store")} for rep in reports]
    assert worst[2] == worst[1]
    # seam rows: more mid-phase accesses a thread than the strip alone
    assert len([a for a in reports[2] if a.phase == "mid"]) > len([a for a in reports[1] if a.phase == "mid"])
    plain = dataclasses.replace(one, swizzle="none")
    assert max(a.ways for a in bank_report(plain) if a.phase == "mid" and a.op == "st.shared") > 1
    for key in ("rows:e4:1024x4:t256:v16:r1:p0:none:row:strided", "ndtile:e4:64x64:t256:v4:r1:p1:none:col:strided"):
        with pytest.raises(ValueError, match="no bank report for .* cannot run a tile problem"):
            bank_report(KernelConfig.from_key(key))


def test_a_key_reports_as_its_config_and_anything_else_is_refused():
    cfg = classic("tile", 4)
    assert bank_report(cfg.key) == bank_report(cfg) and worst_ways(cfg.key) == {"load": 1, "store": 32}
    for bad in (None, 3, cfg.to_dict()):
        with pytest.raises(TypeError, match=f"expected a KernelConfig or its key, not {type(bad).__name__}"):
            bank_report(bad)
    with pytest.raises(ValueError, match="not a KernelConfig key"):
        bank_report("tile:e4")
