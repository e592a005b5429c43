"""Timing: each launch alone, after an L2 flush, between CUDA events; medians and IQR.

The tuner times a kernel the way the benchmark does (and as a transpose runs
between other kernels): one launch, with nothing of its data or code left in
the L2, the GPU kept busy while the host queues it, so that the events hold
the kernel alone. Back-to-back launches would time their throughput instead,
with one launch's tail hidden under the next one's start; on kernels of a few
microseconds that picks other winners (NOTES.md, entry 25).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..backend import cuda as driver


@dataclass(frozen=True)
class Stats:
    """Per-launch time over samples, in microseconds."""
    median_us: float
    q1_us: float
    q3_us: float
    n: int

    @property
    def iqr_us(self) -> float:
        return self.q3_us - self.q1_us

    @classmethod
    def of(cls, samples) -> "Stats":
        s = sorted(map(float, samples))
        return cls(_quantile(s, 0.5), _quantile(s, 0.25), _quantile(s, 0.75), len(s))

    def to_dict(self) -> dict:
        return {"median_us": self.median_us, "q1_us": self.q1_us, "q3_us": self.q3_us, "n": self.n}


def _quantile(s: list, q: float) -> float:
    """Quantile q of sorted samples, interpolated linearly (NumPy's default);
    called once per timing sample, where np.percentile's overhead would show."""
    x = (len(s) - 1) * q
    i = int(x)
    return s[i] if i + 1 >= len(s) else s[i] + (s[i + 1] - s[i]) * (x - i)


def sample(launch, before, count: int) -> list[float]:
    """``count`` launches, each after before() (the L2 flush and a spin), each
    between its own pair of events; all queued, then one wait. Microseconds each."""
    pairs = []
    for _ in range(count):
        before()
        a, b = driver.event(), driver.event()
        a.record()
        launch()
        b.record()
        pairs.append((a, b))
    if pairs:
        pairs[-1][1].synchronize()
    return [b.time_since(a) * 1000.0 for a, b in pairs]


class Timer:
    """Samples one launch function, each launch after before(); call .take(n)
    repeatedly, then .stats()."""

    def __init__(self, launch, before):
        self.launch, self.before, self.samples = launch, before, []

    def take(self, n: int) -> None:
        self.samples += sample(self.launch, self.before, n)

    def stats(self) -> Stats:
        return Stats.of(self.samples)


def interleaved(launches: dict, before, rounds: int = 10, per_round: int = 2) -> dict:
    """Time several launch functions in alternation, so drift hits all alike."""
    timers = {k: Timer(f, before) for k, f in launches.items()}
    for _ in range(rounds):
        for t in timers.values():
            t.take(per_round)
    return {k: t.stats() for k, t in timers.items()}
