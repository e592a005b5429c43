"""Tuning over several GPUs, as far as one machine without GPUs can check it:
the device list, the work split, real worker processes and their result
lines, and results keyed per device model."""
import pytest

from autotrans.core.device import DeviceId
from autotrans.results.store import CacheKey
from autotrans.tuning import parallel
from autotrans.tuning.parallel import Job, jobs_of, parse_devices, plan


def test_parse_devices():
    assert parse_devices("all", 4) == [0, 1, 2, 3]
    assert parse_devices("2,0", 4) == [2, 0]
    for bad in ("4", "0,0", "a", "", "-1"):
        with pytest.raises(ValueError, match="devices"):
            parse_devices(bad, 4)
    with pytest.raises(ValueError, match="no CUDA device"):
        parse_devices("all", 0)


def test_plan_balances_cost_and_keeps_every_job_once():
    jobs = jobs_of([((4096, 4096), "float32")] * 3 + [((n, 1024), "float16") for n in range(512, 1024, 32)]
                   + [((16384, 16384), "float32")])
    assert len(jobs) == 1 + 16 + 1                          # duplicates merged
    work = plan(jobs, [0, 1, 2])
    assert sorted(j for js in work.values() for j in js) == sorted(jobs)
    loads = [sum(j.cost for j in js) for js in work.values()]
    biggest = Job((1, 16384, 16384), "float32")
    assert [biggest] in work.values()                        # the 1 GiB job is alone on its device
    assert max(loads) == biggest.cost
    assert min(loads) >= 0.3 * sorted(loads)[1]


def test_one_device_gets_everything():
    jobs = jobs_of([((64, 64), "int8"), ((3, 64, 64), "float64")])
    assert plan(jobs, [5]) == {5: sorted(jobs, key=lambda j: -j.cost)}


def test_jobs_are_validated():
    with pytest.raises(ValueError):
        jobs_of([((0, 5), "float32")])
    with pytest.raises(TypeError):
        jobs_of([((5, 5), "(2,2)f4")])


def test_workers_run_one_per_device_and_report_every_job(tmp_path):
    """Real worker processes: here each job fails (no GPU) and says why, once,
    from the device it was planned on."""
    cases = [((64, 64 + i), "float32") for i in range(5)]
    seen = []
    lines = parallel.run(cases, [0, 1], cache_dir=tmp_path, on_done=seen.append)
    assert seen == lines and len(lines) == 5
    planned = {tuple(j.shape): str(d) for d, js in plan(jobs_of(cases), [0, 1]).items() for j in js}
    for line in lines:
        assert line["device"] == planned[tuple(line["shape"])]
        assert line["ok"] is False and line["error"]


def test_results_are_keyed_per_device_model():
    a = DeviceId("NVIDIA H200", "sm_90", 132, "580.159.04", "13.0")
    b = DeviceId("NVIDIA H100 80GB HBM3", "sm_90", 132, "580.159.04", "13.0")
    key = lambda d: CacheKey(d.text, "0123456789abcdef-s3", (512, 512), 4)
    assert key(a) == key(DeviceId.from_text(a.text))         # identical GPUs share results
    assert key(a) != key(b) and key(a).hardware != key(b).hardware
