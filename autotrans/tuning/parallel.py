"""Tuning spread over several GPUs: one worker process per device, all writing
into the one results cache (whose writers are serialised by its file lock).

Each worker sees one GPU (CUDA_VISIBLE_DEVICES), so identical GPUs produce
identical device fingerprints and share their results, while a node with two
models keeps both apart (the fingerprint names the model). The parent never
touches CUDA: it plans, starts the workers and merges their progress lines.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass

from ..core.problem import elem_size, parse_dtype, positive_bmn


@dataclass(frozen=True, order=True)
class Job:
    """One shape to tune."""
    shape: tuple
    dtype: str

    @property
    def cost(self) -> int:
        """A rough relative cost: timing scales with bytes, plus a fixed part per shape."""
        b, m, n = self.shape
        return b * m * n * elem_size(self.dtype) + (64 << 20)


def parse_devices(text: str, count: int) -> list[int]:
    """"all" -> every device; "0,2" -> [0, 2]; ValueError for anything else."""
    if count < 1:
        raise ValueError("no CUDA device to tune on")
    if text.strip() == "all":
        return list(range(count))
    try:
        ids = [int(t) for t in text.split(",")]
    except ValueError:
        raise ValueError(f"--devices must be 'all' or a list like 0,1, not {text!r}") from None
    bad = [i for i in ids if not 0 <= i < count]
    if bad or len(set(ids)) != len(ids) or not ids:
        raise ValueError(f"--devices {text!r}: devices are 0..{count - 1}, each at most once")
    return ids


def plan(jobs, devices: list[int]) -> dict[int, list[Job]]:
    """Jobs per device, balanced by cost (largest first onto the least loaded)."""
    load = {d: 0 for d in devices}
    out: dict[int, list[Job]] = {d: [] for d in devices}
    for job in sorted(jobs, key=lambda j: -j.cost):
        d = min(devices, key=lambda k: (load[k], k))
        out[d].append(job)
        load[d] += job.cost
    return out


def jobs_of(cases) -> list[Job]:
    """(shape, dtype) pairs as validated, deduplicated jobs."""
    return list(dict.fromkeys(Job(positive_bmn(s), parse_dtype(d).name) for s, d in cases))


def _worker_cmd(jobs: list[Job], cache_dir) -> list[str]:
    spec = json.dumps({"cache_dir": str(cache_dir) if cache_dir else None,
                       "jobs": [[list(j.shape), j.dtype] for j in jobs]})
    return [sys.executable, "-m", "autotrans.tuning.worker", spec]


def run(cases, devices: list[int], *, cache_dir=None, on_done=None) -> list[dict]:
    """Tune the cases over ``devices``, one worker process per device; returns
    one result line per case ({"shape", "dtype", "ok", "summary" or "error"}).
    on_done(line) is called as each case finishes (for a progress bar)."""
    work = plan(jobs_of(cases), devices)
    procs = []
    for dev, jobs in work.items():
        if jobs:
            env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(dev), AUTOTRANS_DEVICE="0")
            procs.append(subprocess.Popen(_worker_cmd(jobs, cache_dir), env=env, text=True,
                                          stdout=subprocess.PIPE, stdin=subprocess.DEVNULL))
    return _collect(procs, on_done)


def _collect(procs, on_done) -> list[dict]:
    """Every worker's result lines, as they arrive (a reader thread per worker)."""
    lines: queue.Queue = queue.Queue()

    def read(p):
        for raw in p.stdout:
            lines.put(raw)
        p.wait()
        lines.put(None)

    for p in procs:
        threading.Thread(target=read, args=(p,), daemon=True).start()
    out, running = [], len(procs)
    while running:
        raw = lines.get()
        if raw is None:
            running -= 1
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        out.append(line)
        if on_done:
            on_done(line)
    return out
