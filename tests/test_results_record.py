"""TuneRecord: the one schema every stored, imported and shipped record passes
(issue 16), its stored form, and TuneResult (what tune() returns) being it."""
from __future__ import annotations

import copy
import json

import pytest

import autotrans
from autotrans.kernels.config import KernelConfig, classic
from autotrans.results.keys import CacheKey
from autotrans.results.record import (MAX_RECORD_BYTES, MAX_ROWS, Candidate, Failure, TuneRecord, dumps,
                                      loads)
from autotrans.tuning.space import space_id

from conftest import A100, H200, make_record


def key(shape=(1024, 1024), e=4, device=H200):
    return CacheKey(device, space_id(), shape, e)


@pytest.fixture
def good():
    return make_record((1024, 1024), 4, n_candidates=20)


def test_stored_form_round_trips(good):
    rec = TuneRecord.from_json(good, key())
    assert rec.to_json() == good
    assert json.loads(dumps(rec)) == good
    assert loads(dumps(rec), key()) == rec and loads(dumps(rec).encode(), key()) == rec
    assert rec.best == KernelConfig.from_dict(good["config"]) and rec.shape == (1, 1024, 1024)
    assert rec.device.text == H200 and rec.device.hardware == "NVIDIA H200|sm_90|132sm"
    assert all(isinstance(c, Candidate) for c in rec.candidates) and len(rec.candidates) == 20
    assert all(isinstance(f, Failure) for f in rec.failures) and rec.failures[0].stage == "verify"
    assert rec.candidates[0].config.key == rec.candidates[0].key
    assert dict(rec.versions)["space"] == space_id()
    assert hash(rec) == hash(TuneRecord.from_json(copy.deepcopy(good), key()))   # frozen, hashable


def test_tune_result_is_the_record(good):
    assert autotrans.TuneResult is TuneRecord
    res = TuneRecord.from_json(good)
    for name in ("best", "time_us", "gbps", "memcpy_us", "frac_memcpy", "candidates", "failures",
                 "shape", "dtype"):
        assert getattr(res, name) is not None
    assert str(res).startswith(f"1x1024x1024 float32: {res.best.key}  ")
    assert "(20 timed, 2 failed)" in str(res)
    # the stored form's fields, for code written against dict records
    assert res["time_us"] == res.time_us and res["candidates"][0]["key"] == res.candidates[0].key
    assert res.candidates[0]["median_us"] == res.candidates[0].median_us
    assert res.record == good
    with pytest.raises(KeyError):
        res["nope"]


def _set(path, value):
    def mutate(r):
        *head, last = path
        for p in head:
            r = r[p]
        if value is _DEL:
            del r[last]
        else:
            r[last] = value
    return mutate


_DEL = object()
E16 = classic("tile", 16)


@pytest.mark.parametrize("mutate, problem", [
    # issue 16: a 16-byte config in a 1-byte entry (checked against the key below)
    (_set(["config"], E16.to_dict()), "16-byte elements"),
    (_set(["time_us"], -1.0), "time_us must be a positive"),
    (_set(["time_us"], 0), "time_us must be a positive"),
    (_set(["time_us"], float("nan")), "time_us"),
    (_set(["gbps"], float("inf")), "gbps"),
    (_set(["memcpy_us"], "fast"), "memcpy_us"),
    (_set(["frac_memcpy"], True), "frac_memcpy"),
    (_set(["config"], 7), "config must be"),
    (_set(["config"], {"variant": "tile", "elem_bytes": 4}), "not a KernelConfig"),
    (_set(["config"], {"variant": "tile", "elem_bytes": 4, "tile_rows": 3, "tile_cols": 32,
                       "threads": 256}), "invalid KernelConfig"),
    (_set(["key"], "tile:e4:32x32:t256:v4:r1:p0:none:row"), "is not its config's key"),
    (_set(["shape"], [1, 1024, 512]), "differs from the key"),
    (_set(["shape"], [1024, 1024]), "shape must be a list"),
    (_set(["shape"], "1024x1024"), "shape must be a list"),
    (_set(["elem_bytes"], 2), "elem_bytes"),
    (_set(["dtype"], "float64"), "is not 4 bytes"),
    (_set(["dtype"], "f4"), "dtype must be"),
    (_set(["dtype"], "object"), "dtype must be"),
    (_set(["dtype"], None), "dtype must be"),
    (_set(["q1_us"], 1e9), "quartiles"),
    (_set(["candidates"], "many"), "candidates must be a list"),
    (_set(["candidates", 0, "key"], E16.key), "candidate 0: config .* 16-byte"),
    (_set(["candidates", 1, "n"], 0), "candidate 1"),
    (_set(["candidates", 1, "registers"], -3), "registers"),
    (_set(["candidates", 1, "retimed"], "yes"), "retimed"),
    (_set(["candidates", 2, "extra"], 1), "unknown field"),
    (_set(["failures", 0, "reason"], "x" * 5000), "reason must be text of at most"),
    (_set(["failures", 0, "stage"], 3), "stage"),
    (_set(["failures", 1], None), "failure 1 must be a JSON object"),
    (_set(["device"], "H200"), "device must be a JSON object"),
    (_set(["device", "fingerprint"], A100), "does not match"),
    (_set(["device", "cc"], [9]), "cc"),
    (_set(["device", "name"], "a|b"), "device name"),
    (_set(["device", "sms"], 0), "sms"),
    (_set(["date"], "yesterday"), "date must be an ISO"),
    (_set(["date"], 20251130), "date"),
    (_set(["seconds"], -1), "seconds"),
    (_set(["versions"], ["0.1"]), "versions"),
    (_set(["versions", "nvcc"], 13), "nvcc must be text"),
    (_set(["versions", "x" * 200], "1"), "versions"),
    (_set(["time_us"], _DEL), "missing time_us"),
    (_set(["surprise"], 1), "unknown field"),
])
def test_invalid_records_are_refused_naming_the_problem(good, mutate, problem):
    bad = copy.deepcopy(good)
    mutate(bad)
    with pytest.raises(ValueError, match=problem):
        TuneRecord.from_json(bad, key())
    with pytest.raises(ValueError, match=problem):
        loads(json.dumps(bad), key())


@pytest.mark.parametrize("obj", [{}, [], None, 3, "text", [good for good in range(3)], {"config": None}])
def test_non_records_are_refused(obj):
    with pytest.raises(ValueError):
        TuneRecord.from_json(obj, key())


def test_the_record_must_match_its_key(good):
    TuneRecord.from_json(good, key())
    with pytest.raises(ValueError, match="elem_bytes 4 differs from the key's 1"):
        TuneRecord.from_json(good, key(e=1))
    with pytest.raises(ValueError, match="shape"):
        TuneRecord.from_json(good, key((1, 512, 2048)))
    with pytest.raises(ValueError, match="device"):
        TuneRecord.from_json(good, key(device=A100))
    e16 = make_record((1024, 1024), 16, n_candidates=1)
    with pytest.raises(ValueError, match="elem_bytes 16 differs from the key's 1"):
        TuneRecord.from_json(e16, key(e=1))
    # a 1-byte record whose config is 16-byte: refused even without a key
    forged = dict(make_record((1024, 1024), 1, n_candidates=1), config=E16.to_dict(), key=E16.key)
    with pytest.raises(ValueError, match="16-byte elements"):
        TuneRecord.from_json(forged)


def test_sizes_are_bounded(good):
    many = copy.deepcopy(good)
    many["candidates"] = many["candidates"][:1] * (MAX_ROWS + 1)
    with pytest.raises(ValueError, match=f"at most {MAX_ROWS} rows"):
        TuneRecord.from_json(many, key())
    big = "x" * (MAX_RECORD_BYTES + 1)
    with pytest.raises(ValueError, match="over the limit"):
        loads(big, key())
    huge = json.dumps(dict(good, failures=[good["failures"][0]] * 40)) + " " * (50 << 20)
    with pytest.raises(ValueError, match="over the limit"):                # a 50 MB record
        loads(huge, key())
    fat = TuneRecord.from_json(dict(good, failures=[dict(good["failures"][0], reason="r" * 2000)] * 4000))
    with pytest.raises(ValueError, match="over the limit"):
        dumps(fat)
    deep = "[" * 200000 + "]" * 200000
    with pytest.raises(ValueError):
        loads(deep, key())
    with pytest.raises(ValueError, match="nested too deeply"):
        nested = []
        for _ in range(5000):
            nested = [nested]
        TuneRecord.from_json(dict(good, versions={"a": nested}), key())
    with pytest.raises(ValueError, match="not JSON"):
        loads(b"\xff\xfe{", key())
    with pytest.raises(ValueError, match="not JSON text"):
        loads(12, key())


def test_shipped_records_are_in_the_stored_form():
    from autotrans.results.store import shipped_dir
    for path in shipped_dir().glob("*.json"):
        for e in json.loads(path.read_text())["entries"]:
            k = CacheKey.from_text(e["key"])
            assert TuneRecord.from_json(e["record"], k).to_json() == e["record"]


def test_checked_runs_the_same_validation(good):
    rec = TuneRecord.from_json(good, key())
    assert rec.checked(key()) == rec
    bad = TuneRecord(E16, rec.shape, 4, "float32", 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, device=rec.device,
                     date=rec.date)
    with pytest.raises(ValueError, match="16-byte"):
        bad.checked()


def test_a_config_fixed_to_its_own_shape_is_kept_and_to_another_refused(good):
    cfg = KernelConfig.from_key(good["key"])
    own = dict(good, config=cfg.fixed_to((1024, 1024)).to_dict(), key=cfg.fixed_to((1024, 1024)).key)
    rec = TuneRecord.from_json(own, key())
    assert rec.best.fixed_shape == (1, 1024, 1024) and loads(dumps(rec), key()) == rec
    other = cfg.fixed_to((2, 1024, 1024))
    forged = dict(good, config=other.to_dict(), key=other.key)
    for parse in (lambda: TuneRecord.from_json(forged, key()), lambda: loads(json.dumps(forged))):
        with pytest.raises(ValueError, match="compiled for the shape 2x1024x1024, the record is of 1x1024x1024"):
            parse()


def test_a_dense_shape_may_hold_a_strided_config_that_transposes_it():
    """transpose() runs a dense record's strided config as the shape's
    kernels.strided.dense_tile: one that cannot (16-byte vectors on odd rows,
    a cast) is refused under a dense key, and kept under no key or a problem's."""
    from autotrans.kernels.strided import strided_space
    strip = KernelConfig.from_key("shift:e2:128x64:t256:v16:r2:p2:none:col:s4:strided")
    k = key((4097, 4095), 2)
    rec = make_record((4097, 4095), 2, n_candidates=3)
    held = TuneRecord.from_json(dict(rec, config=strip.to_dict(), key=strip.key), k)
    assert held.best == strip and loads(dumps(held), k) == held
    vec16 = next(c for c in strided_space(2) if c.variant == "vec" and c.vec_bytes == 16)
    cast = next(c for c in strided_space(4, cast="f32>bf16") if c.variant == "shift")
    f32 = make_record((4097, 4095), 4, n_candidates=3)
    for obj, e, cfg in ((rec, 2, vec16), (f32, 4, cast)):
        forged = dict(obj, config=cfg.to_dict(), key=cfg.key)
        for parse in (lambda: TuneRecord.from_json(forged, key((4097, 4095), e)),
                      lambda: loads(json.dumps(forged), key((4097, 4095), e))):
            with pytest.raises(ValueError, match=f"config {cfg.key} cannot transpose 1x4097x4095"):
                parse()
        assert TuneRecord.from_json(forged).best == cfg       # no dense key: nothing to transpose


def test_a_record_holds_strided_configs_compiled_for_a_launch():
    """Their keys hold the launch's values (KernelConfig.fixed_to_args): up to
    29 numbers, longer than other names; a key past MAX_CONFIG_KEY is refused."""
    from autotrans.results.record import MAX_CONFIG_KEY
    cfg = KernelConfig.from_key("flat:e2:4x16:t128:v16:r1:p0:none:row:strided")
    big = 2**61 + 12345
    fixed = cfg.fixed_to_args((1, big, 67, 0, 0, 2, 7) + (big,) * 7 + (-big,) * 7 + (big,) * 7)
    assert 500 < len(fixed.key) <= MAX_CONFIG_KEY
    obj = copy.deepcopy(make_record((1, 4096, 67), 2, n_candidates=3))
    obj.update(config=fixed.to_dict(), key=fixed.key)
    obj["candidates"][1]["key"] = obj["failures"][0]["key"] = fixed.key
    rec = TuneRecord.from_json(obj)
    assert rec.best == fixed and rec.candidates[1].config == fixed and loads(dumps(rec)) == rec
    obj["candidates"][1]["key"] = fixed.key + "0" * (MAX_CONFIG_KEY + 1 - len(fixed.key))
    with pytest.raises(ValueError, match="key must be a config key"):
        TuneRecord.from_json(obj)
