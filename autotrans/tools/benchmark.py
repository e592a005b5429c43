"""The benchmark: autotrans against the copy roofline and its peers, measured
the way GPU kernels are usually measured, with every output checked.

- One process. In every repetition each contender runs once, in an order that
  rotates from one repetition to the next.
- Before every timed launch the L2 is flushed by writing a buffer of
  max(2 x L2, 256 MiB) (Triton's do_bench writes 256 MB). A short spin kernel
  then keeps the stream busy while the host queues the launch, so the CUDA
  events recorded just before and after it time the GPU work alone. Medians
  and IQRs are taken over REPS repetitions.
- The roofline is the faster of cudaMemcpy device-to-device and a 16-byte
  vector copy kernel (cuda_templates/roofline.cu), both moving the same bytes
  in the same run.
- Peers run in the same process on the same data, on the same (legacy default)
  stream: torch eager ``out.copy_(x.mT)``, torch.compile (compiled afresh for
  each shape), CuPy ``ascontiguousarray(x.swapaxes(-1, -2))`` and cuBLAS geam
  (through CuPy; 2-D float32/float64/complex only). JAX/XLA runs on streams of
  its own, so it is timed by wall clock, call to completion, and reported as
  an estimate.
- tuned: the config tune() finds for the shape (it is tuned into the user
  cache if it is not there). untuned: what choose() picks with an empty user
  cache and only the shipped results.
- Every output, ours and the peers', is compared byte for byte on the GPU with
  the transposed input. Each is checked twice, on the complement of the input
  first, so a stale right answer left in a reused buffer cannot pass. Float
  inputs are finite and normal, so arithmetic peers such as geam reproduce
  them exactly.

A peer that is missing, or that fails or gives a wrong answer on a case, is
recorded as such and the run goes on. Results are plain JSON rows (see
Row.to_dict); evaluate(), report() and readme_table() work on those rows alone,
without a GPU.
"""
from __future__ import annotations

import contextlib
import datetime
import functools
import gc
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .. import api
from ..api.select import choose
from ..backend import cuda as driver
from ..backend import memory
from ..backend.driver import locate
from ..build.compile import compile_file
from ..core.paths import atomic_write, template_dir
from ..core.problem import ELEM_SIZES, as_bmn, elem_size, gbps, parse_dtype, parse_shape
from ..core.version import VERSION
from ..results.store import ResultCache
from ..tuning import loader, timing
from ..tuning.space import space_id, widest_vector

FORMAT = "autotrans-benchmark"
FORMAT_VERSION = 1
MIB = 1 << 20
REPS = 25                       # repetitions per case (medians and IQRs over these)
FLUSH_MIN_BYTES = 256 * MIB     # the L2 flush writes max(2 x L2, this)
DATASHEET_GBPS = 4800.0         # the H200's HBM3e bandwidth on its datasheet
SPIN_MIN_US, SPIN_MAX_US = 20.0, 2000.0
BLOCK = (256, 1, 1)

CONTENDERS = ("tuned", "untuned", "memcpy", "copy16", "torch", "torch_compile", "cupy", "geam", "jax")
ROOFLINE = ("memcpy", "copy16")
PEERS = ("torch", "torch_compile", "cupy", "geam")    # the peer target's field (XLA is an estimate)
LABELS = {"tuned": "autotrans tuned", "untuned": "autotrans untuned", "memcpy": "cudaMemcpy D2D",
          "copy16": "16-byte copy kernel", "torch": "torch eager", "torch_compile": "torch.compile",
          "cupy": "CuPy", "geam": "cuBLAS geam", "jax": "XLA*"}
GEAM_DTYPES = ("float32", "float64", "complex64", "complex128")

# Targets: ratios of medians.
NEED_PEER = 1.00            # tuned time <= the best peer's
NEED_ROOF_LARGE = 0.92      # of the roofline, cases >= 16 MiB
NEED_ROOF_MID = 0.85        # of the roofline, cases of 1-16 MiB (below 1 MiB: the peer target alone)
NEED_UNTUNED = 0.95         # untuned speed over tuned speed
NEED_TUNE_COLD_S, NEED_TUNE_WARM_S = 10.0, 2.0
TARGETS = {"peer": NEED_PEER, "roofline_ge_16mib": NEED_ROOF_LARGE, "roofline_1_16mib": NEED_ROOF_MID,
           "untuned": NEED_UNTUNED, "tune_cold_s": NEED_TUNE_COLD_S, "tune_warm_s": NEED_TUNE_WARM_S}

METHOD = [
    "One process; in every repetition each contender runs once, the order rotating by one "
    "each repetition.",
    "Before every timed launch: an L2 flush (a kernel writing max(2 x L2, 256 MiB)), then a spin "
    "kernel that keeps the stream busy while the host queues the launch; CUDA events are recorded "
    "just before and just after the launch, so they time the GPU work alone.",
    f"Medians and IQRs over {REPS} repetitions (unless stated otherwise in meta.reps).",
    "Roofline: the faster of cudaMemcpy device-to-device and a 16-byte vector copy kernel "
    "(cuda_templates/roofline.cu, with a scalar tail) moving the same bytes in the same run. "
    "GB/s = 2 x bytes / time; 'of 4.8 TB/s' is that over the datasheet bandwidth.",
    "Peers, in the same process on the same data and stream: torch eager out.copy_(x.mT); "
    "torch.compile(lambda t: t.mT.contiguous(), dynamic=False) compiled afresh for each shape "
    "(dynamo reset, recompile limits raised); CuPy ascontiguousarray(x.swapaxes(-1, -2)); "
    "cuBLAS geam through cupy.cublas.geam (2-D float32/float64/complex). "
    "XLA*: jax.jit(swapaxes), wall clock from call to block_until_ready after the same flush, "
    "an estimate (it includes dispatch and the wait).",
    "tuned: the config tune() found for the shape (tuned into the user cache when missing). "
    "untuned: the config choose() picks with an empty user cache and only the shipped results "
    "(cache/*.json).",
    "Every output, ours and the peers', is compared byte for byte on the GPU with the transposed "
    "input: first on the complement of the input, then on the input itself (so a stale right "
    "answer in a reused buffer cannot pass), with outputs we own pre-filled with the complement of "
    "the right answer. Float inputs are finite and normal.",
]


# ----------------------------------------------------------------------------
# Cases: the zoo, the held-out shapes, the shipped grid
# ----------------------------------------------------------------------------

CLASSES = ("square", "rect", "odd", "prime", "skinny", "small", "batched", "llm")
BANDS = ("small", "mid", "large")       # < 1 MiB, 1-16 MiB, >= 16 MiB


def band(nbytes: int) -> str:
    """The size band a case's targets depend on."""
    return "small" if nbytes < MIB else ("mid" if nbytes < 16 * MIB else "large")


@dataclass(frozen=True)
class Case:
    """One benchmark case: a shape ((M, N) or (B, M, N)) and a dtype."""
    shape: tuple
    dtype: str
    classes: tuple = ()
    held_out: bool = False

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype).name)
        if min(as_bmn(self.shape)) < 1:
            raise ValueError(f"case {self.shape}: every dimension must be at least 1")
        elem_size(self.dtype)

    @property
    def name(self) -> str:
        return f"{'x'.join(map(str, self.shape))}:{self.dtype}"

    @property
    def bmn(self) -> tuple:
        return as_bmn(self.shape)

    @property
    def elem_bytes(self) -> int:
        return np.dtype(self.dtype).itemsize

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.bmn)) * self.elem_bytes

    @property
    def out_shape(self) -> tuple:
        return self.shape[:-2] + (self.shape[-1], self.shape[-2])

    @property
    def aligned(self) -> bool:
        """Whether every input and output row is 16-byte aligned."""
        return widest_vector(self.bmn, self.elem_bytes) >= 16


def parse_cases(spec: str, held_out: bool = False) -> list[Case]:
    """Cases from lines of ``SHAPE DTYPE[,DTYPE...] CLASS[,CLASS...]`` ('#' starts a comment)."""
    out = []
    for line in spec.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        shape, dtypes, classes = line.split()
        for dt in dtypes.split(","):
            out.append(Case(parse_shape(shape), parse_dtype(dt).name, tuple(classes.split(",")), held_out))
    return out


_ZOO = """
16384x16384  int8                             square
8192x8192    int8,float16,float32             square
4096x4096    float32,float64,complex128       square
2048x2048    float32,float64                  square
1024x1024    int8,float16,float32,complex128  square
12288x3072   float32                          rect
3072x12288   float32                          rect
16384x2048   float16                          rect
2048x16384   int8                             rect
1024x8192    float64                          rect
8192x1024    complex128                       rect
4097x4095    int8,float16,float32,float64,complex128  odd
1023x1025    float32                          odd
8191x8193    int8                             odd
3001x999     float64                          odd
4093x4099    float32                          prime
7919x7907    int8                             prime
1021x1031    float16                          prime
2039x2029    float64                          prime
509x521      complex128                       prime
17x100003    float16                          prime,skinny
100003x17    float16                          prime,skinny
1048576x1    float32                          skinny
1x1048576    float32                          skinny
262144x3     float16                          skinny
3x262144     float16                          skinny
1000000x8    int8                             skinny
8x1000000    int8                             skinny
131072x16    float64                          skinny
16x131072    float64                          skinny
65536x32     complex128                       skinny
32x65536     complex128                       skinny
65536x64     float32                          skinny
64x65536     float32                          skinny
256x256      float32                          small
500x500      float32                          small
128x128      float64                          small
64x64        complex128                       small
512x512      int8                             small
300x500      float16                          small
33x33        float32                          small,odd
720x1280     int8                             small
256x64x64    float32                          batched
1024x32x32   float16                          batched
512x128x128  int8                             batched
64x96x96     float64                          batched
128x33x65    complex128                       batched,odd
4096x8x16    float32                          batched,skinny
4x2048x2048  float32                          batched
4x4096x4096  int8                             batched
2x4096x4096  float16                          batched
8x1024x1024  float64                          batched
2x1024x2048  complex128                       batched
50257x768    float32,float16                  llm     # vocabulary x hidden (GPT-2)
768x50257    float16                          llm
32000x4096   float16                          llm     # vocabulary x hidden (LLaMA)
4096x32000   int8                             llm
4096x11008   float16                          llm     # hidden x MLP (LLaMA)
11008x4096   float16                          llm
768x3072     float32                          llm     # hidden x 4 hidden (GPT-2)
3072x768     float32                          llm
32x2048x128  float16                          llm,batched   # (batch x heads, sequence, head dim)
32x128x2048  float16                          llm,batched
12x1024x64   float32                          llm,batched
64x4096x128  float16                          llm,batched
"""

# Shapes kept out of the shipped grid (tests check it): how well the untuned
# choice does on shapes nobody tuned.
_HELD_OUT = """
3000x5000    float32     rect
1500x1500    float32     square
6144x2560    float16     rect
50000x1600   float16     llm
1999x3001    int8        odd
10000x3333   int8        odd
12x345678    float32     skinny
7x500000     float32     skinny
96x1024x64   float16     batched,llm
48x200x200   int8        batched
5000x3000    float64     rect
2500x1000    float64     rect
1234x4321    complex128  odd
200x300      complex128  small
"""

QUICK = ("8192x8192:float32", "16384x16384:int8", "4096x4096:complex128", "1024x1024:float32",
         "4097x4095:float16", "4097x4095:float64", "17x100003:float16", "65536x64:float32",
         "64x65536:float32", "256x256:float32", "64x64:complex128", "256x64x64:float32",
         "4x2048x2048:float32", "50257x768:float32", "32000x4096:float16", "32x2048x128:float16",
         "131072x16:float64", "1999x3001:int8", "96x1024x64:float16", "5000x3000:float64")

README_CASES = ("8192x8192:float32", "16384x16384:int8", "8192x8192:float16", "4096x4096:float64",
                "4096x4096:complex128", "1024x1024:float32", "4097x4095:int8", "4097x4095:float16",
                "4097x4095:float32", "4097x4095:complex128", "17x100003:float16", "65536x64:float32",
                "64x65536:float32", "256x256:float32", "256x64x64:float32", "4x2048x2048:float32",
                "12288x3072:float32", "50257x768:float32", "32000x4096:float16", "4096x11008:float16",
                "32x2048x128:float16")


def zoo() -> list[Case]:
    """The benchmark's cases: every element size, every class of CLASSES."""
    return parse_cases(_ZOO)


def held_out() -> list[Case]:
    """Shapes that are not in the shipped grid, reported apart."""
    return parse_cases(_HELD_OUT, held_out=True)


def quick() -> list[Case]:
    """A subset of the zoo and the held-out shapes that runs in about a minute."""
    every = {c.name: c for c in zoo() + held_out()}
    return [every[n] for n in QUICK]


GRID_DTYPES = {1: "int8", 2: "float16", 4: "float32", 8: "float64", 16: "complex128"}
GRID_SQUARES = (256 * 1024, 4 * MIB, 32 * MIB, 128 * MIB)   # a few tiles .. far beyond L2
GRID_SKINNY_SIDES = (3, 16, 64)
GRID_ANCHORS = (((4096, 4096), "float32"),)   # named by tests/test_cli.py (an exact shipped entry)


def _fit(x: float, q: int, odd: bool) -> int:
    """The multiple of q nearest x (an odd multiple if ``odd``), at least q."""
    k = max(1, round(x / q))
    if odd and k % 2 == 0:
        k += 1
    return k * q


def _matrix(nbytes: int, e: int, aspect: float, align: int) -> tuple[int, int]:
    """(M, N) of about nbytes of e-byte elements with M / N about ``aspect``,
    whose rows (input and output) are ``align``-byte aligned: exactly, below
    16; at least, at 16."""
    n = math.sqrt(nbytes / e / aspect)
    q, odd = (max(1, 16 // e), False) if align >= 16 else (align // e, True)
    return _fit(aspect * n, q, odd), _fit(n, q, odd)


def _skinny(e: int, side: int) -> list[tuple]:
    long = _fit(8 * MIB / e / side, max(1, 16 // e), False)
    return [(long, side), (side, long)]


def grid() -> list[Case]:
    """The shapes tuned for the shipped results, most important first: for
    every element size, squares from a few tiles to far beyond L2, tall and wide
    rectangles, skinny matrices in both orientations, batches of small and of
    large matrices, all with 16-byte aligned rows; then the same classes with
    rows aligned to the element size only; then the alignments in between;
    then batches of tiny matrices."""
    out: dict = {}

    def add(shape, e, *classes):
        c = Case(shape, GRID_DTYPES[e], classes)
        out.setdefault((c.bmn, e), c)

    for shape, dt in GRID_ANCHORS:
        add(shape, np.dtype(dt).itemsize, "square", "anchor")
    for e in ELEM_SIZES:
        for size in GRID_SQUARES:
            add(_matrix(size, e, 1, 16), e, "square", "align16")
        for size in (4 * MIB, 64 * MIB):
            add(_matrix(size, e, 8, 16), e, "rect", "align16")
            add(_matrix(size, e, 1 / 8, 16), e, "rect", "align16")
        add((256, *_matrix(16 * 1024, e, 1, 16)), e, "batched", "align16")
        add((4, *_matrix(16 * MIB, e, 1, 16)), e, "batched", "align16")
    for e in ELEM_SIZES:
        for side in GRID_SKINNY_SIDES:
            for shape in _skinny(e, side):
                add(shape, e, "skinny")
    for e in ELEM_SIZES[:-1]:
        for size in (256 * 1024, 4 * MIB, 64 * MIB):
            add(_matrix(size, e, 1, e), e, "square", f"align{e}")
        add(_matrix(16 * MIB, e, 8, e), e, "rect", f"align{e}")
        add(_matrix(16 * MIB, e, 1 / 8, e), e, "rect", f"align{e}")
        add((64, *_matrix(64 * 1024, e, 1, e)), e, "batched", f"align{e}")
    for e in ELEM_SIZES[:-1]:
        for a in (a for a in (8, 4, 2) if e < a):
            for size in (4 * MIB, 64 * MIB):
                add(_matrix(size, e, 1, a), e, "square", f"align{a}")
            for shape in _skinny_at(e, a):
                add(shape, e, "skinny", f"align{a}")
    for e in ELEM_SIZES:     # batches of tiny matrices (both sides under 64)
        add((1024, *_matrix(32 * 32 * e, e, 1, 16)), e, "batched", "tiny", "align16")
        if e < 16:
            add((512, *_matrix(33 * 33 * e, e, 1, e)), e, "batched", "tiny", f"align{e}")
    return list(out.values())


def _skinny_at(e: int, align: int) -> list[tuple]:
    """A skinny pair whose short side's rows are exactly ``align``-byte aligned."""
    side = align // e
    long = _fit(8 * MIB / e / side, max(1, 16 // e), False)
    return [(long, side), (side, long)]


# ----------------------------------------------------------------------------
# Results: one contender on one case, one case's row
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """One contender on one case. status: ok, wrong (a bit-exact check failed),
    failed (an error), missing (its library is not installed), n/a (it cannot
    do this case), skipped."""
    status: str
    median_us: float | None = None
    q1_us: float | None = None
    q3_us: float | None = None
    n: int = 0
    config: str | None = None
    source: str | None = None
    setup_s: float | None = None      # tune() / compile seconds spent on this case
    note: str = ""

    @classmethod
    def timed(cls, samples, **kw) -> "Result":
        if not samples:
            return cls("failed", note="no timing sample", **kw)
        s = timing.Stats.of(samples)
        return cls("ok", s.median_us, s.q1_us, s.q3_us, s.n, **kw)

    def to_dict(self) -> dict:
        d = {"status": self.status, "median_us": self.median_us, "q1_us": self.q1_us, "q3_us": self.q3_us,
             "iqr_us": None if self.q1_us is None else self.q3_us - self.q1_us, "n": self.n,
             "config": self.config, "source": self.source, "setup_s": self.setup_s, "note": self.note}
        return d


@dataclass(frozen=True)
class Row:
    """One case: every contender's result."""
    case: Case
    results: dict = field(default_factory=dict)     # contender name -> Result
    spin_us: float = 0.0
    seconds: float = 0.0

    def roofline(self) -> tuple[float, str] | None:
        """(µs, which) of the faster copy, or None if neither ran."""
        ok = [(r.median_us, k) for k in ROOFLINE if (r := self.results.get(k)) and r.status == "ok"]
        return min(ok) if ok else None

    def to_dict(self) -> dict:
        c, roof = self.case, self.roofline()
        results = {}
        for name, r in self.results.items():
            d = r.to_dict()
            if r.status == "ok":
                d["gbps"] = gbps(c.nbytes, r.median_us)
                d["frac_datasheet"] = d["gbps"] / DATASHEET_GBPS
                d["frac_roofline"] = roof[0] / r.median_us if roof else None
            results[name] = d
        out = {"name": c.name, "shape": list(c.shape), "bmn": list(c.bmn), "dtype": c.dtype,
               "elem_bytes": c.elem_bytes, "nbytes": c.nbytes, "classes": list(c.classes),
               "held_out": c.held_out, "band": band(c.nbytes), "aligned": c.aligned,
               "roofline": None if roof is None else {
                   "us": roof[0], "by": roof[1], "gbps": gbps(c.nbytes, roof[0]),
                   "frac_datasheet": gbps(c.nbytes, roof[0]) / DATASHEET_GBPS},
               "results": results, "spin_us": self.spin_us, "seconds": round(self.seconds, 3)}
        # flat "<contender>_us" medians, as `autotrans bench` and `autotrans report` read them
        for name, r in self.results.items():
            out[f"{name}_us"] = r.median_us if r.status == "ok" else None
        tuned = self.results.get("tuned")
        out["autotrans_us"] = out.get("tuned_us")
        out["config"] = tuned.config if tuned else None
        return out


# ----------------------------------------------------------------------------
# The GPU side: roofline.cu's kernels, the case's buffers
# ----------------------------------------------------------------------------

_SIGNATURES = {"at_copy16": 3, "at_flush": 3, "at_spin": 1, "at_fill": 8, "at_transpose_ref": 7,
               "at_count_transpose_diff": 7, "at_count_diff": 4}


@functools.lru_cache(maxsize=None)
def _kernels() -> dict:
    """roofline.cu's kernels, compiled for this GPU and loaded (every parameter 64-bit)."""
    c = compile_file(template_dir() / "roofline.cu", driver.device().arch)
    mod = driver.load_module(c.object, c.image())
    return {name: driver.function(mod, name, "Q" * n) for name, n in _SIGNATURES.items()}


_FLOAT_MASKS = {   # per float part size: (and, or) for even words, then for odd words
    2: (0xBFFFBFFF, 0x20002000, 0xBFFFBFFF, 0x20002000),
    4: (0xBFFFFFFF, 0x20000000, 0xBFFFFFFF, 0x20000000),
    8: (0xFFFFFFFF, 0x00000000, 0xBFFFFFFF, 0x20000000),
}


def fill_masks(dtype) -> tuple[int, int, int, int]:
    """(and_even, or_even, and_odd, or_odd) applied to the input's 32-bit words
    (little-endian): for floats, the top exponent bit cleared and the next one
    set, so every value is finite and normal, and its complement too."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return _FLOAT_MASKS[dt.itemsize]
    if dt.kind == "c":
        return _FLOAT_MASKS[dt.itemsize // 2]
    return (0xFFFFFFFF, 0, 0xFFFFFFFF, 0)


class Gpu:
    """roofline.cu's kernels on the current GPU, on the legacy default stream."""

    def __init__(self):
        self.dev = driver.device()
        self.k = _kernels()
        self.flush_bytes = -(-max(2 * self.dev.l2_bytes, FLUSH_MIN_BYTES) // 16) * 16
        self._flush_buf = memory.alloc(self.flush_bytes)
        self._count = memory.alloc(8)
        self._flushes = 0

    def _grid(self, n: int) -> tuple:
        return (int(max(1, min(-(-n // BLOCK[0]), 32 * self.dev.sms))), 1, 1)

    def flush(self) -> None:
        """Write the whole flush buffer (a new value each time)."""
        self._flushes += 1
        n16 = self.flush_bytes // 16
        self.k["at_flush"](self._grid(n16), BLOCK, int(self._flush_buf), n16, self._flushes & 0xFFFFFFFF)

    def spin(self, us: float) -> None:
        if us > 0:
            self.k["at_spin"]((1, 1, 1), (1, 1, 1), int(us * 1000))

    def copy16(self, dst: int, src: int, nbytes: int) -> None:
        blocks = max(1, -(-(nbytes // 16) // (4 * BLOCK[0])))
        self.k["at_copy16"]((blocks, 1, 1), BLOCK, dst, src, nbytes)

    def fill(self, ptr: int, nbytes: int, seed: int, dtype, flip: bool) -> None:
        self.k["at_fill"](self._grid(-(-nbytes // 4)), BLOCK, ptr, nbytes, seed & 0xFFFFFFFF,
                          *fill_masks(dtype), 0xFFFFFFFF if flip else 0)

    def prefill_wrong(self, out: int, src: int, bmn, e: int) -> None:
        """out = the complement of transpose(src)."""
        self.k["at_transpose_ref"](self._grid(int(np.prod(bmn)) * e), BLOCK, out, src, *bmn, e, 0xFF)

    def transpose_diff(self, out: int, src: int, bmn, e: int) -> int:
        """Bytes of out that differ from transpose(src) (waits for the result)."""
        memory.memset(self._count, 0, 8)
        self.k["at_count_transpose_diff"](self._grid(int(np.prod(bmn)) * e), BLOCK, out, src, *bmn, e,
                                          int(self._count))
        return self._read()

    def copy_diff(self, a: int, b: int, nbytes: int) -> int:
        memory.memset(self._count, 0, 8)
        self.k["at_count_diff"](self._grid(nbytes), BLOCK, a, b, nbytes, int(self._count))
        return self._read()

    def _read(self) -> int:
        return int.from_bytes(memory.dtoh(self._count, 8).tobytes(), "little")

    def close(self) -> None:
        self._flush_buf.free()
        self._count.free()


class _View:
    """A device buffer as a C-contiguous array, for torch.as_tensor and cupy.asarray."""

    def __init__(self, ptr: int, shape, dtype):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": np.dtype(dtype).str,
                                         "data": (int(ptr), False), "version": 2, "strides": None}


class _Data:
    """A case's buffers: the input x, its complement xc, one output y."""

    def __init__(self, gpu: Gpu, case: Case):
        n, seed = case.nbytes, zlib.crc32(case.name.encode())
        self._bufs = [memory.alloc(n) for _ in range(3)]
        self.x, self.xc, self.y = (int(b) for b in self._bufs)
        gpu.fill(self.x, n, seed, case.dtype, flip=False)
        gpu.fill(self.xc, n, seed, case.dtype, flip=True)

    def other(self, src: int) -> int:
        return self.xc if src == self.x else self.x

    def release(self) -> None:
        for b in self._bufs:
            b.free()
        self._bufs = []


@dataclass
class _Entry:
    """A contender ready to run: call(src) runs it on input src and returns its
    output (a device pointer, or an array holding one)."""
    name: str
    call: object
    copy: bool = False          # the roofline's copies: the output must equal the input
    into_y: bool = True         # writes the case's output buffer (pre-filled before each check)
    config: str | None = None
    source: str | None = None
    setup_s: float | None = None
    note: str = ""

    def result(self, status: str, note: str) -> Result:
        return Result(status, config=self.config, source=self.source, setup_s=self.setup_s, note=note)


@dataclass
class _Xla:
    """A jitted XLA transpose ready to time (hosts and arrays: the inputs, kept until checked)."""
    fn: object = None
    x: object = None
    setup_s: float | None = None
    hosts: dict | None = None
    arrays: dict | None = None


def one_line(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text[:limit]


def _pointer(out) -> int:
    if isinstance(out, int):
        return out
    if hasattr(out, "data_ptr"):
        return int(out.data_ptr())
    return int(out.__cuda_array_interface__["data"][0])


def _foreign_problem(ptr: int) -> str | None:
    """Why our kernels must not read ptr: not device memory of our context."""
    where = locate(ptr)
    if where.memory == 0:
        return "its output is not device memory CUDA knows"
    if where.ctx != driver.home_context():
        return "its output lives in another CUDA context"
    return None


def _layout_problem(out, shape) -> str | None:
    if isinstance(out, int):
        return None
    got = tuple(out.shape)
    if got != tuple(shape):
        return f"output shape {got}, expected {tuple(shape)}"
    contiguous = out.is_contiguous() if hasattr(out, "is_contiguous") else bool(out.flags.c_contiguous)
    return None if contiguous else "the output is not C-contiguous"


# ----------------------------------------------------------------------------
# Peers: imported lazily, once; a missing one is recorded, not raised
# ----------------------------------------------------------------------------


class Peers:
    """The frameworks, imported on first use; .problem[lib] says why one is missing."""

    def __init__(self):
        self._mods: dict = {}
        self.problem: dict = {}
        self.versions: dict = {}

    def get(self, lib: str):
        if lib not in self._mods:
            try:
                self._mods[lib] = getattr(self, f"_import_{lib}")()
            except Exception as exc:     # ImportError, a CUDA-less build, a broken install
                self._mods[lib] = None
                self.problem[lib] = one_line(exc)
        return self._mods[lib]

    def _import_torch(self):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
        import torch._dynamo
        cfg = torch._dynamo.config
        for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                     "accumulated_cache_size_limit"):
            if hasattr(cfg, name):
                setattr(cfg, name, 1 << 16)
        torch.cuda.set_device(driver.device().ordinal)   # PyCUDA's device (AUTOTRANS_DEVICE)
        self.versions["torch"] = torch.__version__
        try:
            import triton
            self.versions["triton"] = triton.__version__
        except ImportError:
            pass
        if torch.cuda.current_stream().cuda_stream != 0:
            self.versions["torch_stream"] = "not the legacy default stream: timings would not hold"
        return torch

    def _import_cupy(self):
        import cupy
        import cupy.cublas  # noqa: F401  (geam)
        cupy.cuda.Device(driver.device().ordinal).use()
        self.versions["cupy"] = cupy.__version__
        self.versions["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        if cupy.cuda.get_current_stream().ptr != 0:
            self.versions["cupy_stream"] = "not the legacy default stream: timings would not hold"
        return cupy

    def _import_jax(self):
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        import jax
        import jax.numpy  # noqa: F401
        jax.config.update("jax_enable_x64", True)
        if not jax.devices("gpu"):
            raise RuntimeError("JAX has no GPU backend")
        self.versions["jax"] = jax.__version__
        return jax

    def release(self) -> None:
        """Give cached device memory back between cases."""
        if self._mods.get("torch") is not None:
            self._mods["torch"].cuda.empty_cache()
        if self._mods.get("cupy") is not None:
            self._mods["cupy"].get_default_memory_pool().free_all_blocks()


# ----------------------------------------------------------------------------
# The harness
# ----------------------------------------------------------------------------


class Bench:
    """Runs cases: builds every contender, checks it, times all interleaved."""

    def __init__(self, *, peers: bool = True, jax: bool = True, torch_compile: bool = True,
                 tune: bool = True, reps: int = REPS):
        self.gpu = Gpu()
        self.peers = Peers()
        self.reps = max(1, int(reps))
        self.tune = tune
        skip = set() if peers else {"torch", "torch_compile", "cupy", "geam", "jax"}
        skip |= set() if jax else {"jax"}
        skip |= set() if torch_compile else {"torch_compile"}
        self.contenders = tuple(c for c in CONTENDERS if c not in skip)
        self._empty = tempfile.mkdtemp(prefix="autotrans-bench-empty-cache-")

    def close(self) -> None:
        self.gpu.close()
        shutil.rmtree(self._empty, ignore_errors=True)

    # -- one case ------------------------------------------------------------

    def run_case(self, case: Case) -> Row:
        """Every contender on one case (a contender's failure is recorded in its Result)."""
        t0 = time.perf_counter()
        data = _Data(self.gpu, case)
        results, entries, xla, spin = {}, [], None, 0.0
        try:
            for name in self.contenders:
                if name == "jax":
                    xla = self._prepare(name, case, data)
                    if isinstance(xla, Result):
                        results[name], xla = xla, None
                    continue
                made = self._prepare(name, case, data)
                if isinstance(made, Result):
                    results[name] = made
                else:
                    entries.append(made)
            errors: dict = {}
            spin = self._spin_us(entries, data, errors)
            samples, xla_samples = self._measure(entries, data, spin, xla, errors)
            for e in entries:
                results[e.name] = (e.result("failed", errors[e.name]) if e.name in errors else
                                   Result.timed(samples[e.name], config=e.config, source=e.source,
                                                setup_s=e.setup_s, note=e.note))
            if xla is not None:
                results["jax"] = (Result("failed", setup_s=xla.setup_s, note=errors["jax"]) if "jax" in errors
                                  else Result.timed(xla_samples, setup_s=xla.setup_s,
                                                    note="wall clock per call (dispatch, run, wait): an estimate"))
        finally:
            entries.clear()
            xla = None
            gc.collect()
            for cleanup in (driver.synchronize, data.release, self.peers.release):
                with contextlib.suppress(Exception):   # a broken context must not hide the first error
                    cleanup()
        return Row(case, {k: results[k] for k in CONTENDERS if k in results}, spin, time.perf_counter() - t0)

    def safe_run(self, case: Case) -> Row:
        """run_case, or a row whose tuned result says why the case failed."""
        try:
            return self.run_case(case)
        except Exception as exc:
            return Row(case, {"tuned": Result("failed", note=f"the case failed: {one_line(exc)}")})

    def _prepare(self, name: str, case: Case, data: _Data):
        """A checked _Entry (or _Xla), or the Result saying why not."""
        try:
            made = getattr(self, f"_make_{name}")(case, data)
        except Exception as exc:
            return Result("failed", note=one_line(exc))
        if isinstance(made, Result):
            return made
        try:
            why = self._check_xla(made, case, data) if name == "jax" else self._check(made, case, data)
        except Exception as exc:
            why = ("failed", one_line(exc))
        if why is None:
            return made
        if isinstance(made, _Xla):
            return Result(why[0], setup_s=made.setup_s, note=why[1])
        return made.result(*why)

    def _check(self, e: _Entry, case: Case, data: _Data):
        """None, or (status, why): the output on the complement input, then on
        the input, must be the transposed input (the input, for the copies)."""
        n = case.nbytes
        for src in (data.xc, data.x):
            if e.into_y:
                shape, size = ((1, 1, n), 1) if e.copy else (case.bmn, case.elem_bytes)
                self.gpu.prefill_wrong(data.y, src, shape, size)
            out = e.call(src)
            why = _layout_problem(out, case.out_shape)
            if why:
                return "wrong", why
            ptr = _pointer(out)
            why = None if isinstance(out, int) else _foreign_problem(ptr)
            if why:
                return "failed", f"cannot check: {why}"
            bad = self.gpu.copy_diff(ptr, src, n) if e.copy else \
                self.gpu.transpose_diff(ptr, src, case.bmn, case.elem_bytes)
            del out
            if bad:
                which = "complement input" if src == data.xc else "input"
                return "wrong", f"{bad} of {n} output bytes wrong (on the {which})"
        return None

    def _spin_us(self, entries, data: _Data, errors: dict) -> float:
        """Twice the slowest host cost of a call (so the launch is queued
        before the start event runs), within [SPIN_MIN_US, SPIN_MAX_US].
        A contender that raises here is put in errors."""
        worst = 0.0
        for e in entries:
            t = time.perf_counter()
            try:
                for _ in range(3):
                    e.call(data.x)
            except Exception as exc:
                errors[e.name] = one_line(exc)
                continue
            worst = max(worst, (time.perf_counter() - t) / 3 * 1e6)
            driver.synchronize()
        return float(min(SPIN_MAX_US, max(SPIN_MIN_US, 2 * worst + 10)))

    def _measure(self, entries, data: _Data, spin: float, xla: _Xla | None, errors: dict):
        """REPS repetitions; in each, every contender once after a flush and a
        spin, the order rotating. Returns (samples, XLA samples) in µs; a
        contender that raises is put in errors and left out from then on."""
        samples = {e.name: [] for e in entries}
        xla_samples = []
        for r in range(self.reps):
            k = r % max(1, len(entries))
            pending = []
            for e in entries[k:] + entries[:k]:
                if e.name in errors:
                    continue
                start, end = driver.event(), driver.event()
                self.gpu.flush()
                self.gpu.spin(spin)
                start.record()
                try:
                    e.call(data.x)
                except Exception as exc:
                    errors[e.name] = one_line(exc)
                    continue
                end.record()
                pending.append((e.name, start, end))
            driver.synchronize()
            for name, start, end in pending:
                samples[name].append(end.time_since(start) * 1000.0)
            if xla is not None and "jax" not in errors:
                self.gpu.flush()
                driver.synchronize()
                t = time.perf_counter()
                try:
                    xla.fn(xla.x).block_until_ready()
                except Exception as exc:
                    errors["jax"] = one_line(exc)
                    continue
                xla_samples.append((time.perf_counter() - t) * 1e6)
        return samples, xla_samples

    # -- ours and the roofline -------------------------------------------------

    def _ours(self, name: str, case: Case, data: _Data, choice, setup_s=None) -> _Entry:
        go, y = loader.kernel(choice.config).launcher(case.bmn), data.y

        def call(src):
            go(src, y)
            return y
        return _Entry(name, call, config=choice.config.key, source=choice.source, setup_s=setup_s,
                      note=choice.reason)

    def _make_tuned(self, case: Case, data: _Data):
        dev, setup = self.gpu.dev, None

        def pick():
            return choose(case.bmn, case.elem_bytes, dev.id.text, dev.limits, ResultCache())
        choice = pick()
        if choice.source != "exact":
            if not self.tune:
                return Result("skipped", note="not in the user cache, and tuning is off")
            t = time.perf_counter()
            api.tune(case.bmn, case.dtype, progress=False)
            setup = time.perf_counter() - t
            choice = pick()
            if choice.source != "exact":
                return Result("failed", setup_s=setup, note=f"tune() stored no result ({choice})")
        return self._ours("tuned", case, data, choice, setup)

    def _make_untuned(self, case: Case, data: _Data):
        dev = self.gpu.dev
        choice = choose(case.bmn, case.elem_bytes, dev.id.text, dev.limits, ResultCache(self._empty))
        return self._ours("untuned", case, data, choice)

    def _make_memcpy(self, case: Case, data: _Data):
        y, n = data.y, case.nbytes

        def call(src):
            memory.memcpy_dtod(y, src, n)
            return y
        return _Entry("memcpy", call, copy=True)

    def _make_copy16(self, case: Case, data: _Data):
        y, n, copy = data.y, case.nbytes, self.gpu.copy16

        def call(src):
            copy(y, src, n)
            return y
        return _Entry("copy16", call, copy=True)

    # -- peers -----------------------------------------------------------------

    def _lib(self, lib: str):
        mod = self.peers.get(lib)
        if mod is None:
            return Result("missing", note=self.peers.problem.get(lib, ""))
        return mod

    def _tensors(self, torch, case: Case, data: _Data) -> dict:
        return {p: torch.as_tensor(_View(p, case.shape, case.dtype), device="cuda") for p in (data.x, data.xc)}

    def _make_torch(self, case: Case, data: _Data):
        torch = self._lib("torch")
        if isinstance(torch, Result):
            return torch
        xs, y = self._tensors(torch, case, data), data.y
        out = torch.as_tensor(_View(y, case.out_shape, case.dtype), device="cuda")

        def call(src):
            out.copy_(xs[src].mT)
            return y
        return _Entry("torch", call)

    def _make_torch_compile(self, case: Case, data: _Data):
        torch = self._lib("torch")
        if isinstance(torch, Result):
            return torch
        xs = self._tensors(torch, case, data)
        torch._dynamo.reset()
        fn = torch.compile(lambda t: t.mT.contiguous(), dynamic=False)
        t = time.perf_counter()
        fn(xs[data.xc])
        torch.cuda.synchronize()
        setup = time.perf_counter() - t
        return _Entry("torch_compile", lambda src: fn(xs[src]), into_y=False, setup_s=setup)

    def _arrays(self, cupy, case: Case, data: _Data) -> dict:
        return {p: cupy.asarray(_View(p, case.shape, case.dtype)) for p in (data.x, data.xc)}

    def _make_cupy(self, case: Case, data: _Data):
        cupy = self._lib("cupy")
        if isinstance(cupy, Result):
            return cupy
        xs = self._arrays(cupy, case, data)
        return _Entry("cupy", lambda src: cupy.ascontiguousarray(xs[src].swapaxes(-1, -2)), into_y=False)

    def _make_geam(self, case: Case, data: _Data):
        if len(case.shape) != 2 or case.dtype not in GEAM_DTYPES:
            return Result("n/a", note="cuBLAS geam: 2-D float32/float64/complex only")
        cupy = self._lib("cupy")
        if isinstance(cupy, Result):
            return cupy
        xs, y = self._arrays(cupy, case, data), data.y
        out = cupy.asarray(_View(y, case.out_shape, case.dtype))
        # B: any (N, M) array; with beta = 0 it only scales to zero (the other input, never C)
        bs = {p: cupy.asarray(_View(data.other(p), case.out_shape, case.dtype)) for p in xs}
        geam = cupy.cublas.geam

        def call(src):
            geam("T", "N", 1.0, xs[src], 0.0, bs[src], out=out)
            return y
        return _Entry("geam", call)

    def _make_jax(self, case: Case, data: _Data):
        jax = self._lib("jax")
        if isinstance(jax, Result):
            return jax
        n, dt = case.nbytes, np.dtype(case.dtype)
        hosts = {p: memory.dtoh(p, n).view(dt).reshape(case.shape) for p in (data.xc, data.x)}
        arrays = {p: jax.device_put(h) for p, h in hosts.items()}
        fn = jax.jit(lambda a: jax.numpy.swapaxes(a, -1, -2))
        t = time.perf_counter()
        fn(arrays[data.xc]).block_until_ready()
        return _Xla(fn, arrays[data.x], time.perf_counter() - t, hosts, arrays)

    def _check_xla(self, xla: _Xla, case: Case, data: _Data):
        for src in (data.xc, data.x):
            y = xla.fn(xla.arrays[src])
            y.block_until_ready()
            if tuple(y.shape) != case.out_shape or np.dtype(y.dtype) != np.dtype(case.dtype):
                return "wrong", f"output {tuple(y.shape)} {y.dtype}, expected {case.out_shape} {case.dtype}"
            try:
                ptr = int(y.unsafe_buffer_pointer())
                if _foreign_problem(ptr):
                    raise NotImplementedError("not in our context")
                bad = self.gpu.transpose_diff(ptr, src, case.bmn, case.elem_bytes)
            except (AttributeError, NotImplementedError, RuntimeError):   # compare on the host
                want = np.ascontiguousarray(np.swapaxes(xla.hosts[src], -1, -2)).reshape(-1).view(np.uint8)
                bad = int(np.count_nonzero(np.asarray(y).reshape(-1).view(np.uint8) != want))
            if bad:
                return "wrong", f"{bad} of {case.nbytes} output bytes wrong"
        xla.hosts = xla.arrays = None
        return None


# ----------------------------------------------------------------------------
# Runs: the API `autotrans bench` uses, and the whole-zoo run with its JSON
# ----------------------------------------------------------------------------


def _as_case(c) -> Case:
    return c if isinstance(c, Case) else Case(tuple(c[0]), np.dtype(c[1]).name)


def progress_line(i: int, total: int, row: dict) -> str:
    """One line per finished case."""
    res = row["results"]
    t = res.get("tuned", {})
    if t.get("status") != "ok":
        return f"[{i}/{total}] {row['name']}: tuned {t.get('status', 'missing')}: {t.get('note', '')}"
    parts = [f"[{i}/{total}] {row['name']} ({row['nbytes'] / MIB:.2f} MiB): tuned {t['median_us']:.1f} µs"]
    if t.get("frac_roofline"):
        parts.append(f"{t['frac_roofline']:.3f} of roofline")
    checks = {c.target: c for c in evaluate(row)}
    if checks["peer"].value:
        parts.append(f"best peer / tuned {checks['peer'].value:.2f}")
    if checks["untuned"].value:
        parts.append(f"untuned {checks['untuned'].value:.2f} of tuned ({res['untuned'].get('source')})")
    bad = [f"{k} {v['status']}" for k, v in res.items() if v["status"] in ("wrong", "failed")]
    if bad:
        parts.append("; ".join(bad))
    return ", ".join(parts) + f" [{row['seconds']:.1f} s]"


def run(cases, *, peers: bool = True, progress=None, tune: bool = True, reps: int = REPS,
        jax: bool = True, torch_compile: bool = True) -> list[dict]:
    """Benchmark rows (Row.to_dict()) for cases: Case objects or (shape, dtype) pairs."""
    cases = [_as_case(c) for c in cases]
    show = progress if progress is not None else len(cases) > 1
    bench = Bench(peers=peers, jax=jax, torch_compile=torch_compile, tune=tune, reps=reps)
    rows = []
    try:
        for i, case in enumerate(cases):
            rows.append(bench.safe_run(case).to_dict())
            if show:
                print(progress_line(i + 1, len(cases), rows[-1]), flush=True)
    finally:
        bench.close()
    return rows


def meta(bench: Bench) -> dict:
    """Who measured what, with which software."""
    dev = bench.gpu.dev
    return {"gpu": dev.id.name, "fingerprint": dev.id.text, "sms": dev.sms, "l2_bytes": dev.l2_bytes,
            "driver": dev.id.driver, "cuda": dev.id.cuda, "autotrans": VERSION, "space": space_id(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": platform.node(), "python": platform.python_version(), "numpy": np.__version__,
            "reps": bench.reps, "flush_bytes": bench.gpu.flush_bytes, "datasheet_gbps": DATASHEET_GBPS,
            "contenders": list(bench.contenders)}


def new_doc(info: dict) -> dict:
    return {"format": FORMAT, "version": FORMAT_VERSION, "meta": info, "method": METHOD,
            "targets": TARGETS, "rows": [], "not_run": [], "tune_times": []}


def write(doc: dict, json_path: Path, md_path: Path | None = None) -> None:
    """The JSON (and the markdown report), written atomically."""
    atomic_write(Path(json_path), (json.dumps(doc, indent=1) + "\n").encode())
    if md_path is not None:
        atomic_write(Path(md_path), report(doc).encode())


def run_suite(cases, json_path, md_path=None, *, budget_s: float = 480.0, resume: bool = False,
              peers: bool = True, jax: bool = True, torch_compile: bool = True, tune: bool = True,
              reps: int = REPS, log=print) -> dict:
    """Run cases into a result file, rewritten after every case; cases left
    when ``budget_s`` seconds have passed are listed in doc["not_run"].
    With resume, cases already in json_path (same GPU, same space) are kept."""
    t0 = time.monotonic()
    bench = Bench(peers=peers, jax=jax, torch_compile=torch_compile, tune=tune, reps=reps)
    try:
        doc = new_doc(meta(bench))
        if resume and Path(json_path).is_file():
            doc = _resumed(doc, load_results(json_path))
        done = {r["name"] for r in doc["rows"]}
        todo = [c for c in cases if c.name not in done]
        doc["not_run"] = []
        for i, case in enumerate(todo):
            if time.monotonic() - t0 > budget_s:
                doc["not_run"] = [c.name for c in todo[i:]]
                log(f"time budget of {budget_s:.0f} s spent: {len(todo) - i} cases not run "
                    "(run again with --resume)", flush=True)
                break
            doc["rows"].append(bench.safe_run(case).to_dict())
            doc["meta"]["peers"] = dict(bench.peers.versions, missing=bench.peers.problem)
            write(doc, json_path, md_path)
            log(progress_line(i + 1, len(todo), doc["rows"][-1]), flush=True)
        write(doc, json_path, md_path)
    finally:
        bench.close()
    return doc


def _resumed(fresh: dict, old: dict) -> dict:
    """The old document's rows under fresh meta, if both are from the same GPU and space."""
    same = all(old["meta"].get(k) == fresh["meta"][k] for k in ("fingerprint", "space"))
    if not same:
        raise ValueError("cannot resume: the result file is from another GPU, driver or kernel space "
                         f"({old['meta'].get('fingerprint')}, space {old['meta'].get('space')})")
    fresh["rows"], fresh["tune_times"] = old["rows"], old.get("tune_times", [])
    fresh["meta"]["date_first"] = old["meta"].get("date_first", old["meta"].get("date"))
    return fresh


_TUNE_CODE = ("import sys, time\n"
              "import autotrans\n"
              "shape = tuple(int(d) for d in sys.argv[1].split('x'))\n"
              "t = time.perf_counter()\n"
              "autotrans.tune(shape, sys.argv[2], save=False, progress=False)\n"
              "print('TUNE_S', time.perf_counter() - t, flush=True)\n")


def tune_time(case: Case, timeout_s: float = 180.0) -> dict:
    """tune() seconds in a fresh process with an empty cache and kernel store
    (cold), then in another fresh process with its kernels compiled (warm)."""
    out = {"name": case.name, "cold_s": None, "warm_s": None, "error": None}
    shape = "x".join(map(str, case.shape))
    with tempfile.TemporaryDirectory(prefix="autotrans-tune-time-") as d:
        env = dict(os.environ, AUTOTRANS_CACHE_DIR=d)
        for which in ("cold_s", "warm_s"):
            t = time.perf_counter()
            try:
                r = subprocess.run([sys.executable, "-c", _TUNE_CODE, shape, case.dtype], env=env,
                                   capture_output=True, text=True, timeout=timeout_s)
            except subprocess.TimeoutExpired:
                out["error"] = f"{which[:-2]} run timed out after {timeout_s:.0f} s"
                return out
            out[f"{which[:-2]}_process_s"] = round(time.perf_counter() - t, 2)
            m = re.search(r"^TUNE_S ([0-9.eE+-]+)$", r.stdout, re.M)
            if r.returncode != 0 or not m:
                out["error"] = f"{which[:-2]} run failed: {(r.stderr or r.stdout).strip()[-400:]}"
                return out
            out[which] = float(m.group(1))
    return out


# ----------------------------------------------------------------------------
# Reading results back: validation, targets, the report, the README table
# ----------------------------------------------------------------------------


def load_results(path) -> dict:
    """A benchmark result file, checked; ValueError (one line) if it is not one."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable benchmark result file ({one_line(exc)})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not an autotrans benchmark result file (no \"format\": \"{FORMAT}\")")
    if not isinstance(doc.get("meta"), dict) or not isinstance(doc.get("rows"), list):
        raise ValueError(f"{path}: a benchmark result file needs a \"meta\" object and a \"rows\" list")
    for i, row in enumerate(doc["rows"]):
        problem = _row_problem(row)
        if problem:
            raise ValueError(f"{path}: row {i}: {problem}")
    if not all(isinstance(t, dict) for t in doc.get("tune_times") or []):
        raise ValueError(f"{path}: \"tune_times\" must be a list of objects")
    if not all(isinstance(n, str) for n in doc.get("not_run") or []):
        raise ValueError(f"{path}: \"not_run\" must be a list of case names")
    return doc


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _row_problem(row) -> str | None:
    if not isinstance(row, dict):
        return "not an object"
    if not isinstance(row.get("name"), str) or not isinstance(row.get("held_out"), bool):
        return "needs a \"name\" string and a \"held_out\" flag"
    if not (isinstance(row.get("nbytes"), int) and row["nbytes"] > 0):
        return f"{row['name']}: \"nbytes\" must be a positive integer"
    if not isinstance(row.get("results"), dict):
        return f"{row['name']}: no \"results\" object"
    for k, r in row["results"].items():
        if not isinstance(r, dict) or not isinstance(r.get("status"), str):
            return f"{row['name']}: result {k!r} has no status"
        if r["status"] == "ok" and not (_number(r.get("median_us")) and r["median_us"] > 0):
            return f"{row['name']}: result {k!r} is ok but has no positive median_us"
    roof = row.get("roofline")
    if roof is not None and not (isinstance(roof, dict) and _number(roof.get("us")) and roof["us"] > 0):
        return f"{row['name']}: bad \"roofline\""
    return None


@dataclass(frozen=True)
class Check:
    """One target on one case. met None: the target does not apply (note says why)."""
    case: str
    target: str          # "peer", "roofline", "untuned", "tune_cold", "tune_warm"
    value: float | None
    need: float | None
    met: bool | None
    note: str = ""

    def describe(self) -> str:
        label = {"peer": "best peer time / tuned time", "roofline": "tuned, fraction of the roofline",
                 "untuned": "untuned, fraction of tuned", "tune_cold": "tune() cold, s",
                 "tune_warm": "tune() with kernels compiled, s"}[self.target]
        value = "–" if self.value is None else f"{self.value:.3f}"
        need = "" if self.need is None else (f" (need ≤ {self.need:g})" if self.target.startswith("tune")
                                             else f" (need ≥ {self.need:.2f})")
        return f"{self.case}: {label}: {value}{need}" + (f"; {self.note}" if self.note else "")


def _ok(results: dict, name: str) -> dict | None:
    r = results.get(name)
    return r if isinstance(r, dict) and r.get("status") == "ok" and _number(r.get("median_us")) \
        and r["median_us"] > 0 else None


def _why_not(results: dict, name: str) -> str:
    r = results.get(name) or {}
    return f"{LABELS.get(name, name)} {r.get('status', 'did not run')}" + (f": {r['note']}" if r.get("note") else "")


def _overlap(a: dict, b: dict) -> bool:
    if not all(_number(x.get(k)) for x in (a, b) for k in ("q1_us", "q3_us")):
        return False
    return a["q1_us"] <= b["q3_us"] and b["q1_us"] <= a["q3_us"]


def evaluate(row: dict) -> list[Check]:
    """The peer, roofline and untuned checks of one row."""
    res, name = row["results"], row["name"]
    t = _ok(res, "tuned")
    return [_peer_check(name, res, t), _roofline_check(row, t), _untuned_check(name, res, t)]


def _peer_check(name, res, t) -> Check:
    if t is None:
        return Check(name, "peer", None, NEED_PEER, False, _why_not(res, "tuned"))
    peers = {p: r for p in PEERS if (r := _ok(res, p))}
    if not peers:
        return Check(name, "peer", None, NEED_PEER, None, "no peer ran")
    best = min(peers, key=lambda p: peers[p]["median_us"])
    v = peers[best]["median_us"] / t["median_us"]
    note = f"best peer {LABELS[best]} {peers[best]['median_us']:.2f} µs, tuned {t['median_us']:.2f} µs"
    if v < NEED_PEER and _overlap(t, peers[best]):
        note += " (the IQRs overlap)"
    return Check(name, "peer", v, NEED_PEER, v >= NEED_PEER, note)


def _roofline_check(row, t) -> Check:
    name, b = row["name"], band(row["nbytes"])
    if b == "small":
        return Check(name, "roofline", None, None, None, "below 1 MiB the peer target applies")
    need = NEED_ROOF_LARGE if b == "large" else NEED_ROOF_MID
    if t is None:
        return Check(name, "roofline", None, need, False, _why_not(row["results"], "tuned"))
    roof = row.get("roofline")
    if not roof:
        return Check(name, "roofline", None, need, None, "no roofline: both copies failed")
    v = roof["us"] / t["median_us"]
    return Check(name, "roofline", v, need, v >= need,
                 f"roofline {roof['us']:.2f} µs ({LABELS.get(roof.get('by'), roof.get('by'))}), "
                 f"tuned {t['median_us']:.2f} µs")


def _untuned_check(name, res, t) -> Check:
    if t is None:
        return Check(name, "untuned", None, NEED_UNTUNED, False, _why_not(res, "tuned"))
    u = _ok(res, "untuned")
    if u is None:
        return Check(name, "untuned", None, NEED_UNTUNED, False, _why_not(res, "untuned"))
    v = t["median_us"] / u["median_us"]
    src = res["untuned"].get("source") or "?"
    note = f"untuned {u['median_us']:.2f} µs from {src} ({res['untuned'].get('config')})"
    if v < NEED_UNTUNED and _overlap(t, u):
        note += " (the IQRs overlap)"
    return Check(name, "untuned", v, NEED_UNTUNED, v >= NEED_UNTUNED, note)


def tune_checks(doc: dict) -> list[Check]:
    out = []
    for t in doc.get("tune_times") or []:
        for key, target, need in (("cold_s", "tune_cold", NEED_TUNE_COLD_S), ("warm_s", "tune_warm", NEED_TUNE_WARM_S)):
            v = t.get(key)
            out.append(Check(t.get("name", "?"), target, v, need, None if not _number(v) else v <= need,
                             t.get("error") or ""))
    return out


def flags(row: dict) -> list[str]:
    """Figures above 1.0 of the roofline (to be checked)."""
    roof = row.get("roofline")
    if not roof:
        return []
    out = []
    for k, r in row["results"].items():
        if k not in ROOFLINE and (r := _ok(row["results"], k)) and roof["us"] / r["median_us"] > 1.0:
            out.append(f"{row['name']}: {LABELS.get(k, k)} {roof['us'] / r['median_us']:.3f} of the roofline "
                       f"({r['median_us']:.2f} µs against {roof['us']:.2f} µs)")
    return out


_GROUPS = (   # (label, which rows, which check)
    ("tuned ≥ best peer (median ratio ≥ 1.00), zoo", lambda r: not r["held_out"], "peer"),
    ("tuned ≥ best peer, held-out shapes", lambda r: r["held_out"], "peer"),
    ("tuned ≥ 0.92 of roofline, cases ≥ 16 MiB", lambda r: band(r["nbytes"]) == "large", "roofline"),
    ("tuned ≥ 0.85 of roofline, cases of 1-16 MiB", lambda r: band(r["nbytes"]) == "mid", "roofline"),
    ("below 1 MiB: tuned no slower than the best peer", lambda r: band(r["nbytes"]) == "small", "peer"),
    ("untuned ≥ 0.95 of tuned, zoo", lambda r: not r["held_out"], "untuned"),
    ("untuned ≥ 0.95 of tuned, held-out shapes", lambda r: r["held_out"], "untuned"),
)


class Tally(NamedTuple):
    """One target over the cases it applies to."""
    label: str
    evaluated: int
    met: int
    missed: list
    not_applicable: int


def summary(doc: dict) -> list[Tally]:
    """Each target group's tally (every zoo and held-out row, and the tune() times)."""
    out = []
    checks = {r["name"]: {c.target: c for c in evaluate(r)} for r in doc["rows"]}
    for label, which, target in _GROUPS:
        cs = [checks[r["name"]][target] for r in doc["rows"] if which(r)]
        out.append(_tally(label, cs))
    tc = tune_checks(doc)
    for target, label in (("tune_cold", "tune() ≤ 10 s cold (fresh process)"),
                          ("tune_warm", "tune() ≤ 2 s with kernels compiled (fresh process)")):
        cs = [c for c in tc if c.target == target]
        out.append(_tally(label, cs))
    return out


def _tally(label: str, checks) -> Tally:
    return Tally(label, sum(c.met is not None for c in checks), sum(c.met is True for c in checks),
                 [c.case for c in checks if c.met is False], sum(c.met is None for c in checks))


def _us(r: dict | None) -> str:
    if not isinstance(r, dict):
        return "–"
    if r.get("status") != "ok":
        return {"n/a": "–"}.get(r.get("status"), r.get("status", "–"))
    return f"{r['median_us']:.1f}"


def _mib(nbytes: int) -> str:
    x = nbytes / MIB
    return f"{x:.0f}" if x >= 10 else f"{x:.2f}"


def _ratio(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def _tuned_cell(t: dict | None, res: dict) -> str:
    if t is None:
        return _us(res.get("tuned"))
    iqr = t["q3_us"] - t["q1_us"] if _number(t.get("q1_us")) and _number(t.get("q3_us")) else None
    return f"{t['median_us']:.1f}" + ("" if iqr is None else f" ({iqr:.1f})")


def _frac_roofline(row: dict) -> float | None:
    t, roof = _ok(row["results"], "tuned"), row.get("roofline")
    return roof["us"] / t["median_us"] if t and roof else None


def _cells(row: dict) -> list[str]:
    res, checks = row["results"], {c.target: c for c in evaluate(row)}
    t, roof, frac = _ok(res, "tuned"), row.get("roofline"), _frac_roofline(row)
    roof_s = f"{roof['us']:.1f} ({roof.get('by')})" if roof else "–"
    gb = f"{gbps(row['nbytes'], t['median_us']):.0f}" if t else "–"
    datasheet = _ratio(gbps(row["nbytes"], t["median_us"]) / DATASHEET_GBPS) if t else "–"
    return ([row["name"], _mib(row["nbytes"]), roof_s, _tuned_cell(t, res), gb,
             _ratio(frac) + (" ⚑" if frac and frac > 1.0 else ""), datasheet, _ratio(checks["untuned"].value)]
            + [_us(res.get(k)) for k in ("torch", "torch_compile", "cupy", "geam", "jax")]
            + [_ratio(checks["peer"].value)])


def table(rows) -> str:
    """The per-case table: medians in µs, the tuned kernel against the roofline
    and the datasheet, untuned against tuned, the best peer against tuned."""
    head = ("| case | MiB | roofline µs | tuned µs (IQR) | GB/s | of roofline | of 4.8 TB/s | untuned/tuned "
            "| torch | torch.compile | CuPy | geam | XLA* µs | best peer/tuned |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    return head + "".join("| " + " | ".join(_cells(r)) + " |\n" for r in rows)


def markdown(rows) -> str:
    """The per-case table of benchmark rows (what `autotrans bench` prints)."""
    return table(rows)


def _statuses(rows) -> list[str]:
    """Contenders that did not run, grouped by (contender, status, reason)."""
    groups: dict = {}
    for r in rows:
        for k, res in r["results"].items():
            if res.get("status") != "ok":
                groups.setdefault((k, res["status"], res.get("note", "")), []).append(r["name"])
    lines = []
    for (k, status, note), names in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        lines.append(f"| {LABELS.get(k, k)} | {status} | {len(names)} | {shown} | {note[:200]} |")
    if not lines:
        return ["Every contender ran and passed its checks on every case."]
    return ["| contender | status | cases | which | why |", "|---|---|---:|---|---|"] + lines


def _meta_line(m: dict) -> str:
    peers = m.get("peers") or {}
    soft = ", ".join(f"{k} {v}" for k, v in peers.items() if k != "missing" and not k.endswith("_stream"))
    warn = "".join(f" **Warning: {k[:-7]}'s current stream is {v}.**" for k, v in peers.items()
                   if k.endswith("_stream"))
    missing = (peers.get("missing") or {}) if isinstance(peers.get("missing"), dict) else {}
    gone = "".join(f" Missing: {k} ({v})." for k, v in missing.items())
    return (f"{m.get('fingerprint', m.get('gpu', '?'))}, {m.get('sms', '?')} SMs, "
            f"L2 {(m.get('l2_bytes') or 0) / MIB:.0f} MiB; autotrans {m.get('autotrans', '?')} "
            f"(space {m.get('space', '?')}); {soft or 'no peers'}; {m.get('date', '?')}; "
            f"{m.get('reps', '?')} repetitions per case, L2 flush {(m.get('flush_bytes') or 0) / MIB:.0f} MiB."
            + gone + warn)


def report(doc: dict) -> str:
    """The markdown report of a result document: method, targets (each miss
    stated), the zoo and held-out tables, peers' status, configs, tune() time."""
    m, rows = doc.get("meta", {}), doc.get("rows", [])
    zoo_rows, held = [r for r in rows if not r["held_out"]], [r for r in rows if r["held_out"]]
    out = [f"# autotrans benchmark: {m.get('gpu', '?')}", "", _meta_line(m), "", "## Method", ""]
    out += [f"- {line}" for line in doc.get("method", METHOD)]
    out += ["", "## Targets", "", "| target | evaluated | met | missed | n/a |", "|---|---:|---:|---|---:|"]
    for label, n, met, missed, na in summary(doc):
        out.append(f"| {label} | {n} | {met} | {len(missed)}{': ' + ', '.join(missed) if missed else ''} | {na} |")
    missed = [c for r in rows for c in evaluate(r) if c.met is False] + \
             [c for c in tune_checks(doc) if c.met is False]
    out += ["", "### Missed targets", ""]
    out += [f"- {c.describe()}" for c in missed] or ["Every target is met in this run."]
    flagged = [f for r in rows for f in flags(r)]
    out += ["", "### Above 1.0 of the roofline (to be checked)", ""]
    out += [f"- ⚑ {f}" for f in flagged] or ["No figure is above 1.0 of the roofline."]
    if doc.get("not_run"):
        out += ["", f"**Not run** (time budget): {', '.join(doc['not_run'])}."]
    out += ["", f"## Zoo ({len(zoo_rows)} cases)", "", table(zoo_rows).rstrip(),
            "", f"## Held-out shapes ({len(held)}, not in the shipped grid)", "", table(held).rstrip(),
            "", "## Contenders that did not run", ""] + _statuses(rows)
    out += ["", "## Configs", "", "| case | tuned config | tune s | untuned config | untuned from |",
            "|---|---|---:|---|---|"]
    for r in rows:
        t, u = r["results"].get("tuned", {}), r["results"].get("untuned", {})
        setup = f"{t['setup_s']:.1f}" if _number(t.get("setup_s")) else "cached"
        why = f": {u['note']}" if u.get("note") and u.get("source") == "nearest" else ""
        out.append(f"| {r['name']} | `{t.get('config') or '–'}` | {setup} | `{u.get('config') or '–'}` | "
                   f"{u.get('source') or '–'}{why} |")
    out += ["", "## tune() time (fresh process each; cold: empty cache and kernel store)", ""]
    tt = doc.get("tune_times") or []
    if tt:
        out += ["| case | cold s | warm s | process cold s | process warm s | error |", "|---|---:|---:|---:|---:|---|"]
        out += [f"| {t.get('name')} | {_ratio(t.get('cold_s'))} | {_ratio(t.get('warm_s'))} | "
                f"{t.get('cold_process_s', '–')} | {t.get('warm_process_s', '–')} | {t.get('error') or ''} |"
                for t in tt]
    else:
        out.append("Not measured in this run.")
    compile_s = [r["results"]["torch_compile"]["setup_s"] for r in rows
                 if _number((r["results"].get("torch_compile") or {}).get("setup_s"))]
    if compile_s:
        out += ["", f"torch.compile took {sum(compile_s):.0f} s over {len(compile_s)} shapes "
                f"(median {float(np.median(compile_s)):.1f} s, max {max(compile_s):.1f} s)."]
    return "\n".join(out) + "\n"


def _shape_text(row: dict) -> str:
    return "x".join(map(str, row["shape"]))


def readme_table(doc: dict, names=None) -> str:
    """The README's results table (markdown) from a result document: the
    README_CASES present in it (or ``names``; every row for names="all"), each
    peer as its time over the tuned time (above 1.00: autotrans is faster)."""
    m, rows = doc.get("meta", {}), doc.get("rows", [])
    by_name = {r["name"]: r for r in rows}
    pick = rows if names == "all" else [by_name[n] for n in (names or README_CASES) if n in by_name]
    lines = [f"Measured with `python benchmarks/bench.py` on one {m.get('gpu', '?')} ({m.get('sms', '?')} SMs, "
             f"driver {m.get('driver', '?')}, CUDA {m.get('cuda', '?')}), {str(m.get('date', '?'))[:10]}: one "
             "process, every implementation interleaved, the L2 flushed before every timed launch, CUDA "
             f"events around the launch alone, medians of {m.get('reps', '?')}; every output checked "
             "bit-exactly. Roofline: the faster of cudaMemcpy device-to-device and a 16-byte copy kernel. "
             "Peer columns: the peer's time over autotrans' (above 1.00: autotrans is faster). "
             "*XLA: wall clock per call, an estimate.", "",
             "| shape | dtype | MiB | autotrans µs | of roofline | untuned/tuned | torch | torch.compile "
             "| CuPy | cuBLAS | XLA* |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in pick:
        res, t = r["results"], _ok(r["results"], "tuned")
        untuned = {c.target: c for c in evaluate(r)}["untuned"].value
        vs = [f"{p['median_us'] / t['median_us']:.2f}" if t and (p := _ok(res, k)) else "–"
              for k in ("torch", "torch_compile", "cupy", "geam", "jax")]
        cells = [_shape_text(r), r["dtype"], _mib(r["nbytes"]), f"{t['median_us']:.1f}" if t else "–",
                 f"**{_ratio(_frac_roofline(r))}**", _ratio(untuned)] + vs
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", _readme_summary(doc)]
    return "\n".join(lines) + "\n"


def _readme_summary(doc: dict) -> str:
    parts, missed_all = [], []
    for label, n, met, missed, _ in summary(doc):
        if n:
            parts.append(f"{label}: {met} of {n}")
            missed_all += missed
    text = "Targets met in this run: " + "; ".join(parts) + "." if parts else "No target was evaluated."
    if missed_all:
        text += (f" Missed on: {', '.join(dict.fromkeys(missed_all))} "
                 "(benchmarks/results/h200.md states each miss).")
    return text
