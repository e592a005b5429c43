"""The public API: tune, transpose, explain, cached."""
from __future__ import annotations

from ..backend.arrays import DeviceArray
from ..tuning import runner
from .launch import forget, transpose
from .listing import cached
from . import select
from .permute import PermuteChoice, explain_permute, permute, tune_permutation
from .select import Choice, choose


def tune(shape, dtype="float32", *, axes=None, conj: bool = False, to=None, configs=None, cache_dir=None,
         save: bool = True, progress: bool | None = None, reps: int = 5, top: int = 5) -> runner.TuneResult | None:
    """Find the fastest verified transpose kernel for ``shape`` ((M, N) or
    (B, M, N)) and ``dtype`` on the current GPU and store it in the cache;
    transpose() uses it from then on.

    With ``axes`` (and ``conj``, ``to`` as permute()'s conj and dtype): tune
    what permute() runs for numpy.transpose(x, axes) of a C-contiguous x of
    ``shape`` (1 to 8 axes): its canonical problem, a dense transpose or a
    strided problem, stored under that problem's key, which permute() uses
    from then on; None where the problem is a copy (nothing to tune).
    configs: the candidates (default: the search space for the problem).
    progress: show progress bars (default: when stderr is a terminal).
    """
    if axes is None:
        if conj or to is not None:
            raise ValueError("conj=True and to= need axes (transpose() neither conjugates nor casts)")
        res = runner.tune(shape, dtype, configs=configs, cache_dir=cache_dir, save=save,
                          progress=progress, reps=reps, top=top)
    else:
        res = tune_permutation(shape, dtype, axes, conj=conj, to=to, configs=configs, cache_dir=cache_dir,
                               save=save, progress=progress, reps=reps, top=top)
    forget()
    return res


def explain(shape, dtype="float32", *, axes=None, conj: bool = False, to=None, fingerprint: str | None = None,
            cache_dir=None):
    """Which config transpose() would use for ``shape`` ((M, N) or (B, M, N))
    and ``dtype``, and why (a Choice). With ``axes``: what permute() would run
    for numpy.transpose(x, axes) of a C-contiguous x of ``shape`` (1 to 8
    axes), and why (a PermuteChoice: the canonical problem, then a copy,
    transpose()'s Choice or a strided config); ``to``: the result's dtype, as
    permute()'s dtype= (a cast in the same pass). Without a GPU, pass the
    ``fingerprint`` of the device to ask about."""
    if axes is None:
        if conj or to is not None:
            raise ValueError("conj=True and to= need axes (transpose() neither conjugates nor casts)")
        return select.explain(shape, dtype, fingerprint=fingerprint, cache_dir=cache_dir)
    return explain_permute(shape, axes, dtype, conj=conj, to=to, fingerprint=fingerprint, cache_dir=cache_dir)


__all__ = ["tune", "transpose", "permute", "explain", "cached", "choose", "Choice", "PermuteChoice", "forget", "DeviceArray"]
