"""The one way autotrans runs nvcc: an argument list (never a shell string) in a
private temporary folder, for GPU cubins and host emulators alike."""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

FLAGS = ("-std=c++17", "-O3", "-Xptxas", "-v")


class CompileError(RuntimeError):
    """nvcc is missing or failed."""


def find_nvcc() -> str:
    """nvcc from $AUTOTRANS_NVCC, PATH, $CUDA_HOME or /usr/local/cuda."""
    chosen = os.environ.get("AUTOTRANS_NVCC")
    if chosen:      # named: used or refused, never passed over
        if os.path.isfile(chosen) and os.access(chosen, os.X_OK):
            return chosen
        raise CompileError(f"AUTOTRANS_NVCC={chosen!r} is not an executable file")
    cands = [shutil.which("nvcc")]
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


def run(sources: dict[str, str], main: str, args: list[str], includes=()) -> tuple[bytes | None, str]:
    """Write ``sources`` ({file name: text}) and the headers of ``includes``
    (folders) to a private temporary folder and run nvcc there on ``main``.

    nvcc sees relative paths only (it hands some to a shell internally, so a
    space or a quote in a checkout or TMPDIR path must never reach it).
    Returns (the output file's bytes, or None if nvcc failed; its log)."""
    with tempfile.TemporaryDirectory(prefix="autotrans-nvcc-") as d:
        for folder in includes:
            for h in Path(folder).iterdir():
                if h.suffix in (".cuh", ".h") and h.name not in sources:
                    shutil.copyfile(h, Path(d, h.name))
        for name, text in sources.items():
            Path(d, name).write_text(text)
        cmd = [find_nvcc(), *args, "-I", ".", main, "-o", "out"]
        r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, cwd=d)
        log = r.stderr + r.stdout
        if r.returncode and not log.strip():
            log = f"{cmd[0]} exited with status {r.returncode} and printed nothing"
        out = Path(d, "out")
        if r.returncode != 0 or not out.is_file():
            return None, log
        return out.read_bytes(), log
