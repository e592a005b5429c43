"""Shared test setup: a private cache folder for the whole run (tests never
touch the user's real cache), the ``gpu`` marker (skipped, with the reason,
where there is no usable GPU), the ``exhaustive`` marker (run with
--exhaustive, as .ci/run does in a step of its own), and a builder of
realistic tuning records."""
from __future__ import annotations

import os
import random
import tempfile

import pytest

# Before autotrans is imported anywhere: every cache and kernel store of this run
# lives here (tests that need their own folder still pass one).
os.environ["AUTOTRANS_CACHE_DIR"] = tempfile.mkdtemp(prefix="autotrans-tests-")

H200 = "NVIDIA H200|sm_90|132sm|driver 580.95.05|cuda 13.0"
A100 = "NVIDIA A100-SXM4-80GB|sm_80|108sm|driver 550.54.15|cuda 12.4"


def pytest_addoption(parser):
    parser.addoption("--exhaustive", action="store_true",
                     help="also run the exhaustive tests (every candidate compiled for two archs)")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU and PyCUDA (skipped without them)")
    config.addinivalue_line("markers", "slow: takes tens of seconds (still runs by default and on CI)")
    config.addinivalue_line("markers", "exhaustive: minutes of work; runs with --exhaustive (.ci/run does)")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--exhaustive"):
        skip = pytest.mark.skip(reason="exhaustive: run with --exhaustive (.ci/run runs it as its own step)")
        for item in items:
            if item.get_closest_marker("exhaustive"):
                item.add_marker(skip)
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    from autotrans.backend.cuda import GPUUnavailable, device
    try:
        device()
        return
    except GPUUnavailable as exc:
        reason = f"no GPU: {exc}"
    skip = pytest.mark.skip(reason=reason)
    for item in gpu_items:
        item.add_marker(skip)


def make_record(shape=(1, 8192, 8192), elem_bytes=4, device=H200, *, dtype=None, seed=0,
                time_scale=1.0, date="2025-11-30T09:41:07+00:00", failures=2, n_candidates=None):
    """The stored form (TuneRecord.to_json()) of a record shaped like the one
    tune() stores: every config of the default space that fits the shape, with
    made-up but self-consistent timings (only the fastest ``n_candidates`` rows
    are kept, if given)."""
    import numpy as np

    from autotrans import __version__
    from autotrans.core.device import DeviceId
    from autotrans.core.problem import as_bmn, dtype_of_size, gbps
    from autotrans.results.record import Candidate, Failure, TuneRecord
    from autotrans.tuning.space import candidates, space_id

    rnd = random.Random(seed)
    bmn = as_bmn(shape)
    nbytes = int(np.prod(bmn)) * elem_bytes
    memcpy_us = 2 * nbytes / 4.4e12 * 1e6 * time_scale   # ~4.4 TB/s read+write
    cfgs = candidates(bmn, elem_bytes)
    rows = []
    for i, cfg in enumerate(cfgs[failures:]):
        slow = 1.0 + {"naive": 2.0, "remapped": 1.6, "tile": 0.5, "vec": 0.05, "shift": 0.1, "narrow": 0.05,
                      "short": 0.05, "whole": 0.05}[cfg.variant]
        med = memcpy_us * slow * rnd.uniform(1.02, 1.6)
        rows.append(Candidate(cfg.key, med, med * 0.99, med * 1.01, 7, gbps(nbytes, med),
                              rnd.choice([16, 24, 32, 40]), False))
    rows.sort(key=lambda r: r.median_us)
    rows = rows[:n_candidates]
    best = rows[0]
    dev = DeviceId.from_text(device)
    dt = np.dtype(dtype) if dtype is not None else dtype_of_size(elem_bytes)
    assert dt.itemsize == elem_bytes
    versions = {"autotrans": __version__, "space": space_id(), "nvcc": "13.0.88", "cuda": dev.cuda,
                "driver": dev.driver}
    rec = TuneRecord(best.config, bmn, elem_bytes, dt.name, best.median_us, best.q1_us, best.q3_us,
                     best.gbps, memcpy_us, gbps(nbytes, memcpy_us), memcpy_us / best.median_us,
                     tuple(rows), tuple(Failure(c.key, "verify", "12 wrong output bytes") for c in cfgs[:failures]),
                     dev, 50 << 20, date, 41.5, tuple(sorted(versions.items())))
    return rec.to_json()


@pytest.fixture
def record_factory():
    """make_record(shape, elem_bytes, device, ...) -> a realistic tuning record."""
    return make_record
