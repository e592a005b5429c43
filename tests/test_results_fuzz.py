"""Fuzzing the results layer (issue 16): random and mutated records and export
files fed to TuneRecord.from_json, import, cached()/items() and choose()/explain().
Only the documented exceptions (ValueError) may come out, and no invalid
config (or one of another element size) is ever accepted or chosen."""
from __future__ import annotations

import copy
import json
import random
import sqlite3
import warnings

import pytest

from autotrans import cached, explain
from autotrans.api.select import choose
from autotrans.kernels.config import KernelConfig, classic
from autotrans.results.keys import CacheKey
from autotrans.results.record import TuneRecord, loads
from autotrans.results.store import ResultCache
from autotrans.tuning.space import Limits, space_id

from conftest import H200, make_record

JUNK = [None, True, False, 0, -1, 1, 2 ** 70, 1.5, -0.0, float("nan"), float("inf"), "", "x", "a|b",
        "\x00", "1024x1024", [], [1], [1, 2, 3], [-1, 4, 4], {}, {"a": 1}, "float32", "uint8", 16, 3,
        classic("tile", 16).to_dict(), classic("tile", 1).to_dict(), classic("tile", 4).key,
        "vec:e16:8x32:t64:v16:r1:p0:xor:col", [[[[[]]]]], "2025-13-45", "9" * 500]


def _junk(rnd):
    return copy.deepcopy(rnd.choice(JUNK))


def _paths(obj, prefix=()):
    """Every (path) to a value inside a JSON object."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _mutate(obj, rnd: random.Random):
    """A copy of ``obj`` with one to three values replaced, deleted or added."""
    obj = copy.deepcopy(obj)
    for _ in range(rnd.randint(1, 3)):
        paths = [p for p in _paths(obj) if p]
        if not paths:
            return _junk(rnd)
        *head, last = rnd.choice(paths)
        parent = obj
        for p in head:
            parent = parent[p]
        op = rnd.random()
        if op < 0.6:
            parent[last] = _junk(rnd)
        elif op < 0.75 and isinstance(parent, dict):
            del parent[last]
        elif op < 0.85 and isinstance(parent, dict):
            parent[rnd.choice(["extra", "note", last + "_"]) if isinstance(last, str) else "x"] = 1
        elif isinstance(parent[last], (int, float)) and not isinstance(parent[last], bool):
            parent[last] = rnd.choice([-1, 0, 1e300, parent[last] * -1, parent[last] + 0.5])
        else:
            parent[last] = _junk(rnd)
    return obj


def _check_accepted(rec: TuneRecord, key: CacheKey):
    """An accepted record is valid through and through."""
    assert isinstance(rec.best, KernelConfig) and rec.best.problems() == []
    assert rec.best.elem_bytes == key.elem_bytes == rec.elem_bytes
    assert rec.shape == key.shape and rec.device.text == key.device
    assert all(c.config.elem_bytes == key.elem_bytes for c in rec.candidates)
    assert rec.time_us > 0 and rec.gbps > 0 and rec.memcpy_us > 0
    assert TuneRecord.from_json(json.loads(json.dumps(rec.to_json())), key) == rec


SHAPES = [(1, 64, 64), (2, 96, 160), (1, 33, 47)]


@pytest.fixture(scope="module")
def seeds():
    out = []
    for shape in SHAPES:
        for e in (1, 4, 16):
            out.append((CacheKey(H200, space_id(), shape, e), make_record(shape, e, n_candidates=4)))
    return out


def test_fuzz_from_json(seeds):
    rnd = random.Random(1616)
    accepted = 0
    for i in range(12_000):
        key, good = rnd.choice(seeds)
        if i % 10 == 0:
            obj = _junk(rnd)
        else:
            obj = _mutate(good, rnd)
        target = key if rnd.random() < 0.9 else rnd.choice(seeds)[0]
        try:
            rec = TuneRecord.from_json(obj, target)
        except ValueError:
            continue
        accepted += 1
        _check_accepted(rec, target)
        try:                                   # the same through the stored text
            assert loads(json.dumps(obj), target) == rec
        except ValueError:
            pass                               # (a value JSON cannot hold exactly, e.g. 2**70 float)
    assert 50 < accepted < 12_000 * 0.5, accepted   # mutations are mostly caught, some harmless


def test_fuzz_import_listing_and_choice(seeds, tmp_path):
    """Mutated export files and raw rows: import, items(), cached(), choose()
    and explain() raise nothing but ValueError and never pick a wrong config."""
    rnd = random.Random(16)
    rc = ResultCache(tmp_path / "cache")
    inputs = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in range(60):
            entries = []
            for _ in range(40):
                key, good = rnd.choice(seeds)
                r = rnd.random()
                if r < 0.3:
                    entries.append({"key": key.text, "record": good})
                elif r < 0.85:
                    entries.append({"key": key.text, "record": _mutate(good, rnd)})
                else:
                    entries.append(_mutate({"key": key.text, "record": good}, rnd))
            doc = {"format": "autotrans-cache", "schema": 1, "entries": entries}
            if n % 6 == 5:
                doc = _mutate(doc, rnd)
            text = json.dumps(doc)
            if n % 10 == 9:
                text = text[: rnd.randrange(len(text))]
            inputs += len(entries)
            f = tmp_path / f"in{n}.json"
            f.write_text(text)
            try:
                counts = rc.import_json(f, policy=rnd.choice(["faster", "keep", "replace"]))
            except ValueError:
                continue
            assert sum(counts.values()) <= len(entries)
        assert len(rc.items()) >= 5            # the valid entries of the imports arrived
        # raw rows that bypass validation altogether
        con = sqlite3.connect(rc.path)
        with con:
            for _ in range(400):
                key, good = rnd.choice(seeds)
                value = rnd.choice([json.dumps(_mutate(good, rnd)), "{", "[]", "null", b"\xff"])
                k = key.text if rnd.random() < 0.9 else rnd.choice(["junk", key.text + "x", ""])
                con.execute('INSERT OR REPLACE INTO "results_v1" (key, value) VALUES (?, ?)', (k, value))
                inputs += 1
        con.close()
        for k, rec in rc.items():
            _check_accepted(rec, k)
        rows = cached(all_devices=True, cache_dir=rc.folder)
        assert all(KernelConfig.from_key(r["config"]).elem_bytes == r["elem_bytes"] for r in rows)
        limits = Limits(smem_per_block=232448)
        for _ in range(300):
            shape = rnd.choice(SHAPES + [(1, 100, 200), (3, 64, 65), (1, 8, 4096)])
            e = rnd.choice([1, 2, 4, 8, 16])
            c = choose(shape, e, H200, limits, rc, align=rnd.choice([1, 4, 16]), shipped=[])
            assert c.config.elem_bytes == e and c.config.problems() == []
            c = explain(shape, {1: "uint8", 4: "float32", 16: "complex128"}.get(e, "float16" if e == 2
                        else "float64"), fingerprint=H200, cache_dir=rc.folder)
            assert c.config.elem_bytes == e
            inputs += 2
    assert inputs >= 3000
