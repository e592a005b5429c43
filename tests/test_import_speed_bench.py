"""benchmarks/import_speed.py runs and writes its results; the fast paths the
import takes (plain records, stored text) give exactly what the general ones do."""
from __future__ import annotations

import copy
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autotrans.results.record import TuneRecord, _encode, dumps

from conftest import A100, H200, make_record

REPO = Path(__file__).resolve().parent.parent


def test_the_benchmark_runs_and_writes_its_results(tmp_path):
    out = subprocess.run([sys.executable, str(REPO / "benchmarks" / "import_speed.py"), "--entries", "2000",
                          "--repeats", "1", "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    res = json.loads((tmp_path / "import_speed.json").read_text())
    assert res["entries"] == 2000 and len(res["runs"]) == 1 and res["cpu_count"] >= 1
    assert res["runs"][0]["counts"] == {"added": 2000, "replaced": 0, "kept": 0, "skipped": 0}
    assert 0 < res["median"]["import_wall_s"] < res["median"]["process_wall_s"]
    assert "| median |" in (tmp_path / "import_speed.md").read_text() and "| median |" in out.stdout


@pytest.mark.parametrize("shape, e, device", [((1, 16, 16), 4, H200), ((1024, 1024), 1, A100),
                                              ((3, 100, 37), 16, H200), ((2, 64, 96), 2, A100)])
def test_stored_text_is_json_dumps_of_the_record(shape, e, device):
    rec = TuneRecord.from_json(make_record(shape, e, device, failures=3))
    assert _encode(rec) == dumps(rec) == json.dumps(rec.to_json())
    # other types than validation gives: json.dumps decides, as before
    for odd in ({"time_us": 1}, {"l2_bytes": True}, {"gbps": float("inf")}, {"shape": [1, 2, 3]}):
        r = dataclasses.replace(rec, **odd)
        assert dumps(r) == json.dumps(r.to_json())


def test_memoised_checks_refuse_what_a_fresh_process_refuses():
    good = make_record((1024, 1024), 4, n_candidates=3)
    TuneRecord.from_json(good)                 # fills the memos with the plain values
    for path, value in ((("config", "pad"), False), (("config", "elem_bytes"), 4.0),
                        (("device", "sms"), 132.0), (("device", "cc"), [9.0, 0]), (("device", "l2_bytes"), -0.0)):
        bad = copy.deepcopy(good)
        bad[path[0]][path[1]] = value
        with pytest.raises(ValueError):
            TuneRecord.from_json(bad)
