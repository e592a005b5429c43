"""tuning.runner without a GPU: the ranking of timed candidates, the fixed-shape variants."""
import re

import pytest

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


def test_fixed_variants_are_the_dense_configs_compiled_for_the_shape():
    from autotrans.kernels.config import KernelConfig
    from autotrans.tuning.runner import FIXED_BELOW_US, fixed_variants
    dense = KernelConfig.from_key("vec:e4:64x16:t128:v8:r1:p0:xor:col")
    strided = KernelConfig.from_key("tile:e4:32x32:t256:v4:r1:p1:none:row:strided")
    done = dense.fixed_to((8, 8))
    got = fixed_variants((1, 256, 512), [dense, strided, done], 5.0)
    assert got == [dense.fixed_to((256, 512))] and got[0].key.endswith("@1x256x512")
    assert fixed_variants((1, 256, 512), [dense], FIXED_BELOW_US) == []    # not latency-bound


def test_a_spilling_variant_is_counted_and_a_failed_compile_is_not():
    from autotrans.build.compile import Compiled
    from autotrans.tuning.runner import _spills
    info = {"registers": 32, "spill_stores": 4, "spill_loads": 8, "stack": 8, "smem": 0, "lmem": 0}
    assert _spills(Compiled("k", "n", "sm_90", "obj", info)) == 12
    assert _spills(Compiled("k", "n", "sm_90", "obj", dict(info, spill_stores=0, spill_loads=0))) == 0
    assert _spills(Compiled("k", "n", "sm_90", error="nvcc failed")) == 0


def test_given_strided_configs_must_transpose_the_shape_before_any_gpu_is_asked():
    """tune(shape, configs=) takes strided configs that run the shape as its
    dense_tile (strips of shift tiles for odd rows), and refuses, before it
    looks for a GPU, one that cannot and anything not a KernelConfig."""
    import pytest

    from autotrans.kernels.config import KernelConfig
    from autotrans.kernels.strided import strided_space
    from autotrans.tuning.runner import _given, tune
    strip = KernelConfig.from_key("shift:e1:256x64:t256:v16:r4:p4:none:col:s8:strided")
    dense = KernelConfig.from_key("shift:e1:128x128:t256:v16:r4:p4:none:col")
    assert _given((dense, strip), (1, 8191, 8193)) == [dense, strip]
    vec16 = next(c for c in strided_space(1) if c.variant == "vec" and c.vec_bytes == 16)
    with pytest.raises(ValueError, match=f"{vec16.key} cannot transpose 1x8191x8193"):
        tune((8191, 8193), "int8", configs=[strip, vec16])
    with pytest.raises(TypeError, match="KernelConfigs, not str"):
        tune((8191, 8193), "int8", configs=[strip.key])


def test_a_candidate_stops_early_only_where_both_launches_are_slow_and_agree():
    from autotrans.tuning.runner import AGREE, CUTOFF, stops_early
    best = 6.2
    assert stops_early([7.3, 7.5], best)                    # both slow, agreeing
    assert not stops_early([6.5, 7.5], best)                # one within the cutoff
    # the 1x2048x2048 int8 grid record: 7.2 and 21.7 µs for a config of ~6.5 µs
    assert not stops_early([7.24, 21.7], best)
    assert not stops_early([21.7, 7.24], best)
    lo = CUTOFF * best
    assert stops_early([lo, lo * AGREE], best)              # the bounds are inclusive
    assert not stops_early([lo, lo * AGREE * 1.01], best)
    assert not stops_early([1.0, 1.0], float("inf"))        # the first candidate never stops


def test_a_retime_slower_than_the_first_pass_on_most_candidates_is_disturbed():
    from autotrans.tuning.runner import RETIME_SLOWER, disturbed
    first = {"a": _s(6.1), "b": _s(6.2), "c": _s(6.3)}
    assert not disturbed(first, {"a": _s(6.0), "b": _s(6.5), "c": _s(6.3), "memcpy": _s(6.0)})
    # the 1x2048x256 float64 grid record: 15.5-20 µs re-timed, 6.1 in the first pass
    assert disturbed(first, {"a": _s(15.5), "b": _s(16.1), "c": _s(16.5)})
    assert not disturbed(first, {"a": _s(15.5), "b": _s(6.2), "c": _s(6.3)})     # one outlier: not most
    assert disturbed(first, {k: _s(s.median_us * RETIME_SLOWER * 1.01) for k, s in first.items()})
    assert not disturbed(first, {k: _s(s.median_us * RETIME_SLOWER) for k, s in first.items()})
    assert not disturbed({}, {})


def test_a_stored_record_with_a_disturbed_retime_is_suspect():
    import dataclasses

    from conftest import make_record

    from autotrans.results.record import TuneRecord
    from autotrans.tuning.runner import retime_suspect
    rec = TuneRecord.from_json(make_record((256, 256), 4))
    rows = rec.candidates

    def retimed(scale):      # the five fastest re-timed at scale x their first-pass time
        top = tuple(dataclasses.replace(r, median_us=r.median_us * scale, q1_us=r.q1_us * scale,
                                        q3_us=r.q3_us * scale, n=20, retimed=True) for r in rows[:5])
        return dataclasses.replace(rec, candidates=top + rows[5:])
    assert not retime_suspect(rec)                 # nothing re-timed
    assert not retime_suspect(retimed(1.0))
    assert retime_suspect(retimed(3.0))


@pytest.mark.parametrize("kw, needle", [({"reps": 0}, "reps must be a positive int, not 0"),
                                        ({"reps": -1}, "reps must be a positive int"),
                                        ({"reps": True}, "reps must be a positive int, not True"),
                                        ({"reps": 2.0}, "reps must be a positive int"),
                                        ({"top": 0}, "top must be a positive int, not 0"),
                                        ({"top": False}, "top must be a positive int")])
def test_bad_counts_are_refused_before_anything_compiles(tmp_path, kw, needle):
    """tune()'s reps and top (also with axes, a copy's included, and
    tune_problem's) are positive ints, checked before a GPU is even asked."""
    import autotrans
    from autotrans.api.permute import permutation_problem
    from autotrans.tuning.strided import tune_problem
    rows = permutation_problem((64, 512, 16, 64), "float16", (0, 2, 1, 3))[0]
    for call in (lambda: autotrans.tune((64, 64), cache_dir=tmp_path, **kw),
                 lambda: autotrans.tune((64, 64), axes=(1, 0), cache_dir=tmp_path, **kw),
                 lambda: autotrans.tune((8, 1, 16), axes=(1, 0, 2), cache_dir=tmp_path, **kw),   # a copy
                 lambda: tune_problem(rows, save=False, **kw)):
        with pytest.raises(ValueError, match=re.escape(needle)):
            call()
