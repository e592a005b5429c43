"""autotrans' own contenders: the tuned config and the untuned choice."""
from __future__ import annotations

import dataclasses
import time

from ... import api
from ...api import specialise
from ...backend import memory
from ...api.select import choose
from ...results.store import ResultCache
from ...tuning import loader
from .cases import Case
from .gpu import Data
from .results import Entry, Result


def _entry(name: str, case: Case, data: Data, choice, setup_s=None) -> Entry:
    y = data.y
    if 1 in case.bmn[1:]:                  # what transpose() does with a side of 1: a copy
        def call(src):
            memory.memcpy_dtod(y, src, case.nbytes)
            return y
        return Entry(name, call, config="copy", source=choice.source, setup_s=setup_s,
                     note="a side of 1: the transpose is the input's bytes, copied")
    go = loader.kernel(choice.config).launcher(case.bmn)

    def call(src):
        go(src, y)
        return y
    return Entry(name, call, config=choice.config.key, source=choice.source, setup_s=setup_s,
                 note=choice.reason)


def tuned_entry(bench, case: Case, data: Data):
    """The config tune() finds for the shape (tuned into the user cache when missing)."""
    dev, setup = bench.gpu.dev, None

    def pick():
        return choose(case.bmn, case.elem_bytes, dev.id.text, dev.limits, ResultCache())
    choice = pick()
    if choice.source != "exact":
        if not bench.tune:
            return Result("skipped", note="not in the user cache, and tuning is off")
        t = time.perf_counter()
        api.tune(case.bmn, case.dtype, progress=False)
        setup = time.perf_counter() - t
        choice = pick()
        if choice.source != "exact":
            return Result("failed", setup_s=setup, note=f"tune() stored no result ({choice})")
    return _entry("tuned", case, data, choice, setup)


def untuned_entry(bench, case: Case, data: Data):
    """What choose() picks with an empty user cache and only the shipped results."""
    dev = bench.gpu.dev
    choice = choose(case.bmn, case.elem_bytes, dev.id.text, dev.limits, ResultCache(bench.empty_cache))
    return _entry("untuned", case, data, _specialised(choice, case, dev.arch) if specialise.enabled() else choice)


def _specialised(choice, case: Case, arch: str):
    """The choice as transpose() runs it once the shape's fixed kernel is built
    (api.specialise; built here first, waited for, past its cap of builds a
    process: a bench runs more shapes than a program)."""
    fixed = specialise.candidate(choice.config, case.bmn, case.elem_bytes) if choice.source != "exact" else None
    if fixed is None or not (specialise.ready(fixed, arch, capped=False)
                             or (specialise.wait(600) and specialise.ready(fixed, arch))):
        return choice
    return dataclasses.replace(choice, config=fixed, source=f"{choice.source}, fixed")
