"""Compile kernel configs to cubins, many kernels per nvcc call, kept in the
kernel store.

Each compiled config has an index entry keyed by (config key, templates hash,
arch, nvcc version, flags) that names the cubin holding it (by its hash) and
the ptxas resource report of its kernel. Compiling a space again therefore
compiles nothing.
"""
from __future__ import annotations

import concurrent.futures as cf
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.paths import template_dir
from ..kernels.config import KernelConfig
from ..kernels.templates import render_unit, templates_hash
from . import nvcc
from .nvcc import FLAGS, CompileError, find_nvcc, nvcc_version
from .store import Store

MAX_PER_CALL = 24

__all__ = ["Compiled", "CompileError", "compile_configs", "compile_file", "find_compiled", "parse_ptxas"]


@dataclass(frozen=True)
class Compiled:
    """A compile outcome: the store object holding the kernel and its ptxas
    report, or an error."""
    key: str
    name: str
    arch: str
    object: str | None = None   # the cubin's hash in the kernel store
    info: dict | None = None    # registers, smem, stack, spill_stores, spill_loads, lmem
    error: str | None = None
    root: Path | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def image(self) -> bytes:
        """The cubin's bytes, checked against its hash."""
        if not self.ok:
            raise CompileError(f"{self.key} did not compile: {self.error}")
        return Store(self.root).get(self.object)


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


def _index_key(cfg: KernelConfig, arch: str, tool: str) -> str:
    return "|".join([cfg.key, templates_hash(), arch, nvcc_version(tool), *FLAGS])


def _cubin(source: str, arch: str) -> tuple[bytes | None, str]:
    return nvcc.run({"unit.cu": source}, "unit.cu", ["-cubin", f"-arch={arch}", *FLAGS],
                    includes=[template_dir()])


def _build(cfgs, arch, tool, store: Store) -> list[Compiled]:
    """Compile one group; on failure, each config alone, so one bad kernel fails alone."""
    blob, log = _cubin(render_unit(cfgs), arch)
    if blob is None:
        if len(cfgs) == 1:
            return [Compiled(cfgs[0].key, cfgs[0].name, arch, error=log.strip()[-2000:])]
        return [c for cfg in cfgs for c in _build([cfg], arch, tool, store)]
    obj, infos = store.put(blob), parse_ptxas(log)
    done = []
    for cfg in cfgs:
        c = Compiled(cfg.key, cfg.name, arch, obj, infos.get(cfg.name, {}), root=store.root)
        store.index_put("cubin", _index_key(cfg, arch, tool),
                        {"key": c.key, "name": c.name, "arch": arch, "object": obj, "info": c.info})
        done.append(c)
    return done


def _cached(cfg: KernelConfig, arch: str, tool: str, store: Store) -> Compiled | None:
    e = store.index_get("cubin", _index_key(cfg, arch, tool))
    if e is None or e.get("key") != cfg.key or e.get("name") != cfg.name or not isinstance(e.get("info"), dict):
        return None
    return Compiled(cfg.key, cfg.name, arch, e["object"], e["info"], root=store.root)


def find_compiled(cfg: KernelConfig, arch: str, *, root: str | Path | None = None) -> Compiled | None:
    """cfg's cubin for ``arch`` if the store holds one, else None; runs no
    compile (nvcc is asked its version once a process: the store's key holds it)."""
    return _cached(cfg, arch, find_nvcc(), Store(root))


def compile_configs(cfgs, arch: str, *, root: str | Path | None = None, jobs: int | None = None,
                    progress=None) -> dict[str, Compiled]:
    """Compile configs for ``arch`` (e.g. 'sm_90'); returns {config key: Compiled}.

    Cached configs are not compiled again. The rest are split into groups of at
    most MAX_PER_CALL kernels, compiled by parallel nvcc calls. ``progress`` is
    called with the number of configs finished after each group.
    """
    tool, store = find_nvcc(), Store(root)
    cfgs = list(dict.fromkeys(cfgs))
    out: dict[str, Compiled] = {}
    todo = []
    for cfg in cfgs:
        hit = _cached(cfg, arch, tool, store)
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
            for fut in cf.as_completed([ex.submit(_build, g, arch, tool, store) for g in groups]):
                res = fut.result()
                out.update((c.key, c) for c in res)
                if progress:
                    progress(len(res))
    return {c.key: out[c.key] for c in cfgs}


def compile_file(path: str | Path, arch: str, *, root: str | Path | None = None) -> Compiled:
    """Compile a plain .cu file (no template slots) to a cubin in the store."""
    tool, store, path = find_nvcc(), Store(root), Path(path)
    src = path.read_text()
    key = "|".join(["file", src, arch, nvcc_version(tool), *FLAGS])
    e = store.index_get("file", key)
    if e is None:
        blob, log = nvcc.run({path.name: src}, path.name, ["-cubin", f"-arch={arch}", *FLAGS])
        if blob is None:
            raise CompileError(f"nvcc failed on {path}:\n{log[-4000:]}")
        e = {"object": store.put(blob)}
        store.index_put("file", key, e)
    return Compiled(path.name, path.stem, arch, e["object"], {}, root=store.root)
