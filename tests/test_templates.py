import dataclasses
import shutil

import pytest

from autotrans.kernels.config import KernelConfig, classic
from autotrans.kernels.templates import render, render_unit, template_dir, template_file, templates_hash

VEC = KernelConfig("vec", 4, 64, 64, 128, 16, 2, 0, "xor", "col")


@pytest.mark.parametrize("cfg", [classic("naive", 4), classic("remapped", 2), classic("padded", 8), VEC,
                                 VEC.fixed_to((3, 64, 128))])
def test_line_directive_is_exact(cfg):
    """Slots never add or remove lines, so #line 1 maps every rendered line to
    the same line of the template file (compiler errors point into it)."""
    text = render(cfg)
    first, body = text.split("\n", 1)
    assert first == f'#line 1 "{template_file(cfg)}"'
    tmpl = template_file(cfg).read_text().splitlines()
    got = body.splitlines()
    assert len(got) == len(tmpl)
    for a, b in zip(got, tmpl):
        if "{{" not in b:
            assert a == b
    assert "{{" not in body and "{%" not in body


@pytest.mark.parametrize("field, value", [
    ("tile_rows", 32), ("tile_cols", 128), ("threads", 256), ("vec_bytes", 8), ("micro_rows", 4),
    ("pad", 4), ("swizzle", "none"), ("order", "row"), ("elem_bytes", 2),
])
def test_every_parameter_changes_the_code(field, value):
    changed = dataclasses.replace(VEC, **{field: value})
    a, b = render(VEC).replace(VEC.name, "K"), render(changed).replace(changed.name, "K")
    assert a != b


def test_classic_parameters_change_the_code():
    base = classic("tile", 4)
    for other in (classic("padded", 4), classic("swizzled", 4), classic("seed", 4)):
        assert render(base).replace(base.name, "K") != render(other).replace(other.name, "K")
    naive, remapped = classic("naive", 4), KernelConfig("remapped", 4, 8, 32, 256)
    assert render(naive).replace(naive.name, "K") != render(remapped).replace(remapped.name, "K")


def test_unit_holds_many_kernels():
    cfgs = [classic("naive", 1), classic("padded", 4), VEC]
    unit = render_unit(cfgs)
    assert unit.startswith('#include "common.cuh"')
    for c in cfgs:
        assert f"struct {c.name}_k {{" in unit and f"AT_KERNEL_ENTRY({c.name}, {c.threads})" in unit


def test_a_fixed_shape_is_rendered_into_the_entry():
    fixed = VEC.fixed_to((3, 64, 128))
    text = render(fixed)
    assert f"AT_FIXED_ENTRY({fixed.name}, {fixed.threads}, 3LL, 64LL, 128LL)" in text
    assert "AT_KERNEL_ENTRY(" not in text and f"AT_KERNEL_ENTRY({VEC.name}, {VEC.threads})" in render(VEC)
    # the kernel's code is the generic one's but for its name and the entry line
    diff = [(a, b) for a, b in zip(render(VEC).splitlines(), text.splitlines()) if a != b.replace(fixed.name, VEC.name)]
    assert len(diff) == 1 and "AT_FIXED_ENTRY" in diff[0][1]


def test_templates_hash_follows_template_content(tmp_path):
    same, changed = tmp_path / "same", tmp_path / "changed"
    shutil.copytree(template_dir(), same)
    shutil.copytree(template_dir(), changed)
    (changed / "vec.cu").write_text((changed / "vec.cu").read_text() + "\n// changed\n")
    assert templates_hash(same) == templates_hash()
    assert templates_hash(changed) != templates_hash()
    checker = tmp_path / "checker"   # the programs beside the templates make no transpose kernel
    shutil.copytree(template_dir(), checker)
    for name in ("verify.cu", "roofline.cu", "emulate.cu"):
        (checker / name).write_text((checker / name).read_text() + "\n// changed\n")
    assert templates_hash(checker) == templates_hash()


# -- Python and C++ agree, checked by nvcc ------------------------------------

from autotrans.build import nvcc  # noqa: E402
from autotrans.build.compile import compile_configs  # noqa: E402
from autotrans.kernels.config import CLASSIC_NAMES, ELEM_SIZES  # noqa: E402
from autotrans.kernels.templates import ARGS, ARG_FIELDS, GridSample, field_offsets, python_view  # noqa: E402
from autotrans.tuning.space import default_space  # noqa: E402

SHIFT = KernelConfig("shift", 2, 32, 128, 128, 16, 2, 2, "xor", "col")


def frontend(source: str) -> tuple[bool, str]:
    """Whether nvcc's front end (where static_asserts fire) accepts a unit, and its log."""
    out, log = nvcc.run({"unit.cu": '#include "common.cuh"\n' + source}, "unit.cu",
                        ["-ptx", "-arch=sm_90", "-std=c++17"], includes=[template_dir()])
    return out is not None, log


def test_argument_layout_follows_c_rules():
    assert field_offsets("PPqqq") == (0, 8, 16, 24, 32) and ARGS.size == 40
    assert field_offsets("ciq") == (0, 4, 8) and field_offsets("cP") == (0, 8)
    assert ARGS.format == "PPqqq" and len(ARG_FIELDS) == len(ARGS.format)
    with pytest.raises(ValueError):
        field_offsets("2i")


def test_view_holds_what_python_computes():
    for cfg in (classic("naive", 1), VEC, SHIFT):
        v = python_view(cfg)
        assert (v.smem, v.threads, v.tile_rows, v.tile_cols) == \
            (cfg.smem_bytes, cfg.threads, cfg.tile_rows, cfg.tile_cols)
        assert {(g.b, g.m, g.n) for g in v.grid} >= {(1, 1, 1)}
        assert any(g.b > 1 for g in v.grid) and any(g.m % cfg.tile_rows and g.n % cfg.tile_cols for g in v.grid)
        assert any(g.n > 2**31 for g in v.grid)   # a dimension past 32 bits
        assert all(g.blocks == cfg.blocks((g.b, g.m, g.n)) for g in v.grid)
        text = render(cfg)
        assert f"AT_AGREE({cfg.name}_k, {cfg.smem_bytes}, " in text
        assert text.count("AT_AGREE_GRID(") == len(v.grid)


@pytest.mark.parametrize("cfg", [classic("padded", 4), VEC, SHIFT, classic("naive", 2)])
def test_the_true_view_compiles(cfg):
    ok, log = frontend(render(cfg))
    assert ok, log[-2000:]


@pytest.mark.parametrize("cfg", [classic("padded", 4), VEC, SHIFT])
@pytest.mark.parametrize("wrong, message", [
    (lambda c, v: dataclasses.replace(v, smem=v.smem + 4), "KernelConfig.smem_bytes (Python) disagrees"),
    (lambda c, v: dataclasses.replace(v, threads=v.threads * 2), "threads/tile_rows/tile_cols (Python) disagree"),
    (lambda c, v: dataclasses.replace(v, grid=v.grid[:-1] + (GridSample(2, 2**31 + 5, 3 * 2**31 - 1,
                                                                        v.grid[-1].blocks % 2**32),)),
     "KernelConfig.blocks (Python) disagrees with at::blocks (C++) on shape 2x2147483653x6442450943"),
    (lambda c, v: dataclasses.replace(v, args_size=struct_size("PPiii"), args_offsets=field_offsets("PPiii")),
     "templates.ARGS (Python's kernel argument struct) disagrees with at::Args"),
])
def test_a_wrong_python_value_fails_nvcc(cfg, wrong, message):
    """Python's formulas are rendered into static_asserts: a wrong one stops nvcc,
    with a message naming the Python side, at the template's line."""
    ok, log = frontend(render(cfg, wrong(cfg, python_view(cfg))))
    assert not ok
    assert message in log and f"{template_file(cfg)}(" in log, log[-2000:]


def struct_size(fmt: str) -> int:
    import struct
    return struct.calcsize(fmt)


def test_a_wrong_register_budget_count_fails_nvcc(monkeypatch):
    """vec.cu's per-thread iteration counts (IT1, IT2) must be what vec.py's
    register budget (keep) assumes: both come from vec.steps."""
    cfg = next(c for c in default_space(4) if c.variant == "vec")
    fam, real = cfg.family, cfg.family.steps(cfg)
    assert fam.keep(cfg) and real.load > 0 and real.store > 0
    monkeypatch.setattr(fam, "steps", lambda c: fam.Steps(real.load, real.store + 1))
    ok, log = frontend(render(cfg))
    assert not ok and "vec.py's steps() (the register budget keep() assumes) disagrees" in log, log[-2000:]
    monkeypatch.setattr(fam, "steps", lambda c: fam.Steps(64, 64))
    assert not fam.keep(cfg)   # the budget reads the same counts


def family_sample(e: int) -> list[KernelConfig]:
    """The first and last candidate of each family in the default space, and
    one of each (vector width, micro-rows, swizzle, order)."""
    cfgs, seen = default_space(e), set()
    out = []
    for v in {c.variant for c in cfgs}:
        fam = [c for c in cfgs if c.variant == v]
        out += [fam[0], fam[-1]]
    for c in cfgs:
        k = (c.variant, c.vec_bytes, c.micro_rows, c.swizzle, c.order)
        if k not in seen:
            seen.add(k)
            out.append(c)
    return list(dict.fromkeys(out))


def test_classic_configs_and_family_samples_compile(tmp_path):
    """Every classic config and a sample of each family builds for sm_90, so
    every static_assert of Python's view holds for them."""
    cfgs = [classic(n, e) for e in ELEM_SIZES for n in CLASSIC_NAMES] + \
           [c for e in ELEM_SIZES for c in family_sample(e)]
    assert {c.variant for c in cfgs} == {"naive", "remapped", "tile", "vec", "shift", "narrow", "short", "whole"}
    out = compile_configs(cfgs, "sm_90", root=tmp_path)
    bad = {k: c.error[-500:] for k, c in out.items() if not c.ok}
    assert not bad, bad


FIXED_SHAPES = [(64, 8, 16), (5, 33, 33), (2, 48, 400), (1, 1000, 1000), (1, 4096, 4104), (1, 100003, 17),
                (1, 17, 100003)]


def fixed_sample(e: int) -> list[KernelConfig]:
    """family_sample(e), each compiled for a shape of FIXED_SHAPES it can run
    (the i-th config tries them from the i-th on)."""
    out, k = [], len(FIXED_SHAPES)
    for i, c in enumerate(family_sample(e)):
        for s in FIXED_SHAPES[i % k:] + FIXED_SHAPES[:i % k]:
            try:
                out.append(c.fixed_to(s))
                break
            except ValueError:
                continue
    return out


@pytest.mark.parametrize("arch", ["sm_90", pytest.param("sm_80", marks=pytest.mark.exhaustive)])
def test_fixed_shapes_of_every_family_compile(tmp_path, arch):
    """A sample of each family, compiled for one shape (KernelConfig.fixed):
    every static_assert holds, and few spill (ptxas can, for one shape,
    where the generic kernel does not; tune() leaves those out)."""
    cfgs = [c for e in ELEM_SIZES for c in fixed_sample(e)]
    assert {c.variant for c in cfgs} == {"naive", "remapped", "tile", "vec", "shift", "narrow", "short", "whole"}
    assert len({c.fixed for c in cfgs}) >= 4
    out = compile_configs(cfgs, arch, root=tmp_path)
    bad = {k: c.error[-500:] for k, c in out.items() if not c.ok}
    assert not bad, bad
    spill = {k: c.info for k, c in out.items() if c.info["spill_stores"] or c.info["spill_loads"]}
    assert all(c.info["registers"] > 0 for c in out.values())
    assert len(spill) <= len(cfgs) // 20, spill


def test_every_header_is_hashed_and_included(tmp_path):
    """The helpers live in one header per concern beside the templates: each is
    pulled in by common.cuh, opens namespace at once, and is covered by the
    templates hash (a change to any of them makes new kernels)."""
    import re
    from autotrans.kernels.templates import SOURCES
    tdir = template_dir()
    headers = sorted(p.name for p in tdir.glob("*.cuh"))
    assert len(headers) >= 7 and "common.cuh" in headers
    common = (tdir / "common.cuh").read_text()
    for h in headers:
        text = (tdir / h).read_text()
        assert text.count("namespace at {") <= 1, h
        for inc in re.findall(r'#include "([^"]+)"', text):
            assert (tdir / inc).is_file() and (tdir / inc).suffix in SOURCES, (h, inc)
        if h != "common.cuh":
            assert f'#include "{h}"' in common, h
            copy = tmp_path / h
            shutil.copytree(tdir, copy)
            (copy / h).write_text(text + "\n// changed\n")
            assert templates_hash(copy) != templates_hash(), h
    assert "ORDER_DIAG" not in "".join((tdir / h).read_text() for h in headers)
