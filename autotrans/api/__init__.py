"""The public API: tune, transpose, explain, cached."""
from __future__ import annotations

from ..backend.arrays import DeviceArray
from ..tuning import runner
from .launch import forget, transpose
from .listing import cached
from .permute import permute
from .select import Choice, choose, explain


def tune(shape, dtype="float32", *, configs=None, cache_dir=None, save: bool = True,
         progress: bool | None = None, reps: int = 5, top: int = 5) -> runner.TuneResult:
    """Find the fastest verified transpose kernel for ``shape`` ((M, N) or
    (B, M, N)) and ``dtype`` on the current GPU and store it in the cache;
    transpose() uses it from then on.

    configs: the candidates (default: the search space for this shape).
    progress: show progress bars (default: when stderr is a terminal).
    """
    res = runner.tune(shape, dtype, configs=configs, cache_dir=cache_dir, save=save,
                      progress=progress, reps=reps, top=top)
    forget()
    return res


__all__ = ["tune", "transpose", "permute", "explain", "cached", "choose", "Choice", "forget", "DeviceArray"]
