"""Run kernels' own template code on the CPU.

``cuda_templates/emulate.cu`` is compiled with nvcc into a host program that
includes the rendered kernels. It runs every block and thread of a launch,
phase by phase, through the same __host__ __device__ index and data-movement
code the GPU runs, and can trace each shared-memory access. The CPU tests use
it to check indexing bit-exactly against NumPy; banks.py uses its traces.
Strided configs (KernelConfig.layout "strided") run on whole host buffers
(emulate_strided): a TileProblem or RowsProblem at given offsets into them,
with their store epilogue (KernelConfig.epilogue: a fused conjugate counts
its byte groups from the output pointer, wherever the offset puts it) or
cast (KernelConfig.cast: cuda_templates/cast.cuh's integer conversions, the
GPU's code; the problem's out_elem sizes the output side).
"""
from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..build import nvcc
from ..build.store import Store, digest
from ..core.paths import template_dir
from ..core.problem import as_bmn
from ..kernels.config import KernelConfig
from ..kernels.strided import byte_extent, launch_problem, pack, pointer_alignment, strided_problems
from ..kernels.templates import render, templates_hash

POISON = 0xA5
GUARD = 256  # bytes of poison before and after the output (and around the input)
HOST_ALIGN = 256  # the emulator's buffers are 256-byte aligned (emulate.cu's Buffer, as cudaMalloc's)


@dataclass
class Emulated:
    """Output of one emulated launch: the transposed array, and whether the
    guard bands around the output are untouched."""
    out: np.ndarray
    guards_ok: bool


# A batch of more kernels than this is built unoptimised: the host compiler's
# time grows with the kernels and dominates a batch's checks (72 skinny kernels
# on odd shapes: 59 s to build at -O2 and 2 s to run, 26 s and 4 s at -O0),
# where a few kernels on large arrays (4097x4095) run twice as fast at -O2.
FEW = 4


def build(cfgs) -> Path:
    """The emulator binary for these configs (kept in the kernel store by content)."""
    cfgs = sorted(set(cfgs), key=lambda c: c.key)
    kernels = "\n".join(render(c) for c in cfgs)
    table = "".join(f"AT_KERNEL({c.name})\n" for c in cfgs)
    main = (template_dir() / "emulate.cu").read_text()
    opt = "-O2" if len(cfgs) <= FEW else "-O0"
    key = digest((templates_hash() + main + kernels + table + opt).encode())
    store = Store()
    entry = store.index_get("emulator", key)
    if entry is None:
        exe, log = nvcc.run({"kernels.inc": kernels, "table.inc": table, "emulate.cu": main}, "emulate.cu",
                            [opt, "-std=c++17"], includes=[template_dir()])
        if exe is None:
            raise nvcc.CompileError(f"emulator build failed:\n{log[-4000:]}")
        entry = {"object": store.put(exe, mode=0o700)}
        store.index_put("emulator", key, entry)
    return store.path(entry["object"])


def _run(exe: Path, lines: list[str], cwd) -> list[str]:
    r = subprocess.run([str(exe)], input="".join(lines), capture_output=True, text=True, cwd=cwd)
    if r.returncode or "error" in r.stdout:
        raise RuntimeError(f"emulator failed (rc {r.returncode}): {r.stdout[-2000:]} {r.stderr[-2000:]}")
    return r.stdout.splitlines()


def kernel_table(cfgs) -> dict[str, dict]:
    """What the compiled templates say of each kernel: threads, shared memory, tile."""
    out = {}
    for line in _run(build(cfgs), ["list\n"], None):
        name, nt, smem, tr, tc = line.split()
        out[name] = {"threads": int(nt), "smem": int(smem), "tile": (int(tr), int(tc))}
    return out


def blocks(cfg: KernelConfig, shapes) -> list[int]:
    """The blocks the C++ side (at::blocks, what the emulator runs) gives each shape."""
    bmns = [as_bmn(s) for s in shapes]
    lines = [f"blocks {cfg.name} {b} {m} {n}\n" for b, m, n in bmns]
    return [int(v) for v in _run(build([cfg]), lines, None)]


def emulate_many(items, offset: int = 0) -> list[Emulated]:
    """Emulate each (config, array) launch; arrays are (M, N) or (B, M, N) and
    must have the config's element size. One process runs them all. offset:
    bytes by which input and output pointers miss 16-byte alignment."""
    items = list(items)
    exe = build([c for c, _ in items])
    results, lines = [], []
    with tempfile.TemporaryDirectory(prefix="autotrans-emu-") as d:
        for i, (cfg, x) in enumerate(items):
            if cfg.layout != "dense":
                raise ValueError(f"{cfg.key} is a strided config: use emulate_strided")
            if x.dtype.itemsize != cfg.elem_bytes:
                raise ValueError(f"{cfg.key} moves {cfg.elem_bytes}-byte elements, array has {x.dtype}")
            b, m, n = as_bmn(x.shape)
            cfg.check_launch((b, m, n))
            if cfg.fixed and (b, m, n) != cfg.fixed_shape:
                raise ValueError(f"{cfg.key} is compiled for the shape {cfg.fixed} only, not {b}x{m}x{n}")
            if not cfg.aligned_for((m, n)):
                raise ValueError(f"{cfg.key} needs rows aligned to {cfg.vec_bytes} bytes; shape {x.shape} is not")
            inp, outp = Path(d) / f"in{i}", Path(d) / f"out{i}"   # job lines name them relative to d
            raw = np.ascontiguousarray(x).view(np.uint8).ravel()
            pad = np.full(GUARD + offset, POISON, np.uint8)
            inp.write_bytes(pad.tobytes() + raw.tobytes() + pad.tobytes())
            outp.write_bytes(np.full(raw.size + 2 * (GUARD + offset), POISON, np.uint8).tobytes())
            lines.append(f"run {cfg.name} {b} {m} {n} {inp.name} {GUARD + offset} {outp.name} {GUARD + offset} - 0\n")
        _run(exe, lines, d)
        for i, (cfg, x) in enumerate(items):
            buf = np.frombuffer((Path(d) / f"out{i}").read_bytes(), np.uint8)
            g = GUARD + offset
            body = buf[g:buf.size - g].copy()
            guards = np.concatenate([buf[:g], buf[buf.size - g:]])
            shape = x.shape[:-2] + (x.shape[-1], x.shape[-2])
            results.append(Emulated(body.view(x.dtype).reshape(shape), bool((guards == POISON).all())))
    return results


def emulate(cfg: KernelConfig, x: np.ndarray) -> Emulated:
    """Emulate one launch of ``cfg`` transposing ``x``."""
    return emulate_many([(cfg, x)])[0]


def trace(cfg: KernelConfig, shape=None, block: int = 0) -> list[tuple[int, int, int, int, int, int]]:
    """Shared-memory accesses of one block: (phase, thread, seq, offset, bytes, store).

    The default shape is two tiles by two tiles, so block 0 is an interior tile
    (a fixed config's: its own, the only one it takes)."""
    b, m, n = as_bmn(shape or cfg.fixed_shape or (2 * cfg.tile_rows, 2 * cfg.tile_cols))
    cfg.check_launch((b, m, n))
    if cfg.fixed and (b, m, n) != cfg.fixed_shape:
        raise ValueError(f"{cfg.key} is compiled for the shape {cfg.fixed} only, not {b}x{m}x{n}")
    exe = build([cfg])
    with tempfile.TemporaryDirectory(prefix="autotrans-emu-") as d:
        size = b * m * n * cfg.elem_bytes
        inp, outp, tr = Path(d) / "in", Path(d) / "out", Path(d) / "trace"
        inp.write_bytes(bytes(size))
        outp.write_bytes(bytes(size))
        _run(exe, [f"run {cfg.name} {b} {m} {n} in 0 out 0 trace {block}\n"], d)
        return [tuple(int(v) for v in line.split()) for line in tr.read_text().splitlines()]


def sector_counts(cfg: KernelConfig, shape, offset: int = 0) -> tuple[int, int, int, int, int, int]:
    """Global-memory traffic of one whole launch on ``shape``, from the kernel's
    own index math: (load instructions, load sectors, store instructions,
    store sectors, load bytes, store bytes), sectors being the 32-byte pieces
    each warp instruction touches (emulate.cu's "sectors" job). offset: bytes
    by which both pointers miss 256-byte alignment."""
    b, m, n = as_bmn(shape)
    cfg.check_launch((b, m, n))
    if cfg.layout != "dense":
        raise ValueError(f"{cfg.key} is a strided config: sector counts take dense configs")
    if cfg.fixed and (b, m, n) != cfg.fixed_shape:
        raise ValueError(f"{cfg.key} is compiled for the shape {cfg.fixed} only, not {b}x{m}x{n}")
    if not cfg.aligned_for((m, n)):
        raise ValueError(f"{cfg.key} needs rows aligned to {cfg.vec_bytes} bytes; shape {b}x{m}x{n} is not")
    exe = build([cfg])
    with tempfile.TemporaryDirectory(prefix="autotrans-emu-") as d:
        size = b * m * n * cfg.elem_bytes + offset
        (Path(d) / "in").write_bytes(bytes(size))
        (Path(d) / "out").write_bytes(bytes(size))
        line, = _run(exe, [f"sectors {cfg.name} {b} {m} {n} in {offset} out {offset}\n"], d)
    return _counts(line)


def strided_sector_counts(cfg: KernelConfig, problem) -> tuple[int, int, int, int, int, int]:
    """sector_counts() of one strided launch of cfg moving ``problem`` (a
    TileProblem, RowsProblem or NdTileProblem), its pointers at the starts of
    256-byte aligned buffers that just hold the bytes it touches."""
    line, = _strided_job(cfg, problem, "strided_sectors", "")
    return _counts(line)


def strided_trace(cfg: KernelConfig, problem, block: int = 0) -> list[tuple[int, int, int, int, int, int]]:
    """trace() of block ``block`` of a strided launch of cfg moving ``problem``
    (placed as strided_sector_counts places it); a strip's tile k has the
    phases 3k (load), 3k + 1 (mid) and 3k + 2 (store)."""
    with tempfile.TemporaryDirectory(prefix="autotrans-trace-") as t:
        tr = Path(t) / "trace"
        _strided_job(cfg, problem, "strided_trace", f" {tr} {int(block)}")
        return [tuple(int(v) for v in line.split()) for line in tr.read_text().splitlines()]


def _strided_job(cfg: KernelConfig, problem, job: str, tail: str) -> list[str]:
    """The emulator's reply to a strided ``job`` of cfg on problem, with zeroed
    buffers that just hold the bytes it touches; ``tail`` ends the job's line."""
    (ilo, ihi), (olo, ohi) = byte_extent(problem)
    src, dst = np.zeros(ihi - ilo, np.uint8), np.zeros(ohi - olo, np.uint8)
    _check_strided(cfg, problem, src, dst, -ilo, -olo)
    exe = build([cfg])
    with tempfile.TemporaryDirectory(prefix="autotrans-emu-") as d:
        (Path(d) / "args").write_bytes(pack(launch_problem(cfg, problem), 0, 0))
        (Path(d) / "in").write_bytes(src.tobytes())
        (Path(d) / "out").write_bytes(dst.tobytes())
        return _run(exe, [f"{job} {cfg.name} args in {-ilo} out {-olo}{tail}\n"], d)


def _counts(line: str) -> tuple[int, int, int, int, int, int]:
    word, *counts = line.split()
    if word != "sectors" or len(counts) != 6:
        raise RuntimeError(f"emulator: unexpected reply {line!r}")
    return tuple(int(v) for v in counts)


def _buffer(a, what: str) -> np.ndarray:
    if not isinstance(a, np.ndarray) or a.dtype != np.uint8 or a.ndim != 1:
        raise TypeError(f"{what} must be a 1-D uint8 array (a whole buffer), not {type(a).__name__}")
    return a


def _check_strided(cfg: KernelConfig, problem, src: np.ndarray, dst: np.ndarray, src_offset: int,
                   dst_offset: int) -> None:
    """ValueError unless cfg can run problem at these offsets within these buffers."""
    if cfg.layout != "strided":
        raise ValueError(f"{cfg.key} is a dense config: use emulate")
    bad = strided_problems(cfg, problem, min(HOST_ALIGN, pointer_alignment(src_offset, dst_offset)))
    if bad:
        raise ValueError(f"{cfg.key} cannot run this problem: " + "; ".join(bad))
    (ilo, ihi), (olo, ohi) = byte_extent(problem)
    if ilo < ihi and not (0 <= src_offset + ilo and src_offset + ihi <= src.size):
        raise ValueError(f"the problem reads bytes [{ilo}, {ihi}) from offset {src_offset}, outside the "
                         f"{src.size}-byte source buffer")
    if olo < ohi and not (0 <= dst_offset + olo and dst_offset + ohi <= dst.size):
        raise ValueError(f"the problem writes bytes [{olo}, {ohi}) from offset {dst_offset}, outside the "
                         f"{dst.size}-byte destination buffer")


def emulate_strided_many(items) -> list[np.ndarray]:
    """Emulate each (config, problem, src, dst, src_offset, dst_offset) strided
    launch: problem (a TileProblem or RowsProblem) has its input pointer at
    byte src_offset of src and its output pointer at dst_offset of dst (1-D
    uint8 arrays, whole buffers, whose starts count as 16-byte aligned).
    Returns each dst as the launch leaves it (dst itself is not changed). One
    process runs them all."""
    items = [tuple(it) for it in items]
    for cfg, problem, src, dst, so, do in items:
        _check_strided(cfg, problem, _buffer(src, "src"), _buffer(dst, "dst"), so, do)
    exe = build([it[0] for it in items])
    lines = []
    with tempfile.TemporaryDirectory(prefix="autotrans-emu-") as d:
        for i, (cfg, problem, src, dst, so, do) in enumerate(items):
            (Path(d) / f"args{i}").write_bytes(pack(launch_problem(cfg, problem), 0, 0))
            (Path(d) / f"in{i}").write_bytes(src.tobytes())
            (Path(d) / f"out{i}").write_bytes(dst.tobytes())
            lines.append(f"strided {cfg.name} args{i} in{i} {so} out{i} {do}\n")
        _run(exe, lines, d)
        return [np.frombuffer((Path(d) / f"out{i}").read_bytes(), np.uint8).copy() for i in range(len(items))]


def emulate_strided(cfg: KernelConfig, problem, src: np.ndarray, dst: np.ndarray, src_offset: int = 0,
                    dst_offset: int = 0) -> np.ndarray:
    """Emulate one strided launch of ``cfg`` (see emulate_strided_many)."""
    return emulate_strided_many([(cfg, problem, src, dst, src_offset, dst_offset)])[0]
