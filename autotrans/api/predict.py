"""The untuned pick from a tuned shape's own timings: tune() times every
candidate of a shape, so the nearest tuned shape's table says how each config
ran there. rerank() scales those times to the new shape by what changes with
the shape: how much of each tile holds elements (fill) and how many blocks the
launch has to spread over the SMs (spread), and picks the best predicted.
Weights from a leave-one-out over the shipped grid (benchmarks/untuned_loo.py,
NOTES 43). rerank_problem() does the same for a strided problem from the
nearest tuned problem's table (benchmarks/strided_loo.py, NOTES 61)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.device import Limits
from ..core.layout import RowsProblem
from ..core.problem import as_bmn
from ..kernels.config import KernelConfig
from ..kernels.strided import launch_shape
from ..results.record import TuneRecord
from ..tuning.space import admits

FILL_WEIGHT = 0.5       # predicted time x (fill there / fill here) ** FILL_WEIGHT
STRIDED_FILL_WEIGHT = 1.0   # the same for strided tile problems (a tile's idle rows cost their time)
ROWS_FILL_WEIGHT = 0.0      # and for RowsProblems: a rows block's idle columns move no bytes (NOTES 63)
RERANK_MARGIN = 0.05        # a strided record's winner gives way only to a config predicted this much faster
SPREAD_WEIGHT = 0.25    # ... x (spread there / spread here) ** SPREAD_WEIGHT
BLOCKS_PER_SM = 4       # spread: blocks / (this many a SM), at most 1


def fill(cfg: KernelConfig, shape) -> float:
    """The share of the launched tiles' elements that lie in the (B, M, N)
    shape (1: every tile full; 0: the config launches no blocks for it)."""
    bmn = as_bmn(shape)
    return _fill(cfg, math.prod(bmn), cfg.blocks(bmn))


def spread(cfg: KernelConfig, shape, sms: int) -> float:
    """The config's blocks for the shape over BLOCKS_PER_SM a SM, at most 1."""
    return _spread(cfg.blocks(as_bmn(shape)), sms)


def _fill(cfg: KernelConfig, elems: int, blocks: int) -> float:
    area = blocks * cfg.tile_rows * cfg.tile_cols * cfg.strip
    return min(1.0, elems / area) if area else 0.0


def _spread(blocks: int, sms: int) -> float:
    return min(1.0, blocks / (BLOCKS_PER_SM * sms))


@dataclass(frozen=True)
class Timed:
    """One candidate of a tuned shape: its config, the fastest time of the
    record's table / its time there (at most 1), and its fill and spread there."""
    cfg: KernelConfig
    ratio: float
    fill: float
    spread: float


def timings(record: TuneRecord) -> list[Timed]:
    """The record's dense candidates as Timed rows (its kernels compiled for
    its one shape left out). Ratios are to the table's fastest row, not to the
    record's time: that is the winner's interleaved re-time, which can read
    slower than first-pass times and would tie every candidate at 1."""
    bmn, sms, out = record.shape, record.device.sms, []
    fastest = min((c.median_us for c in record.candidates if c.median_us > 0), default=0.0)
    for c in record.candidates:
        cfg = c.config
        if c.median_us > 0 and cfg.layout == "dense" and not cfg.fixed:
            blocks = cfg.blocks(bmn)
            out.append(Timed(cfg, fastest / c.median_us, _fill(cfg, math.prod(bmn), blocks), _spread(blocks, sms)))
    return out


def score(t: Timed, here, sms: int, fill_weight: float = FILL_WEIGHT) -> float:
    """log of the predicted best / time of t's config on the (B, M, N) ``here``, from its ratio where it was timed."""
    blocks = t.cfg.blocks(here)
    f = _fill(t.cfg, math.prod(here), blocks)
    if f <= 0 or t.fill <= 0:
        return -math.inf
    return (math.log(t.ratio) + fill_weight * math.log(f / t.fill)
            + SPREAD_WEIGHT * math.log(_spread(blocks, sms) / t.spread))


def runs_here(cfg: KernelConfig, bmn, align: int, limits: Limits) -> bool:
    """Whether a dense config is one of bmn's candidates and launches here."""
    return (cfg.pointer_align <= align and admits(cfg, bmn, limits)
            and not cfg.launch_problems(bmn))


def rerank(record: TuneRecord, winner: KernelConfig, table: list[Timed], here, align: int = 16,
           limits: Limits = Limits()) -> KernelConfig:
    """The config predicted fastest on the (B, M, N) ``here`` from ``table``
    (timings(record)): each candidate that can run ``here`` by score(). The
    record's winner (``winner``: its config, generic) takes ties and is always
    one of them, at ratio 1 where the table does not hold it."""
    here, sms = as_bmn(here), record.device.sms
    pool = {t.cfg: t for t in table if runs_here(t.cfg, here, align, limits)}
    if winner not in pool:
        blocks = winner.blocks(record.shape)
        pool[winner] = Timed(winner, 1.0, _fill(winner, math.prod(record.shape), blocks), _spread(blocks, sms))
    return min(pool.values(), key=lambda t: (-score(t, here, sms), t.cfg != winner, t.cfg.key)).cfg


def _timed(cfg: KernelConfig, ratio: float, shape, sms: int) -> Timed:
    blocks = cfg.blocks(shape)
    return Timed(cfg, ratio, _fill(cfg, math.prod(shape), blocks), _spread(blocks, sms))


def problem_timings(record: TuneRecord, problem) -> list[Timed]:
    """A strided problem's record (tuned on ``problem``) as Timed rows: its
    strided candidates, each's fill and spread on the shape it launches."""
    fastest = min((c.median_us for c in record.candidates if c.median_us > 0), default=0.0)
    return [_timed(c.config, fastest / c.median_us, launch_shape(c.config, problem), record.device.sms)
            for c in record.candidates if c.median_us > 0 and c.config.layout == "strided"]


def rerank_problem(record: TuneRecord, there, here, runs) -> KernelConfig | None:
    """The config of a strided problem's record (tuned on the problem
    ``there``) predicted fastest on the problem ``here``: each candidate that
    ``runs(cfg)`` by score() on the shape it launches there and here, fill
    weighted by STRIDED_FILL_WEIGHT (a 64-row tile tuned on 61-row matrices
    leaves half its rows idle on 65; ROWS_FILL_WEIGHT for a RowsProblem). The
    record's winner (re-timed, where the others were timed once) stays unless
    another is predicted RERANK_MARGIN faster; None when no candidate runs."""
    sms = record.device.sms
    pool = {t.cfg: t for t in problem_timings(record, there) if runs(t.cfg)}
    if record.best not in pool and runs(record.best):
        pool[record.best] = _timed(record.best, 1.0, launch_shape(record.best, there), sms)
    weight = ROWS_FILL_WEIGHT if isinstance(here, RowsProblem) else STRIDED_FILL_WEIGHT
    return margin_pick({cfg: score(t, launch_shape(cfg, here), sms, weight) for cfg, t in pool.items()},
                       record.best)


def margin_pick(scored: dict, winner, margin: float = RERANK_MARGIN):
    """The best of ``scored`` (config -> score()), but ``winner`` where it is
    scored and none beats it by ``margin``; None for an empty dict."""
    if not scored:
        return None
    best = min(scored, key=lambda c: (-scored[c], c != winner, c.key))
    if winner in scored and scored[best] - scored[winner] < math.log1p(margin):
        return winner
    return best


__all__ = ["fill", "spread", "score", "rerank", "runs_here", "timings", "Timed", "FILL_WEIGHT", "SPREAD_WEIGHT",
           "BLOCKS_PER_SM", "problem_timings", "rerank_problem", "margin_pick", "STRIDED_FILL_WEIGHT",
           "ROWS_FILL_WEIGHT", "RERANK_MARGIN"]
