"""tune() on the GPU: three shapes (one odd, one batched), results stored and
reused by transpose(), by a second process, and from the shipped cache/."""
import os
import subprocess
import sys

import numpy as np
import pytest

import autotrans
from autotrans.api import launch as dispatch
from autotrans.backend import cuda as driver
from autotrans.backend import memory
from autotrans.results.store import ResultCache, shipped_entries
from autotrans.results.shipped import for_device
from autotrans.core.problem import as_bmn
from autotrans.tuning.space import space_id
from autotrans.tuning.runner import FIXED_BELOW_US, key_for

pytestmark = pytest.mark.gpu

SHAPES = [((2048, 2048), np.float32), ((4097, 4095), np.float32), ((3, 300, 500), np.float16)]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTRANS_CACHE_DIR", str(tmp_path))
    dispatch.forget()
    yield tmp_path
    dispatch.forget()


def host_random(shape, dtype, seed=0):
    raw = np.random.default_rng(seed).integers(0, 256, int(np.prod(shape)) * np.dtype(dtype).itemsize,
                                               dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


@pytest.mark.parametrize("shape, dtype", SHAPES)
def test_tune_stores_a_verified_winner(cache_dir, shape, dtype):
    res = autotrans.tune(shape, dtype, progress=False)
    e = np.dtype(dtype).itemsize
    nbytes = int(np.prod(shape)) * e
    assert res.candidates and res.time_us == res.candidates[0]["median_us"]
    assert res.best.key == res.candidates[0]["key"]
    assert res.gbps == pytest.approx(2 * nbytes / (res.time_us * 1e-6) / 1e9)
    assert res.frac_memcpy == pytest.approx(res.memcpy_us / res.time_us)
    assert all(c["q1_us"] <= c["median_us"] <= c["q3_us"] for c in res.candidates)
    assert not [f for f in res.failures if f["stage"] != "compile"], res.failures
    # the fastest configs were also timed compiled for this shape (KernelConfig.fixed)
    # where they run under FIXED_BELOW_US
    fixed = [c["key"] for c in res.candidates if "@" in c["key"]]
    fast = min(c["median_us"] for c in res.candidates if "@" not in c["key"]) < FIXED_BELOW_US
    assert bool(fixed) == fast and all(k.endswith("@" + "x".join(map(str, as_bmn(shape)))) for k in fixed)
    stored = ResultCache(cache_dir).get(key_for(as_bmn(shape), e))
    assert stored["key"] == res.best.key and stored["dtype"] == np.dtype(dtype).name
    assert len(stored["candidates"]) == len(res.candidates)
    assert autotrans.explain(shape, dtype).source == "exact"
    x = host_random(shape, dtype)
    y = autotrans.transpose(driver.gpuarray().to_gpu(x)).get()
    assert y.tobytes() == np.ascontiguousarray(np.swapaxes(x, -1, -2)).tobytes()


def test_a_second_process_reuses_the_result_without_tuning(cache_dir):
    autotrans.tune((1536, 2560), np.float32, progress=False)
    child = """
import sys, numpy as np, autotrans, autotrans.tuning.runner as t
t.tune = lambda *a, **k: sys.exit(3)          # tripwire: tuning again fails the test
assert autotrans.explain((1536, 2560), np.float32).source == "exact"
from autotrans.backend.cuda import gpuarray
ga = gpuarray()
x = np.random.default_rng(1).random((1536, 2560), dtype=np.float32)
assert (autotrans.transpose(ga.to_gpu(x), tune=True).get() == x.T).all()
print("reused")
"""
    r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                       env=dict(os.environ, AUTOTRANS_CACHE_DIR=str(cache_dir), AUTOTRANS_TUNE="1"))
    assert r.returncode == 0 and "reused" in r.stdout, r.stderr[-2000:]


def test_shipped_results_are_used_when_the_user_cache_is_empty(cache_dir):
    dev = driver.device()
    hw = dev.id.hardware
    ours = for_device(shipped_entries(), dev.id.text)    # its model's, then its sibling's for the rest
    if not ours:                        # cache/ ships H200 and H100 results; a GPU of another kind has none
        pytest.skip(f"cache/ ships no results for {hw} or a sibling")
    mine = [(k, r) for k, r in ours if k.templates == space_id()]
    assert mine, f"cache/ ships no results for {hw} made by the current templates ({space_id()})"
    for key, rec in mine[:6]:
        choice = autotrans.explain(key.shape, rec["dtype"])
        assert choice.source == "shipped" and choice.config.key == rec["key"]
    key, rec = min(mine, key=lambda kr: np.prod(kr[0].shape))
    x = host_random(key.shape, rec["dtype"])
    y = autotrans.transpose(driver.gpuarray().to_gpu(x)).get()
    assert y.tobytes() == np.ascontiguousarray(np.swapaxes(x, -1, -2)).tobytes()


def test_verification_catches_unwritten_bytes_and_writes_outside_the_output():
    from autotrans.build.compile import compile_configs
    from autotrans.tuning.space import default_config
    from autotrans.tuning.loader import kernel as load_kernel
    from autotrans.tuning.verify import GUARD, Buffers
    shape, e = (1, 300, 500), 4
    cfg = default_config(shape, e, driver.device().limits)
    kernel = load_kernel(cfg)
    bufs = Buffers(shape, e, seed=5)
    assert bufs.verify(kernel) is None
    assert bufs.verify(lambda src, dst, shp: None) == f"{300 * 500 * e} wrong output bytes, 0 guard bytes overwritten"

    def spills_one_byte(src, dst, shp):
        kernel(src, dst, shp)
        memory.memset(int(dst) + 300 * 500 * e + GUARD - 1, 0, 1)   # the last byte of the guard after
    assert bufs.verify(spills_one_byte) == "0 wrong output bytes, 1 guard bytes overwritten"


@pytest.mark.parametrize("shape, dtype", [((1031, 2053), np.int8), ((3, 517, 1029), np.float16),
                                          ((1021, 1031), np.float32)])
def test_strips_tuned_for_a_dense_shape_run_in_transpose(cache_dir, shape, dtype):
    """tune(shape, configs=) over the dense shift tiles and strided strips of
    shift tiles (run as the shape's dense_tile): every candidate verified, the
    record stored; transpose() then runs a strip stored for the shape (also
    at pointers only element-aligned) bit-exactly."""
    import dataclasses

    from autotrans.kernels.strided import strided_space
    from autotrans.tuning.space import candidates
    e = np.dtype(dtype).itemsize
    bmn = as_bmn(shape)
    dense = [c for c in candidates(bmn, e) if c.variant == "shift"][:2]
    strips = [dataclasses.replace(c, strip=k) for c in strided_space(e) if c.variant == "shift"
              for k in (2, 8)][:6]
    res = autotrans.tune(shape, dtype, configs=dense + strips, progress=False)
    assert not res.failures, res.failures
    assert {c.key for c in res.candidates} == {c.key for c in dense + strips}
    stored = ResultCache(cache_dir).get(key_for(bmn, e))
    assert stored.best == res.best
    x = host_random(shape, dtype, seed=3)
    want = np.ascontiguousarray(np.swapaxes(x, -1, -2)).tobytes()
    ga = driver.gpuarray()
    for strip in (strips[0], strips[-1]):
        rec = stored.to_json() | {"config": strip.to_dict(), "key": strip.key}
        ResultCache(cache_dir).put(key_for(bmn, e), rec)
        dispatch.forget()
        assert autotrans.explain(shape, dtype).config == strip
        assert autotrans.transpose(ga.to_gpu(x)).get().tobytes() == want
        # a view one element in: pointers aligned to the element only
        big = ga.to_gpu(np.concatenate([np.zeros(1, dtype), x.reshape(-1)]))
        view = big[1:].reshape(shape)
        assert autotrans.transpose(view).get().tobytes() == want
