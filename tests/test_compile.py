import os
import stat
import sys

import pytest

from autotrans.build.compile import CompileError, compile_configs, compile_file, find_nvcc, parse_ptxas
from autotrans.kernels.config import ELEM_SIZES, classic
from autotrans.tuning.space import default_space


@pytest.fixture(scope="module")
def kernel_root(tmp_path_factory):
    return tmp_path_factory.mktemp("kernels")


@pytest.mark.exhaustive
@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
@pytest.mark.parametrize("e", ELEM_SIZES)
def test_every_candidate_compiles_without_spills(kernel_root, arch, e):
    cfgs = default_space(e)
    out = compile_configs(cfgs, arch, root=kernel_root)
    assert list(out) == [c.key for c in cfgs]
    bad = {k: c.error[-300:] for k, c in out.items() if not c.ok}
    assert not bad, bad
    for key, c in out.items():
        info = c.info
        assert info["registers"] > 0, key
        assert info["spill_stores"] == 0 and info["spill_loads"] == 0, (key, info)
        assert info["stack"] == 0 and info["lmem"] == 0, (key, info)
        assert c.image() and c.arch == arch


def test_second_compile_runs_no_nvcc(tmp_path, monkeypatch):
    log = tmp_path / "calls"
    wrapper = tmp_path / "nvcc"
    wrapper.write_text(f'#!/bin/sh\necho call >> "{log}"\nexec "{find_nvcc()}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("AUTOTRANS_NVCC", str(wrapper))
    cfgs = [classic(n, 4) for n in ("naive", "padded", "swizzled")]
    first = compile_configs(cfgs, "sm_90", root=tmp_path / "k")
    calls = log.read_text().count("call")
    assert calls >= 2  # at least a version query and one compile
    again = compile_configs(cfgs, "sm_90", root=tmp_path / "k")
    assert log.read_text().count("call") == calls
    assert {k: c.object for k, c in again.items()} == {k: c.object for k, c in first.items()}
    assert again[cfgs[1].key].info == first[cfgs[1].key].info


def test_many_kernels_share_one_nvcc_call(tmp_path):
    cfgs = default_space(4)[:20]
    out = compile_configs(cfgs, "sm_90", root=tmp_path, jobs=1)
    assert len({c.object for c in out.values()}) == 1


def test_parse_ptxas():
    log = """ptxas info    : Compiling entry function 'at_x' for 'sm_90'
ptxas info    : Function properties for at_x
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 128 bytes smem, 380 bytes cmem[0]
ptxas info    : Compiling entry function 'at_y' for 'sm_90'
ptxas info    : Function properties for at_y
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers, 380 bytes cmem[0]
"""
    got = parse_ptxas(log)
    assert got["at_x"] == dict(stack=16, spill_stores=8, spill_loads=4, registers=40, smem=128, lmem=0)
    assert got["at_y"]["registers"] == 12 and got["at_y"]["smem"] == 0


def test_compile_file_reports_nvcc_errors(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k() { this is not cuda; }\n")
    with pytest.raises(CompileError, match="bad.cu"):
        compile_file(bad, "sm_90", root=tmp_path)


def test_verify_kernels_compile(tmp_path):
    from autotrans.core.paths import template_dir
    c = compile_file(template_dir() / "verify.cu", "sm_90", root=tmp_path)
    assert c.ok and c.image()[:4] == b"\x7fELF"


def test_a_named_nvcc_is_used_or_refused_never_passed_over(tmp_path, monkeypatch):
    """AUTOTRANS_NVCC naming no executable is an error (not nvcc from PATH);
    one that fails silently still gives a log that says so."""
    from autotrans.build import nvcc
    monkeypatch.setenv("AUTOTRANS_NVCC", str(tmp_path / "missing"))
    with pytest.raises(CompileError, match="AUTOTRANS_NVCC=.*missing.* is not an executable file"):
        find_nvcc()
    monkeypatch.setenv("AUTOTRANS_NVCC", "/bin/false")
    assert find_nvcc() == "/bin/false"
    out, log = nvcc.run({"x.cu": "int main() { return 0; }\n"}, "x.cu", [])
    assert out is None and log == "/bin/false exited with status 1 and printed nothing"
