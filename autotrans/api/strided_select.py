"""Which strided config a canonical problem runs (permute()'s strided path),
and why: the config tuned for exactly this problem in the user's cache, the
one shipped with autotrans for it (same GPU model, else a sibling's), the config of the nearest
tuned problem of the same class, or the untuned rule
(tuning.strided.default_strided). Only results of the current templates count."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.device import Limits
from ..core.layout import NdTileProblem, RowsProblem, TileProblem
from ..kernels.config import KernelConfig
from ..kernels.strided import strided_shape
from ..results.keys import ProblemKey, problem_text
from ..results.record import TuneRecord
from ..results.shipped import for_device, shipped_problems
from ..results.store import ResultCache
from ..tuning.space import space_id
from ..tuning.strided import best_strided, default_strided, runs_problem, usable_config
from .predict import rerank_problem


@dataclass(frozen=True)
class StridedChoice:
    """The strided config a problem runs, where it came from ("tuned",
    "shipped", "nearest" or "untuned") and why."""
    config: KernelConfig
    source: str
    reason: str = ""


def _strides(problem) -> list[int]:
    """Every byte stride and row length of a strided problem (the inner
    stride where it is not one element): what the accesses' alignment depends on."""
    e, o = problem.elem, problem.out_elem
    if isinstance(problem, RowsProblem):
        out = [problem.n * e, problem.n * o]
        dims = problem.rows
    elif isinstance(problem, NdTileProblem):
        out = [s for _, s in problem.m_side] + [d for _, d in problem.n_side]
        dims = problem.batch
    else:
        out = [problem.ldi, problem.ldo, problem.n * e, problem.m * o]
        dims = problem.batch
    if getattr(problem, "sci", e) != e:         # an inner stride of more than one element
        out.append(problem.sci)
    return out + [x for d in dims for x in (d.src, d.dst)]


def problem_class(problem) -> tuple:
    """(kind, element sizes in and out, the widest of 16/8/4/2/1 bytes that
    every stride and row length is a multiple of, inner stride of one element):
    problems whose tuned configs can stand in for each other."""
    g = math.gcd(*_strides(problem))
    align = next(v for v in (16, 8, 4, 2, 1) if g % v == 0)
    unit = getattr(problem, "sci", problem.elem) == problem.elem
    return type(problem).__name__, problem.elem, problem.out_elem, align, unit


def _logs(problem) -> tuple:
    return tuple(math.log(max(x, 1)) for x in strided_shape(problem))


def choose_strided(problem: TileProblem | RowsProblem | NdTileProblem, align: int, epilogue: str,
                   fingerprint: str, limits: Limits, cache: ResultCache, cast: str = "none",
                   shipped=None) -> StridedChoice:
    """The StridedChoice of a strided problem at pointers aligned to ``align``
    on the device ``fingerprint`` of these ``limits``; ``shipped``: the shipped
    (ProblemKey, record) pairs (default: shipped_problems())."""
    cfg = best_strided(problem, fingerprint, cache, align=align, cast=cast, epilogue=epilogue)
    if cfg is not None and not limits.problems(cfg.threads, cfg.smem_bytes):
        return StridedChoice(cfg, "tuned", "tuned for this problem")
    found = _nearest(problem, align, epilogue, cast, fingerprint, limits, cache, shipped)
    if found is not None:
        return found
    return StridedChoice(strided_config(problem, align, limits, epilogue, cast), "untuned", "untuned rule")


def strided_config(problem, align: int, limits: Limits, epilogue: str = "none", cast: str = "none") -> KernelConfig:
    """The strided config a problem gets untuned (tuning.strided.default_strided's
    rule); ValueError when no strided config can run it here."""
    cfg = default_strided(problem, align, limits, epilogue, cast)
    if cfg is None:
        raise ValueError(f"no strided kernel can run {problem} with {align}-byte aligned pointers"
                         + (f" and the epilogue {epilogue}" if epilogue != "none" else "")
                         + (f" and the cast {cast}" if cast != "none" else ""))
    return cfg


def _records(fingerprint: str, cache: ResultCache, shipped) -> list[tuple[str, ProblemKey, TuneRecord]]:
    """(source, key, record) of the user's problems on this device, then the
    shipped ones of its GPU model (else its sibling's); only those of the current templates."""
    sid = space_id()
    own = [("own", k, r) for k, r in cache.problem_items(device=fingerprint) if k.templates == sid]
    ship = for_device(shipped_problems() if shipped is None else shipped, fingerprint)
    return own + [("shipped", k, r) for k, r in ship if k.templates == sid]


def _nearest(problem, align, epilogue, cast, fingerprint, limits, cache, shipped) -> StridedChoice | None:
    """The shipped result of exactly this problem, else the nearest tuned
    problem's (same class, cast and epilogue; by log-distance of the (B, M, N)
    the kernels walk, the user's own first on a tie): the config of its table
    predicted fastest here (predict.rerank_problem); None when none runs it."""
    try:
        text = problem_text(problem)
    except ValueError:                 # a problem nothing can key (a single row) has no tuned neighbours
        return None
    want, logs, ranked = problem_class(problem), _logs(problem), []
    for source, key, rec in _records(fingerprint, cache, shipped):
        if key.cast != cast or key.epilogue != epilogue or problem_class(key.problem) != want:
            continue
        same = key.problem_text == text
        if same and source == "own":
            continue                   # best_strided read it: it cannot run here
        ranked.append(((not same, math.dist(_logs(key.problem), logs), source != "own", key.text), key, rec))
    for rank, key, rec in sorted(ranked, key=lambda x: x[0]):
        if rank[0]:                    # another problem: its table re-ranked for this one's tile fill
            cfg = rerank_problem(rec, key.problem, problem,
                                 lambda c: runs_problem(c, problem, align, cast, epilogue, limits))
        else:
            cfg = usable_config(rec, problem, align, cast, epilogue, limits)
        if cfg is None:
            continue
        if not rank[0]:
            return StridedChoice(cfg, "shipped", f"tuned for this problem (shipped with autotrans, tuned on "
                                                 f"{key.device_id.name})")
        made = f"; shipped, tuned on {key.device_id.name}" if source == "shipped" else ""
        how = "its winner" if cfg == rec.best else "its timings scaled to this problem's tile fill"
        return StridedChoice(cfg, "nearest", f"nearest tuned problem {key.problem_text} "
                                             f"(log-distance {rank[1]:.2f}{made}; {how})")
    return None


__all__ = ["StridedChoice", "choose_strided", "problem_class", "strided_config"]
