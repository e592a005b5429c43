"""benchmarks/probes/: the walk probe's kernel phases, run on the CPU by its
host check (walk_probe_host.cu, built with nvcc) against a plain transpose,
and its Python driver's agreement with the CUDA source it launches."""
from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

from autotrans.build.nvcc import find_nvcc

REPO = Path(__file__).resolve().parent.parent
PROBES = REPO / "benchmarks" / "probes"


@pytest.fixture(scope="module")
def walk_host(tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("walk") / "walk_host"
    r = subprocess.run([find_nvcc(), "-std=c++17", "-O2", "-x", "cu", "-I", str(REPO / "cuda_templates"),
                        str(PROBES / "walk_probe_host.cu"), "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return exe


def _driver():
    spec = importlib.util.spec_from_file_location("walk_probe", PROBES / "walk_probe.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_walk_probe_phases_transpose_exactly(walk_host):
    """Every variant, in its GPU schedule's phase order, on random shapes, pitches,
    offsets, chunks and batches: every output byte right, nothing else written."""
    r = subprocess.run([str(walk_host), "7", "25"], capture_output=True, text=True, timeout=900)
    lines = [x for x in r.stdout.splitlines() if "trials bad" in x]
    assert r.returncode == 0, r.stdout[-3000:]
    assert len(lines) == len(_driver().VARIANTS) and all(": 0 of 25 trials" in x for x in lines), r.stdout


def test_walk_probe_driver_launches_what_the_source_defines(walk_host):
    """The driver's variants are WALK_VARIANTS' kernels, and its shared-memory
    sizes are the templates' (a launch with fewer bytes would read past them)."""
    src = (PROBES / "walk_probe.cu").read_text()
    macro = {n: tuple(map(int, g)) for n, *g in
             re.findall(r"X\((w\w+), (\d+), (\d+), (\d+), (\d+), (\d+), (\d+)\)", src)}
    out = subprocess.run([str(walk_host), "smem"], capture_output=True, text=True, timeout=60).stdout
    smem = {n: int(v) for n, v in (x.split() for x in out.splitlines())}
    drv = _driver()
    assert macro and drv.VARIANTS == macro and set(smem) == set(macro)
    assert {n: drv.smem_of(*v) for n, v in drv.VARIANTS.items()} == smem
