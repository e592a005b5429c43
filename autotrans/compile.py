"""Compile kernel configs to cubins with nvcc, many kernels per call, cached on disk.

Each compiled config has an index entry keyed by a hash of (config key, templates
hash, arch, nvcc version, flags) that names the cubin holding it and the ptxas
resource report of its kernel. Compiling a space again therefore compiles nothing.
"""
from __future__ import annotations

import concurrent.futures as cf
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from .cache import cache_root
from .config import KernelConfig
from .templates import render_unit, template_dir, templates_hash

FLAGS = ("-std=c++17", "-O3", "-Xptxas", "-v")
MAX_PER_CALL = 24


class CompileError(RuntimeError):
    """nvcc is missing or failed."""


@dataclass(frozen=True)
class Compiled:
    """A config's compile outcome: its cubin and ptxas report, or an error."""
    key: str
    name: str
    arch: str
    cubin: Path | None = None
    info: dict | None = None   # registers, smem, stack, spill_stores, spill_loads, lmem
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def find_nvcc() -> str:
    """nvcc from $AUTOTRANS_NVCC, PATH, $CUDA_HOME or /usr/local/cuda."""
    cands = [os.environ.get("AUTOTRANS_NVCC"), shutil.which("nvcc")]
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            cands.append(os.path.join(home, "bin", "nvcc"))
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise CompileError("nvcc (the CUDA toolkit's compiler) was not found: put it on PATH "
                       "or set AUTOTRANS_NVCC or CUDA_HOME")


@functools.lru_cache(maxsize=None)
def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release [\d.]+, V([\d.]+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1]


def arch_of(cc) -> str:
    """(9, 0) -> 'sm_90'."""
    return f"sm_{cc[0]}{cc[1]}"


def kernel_dir(root: str | Path | None = None) -> Path:
    """Where compiled kernels are cached: root, else <cache root>/kernels; a
    per-user temporary folder (with a warning) when that cannot be written."""
    return _usable(Path(root) if root else cache_root() / "kernels")


@functools.lru_cache(maxsize=None)
def _usable(d: Path) -> Path:
    try:
        d.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=d).close()
        return d
    except OSError:
        fallback = Path(tempfile.gettempdir()) / f"autotrans-kernels-{os.getuid()}"
        warnings.warn(f"autotrans: {d} cannot be written; compiled kernels are cached in {fallback}",
                      RuntimeWarning, stacklevel=3)
        fallback.mkdir(parents=True, exist_ok=True)
        return fallback


def parse_ptxas(log: str) -> dict[str, dict]:
    """Per-kernel resource report from `ptxas -v` output."""
    out: dict[str, dict] = {}
    cur = None
    for line in log.splitlines():
        m = re.search(r"Function properties for (\w+)", line) or \
            re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            cur = out.setdefault(m.group(1), {})
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            cur.update(stack=int(m[1]), spill_stores=int(m[2]), spill_loads=int(m[3]))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            cur["registers"] = int(m[1])
            s = re.search(r"(\d+) bytes smem", line)
            cur["smem"] = int(s[1]) if s else 0
            lm = re.search(r"(\d+) bytes lmem", line)
            cur["lmem"] = int(lm[1]) if lm else 0
    return out


def _entry_hash(cfg: KernelConfig, arch: str, nvcc: str) -> str:
    text = "|".join([cfg.key, templates_hash(), arch, nvcc_version(nvcc), *FLAGS])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _nvcc(cfgs, arch: str, nvcc: str) -> tuple[bytes | None, str]:
    with tempfile.TemporaryDirectory(prefix="autotrans-") as d:
        src, cubin = Path(d) / "unit.cu", Path(d) / "unit.cubin"
        src.write_text(render_unit(cfgs))
        cmd = [nvcc, "-cubin", f"-arch={arch}", *FLAGS, "-I", str(template_dir()), str(src), "-o", str(cubin)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return None, r.stderr + r.stdout
        return cubin.read_bytes(), r.stderr + r.stdout


def _build(cfgs, arch, nvcc, root: Path) -> list[Compiled]:
    """Compile one group; on failure, each config alone, so one bad kernel fails alone."""
    blob, log = _nvcc(cfgs, arch, nvcc)
    if blob is None:
        if len(cfgs) == 1:
            return [Compiled(cfgs[0].key, cfgs[0].name, arch, error=log.strip()[-2000:])]
        return [c for cfg in cfgs for c in _build([cfg], arch, nvcc, root)]
    digest = hashlib.sha256(blob).hexdigest()[:24]
    cubin = root / "cubins" / f"{digest}.cubin"
    if not cubin.exists():
        _atomic_write(cubin, blob)
    infos = parse_ptxas(log)
    done = []
    for cfg in cfgs:
        c = Compiled(cfg.key, cfg.name, arch, cubin=cubin, info=infos.get(cfg.name, {}))
        _atomic_write(root / "index" / f"{_entry_hash(cfg, arch, nvcc)}.json",
                      json.dumps({"key": c.key, "name": c.name, "arch": arch,
                                  "cubin": cubin.name, "info": c.info}).encode())
        done.append(c)
    return done


def _cached(cfg: KernelConfig, arch: str, nvcc: str, root: Path) -> Compiled | None:
    p = root / "index" / f"{_entry_hash(cfg, arch, nvcc)}.json"
    try:
        d = json.loads(p.read_text())
        cubin = root / "cubins" / d["cubin"]
        if cubin.is_file():
            return Compiled(cfg.key, cfg.name, arch, cubin=cubin, info=d["info"])
    except (OSError, ValueError, KeyError):
        pass
    return None


def compile_configs(cfgs, arch: str, *, root: str | Path | None = None, jobs: int | None = None,
                    progress=None) -> dict[str, Compiled]:
    """Compile configs for ``arch`` (e.g. 'sm_90'); returns {config key: Compiled}.

    Cached configs are not compiled again. The rest are split into groups of at
    most MAX_PER_CALL kernels, compiled by parallel nvcc calls. ``progress`` is
    called with the number of configs finished after each group.
    """
    nvcc = find_nvcc()
    root = kernel_dir(root)
    cfgs = list(dict.fromkeys(cfgs))
    out: dict[str, Compiled] = {}
    todo = []
    for cfg in cfgs:
        hit = _cached(cfg, arch, nvcc, root)
        if hit:
            out[cfg.key] = hit
        else:
            todo.append(cfg)
    if progress and out:
        progress(len(out))
    if todo:
        jobs = jobs or os.cpu_count() or 1
        per = max(1, min(MAX_PER_CALL, -(-len(todo) // jobs)))
        groups = [todo[i:i + per] for i in range(0, len(todo), per)]
        with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
            for fut in cf.as_completed([ex.submit(_build, g, arch, nvcc, root) for g in groups]):
                res = fut.result()
                out.update((c.key, c) for c in res)
                if progress:
                    progress(len(res))
    return {c.key: out[c.key] for c in cfgs}


def compile_file(path: str | Path, arch: str, *, root: str | Path | None = None) -> Path:
    """Compile a plain .cu file (no template slots) to a cached cubin."""
    nvcc = find_nvcc()
    src = Path(path).read_bytes()
    digest = hashlib.sha256(b"|".join([src, arch.encode(), nvcc_version(nvcc).encode(),
                                       *(f.encode() for f in FLAGS)])).hexdigest()[:24]
    cubin = kernel_dir(root) / "cubins" / f"{Path(path).stem}-{digest}.cubin"
    if cubin.is_file():
        return cubin
    with tempfile.TemporaryDirectory(prefix="autotrans-") as d:
        out = Path(d) / "out.cubin"
        r = subprocess.run([nvcc, "-cubin", f"-arch={arch}", *FLAGS, str(path), "-o", str(out)],
                           capture_output=True, text=True)
        if r.returncode:
            raise CompileError(f"nvcc failed on {path}:\n{r.stderr[-4000:]}")
        _atomic_write(cubin, out.read_bytes())
    return cubin
