"""The results layer on the GPU: many processes tuning into one cache at once,
and transpose() never launching a config of another element size, whatever
the cache holds."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
SHAPES = [(96, 160), (128, 64), (200, 120), (64, 256), (2, 64, 96), (256, 72), (100, 100), (48, 512)]

TUNER = r'''
import sys
import autotrans
shape = tuple(int(d) for d in sys.argv[1].split("x"))
res = autotrans.tune(shape, "float32", progress=False)
print(res.best.key, flush=True)
'''


@pytest.mark.gpu
def test_eight_processes_tune_into_one_cache(tmp_path):
    import autotrans
    from autotrans.backend.cuda import device

    env = dict(os.environ, AUTOTRANS_CACHE_DIR=str(tmp_path),
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, "-W", "error::autotrans.results.errors.CacheWarning",
                               "-c", TUNER, "x".join(map(str, s))], cwd=REPO, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for s in SHAPES]
    best = {}
    for shape, p in zip(SHAPES, procs):
        out, err = p.communicate(timeout=580)
        assert p.returncode == 0, err[-3000:]
        best[shape] = out.split()[-1]
    fp = device().id.text
    from autotrans.results.store import ResultCache
    items = ResultCache(tmp_path).items(device=fp)
    assert len(items) == len(SHAPES)
    for shape in SHAPES:
        c = autotrans.explain(shape, np.float32, cache_dir=tmp_path)
        assert c.source == "exact" and c.config.key == best[shape], (shape, c)


@pytest.mark.gpu
def test_transpose_never_launches_a_config_of_another_element_size(tmp_path, monkeypatch):
    """Crafted rows straight into the table (no validation): a 16-byte vector
    config under 1-byte and 4-byte keys of this device. transpose() skips them
    (with a warning) and still writes the right answer."""
    import autotrans
    from autotrans.api import launch
    from autotrans.backend.cuda import device, gpuarray
    from autotrans.kernels.config import KernelConfig
    from autotrans.results.keys import CacheKey
    from autotrans.results.store import InvalidRecordWarning, ResultCache
    from autotrans.tuning import loader
    from autotrans.tuning.space import space_id

    sys.path.insert(0, str(REPO / "tests"))
    from conftest import make_record

    monkeypatch.setenv("AUTOTRANS_CACHE_DIR", str(tmp_path))
    dev = device()
    wide = KernelConfig("vec", 16, 32, 32, 256, 16, 1, 0, "xor", "col")
    rows = []
    for shape, e in [((512, 512), 1), ((512, 512), 4), ((3, 256, 384), 1)]:
        rec = make_record(shape, 16, dev.id.text, n_candidates=1)
        rec["config"], rec["key"] = wide.to_dict(), wide.key
        rows.append((CacheKey(dev.id.text, space_id(), shape, e).text, json.dumps(rec)))
    rc = ResultCache(tmp_path)
    filler = CacheKey(dev.id.text, space_id(), (8, 8), 4)
    rc.put(filler, make_record((8, 8), 4, dev.id.text, n_candidates=1))
    rc.delete(filler)
    con = sqlite3.connect(rc.path)
    with con:
        con.executemany('INSERT OR REPLACE INTO "results_v1" (key, value) VALUES (?, ?)', rows)
    con.close()

    launched = []
    real = loader.kernel

    def spy(cfg, *args, **kwargs):
        launched.append(cfg)
        return real(cfg, *args, **kwargs)

    monkeypatch.setattr(loader, "kernel", spy)
    monkeypatch.setattr(launch, "_kernels", {})   # kernels loaded by earlier tests load again
    launch.forget()
    ga = gpuarray()
    rng = np.random.default_rng(5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for shape, dtype in [((512, 512), np.uint8), ((512, 512), np.float32), ((3, 256, 384), np.uint8)]:
            x = rng.integers(0, 255, size=shape).astype(dtype)
            y = autotrans.transpose(ga.to_gpu(x)).get()
            assert y.tobytes() == np.ascontiguousarray(np.swapaxes(x, -1, -2)).tobytes()
            assert autotrans.explain(shape, dtype).config.elem_bytes == np.dtype(dtype).itemsize
    assert any(issubclass(w.category, InvalidRecordWarning) for w in caught)
    assert launched and all(c.elem_bytes in (1, 4) for c in launched)
    assert wide not in launched
    launch.forget()
