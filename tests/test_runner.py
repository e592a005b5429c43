"""tuning.runner's ranking of timed candidates (no GPU)."""
from autotrans.tuning.runner import ranked
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
