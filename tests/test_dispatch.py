"""Config choice (exact, shipped, nearest, default), explain() and cached(),
and the input checks that need no GPU. Real sqlitedict caches in tmp dirs."""
import math
import warnings

import numpy as np
import pytest

from autotrans import cached, explain, transpose
from autotrans.results.store import CacheKey, ResultCache
from autotrans.kernels.config import KernelConfig
from autotrans.api.select import choose
from autotrans.tuning.space import Limits, default_config, space_id

from conftest import A100, H200, make_record

H200_LIMITS = Limits(smem_per_block=232448)


def put(cache, shape, e=4, device=H200, config=None, **kw):
    rec = make_record(shape, e, device, **kw)
    if config is not None:
        rec["config"], rec["key"] = config.to_dict(), config.key
    cache.put(CacheKey(device, space_id(), shape, e), rec)
    return rec


def test_exact_hit(tmp_path):
    cache = ResultCache(tmp_path)
    rec = put(cache, (4096, 4096))
    c = choose((4096, 4096), 4, H200, H200_LIMITS, cache, shipped=[])
    assert c.source == "exact" and c.config.key == rec["key"]
    assert c.entry.shape == (1, 4096, 4096)


def test_nearest_is_by_log_shape_not_element_count(tmp_path):
    cache = ResultCache(tmp_path)
    square = KernelConfig("vec", 4, 64, 64, 256, 16, 4, 0, "xor", "col")
    skinny = KernelConfig("vec", 4, 32, 64, 128, 16, 4, 0, "xor", "col")
    put(cache, (2048, 2048), config=square)      # 4.2M elements, like the query
    put(cache, (128, 16384), config=skinny)      # 2.1M elements, but the same aspect
    c = choose((256, 16384), 4, H200, H200_LIMITS, cache, shipped=[])
    assert c.source == "nearest" and c.config == skinny
    assert "128x16384" in c.reason
    d = math.dist([0, math.log(128), math.log(16384)], [0, math.log(256), math.log(16384)])
    assert f"{d:.2f}" in c.reason


def test_other_devices_and_element_sizes_are_not_used(tmp_path):
    cache = ResultCache(tmp_path)
    put(cache, (4096, 4096), device=A100)
    put(cache, (4096, 4096), e=2)
    c = choose((4096, 4096), 4, H200, H200_LIMITS, cache, shipped=[])
    assert c.source == "default"
    assert c.config == default_config((4096, 4096), 4, H200_LIMITS)


def test_shipped_results_fill_an_empty_cache(tmp_path):
    cache = ResultCache(tmp_path)
    other_driver = "NVIDIA H200|sm_90|132sm|driver 999.1|cuda 13.1"
    shipped = [(CacheKey(other_driver, space_id(), (8192, 8192), 4),
                make_record((8192, 8192), 4, other_driver))]
    c = choose((8192, 8192), 4, H200, H200_LIMITS, cache, shipped=shipped)
    assert c.source == "shipped" and c.config.key == shipped[0][1]["key"]
    # the user's own exact result wins over a shipped one
    mine = put(cache, (8192, 8192), config=KernelConfig("vec", 4, 32, 32, 64, 16, 4, 0, "xor", "col"))
    assert choose((8192, 8192), 4, H200, H200_LIMITS, cache, shipped=shipped).config.key == mine["key"]
    # results for other hardware are never shipped to this one
    a100 = [(CacheKey(A100, space_id(), (8192, 8192), 4), make_record((8192, 8192), 4, A100))]
    assert choose((8192, 8192), 4, H200, H200_LIMITS, ResultCache(tmp_path / "empty"),
                  shipped=a100).source == "default"


def test_stale_templates_are_ignored(tmp_path):
    cache = ResultCache(tmp_path)
    rec = make_record((4096, 4096), 4, H200)
    cache.put(CacheKey(H200, "0123456789abcdef-s0", (4096, 4096), 4), rec)
    assert choose((4096, 4096), 4, H200, H200_LIMITS, cache, shipped=[]).source == "default"


def test_config_that_cannot_run_here_falls_back_with_warning(tmp_path):
    cache = ResultCache(tmp_path)
    big = KernelConfig("vec", 4, 256, 256, 1024, 16, 4, 0, "xor", "col")   # 256 KB of shared memory
    put(cache, (4096, 4096), config=big)
    with pytest.warns(RuntimeWarning, match="cannot run here"):
        c = choose((4096, 4096), 4, H200, H200_LIMITS, cache, shipped=[])
    assert c.source == "default" and c.config.smem_bytes <= H200_LIMITS.smem_per_block


def test_unaligned_pointers_get_a_narrower_config(tmp_path):
    cache = ResultCache(tmp_path)
    put(cache, (4096, 4096), config=KernelConfig("vec", 4, 64, 64, 256, 16, 4, 0, "xor", "col"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = choose((4096, 4096), 4, H200, H200_LIMITS, cache, align=4, shipped=[])
    assert c.config.vec_bytes <= 4
    assert choose((4096, 4096), 4, H200, H200_LIMITS, cache, align=16, shipped=[]).source == "exact"


def test_explain_and_cached_without_gpu(tmp_path):
    cache = ResultCache(tmp_path)
    put(cache, (1024, 1024))
    put(cache, (1024, 1024), device=A100)
    c = explain((1024, 1024), np.float32, fingerprint=H200, cache_dir=tmp_path)
    assert c.source in ("exact", "default")   # exact unless its config needs > 48 KB (CPU limits)
    assert "nearest" in str(explain((1000, 1100), "float32", fingerprint=H200, cache_dir=tmp_path))
    mine = cached(fingerprint=H200, cache_dir=tmp_path)
    assert [r["device"] for r in mine] == [H200] and mine[0]["shape"] == (1, 1024, 1024)
    assert mine[0]["current"] and mine[0]["gbps"] > 0 and mine[0]["config"]
    assert len(cached(all_devices=True, cache_dir=tmp_path)) == 2


@pytest.mark.parametrize("bad, err", [(np.zeros((4, 4), np.float32), "NumPy array"),
                                      ([[1, 2], [3, 4]], "GPUArray")])
def test_transpose_rejects_host_data_before_touching_a_gpu(bad, err):
    with pytest.raises(TypeError, match=err):
        transpose(bad)
