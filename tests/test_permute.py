"""permute() without a GPU: its argument checks, and the strided configs its
dispatch picks (strided_config) run through the host emulator on the canonical
problems of random permutations of strided views, checked against NumPy."""
import importlib

import numpy as np
import pytest

import autotrans
from autotrans.core import layout
from autotrans.core.device import Limits
from autotrans.emulate.emulator import emulate_strided_many

permute_mod = importlib.import_module("autotrans.api.permute")   # the module, not the function

H200_LIMITS = Limits(1024, 227 * 1024)


def test_host_arrays_are_refused_before_anything_runs():
    with pytest.raises(TypeError, match="host memory"):
        autotrans.permute(np.zeros((3, 4, 5), np.float32), (2, 1, 0))


@pytest.mark.parametrize("axes, why", [((0, 1, 3), "out of range"), ((0, 1.0, 2), "integers"),
                                       ((True, 0, 1), "integers"), ("012", "sequence"), (5, "sequence")])
def test_bad_axes(axes, why):
    with pytest.raises(ValueError, match=why):
        permute_mod._axes(axes, 3)


def test_negative_axes_count_from_the_end():
    assert permute_mod._axes((-1, 0, -2), 3) == (2, 0, 1)


def _cases(rng, n):
    """(problem, input bytes, input offset, output size, expected output) of random strided views."""
    out = []
    while len(out) < n:
        rank = int(rng.integers(2, 6))
        e = int(rng.choice([1, 2, 4, 8, 16]))
        shape = tuple(int(v) for v in rng.choice([1, 2, 3, 5, 7, 9, 17, 33], size=rank))
        axes = tuple(int(a) for a in rng.permutation(rank))
        steps = [int(rng.integers(1, 3)) for _ in shape]
        big = tuple(d * s + 1 for d, s in zip(shape, steps))
        base = np.random.default_rng(len(out)).integers(0, 256, int(np.prod(big)) * e, dtype=np.uint8)
        full = base.view(f"V{e}").reshape(big)
        view = full[tuple(slice(1, 1 + d * s, s) for d, s in zip(shape, steps))]
        offset = view.__array_interface__["data"][0] - full.__array_interface__["data"][0]
        want = np.ascontiguousarray(np.transpose(view, axes)).view(np.uint8).reshape(-1)
        align = layout.alignment(offset, 0)
        p = layout.canonical(shape, view.strides, e, axes, align)
        if isinstance(p, (layout.TileProblem, layout.RowsProblem)):
            out.append((p, base, offset, align, want))
    return out


def test_the_configs_dispatch_picks_move_random_strided_permutations_exactly():
    cases = _cases(np.random.default_rng(15), 48)
    items = []
    for p, src, offset, align, want in cases:
        cfg = permute_mod.strided_config(p, align, H200_LIMITS)
        assert cfg.layout == "strided"
        items.append((cfg, p, src, np.zeros(want.size, np.uint8), offset, 0))
    kinds = {type(c[0]).__name__ for c in cases}
    assert kinds == {"TileProblem", "RowsProblem"}
    for (cfg, p, *_), got, case in zip(items, emulate_strided_many(items), cases):
        assert got.tobytes() == case[4].tobytes(), (cfg.key, p)
