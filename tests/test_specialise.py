"""api.specialise: untuned shapes' configs compiled for the shape on a
background thread (real nvcc, a kernel store in a temporary folder)."""
from __future__ import annotations

import stat

import pytest

from autotrans.api import specialise
from autotrans.build.compile import find_compiled
from autotrans.build.nvcc import find_nvcc
from autotrans.kernels.config import classic

ARCH = "sm_90"
BMN = (1, 96, 160)


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A fresh cache folder (and so kernel store) for each test."""
    monkeypatch.setenv("AUTOTRANS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.mark.parametrize("value, on", [(None, True), ("1", True), ("", True), ("0", False), ("off", False),
                                       ("No", False), ("false", False)])
def test_on_unless_the_environment_turns_it_off(monkeypatch, value, on):
    if value is None:
        monkeypatch.delenv(specialise.ENV, raising=False)
    else:
        monkeypatch.setenv(specialise.ENV, value)
    assert specialise.enabled() is on


def test_a_process_queues_at_most_max_builds(store, monkeypatch):
    """Past MAX_BUILDS shapes a process (varying lengths), new shapes stay generic."""
    monkeypatch.setattr(specialise, "MAX_BUILDS", len(specialise._asked) + 1)
    first, second = (classic("tile", 4).fixed_to((1, 64, n)) for n in (232, 240))
    assert specialise.ready(first, ARCH) is False and specialise.wait(300)
    assert specialise.ready(second, ARCH) is False and specialise.wait(60)
    assert find_compiled(first, ARCH) is not None and find_compiled(second, ARCH) is None
    assert specialise.ready(first, ARCH) is True       # built ones are still used
    assert specialise.ready(second, ARCH, capped=False) is False and specialise.wait(300)   # the bench's way
    assert find_compiled(second, ARCH) is not None


def test_wait_returns_at_once_when_nothing_was_ever_queued(monkeypatch):
    """No worker (a fresh process, or one without nvcc): wait() has nothing to wait for."""
    import queue
    monkeypatch.setattr(specialise, "_worker", [])
    monkeypatch.setattr(specialise, "_jobs", queue.Queue())     # no thread reads this one
    assert specialise.wait(timeout=5) is True


def test_candidate_is_the_generic_dense_config_fixed_to_a_small_shape():
    cfg = classic("tile", 4)
    fixed = specialise.candidate(cfg, BMN, 4)
    assert fixed is not None and fixed.fixed == "1x96x160" and fixed.generic() == cfg
    assert specialise.candidate(fixed, BMN, 4) is None                     # fixed already
    big = (1, 4096, specialise.MAX_BYTES // 4 // 4096 + 1)
    assert specialise.candidate(cfg, big, 4) is None                       # large: nothing to gain
    assert specialise.candidate(cfg, (1, 4096, specialise.MAX_BYTES // 4 // 4096), 4) is not None


def test_the_first_ask_queues_a_build_and_later_asks_find_it(store):
    fixed = classic("tile", 4).fixed_to(BMN)
    built = []
    assert specialise.ready(fixed, ARCH, lambda: built.append(1)) is False
    assert specialise.ready(fixed, ARCH, lambda: built.append(2)) is False    # queued once
    assert specialise.wait(300)
    assert built == [1]
    assert find_compiled(fixed, ARCH) is not None
    assert specialise.ready(fixed, ARCH) is True


def test_a_failed_build_keeps_the_generic_kernel_and_is_not_retried(store, tmp_path, monkeypatch):
    """nvcc that answers its version but fails every compile: the failure is
    recorded on the background thread, nothing is built, nothing raised."""
    fake = tmp_path / "nvcc"
    fake.write_text(f'#!/bin/sh\n[ "$1" = "--version" ] && exec "{find_nvcc()}" --version\nexit 1\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("AUTOTRANS_NVCC", str(fake))
    fixed = classic("padded", 4).fixed_to((1, 64, 200))
    built, before = [], len(specialise.failures)
    assert specialise.ready(fixed, ARCH, lambda: built.append(1)) is False
    assert specialise.wait(300)
    assert built == [] and find_compiled(fixed, ARCH) is None
    assert [k for k, _ in specialise.failures[before:]] == [fixed.key]
    assert specialise.ready(fixed, ARCH, lambda: built.append(1)) is False
    assert specialise.wait(60) and built == [] and len(specialise.failures) == before + 1


def test_without_nvcc_nothing_is_queued(store, tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTRANS_NVCC", str(tmp_path / "missing"))
    fixed = classic("tile", 4).fixed_to((1, 64, 72))
    assert specialise.ready(fixed, ARCH) is False
    assert (fixed.key, ARCH) not in specialise._asked


def test_explain_says_what_a_specialised_call_runs(monkeypatch, tmp_path):
    """explain() of an untuned shape names the fixed build when the variable
    is on, and says nothing of it when it is off or the shape is large."""
    import autotrans
    fp = "NVIDIA H200|sm_90|132sm|driver 580.159.04|cuda 13.0"
    monkeypatch.setenv(specialise.ENV, "1")
    c = autotrans.explain((333, 517), "float32", fingerprint=fp, cache_dir=tmp_path)
    assert c.source != "exact" and "AUTOTRANS_SPECIALISE" in c.reason
    assert f"{c.config.key}@1x333x517" in c.reason
    assert "AUTOTRANS_SPECIALISE" not in autotrans.explain((8191, 8193), "float32", fingerprint=fp,
                                                          cache_dir=tmp_path).reason
    monkeypatch.setenv(specialise.ENV, "0")
    assert "AUTOTRANS_SPECIALISE" not in autotrans.explain((333, 517), "float32", fingerprint=fp,
                                                          cache_dir=tmp_path).reason


def _odd_d(shape=(2, 64, 4, 67)):
    """The strided problem permute() runs for a float16 (B, S, H, D) -> (B, H, S, D) of odd D."""
    import numpy as np
    from autotrans.core.layout import c_strides, canonical
    from autotrans.tuning.strided import run_problem
    return run_problem(canonical(shape, c_strides(shape, 2), 2, (0, 2, 1, 3)))


def test_strided_candidate_is_the_generic_config_compiled_for_the_launch(store):
    from autotrans.kernels.strided import launch_args, strided_problems
    from autotrans.tuning.strided import default_strided
    prob = _odd_d()
    cfg = default_strided(prob, 16)
    fixed = specialise.strided_candidate(cfg, prob, 16)
    assert fixed is not None and fixed.generic() == cfg and fixed.fixed_args == launch_args(cfg, prob)[1]
    assert not strided_problems(fixed, prob, 16) and strided_problems(fixed, _odd_d((2, 64, 4, 69)), 16)
    assert specialise.strided_candidate(fixed, prob, 16) is None                # fixed already
    assert specialise.strided_candidate(classic("tile", 2), prob, 16) is None    # a dense config
    big = _odd_d((8, 2048, 16 * (specialise.MAX_STRIDED_BYTES // (8 * 2048 * 16 * 67 * 2) + 1), 67))
    assert specialise.strided_candidate(default_strided(big, 16), big, 16) is None   # large
    assert specialise.ready(fixed, ARCH) is False and specialise.wait(300)      # real nvcc builds it
    assert specialise.ready(fixed, ARCH) is True and find_compiled(fixed, ARCH).info["registers"] > 0


def test_explain_permute_says_a_strided_problem_is_compiled_for_its_launch(monkeypatch, tmp_path):
    from autotrans.api.permute import explain_permute
    fp = "NVIDIA H200|sm_90|132sm|driver 580.159.04|cuda 13.0"
    monkeypatch.setenv(specialise.ENV, "1")
    c = explain_permute((2, 64, 4, 67), (0, 2, 1, 3), "float16", fingerprint=fp, cache_dir=tmp_path)
    assert c.source == "untuned" and c.config.variant == "flat" and "compiled for this launch" in c.reason
    monkeypatch.setenv(specialise.ENV, "0")
    c = explain_permute((2, 64, 4, 67), (0, 2, 1, 3), "float16", fingerprint=fp, cache_dir=tmp_path)
    assert "AUTOTRANS_SPECIALISE" not in c.reason


def test_a_forked_child_builds_with_its_own_worker(store):
    """After a fork the parent's thread is gone: the child queues and builds anew."""
    import multiprocessing as mp
    fixed = classic("tile", 4).fixed_to((1, 40, 88))
    assert specialise.ready(fixed, ARCH) is False and specialise.wait(300)      # parent's worker exists
    other = classic("tile", 4).fixed_to((1, 40, 96))
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        assert pool.apply(_child_builds, (other,)) is True
    assert find_compiled(other, ARCH) is not None


def _child_builds(cfg) -> bool:
    return specialise.ready(cfg, ARCH) is False and specialise.wait(120) and specialise.ready(cfg, ARCH)


def test_a_choice_made_before_a_build_finished_is_not_remembered():
    """A background build that finishes while a call loads its generic
    kernel clears the remembered launchers (launch._relaunch); that call's
    choice, made before, must not be stored after the clear (launch._keep)."""
    from autotrans.api import launch
    launch.forget()
    gen = launch.generation()
    launch._keep(launch._strided, "current", "go", gen)
    assert launch._strided.get("current") == "go"            # nothing built meanwhile: kept
    launch._relaunch()                                        # the build lands
    assert launch._strided.get("current") is None and launch.generation() == gen + 1
    for cache in (launch._strided, launch._launchers, launch._routes):
        launch._keep(cache, "stale", "generic", gen)          # chosen before it: dropped
        assert cache.get("stale") is None
    launch._keep(launch._routes, "after", "fixed", launch.generation())
    assert launch._routes.get("after") == "fixed"
    launch.forget()
