"""The benchmark (tools/bench/, benchmarks/*.py): its cases, the shipped
grid, the result file, target evaluation, the markdown report and the README
table, all on the CPU; roofline.cu compiled with the real nvcc; and, on a GPU,
one small case end to end."""
from __future__ import annotations

import importlib.util
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autotrans.api.select import shape_class
from autotrans.core.problem import ELEM_SIZES
from autotrans.tools import bench as bm
from autotrans.tools.bench import MIB, Case, Result, Row, check, gpu, suite
from autotrans.tools.bench.results import Entry

REPO = Path(__file__).resolve().parent.parent


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_script_{name}", REPO / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod          # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def _row_alignment(c: Case) -> int:
    """The widest power of two up to 16 that divides both row pitches in bytes."""
    _, m, n = c.bmn
    return max(a for a in (1, 2, 4, 8, 16) if (m * c.elem_bytes) % a == 0 and (n * c.elem_bytes) % a == 0)


# -- cases ---------------------------------------------------------------------


def test_zoo_has_at_least_60_distinct_cases_of_a_few_hundred_mib_at_most():
    cases = bm.zoo()
    assert len(cases) >= 60
    assert len({c.name for c in cases}) == len(cases)
    assert max(c.nbytes for c in cases + bm.held_out()) <= 256 * MIB
    assert not any(c.held_out for c in cases)


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_zoo_covers_every_element_size_in_every_size_band_and_layout(e):
    cases = [c for c in bm.zoo() if c.elem_bytes == e]
    assert {bm.band(c.nbytes) for c in cases} == set(bm.BANDS)
    assert any(len(c.shape) == 3 and c.shape[0] >= 64 for c in cases), "a batch of many small matrices"
    assert any(len(c.shape) == 3 and c.shape[0] <= 8 and c.nbytes >= 16 * MIB for c in cases), "a few large"
    skinny = [c for c in cases if min(c.bmn[1:]) <= 64 and len(c.shape) == 2]
    assert any(c.bmn[1] < c.bmn[2] for c in skinny) and any(c.bmn[1] > c.bmn[2] for c in skinny)
    if e < 16:
        assert any(not c.aligned for c in cases), "rows that are not 16-byte aligned"


def test_zoo_covers_every_class_with_the_shapes_the_issue_names():
    cases = bm.zoo()
    assert {k for c in cases for k in c.classes} == set(bm.CLASSES)
    names = {c.name for c in cases}
    for n in ("1024x1024:float32", "17x100003:float16", "50257x768:float32", "32000x4096:float16",
              "4097x4095:int8", "4097x4095:float16", "4097x4095:float32"):
        assert n in names
    small = [c for c in cases if "small" in c.classes]
    assert small and all(c.nbytes <= MIB for c in small)
    prime = [c for c in cases if "prime" in c.classes]
    assert all(_is_prime(d) for c in prime for d in c.bmn[1:] if d > 17)


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % p for p in range(2, math.isqrt(n) + 1))


def test_held_out_shapes_are_neither_in_the_grid_nor_in_the_zoo():
    held = bm.held_out()
    grid = {(c.bmn, c.elem_bytes) for c in bm.grid()}
    zoo = {(c.bmn, c.elem_bytes) for c in bm.zoo()}
    assert len(held) >= 10 and all(c.held_out for c in held)
    assert {c.elem_bytes for c in held} == set(ELEM_SIZES)
    assert [c.name for c in held if (c.bmn, c.elem_bytes) in grid] == []
    assert [c.name for c in held if (c.bmn, c.elem_bytes) in zoo] == []


def test_quick_is_a_subset_covering_every_element_size():
    every = {c.name for c in bm.zoo() + bm.held_out()}
    q = bm.quick()
    assert 10 <= len(q) <= 25 and {c.name for c in q} <= every
    assert {c.elem_bytes for c in q} == set(ELEM_SIZES) and any(c.held_out for c in q)


def test_parse_cases_reads_lines_and_rejects_bad_ones():
    cases = bm.parse_cases("  # comment\n4x8x16 int8,float32 batched,llm  # per head\n")
    assert [c.name for c in cases] == ["4x8x16:int8", "4x8x16:float32"]
    assert cases[0].classes == ("batched", "llm") and cases[0].out_shape == (4, 16, 8)
    with pytest.raises((TypeError, ValueError)):
        bm.parse_cases("8x8 object square")
    with pytest.raises(ValueError):
        bm.parse_cases("8x0 int8 square")


# -- the shipped grid ----------------------------------------------------------


def test_grid_alignment_tags_are_the_rows_real_alignment():
    for c in bm.grid():
        tag = [k for k in c.classes if k.startswith("align")]
        if tag:
            want = int(tag[0][5:])
            got = _row_alignment(c)
            assert (got >= 16) if want == 16 else got == want, (c.name, got)


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_grid_covers_the_classes_for_every_element_size(e):
    cases = [c for c in bm.grid() if c.elem_bytes == e]
    aligned = [c for c in cases if c.aligned]
    squares = [c.nbytes for c in aligned if "square" in c.classes]
    for size in bm.GRID_SQUARES:                                     # a few tiles .. far beyond L2
        assert any(abs(n / size - 1) < 0.05 for n in squares), size
    assert bm.GRID_SQUARES[0] < MIB and bm.GRID_SQUARES[-1] >= 128 * MIB
    rect = [c for c in aligned if "rect" in c.classes]
    assert any(c.bmn[1] > 4 * c.bmn[2] for c in rect) and any(c.bmn[2] > 4 * c.bmn[1] for c in rect)
    skinny = [c for c in cases if "skinny" in c.classes]
    assert any(c.bmn[2] < 64 for c in skinny) and any(c.bmn[1] < 64 for c in skinny)
    assert any(c.bmn[0] >= 64 for c in cases) and any(1 < c.bmn[0] <= 8 for c in cases)
    assert {_row_alignment(c) for c in cases} == {a for a in (1, 2, 4, 8, 16) if a >= e}


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_grid_has_long_rectangles_both_ways_in_other_size_bands_than_the_aspect_8_ones(e):
    """Tall and wide shapes of aspect about 64 (a side of a few hundred
    elements), aligned and (below 16-byte elements) odd, each in a size band
    (select.size_band) that no aspect-8 rectangle of its alignment class holds."""
    from autotrans.api.select import size_band
    l2 = 50 * MIB
    rects = [c for c in bm.grid() if c.elem_bytes == e and "rect" in c.classes]
    long = [c for c in rects if "long" in c.classes]
    for c in long:
        _, m, n = c.bmn
        assert 48 <= max(m / n, n / m) <= 80, c.name
        others = {size_band(r.bmn, e, l2) for r in rects
                  if r.aligned == c.aligned and not {"long", "vlong"} & set(r.classes)}
        assert size_band(c.bmn, e, l2) not in others, c.name
    assert sorted((c.aligned, c.bmn[1] > c.bmn[2]) for c in long) == \
        sorted([(True, True), (True, False)] + ([(False, True), (False, False)] if e < 16 else []))


@pytest.mark.parametrize("e", [1, 2, 4, 8])
def test_grid_has_very_long_odd_rectangles_both_ways(e):
    """Tall and wide shapes of aspect about 512 (what 3-D orders fuse into), rows
    aligned to the element size only, 64 MiB, a side of 128-362 elements."""
    vlong = [c for c in bm.grid() if c.elem_bytes == e and "vlong" in c.classes]
    assert sorted(c.bmn[1] > c.bmn[2] for c in vlong) == [False, True]
    for c in vlong:
        _, m, n = c.bmn
        assert 400 <= max(m / n, n / m) <= 640 and 100 <= min(m, n) <= 400 and not c.aligned, c.name
        assert 60 * MIB <= c.nbytes <= 68 * MIB and min(m, n) % 2 == 1


def test_every_zoo_and_held_out_shape_class_has_a_grid_shape():
    """choose() prefers tuned shapes of the same (alignment, skinny, aspect)
    class: the grid has one for every case the benchmark runs."""
    have = {(c.elem_bytes, shape_class(c.bmn, c.elem_bytes)) for c in bm.grid()}
    missing = [c.name for c in bm.zoo() + bm.held_out() if (c.elem_bytes, shape_class(c.bmn, c.elem_bytes)) not in have]
    assert missing == []


def test_grid_is_small_enough_to_tune_in_about_six_minutes():
    """About 1.5 s a shape with compiled kernels (~6 s for the first of an
    element size and alignment): at most ~180 shapes, none over 128 MiB."""
    g = bm.grid()
    assert 60 <= len(g) <= 180
    assert len({(c.bmn, c.elem_bytes) for c in g}) == len(g)
    assert max(c.nbytes for c in g) <= 130 * MIB


# -- fill masks: finite, normal floats, and their complements too ---------------


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
def test_fill_masks_make_finite_normal_floats_and_complements(dtype):
    and_even, or_even, and_odd, or_odd = gpu.fill_masks(dtype)
    words = np.random.default_rng(1).integers(0, 2 ** 32, 1 << 16, dtype=np.uint64).astype(np.uint32)
    masked = words.copy()
    masked[0::2] = (masked[0::2] & and_even) | or_even
    masked[1::2] = (masked[1::2] & and_odd) | or_odd
    dt = np.dtype(dtype)
    part = np.dtype(f"f{dt.itemsize // 2}") if dt.kind == "c" else dt
    for w in (masked, ~masked):
        v = w.view(part)
        assert np.isfinite(v).all()
        assert (np.abs(v) >= np.finfo(part).tiny).all()       # normal: no zero, no subnormal


def test_fill_masks_leave_integers_alone():
    assert gpu.fill_masks("int8") == gpu.fill_masks("uint16") == (0xFFFFFFFF, 0, 0xFFFFFFFF, 0)


# -- rows, targets, the report -------------------------------------------------


def ok(us, iqr=0.02, **kw) -> Result:
    return Result("ok", us, us * (1 - iqr), us * (1 + iqr), 25, **kw)


def make_row(shape, dtype, tuned, *, memcpy, copy16=None, untuned=None, peers=None, held_out=False,
             untuned_source="nearest") -> dict:
    """A result row as the harness writes it (Row.to_dict of real Results)."""
    res = {"tuned": ok(tuned, config="vec:e4:64x64:t256:v16:r4:p0:xor:col", source="exact", setup_s=1.4),
           "untuned": ok(untuned or tuned, config="vec:e4:64x64:t256:v16:r4:p0:xor:col",
                         source=untuned_source, note="nearest tuned shape 1024x1024"),
           "memcpy": ok(memcpy), "copy16": ok(copy16 or memcpy * 1.01)}
    for k, v in (peers or {}).items():
        res[k] = v if isinstance(v, Result) else ok(v)
    return Row(Case(shape, dtype, ("square",), held_out), res, spin_us=20.0, seconds=2.0).to_dict()


def checks_of(row) -> dict:
    return {c.target: c for c in bm.evaluate(row)}


def test_row_dict_holds_each_contender_and_the_roofline():
    row = make_row((8192, 8192), "float32", 140.0, memcpy=136.0, copy16=134.0, peers={"torch": 500.0})
    assert row["name"] == "8192x8192:float32" and row["nbytes"] == 256 * MIB and row["band"] == "large"
    assert row["roofline"]["by"] == "copy16" and row["roofline"]["us"] == 134.0
    t = row["results"]["tuned"]
    assert t["gbps"] == pytest.approx(2 * 256 * MIB / 140e-6 / 1e9)
    assert t["frac_roofline"] == pytest.approx(134 / 140) and t["frac_datasheet"] is None   # make_row names no GPU
    assert row["autotrans_us"] == row["tuned_us"] == 140.0 and row["torch_us"] == 500.0   # `autotrans bench` keys
    json.dumps(row, allow_nan=False)


def test_datasheet_fraction_is_over_the_measured_gpus_own_bandwidth():
    assert bm.datasheet_gbps("NVIDIA H200") == 4800 and bm.datasheet_gbps("NVIDIA H100 80GB HBM3") == 3350
    assert bm.datasheet_gbps("NVIDIA H100 PCIe") == 2000 and bm.datasheet_gbps("Tesla T4") is None
    case = Case((8192, 8192), "float32", ("square",), False)
    row = Row(case, {"tuned": ok(140.0), "memcpy": ok(136.0)}, datasheet_gbps=3350.0).to_dict()
    t = row["results"]["tuned"]
    assert t["frac_datasheet"] == pytest.approx(t["gbps"] / 3350) and t["frac_datasheet"] > 0.6
    assert f"| {t['frac_datasheet']:.3f} |" in bm.markdown([row]) and "of datasheet" in bm.markdown([row])
    meta = {"gpu": "NVIDIA H100 80GB HBM3", "datasheet_gbps": 3350.0}
    assert "datasheet 3.35 TB/s" in bm.report(bm.new_doc(meta))


def test_peer_target_needs_tuned_at_least_as_fast_as_the_best_peer():
    win = make_row((4096, 4096), "float32", 40.0, memcpy=39.0, peers={"torch": 150.0, "torch_compile": 41.0})
    c = checks_of(win)["peer"]
    assert c.met is True and c.value == pytest.approx(41 / 40) and "torch.compile" in c.note
    lose = make_row((4096, 4096), "float32", 40.0, memcpy=39.0, peers={"torch_compile": 39.9})
    c = checks_of(lose)["peer"]
    assert c.met is False and c.value == pytest.approx(39.9 / 40) and "IQRs overlap" in c.note
    far = make_row((4096, 4096), "float32", 40.0, memcpy=39.0, peers={"cupy": 20.0})
    assert "IQRs overlap" not in checks_of(far)["peer"].note


def test_peers_that_did_not_run_are_left_out_of_the_peer_target():
    row = make_row((1024, 1024), "float32", 5.0, memcpy=4.5,
                   peers={"torch": Result("missing", note="No module named 'torch'"),
                          "geam": Result("wrong", note="12 of 4194304 output bytes wrong"), "cupy": 7.0})
    c = checks_of(row)["peer"]
    assert c.met is True and c.value == pytest.approx(7 / 5)
    none = make_row((1024, 1024), "float32", 5.0, memcpy=4.5, peers={"torch": Result("missing")})
    assert checks_of(none)["peer"].met is None


class _Pointed:
    """What a framework hands back: a C-contiguous array of ``shape`` at device address ``ptr``."""

    def __init__(self, ptr, shape):
        self.ptr, self.shape = ptr, shape

    def data_ptr(self):
        return self.ptr

    def is_contiguous(self):
        return True


def test_a_peer_returning_its_input_is_a_view_not_a_transpose():
    """torch.compile's t.mT.contiguous() of a (N, 1) tensor is the tensor
    itself: the check calls that a view (not timed), and the peer target
    counts only the peers that moved bytes."""
    from types import SimpleNamespace
    case, data = Case((4096, 1), "float32"), SimpleNamespace(x=0x7000_0000, xc=0x7100_0000)
    viewer = Entry("torch_compile", lambda src: _Pointed(src, case.out_shape), into_y=False)
    assert check.output(None, viewer, case, data) == ("view", check.VIEW_NOTE)
    wrong_shape = Entry("cupy", lambda src: _Pointed(src, case.shape), into_y=False)
    assert check.output(None, wrong_shape, case, data)[0] == "wrong"
    row = make_row((4096, 1), "float32", 5.0, memcpy=4.5,
                   peers={"torch": 6.0, "torch_compile": Result("view", note=check.VIEW_NOTE)})
    c = checks_of(row)["peer"]
    assert c.met is True and c.value == pytest.approx(6 / 5) and "torch eager" in c.note
    assert "view" in bm.markdown([row]).splitlines()[2]


@pytest.mark.parametrize("nbytes_shape, dtype, frac, met", [
    ((8192, 8192), "float32", 0.93, True), ((8192, 8192), "float32", 0.91, False),   # >= 16 MiB: 0.92
    ((1024, 1024), "float32", 0.86, True), ((1024, 1024), "float32", 0.84, False),   # 1-16 MiB: 0.85
    ((256, 256), "float32", 0.30, None),                                              # < 1 MiB: peer only
])
def test_roofline_target_depends_on_the_size_band(nbytes_shape, dtype, frac, met):
    row = make_row(nbytes_shape, dtype, 100.0, memcpy=100.0 * frac, copy16=200.0)
    c = checks_of(row)["roofline"]
    assert c.met is met
    if met is not None:
        assert c.value == pytest.approx(frac) and c.need in (0.92, 0.85)


def test_untuned_target_and_a_failed_tune_misses_everything():
    row = make_row((3000, 5000), "float32", 50.0, memcpy=48.0, untuned=54.0, held_out=True)
    c = checks_of(row)["untuned"]
    assert c.met is False and c.value == pytest.approx(50 / 54) and "nearest" in c.note
    assert checks_of(make_row((3000, 5000), "float32", 50.0, memcpy=48.0, untuned=52.0))["untuned"].met is True
    broken = Row(Case((64, 64), "float32"), {"tuned": Result("failed", note="no candidate passed")}).to_dict()
    assert [c.met for c in bm.evaluate(broken)] == [False, None, False]   # 16 KiB: no roofline target
    assert "no candidate passed" in checks_of(broken)["peer"].note


def test_figures_above_the_roofline_are_flagged():
    row = make_row((1024, 1024), "int8", 5.0, memcpy=6.0, peers={"cupy": 7.0})
    flagged = bm.flags(row)
    assert len(flagged) == 2 and all("of the roofline" in f for f in flagged)   # tuned and untuned
    assert bm.flags(make_row((1024, 1024), "int8", 6.5, memcpy=6.0)) == []


def _doc(rows, tune_times=()) -> dict:
    doc = bm.new_doc({"gpu": "NVIDIA H200", "fingerprint": "NVIDIA H200|sm_90|132sm|driver 580.1|cuda 13.0",
                      "sms": 132, "l2_bytes": 50 * MIB, "driver": "580.1", "cuda": "13.0", "reps": 25,
                      "flush_bytes": 256 * MIB, "date": "2026-12-01T10:00:00+00:00", "space": "abc-s3",
                      "peers": {"torch": "2.9.0", "missing": {"jax": "No module named 'jax'"}}})
    doc["rows"] = list(rows)
    doc["tune_times"] = list(tune_times)
    return doc


def _sample_rows():
    return [
        make_row((8192, 8192), "float32", 140.0, memcpy=136.0, peers={"torch": 500.0, "torch_compile": 145.0,
                                                                       "cupy": 510.0, "geam": 300.0}),
        make_row((4097, 4095), "float16", 40.0, memcpy=34.0, peers={"torch_compile": 38.0}),   # two misses
        make_row((256, 256), "float32", 2.4, memcpy=2.2, peers={"torch": 2.3, "jax": 9.0}),  # small: peer miss
        make_row((1024, 1024), "int8", 5.0, memcpy=6.0, peers={"cupy": 7.0}),            # flagged > 1.0
        make_row((3000, 5000), "float32", 50.0, memcpy=48.0, untuned=54.0, held_out=True,
                 peers={"torch": Result("missing", note="No module named 'torch'")}),
    ]


def test_report_states_every_missed_target_and_the_flags(tmp_path):
    path = tmp_path / "h200.json"
    tt = [{"name": "16384x16384:float32", "cold_s": 11.5, "warm_s": 1.6, "error": None}]
    bm.write(_doc(_sample_rows(), tt), path, tmp_path / "h200.md")
    doc = bm.load_results(path)
    md = (tmp_path / "h200.md").read_text()
    assert md == bm.report(doc)
    missed = md.split("### Missed targets")[1].split("###")[0]
    lines = [l for l in missed.splitlines() if l.startswith("- ")]
    assert len(lines) == 5, lines
    assert any(l.startswith("- 4097x4095:float16: best peer time / tuned time: 0.950 (need ≥ 1.00)")
               for l in lines)
    assert any(l.startswith("- 4097x4095:float16: tuned, fraction of the roofline: 0.850 (need ≥ 0.92)")
               for l in lines)
    assert any(l.startswith("- 256x256:float32: best peer time / tuned time: 0.958") for l in lines)
    assert any(l.startswith("- 3000x5000:float32: untuned, fraction of tuned: 0.926 (need ≥ 0.95)")
               for l in lines)
    assert any(l.startswith("- 16384x16384:float32: tune() cold, s: 11.500 (need ≤ 10)") for l in lines)
    assert "⚑ 1024x1024:int8: autotrans tuned 1.200 of the roofline" in md
    limits = md.split("### What limits the misses")[1].split("###")[0]
    assert [l for l in limits.splitlines() if l.startswith("- ")] == [f"- {t}" for t in bm.LIMITS]
    for r in doc["rows"]:
        assert f"| {r['name']} |" in md
    held = md.split("## Held-out shapes")[1].split("##")[0]
    assert "3000x5000:float32" in held and "8192x8192:float32" not in held
    assert "| torch eager | missing | 1 | 3000x5000:float32 | No module named 'torch' |" in md
    assert "Missing: jax (No module named 'jax')" in md
    table = md.split("## Targets")[1].split("###")[0]
    assert "| tuned ≥ 0.92 of roofline, cases ≥ 16 MiB | 3 | 2 | 1: 4097x4095:float16 | 0 |" in table
    assert "| below 1 MiB: tuned no slower than the best peer | 1 | 0 | 1: 256x256:float32 | 0 |" in table


def test_report_says_so_when_every_target_is_met():
    rows = [make_row((8192, 8192), "float32", 140.0, memcpy=136.0, peers={"torch": 500.0})]
    md = bm.report(_doc(rows, [{"name": "x", "cold_s": 6.0, "warm_s": 1.5, "error": None}]))
    assert "Every target is met in this run." in md and "No figure is above 1.0" in md
    assert "What limits the misses" not in md


def test_readme_table_from_a_written_json(tmp_path, capsys):
    path = tmp_path / "r.json"
    bm.write(_doc(_sample_rows()), path)
    readme = _script("readme_table")
    assert readme.main([str(path)]) == 0
    out = capsys.readouterr().out
    head = [l for l in out.splitlines() if l.startswith("| shape |")]
    assert head and "torch.compile" in head[0] and "XLA*" in head[0]
    body = [l for l in out.splitlines() if re.match(r"\| \d", l)]
    assert [l.split(" | ")[0] for l in body] == ["| 8192x8192", "| 4097x4095", "| 256x256"]  # README_CASES order
    assert "| 8192x8192 | float32 | 256 | 140.0 | **0.971** | 1.000 | 3.57 | 1.04 | 3.64 | 2.14 | – |" in out
    assert "Missed on: 4097x4095:float16" in out
    assert readme.main([str(path), "--all"]) == 0
    assert "| 3000x5000 |" in capsys.readouterr().out
    assert readme.main([str(path), "--cases", "256x256:float32"]) == 0
    assert [l for l in capsys.readouterr().out.splitlines() if re.match(r"\| \d", l)][0].startswith("| 256x256 |")


@pytest.mark.parametrize("text, why", [
    ("not json", "not a readable"), ('{"format": "other"}', "not an autotrans benchmark"),
    ('{"format": "autotrans-benchmark", "meta": {}, "rows": [{"name": 3}]}', "row 0"),
    ('{"format": "autotrans-benchmark", "meta": {}, "rows": [{"name": "a", "held_out": false, "nbytes": 8, '
     '"results": {"tuned": {"status": "ok", "median_us": -1}}}]}', "positive median_us"),
    ('{"format": "autotrans-benchmark", "meta": {}, "rows": [], "tune_times": [1]}', "tune_times"),
])
def test_load_results_rejects_what_is_not_a_result_file(tmp_path, text, why, capsys):
    p = tmp_path / "bad.json"
    p.write_text(text)
    with pytest.raises(ValueError, match=why):
        bm.load_results(p)
    assert _script("readme_table").main([str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("readme_table.py: error:") and err.count("\n") == 1


def test_resume_keeps_rows_only_of_the_same_gpu_and_space():
    old = _doc(_sample_rows())
    fresh = _doc([])
    fresh["meta"]["date"] = "2026-12-02T00:00:00+00:00"
    assert len(suite._resumed(fresh, json.loads(json.dumps(old)))["rows"]) == 5
    other = _doc([])
    other["meta"]["space"] = "def-s4"
    with pytest.raises(ValueError, match="cannot resume"):
        suite._resumed(other, old)


# -- the scripts without a GPU ---------------------------------------------------


def test_bench_script_lists_and_selects_cases(capsys):
    bench = _script("bench")
    assert bench.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith(f"{len(bm.zoo()) + len(bm.held_out())} cases")
    assert bench.main(["--list", "--cases", "^4097x4095:"]) == 0
    assert capsys.readouterr().out.strip().endswith("5 cases")
    assert bench.main(["--list", "--cases", "("]) == 2
    assert bench.default_name("NVIDIA H200") == "h200" and bench.default_name("NVIDIA H100 80GB HBM3") == "h100"


@pytest.mark.parametrize("script", sorted(str(p.relative_to(REPO / "benchmarks")) for pattern in ("*.py", "probes/*.py")
                                          for p in (REPO / "benchmarks").glob(pattern)))
def test_every_benchmark_script_answers_help_without_a_gpu(script):
    """Each script (probes/ too) imports and describes itself where PyCUDA and torch are missing."""
    r = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), "--help"],
                       capture_output=True, text=True, timeout=300, cwd=REPO)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith(f"usage: {Path(script).name}") and len(r.stdout.splitlines()) > 3


def test_grid_script_lists_the_grid(capsys):
    assert _script("grid").main(["--list"]) == 0
    out = capsys.readouterr().out
    assert f"\n{len(bm.grid())} shapes\n" in out
    assert out.strip().endswith(f"{len(bm.problem_grid())} strided problems")
    assert "2048x2048:complex64:1,0:conj" in out and "tile:e8:2048x2048" in out


def _bench_problems() -> list:
    """(name, (problem text, cast, epilogue), (problem_class, cast, epilogue)) of
    permute_bench.py's cases that run a strided problem."""
    from autotrans.api.permute import permutation_problem, view_problem
    from autotrans.api.strided_select import problem_class
    from autotrans.results.keys import problem_text
    out = []
    for name, shape, dtype, axes, view, *extra in _script("permute_bench").CASES:
        opts = extra[1] if len(extra) > 1 else {}
        if view is None:
            p, cast, epi = permutation_problem(shape, dtype, axes, conj=opts.get("conj", False), to=opts.get("to"))
        else:
            cols = view[-1]
            p, cast, epi = view_problem(shape, dtype, axes, (cols.start, cols.stop))
        if hasattr(p, "batch") or hasattr(p, "rows"):
            out.append((name, (problem_text(p), cast, epi), (problem_class(p), cast, epi)))
    return out


def test_problem_grid_is_strided_and_holds_out_the_permute_benchmark():
    """Every shipped problem runs a strided kernel; the (2, 1, 0) orders come in
    1, 2, 4 and 8 bytes, casts and conjugates are there; none is a problem of
    permute_bench.py's cases (whose untuned column then measures the nearest rule)."""
    from autotrans.api.strided_select import problem_class
    from autotrans.results.keys import problem_text
    cases = bm.problem_grid()
    assert len({c.name for c in cases}) == len(cases)
    found = {c.name: c.problem() for c in cases}
    assert all(problem_class(p)[0] in ("TileProblem", "RowsProblem", "NdTileProblem") for p, _, _ in found.values())
    assert {found[c.name][0].elem for c in cases if c.axes == (2, 1, 0)} == {1, 2, 4, 8, 16}
    assert {cast for _, cast, _ in found.values()} == {"none", "f32>bf16", "f32>f16", "bf16>f32"}
    assert {epi for _, _, epi in found.values()} == {"none", "conj32", "conj64"}
    ours = {(problem_text(p), cast, epi) for p, cast, epi in found.values()}
    theirs = {text for _, text, _ in _bench_problems()}
    assert len(theirs) > 15 and ours.isdisjoint(theirs)


def test_every_permute_benchmark_problem_class_has_a_grid_problem():
    """As for transposes: each strided class (kind, element sizes, stride
    alignment, cast, epilogue) the benchmark runs has a shipped problem, so
    its untuned column takes a nearest tuned problem, never the rule alone."""
    from autotrans.api.strided_select import problem_class
    have = set()
    for c in bm.problem_grid():
        p, cast, epi = c.problem()
        have.add((problem_class(p), cast, epi))
    assert [name for name, _, cls in _bench_problems() if cls not in have] == []


# -- roofline.cu ------------------------------------------------------------------


def test_roofline_cu_compiles_with_nvcc(tmp_path):
    from autotrans.build.compile import compile_file
    from autotrans.core.paths import template_dir
    c = compile_file(template_dir() / "roofline.cu", "sm_90", root=tmp_path)
    image = c.image()
    for name in gpu.SIGNATURES:
        assert name.encode() in image
    assert compile_file(template_dir() / "roofline.cu", "sm_90", root=tmp_path).object == c.object


# -- on the GPU ---------------------------------------------------------------------


@pytest.mark.gpu
def test_one_case_end_to_end_on_the_gpu():
    """A small odd case without peers or tuning: the copies and the untuned
    kernel pass the bit-exact checks and are timed; a copy posing as a
    transpose is caught."""
    bench = bm.Bench(peers=False, tune=False, reps=5)
    try:
        row = bench.run_case(Case((67, 129), "float32")).to_dict()
        res = row["results"]
        assert res["tuned"]["status"] == "skipped" or res["tuned"]["status"] == "ok"
        for k in ("untuned", "memcpy", "copy16"):
            assert res[k]["status"] == "ok" and res[k]["n"] == 5 and res[k]["median_us"] > 0, res[k]
        assert row["roofline"]["us"] == min(res["memcpy"]["median_us"], res["copy16"]["median_us"])
        case = Case((67, 129), "float32")
        data = gpu.Data(bench.gpu, case)
        try:
            fake = Entry("fake", lambda src: (bench.gpu.copy16(data.y, src, case.nbytes), data.y)[1])
            status, why = check.output(bench.gpu, fake, case, data)
            assert status == "wrong" and "output bytes wrong" in why
            odd = case.nbytes - 13                # the copy kernel's scalar tail
            bench.gpu.copy16(data.y, data.x, odd)
            assert bench.gpu.copy_diff(data.y, data.x, odd) == 0
        finally:
            data.release()
    finally:
        bench.close()


@pytest.mark.gpu
def test_cupy_returning_its_input_on_a_side_of_1_is_a_view_on_the_gpu():
    """CuPy's ascontiguousarray of the swapped (4096, 1) array is the array
    itself: shown as a view, while torch eager (a copy into our buffer) is timed."""
    pytest.importorskip("cupy")
    bench = bm.Bench(jax=False, torch_compile=False, tune=False, reps=3)
    try:
        res = bench.run_case(Case((4096, 1), "float32")).to_dict()["results"]
    finally:
        bench.close()
    assert res["cupy"]["status"] == "view" and res["cupy"]["median_us"] is None, res["cupy"]
    assert res["untuned"]["status"] == "ok"
    assert res["torch"]["status"] in ("ok", "missing"), res["torch"]


def test_untuned_loo_reads_the_left_out_shapes_own_time_of_the_config_chosen_without_it():
    from conftest import H200, make_record

    from autotrans.api.select import Table
    from autotrans.core.device import Limits
    from autotrans.results.record import TuneRecord
    from autotrans.results.store import CacheKey
    from autotrans.tuning.space import space_id
    loo = _script("untuned_loo")
    pairs = []
    for shape, seed in (((1, 2048, 2048), 1), ((1, 4096, 4096), 2)):
        key = CacheKey(H200, space_id(), shape, 4)
        pairs.append((key, TuneRecord.from_json(make_record(shape, 4, H200, seed=seed), key)))
    rows = {r.shape: r for r in loo.leave_one_out(pairs)}
    (_, small), (_, big) = pairs
    left = rows[(1, 2048, 2048)]

    def without(shape, other):      # what choose() picks for shape from the other shape's record alone
        return Table([("shipped", *other)], 4, Limits()).choose(shape).config.key
    assert left.source == "nearest" and left.config == without((1, 2048, 2048), pairs[1])
    assert left.frac == pytest.approx(small.time_us / {c.key: c.median_us for c in small.candidates}[left.config])
    assert rows[(1, 4096, 4096)].config == without((1, 4096, 4096), pairs[0])
    text = loo.report(list(rows.values()), worst=1)
    assert "| all | 2 | 0 |" in text and "Worst 1:" in text


def test_untuned_loo_judges_each_gpu_model_on_its_own_results():
    """A left-out shape chooses from its own model's other shapes: the other
    model's record of the very same shape (distance 0) is not a candidate."""
    from conftest import A100, H200, make_record

    from autotrans.results.record import TuneRecord
    from autotrans.results.store import CacheKey
    from autotrans.tuning.space import space_id
    loo = _script("untuned_loo")
    pairs = []
    for dev, shape, seed in ((H200, (1, 2048, 2048), 1), (H200, (1, 4096, 4096), 2), (A100, (1, 2048, 2048), 3)):
        key = CacheKey(dev, space_id(), shape, 4)
        pairs.append((key, TuneRecord.from_json(make_record(shape, 4, dev, seed=seed), key)))
    groups = loo.models(pairs)
    assert list(groups) == sorted({A100.split("|")[0], H200.split("|")[0]})
    rows = loo.leave_one_out(pairs)
    assert [r.source for r in rows] == ["nearest", "nearest", "default"]   # the A100's shape has no other


def test_untuned_loo_does_not_read_two_launches_that_disagree_as_a_time():
    from autotrans.results.record import Candidate
    from autotrans.tuning.timing import Stats
    loo = _script("untuned_loo")

    def row(samples):
        s = Stats.of(samples)
        return Candidate("k", s.median_us, s.q1_us, s.q3_us, s.n, 1.0)
    assert loo.measured(row([7.24, 21.7])) is False          # an outlier the early stop once kept
    assert loo.measured(row([7.3, 7.5])) is True
    assert loo.measured(row([7.3, 30.0, 7.5, 7.4, 7.6])) is True     # five launches: the median is a time


def test_untuned_loo_covers_every_shipped_dense_shape(capsys):
    from autotrans.results.shipped import shipped_entries
    loo = _script("untuned_loo")
    rows = loo.leave_one_out(shipped_entries(REPO / "cache"))
    dense = [k for k, _ in shipped_entries(REPO / "cache") if len(getattr(k, "shape", ())) == 3]
    assert len(rows) == len(dense) > 100
    assert all(r.frac is None or r.frac > 0 for r in rows)


def test_untuned_loo_reports_each_shape_class_and_they_partition_the_shapes():
    """untuned_loo's report: a row per size band and per shape class (select.shape_class
    as choose() ranks it, and batched or not); the class rows' counts add up to all."""
    from autotrans.results.shipped import shipped_entries
    loo = _script("untuned_loo")
    rows = loo.leave_one_out(shipped_entries(REPO / "cache"))
    kinds = {loo.kind(r) for r in rows}
    assert {"16-byte rows, square", "odd rows, tall or wide", "16-byte rows, skinny, batched"} <= kinds
    text = loo.report(rows, 0)
    counts = [int(line.split("|")[2]) for line in text.splitlines() if line.split("|")[1].strip() in kinds]
    assert len(counts) == len(kinds) and sum(counts) == len(rows)
    assert loo.kind(loo.Loo((1, 4097, 64), 4, "nearest", "k", 1.0)) == "odd rows, tall or wide"
    assert loo.kind(loo.Loo((8, 16, 4096), 4, "nearest", "k", 1.0)) == "16-byte rows, skinny, batched"


# -- the permute benchmark's report ------------------------------------------------


def _permute_row(target, us, peers=(), same_bytes=None, exact=True):
    res = {"autotrans": {"median_us": us, "of_roofline": 100.0 / us}, "memcpy": {"median_us": 100.0, "of_roofline": 1.0}}
    res |= {k: {"median_us": v, "of_roofline": 100.0 / v} for k, v in peers}
    if same_bytes is not None:
        res["transpose() of the same bytes"] = {"median_us": same_bytes, "of_roofline": 100.0 / same_bytes}
    return {"name": "case", "shape": [4, 5, 6], "dtype": "float32", "axes": [2, 1, 0], "view": False,
            "target": target, "exact": exact, "mib": 1.0, "problem": "TileProblem", "results": res,
            "host_us": 10.0, "tuned": ""}


@pytest.mark.parametrize("row, want", [
    (_permute_row(">= 0.85", 110.0), []),                                           # 0.909 of the roofline
    (_permute_row(">= 0.92", 110.0), ["0.909 of the roofline (need >= 0.92)"]),
    (_permute_row(">= 0.85", 110.0, [("torch.compile", 105.0), ("cupy", 300.0)]), ["best peer / autotrans 0.955"]),
    (_permute_row(">= 0.85", 110.0, [("torch eager", 111.0)]), []),
    (_permute_row("transpose() +-3%", 110.0, same_bytes=108.0), []),               # 0.982: within 3%
    (_permute_row("transpose() +-3%", 110.0, same_bytes=105.0), ["transpose() of the same bytes / permute() 0.955"]),
    (_permute_row(">= torch, CuPy", 110.0, [("cupy", 120.0)]), []),
    (_permute_row(">= 0.85", 110.0, exact=False), ["output not bit-exact"]),
])
def test_permute_report_lists_what_each_case_misses(row, want):
    got = _script("permute_bench").misses(row)
    assert len(got) == len(want) and all(g.startswith(w) for g, w in zip(got, want))


def test_permute_readme_table_pairs_the_untuned_and_tuned_runs():
    pb = _script("permute_bench")
    untuned = _permute_row(">= 0.85", 110.0, [("torch.compile", 105.0), ("cupy", 300.0)])
    tuned = _permute_row(">= 0.85", 100.0, [("torch.compile", 104.0), ("cupy", 300.0)])
    for row in (untuned, tuned):
        for res in row["results"].values():
            res["of_roofline"] = 100.0 / res["median_us"]
    lone = dict(untuned, name="only untuned")
    table = pb.readme_table({"cases": [untuned, lone]}, {"cases": [tuned]})
    assert table.splitlines()[2] == "| case | 4x5x6 | float32 | (2, 1, 0) | 0.91 | 1.00 | — | 0.95 / 0.96 | 0.33 |"
    assert len(table.splitlines()) == 3                     # a case of one run only is left out


def test_permute_report_names_the_faster_copy_as_the_roofline():
    pb = _script("permute_bench")
    row = _permute_row(">= 0.85", 110.0)
    assert pb._roofline(row) == "100.0 (memcpy)"            # a run from before the 16-byte copy
    row["results"]["copy16"] = {"median_us": 96.5, "of_roofline": 1.0}
    assert pb._roofline(row) == "96.5 (copy16)"
    row["results"]["copy16"]["median_us"] = 101.0
    assert pb._roofline(row) == "100.0 (memcpy)"
    assert "| 100.0 (memcpy) | 110.0 |" in pb.markdown({"device": "GPU", "method": "m", "cases": [row]})


@pytest.mark.parametrize("stem", ["permute", "permute-tuned"])
def test_committed_permute_reports_are_their_json_rendered(stem):
    pb = _script("permute_bench")
    doc = json.loads((REPO / "benchmarks" / "results" / f"{stem}.json").read_text())
    text = pb.markdown(doc)
    assert (REPO / "benchmarks" / "results" / f"{stem}.md").read_text() == text
    n = sum(1 for r in doc["cases"] if pb.misses(r))
    assert f"## Targets missed: {n} of {len(doc['cases'])} cases" in text


def test_untuned_pool_holds_the_pick_and_the_default_and_only_the_shapes_candidates():
    from autotrans.tuning.space import admits, default_config
    up = _script("untuned_pool")
    shipped = up.Shipped()
    for case in up.cases()[::9]:
        cfgs = up.pool(shipped, case.bmn, case.elem_bytes)
        keys = [c.key for c in cfgs]
        assert len(keys) == len(set(keys)) <= 2 + (up.POOL_NEAR + up.POOL_CLASS + 1) * up.POOL_PER_ROW
        assert shipped.table(case.elem_bytes).choose(case.bmn).config.key in keys, case.name
        assert all(admits(c, case.bmn, shipped.limits) and not c.fixed for c in cfgs)
        default = default_config(case.bmn, case.elem_bytes, shipped.limits)
        assert default in cfgs or not admits(default, case.bmn, shipped.limits)


def test_untuned_pool_judges_the_pick_against_the_fastest_of_its_pool(tmp_path, capsys):
    up = _script("untuned_pool")
    shipped = up.Shipped()
    case = next(c for c in up.cases() if c.name == "4096x4096:float32")
    cfgs = up.pool(shipped, case.bmn, case.elem_bytes)
    pick = shipped.table(4).choose(case.bmn).config.key
    times = {c.key: {"median_us": 40.0 + i, "q1_us": 39.0, "q3_us": 41.0, "n": 15} for i, c in enumerate(cfgs)}
    times[pick]["median_us"] = 50.0
    best = min(times, key=lambda k: times[k]["median_us"])
    doc = {"format": up.FORMAT, "version": 1, "meta": {"space": "x", "limits": [1024, 232448]},
           "cases": [{"name": case.name, "bmn": list(case.bmn), "elem_bytes": 4, "times": times, "failed": {}},
                     {"name": "1x2x2:float32", "bmn": [1, 2, 2], "elem_bytes": 4, "failed": {},
                      "times": {"naive:e4:8x32:t256:v4:r1:p0:none:row": times[best]}}]}
    (picked, missed), = [up.judge(doc, shipped)]
    assert picked.config == pick and picked.frac == pytest.approx(times[best]["median_us"] / 50.0)
    assert picked.best == best and missed.frac is None
    dflt = up.default_config(case.bmn, 4, shipped.limits).key       # always in the pool
    assert picked.default == pytest.approx(times[best]["median_us"] / times[dflt]["median_us"])
    text = up.report([picked, missed], worst=1)
    assert "| all | 2 | 1 |" in text and case.name in text
    assert f"| {picked.default:.3f} | {picked.default:.2f} |" in text.splitlines()[2]
    f = tmp_path / "pool.json"
    f.write_text(json.dumps(doc))
    assert up.main(["--data", str(f)]) == 0 and "geomean best/pick" in capsys.readouterr().out


@pytest.mark.parametrize("doc, why", [
    ("[1, 2]", "not an autotrans-untuned-pool file"),
    ('{"format": "autotrans-untuned-pool", "meta": {}, "cases": []}', "meta.limits"),
    ('{"format": "autotrans-untuned-pool", "meta": {"limits": [1024, 1]}, "cases": [{"name": "a", "bmn": [1, 0, 2], '
     '"elem_bytes": 4, "times": {}}]}', "a malformed case"),
    ('{"format": "autotrans-untuned-pool", "meta": {"limits": [1024, 1]}, "cases": [{"name": "a", "bmn": [1, 2, 2], '
     '"elem_bytes": 4, "times": {"k": {"median_us": -1}}}]}', "a malformed case"),
    ("{", "not JSON"),
])
def test_untuned_pool_rejects_a_bad_data_file_in_one_line(tmp_path, capsys, doc, why):
    up = _script("untuned_pool")
    f = tmp_path / "pool.json"
    f.write_text(doc)
    assert up.main(["--data", str(f)]) == 2
    err = capsys.readouterr().err
    assert why in err and err.count("\n") == 1
    assert up.main(["--data", str(tmp_path / "none.json")]) == 2
    assert "--measure" in capsys.readouterr().err


def test_sectors_script_puts_each_tuned_kernels_sectors_beside_its_measured_fraction(tmp_path, capsys):
    sc = _script("sectors")
    rows = [make_row((512, 256), "float32", 10.0, memcpy=9.0),
            make_row((1024, 1), "float32", 3.0, memcpy=3.0)]
    rows[1]["results"]["tuned"]["config"] = "copy"             # a side of 1: no kernel to count
    f = tmp_path / "h.json"
    f.write_text(json.dumps(_doc(rows)))
    out = tmp_path / "s.md"
    assert sc.main(["--results", str(f), "--min-mib", "0", "--out", str(out)]) == 0
    table = [ln for ln in out.read_text().splitlines() if ln.startswith("| 512x256")]
    assert table == ["| 512x256:float32 | 0 | `vec:e4:64x64:t256:v16:r4:p0:xor:col` | 1.000 | 1.000 | 1.000 | 0.900 |"]
    assert "1024x1" not in out.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert sc.main(["--results", str(bad)]) == 2 and "not an autotrans benchmark result file" in capsys.readouterr().err


def test_untuned_pool_extra_configs_join_the_pools_they_can_run_and_are_reported_apart():
    up = _script("untuned_pool")
    shipped = up.Shipped()
    odd = next(c for c in up.cases() if c.name == "8191x8193:int8")
    aligned = next(c for c in up.cases() if c.name == "8192x8192:int8")
    extra = [k for k in up.WIDE_SHIFT if k.startswith("shift:e1:")]
    with_extra = [c.key for c in up.pool(shipped, odd.bmn, 1, up.WIDE_SHIFT)]
    assert set(extra) <= set(with_extra) and with_extra[:-len(extra)] == [c.key for c in up.pool(shipped, odd.bmn, 1)]
    assert not set(up.WIDE_SHIFT) & {c.key for c in up.pool(shipped, aligned.bmn, 1, up.WIDE_SHIFT)}  # shift: odd rows only
    t = lambda us: {"median_us": us, "q1_us": us, "q3_us": us, "n": 15}    # noqa: E731
    doc = {"meta": {"extra": extra}, "cases": [
        {"name": odd.name, "times": {extra[0]: t(40.0), with_extra[0]: t(44.0)}},
        {"name": aligned.name, "times": {"vec:e1:128x128:t256:v16:r4:p0:xor:col": t(38.0)}}]}
    text = up.extras_report(doc)
    assert f"- {odd.name}: `{extra[0]}` 40.00 µs" in text and "(1.100)" in text and aligned.name not in text
    assert up.extras_report({"meta": {}, "cases": doc["cases"]}) == ""


def test_sectors_script_counts_a_permute_runs_strided_kernels(tmp_path, capsys):
    sc = _script("sectors")
    case = {"name": "BSHD->BHSD", "shape": [2, 64, 4, 64], "dtype": "float16", "axes": [0, 2, 1, 3], "view": False,
            "tuned": "rows:e16:128x8:t256:v16:r1:p0:none:row:strided", "results": {"autotrans": {"of_roofline": 0.93}}}
    skipped = dict(case, name="batched transpose", tuned="transpose")          # transpose()'s kernel: not strided
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"device": "NVIDIA H200", "date": "2026-12-03", "cases": [case, skipped]}))
    out = tmp_path / "p.md"
    assert sc.main(["--permute", str(f), "--out", str(out)]) == 0
    rows = [ln for ln in out.read_text().splitlines() if ln.startswith("| BSHD")]
    assert rows == ["| BSHD->BHSD | 2x64x4x64 | 0,2,1,3 | float16 | RowsProblem | "
                    "`rows:e16:128x8:t256:v16:r1:p0:none:row:strided` | 1.000 | 1.000 | 1.000 | 0.930 |"]
    assert "batched transpose" not in out.read_text()
    assert "measured of memcpy |" in out.read_text()                      # a run of cudaMemcpy alone
    cast = dict(case, name="cast", shape=[64, 96], dtype="bfloat16->float32", axes=[1, 0],
                tuned="vec:e2:64x64:t256:v8:r2:p0:xor:col:strided:bf16>f32")   # NumPy knows no bfloat16
    assert sc.permute_line(cast).startswith("| cast | 64x96 | 1,0 | bfloat16->float32 | TileProblem | ")
    case["results"]["copy16"] = {"median_us": 1.0}
    f.write_text(json.dumps({"device": "NVIDIA H200", "date": "2026-12-03", "cases": [case]}))
    assert sc.main(["--permute", str(f), "--out", str(out)]) == 0
    assert "measured of the roofline |" in out.read_text() and "16-byte copy kernel" in out.read_text()
    f.write_text("[]")
    assert sc.main(["--permute", str(f)]) == 2 and "not a permute_bench result file" in capsys.readouterr().err


def test_permute_bench_cases_selects_by_label():
    pb = _script("permute_bench")
    assert pb.label(pb.CASES[0]) == "BSHD->BHSD 8x4096x16x64 float16 (0, 2, 1, 3)"
    assert [pb.label(c) for c in pb.selected(r"^3-D [a-z]")] == [
        "3-D int8 511x1031x257 int8 (2, 1, 0)", "3-D float16 263x509x257 float16 (2, 1, 0)"]
    assert pb.selected(None) == pb.CASES and pb.selected("no such case") == []


def test_permute_bench_refuses_a_bad_cases_pattern_in_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        _script("permute_bench").main(["--out", "unused", "--cases", "(["])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--cases: not a regular expression" in err and "Traceback" not in err


def test_strip_probe_offers_every_shift_candidate_in_strips_that_can_run_its_problem():
    """strip_probe's candidates for each case: the space's, then strips 2, 4, 8
    of each of its shift tiles, with seams and without, every one able to run
    the case's strided problem."""
    from autotrans.core.device import Limits
    from autotrans.core.layout import TileProblem
    from autotrans.tuning.strided import TUNE_ALIGN, _fit
    probe = _script("strip_probe")
    for case in probe.CASES + probe.SMALL:
        prob, cast = probe.problem_of(*case)
        cfgs, strips = probe.candidates(prob, cast)
        shifts = [c for c in cfgs if c.variant == "shift" and c.strip == 1]
        assert isinstance(prob, TileProblem) and shifts, probe.label(case)
        assert sorted((c.strip, c.seam) for c in cfgs if c.key in strips) == \
            sorted([(k, m) for k in probe.STRIPS for m in (0, 1)] * len(shifts))
        assert not [c.key for c in cfgs if _fit(c, prob, TUNE_ALIGN, Limits(smem_per_block=232448), cast=cast)]


def test_strip_probe_dense_offers_the_dense_space_and_strips_that_transpose_each_shape():
    """strip_probe --dense: tune() of each odd shape over its dense space plus
    strided shift tiles and strips 2, 4, 8 of each, all of which tune() takes
    for the shape (each runs it as its dense_tile)."""
    from autotrans.tuning.runner import _given
    from autotrans.tuning.space import candidates
    probe = _script("strip_probe")
    for (m, n), dt in probe.DENSE:
        cfgs, keys = probe.dense_candidates(m, n, dt)
        e = np.dtype(dt).itemsize
        strided = [c for c in cfgs if c.key in keys]
        assert cfgs[:len(cfgs) - len(strided)] == candidates((1, m, n), e)
        assert {c.layout for c in strided} == {"strided"} and {c.variant for c in strided} == {"shift"}
        assert sorted({c.strip for c in strided}) == [1, *probe.STRIPS]
        assert _given(cfgs, (1, m, n)) == cfgs


def test_nd_probe_sectors_bounds_every_fused_candidate_and_names_the_best_of_each_variant(tmp_path, capsys):
    """nd_probe --sectors (no GPU): every ndshift and ndtile candidate of a
    case's fused problem gets its emulator sector bound, in (0, 1]; each
    variant's best is the maximum of its own; the untuned pick is among them;
    the JSON is written."""
    probe = _script("nd_probe")
    r = probe.bounds((5, 33, 7, 61), "int8", (3, 2, 1, 0))
    assert r["problem"] == "NdTileProblem" and r["m"] * r["n"] == 5 * 33 * 7 * 61
    assert {k.split(":")[0] for k in r["all"]} == {"ndshift", "ndtile"}
    assert all(0 < f <= 1 for f in r["all"].values())
    for v in ("ndshift", "ndtile"):
        mine = {k: f for k, f in r["all"].items() if k.startswith(v + ":")}
        assert r[v]["fraction"] == max(mine.values()) and mine[r[v]["key"]] == r[v]["fraction"]
    assert r["untuned"]["fraction"] == r["all"][r["untuned"]["key"]]
    probe.CASES = [((5, 33, 7, 61), "int8", (3, 2, 1, 0)), ((9, 8, 7), "float16", (2, 1, 0))]
    assert probe.main(["--out", str(tmp_path), "--sectors", "--cases", "int8"]) == 0
    rows = json.loads((tmp_path / "nd_bounds.json").read_text())
    assert [x["case"] for x in rows] == ["5x33x7x61 int8 (3, 2, 1, 0)"] and rows[0]["all"] == r["all"]
    assert "ndshift" in capsys.readouterr().out
    rows[0]["all"].pop(r["untuned"]["key"])                   # --table: today's rule's pick, its fraction blank
    assert probe.main(["--table", str(tmp_path / "nd_bounds.json"), "--title", "T"]) == 0
    head, *_, last, _, fit = capsys.readouterr().out.splitlines()
    assert head == "# nd_probe.py T" and last.startswith(f"| 5x33x7x61 int8 (3, 2, 1, 0) | {r['m']}x{r['n']} | ")
    assert last.endswith(f"| {r['untuned']['fraction']:.3f} `{r['untuned']['key']}` |")
    want = r["untuned"]["fraction"] / r["ndshift"]["fraction"]                  # the rule's pick is ndshift here
    assert r["untuned"]["key"].startswith("ndshift:") and f"1 of 1 cases: its pick runs at {want:.3f}" in fit
    assert probe.table(rows).splitlines()[-3].endswith("| — |")
    assert probe.table(rows).splitlines()[-1] == "The rule at rendering picks ndshift on none of these cases."
    odd = probe.bounds((3, 65, 9, 41), "float16", (2, 0, 3, 1), odd=True)   # --odd: 72/112-row ndshift tiles too
    base = set(probe.bounds((3, 65, 9, 41), "float16", (2, 0, 3, 1))["all"])
    extra = set(odd["all"]) - base
    assert extra == {c.key for c in probe.odd_configs(probe.fused_problem((3, 65, 9, 41), "float16", (2, 0, 3, 1)))}
    assert {k.split(":")[2] for k in extra} == {"72x64", "112x64"} and all(0 < odd["all"][k] <= 1 for k in extra)
    assert "80x64" in {k.split(":")[2] for k in base}                           # the space's own 80-row tile
    grid = probe.grid_cases()                 # --grid: int8, float16 and float32, rows from 65 to 3000
    assert {d for _, d, _ in grid} == {"int8", "float16", "float32"} and len(grid) == 60
    assert sum(type(probe.fused_problem(*c)).__name__ == "NdTileProblem" for c in grid) >= 30


def test_grid_saves_its_problems_as_it_goes_and_skips_those_it_has():
    """grid.py's problem loop: problems the export already holds are not tuned
    (no GPU is asked here), and the export is written every EXPORT_EVERY
    problems, so a call cut short keeps what it tuned."""
    from conftest import H200

    from autotrans.tuning.strided import problem_key
    grid = _script("grid")
    cases = bm.problem_grid()
    have = set()
    for c in cases:
        problem, cast, epilogue = c.problem()
        have.add(problem_key(problem, H200, cast, epilogue).text)
    saves = []
    assert grid._tune_problems(cases, None, have, H200, float("inf"), lambda: saves.append(1)) == []
    assert len(saves) == (len(cases) - 1) // grid.EXPORT_EVERY > 0


def test_grid_resume_keeps_the_exports_shapes_and_problems_of_this_gpu_and_space(tmp_path):
    """grid.py --resume: an export's transpose entries and problem rows of the
    device and space are kept (and not tuned again); other devices' and stale
    templates' are dropped."""
    from conftest import A100, H200, make_record
    from test_problem_keys import problem_record

    from autotrans.results.keys import CacheKey, ProblemKey
    from autotrans.results.store import ResultCache
    from autotrans.tuning.space import space_id
    grid = _script("grid")
    sid = space_id()
    src = ResultCache(tmp_path / "src")
    for dev, templates in ((H200, sid), (A100, sid), (H200, "0123456789abcdef-s1")):
        src.put(CacheKey(dev, templates, (1, 64, 64), 4), make_record((64, 64), 4, dev))
        problem = bm.problem_grid()[0].problem()[0]
        k = ProblemKey(dev, templates, problem)
        assert src.put_problem(k, problem_record(k))
    export = tmp_path / "h200.json"
    src.export_json(export)
    cache = ResultCache(tmp_path / "work")
    have = grid._resume(cache, export, H200, sid)
    assert have == {((1, 64, 64), 4), ProblemKey(H200, sid, problem).text}
    assert len(cache.items()) == len(cache.problem_items()) == 1


def test_grid_resume_tunes_again_a_shape_whose_retime_was_disturbed(tmp_path, capsys):
    import dataclasses

    from conftest import H200, make_record

    from autotrans.results.keys import CacheKey
    from autotrans.results.record import TuneRecord
    from autotrans.results.store import ResultCache
    from autotrans.tuning.space import space_id
    grid = _script("grid")
    src = ResultCache(tmp_path / "src")
    for shape, scale in (((64, 64), 1.0), ((128, 128), 3.0)):
        key = CacheKey(H200, space_id(), (1, *shape), 4)
        rec = TuneRecord.from_json(make_record(shape, 4))
        top = tuple(dataclasses.replace(r, median_us=r.median_us * scale, q1_us=r.q1_us * scale,
                                        q3_us=r.q3_us * scale, retimed=True) for r in rec.candidates[:5])
        src.put(key, dataclasses.replace(rec, candidates=top + rec.candidates[5:], time_us=top[0].median_us,
                                         q1_us=top[0].q1_us, q3_us=top[0].q3_us))
    export = tmp_path / "h200.json"
    src.export_json(export)
    have = grid._resume(ResultCache(tmp_path / "work"), export, H200, space_id())
    assert have == {((1, 64, 64), 4)}
    assert "128x128: its re-time was disturbed" in capsys.readouterr().out


def test_fuse_probe_sectors_bounds_both_forms_of_a_tile_problem(tmp_path, capsys):
    """fuse_probe --sectors (no GPU): a permutation permute() runs as a
    TileProblem gets the bounds of its shift candidates and of its fused
    NdTileProblem's ndshift ones, each in (0, 1], with each form's best the
    maximum of its own and its untuned pick among them; each row says which
    form run_problem runs; the JSON is written. The grid and held-out cases
    share no sides."""
    from autotrans.tuning.strided import run_problem
    fp = _script("fuse_probe")
    tile, fused = fp.forms((64, 5, 96), "int8", (2, 1, 0))
    assert type(tile).__name__ == "TileProblem" and (tile.m, tile.n) == (64, 96)
    assert type(fused).__name__ == "NdTileProblem" and fused.m * fused.n == 64 * 5 * 96
    assert fp.forms((1001, 5, 131), "int8", (2, 1, 0))[1].m == 1001                       # fullest: input rows
    assert fp.forms((1001, 5, 131), "int8", (2, 1, 0), m_side=True)[1].m == 1001 * 5     # output rows
    small = fp.forms((33, 5, 45), "int8", (2, 1, 0))                 # 33 x 45 matrices: run_problem fuses them
    assert run_problem(small[0]) == small[1]
    r = fp.probe((64, 5, 96), "int8", (2, 1, 0), sectors=True)
    assert r["runs"] == "tile"                                       # output rows of 64 bytes
    assert {k.split(":")[0] for k in r["tile"]["all"]} >= {"shift"}
    assert {k.split(":")[0] for k in r["fused"]["all"]} >= {"ndshift"}
    for form in ("tile", "fused"):
        f = r[form]
        assert all(0 < x <= 1 for x in f["all"].values())
        assert f["fraction"] == max(f["all"].values()) == f["all"][f["best"]]
        assert f["untuned_fraction"] == f["all"][f["untuned"]]
    fp.CASES = [((64, 5, 96), "int8", (2, 1, 0)), ((33, 5, 45), "int8", (2, 1, 0)), ((64, 5, 96), "float16", (2, 1, 0))]
    assert fp.main(["--out", str(tmp_path), "--sectors", "--cases", "int8"]) == 0
    rows = json.loads((tmp_path / "fuse_bounds.json").read_text())
    assert [x["case"] for x in rows] == ["64x5x96 int8 (2, 1, 0)", "33x5x45 int8 (2, 1, 0)"]
    assert rows[0]["fused"]["all"] == r["fused"]["all"] and rows[1]["runs"] == "fused"
    assert f"tile batch 64x96: best {r['tile']['fraction']:.3f}" in capsys.readouterr().out
    table = fp.table(rows + [{**rows[0], "fused": {**rows[0]["tile"], "problem": "64x480"}}], "T")   # + an N form
    assert table.startswith("# fuse_probe.py T\n") and "| 64x5x96 int8 (2, 1, 0) |" in table
    line = next(x for x in table.splitlines() if x.startswith("| 64x5x96 int8"))
    assert line.count("/") == 3 and line.endswith("| tile |") and line.count("*") == 1   # N: the run's pick
    assert "On the 2 of 2 cases" in table
    assert fp.main(["--table", str(tmp_path / "fuse_bounds.json"), "--title", "T"]) == 0
    assert capsys.readouterr().out.startswith("# fuse_probe.py T")
    grid, held = fp.grid_cases(), fp.grid_cases(fp.HELDOUT_SIDES)
    assert (len(grid), len(held)) == (21, 18) and not {(a, c) for (a, _, c), *_ in grid} & {(a, c) for (a, _, c), *_ in held}
    nd = _script("nd_probe")
    assert nd.heldout_cases() and not set(map(repr, nd.heldout_cases())) & set(map(repr, nd.grid_cases()))


def test_strided_loo_reads_each_pick_from_the_left_out_problems_own_table():
    """strided_loo: two 65-row problems and a 61-row one of one class; the
    61-row problem's table (64-row tile first, 80-row 5% behind) is the
    nearest of the 65-row ones: its winner reads that problem's 64-row time,
    the prediction its 80-row time (fill 65/128 against 65/80)."""
    loo = _script("strided_loo")
    t64, t80 = "ndshift:e2:64x64:t256:v16:r2:p2:none:col:strided", "ndshift:e2:80x64:t128:v16:r2:p2:xor:col:strided"
    rows = [{"case": "37x61x101x53 float16 (2, 0, 3, 1)", "all": {t64: 0.80, t80: 0.76}},
            {"case": "67x65x129x61 float16 (2, 0, 3, 1)", "all": {t64: 0.40, t80: 0.72}},
            {"case": "3x65x7000x61 float16 (2, 0, 3, 1)", "all": {t64: 0.50, t80: 0.50}}]
    got = {r[0]: r for r in loo.leave_one_out(rows, 1.0)}
    name, near, old, new = got["67x65x129x61 float16 (2, 0, 3, 1)"]
    assert near == "37x61x101x53 float16 (2, 0, 3, 1)" and (old, new) == (pytest.approx(0.40 / 0.72), 1.0)
    assert all(r[2] == r[3] for r in loo.leave_one_out(rows, 0.0))     # no fill weight: the winner


def test_rows_fit_probe_builds_row_sized_tiles_of_the_widest_access():
    probe = _script("rows_fit_probe")
    from autotrans.core.layout import c_strides, canonical
    f32 = canonical((25, 50, 263), c_strides((25, 50, 263), 4), 4, (1, 0, 2))
    f16 = canonical((2, 64, 4, 67), c_strides((2, 64, 4, 67), 2), 2, (0, 2, 1, 3))
    assert {c.key for c in probe.row_sized(f32)} == {f"rows:e4:{nt // 32}x288:t{nt}:v4:r1:p0:none:row:strided"
                                                     for nt in probe.THREADS}      # 9 vectors a lane: 1 row
    keys = {c.key for c in probe.row_sized(f16)}
    assert "rows:e2:8x96:t64:v2:r1:p0:none:row:strided" in keys and len(keys) == 12
