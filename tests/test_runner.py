"""tuning.runner's ranking of timed candidates (no GPU)."""
from autotrans.tuning.runner import CUTOFF, SHORT_FACTOR, SHORT_US, final_rounds, ranked, sample_count
from autotrans.tuning.timing import Stats


def _s(median):
    return Stats(median, median, median, 5)


def test_ranked_puts_retimed_first_then_by_median():
    stats = {"a": _s(3.0), "b": _s(1.0), "c": _s(2.0), "d": _s(0.5)}
    assert ranked(stats, {"a", "c"}) == ["c", "a", "d", "b"]


def test_ranked_breaks_a_tie_by_key_whatever_the_insertion_order():
    # equal medians are common at event resolution; the winner and the listed
    # first candidate must be the same one
    one = {"tile:p1": _s(4.0), "tile:p0": _s(4.0), "vec": _s(5.0)}
    two = dict(reversed(list(one.items())))
    assert ranked(one, set(one)) == ranked(two, set(two)) == ["tile:p0", "tile:p1", "vec"]


def test_a_clearly_slower_candidate_stops_after_two_samples():
    best = 100.0
    assert sample_count(CUTOFF * best, 5, best) == 2
    assert sample_count(CUTOFF * best * 0.99, 5, best) == 5
    assert sample_count(50.0, 1, 10.0) == 1          # never more than asked for


def test_short_kernels_take_more_samples_and_rounds():
    assert sample_count(SHORT_US * 0.5, 5, float("inf")) == 5 * SHORT_FACTOR
    assert sample_count(SHORT_US, 5, float("inf")) == 5
    assert final_rounds(SHORT_US * 0.5) == SHORT_FACTOR * final_rounds(SHORT_US) > final_rounds(SHORT_US) >= 5
