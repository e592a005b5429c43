"""The skinny family (cuda_templates/skinny.py, skinny.cu): transposes with one
short side. Its configs compile, its template code run on the host matches
NumPy bit for bit on every shape it takes (short sides 1..S, ragged long sides,
batches, rows and pointers at any alignment), its element-wise phase is free
of bank conflicts, and the search space offers and picks it only for shapes
with a short side."""
import dataclasses
import itertools
import subprocess
from collections import defaultdict

import numpy as np
import pytest

from autotrans.build.compile import compile_configs
from autotrans.emulate.banks import warp_ways
from autotrans.emulate.emulator import build, emulate_many, kernel_table, trace
from autotrans.families import skinny
from autotrans.kernels.config import ELEM_SIZES, KernelConfig
from autotrans.kernels.templates import render, template_file
from autotrans.tuning.space import Limits, candidates, default_config, default_space, fit_problems, shape_space

from test_emulator import check   # the emulator's bit-exact check

H200 = Limits(max_threads=1024, smem_per_block=232448)


def skinny_space(e):
    return [c for c in default_space(e) if c.variant in skinny.VARIANTS]


def random_array(rng, shape, e):
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * e, dtype=np.uint8)
    return raw.view(f"V{e}").reshape(shape)


def oriented(c, side, long, batch=None):
    """A shape whose short side (narrow: N; short: M) is side."""
    shape = (long, side) if c.variant == "narrow" else (side, long)
    return shape if batch is None else (batch,) + shape




def shapes(c):
    """Short sides 1 (a copy; transpose() never sends it) to S, odd ones among
    them; long sides of one element, ragged, one tile, several tiles; batches."""
    s, l = skinny.short_side(c), skinny.long_side(c)
    sides = sorted({1, 2, 3, 5, 7, 17, s // 2 + 1, s - 1, s} & set(range(1, s + 1)))
    out = [oriented(c, n, long) for n in sides for long in (1, 7, l - 1, l, 2 * l + 3)]
    out += [oriented(c, s, 3 * l + 17), oriented(c, sides[1], l + 1, batch=3), oriented(c, s, 2 * l - 5, batch=2)]
    return out


# -- the space and the config rules ---------------------------------------------

@pytest.mark.parametrize("e", ELEM_SIZES)
def test_space_is_small_and_every_config_as_documented(e):
    cfgs = skinny_space(e)
    assert 4 <= len(cfgs) <= 96 and {c.variant for c in cfgs} == {"narrow", "short"}
    assert len({c.key for c in cfgs}) == len(cfgs)
    for c in cfgs:
        s, l = skinny.short_side(c), skinny.long_side(c)
        assert s in skinny.SIDES and s * e <= skinny.SIDE_BYTES
        assert 512 <= l * e and l <= 1024 and c.threads in (64, 128, 256, 512)
        assert s * l * e // 16 // c.threads in (1, 2, 4)    # vectors a thread (two or four but for small tiles)
        assert (c.vec_bytes, c.micro_rows, c.swizzle, c.layout) == (16, 1, "none", "dense") and c.pad in (0, 1)
        assert c.pointer_align == e
        assert c.smem_bytes == s * l * e + 16 + 2 * (16 * s if c.variant == "short" else 0) + c.pad * (l * e // 4 + 8)
    assert {c.pad for c in cfgs} == {0, 1}
    for s in {skinny.short_side(c) for c in cfgs}:   # one untuned kind of tile per side, variant and parity
        for v, n in itertools.product(("narrow", "short"), (s - 1, s)):
            assert len([c for c in cfgs if c.variant == v and skinny.short_side(c) == s and skinny.untuned(c, n)]) == 1
    mirror = {(c.tile_cols, c.tile_rows, c.threads) for c in cfgs if c.variant == "short"}
    assert {(c.tile_rows, c.tile_cols, c.threads) for c in cfgs if c.variant == "narrow"} == mirror


@pytest.mark.parametrize("kw, why", [
    (dict(tile_rows=1024, tile_cols=520, threads=1024), "short side"),   # narrow side past 512
    (dict(tile_rows=16, tile_cols=36, threads=64), "multiple of 8"),     # past 32: multiples of 8
    (dict(tile_rows=16, tile_cols=264, threads=256), "thread for each"),  # a thread a column
    (dict(tile_rows=8, tile_cols=8, threads=32), "long side"),           # 8 bytes: less than a vector
    (dict(tile_rows=1024, tile_cols=8, threads=32), "threads"),          # 16 vectors a thread
    (dict(tile_rows=1024, tile_cols=8, threads=96), "threads"),          # 512 vectors: 96 does not divide
    (dict(tile_rows=1024, tile_cols=8, threads=128, vec_bytes=8), "vec_bytes 16"),
    (dict(tile_rows=1024, tile_cols=8, threads=128, swizzle="xor"), "swizzle none"),
    (dict(tile_rows=1024, tile_cols=8, threads=128, pad=2), "pad 0 or 1"),
])
def test_problems_refuse_what_the_template_cannot_run(kw, why):
    kw = dict(dict(vec_bytes=16, pad=1), **kw)
    with pytest.raises(ValueError, match=why):
        KernelConfig("narrow", 1, **kw)
    KernelConfig("narrow", 1, 1024, 8, 128, 16, pad=1)   # the sound one


@pytest.mark.parametrize("rows, threads, why", [(264, 256, "thread for each element"), (36, 64, "multiple of 8"),
                                                (520, 1024, "short side"), (24, 32, "power of two")])
def test_short_tiles_of_many_rows_are_multiples_of_8_with_a_thread_a_row(rows, threads, why):
    with pytest.raises(ValueError, match=why):
        KernelConfig("short", 1, rows, 64, threads, 16)
    KernelConfig("short", 1, 264, 64, 352, 16)       # 264 x 4 vectors, 3 a thread


def test_aligned_for_takes_any_alignment_but_only_short_sides_that_fit():
    narrow = KernelConfig("narrow", 2, 1024, 4, 128, 16, pad=1)
    short = KernelConfig("short", 2, 4, 1024, 128, 16, pad=1)
    for shape in [(262143, 3), (262143, 4), (2, 100001, 2), (1, 1), (7, 4)]:
        assert narrow.aligned_for(shape) and fit_problems(narrow, shape, H200) == [], shape
        assert short.aligned_for(shape[:-2] + shape[-2:][::-1]), shape
    for shape in [(100, 5), (3, 262144), (1024, 1024)]:
        assert not narrow.aligned_for(shape), shape
        assert not short.aligned_for(shape[::-1]), shape
        assert any("short side" in p for p in fit_problems(narrow, shape, H200))
    with pytest.raises(ValueError, match="aligned"):
        emulate_many([(narrow, np.zeros((100, 5), np.float16))])


SKINNY_SHAPES = [((1000000, 8), 1), ((8, 1000000), 1), ((262144, 3), 2), ((3, 262144), 2), ((17, 100003), 2),
                 ((100003, 17), 2), ((12, 345678), 4), ((7, 500000), 4), ((4, 2, 300001), 8), ((300001, 3), 16)]
SQUARE_SHAPES = [(1024, 1024), (4097, 4095), (8192, 8192), (2, 512, 768), (100000, 40)]


@pytest.mark.parametrize("shape, e", SKINNY_SHAPES)
def test_skinny_shapes_get_skinny_candidates_and_default(shape, e):
    m, n = shape[-2:]
    side, variant = (n, "narrow") if n <= m else (m, "short")
    got = [c for c in candidates(shape, e, H200) if c.variant in skinny.VARIANTS]
    assert got and {c.variant for c in got} == {variant}
    assert all(side <= skinny.short_side(c) < 4 * side for c in got)
    cfg = default_config(shape, e, H200)
    assert cfg.variant == variant and cfg in got
    assert skinny.short_side(cfg) == min(skinny.short_side(c) for c in got)
    assert default_config(shape, e, H200, max_vec=e) == cfg          # pointers at any element alignment
    # odd sides unpadded (4-way conflicts in the element phase), even sides padded; 4 vectors a thread
    assert cfg.pad == (0 if side % 2 else 1) and cfg.tile_rows * cfg.tile_cols * e // 16 == 4 * cfg.threads


@pytest.mark.parametrize("e", ELEM_SIZES)
@pytest.mark.parametrize("shape", SQUARE_SHAPES)
def test_square_shapes_get_no_skinny_configs(shape, e):
    """Only 100000x40 int8 gets wide narrow candidates (40 columns of odd bytes, past the space's 32)."""
    wide = shape_space(shape, e)
    assert bool(wide) == (shape == (100000, 40) and e == 1) and all(skinny.owns(c) for c in wide)
    assert not any(c.variant in skinny.VARIANTS for c in candidates(shape, e, H200) if c not in wide)
    assert default_config(shape, e, H200).variant not in skinny.VARIANTS


def test_the_untuned_rule_takes_short_sides_up_to_64_bytes_that_a_config_holds():
    assert default_config((100000, 32), 1, H200).variant == "narrow"     # 32 bytes
    assert default_config((100000, 33), 1, H200).variant != "narrow"     # no skinny config holds 33
    assert default_config((16, 100000), 4, H200).variant == "short"      # 64 bytes
    assert default_config((17, 100000), 4, H200).variant != "short"      # 68 bytes
    assert default_config((100000, 4), 16, H200).variant == "narrow"
    assert default_config((2, 18, 30), 1, H200).variant == "short"       # both short: the rows


# -- compiled and emulated -------------------------------------------------------

@pytest.mark.parametrize("key", ["narrow:e1:1024x8:t128:v16:r1:p1:none:row", "short:e16:8x64:t128:v16:r1:p0:none:row"])
def test_line_directive_is_exact(key):
    """No slot adds or removes a line: compiler errors point into skinny.cu."""
    cfg = KernelConfig.from_key(key)
    first, body = render(cfg).split("\n", 1)
    tmpl = template_file(cfg).read_text().splitlines()
    assert first == f'#line 1 "{template_file(cfg)}"' and len(body.splitlines()) == len(tmpl)
    assert all(a == b for a, b in zip(body.splitlines(), tmpl) if "{" not in b)
    other = KernelConfig.from_key(key.replace(":p1:", ":p0:") if ":p1:" in key else key.replace(":p0:", ":p1:"))
    assert render(cfg).replace(cfg.name, "K") != render(other).replace(other.name, "K")


@pytest.mark.slow
def test_every_skinny_config_compiles_without_spills(tmp_path):
    cfgs = [c for e in ELEM_SIZES for c in skinny_space(e)]
    out = compile_configs(cfgs, "sm_90", root=tmp_path)
    assert list(out) == [c.key for c in cfgs]
    bad = {k: c.error[-300:] for k, c in out.items() if not c.ok}
    assert not bad, bad
    for key, c in out.items():
        info = c.info
        assert 0 < info["registers"] <= 64, (key, info)
        assert info["spill_stores"] == 0 and info["spill_loads"] == 0, (key, info)
        assert info["stack"] == 0 and info["lmem"] == 0, (key, info)


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_index_math_matches_numpy(e):
    rng = np.random.default_rng(e)
    cfgs = skinny_space(e)
    cfgs += [dataclasses.replace(c, pad=0) for c in cfgs[:2]]   # unpadded shared memory, narrow and short
    check([(c, random_array(rng, s, e)) for c in cfgs for s in shapes(c)])
    table = kernel_table(cfgs)   # the same emulator: what the template says of each kernel
    for c in cfgs:
        assert table[c.name] == {"threads": c.threads, "smem": c.smem_bytes, "tile": (c.tile_rows, c.tile_cols)}


@pytest.mark.parametrize("e", (1, 2, 4, 8))
def test_pointers_at_any_element_alignment(e):
    rng = np.random.default_rng(100 + e)
    cfgs = skinny_space(e)
    for offset in sorted({e, 3 * e % 16, 8} - {0}):
        check([(c, random_array(rng, s, e)) for c in cfgs for s in shapes(c)[-9:]], offset=offset)


# The brief's shapes (autotrans issue 14), scaled down to under 1M elements with
# their misalignment kept: rows of odd bytes, long sides no tile divides.
SCALED = [((100001, 8), 1), ((8, 100001), 1), ((65535, 3), 2), ((3, 65537), 2), ((17, 20011), 2),
          ((20011, 17), 2), ((12, 34567), 4), ((7, 50001), 4), ((3, 4097, 7), 8), ((2, 3, 9999), 16)]


@pytest.mark.parametrize("shape, e", SCALED)
def test_scaled_issue_shapes_with_every_skinny_candidate(shape, e):
    cfgs = [c for c in candidates(shape, e, H200) if c.variant in skinny.VARIANTS]
    assert default_config(shape, e, H200) in cfgs
    x = random_array(np.random.default_rng(sum(shape)), shape, e)
    check([(c, x) for c in cfgs])
    check([(c, x) for c in cfgs], offset=e % 16)


def test_refused_shapes_take_the_element_wise_path(tmp_path):
    """A short side past the config's (aligned_for refuses it; bank_report's
    default shape has one) still transposes correctly, element by element."""
    rng = np.random.default_rng(7)
    for key, shape in [("narrow:e2:1024x4:t128:v16:r1:p1:none:row", (1500, 9)),
                       ("short:e1:8x1024:t128:v16:r1:p1:none:row", (19, 2100))]:
        cfg = KernelConfig.from_key(key)
        assert not cfg.aligned_for(shape)
        x = random_array(rng, shape, cfg.elem_bytes)
        (tmp_path / "in").write_bytes(x.tobytes())
        (tmp_path / "out").write_bytes(bytes(x.nbytes))
        m, n = shape
        r = subprocess.run([str(build([cfg]))], input=f"run {cfg.name} 1 {m} {n} in 0 out 0 - 0\n",
                           capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == 0 and r.stdout.startswith("ok"), r.stdout + r.stderr
        assert (tmp_path / "out").read_bytes() == np.ascontiguousarray(x.T).tobytes(), key


# -- bank conflicts ----------------------------------------------------------------

def phase_ways(cfg, shape):
    """The worst n-way conflict of block 0's shared-memory accesses, per
    (phase, "ld"/"st"), as banks.bank_report counts them, on this shape (the
    report's own shape is two tiles a side: a short side the config refuses)."""
    groups = defaultdict(list)
    for phase, tid, seq, off, nbytes, store in trace(cfg, shape):
        groups[(phase, seq, store, nbytes, tid // 32)].append((tid, off, nbytes))
    worst = {}
    for (phase, _seq, store, _nbytes, _warp), acc in groups.items():
        k = (("load", "mid", "store")[phase], "st" if store else "ld")
        worst[k] = max(worst.get(k, 0), warp_ways([(o, b) for _, o, b in sorted(acc)]))
    return worst


BANK_KEYS = ["narrow:e1:1024x8:t128", "short:e1:8x1024:t128", "narrow:e1:512x32:t256", "short:e1:32x512:t256",
             "narrow:e2:1024x4:t128", "short:e2:16x512:t256", "narrow:e4:256x8:t128", "short:e4:4x512:t128",
             "narrow:e8:128x16:t256", "short:e16:8x64:t128"]


@pytest.mark.parametrize("key", BANK_KEYS)
def test_element_wise_phase_is_free_of_bank_conflicts(key):
    """The gather (narrow's store phase) and the scatter (short's load phase)
    are 1-way for every short side where rows are 16-byte aligned; elsewhere the
    vectors at the rows' ends, one a row in a last step of their own, can meet
    in a bank (at most 3-way seen). The 16-byte copies of the run, four words
    each, are at most 2-way."""
    cfg = KernelConfig.from_key(key + ":v16:r1:p1:none:row")
    s, l = skinny.short_side(cfg), skinny.long_side(cfg)
    gather = ("store", "ld") if cfg.variant == "narrow" else ("load", "st")
    copy = ("load", "st") if cfg.variant == "narrow" else ("store", "ld")
    for n in sorted({2, 3, s // 2 + 1, s}):
        aligned, ragged = phase_ways(cfg, oriented(cfg, n, 2 * l)), phase_ways(cfg, oriented(cfg, n, 2 * l + 1))
        assert aligned[gather] == 1 and ragged[gather] <= 3, (n, aligned, ragged)
        assert aligned[copy] <= 2 and ragged[copy] <= 2, (n, aligned, ragged)


@pytest.mark.parametrize("key", BANK_KEYS[:2])
def test_padding_is_what_clears_the_element_wise_phase(key):
    cfg = KernelConfig.from_key(key + ":v16:r1:p0:none:row")
    s, l = skinny.short_side(cfg), skinny.long_side(cfg)
    gather = ("store", "ld") if cfg.variant == "narrow" else ("load", "st")
    assert phase_ways(cfg, oriented(cfg, s, 2 * l))[gather] >= 16


# -- wide tiles: short tiles of 33-512 rows (shape_space, wide_default) -----------

# Scaled from the probe's shapes (NOTES 59): few long rows, odd and even, at
# any alignment, batched too; the long side at least 16 times the short one.
WIDE_SHAPES = [((257, 4200), 4), ((301, 4900), 2), ((3, 129, 2100), 8), ((130, 2100), 16), ((2, 40, 700), 4),
               ((100, 1700), 1), ((511, 8300), 2), ((512, 8192), 1)]


@pytest.mark.parametrize("shape, e", WIDE_SHAPES)
def test_wide_tiles_are_candidates_that_match_numpy(shape, e):
    """Every wide tile of the shape moves it bit-exactly, at an unaligned
    pointer too, and so does each on 7 rows fewer (its rows then a runtime
    value, not the full tile's)."""
    wide = [c for c in candidates(shape, e, H200) if c.variant == "short" and c.tile_rows > skinny.MAX_SIDE]
    assert wide and {c.tile_rows for c in wide} == {-(-shape[-2] // 8) * 8}
    assert {c.tile_cols * e for c in wide} <= set(skinny.WIDE_LONG_BYTES) and {c.pad for c in wide} == {0}
    rng = np.random.default_rng(sum(shape))
    x = random_array(rng, shape, e)
    check([(c, x) for c in wide])
    if e < 16:     # pointers at any element alignment (16-byte elements are always 16-byte aligned)
        check([(c, x) for c in wide[:2]], offset=3 * e % 16)
    check([(c, random_array(rng, shape[:-2] + (shape[-2] - 7, shape[-1] + 5), e)) for c in wide[::2]])


@pytest.mark.parametrize("shape, e", [((4096, 4096), 4), ((512, 512), 1), ((263, 4200), 4), ((768, 50257), 2),
                                      ((16, 100000), 4), ((4200, 263), 4), ((50257, 768), 2), ((100000, 16), 4),
                                      ((65536, 384), 1), ((32768, 16), 16)])
def test_no_wide_tiles_for_squares_short_aspects_many_rows_the_space_s_sides_or_columns(shape, e):
    """Wide tiles are offered where one side is WIDE_ASPECT times the other,
    the short one past what space() holds and at most MAX_WIDE: not for
    squares, 263x4200 or 4200x263 (aspect 16.0 is 4208), 768 rows or
    columns, 16 (space()'s), nor few columns of 16-byte rows (vec's)."""
    assert not [c for c in candidates(shape, e, H200) if c.variant in skinny.VARIANTS
                and skinny.short_side(c) > skinny.MAX_SIDE]


def test_wide_tiles_are_not_in_the_shared_space_and_only_wide_narrow_ones_own():
    """default_space() (what every shape starts from) holds no wide tile:
    they are made for the one shape. Narrow tiles of 33-512 columns are
    configs too; they own their output vectors (own_rows more rows, in the
    shared memory the template agrees on), the space's narrow tiles do not."""
    assert not [c for e in ELEM_SIZES for c in skinny_space(e) if skinny.short_side(c) > skinny.MAX_SIDE]
    with pytest.raises(ValueError, match="powers of two"):
        KernelConfig("narrow", 4, 24, 264, 352, 16)     # the long side stays a power of two
    wide = [KernelConfig("narrow", 4, 32, 264, 352, 16), KernelConfig("narrow", 1, 128, 368, 736, 16, pad=1)]
    assert [skinny.own_rows(c) for c in wide] == [4, 16]
    assert not [c for e in ELEM_SIZES for c in skinny_space(e) if skinny.owns(c)]
    table = kernel_table(wide)
    assert [table[c.name]["smem"] for c in wide] == [c.smem_bytes for c in wide] == [36*264*4 + 16, 144*368 + 16 + 144 // 4 + 8]


def test_every_wide_tile_and_pick_is_a_valid_config():
    """shape_space and wide_default build valid configs for every short side
    of 2-512 elements: up to MAX_SIDE a power of two (18 rows of float64,
    144 bytes, past what space() holds: 32-row tiles, not 24; the GPU fuzz
    found the 24-row one), past it a multiple of 8."""
    for e in ELEM_SIZES:
        for m in range(2, skinny.MAX_WIDE + 1):
            rows = skinny.wide_rows(e, m, 16 * m)
            assert rows is None or (rows >= m and (rows & (rows - 1) == 0 if rows <= skinny.MAX_SIDE
                                                   else rows % skinny.SIDE_STEP == 0)), (e, m, rows)
            for shape in ((m, 16 * m + 3), (16 * m + 3, m)):
                for kw in skinny.shape_space(e, *shape):
                    KernelConfig(**kw)
                default_config(shape, e, H200)
    assert default_config((18, 661), 8, H200).key.startswith("short:e8:32x16:")


@pytest.mark.parametrize("shape, e, want", [
    ((257, 133867), 4, "short:e4:264x32:t352"), ((363, 185365), 1, "short:e1:368x128:t736"),
    ((129, 65537), 8, "short:e8:136x16:t544"), ((4, 257, 33301), 4, "short:e4:264x32:t352"),
    ((100, 200003), 1, "short:e1:104x128:t416"),
    ((480, 40000), 8, None),        # 16-byte rows: the vec tiles
    ((130813, 263), 4, "narrow:e4:32x264:t704"), ((131073, 257), 2, "narrow:e2:64x264:t704"),
    ((185365, 363), 1, "narrow:e1:128x368:t736"), ((2, 9000, 181), 4, "narrow:e4:32x184:t736"),
    ((65537, 129), 8, None),        # few columns: narrow tiles untuned for 1- to 4-byte elements only
    ((100000, 40), 1, None),        # ... and 129 columns or more
    ((65536, 384), 1, None),        # 16-byte rows
])
def test_the_untuned_pick_for_few_long_odd_rows_or_columns_is_the_wide_tile(shape, e, want):
    got = default_config(shape, e, H200)
    pad = 1 if want and want.startswith("narrow") and e > 1 else 0
    assert (got.key.startswith(want + f":v16:r1:p{pad}:none:row") if want
            else skinny.short_side(got) <= skinny.MAX_SIDE if got.variant in skinny.VARIANTS else True), got.key


@pytest.mark.slow
def test_wide_tiles_compile_spilling_at_most_a_few_words(tmp_path):
    """Every wide tile of a spread of row counts (33-512, each element size)
    compiles for sm_90. Unlike default_space(), a fifth of them spill a few
    words (ptxas 13.0: 4-28 bytes over 850 tiles of every row count, all in
    L1; the probe's fastest ones none): at most 32 bytes."""
    cfgs = list(dict.fromkeys(c for e in ELEM_SIZES for m in (33, 129, 264, 400, 512)
                              for c in shape_space((m, 16 * m), e)))
    assert len(cfgs) > 30
    out = compile_configs(cfgs, "sm_90", root=tmp_path)
    bad = {k: c.error[-300:] for k, c in out.items() if not c.ok}
    assert not bad, bad
    for key, c in out.items():
        assert c.info["spill_stores"] <= 32 and c.info["stack"] <= 32 and c.info["registers"] <= 96, (key, c.info)


# Narrow wide tiles (few long columns; configs for probes, in no space): each
# output row's vectors that start in a tile's rows are that tile's, whole.
NARROW_WIDE = {"narrow:e4:32x264:t352:v16:r1:p0:none:row": [(1000, 263), (31, 263), (33, 260), (2, 77, 257)],
               "narrow:e2:64x264:t352:v16:r1:p1:none:row": [(1001, 257), (9, 257), (2, 130, 264)],
               "narrow:e1:128x368:t736:v16:r1:p0:none:row": [(1003, 363), (140, 368), (17, 300)],
               "narrow:e8:16x136:t544:v16:r1:p0:none:row": [(301, 129), (2, 33, 136)],
               "narrow:e16:8x40:t64:v16:r1:p0:none:row": [(101, 37)]}


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_narrow_wide_tiles_match_numpy_at_any_alignment(e):
    """Tops, bottoms of fewer rows than a vector, batches, fewer columns than
    the tile's, and pointers one element past 16-byte alignment (reading too
    few rows past the tile fails this: checked by mutation)."""
    rng = np.random.default_rng(50 + e)
    items = [(c, random_array(rng, s, e)) for k, shapes in NARROW_WIDE.items()
             for c in [KernelConfig.from_key(k)] if c.elem_bytes == e for s in shapes]
    assert items and all(skinny.owns(c) for c, _ in items)
    check(items)
    if e < 16:
        check(items, offset=e)


@pytest.mark.parametrize("shape, e", [((4300, 263), 4), ((2, 2100, 129), 8), ((5000, 301), 1), ((700, 41), 4),
                                      ((6000, 333), 2)])
def test_few_long_columns_get_narrow_wide_candidates_that_match_numpy(shape, e):
    """Narrow wide tiles of the columns rounded up to 8 and to 32, 128-byte
    output pieces (and 64 rows of 1-byte elements), padded or not; each moves
    the shape bit-exactly, at a pointer off 16-byte alignment too."""
    n = shape[-1]
    wide = [c for c in candidates(shape, e, H200) if c.variant == "narrow" and c.tile_cols > skinny.MAX_SIDE]
    assert {c.tile_cols for c in wide} == {-(-n // 8) * 8, -(-n // 32) * 32}
    assert {c.tile_rows * e for c in wide} == ({64, 128} if e == 1 else {128}) and {c.pad for c in wide} == {0, 1}
    assert all(skinny.owns(c) for c in wide)
    x = random_array(np.random.default_rng(sum(shape)), shape, e)
    check([(c, x) for c in wide])
    check([(c, x) for c in wide[::3]], offset=e)
