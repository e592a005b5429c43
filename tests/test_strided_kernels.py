"""Strided kernels (KernelConfig.layout "strided"): the TileProblems and
RowsProblems of autotrans.core.layout, built here by hand from NumPy views.
Their configs' keys, the argument struct Python packs, every strided
candidate compiled by nvcc, and the index math run by the host emulator on
whole buffers, checked bit-exactly against np.transpose: every byte of the
destination buffer (pitch gaps and guard bands included) is what it should be."""
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from autotrans import families
from autotrans.build import nvcc
from autotrans.build.compile import compile_configs
from autotrans.core.layout import MAX_BATCH, Dim, RowsProblem, TileProblem
from autotrans.core.problem import ELEM_SIZES
from autotrans.emulate.emulator import emulate, emulate_strided, emulate_strided_many
from autotrans.kernels.config import KernelConfig
from autotrans.kernels.strided import (byte_extent, pack, pointer_alignment, problem_space, strided_args,
                                       strided_problems, strided_shape, strided_space)
from autotrans.kernels.templates import (STRIDED_ARGS, python_view, render, render_unit, strided_offsets,
                                         template_dir, template_file)
from autotrans.tuning.space import default_space

REPO = Path(__file__).resolve().parent.parent
POISON = 0xA5
TILE = KernelConfig("tile", 4, 32, 32, 256, pad=1, layout="strided")
VEC = KernelConfig("vec", 4, 64, 64, 256, 16, 4, 0, "xor", "col", "strided")
ROWS = KernelConfig("rows", 4, 1024, 4, 256, 16, layout="strided")
SHIFT = KernelConfig("shift", 2, 64, 64, 256, 16, 2, 2, "none", "col", "strided")


# -- keys ------------------------------------------------------------------------


def shipped_configs():
    """Every config key and config dict stored in the shipped results (cache/)."""
    keys, dicts = set(), []
    for path in sorted((REPO / "cache").glob("*.json")):
        for entry in json.loads(path.read_text())["entries"]:
            rec = entry["record"]
            keys.add(rec["key"])
            dicts.append((rec["key"], rec["config"]))
            keys.update(r["key"] for r in rec["candidates"] + rec["failures"])
    return sorted(keys), dicts


def test_dense_keys_and_stored_configs_are_unchanged():
    keys, dicts = shipped_configs()
    assert len(keys) > 100 and dicts
    for k in keys + [c.key for e in ELEM_SIZES for c in default_space(e)]:
        cfg = KernelConfig.from_key(k)
        assert cfg.key == k and cfg.layout == "dense" and not k.endswith(":dense")
    for k, d in dicts:    # stored before the field existed: no layout; read and written the same
        assert "layout" not in d
        cfg = KernelConfig.from_dict(d)
        assert cfg.key == k and cfg.to_dict() == d


def test_strided_keys_round_trip():
    cfgs = [c for e in ELEM_SIZES for c in strided_space(e)]
    assert len(cfgs) > 100
    for c in cfgs:
        assert c.layout == "strided" and c.key.endswith(":strided") and c.name.endswith("_strided")
        assert KernelConfig.from_key(c.key) == c and KernelConfig.from_dict(c.to_dict()) == c
        assert c.to_dict()["layout"] == "strided"
    assert TILE.key == "tile:e4:32x32:t256:v4:r1:p1:none:row:strided"
    dense = KernelConfig.from_key(TILE.key.removesuffix(":strided"))
    assert dense.layout == "dense" and dense != TILE and dense.key + ":strided" == TILE.key


@pytest.mark.parametrize("key, why", [
    ("tile:e4:32x32:t256:v4:r1:p1:none:row:dense", "dense keys end at the order"),
    ("tile:e4:32x32:t256:v4:r1:p1:none:row:sparse", "layout must be one of"),
    ("rows:e4:1024x4:t256:v16:r1:p0:none:row", "rows kernels take the layouts"),
    ("naive:e4:8x32:t256:v4:r1:p0:none:row:strided", "naive kernels take the layouts"),
    ("narrow:e1:1024x4:t256:v16:r1:p1:none:row:strided", "narrow kernels take the layouts"),
    ("rows:e4:1024x4:t256:v16:r1:p0:xor:row:strided", "no micro_rows, pad or swizzle"),
])
def test_layouts_belong_to_families(key, why):
    with pytest.raises(ValueError, match=why):
        KernelConfig.from_key(key)


def test_rows_geometry_limits():
    with pytest.raises(ValueError, match="multiple of threads"):
        KernelConfig("rows", 4, 128, 4, 256, 16, layout="strided")     # 256 rows a pass, 128 rows
    with pytest.raises(ValueError, match="at most 16 vectors"):
        KernelConfig("rows", 4, 1024, 64, 256, 16, layout="strided")   # 64 passes of one vector
    with pytest.raises(ValueError, match="multiple of vec_bytes"):
        KernelConfig("rows", 4, 1024, 2, 256, 16, layout="strided")    # 8-byte tile rows, 16-byte accesses
    wide = KernelConfig("rows", 4, 16, 256, 256, 16, layout="strided")  # 1 KiB tile rows: 2 passes x 2 vectors
    assert wide.family.geometry(wide) == families.of("rows").Geometry(64, 32, 8, 2, 2)
    assert ROWS.family.geometry(ROWS) == families.of("rows").Geometry(1, 1, 256, 4, 1)


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_strided_space_is_small_and_every_entry_valid(e):
    got = strided_space(e)
    assert {c.variant for c in got} == {"tile", "vec", "rows", "ndtile"} | ({"shift", "ndshift"} if e <= 4 else set())
    for fam in families.modules():
        if "strided" not in getattr(fam, "LAYOUTS", ("dense",)):
            assert not hasattr(fam, "strided_space")
            continue
        kws = list(fam.strided_space(e))
        cfgs = [KernelConfig(**kw) for kw in kws]          # none invalid, so none silently left out
        shift = "shift" in fam.VARIANTS                   # shift and ndshift: elements of 1-4 B
        if "flat" in fam.VARIANTS:                        # flat's candidates are the problem's (problem_space)
            assert cfgs == []
            continue
        assert (1 if not shift or e <= 4 else 0) <= len(cfgs) <= 18
        assert all(c.layout == "strided" for c in cfgs)
        assert all(getattr(fam, "keep", lambda c: True)(c) for c in cfgs)
        assert [c for c in got if c.family is fam] == cfgs
    rows = [c for c in got if c.variant == "rows"]
    assert any(c.vec_bytes == 16 for c in rows) and any(c.vec_bytes == e for c in rows)
    assert max(c.vec_bytes for c in got) == 16                      # 32- and 64-byte vectors: casts only
    assert all(c.smem_bytes == 0 for c in rows)
    assert not any(c.variant == "rows" for c in default_space(e))   # rows runs no dense transpose


# -- the argument struct ---------------------------------------------------------


def test_strided_args_layout_and_values():
    assert MAX_BATCH == 7 and STRIDED_ARGS.size == 240
    assert strided_offsets() == (0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 128, 184)
    p = TileProblem(2, 5, 7, 100, 12, 6, (Dim(3, 1000, 140), Dim(4, 4000, 35 * 4)))
    assert strided_shape(p) == (12, 5, 7)
    vals = strided_args(p, 0x1000, 0x2000)
    assert vals[:9] == (0x1000, 0x2000, 12, 5, 7, 100, 12, 6, 2)
    assert vals[9:16] == (3, 4, 1, 1, 1, 1, 1) and vals[16:18] == (1000, 4000) and vals[23:25] == (140, 140)
    assert set(vals[18:23] + vals[25:]) == {0}
    assert STRIDED_ARGS.unpack(pack(p, 0x1000, 0x2000)) == vals
    r = RowsProblem(4, 8, (Dim(2, 4096, 1024), Dim(16, 32, 64)))
    assert strided_shape(r) == (1, 32, 8)
    assert strided_args(r, 0, 0)[:9] == (0, 0, 1, 32, 8, 0, 0, 4, 2)
    assert strided_shape(RowsProblem(4, 8, ())) == (1, 1, 8) and strided_shape(TileProblem(4, 3, 5, 20, 12, 4, ())) \
        == (1, 3, 5)
    with pytest.raises(ValueError, match="at most 7"):
        strided_args(RowsProblem(1, 8, (Dim(2, 8, 8),) * 8), 0, 0)
    with pytest.raises(TypeError, match="TileProblem or RowsProblem"):
        strided_shape((3, 4, 5))


def test_pointer_alignment_and_extent():
    assert pointer_alignment(0, 0) == 256 and pointer_alignment(48, 16) == 16 and pointer_alignment(6) == 2
    p = TileProblem(4, 3, 5, 40, 16, -8, (Dim(2, 200, 80),))
    assert byte_extent(p) == ((-32, 200 + 80 + 4), (0, 80 + 4 * 16 + 2 * 4 + 4))
    assert byte_extent(RowsProblem(4, 0, (Dim(2, 200, 80),))) == ((0, 0), (0, 0))


def test_strided_problems_say_why():
    rows = RowsProblem(4, 6, (Dim(10, 64, 24),))          # 24-byte rows
    tile = TileProblem(4, 33, 17, 80, 144, 4, (Dim(3, 3200, 2448),))
    assert strided_problems(TILE, tile, 16) == [] and strided_problems(VEC, tile, 16) == []
    assert strided_problems(KernelConfig("rows", 4, 1024, 2, 256, 8, layout="strided"), rows, 8) == []
    assert "TileProblems" in strided_problems(TILE, rows, 16)[0]
    assert "RowsProblems" in strided_problems(ROWS, tile, 16)[0]
    assert "whole 16-byte vectors" in strided_problems(ROWS, rows, 16)[0]
    assert "4-byte elements" in strided_problems(TILE, TileProblem(2, 3, 3, 6, 6, 2, ()), 16)[0]
    sci = TileProblem(4, 33, 17, 240, 144, 12, ())
    assert strided_problems(TILE, sci, 16) == []
    assert "column pitch" in strided_problems(VEC, sci, 16)[0]
    assert "multiples of vec_bytes" in strided_problems(VEC, TileProblem(4, 33, 17, 84, 144, 4, ()), 16)[0]
    assert "16-byte aligned" in strided_problems(VEC, tile, 8)[0]
    assert "multiples of the element size" in strided_problems(TILE, TileProblem(4, 3, 3, 6, 12, 4, ()), 16)[0]
    assert "dense config" in strided_problems(KernelConfig("tile", 4, 32, 32, 256), tile, 16)[0]
    huge = TileProblem(4, 32, 32, 128, 128, 4, (Dim(2**31, 4096, 4096),))
    assert "2^31-1" in strided_problems(TILE, huge, 16)[0]


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_every_element_aligned_problem_has_a_candidate(e):
    """Odd sides, pitches and strides (multiples of the element only), odd
    columns apart, pointers aligned to the element: some strided candidate
    of each problem kind runs it."""
    odd = 2 * e + e   # an odd multiple of e
    tile = TileProblem(e, 37, 45, 45 * odd, 37 * odd, odd, (Dim(3, 45 * 37 * odd, -45 * 37 * e),))
    rows = RowsProblem(e, 3, (Dim(5, 7 * odd, 3 * e), Dim(7, odd, 15 * e)))
    for problem, family in ((tile, "tile"), (rows, "rows")):
        ok = [c for c in strided_space(e) if not strided_problems(c, problem, e)]
        assert ok and {c.variant for c in ok} == {family}, (problem, ok)


# -- rendering and nvcc ----------------------------------------------------------


def frontend(source: str) -> tuple[bool, str]:
    out, log = nvcc.run({"unit.cu": '#include "common.cuh"\n' + source}, "unit.cu",
                        ["-ptx", "-arch=sm_90", "-std=c++17"], includes=[template_dir()])
    return out is not None, log


@pytest.mark.parametrize("cfg", [TILE, VEC, ROWS, SHIFT])
def test_strided_render_keeps_lines_and_picks_the_entry(cfg):
    text = render(cfg)
    body = text.split("\n", 1)[1]
    assert len(body.splitlines()) == len(template_file(cfg).read_text().splitlines())
    assert f"AT_STRIDED_ENTRY({cfg.name}, {cfg.threads})" in text and "AT_KERNEL_ENTRY" not in text
    assert "AT_AGREE_STRIDED_ARGS(7, 240, 0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 128, 184);" in text
    v = python_view(cfg)
    assert v.layout == "strided" and all(g.blocks == cfg.blocks((g.b, g.m, g.n)) for g in v.grid)
    dense = render(KernelConfig("tile", 4, 32, 32, 256, pad=1))
    assert "AT_AGREE_ARGS(40, 0, 8, 16, 24, 32);" in dense and "AT_STRIDED_ENTRY" not in dense


@pytest.mark.parametrize("wrong, message", [
    (dict(max_batch=8), "autotrans.core.layout.MAX_BATCH (Python) disagrees with at::MAX_BATCH"),
    (dict(args_size=232), "templates.STRIDED_ARGS (Python's strided kernel argument struct) disagrees"),
    (dict(layout="dense"), "a strided template's kernel takes AT_STRIDED_ENTRY"),
])
def test_a_wrong_strided_python_value_fails_nvcc(wrong, message):
    import dataclasses
    ok, log = frontend(render(TILE))
    assert ok, log[-2000:]
    view = dataclasses.replace(python_view(TILE), **wrong)
    if "layout" in wrong:
        view = dataclasses.replace(view, args_size=40, args_offsets=(0, 8, 16, 24, 32))
    ok, log = frontend(render(TILE, view))
    assert not ok and message in log, log[-2000:]


def test_a_wrong_rows_geometry_fails_nvcc(monkeypatch):
    fam = ROWS.family
    real = fam.geometry(ROWS)
    monkeypatch.setattr(fam, "geometry", lambda c: fam.Geometry(real.row_vecs, real.lanes, real.per_pass,
                                                                 real.passes + 1, real.vecs))
    ok, log = frontend(render(ROWS))
    assert not ok and "rows.py's geometry()" in log, log[-2000:]


def test_strided_kernels_read_through_the_read_only_path():
    """The entry holds the struct's pointers in __restrict__ locals: every
    global load of a strided kernel is ld.global.nc, as in the dense ones."""
    cfgs = [TILE, VEC, ROWS]
    out, log = nvcc.run({"unit.cu": render_unit(cfgs)}, "unit.cu", ["-ptx", "-arch=sm_90", "-std=c++17", "-O3"],
                        includes=[template_dir()])
    assert out is not None, log[-2000:]
    bodies = {b.split("(", 1)[0].strip(): b for b in out.decode().split(".entry ")[1:]}
    assert set(bodies) == {c.name for c in cfgs}
    for cfg in cfgs:
        loads = re.findall(r"\bld\.global[.\w]*", bodies[cfg.name])
        assert loads and all(ld.startswith("ld.global.nc") for ld in loads), (cfg.key, set(loads))


def assert_compiles_without_spills(cfgs, root, arch: str = "sm_90") -> None:
    """Every config compiles for arch (nvcc, into a store at root), each kernel
    with registers and no spills or stack."""
    out = compile_configs(cfgs, arch, root=root)
    bad = {k: c.error[-300:] for k, c in out.items() if not c.ok}
    assert not bad, list(bad.items())[:3]
    assert set(out) == {c.key for c in cfgs}
    for key, c in out.items():
        assert c.info["registers"] > 0, key
        assert c.info["spill_stores"] == 0 and c.info["spill_loads"] == 0 and c.info["stack"] == 0, (key, c.info)


@pytest.mark.parametrize("arch", ["sm_90", pytest.param("sm_80", marks=pytest.mark.exhaustive)])
def test_every_strided_candidate_compiles_without_spills(tmp_path, arch):
    assert_compiles_without_spills([c for e in ELEM_SIZES for c in strided_space(e)], tmp_path, arch)


@pytest.mark.parametrize("arch", ["sm_90", pytest.param("sm_80", marks=pytest.mark.exhaustive)])
def test_strips_of_shift_tiles_compile_without_spills_in_few_registers(tmp_path, arch):
    """Strips (2, 4, 8) of every strided shift tile, with seams and without,
    casts from float32 too: no spills, and at most 64 registers a thread (a strip's loop computes each
    tile's thread indices afresh, at::opaque, instead of holding them all)."""
    shifts = [c for e in (1, 2, 4) for c in strided_space(e) if c.variant == "shift"]
    shifts += [c for c in strided_space(4, cast="f32>bf16") if c.variant == "shift"]
    cfgs = [dataclasses.replace(c, strip=k, seam=m) for c in shifts for k in (2, 4, 8) for m in (0, 1)]
    assert_compiles_without_spills(cfgs, tmp_path, arch)
    assert max(c.info["registers"] for c in compile_configs(cfgs, arch, root=tmp_path).values()) <= 64


@pytest.mark.parametrize("arch", ["sm_90", pytest.param("sm_80", marks=pytest.mark.exhaustive)])
def test_row_sized_rows_tiles_compile_without_spills(tmp_path, arch):
    cfgs = {c for e in (1, 2) for p in (RowsProblem(e, n, (Dim(9, e * n + e, e * n),)) for n in range(1, 257, 2))
            for c in problem_space(p)}
    assert len(cfgs) >= 40 and max(c.tile_cols for c in cfgs) == 224
    assert_compiles_without_spills(sorted(cfgs, key=lambda c: c.key), tmp_path, arch)


# -- the emulator against NumPy --------------------------------------------------

PAD = 32   # bytes before a view's first byte in its buffer


def _buffer(rng, nbytes: int) -> np.ndarray:
    return rng.integers(0, 256, size=nbytes + 2 * PAD, dtype=np.uint8)


def _view(buf: np.ndarray, base_shape, e: int) -> np.ndarray:
    return np.ndarray(tuple(base_shape), f"V{e}", buffer=buf, offset=PAD)


def _offset(view: np.ndarray, buf: np.ndarray) -> int:
    return view.__array_interface__["data"][0] - buf.__array_interface__["data"][0]


class Case:
    """A permutation of a strided input view into a (pitched) output view:
    the problem, both buffers, and the destination buffer it must leave."""

    def __init__(self, rng, shape, perm, e, *, in_pad=0, out_pad=0, sci_mult=1, flip=False):
        shape, perm = tuple(shape), tuple(perm)
        base = list(shape)
        base[-1] = shape[-1] * sci_mult + in_pad
        self.src = _buffer(rng, int(np.prod(base)) * e)
        x = _view(self.src, base, e)[..., ::sci_mult][..., :shape[-1]]
        if flip:
            x = x[::-1]
        y = np.transpose(x, perm)
        dbase = list(y.shape)
        dbase[-1] += out_pad
        self.dst = np.full(int(np.prod(dbase)) * e + 2 * PAD, POISON, np.uint8)
        self.want = self.dst.copy()
        _view(self.want, dbase, e)[..., :y.shape[-1]] = y
        out = _view(self.dst, dbase, e)[..., :y.shape[-1]]
        self.src_offset, self.dst_offset = _offset(x, self.src), _offset(out, self.dst)
        self.problem = self._problem(x, out, perm, e)

    @staticmethod
    def _problem(x, out, perm, e):
        last = x.ndim - 1
        if perm[-1] == last:   # the inner axis stays put: rows
            return RowsProblem(e, x.shape[-1], tuple(Dim(x.shape[a], x.strides[a], out.strides[k])
                                                     for k, a in enumerate(perm[:-1])))
        a_m, k_n = perm[-1], perm.index(last)
        batch = tuple(Dim(x.shape[a], x.strides[a], out.strides[k]) for k, a in enumerate(perm) if a not in (a_m, last))
        return TileProblem(e, x.shape[a_m], x.shape[last], x.strides[a_m], out.strides[k_n], x.strides[last], batch)

    def job(self, cfg):
        return cfg, self.problem, self.src, self.dst, self.src_offset, self.dst_offset


def align_pad(n: int, e: int, extra: int = 1) -> int:
    """Elements to add to a side of n so that its rows are 16-byte aligned, plus extra vectors."""
    k = max(1, 16 // e)
    return (-n) % k + extra * k


def tile_cases(rng, e):
    """Rank 3 to 5, batch dimensions, pitched inputs and outputs, columns
    sci_mult elements apart, a flipped (negative-stride) batch axis, full and
    edge tiles of 64 x 64."""
    return [Case(rng, (3, 37, 45), (0, 2, 1), e), Case(rng, (2, 133, 69), (0, 2, 1), e, sci_mult=2),
            Case(rng, (2, 3, 19, 70), (2, 0, 3, 1), e, in_pad=3, out_pad=5),
            Case(rng, (2, 3, 4, 9, 11), (3, 1, 4, 0, 2), e, in_pad=1),
            Case(rng, (1, 65, 33), (0, 2, 1), e, sci_mult=3, out_pad=2),
            Case(rng, (4, 5, 13, 6), (3, 1, 0, 2), e, in_pad=2, sci_mult=2, flip=True),
            Case(rng, (1, 1), (1, 0), e), Case(rng, (70, 1), (1, 0), e), Case(rng, (1, 70), (1, 0), e)]


def vec_cases(rng, e, tr: int, tc: int):
    """Odd matrix sides with 16-byte aligned pitches (rows padded), batches,
    rank 4 and 5, and full tiles of tr x tc beside edge ones."""
    m, n = tr + 7, tc + 9
    return [Case(rng, (3, 37, 45), (0, 2, 1), e, in_pad=align_pad(45, e), out_pad=align_pad(37, e)),
            Case(rng, (2, m, n), (0, 2, 1), e, in_pad=align_pad(n, e), out_pad=align_pad(m, e)),
            Case(rng, (2, 3, 70, 19), (1, 0, 3, 2), e, in_pad=align_pad(19, e), out_pad=align_pad(70, e, 0)),
            Case(rng, (2, 3, 3, 9, 11), (3, 1, 0, 4, 2), e, in_pad=align_pad(11, e), out_pad=align_pad(3, e))]


def rows_cases(rng, e):
    """(B, S, H, D) -> (B, H, S, D) with D*E = 16, 24 and 128 bytes, and of 16
    bytes over 2400 rows; rank 5 with pitched rows; one dimension; a single row."""
    out = [Case(rng, (2, 37, 3, d // e), (0, 2, 1, 3), e) for d in (16, 24, 128) if d % e == 0]
    out.append(Case(rng, (2, 300, 4, 16 // e), (0, 2, 1, 3), e))   # 2400 rows: full tiles of 1024
    out.append(Case(rng, (3, 2, 5, 4, 32 // e), (3, 0, 2, 1, 4), e, in_pad=16 // e, out_pad=32 // e))
    out.append(Case(rng, (9, 64 // e), (0, 1), e, in_pad=16 // e))
    out.append(Case(rng, (48 // e,), (0,), e))
    return out


def shift_cases(rng, e, tr: int, tc: int):
    """Rows and pitches at every byte alignment (no padding to vectors), batch
    axes inside and around the tile's, a flipped batch axis, matrices of full
    tr x tc tiles (the last ones overlapping their neighbours) and smaller ones."""
    return [Case(rng, (3, 37, 45), (0, 2, 1), e),
            Case(rng, (2, tr + 19, tc + 7), (0, 2, 1), e, in_pad=3, out_pad=5),
            Case(rng, (tc + 5, 3, tr + 9), (2, 1, 0), e),
            Case(rng, (2, 3, 2 * tr + 1, tc + 3), (1, 3, 0, 2), e, in_pad=1, flip=True),
            Case(rng, (tr + 1, 2 * tc + 13), (1, 0), e, out_pad=1)]


def run_cases(cfgs, cases):
    """Emulate every (config, case) pair the config can run; each config runs
    some case and each case runs on some config."""
    jobs = [(c, case) for c in cfgs for case in cases
            if not strided_problems(c, case.problem, min(16, pointer_alignment(case.src_offset, case.dst_offset)))]
    assert {c for c, _ in jobs} == set(cfgs), set(cfgs) - {c for c, _ in jobs}
    assert {id(case) for _, case in jobs} == {id(case) for case in cases}
    got = emulate_strided_many([case.job(c) for c, case in jobs])
    bad = [f"{c.key} {case.problem}" for (c, case), out in zip(jobs, got) if not np.array_equal(out, case.want)]
    assert not bad, bad[:5]
    return len(jobs)


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_tile_and_vec_index_math_matches_numpy(e):
    rng = np.random.default_rng(e)
    space = strided_space(e)
    tiles, cases = [c for c in space if c.variant == "tile"], tile_cases(rng, e)
    assert any(case.problem.sci != e for case in cases) and any(case.problem.sci < 0 or any(
        d.src < 0 for d in case.problem.batch) for case in cases)
    assert run_cases(tiles, cases) == len(tiles) * len(cases)   # the tile family runs every case
    vecs = [c for c in space if c.variant == "vec"]
    run_cases(vecs, vec_cases(rng, e, max(c.tile_rows for c in vecs), max(c.tile_cols for c in vecs)))


@pytest.mark.parametrize("e", [1, 2, 4])
def test_shift_index_math_matches_numpy(e):
    rng = np.random.default_rng(200 + e)
    shifts = [c for c in strided_space(e) if c.variant == "shift"]
    cases = shift_cases(rng, e, max(c.tile_rows for c in shifts), max(c.tile_cols for c in shifts))
    assert any(c.problem.ldi % 16 and c.problem.ldo % 16 for c in cases)   # no row of them vector-aligned
    assert run_cases(shifts, cases) == len(shifts) * len(cases)


@pytest.mark.parametrize("e", [1, 2, 4])
def test_strips_of_shift_tiles_match_numpy(e):
    """KernelConfig.strip: a block moves 2 or 8 shift tiles side by side, each
    tile's row segments starting in the sector where the last one's ended
    (moved in shared memory, not read again), at every row alignment; strips
    of full tiles, strips cut short by the matrix's last columns, edge tiles of
    a column or a few rows."""
    rng = np.random.default_rng(230 + e)
    shifts = [c for c in strided_space(e) if c.variant == "shift"]
    strips = [dataclasses.replace(c, strip=k) for c in shifts for k in (2, 8)]
    tr, tc = max(c.tile_rows for c in shifts), max(c.tile_cols for c in shifts)
    cases = shift_cases(rng, e, tr, tc) + [Case(rng, (2, tr + 3, 9 * tc + 1), (0, 2, 1), e, in_pad=5)]
    assert run_cases(strips, cases) == len(strips) * len(cases)


def seam_cases(rng, e, tr: int, tc: int):
    """Orders whose output rows follow one another along a batch dimension
    (its output stride the row's bytes): (2, 1, 0) of 3-D and 4-D shapes, rows
    of one tile and a bit, of several tiles and a few rows (fewer than an
    output vector: the bottom tile's rows are the seams'), a flipped batch
    axis (a negative input stride to the previous matrix), and rows too short
    for seams (under two vectors)."""
    ko = 16 // e
    return [Case(rng, (tc + 5, 3, tr + 9), (2, 1, 0), e), Case(rng, (2 * tr + ko - 1, 5, 37), (2, 1, 0), e),
            Case(rng, (tr + 1, 4, 2 * tc + 7), (2, 1, 0), e, in_pad=1),
            Case(rng, (3, 2, 67, 2 * tc + 1), (3, 0, 1, 2), e, flip=True),
            Case(rng, (2 * ko - 1, 6, tc + 3), (2, 1, 0), e)]


@pytest.mark.parametrize("e", [1, 2, 4])
def test_seams_match_numpy(e):
    """KernelConfig.seam: a strip at its matrix's top also reads the previous
    matrix's last rows and writes the vector two output rows share whole; a
    bottom tile leaves it, and one of fewer rows than an output vector writes
    nothing. Every byte of the output buffer checked, over the shift cases and
    seam_cases, for every strided shift tile at strips 2 and 8."""
    rng = np.random.default_rng(330 + e)
    shifts = [c for c in strided_space(e) if c.variant == "shift"]
    seams = [dataclasses.replace(c, strip=k, seam=1) for c in shifts for k in (2, 8)]
    tr, tc = max(c.tile_rows for c in shifts), max(c.tile_cols for c in shifts)
    cases = seam_cases(rng, e, tr, tc) + shift_cases(rng, e, tr, tc)
    assert sum(any(d.dst == c.problem.m * e for d in c.problem.batch) for c in cases) >= 5
    assert run_cases(seams, cases) == len(seams) * len(cases)


def test_strips_run_dense_transposes_as_their_dense_tile():
    """A dense (B, M, N) transpose that transpose() runs on a strided config
    (kernels.strided.dense_tile: what a dense record's strip of shift tiles
    launches with) is np.transpose of the input, every byte of the output
    buffer checked: odd sides, a batch, strips cut short."""
    from autotrans.kernels.strided import dense_problems, dense_tile
    rng = np.random.default_rng(260)
    jobs, wants = [], []
    for key in ("shift:e1:256x64:t256:v16:r4:p4:none:col:s8:strided",
                "shift:e2:128x64:t256:v16:r2:p2:none:col:s4:strided",
                "shift:e4:64x64:t256:v16:r1:p1:none:col:s2:strided"):
        cfg = KernelConfig.from_key(key)
        e = cfg.elem_bytes
        for bmn in ((1, cfg.tile_rows + 5, 3 * cfg.tile_cols * cfg.strip + 7), (2, 37, cfg.tile_cols + 3)):
            assert dense_problems(cfg, bmn, 16) == []
            x = rng.integers(0, 256, int(np.prod(bmn)) * e, dtype=np.uint8)
            want = np.full(x.size + 2 * 16, POISON, np.uint8)
            want[16:16 + x.size] = x.view(f"V{e}").reshape(bmn).transpose(0, 2, 1).reshape(-1).view(np.uint8)
            jobs.append((cfg, dense_tile(bmn, e), x, np.full(want.size, POISON, np.uint8), 0, 16))
            wants.append(want)
    got = emulate_strided_many(jobs)
    assert all(np.array_equal(g, w) for g, w in zip(got, wants))


def test_shift_takes_no_strided_columns_nor_wide_elements():
    case = Case(np.random.default_rng(5), (2, 133, 69), (0, 2, 1), 2, sci_mult=2)
    assert any("column pitch must be the element size" in w for w in strided_problems(SHIFT, case.problem, 16))
    assert strided_problems(SHIFT, Case(np.random.default_rng(5), (3, 37, 45), (0, 2, 1), 2).problem, 16) == []
    assert strided_problems(SHIFT, Case(np.random.default_rng(5), (3, 37, 45), (0, 2, 1), 2).problem, 1) == [
        "pointers must be 2-byte aligned"]
    assert [c for c in strided_space(4, cast="f32>bf16") if c.variant == "shift"]   # casts of 1-4 B elements
    assert not [c for c in strided_space(4, cast="f32>f64") if c.variant == "shift"]
    assert not [c for c in strided_space(8) if c.variant == "shift"]


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_rows_index_math_matches_numpy(e):
    rng = np.random.default_rng(100 + e)
    cases = rows_cases(rng, e)
    assert all(isinstance(c.problem, RowsProblem) for c in cases)
    assert {len(c.problem.rows) for c in cases} >= {0, 1, 3, 4}
    run_cases([c for c in strided_space(e) if c.variant == "rows"], cases)


def test_row_sized_rows_tiles_move_odd_rows_exactly():
    """A rows tile as wide as a row of 263 float32 rounded to its 32 lanes
    (288: 9 vectors a lane, one block a row) or of 70 int8 (96: 3 a lane);
    other widths must be whole vectors of 32 lanes."""
    rng = np.random.default_rng(7)
    with pytest.raises(ValueError, match="whole vectors of 32 lanes"):
        KernelConfig.from_key("rows:e4:4x280:t128:v4:r1:p0:none:row:strided")
    f32 = [KernelConfig.from_key(f"rows:e4:{tr}x288:t{nt}:v4:r1:p0:none:row:strided")
           for tr, nt in ((4, 128), (8, 256))]
    assert f32[0].family.geometry(f32[0]) == families.of("rows").Geometry(288, 32, 4, 1, 9)
    cases = [Case(rng, (5, 7, 263), (1, 0, 2), 4), Case(rng, (3, 2, 4, 263), (2, 0, 1, 3), 4, in_pad=1, out_pad=3)]
    assert run_cases(f32, cases) == 4
    i8 = [KernelConfig.from_key("rows:e1:8x96:t256:v1:r1:p0:none:row:strided")]
    assert run_cases(i8, [Case(rng, (9, 5, 70), (1, 0, 2), 1), Case(rng, (4, 3, 5, 70), (0, 2, 1, 3), 1)]) == 2
    f16 = [Case(rng, (2, 9, 3, 67), (0, 2, 1, 3), 2), Case(rng, (5, 7, 35), (1, 0, 2), 2, in_pad=1)]
    sized = {c for case in f16 for c in problem_space(case.problem)}
    assert {"rows:e2:8x96:t64:v2:r1:p0:none:row:strided", "rows:e2:8x64:t64:v2:r1:p0:none:row:strided"} <= {
        c.key for c in sized}
    assert run_cases(sorted(sized, key=lambda c: c.key), f16) >= len(f16)


def test_the_check_sees_a_wrong_pitch():
    """A problem whose output pitch is off by one element lands elsewhere: the
    buffer comparison catches it (the checks above can fail)."""
    import dataclasses
    case = Case(np.random.default_rng(7), (3, 37, 45), (0, 2, 1), 4, out_pad=1)
    good = emulate_strided(*case.job(TILE))
    assert np.array_equal(good, case.want)
    case.problem = dataclasses.replace(case.problem, ldo=case.problem.ldo - 4)
    assert not np.array_equal(emulate_strided(*case.job(TILE)), case.want)


def test_the_emulator_stops_a_misaligned_or_out_of_bounds_access(tmp_path):
    """Past Python's checks (emulate_strided refuses both), the emulator itself
    ends a launch whose global access is misaligned or outside its buffers, as
    the GPU would fault: 16-byte stores 4 bytes off, and an output buffer 16
    bytes short."""
    from autotrans.emulate.emulator import _run, build
    case = Case(np.random.default_rng(2), (2, 37, 3, 4), (0, 2, 1, 3), 4)    # rows of 16 bytes
    assert not strided_problems(ROWS, case.problem, 16)
    exe = build([ROWS])
    (tmp_path / "args").write_bytes(pack(case.problem, 0, 0))
    (tmp_path / "in").write_bytes(case.src.tobytes())
    for out, off in ((case.dst, case.dst_offset + 4), (case.dst[:-PAD - 16], case.dst_offset)):
        (tmp_path / "out").write_bytes(out.tobytes())
        with pytest.raises(RuntimeError, match="global store out of bounds or misaligned"):
            _run(exe, [f"strided {ROWS.name} args in {case.src_offset} out {off}\n"], tmp_path)
    (tmp_path / "out").write_bytes(case.dst.tobytes())
    assert _run(exe, [f"strided {ROWS.name} args in {case.src_offset} out {case.dst_offset}\n"], tmp_path)


def test_emulator_refuses_what_a_config_cannot_run():
    rng = np.random.default_rng(3)
    case = Case(rng, (3, 37, 45), (0, 2, 1), 4)   # rows of 180 bytes: not 16-byte aligned
    with pytest.raises(ValueError, match="multiples of vec_bytes"):
        emulate_strided(*case.job(VEC))
    with pytest.raises(ValueError, match="outside the 8-byte destination buffer"):
        emulate_strided(TILE, case.problem, case.src, np.zeros(8, np.uint8), case.src_offset, 0)
    with pytest.raises(ValueError, match="pointers must be 4-byte aligned"):
        emulate_strided(TILE, case.problem, case.src, case.dst, case.src_offset + 2, case.dst_offset)
    with pytest.raises(ValueError, match="dense config"):
        emulate_strided(KernelConfig("tile", 4, 32, 32, 256), *case.job(TILE)[1:])
    with pytest.raises(ValueError, match="strided config"):
        emulate(TILE, np.zeros((4, 4), np.float32))
    with pytest.raises(TypeError, match="1-D uint8"):
        emulate_strided(TILE, case.problem, case.src.view(np.float32), case.dst, 0, 0)
