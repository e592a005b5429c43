"""The harness: builds every contender of a case, checks it, times all
interleaved; run() is the API `autotrans bench` uses."""
from __future__ import annotations

import contextlib
import gc
import shutil
import tempfile
import time

import numpy as np

from ...backend import cuda as driver
from . import check, ours
from .cases import MIB, Case
from .gpu import Data, Gpu
from .measure import REPS, copy16_entry, measure, memcpy_entry, spin_us
from .peers import Peers, Xla, cupy_entry, geam_entry, jax_entry, torch_compile_entry, torch_entry
from .results import CONTENDERS, PEER_COLUMNS, Entry, Result, Row, datasheet_gbps, one_line
from .targets import checks_of

MAKERS = {"tuned": ours.tuned_entry, "untuned": ours.untuned_entry, "memcpy": memcpy_entry,
          "copy16": copy16_entry, "torch": torch_entry, "torch_compile": torch_compile_entry,
          "cupy": cupy_entry, "geam": geam_entry, "jax": jax_entry}


class Bench:
    """Runs cases: builds every contender, checks it, times all interleaved."""

    def __init__(self, *, peers: bool = True, jax: bool = True, torch_compile: bool = True,
                 tune: bool = True, reps: int = REPS):
        self.gpu = Gpu()
        self.datasheet = datasheet_gbps(self.gpu.dev.id.name)
        self.peers = Peers()
        self.reps = max(1, int(reps))
        self.tune = tune
        skip = set() if peers else set(PEER_COLUMNS)
        skip |= set() if jax else {"jax"}
        skip |= set() if torch_compile else {"torch_compile"}
        self.contenders = tuple(c for c in CONTENDERS if c not in skip)
        self.empty_cache = tempfile.mkdtemp(prefix="autotrans-bench-empty-cache-")

    def close(self) -> None:
        self.gpu.close()
        shutil.rmtree(self.empty_cache, ignore_errors=True)

    def run_case(self, case: Case) -> Row:
        """Every contender on one case (a contender's failure is recorded in its Result)."""
        t0 = time.perf_counter()
        data = Data(self.gpu, case)
        results, ready = {}, []
        try:
            for name in self.contenders:
                made = self._prepare(name, case, data)
                if isinstance(made, Result):
                    results[name] = made
                else:
                    ready.append(made)
            spin = self._time(ready, data, results)
        finally:
            ready.clear()
            self._clean_up(data)
        return Row(case, {k: results[k] for k in CONTENDERS if k in results}, spin, time.perf_counter() - t0,
                   self.datasheet)

    def safe_run(self, case: Case) -> Row:
        """run_case, or a row whose tuned result says why the case failed."""
        try:
            return self.run_case(case)
        except Exception as exc:
            return Row(case, {"tuned": Result("failed", note=f"the case failed: {one_line(exc)}")},
                       datasheet_gbps=self.datasheet)

    def _prepare(self, name: str, case: Case, data: Data):
        """A checked Entry (or Xla), or the Result saying why not."""
        try:
            made = MAKERS[name](self, case, data)
        except Exception as exc:
            return Result("failed", note=one_line(exc))
        if isinstance(made, Result):
            return made
        try:
            why = (check.xla_output if name == "jax" else check.output)(self.gpu, made, case, data)
        except Exception as exc:
            why = ("failed", one_line(exc))
        if why is None:
            return made
        if isinstance(made, Xla):
            return Result(why[0], setup_s=made.setup_s, note=why[1])
        return made.result(*why)

    def _time(self, ready: list, data: Data, results: dict) -> float:
        """Time the checked contenders into results; returns the spin (µs)."""
        entries = [m for m in ready if isinstance(m, Entry)]
        xla = next((m for m in ready if isinstance(m, Xla)), None)
        errors: dict = {}
        spin = spin_us(entries, data, errors)
        samples, xla_samples = measure(self.gpu, entries, data, spin, xla, errors, self.reps)
        for e in entries:
            results[e.name] = (e.result("failed", errors[e.name]) if e.name in errors else
                               Result.timed(samples[e.name], config=e.config, source=e.source,
                                            setup_s=e.setup_s, note=e.note))
        if xla is not None:
            results["jax"] = (Result("failed", setup_s=xla.setup_s, note=errors["jax"]) if "jax" in errors
                              else Result.timed(xla_samples, setup_s=xla.setup_s,
                                                note="wall clock per call (dispatch, run, wait): an estimate"))
        return spin

    def _clean_up(self, data: Data) -> None:
        gc.collect()
        for cleanup in (driver.synchronize, data.release, self.peers.release):
            with contextlib.suppress(Exception):   # a broken context must not hide the first error
                cleanup()


def _as_case(c) -> Case:
    return c if isinstance(c, Case) else Case(tuple(c[0]), np.dtype(c[1]).name)


def progress_line(i: int, total: int, row: dict) -> str:
    """One line per finished case."""
    res = row["results"]
    t = res.get("tuned", {})
    if t.get("status") != "ok":
        return f"[{i}/{total}] {row['name']}: tuned {t.get('status', 'missing')}: {t.get('note', '')}"
    parts = [f"[{i}/{total}] {row['name']} ({row['nbytes'] / MIB:.2f} MiB): tuned {t['median_us']:.1f} µs"]
    if t.get("frac_roofline"):
        parts.append(f"{t['frac_roofline']:.3f} of roofline")
    checks = checks_of(row)
    if checks["peer"].value:
        parts.append(f"best peer / tuned {checks['peer'].value:.2f}")
    if checks["untuned"].value:
        parts.append(f"untuned {checks['untuned'].value:.2f} of tuned ({res['untuned'].get('source')})")
    bad = [f"{k} {v['status']}" for k, v in res.items() if v["status"] in ("wrong", "failed")]
    if bad:
        parts.append("; ".join(bad))
    return ", ".join(parts) + f" [{row['seconds']:.1f} s]"


def run(cases, *, peers: bool = True, progress=None, tune: bool = True, reps: int = REPS,
        jax: bool = True, torch_compile: bool = True) -> list[dict]:
    """Benchmark rows (Row.to_dict()) for cases: Case objects or (shape, dtype) pairs."""
    cases = [_as_case(c) for c in cases]
    show = progress if progress is not None else len(cases) > 1
    bench = Bench(peers=peers, jax=jax, torch_compile=torch_compile, tune=tune, reps=reps)
    rows = []
    try:
        for i, case in enumerate(cases):
            rows.append(bench.safe_run(case).to_dict())
            if show:
                print(progress_line(i + 1, len(cases), rows[-1]), flush=True)
    finally:
        bench.close()
    return rows
