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
                time_scale=1.0, date="2025-11-30T09:41:07+00:00", failures=2):
    """A tuning record shaped like the one tune() stores: every config of the
    default space that fits the shape, with made-up but self-consistent timings."""
    import numpy as np

    from autotrans import __version__
    from autotrans.core.problem import as_bmn, dtype_of_size
    from autotrans.tuning.space import candidates, space_id

    rnd = random.Random(seed)
    bmn = as_bmn(shape)
    nbytes = int(np.prod(bmn)) * elem_bytes
    memcpy_us = 2 * nbytes / 4.4e12 * 1e6 * time_scale   # ~4.4 TB/s read+write

    def gbps(us):
        return 2 * nbytes / (us * 1e-6) / 1e9

    cfgs = candidates(bmn, elem_bytes)
    failed = cfgs[:failures]
    rows = []
    for cfg in cfgs[failures:]:
        slow = 1.0 + {"naive": 2.0, "remapped": 1.6, "tile": 0.5, "vec": 0.05}[cfg.variant]
        med = memcpy_us * slow * rnd.uniform(1.02, 1.6)
        rows.append({"key": cfg.key, "median_us": med, "q1_us": med * 0.99, "q3_us": med * 1.01,
                     "n": 7, "gbps": gbps(med), "registers": rnd.choice([16, 24, 32, 40])})
    rows.sort(key=lambda r: r["median_us"])
    best = rows[0]
    from autotrans.kernels.config import KernelConfig
    cfg = KernelConfig.from_key(best["key"])
    dt = np.dtype(dtype) if dtype is not None else dtype_of_size(elem_bytes)
    assert dt.itemsize == elem_bytes
    name, arch, sms = device.split("|")[:3]
    return {
        "config": cfg.to_dict(), "key": cfg.key, "shape": list(bmn), "elem_bytes": elem_bytes,
        "dtype": dt.name, "time_us": best["median_us"], "q1_us": best["q1_us"], "q3_us": best["q3_us"],
        "gbps": best["gbps"], "memcpy_us": memcpy_us, "memcpy_gbps": gbps(memcpy_us),
        "frac_memcpy": memcpy_us / best["median_us"], "candidates": rows,
        "failures": [{"key": c.key, "stage": "verify", "reason": "12 wrong output bytes"} for c in failed],
        "device": {"name": name, "cc": [int(arch[3]), int(arch[4:])], "sms": int(sms[:-2]),
                   "l2_bytes": 50 << 20, "driver": device.split("|")[3][7:],
                   "cuda": device.split("|")[4][5:], "fingerprint": device},
        "date": date, "seconds": 41.5,
        "versions": {"autotrans": __version__, "space": space_id(), "nvcc": "13.0.88",
                     "cuda": device.split("|")[4][5:], "driver": device.split("|")[3][7:]},
    }


@pytest.fixture
def record_factory():
    """make_record(shape, elem_bytes, device, ...) -> a realistic tuning record."""
    return make_record
