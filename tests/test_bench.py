import numpy as np
import pytest

from autotrans.tuning.timing import Rotation, Stats, rotation

MB = 1 << 20


def test_stats_are_median_and_quartiles():
    s = Stats.of([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.median_us, s.q1_us, s.q3_us, s.n) == (3.0, 2.0, 4.0, 5)
    assert s.iqr_us == 2.0
    assert s.to_dict() == {"median_us": 3.0, "q1_us": 2.0, "q3_us": 4.0, "n": 5}


@pytest.mark.parametrize("nbytes, sets", [(4 * MB, 19), (64 * MB, 2), (1 << 30, 1), (0, 1)])
def test_rotation_keeps_reuse_distance_beyond_l2(nbytes, sets):
    l2 = 50 * MB
    assert rotation(nbytes, l2) == sets
    if nbytes:
        assert sets * 2 * nbytes >= 3 * l2 or sets == 1


def test_rotation_respects_the_memory_budget_and_a_cap():
    assert rotation(1 * MB, 50 * MB, budget=16 * MB) == 8
    assert rotation(4, 50 * MB) == 64        # a 1x1 float32 matrix: not millions of buffers


def test_shared_rotation_visits_every_set_in_turn():
    r = Rotation(3)
    assert [r.next() for _ in range(7)] == [1, 2, 0, 1, 2, 0, 1]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 20])
def test_stats_quantiles_match_numpy(n):
    x = list(np.random.default_rng(n).exponential(10.0, n))
    s = Stats.of(x)
    q1, med, q3 = np.percentile(x, [25, 50, 75])
    assert (s.q1_us, s.median_us, s.q3_us) == pytest.approx((q1, med, q3), rel=1e-12)


@pytest.mark.parametrize("launch_us, group", [(0.1, 200), (5.0, 20), (30.0, 3), (100.0, 1), (540.0, 1)])
def test_samples_group_short_launches(launch_us, group):
    from autotrans.tuning.timing import group_size
    assert group_size(launch_us) == group
