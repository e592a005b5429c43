"""Tuning of strided canonical problems (core.layout TileProblem, RowsProblem,
and the fused tiles of fuse_tile, NdTileProblem):
the strided configs that can run a problem, compiled together, each verified
bit-exactly on the GPU against the host reference (core.layout.apply), timed
as tune() times (each launch alone after an L2 flush, events, medians; the top
few re-timed interleaved with a memcpy of the same bytes), the fastest stored
under its ProblemKey; and the lookup dispatch uses (best_strided).
"""
from __future__ import annotations

import dataclasses
import functools
import math
import time

import numpy as np

from ..backend import cuda as driver
from ..backend import memory
from ..core import layout
from ..core.device import Limits
from ..core.layout import NdTileProblem, RowsProblem, TileProblem
from ..core.problem import dtype_of_size
from ..families import ndtile as _ndtile
from ..kernels.config import EPILOGUE_GROUPS, KernelConfig
from ..kernels.strided import (byte_extent, launch_args, problem_space, strided_problems, strided_shape,
                               strided_space)
from ..results.keys import ProblemKey, check_problem, problem_text
from ..results.record import TuneRecord
from ..results.shipped import for_device, shipped_problems
from ..results.store import ResultCache
from .runner import TUNE_ALIGN, check_counts, default_first, tune_candidates
from .space import space_id
from .verify import GUARD, POISON, TimedBuffers

__all__ = ["run_problem", "strided_candidates", "default_strided", "problem_key", "extents", "host_buffers",
           "StridedBuffers", "tune_problem", "best_strided", "usable_config", "runs_problem", "problem_rows", "TUNE_ALIGN"]

_FAMILY_RANK = {"rows": 2, "vec": 1, "tile": 0}
# The families whose problem_space configs the untuned rule takes first (default_strided), in
# this order: flat where the rows' outputs are runs (H200: 0.66-0.97 of a memcpy where rows'
# tiles gave 0.37-0.89, NOTES 65), else rows' row-sized tiles.
UNTUNED_SIZED = ("flat", "rows")


# -- candidates (no GPU) ----------------------------------------------------------------

def _fit(cfg: KernelConfig, problem, align: int, limits: Limits, epilogue: str = "none",
         cast: str = "none") -> list[str]:
    """Why cfg cannot run problem here with this epilogue and cast (empty when
    it can): only configs of exactly that epilogue and cast move it as asked."""
    extra = [] if cfg.epilogue == epilogue else [f"{cfg.key} has the epilogue {cfg.epilogue!r}, not {epilogue!r}"]
    if cfg.cast != cast:
        extra.append(f"{cfg.key} has the cast {cfg.cast!r}, not {cast!r}")
    return strided_problems(cfg, problem, align) + limits.problems(cfg.threads, cfg.smem_bytes) + extra


def default_strided(problem: TileProblem | RowsProblem, align: int = TUNE_ALIGN, limits: Limits = Limits(),
                    epilogue: str = "none", cast: str = "none") -> KernelConfig | None:
    """The untuned rule: among the configs of this epilogue that can run the
    problem, the rows family for rows; a shift tile for 1- and 2-byte
    elements whose rows 16-byte vector tiles cannot read; else vector tiles before scalar ones;
    the widest accesses (for a cast's rows, the 32- and 64-byte vectors that
    make both sides 16-byte accesses, where the rows allow them: rows.py's
    WIDE_VECS: the (B,S,H,D) float32 -> bfloat16 rows 0.85 -> 0.94 of a copy
    untuned on the H200, NOTES 27), but for rows of accesses under 16 bytes
    flat's untuned shape where their outputs lie back to back (runs), else a
    row-sized tile (UNTUNED_SIZED, from problem_space); then the tile whose row is nearest
    the problem's row without exceeding it (log2 distance, a longer one
    counting twice). An NdTileProblem: _nd_default. None when none can."""
    fits = [c for c in strided_space(problem.elem, epilogue, cast)
            if not _fit(c, problem, align, limits, epilogue, cast)]
    if not fits:
        return None
    shift = _shift_default(problem, fits)
    if shift is not None:
        return shift
    if isinstance(problem, NdTileProblem):
        return _nd_default(problem, fits)
    sized = [c for c in problem_space(problem, epilogue, cast)
             if c.variant in UNTUNED_SIZED and not _fit(c, problem, align, limits, epilogue, cast)]
    if sized:
        return min(sized, key=lambda c: UNTUNED_SIZED.index(c.variant))
    row = problem.n * problem.elem

    def score(c):
        tile_row = c.tile_cols * c.elem_bytes          # a tile row no longer than a row leaves no lane idle
        fit = -math.log2(row / tile_row) if tile_row <= row else -2 * math.log2(tile_row / row)
        return (_FAMILY_RANK.get(c.variant, -1), c.vec_bytes, fit, c.threads, c.key)

    return max(fits, key=score)


def _nd_default(problem: NdTileProblem, fits: list) -> KernelConfig:
    """A fused problem's untuned pick among fits: _nd_shift_default's ndshift
    tile where one runs (while ND_SHIFT_UNTUNED), else the _ND_DEFAULT ndtile
    tile of the best _nd_score."""
    shift = _nd_shift_default(problem, fits) if ND_SHIFT_UNTUNED else None
    if shift is not None:
        return shift
    fits = [c for c in fits if c.variant == "ndtile"] or fits
    tile = lambda c: (c.tile_rows, c.tile_cols, c.threads, c.order)  # noqa: E731
    short = next((c for c in fits if tile(c) == _ND_SHORT_INPUT), None) if _short_input(problem) else None
    if short is not None:
        return short
    rank = {t: -i for i, t in enumerate(_ND_DEFAULT.get(problem.elem, ()))}
    pick = [c for c in fits if tile(c) in rank] or fits
    return max(pick, key=lambda c: (_nd_score(c, problem), rank.get(tile(c), 0), -pick.index(c)))


# The shift tile (rows, columns, threads) per element size for rows no 16-byte
# vector tile reads: on the H200 over odd 3-D orders 2.2-3.4x the scalar tiles
# (benchmarks/NOTES.md, session 9). float32 64x64 (NOTES 54): over the (2, 1, 0)
# orders that stay TileProblems, on an H100, within 0.971 of the best tile
# (geometric mean) where the scalar vec tile ran at 0.936; on the H200 tuning
# took it for (257, 509, 263) (0.76 against 0.72 untuned, session 24). int8
# keeps 128x64: on an H100 256x64 ran closer to the best (0.974 against 0.922),
# but over the H200's grid of (2, 1, 0) orders that stay TileProblems
# (shift-tall-probe-h200.md, session 23) 128x64 did (0.981 against 0.967).
# Casts from 4-byte elements take _SHIFT_CAST_DEFAULT: over odd float32 -> 16-bit
# casts (benchmarks/cast_probe.py, NOTES 39) the best shift tile or within 4% of
# it, 0-29% faster than the scalar vec tile picked before.
_SHIFT_DEFAULT = {1: (128, 64, 128), 2: (64, 64, 256), 4: (64, 64, 256)}
_SHIFT_MIN_SIDE = {4: 64}   # float32 was measured on matrices of 97 rows and columns and up
_SHIFT_CAST_DEFAULT = {4: (64, 32, 256)}


def _shift_default(problem, fits: list) -> KernelConfig | None:
    """The shift config of _SHIFT_DEFAULT (of _SHIFT_CAST_DEFAULT for a cast's
    problem, out_elem != elem) where it runs, no 16-byte vec tile does and the
    matrix has _SHIFT_MIN_SIDE rows and columns, else None."""
    table = _SHIFT_CAST_DEFAULT if problem.out_elem != problem.elem else {}
    want = table.get(problem.elem) or _SHIFT_DEFAULT.get(problem.elem)
    if want is None or any(c.variant == "vec" and c.vec_bytes == 16 for c in fits):
        return None
    if not table and min(getattr(problem, "m", 0), problem.n) < _SHIFT_MIN_SIDE.get(problem.elem, 0):
        return None
    return next((c for c in fits if c.variant == "shift" and (c.tile_rows, c.tile_cols, c.threads) == want), None)


# The ndtile tiles (rows, columns, threads, walk) per element size that won most
# often on the H200 over fused 3-D to 5-D permutations (benchmarks/NOTES.md,
# sessions 8 and 10), the one of best _nd_score among them, the first on a tie;
# _nd_score over all where none runs.
# Sizes up to 8 bytes also take the narrow tiles (ndtile.py's NARROW), which _nd_score
# picks for fused matrices of 4 to 16 columns (0.32 -> 0.75 of a memcpy on (17,3000,65,8)
# (3,1,0,2) float32, NOTES 26).
_NARROW_TILES = _ndtile.NARROW
_ND_DEFAULT = {1: ((64, 64, 512, "row"),) + _NARROW_TILES, 2: ((64, 32, 256, "row"),) + _NARROW_TILES,
               4: ((64, 64, 256, "col"), (64, 32, 256, "row"), (32, 64, 128, "row")) + _NARROW_TILES,
               8: ((64, 64, 256, "col"), (64, 32, 256, "row"), (32, 64, 128, "row")) + _NARROW_TILES,
               16: ((32, 32, 128, "row"),)}
# 4-byte fused problems whose input rows are _ND_SHORT_IN bytes long (the 99
# to 301 columns measured) take ndtile's 128 x 16 tile where their rows fill
# 128-row tiles to 0.9: over the 37 float32 fused problems of nd_probe's
# results on an H100, 0.962 -> 0.975 of the best tile (geometric mean; the
# four it changes 0.87-0.93 -> 1.00, one held out), and 0.82-0.96 -> 0.96-1.00
# on the float32 (2, 1, 0) orders run_problem fuses (benchmarks/NOTES.md 54).
# On 61 columns (33x65x129x61 (1, 3, 0, 2)) it ran at 0.96 of 64 x 64, and
# narrower matrices take _nd_score's narrow tiles.
_ND_SHORT_INPUT = (128, 16, 256, "row")
_ND_SHORT_IN = (384, 1280)


def _short_input(problem: NdTileProblem) -> bool:
    """Whether a fused problem takes _ND_SHORT_INPUT (4-byte elements, input
    rows of _ND_SHORT_IN bytes, rows filling its tiles)."""
    _, rows, _ = strided_shape(problem)
    return (problem.elem == 4 and _ND_SHORT_IN[0] <= problem.n * problem.elem <= _ND_SHORT_IN[1]
            and _fill(rows, _ND_SHORT_INPUT[0]) >= 0.9)


# The ndshift tiles (rows, columns, threads) per element size for fused problems,
# in order of preference: ndshift reads and writes 16-byte vectors where ndtile
# moves sub-word elements one by one (int8 (133,65,129,61) (3,2,1,0): 0.21 ->
# 0.70 of the roofline untuned on the H200, NOTES 50, 52). The order is the one
# nearest the best ndshift tile over a grid of 30 fused problems on the H200
# and 20 on an H100 (NOTES 52: int8 within 8% of the best on every one, 16-bit
# within 2% on the H200). 16-bit problems whose fused matrices fill no tile to
# _ND_SHIFT_MIN_FILL keep ndtile. The 80-row tiles (shift.ODD_ROW_SPACE) come
# last: they win only where they fill far better (65-row matrices: 0.81 against
# 0.51; on an H100 int8 0.65-0.69 of a memcpy against 0.49-0.53 for the best
# power-of-two tile, float16 0.72-0.76 against 0.53-0.57; NOTES 53) and
# lost where their fill was 0.83 against 0.78 (200 rows: 0.63 against 0.72).
# ND_SHIFT_UNTUNED (on) switches the rule off for a probe.
_ND_SHIFT_DEFAULT = {1: ((128, 128, 256), (256, 64, 256), (128, 64, 128), (64, 128, 256), (80, 128, 128)),
                     2: ((64, 64, 256), (128, 64, 256), (80, 64, 128))}
_ND_SHIFT_MIN_FILL = {2: 0.6}
ND_SHIFT_UNTUNED = True


def _fill(size: int, tile: int) -> float:
    """The share of the tiles' rows (or columns) that size rows (columns) fill."""
    return size / (-(-size // tile) * tile)


def _nd_shift_default(problem: NdTileProblem, fits: list) -> KernelConfig | None:
    """The first _ND_SHIFT_DEFAULT tile (rows, columns, threads) in fits that
    fills the fused M x N matrix at least 0.8 as well as the best of them: a
    matrix of 61 or 65 rows leaves three quarters of 256-row tiles idle (int8
    (2,0,3,1) of 133x65x129x61 on an H100: 0.28 of a memcpy with 256x64, 0.49
    with 128x64; NOTES 52). None when no such tile runs, or none fills the
    matrix to _ND_SHIFT_MIN_FILL."""
    shift = {(c.tile_rows, c.tile_cols, c.threads): c for c in reversed(fits) if c.variant == "ndshift"}
    tiles = [t for t in _ND_SHIFT_DEFAULT.get(problem.elem, ()) if t in shift]
    if not tiles:
        return None
    fill = [_fill(problem.m, rows) * _fill(problem.n, cols) for rows, cols, _ in tiles]
    if max(fill) < _ND_SHIFT_MIN_FILL.get(problem.elem, 0):
        return None
    return shift[next(t for t, f in zip(tiles, fill) if f >= 0.8 * max(fill))]


FUSE_FILL = 0.8   # fuse a TileProblem whose own matrices fill 32 x 32 tiles less than this


SHORT_ROW = 128   # output row bytes below which rows walk in input order (run_problem)
# A cast's tile problem fuses only from input elements this wide (run_problem):
# fused tiles that cast run on ndtile alone (ndshift takes no cast), whose 4- and
# 8-byte loads go by cp.async as the plain float32 and float64 fused tiles that
# won (NOTES 54); sub-word inputs keep the shift tiles' 16-byte vectors.
CAST_FUSE_ELEM = 4


def run_problem(problem, cast: str = "none"):
    """The problem permute() runs (and ``autotrans tune --axes`` tunes) for a
    canonical one (cast: its conversion, kernels.config.CASTS):

    - a TileProblem as its fused tiles (core.layout.fuse_tile; a cast's
      from elements of 4 bytes or more too, CAST_FUSE_ELEM) where the fusion
      applies and the matrices are small or odd enough that fusing won on
      the H200 (8-byte elements and up, or 32 x 32 tiles less
      than FUSE_FILL full), or where the fusion lengthens output rows (the
      m side) that are not 16-byte multiples: over 48 3-D (2, 1, 0) orders on
      an H100 the best tile of the chosen form rose from 0.938 to 0.986 of
      the best of both forms (geometric mean; worst 0.595 -> 0.899), while
      fusing into longer input rows, or into longer output rows where the
      fullest fusion lengthens the input rows, lost up to 24%
      (benchmarks/NOTES.md 54);
    - a RowsProblem whose output rows are shorter than SHORT_ROW bytes, or
      narrowed by a cast, with its row dims in input order (outermost first by
      input stride): consecutive rows then read contiguous bytes, which won on
      the H200 for 32- and 64-byte rows and the (B,S,H,D) float32 -> bfloat16
      cast, where longer rows favour contiguous writes (benchmarks/NOTES.md,
      session 10);
    - anything else as it is."""
    if isinstance(problem, TileProblem) and (cast == "none" or problem.elem >= CAST_FUSE_ELEM):
        fused = layout.fuse_tile(problem)
        if fused is not None:
            if problem.elem >= 8 or _fill(problem.m, 32) * _fill(problem.n, 32) < FUSE_FILL:
                return fused
            if fused.m > problem.m and (problem.m * problem.out_elem) % 16:
                return fused
    if isinstance(problem, RowsProblem):
        out = problem.out_elem or problem.elem
        if problem.n * out < SHORT_ROW or out < problem.elem:
            return dataclasses.replace(problem, rows=tuple(sorted(problem.rows, key=lambda d: -d.src)))
    return problem


def _nd_score(cfg: KernelConfig, problem: NdTileProblem) -> float:
    """ndtile's untuned rule (fused tiles): the share of the tiles' area inside
    the fused matrix, times the share of whole sectors in the runs a tile
    reads and writes (a run of b bytes at any alignment touching about b + 32
    bytes of sectors): full tiles, and long runs on both sides."""
    tr, tc, e = cfg.tile_rows, cfg.tile_cols, problem.elem
    _, m, n = strided_shape(problem)      # the B * M rows the kernel walks
    return _fill(m, tr) * _fill(n, tc) * (tr * e / (tr * e + 32)) * (tc * e / (tc * e + 32))


def strided_candidates(problem: TileProblem | RowsProblem, limits: Limits = Limits(),
                       align: int = TUNE_ALIGN, cast: str = "none", epilogue: str = "none") -> list[KernelConfig]:
    """The strided space's configs that can run this problem (with this cast,
    kernels.config.CASTS, and store epilogue, EPILOGUES) with pointers aligned
    to ``align`` bytes on a device of these limits; the untuned default first
    (it sets the early-stop bar), then in space order."""
    problem = check_problem(problem)
    cfgs = [c for c in strided_space(problem.elem, epilogue, cast) + problem_space(problem, epilogue, cast)
            if not _fit(c, problem, align, limits, epilogue, cast)]
    return default_first(cfgs, default_strided(problem, align, limits, epilogue, cast))


def problem_key(problem, fingerprint=None, cast: str = "none", epilogue: str = "none") -> ProblemKey:
    """The cache key of a strided problem (with this cast or epilogue) on a
    device (default: the current GPU) with the current templates and search space."""
    return ProblemKey(fingerprint or driver.device().id.text, space_id(), problem, epilogue, cast=cast)


# -- the buffers (GPU) -------------------------------------------------------------------

def extents(problem: TileProblem | RowsProblem) -> tuple[int, int]:
    """(input bytes, output bytes) a problem's buffers hold: byte_extent's
    spans, the input at least the bytes moved (which memcpy reads)."""
    problem = check_problem(problem)
    (_, ihi), (_, ohi) = byte_extent(problem)      # (from 0: checked problems have positive strides)
    return max(ihi, layout.moved_bytes(problem)), ohi


def host_buffers(problem: TileProblem | RowsProblem, seed: int, cast: str = "none",
                 epilogue: str = "none") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The host side of a problem's verification: (input: random bytes, what
    the guarded output buffer must hold after the kernel, what it holds
    before). The guarded buffer is GUARD bytes of POISON, the output, GUARD
    bytes of POISON; in the output, the reference (core.layout.apply) where
    the problem writes (before: its complement, so no unwritten byte can pass)
    and POISON where it writes nothing; with a cast, the reference converts
    each element as core.layout.cast_reference does, with a conjugating
    epilogue the sign bit of every imaginary part flipped (kernels.config
    EPILOGUES: bit 7 of the last byte of each group of EPILOGUE_GROUPS bytes
    from the output pointer). ValueError if the problem's output overlaps itself."""
    problem = check_problem(problem)
    in_bytes, out_bytes = extents(problem)
    src = np.random.default_rng(seed).integers(0, 256, in_bytes, dtype=np.uint8)
    ones = None
    if cast != "none":                             # marks what is written (casts have elements of 1 to 8 bytes)
        word = np.dtype(f"u{problem.out_elem}")
        ones = lambda w: np.full(w.shape, np.iinfo(word).max, word)
    written = layout.apply(problem, np.full(in_bytes, 0xFF, np.uint8), out_bytes, ones) != 0
    if int(np.count_nonzero(written)) != layout.moved_bytes(problem):
        raise ValueError(f"the output of {problem_text(problem)[:120]} overlaps itself")
    out = layout.apply(problem, src, out_bytes, None if cast == "none" else cast)
    if epilogue != "none":
        g = EPILOGUE_GROUPS[epilogue]
        out[g - 1::g] ^= 0x80
    guard = np.full(GUARD, POISON, np.uint8)
    want = np.concatenate([guard, np.where(written, out, POISON).astype(np.uint8), guard])
    before = np.concatenate([guard, np.where(written, ~out, POISON).astype(np.uint8), guard])
    return src, want, before


class StridedBuffers(TimedBuffers):
    """TimedBuffers for one strided problem (sizes: extents); the output
    sits in the guarded buffer of host_buffers, checked whole on the host
    after each candidate's first launch."""

    def __init__(self, problem: TileProblem | RowsProblem, seed: int, cast: str = "none", epilogue: str = "none"):
        self.problem = problem = check_problem(problem)
        self.bmn = strided_shape(problem)
        super().__init__(*extents(problem), layout.moved_bytes(problem))
        src, self._want, before = host_buffers(problem, seed, cast, epilogue)
        self._before = memory.alloc(self.out_bytes + 2 * GUARD)
        memory.htod(self.src, src)
        memory.htod(self._before, before)

    def _go(self, kernel):
        return kernel.strided_launcher(*launch_args(kernel.cfg, self.problem))

    def _check(self, kernel) -> tuple[int, int]:
        """The guarded buffer reset to host_buffers' before, one launch of
        kernel, the whole buffer read back and compared with its want."""
        total = self.out_bytes + 2 * GUARD
        memory.memcpy_dtod(self._guarded, self._before, total)
        self._go(kernel)(self.src, self.dst, 0)
        bad = memory.dtoh(self._guarded, total) != self._want
        guards = int(np.count_nonzero(bad[:GUARD])) + int(np.count_nonzero(bad[GUARD + self.out_bytes:]))
        return int(np.count_nonzero(bad[GUARD:GUARD + self.out_bytes])), guards


# -- tuning ------------------------------------------------------------------------------

def _chosen(configs, problem, limits: Limits, cast: str = "none", epilogue: str = "none") -> list[KernelConfig]:
    """Given configs, each checked to run the problem here (ValueError naming the first that cannot)."""
    out = list(dict.fromkeys(configs))
    for c in out:
        if not isinstance(c, KernelConfig):
            raise TypeError(f"configs must be KernelConfigs, not {type(c).__name__}")
        why = _fit(c, problem, TUNE_ALIGN, limits, epilogue, cast)
        if why:
            raise ValueError(f"{c.key} cannot run {problem_text(problem)[:120]}: {why[0]}")
    return out


def fixed_variants(problem, cfgs, best_us: float) -> list[KernelConfig]:
    """The configs of cfgs compiled for this problem's launch
    (KernelConfig.fixed_args: its sizes and strides constants)."""
    return [c.fixed_to_args(launch_args(c, problem)[1]) for c in cfgs if not c.fixed]


def tune_problem(problem: TileProblem | RowsProblem, *, cache: ResultCache | None = None, save: bool = True,
                 progress: bool | None = None, reps: int = 5, top: int = 5, configs=None,
                 cast: str = "none", epilogue: str = "none") -> TuneRecord:
    """Find the fastest verified strided kernel for a strided canonical problem
    on the current GPU, and store it in ``cache`` (default: ResultCache()) under
    its ProblemKey. Returns the record (a TuneRecord whose shape is the (B, M,
    N) the kernel walks, its dtype the plain one of the problem's element size).
    cast: the conversion the problem's kernels make (kernels.config.CASTS,
    e.g. "f32>bf16": a problem from canonical(..., out_itemsize=)); its
    candidates are verified against core.layout.cast_reference. epilogue:
    the store epilogue (kernels.config.EPILOGUES, e.g. "conj32": permute's
    conj=True of complex64); its own configs, verified with the sign bits of
    the imaginary parts flipped, stored under a key of that epilogue.

    configs: the candidates (default: strided_candidates for this device,
    and the ``top`` fastest compiled for this launch: fixed_variants);
    each must be able to run the problem. progress: show progress bars
    (default: when stderr is a terminal). TypeError for a problem that is not
    a TileProblem or RowsProblem, ValueError for an invalid one; RuntimeError
    when no candidate passes verification."""
    t0 = time.perf_counter()
    check_counts(reps, top)
    problem = check_problem(problem)
    dev = driver.device()
    cfgs = (strided_candidates(problem, dev.limits, cast=cast, epilogue=epilogue) if configs is None
            else _chosen(configs, problem, dev.limits, cast, epilogue))
    if not cfgs:
        raise ValueError(f"no strided config can run {problem_text(problem)[:160]}"
                         + ("" if cast == "none" else f" with the cast {cast}")
                         + ("" if epilogue == "none" else f" with the epilogue {epilogue}"))
    fixed = functools.partial(fixed_variants, problem) if configs is None else None
    res = tune_candidates(cfgs, functools.partial(StridedBuffers, problem, cast=cast, epilogue=epilogue),
                          strided_shape(problem),
                          dtype_of_size(problem.elem), problem_text(problem)[:160],
                          progress=progress, reps=reps, top=top, t0=t0, variants=fixed)
    if save:
        (cache if cache is not None else ResultCache()).put_problem(problem_key(problem, dev.id.text, cast, epilogue),
                                                                    res)
    return res


# -- lookups (no GPU) --------------------------------------------------------------------

def best_strided(problem: TileProblem | RowsProblem, fingerprint, cache: ResultCache | None = None, *,
                 align: int = TUNE_ALIGN, cast: str = "none", epilogue: str = "none") -> KernelConfig | None:
    """The tuned config for exactly this problem (and cast or epilogue) on the device ``fingerprint``
    (a DeviceId or its text) with the current templates and search space, or
    None when ``cache`` (default: ResultCache()) holds no valid result. With
    pointers aligned to fewer bytes than the winner needs, the fastest verified
    candidate of the record that runs at ``align`` (None if none does)."""
    try:
        key = problem_key(problem, fingerprint, cast, epilogue)
    except ValueError:              # e.g. a single row (no row dimension): nothing keys it, nothing tuned it
        return None
    rec = (cache if cache is not None else ResultCache()).get_problem(key)
    return None if rec is None else usable_config(rec, key.problem, align, cast, epilogue)


def usable_config(record: TuneRecord, problem, align: int = TUNE_ALIGN, cast: str = "none",
                  epilogue: str = "none", limits: Limits | None = None) -> KernelConfig | None:
    """The record's winner, else its fastest verified candidate, that moves
    ``problem`` with this cast and epilogue at pointers aligned to ``align``
    (and fits ``limits`` where given); None if none does."""
    for cfg in [record.best] + [c.config for c in record.candidates]:
        if runs_problem(cfg, problem, align, cast, epilogue, limits):
            return cfg
    return None


def runs_problem(cfg: KernelConfig, problem, align: int = TUNE_ALIGN, cast: str = "none",
                 epilogue: str = "none", limits: Limits | None = None) -> bool:
    """Whether strided config cfg moves ``problem`` with this cast and
    epilogue at pointers aligned to ``align`` (and fits ``limits`` where given)."""
    return (cfg.layout == "strided" and cfg.cast == cast and cfg.epilogue == epilogue
            and not strided_problems(cfg, problem, align)
            and (limits is None or not limits.problems(cfg.threads, cfg.smem_bytes)))


def _permutation(problem) -> str:
    """A permutation whose problem this is, as ``autotrans tune`` takes it
    ("67x65x129x61 --axes 2,0,3,1"), in elements of the problem's size."""
    shape, axes = layout.permutation_of(problem)
    return f"{'x'.join(map(str, shape))} --axes {','.join(map(str, axes))}"


def problem_rows(all_devices: bool = False, *, fingerprint: str | None = None, cache=None,
                 shipped: bool = False) -> list[dict]:
    """Cached strided problems' best configs as rows (as api.cached's, with
    ``problem``: the problem's text, and ``kind``), for the device
    ``fingerprint`` (default: the current GPU) or, with all_devices, all.
    ``cache``: a ResultCache or its folder (default: ResultCache()). With
    ``shipped``, the problems shipped with autotrans instead (those the device
    uses: its model's, else its sibling's, results.shipped.for_device; or all)."""
    if not all_devices and fingerprint is None:
        fingerprint = driver.device().id.text
    want = None if all_devices else fingerprint
    if shipped:
        pairs = for_device(shipped_problems(), want)
    else:
        pairs = (cache if isinstance(cache, ResultCache) else ResultCache(cache)).problem_items(device=want)
    sid = space_id()
    return [{"device": key.device, "problem": key.problem_text + ("" if key.cast == "none" else f" cast {key.cast}")
             + ("" if key.epilogue == "none" else f" {key.epilogue}"),
             "kind": key.kind, "shape": key.shape, "permutation": _permutation(key.problem),
             "elem_bytes": key.elem_bytes, "dtype": rec.dtype, "config": rec.best.key, "time_us": rec.time_us,
             "gbps": rec.gbps, "frac_memcpy": rec.frac_memcpy, "date": rec.date,
             "versions": dict(rec.versions), "current": key.templates == sid}
            for key, rec in pairs]
