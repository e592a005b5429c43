"""tuning.timing: quantiles on the CPU; on the GPU, that each timed launch
runs alone after an L2 flush."""
import numpy as np
import pytest

from autotrans.tuning.timing import Stats

MB = 1 << 20


def test_stats_are_median_and_quartiles():
    s = Stats.of([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.median_us, s.q1_us, s.q3_us, s.n) == (3.0, 2.0, 4.0, 5)
    assert s.iqr_us == 2.0
    assert s.to_dict() == {"median_us": 3.0, "q1_us": 2.0, "q3_us": 4.0, "n": 5}


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 20])
def test_stats_quantiles_match_numpy(n):
    x = list(np.random.default_rng(n).exponential(10.0, n))
    s = Stats.of(x)
    q1, med, q3 = np.percentile(x, [25, 50, 75])
    assert (s.q1_us, s.q3_us, s.median_us) == pytest.approx((q1, q3, med), rel=1e-12)


@pytest.fixture
def copy():
    """A device-to-device copy of 8 MiB (in and out fit in the L2 together)."""
    from autotrans.backend import memory
    a, b = memory.alloc(8 * MB), memory.alloc(8 * MB)
    return lambda: memory.memcpy_dtod(b, a, 8 * MB)


@pytest.mark.gpu
def test_samples_are_one_per_launch_and_hold_the_launch_alone(copy):
    from autotrans.tuning import timing
    from autotrans.tuning.verify import L2Flush
    flush = L2Flush()
    calls = []
    t = timing.Timer(lambda: (calls.append(1), copy()), flush)
    t.take(3)
    t.take(4)
    assert len(calls) == len(t.samples) == t.stats().n == 7 and flush.calls == 7
    # the spin (30 µs) runs before the start event: it is in no sample
    assert 0 < t.stats().median_us < 25


@pytest.mark.gpu
def test_the_flush_leaves_nothing_in_the_l2(copy):
    from autotrans.tuning import timing
    from autotrans.tuning.verify import L2Flush
    flush = L2Flush()
    cold = timing.Timer(copy, flush)
    # the same copy just before (its bytes are in the L2), then the same spin
    hot = timing.Timer(copy, lambda: (copy(), flush.spin(flush.spin_us)))
    for _ in range(5):
        cold.take(3)
        hot.take(3)
    assert cold.stats().median_us > 1.15 * hot.stats().median_us


@pytest.mark.gpu
def test_interleaved_times_each_launch_with_the_same_flush(copy):
    from autotrans.tuning import timing
    from autotrans.tuning.verify import L2Flush
    flush = L2Flush()
    timing.sample(copy, flush, 20)      # clocks up from idle first: the samples below see one state
    flush.calls = 0
    st = timing.interleaved({"a": copy, "b": copy}, flush, rounds=8, per_round=2)
    assert {k: s.n for k, s in st.items()} == {"a": 16, "b": 16} and flush.calls == 32
    assert st["a"].median_us == pytest.approx(st["b"].median_us, rel=0.3)
