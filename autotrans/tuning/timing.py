"""Timing: CUDA events, warm-up, cold L2 by rotating buffers, medians and IQR."""
from __future__ import annotations

from dataclasses import dataclass

from ..backend import cuda as driver

MIN_SAMPLE_US = 100.0   # a sample groups launches until it lasts about this long
MAX_SETS = 64           # buffer sets rotated at most (tiny matrices stay in L2 regardless)


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


def rotation(nbytes: int, l2_bytes: int, budget: int = 4 << 30) -> int:
    """How many input/output buffer pairs to rotate through so that a pair is
    evicted from L2 before it is used again (at least 3x L2 between reuses),
    within a memory budget and at most MAX_SETS."""
    if nbytes <= 0:
        return 1
    want = -(-3 * l2_bytes // (2 * nbytes))
    return int(max(1, min(want, budget // (2 * nbytes), MAX_SETS)))


class Rotation:
    """Cycles through buffer sets; every launch, whichever kernel it runs, takes
    the next set, so each finds its data evicted from L2 by the others."""

    def __init__(self, sets: int):
        self.sets, self.i = sets, 0

    def next(self) -> int:
        self.i = (self.i + 1) % self.sets
        return self.i


def sample(launch, count: int) -> float:
    """Time ``count`` calls of launch() with CUDA events: microseconds per call."""
    a, b = driver.event(), driver.event()
    a.record()
    for _ in range(count):
        launch()
    b.record()
    b.synchronize()
    return b.time_since(a) * 1000.0 / count


def group_size(launch_us: float) -> int:
    """Launches per sample: enough to last about MIN_SAMPLE_US (a single short
    launch timed with events reads high by the launch gap), at most 1000."""
    return int(max(1, min(1000, MIN_SAMPLE_US // max(launch_us, 0.5))))


class Timer:
    """Samples one launch function; call .take(n) repeatedly, then .stats()."""

    def __init__(self, launch, warmup: int = 3, first_sample: bool = False):
        """first_sample: also take one sample (for a launch function whose kernel
        has run before, where a sample is a single launch anyway, the last
        warm-up launch counts as it)."""
        self.launch, self.samples = launch, []
        warm = [sample(launch, 1) for _ in range(max(1, warmup))]
        self.group = group_size(min(warm))
        if first_sample and self.group == 1:
            self.samples.append(warm[-1])
        elif first_sample:
            self.take(1)

    def take(self, n: int) -> None:
        for _ in range(n):
            self.samples.append(sample(self.launch, self.group))

    def stats(self) -> Stats:
        return Stats.of(self.samples)


def interleaved(launches: dict, rounds: int = 10, per_round: int = 2) -> dict:
    """Time several launch functions in alternation, so drift hits all alike."""
    timers = {k: Timer(f) for k, f in launches.items()}
    for _ in range(rounds):
        for t in timers.values():
            t.take(per_round)
    return {k: t.stats() for k, t in timers.items()}
