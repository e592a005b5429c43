import dataclasses
import shutil

import pytest

from autotrans.kernels.config import KernelConfig, classic
from autotrans.kernels.templates import render, render_unit, template_dir, template_file, templates_hash

VEC = KernelConfig("vec", 4, 64, 64, 128, 16, 2, 0, "xor", "col")


@pytest.mark.parametrize("cfg", [classic("naive", 4), classic("remapped", 2), classic("padded", 8), VEC])
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


def test_templates_hash_follows_template_content(tmp_path):
    same, changed = tmp_path / "same", tmp_path / "changed"
    shutil.copytree(template_dir(), same)
    shutil.copytree(template_dir(), changed)
    (changed / "vec.cu").write_text((changed / "vec.cu").read_text() + "\n// changed\n")
    assert templates_hash(same) == templates_hash()
    assert templates_hash(changed) != templates_hash()
