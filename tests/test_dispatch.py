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
    """Store a made-up record of shape; with ``config``, one whose table holds only that winner."""
    if config is not None:
        kw.setdefault("n_candidates", 1)
    rec = make_record(shape, e, device, **kw)
    if config is not None:
        rec["config"], rec["key"] = config.to_dict(), config.key
        rec["candidates"][0]["key"] = config.key
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


H100 = "NVIDIA H100 80GB HBM3|sm_90|132sm|driver 580.159.04|cuda 13.0"
H100_PCIE = "NVIDIA H100 PCIe|sm_90|114sm|driver 580.159.04|cuda 13.0"


def _shipped(device, *shapes, e=4):
    return [(CacheKey(device, space_id(), s, e), make_record(s, e, device)) for s in shapes]


def test_a_model_without_shipped_results_takes_its_siblings(tmp_path):
    """A model with none of its own shipped results uses those of a model of
    the same architecture and SM count (H100 SXM: the H200's), and only
    those: not another architecture's or SM count's, and none where its own
    model has some (NOTES 55)."""
    empty = ResultCache(tmp_path)
    h200 = _shipped(H200, (8192, 8192), (1024, 1024))
    c = choose((8192, 8192), 4, H100, H200_LIMITS, empty, shipped=h200)
    assert c.source == "shipped" and c.config.key == h200[0][1]["key"]
    assert "tuned on NVIDIA H200" in c.reason
    c = choose((4000, 4000), 4, H100, H200_LIMITS, empty, shipped=h200)
    assert c.source == "nearest" and c.reason.endswith("; shipped, tuned on NVIDIA H200)")
    for other in (H100_PCIE, A100):      # another SM count, another architecture
        assert choose((8192, 8192), 4, other, H200_LIMITS, empty, shipped=h200).source == "default"
    own = _shipped(H100, (1024, 1024), (2048, 2048))
    c = choose((1024, 1024), 4, H100, H200_LIMITS, empty, shipped=h200 + own)
    assert c.source == "shipped" and c.entry.device == H100      # its own model's first
    c = choose((8192, 8192), 4, H100, H200_LIMITS, empty, shipped=h200 + own)
    assert c.source == "shipped" and c.entry.device == H200      # a sibling's where its own model has none
    c = choose((1024, 1024), 4, H200, H200_LIMITS, empty, shipped=own + h200)
    assert c.source == "shipped" and c.entry.device == H200      # the same both ways
    assert choose((2048, 2048), 4, H200, H200_LIMITS, empty, shipped=own + h200).entry.device == H100


def test_for_device_and_source_models():
    from autotrans.core.device import DeviceId
    from autotrans.results.shipped import for_device, source_models
    gh200 = "NVIDIA GH200 480GB|sm_90|132sm|driver 580.1|cuda 13.0"
    pairs = _shipped(H200, (64, 64), (32, 32)) + _shipped(gh200, (32, 32), (16, 16)) + _shipped(A100, (8, 8))
    # own model first, then each sibling by name for the keys not yet taken (any driver)
    assert [(k.shape, k.device) for k, _ in for_device(pairs, H100)] == \
        [((1, 32, 32), gh200), ((1, 16, 16), gh200), ((1, 64, 64), H200)]
    assert [(k.shape, k.device) for k, _ in for_device(pairs, H200)] == \
        [((1, 64, 64), H200), ((1, 32, 32), H200), ((1, 16, 16), gh200)]
    assert [k.device for k, _ in for_device(_shipped(H100, (8, 8), e=2) + pairs, H200)][-1] == H100  # e2: another key
    assert for_device(pairs, H100_PCIE) == [] and len(for_device(pairs, None)) == 5
    ids = {k.device_id for k, _ in pairs}
    assert source_models(ids, DeviceId.from_text(A100)) == ["NVIDIA A100-SXM4-80GB|sm_80|108sm"]
    assert source_models(ids, DeviceId.from_text(H100)) == ["NVIDIA GH200 480GB|sm_90|132sm", "NVIDIA H200|sm_90|132sm"]
    assert source_models(set(), DeviceId.from_text(H100)) == []


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


def test_cached_shipped_lists_the_shipped_results_of_the_devices_model(tmp_path):
    """cached(shipped=True): the shipped results, not the cache's: those of the
    fingerprint's model whatever its driver and toolkit, then a sibling
    model's for the shapes its own lack, none of another architecture's, every
    one with all_devices."""
    from autotrans.results.shipped import shipped_entries
    put(ResultCache(tmp_path), (1024, 1024))
    ship = shipped_entries()
    h200 = [k for k, _ in ship if k.hardware.startswith("NVIDIA H200")]
    assert h200, "the repository ships H200 results"
    other_driver = h200[0].device.replace(h200[0].device.split("|")[3], "driver 1.2.3")
    rows = cached(fingerprint=other_driver, cache_dir=tmp_path, shipped=True)
    mine = {(k.shape, k.elem_bytes) for k in h200}
    assert [(r["shape"], r["elem_bytes"]) for r in rows[:len(h200)]] == [(k.shape, k.elem_bytes) for k in h200]
    rest = rows[len(h200):]
    assert {r["device"] for r in rows[:len(h200)]} == {k.device for k in h200}
    assert all(r["device"].startswith("NVIDIA H100") and (r["shape"], r["elem_bytes"]) not in mine for r in rest)
    assert len({(r["shape"], r["elem_bytes"]) for r in rows}) == len(rows)
    assert cached(fingerprint=A100, cache_dir=tmp_path, shipped=True) == []
    assert len(cached(all_devices=True, cache_dir=tmp_path, shipped=True)) == len(ship)
    assert [r["shape"] for r in cached(fingerprint=H200, cache_dir=tmp_path)] == [(1, 1024, 1024)]


@pytest.mark.parametrize("bad, err", [(np.zeros((4, 4), np.float32), "NumPy array"),
                                      ([[1, 2], [3, 4]], "GPUArray")])
def test_transpose_rejects_host_data_before_touching_a_gpu(bad, err):
    with pytest.raises(TypeError, match=err):
        transpose(bad)


# -- element sizes never mix; entries gathered once; shape classes --------------------------------


def _raw_rows(cache, rows):
    """Write (key text, JSON value) rows straight into the cache's table (no validation)."""
    import json
    import sqlite3
    filler = CacheKey(H200, space_id(), (3, 3), 4)
    cache.put(filler, make_record((3, 3), 4, n_candidates=1))       # creates the table
    cache.delete(filler)
    con = sqlite3.connect(cache.path)
    with con:
        con.executemany('INSERT OR REPLACE INTO "results_v1" (key, value) VALUES (?, ?)',
                        [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in rows])
    con.close()


def test_a_16_byte_config_under_a_1_byte_key_is_never_chosen(tmp_path):
    """Issue 16: the crafted row is skipped with one warning; the 1-byte
    shapes get a 1-byte config, exact, nearest or default."""
    from autotrans.results.store import InvalidRecordWarning
    cache = ResultCache(tmp_path)
    wide = make_record((1024, 1024), 16, n_candidates=2)
    _raw_rows(cache, [(CacheKey(H200, space_id(), (1024, 1024), 1).text, wide),
                      (CacheKey(H200, space_id(), (512, 512), 1).text, "not json"),
                      (CacheKey(H200, space_id(), (256, 256), 1).text, 42)])
    with pytest.warns(InvalidRecordWarning, match="skipped 3 invalid entries") as caught:
        c = choose((1024, 1024), 1, H200, H200_LIMITS, cache, shipped=[])
    assert len(caught) == 1
    assert c.source == "default" and c.config.elem_bytes == 1
    put(cache, (2048, 2048), e=1)
    with pytest.warns(InvalidRecordWarning):
        c = explain((1024, 1024), np.uint8, fingerprint=H200, cache_dir=tmp_path)
    assert c.source == "nearest" and c.config.elem_bytes == 1


def test_entries_of_another_element_size_are_skipped_even_unvalidated():
    """choose(entries=...) uses the given list only, and still skips a record
    whose config is of another element size (built without validation)."""
    from autotrans.results.record import TuneRecord
    e16 = TuneRecord.from_json(make_record((1024, 1024), 16, n_candidates=1))
    forged = TuneRecord(e16.best, (1, 1024, 1024), 1, "uint8", 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    k1 = CacheKey(H200, space_id(), (1024, 1024), 1)
    c = choose((1024, 1024), 1, H200, H200_LIMITS, entries=[("exact", k1, forged)])
    assert c.source == "default" and c.config.elem_bytes == 1
    ok = TuneRecord.from_json(make_record((1024, 1024), 1, n_candidates=1))
    c = choose((1024, 1024), 1, H200, H200_LIMITS, entries=[("exact", k1, forged), ("exact", k1, ok)])
    assert c.source == "exact" and c.config == ok.best


def test_usable_entries_gathered_once_serve_many_choices(tmp_path):
    from autotrans.api.select import usable_entries
    cache = ResultCache(tmp_path)
    recs = {s: put(cache, s) for s in [(1024, 1024), (4096, 4096)]}
    put(cache, (1024, 1024), device=A100)
    put(cache, (1024, 1024), e=2)
    entries = usable_entries(H200, 4, cache, shipped=[])
    assert [(s, k.shape) for s, k, _ in entries] == [("exact", (1, 1024, 1024)), ("exact", (1, 4096, 4096))]
    assert all(r.best.elem_bytes == 4 for _, _, r in entries)
    cache.clear()                                   # the list is used, not the cache
    for shape in [(1024, 1024), (4096, 4096), (2000, 3000)]:
        c = choose(shape, 4, H200, H200_LIMITS, ResultCache(tmp_path / "none"), entries=entries)
        if shape in recs:
            assert c.source == "exact" and c.config.key == recs[shape]["key"]
        else:
            assert c.source == "nearest"
    assert choose((1024, 1024), 4, H200, H200_LIMITS, entries=[]).source == "default"


def _near(cache, tuned, query, e=4):
    """Tune ``tuned`` shapes with distinct classic configs; the shape choose() takes for ``query``."""
    from autotrans.kernels.config import classic
    names = ["tile", "padded", "swizzled", "seed"]
    for i, s in enumerate(tuned):
        put(cache, s, e=e, config=classic(names[i], e))
    c = choose(query, e, H200, H200_LIMITS, cache, shipped=[])
    assert c.source == "nearest"
    return c.entry.shape[1:]


@pytest.mark.parametrize("tuned, query, want", [
    # row alignment: an unaligned shape takes the farther unaligned one
    ([(1024, 1024), (3001, 2999)], (1001, 999), (3001, 2999)),
    ([(1024, 1024), (3001, 2999)], (1000, 1000), (1024, 1024)),
    # skinny: a side under 64 takes a skinny one, though twice as far
    ([(64, 4096), (8, 32768)], (32, 8192), (8, 32768)),
    # aspect: a wide shape takes a wide one over a nearer square one
    ([(2048, 2048), (64, 65536)], (512, 8192), (64, 65536)),
    ([(2048, 2048), (65536, 64)], (8192, 512), (65536, 64)),
    # same class: plain log-distance
    ([(2048, 2048), (8192, 8192)], (3000, 3000), (2048, 2048)),
])
def test_nearest_prefers_the_same_shape_class(tmp_path, tuned, query, want):
    assert _near(ResultCache(tmp_path), tuned, query) == want


def test_shape_class():
    from autotrans.api.select import shape_class
    assert shape_class((1, 1024, 1024), 4) == (16, False, 0)
    assert shape_class((1, 1001, 999), 4) == (4, False, 0)
    assert shape_class((1, 1001, 999), 1) == (1, False, 0)
    assert shape_class((2, 32, 8192), 2) == (16, True, 1)
    assert shape_class((1, 8192, 63), 8) == (8, True, -1)


def test_a_short_side_of_another_class_than_any_tuned_shape_gets_the_skinny_default(tmp_path):
    """Untuned skinny shapes whose nearest tuned shape is of another class
    (a square tile's winner) run the skinny family's default instead; one of
    the same class keeps the nearest tuned winner."""
    cache = ResultCache(tmp_path / "c")
    put(cache, (1024, 1024), 2)                                          # a square winner only
    c = choose((17, 100003), 2, H200, H200_LIMITS, cache, shipped=[])
    assert c.source == "default" and c.config.variant == "short" and c.config == default_config((17, 100003), 2,
                                                                                                  H200_LIMITS)
    assert choose((100003, 17), 2, H200, H200_LIMITS, cache, shipped=[]).config.variant == "narrow"
    assert choose((1000, 1000), 2, H200, H200_LIMITS, cache, shipped=[]).source == "nearest"
    put(cache, (19, 90001), 2)                                           # now one of its class is tuned
    near = choose((17, 100003), 2, H200, H200_LIMITS, cache, shipped=[])
    assert near.source == "nearest" and near.entry.shape == (1, 19, 90001)


def test_few_long_odd_rows_take_the_wide_default_over_a_nearest_pick(tmp_path):
    """Untuned, a shape of 33-512 rows 16 times as long, its rows not 16-byte
    aligned, runs the wide short tile even where a tuned shape of its class is
    near (0.93-0.99 of a memcpy against 0.76-0.96, NOTES 59), at unaligned
    pointers too; an exact hit and 16-byte rows keep the other rules."""
    cache = ResultCache(tmp_path)
    put(cache, (363, 185365), e=1, config=KernelConfig("shift", 1, 128, 128, 512, 16, 4, 4, "xor", "col"))
    c = choose((301, 170003), 1, H200, H200_LIMITS, cache, shipped=[], align=1)
    assert c.source == "default" and c.config.key == "short:e1:304x128:t608:v16:r1:p0:none:row", c
    assert "wide" in c.reason
    assert choose((363, 185365), 1, H200, H200_LIMITS, cache, shipped=[]).source == "exact"
    assert choose((304, 170000), 1, H200, H200_LIMITS, cache, shipped=[]).config.variant != "short"


def test_a_batch_of_small_matrices_takes_the_whole_default_over_a_nearest_pick(tmp_path):
    """Untuned, a batch of matrices that a 4 KiB whole block holds two of runs
    the whole default even where a tuned shape of its class is near (held-out
    batches: 0.92-1.00 against 0.45-0.90, NOTES 55); Table.nearest still
    gives the nearest's pick; an exact hit, unaligned pointers and a batch of
    one keep the other rules."""
    from autotrans.api.select import Table, usable_entries
    cache = ResultCache(tmp_path)
    put(cache, (4096, 8, 16), config=KernelConfig("vec", 4, 32, 32, 128, 16, 1, 0, "xor", "row"))
    c = choose((3000, 12, 20), 4, H200, H200_LIMITS, cache, shipped=[])
    assert c.source == "default" and c.config.key == "whole:e4:32x32:t256:v16:r1:p0:none:row"
    table = Table(usable_entries(H200, 4, cache, shipped=[]), 4, H200_LIMITS)
    near = table.nearest((3000, 12, 20))
    assert near.source == "nearest" and near.entry.shape == (4096, 8, 16) and near.config.variant == "vec"
    assert choose((4096, 8, 16), 4, H200, H200_LIMITS, cache, shipped=[]).source == "exact"
    assert choose((3000, 12, 20), 4, H200, H200_LIMITS, cache, shipped=[], align=8).config.variant != "whole"
    assert choose((1, 12, 20), 4, H200, H200_LIMITS, cache, shipped=[]).config.variant != "whole"


def test_size_band_is_bytes_against_the_l2():
    from autotrans.api.select import L2_FALLBACK, size_band
    l2 = 64 << 20
    assert size_band((1, 512, 512), 4, l2) == 0                  # 1 MiB < L2 / 32
    assert size_band((1, 1024, 1024), 4, l2) == 1                # 4 MiB
    assert size_band((1, 4096, 4096), 4, l2) == 3                # 64 MiB: at L2, under 2 x L2
    assert size_band((1, 8192, 8192), 4, l2) == 4
    assert size_band((1, 4096, 4096), 4, 0) == size_band((1, 4096, 4096), 4, L2_FALLBACK)


def test_nearest_prefers_a_tuned_shape_of_the_same_size_band(tmp_path):
    """A shape of the same bytes against the L2 beats one nearer in log-shape
    but of another size band (a leave-one-out over the shipped grid: NOTES 26)."""
    cache = ResultCache(tmp_path)
    smaller = KernelConfig("vec", 4, 64, 64, 256, 16, 4, 0, "xor", "col")
    same = KernelConfig("vec", 4, 32, 64, 128, 16, 4, 0, "xor", "col")
    put(cache, (2048, 2048), config=smaller)          # 16 MiB: log-distance 0.98
    put(cache, (4, 2048, 2048), config=same)          # 64 MiB: log-distance 1.39
    c = choose((4096, 4096), 4, H200, H200_LIMITS, cache, shipped=[])
    assert c.source == "nearest" and c.config == same and "4x2048x2048" in c.reason


def test_a_fixed_shape_serves_its_own_shape_and_others_get_its_generic_config(tmp_path):
    cache = ResultCache(tmp_path)
    generic = KernelConfig("vec", 4, 64, 64, 256, 16, 4, 0, "xor", "col")
    fixed = generic.fixed_to((2048, 2048))
    put(cache, (2048, 2048), config=fixed)
    exact = choose((2048, 2048), 4, H200, H200_LIMITS, cache, shipped=[])
    assert exact.source == "exact" and exact.config == fixed
    near = choose((2048, 4096), 4, H200, H200_LIMITS, cache, shipped=[])
    assert near.source == "nearest" and near.config == generic and "2048x2048" in near.reason
    assert explain((2048, 2048), "float32", fingerprint=H200, cache_dir=tmp_path).config == fixed


def test_a_config_fixed_to_another_shape_is_never_launched():
    from autotrans.api.launch import config_problems
    from autotrans.backend.cuda import DeviceInfo
    from autotrans.core.device import DeviceId
    dev = DeviceInfo(DeviceId.from_text(H200), (9, 0), 60 << 20, 1024, 227 * 1024)
    cfg = KernelConfig("vec", 4, 64, 64, 256, 16, 4, 0, "xor", "col")
    assert config_problems(cfg.fixed_to((512, 512)), (1, 512, 512), 4, 16, dev) == []
    assert config_problems(cfg.fixed_to((512, 512)), (1, 512, 1024), 4, 16, dev) == \
        ["it is compiled for the shape 1x512x512 only"]


def test_a_strided_config_of_a_dense_record_is_chosen_and_checked_as_its_dense_tile(tmp_path):
    """A strip of shift tiles tuned for an odd shape is that shape's exact
    choice; config_problems checks a strided config against the shape's
    kernels.strided.dense_tile (pointer alignment, launch limits), a dense one
    as before."""
    from autotrans.api.launch import config_problems
    from autotrans.backend.cuda import DeviceInfo
    from autotrans.core.device import DeviceId
    from autotrans.kernels.strided import strided_space
    strip = KernelConfig.from_key("shift:e2:128x64:t256:v16:r2:p2:none:col:s4:strided")
    cache = ResultCache(tmp_path)
    put(cache, (4097, 4095), 2, config=strip)
    c = choose((4097, 4095), 2, H200, H200_LIMITS, cache, shipped=[])
    assert c.source == "exact" and c.config == strip
    dev = DeviceInfo(DeviceId.from_text(H200), (9, 0), 60 << 20, 1024, 227 * 1024)
    assert config_problems(strip, (1, 4097, 4095), 2, 16, dev) == []
    assert config_problems(strip, (3, 4097, 4095), 2, 2, dev) == []
    assert config_problems(strip, (1, 4097, 4095), 2, 1, dev) == ["pointers must be 2-byte aligned"]
    assert config_problems(strip, (1, 4097, 4095), 4, 16, dev) == \
        ["it moves 2-byte elements, the array has 4-byte ones"]
    huge = config_problems(strip, (1 << 23, 4097, 4095), 2, 16, dev)
    assert any("2^31-1" in p for p in huge)
    conj = next(c for c in strided_space(8, "conj32") if c.variant == "vec")
    assert "an epilogue or a cast" in config_problems(conj, (1, 64, 64), 8, 16, dev)[0]
