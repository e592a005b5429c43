"""The wheel, built and installed for real: it must carry the CUDA templates
(as autotrans.cuda_templates) and the shipped results (as autotrans.shipped),
and work from outside the checkout. Slow-ish (a venv and a build), but it runs
everywhere, CI included."""
from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autotrans import __version__
from autotrans.kernels.config import classic
from autotrans.kernels.templates import render, templates_hash

REPO = Path(__file__).resolve().parent.parent
SOURCES = ("setup.cfg", "pyproject.toml", "README.md", "LICENSE", "autotrans", "cuda_templates", "cache")

pytestmark = pytest.mark.slow


def _run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kw)
    assert r.returncode == 0, f"{cmd} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(wheel, venv python, venv bin folder, a folder outside the checkout, venv
    site-packages): a wheel built from a copy of the project's files and
    installed into a fresh virtualenv."""
    tmp = tmp_path_factory.mktemp("packaging")
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:   # build from a copy: no build/ or egg-info in the checkout
        p = REPO / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif p.is_file():
            shutil.copy2(p, src / name)
    dist = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
          "-w", dist, src], cwd=tmp)
    wheels = list(dist.glob("autotrans-*.whl"))
    assert len(wheels) == 1, wheels

    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", venv], cwd=tmp)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    py = bindir / ("python.exe" if os.name == "nt" else "python")
    purelib = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    # When the tests themselves run in a virtualenv (as on CI), the dependencies
    # live there rather than in the system site-packages: let the new venv see
    # them too, after its own site-packages (so the installed wheel wins).
    here = [p for p in site.getsitepackages() + [site.getusersitepackages()] if Path(p).is_dir()]
    (purelib / "_autotrans_test_deps.pth").write_text("\n".join(here) + "\n")
    _run([py, "-m", "pip", "install", "--no-deps", "--no-index", wheels[0]], cwd=tmp)
    outside = tmp / "outside"
    outside.mkdir()
    return wheels[0], py, bindir, outside, purelib


def _env(outside: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "AUTOTRANS_DEBUG")}
    env["AUTOTRANS_CACHE_DIR"] = str(outside / "cache")
    return env


def test_wheel_contents(built):
    whl = built[0]
    names = zipfile.ZipFile(whl).namelist()
    assert "autotrans/cuda_templates/vec.cu" in names
    for p in (REPO / "cuda_templates").iterdir():
        if p.suffix in (".cu", ".cuh", ".py"):   # templates and the family modules beside them
            assert f"autotrans/cuda_templates/{p.name}" in names, p.name
    assert any(n.startswith("autotrans/shipped/") for n in names), names
    for p in (REPO / "cache").glob("*.json"):
        assert f"autotrans/shipped/{p.name}" in names, p.name
    for p in (REPO / "autotrans").rglob("*.py"):   # every module of every layer
        assert p.relative_to(REPO).as_posix() in names, p
    # nothing but the package: no top-level cuda_templates/, cache/ or tests/
    assert {n.split("/")[0] for n in names} == {"autotrans", f"autotrans-{__version__}.dist-info"}
    info = f"autotrans-{__version__}.dist-info"
    meta = zipfile.ZipFile(whl).read(f"{info}/METADATA").decode()
    assert "Requires-Python: >=3.9" in meta
    for dep in ("numpy", "jinja2", "sqlitedict", "platformdirs", "rich", "matplotlib"):
        assert f"Requires-Dist: {dep}\n" in meta, dep
    assert "Provides-Extra: cuda" in meta and "Provides-Extra: test" in meta
    assert "pycuda" in meta and 'extra == "cuda"' in meta
    eps = zipfile.ZipFile(whl).read(f"{info}/entry_points.txt").decode()
    assert "autotrans = autotrans.cli:main" in eps


def test_installed_package_renders_templates_outside_the_checkout(built):
    _, py, _, outside, purelib = built
    code = """
import json
import autotrans
from autotrans.results.store import shipped_dir
from autotrans.kernels.config import classic
from autotrans.kernels.templates import render, template_dir, templates_hash
print(json.dumps({"file": autotrans.__file__, "version": autotrans.__version__,
                  "templates": str(template_dir()), "hash": templates_hash(),
                  "shipped": str(shipped_dir()), "src": render(classic("padded", 4))}))
"""
    r = _run([py, "-c", code], cwd=outside, env=_env(outside))
    got = json.loads(r.stdout)
    pkg = purelib / "autotrans"
    assert Path(got["file"]).parent == pkg
    assert Path(got["templates"]) == pkg / "cuda_templates"
    assert Path(got["shipped"]) == pkg / "shipped" and Path(got["shipped"]).is_dir()
    assert got["version"] == __version__
    assert got["hash"] == templates_hash()
    cfg = classic("padded", 4)
    assert f"AT_KERNEL_ENTRY({cfg.name}, {cfg.threads})" in got["src"]
    # identical kernel text to the checkout's, but pointing into the installed copy
    first, body = got["src"].split("\n", 1)
    assert str(pkg / "cuda_templates") in first
    assert body == render(cfg).split("\n", 1)[1]


def test_console_script_and_module_entry_points(built):
    _, py, bindir, outside, _ = built
    env = _env(outside)
    exe = bindir / "autotrans"
    r = _run([exe, "--version"], cwd=outside, env=env)
    assert r.stdout.strip() == f"autotrans {__version__}"
    r = _run([exe, "show", "--help"], cwd=outside, env=env)
    assert r.stdout.startswith("usage: autotrans show")
    r = _run([py, "-m", "autotrans", "show", "--all"], cwd=outside, env=env)
    assert "no cached results" in r.stdout
    # the emulator builds from the installed templates (needs nvcc, which the CPU tests need anyway)
    r = _run([exe, "banks", classic("tile", 4).key], cwd=outside, env=env)
    assert "store 32-way" in r.stdout
    r = subprocess.run([str(exe), "tune", "12x"], cwd=outside, env=env, capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.startswith("autotrans: error: ") and "Traceback" not in r.stderr
