"""permute() without a GPU: its argument checks, and the strided configs its
dispatch picks (strided_config) run through the host emulator on the canonical
problems of random permutations of strided views, checked against NumPy."""
import importlib
import re

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


class _Interface:
    """A device array as __cuda_array_interface__ describes it (its pointer never read)."""

    def __init__(self, shape, strides):
        self.__cuda_array_interface__ = {"shape": shape, "strides": strides, "typestr": "<f4",
                                         "data": (0x7F0000000000, False), "version": 2}


@pytest.mark.parametrize("shape, strides, why", [((4, 4), (-16, 4), "stride -16"), ((4, 4), (0, 4), "stride 0"),
                                                 ((4, 4), (18, 4), "not a multiple"),
                                                 ((2,) * 9, None, "rank 9")])
def test_bad_strides_and_ranks_are_refused_before_the_gpu_is_touched(shape, strides, why):
    with pytest.raises(ValueError, match=why):
        autotrans.permute(_Interface(shape, strides), tuple(reversed(range(len(shape)))))


@pytest.mark.parametrize("axes, why", [((0, 1, 3), "out of range"), ((0, 1.0, 2), "integers"),
                                       ((True, 0, 1), "integers"), ("012", "sequence"), (5, "sequence")])
def test_bad_axes(axes, why):
    with pytest.raises(ValueError, match=why):
        permute_mod._axes(axes, 3)


def test_negative_axes_count_from_the_end():
    assert permute_mod._axes((-1, 0, -2), 3) == (2, 0, 1)


def test_tune_with_axes_checks_its_arguments_and_tunes_nothing_for_a_copy():
    """autotrans.tune(axes=...): a permutation that is a copy after fusion has
    nothing to tune (None, no GPU asked); conj and to need axes; bad axes and
    casts are refused before any GPU is asked."""
    assert autotrans.tune((4, 1, 5), "float32", axes=(1, 0, 2)) is None       # size-1 axis: a copy
    assert autotrans.tune((30, 40), "complex64", axes=(0, 1), conj=False) is None
    with pytest.raises(ValueError, match="need axes"):
        autotrans.tune((30, 40), "complex64", conj=True)
    with pytest.raises(ValueError, match="need axes"):
        autotrans.tune((30, 40), "float32", to="bfloat16")
    with pytest.raises(ValueError, match="not a permutation|out of range"):
        autotrans.tune((30, 40), "float32", axes=(0, 0))
    with pytest.raises(ValueError, match="integers and floats"):
        autotrans.tune((30, 40), "float32", axes=(1, 0), to="int8")


def test_tune_with_axes_tunes_the_transposes_plain_dtype():
    """A permutation that fuses into a dense transpose of wider elements is
    tuned as that transpose: the dtype of its element size (_plain_dtype)."""
    assert permute_mod._plain_dtype(np.float32, 4) == np.dtype(np.float32)
    assert permute_mod._plain_dtype("float16", 8).itemsize == 8
    assert permute_mod._plain_dtype("bfloat16", 2).itemsize == 2
    assert permute_mod._plain_dtype("complex64", 8) == np.dtype(np.complex64)


def _cases(rng, n, ranks=(2, 6), sizes=(1, 2, 3, 5, 7, 9, 17, 33)):
    """(problem, input bytes, input offset, output size, expected output) of random strided views."""
    out = []
    while len(out) < n:
        rank = int(rng.integers(*ranks))
        e = int(rng.choice([1, 2, 4, 8, 16]))
        shape = tuple(int(v) for v in rng.choice(sizes, size=rank))
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


def test_rank_six_to_eight_permutations_of_views_move_exactly():
    """The ranks past the random test's (permute takes up to 8 axes): strided
    views of rank 6-8, as run_problem gives their problems (fused tiles too)."""
    cases = _cases(np.random.default_rng(68), 8, ranks=(6, 9), sizes=(1, 2, 3, 5, 7))
    items = []
    for p, src, offset, align, want in cases:
        run = permute_mod.as_strided(p, align)
        items.append((permute_mod.strided_config(run, align, H200_LIMITS), run, src, np.zeros(want.size, np.uint8),
                      offset, 0))
    assert max(len(layout.permutation_of(c[1])[0]) for c in items) >= 6     # many dims left after fusion
    for (cfg, p, *_), got, case in zip(items, emulate_strided_many(items), cases):
        assert got.tobytes() == case[4].tobytes(), (cfg.key, p)


def test_wide_elements_at_narrower_pointers_move_as_words_exactly():
    """complex128 views 8 bytes off a 16-byte boundary (a float64 buffer's
    view), 8-byte elements 4 bytes off: tiles move as words of the alignment,
    exact; a conj (which needs whole elements) keeps its tile."""
    rng, items, wants = np.random.default_rng(40), [], []
    for e, off, shape, axes, steps in [(16, 8, (9, 33), (1, 0), (1, 2)), (16, 8, (5, 7, 17), (2, 1, 0), (2, 1, 1)),
                                       (16, 8, (3, 9, 5, 7), (1, 3, 0, 2), (1, 1, 2, 1)),
                                       (8, 4, (17, 9), (1, 0), (2, 1))]:
        big = tuple(d * s for d, s in zip(shape, steps))
        base = rng.integers(0, 256, int(np.prod(big)) * e + off, dtype=np.uint8)
        full = base[off:].view(f"V{e}").reshape(big)
        view = full[tuple(slice(0, d * s, s) for d, s in zip(shape, steps))]
        plain = permute_mod._canonical(shape, view.strides, e, axes, off)
        assert isinstance(layout.canonical(shape, view.strides, e, axes, off), layout.TileProblem)
        assert isinstance(plain, layout.RowsProblem) and plain.elem == off, plain
        assert permute_mod._canonical(shape, view.strides, e, axes, off, None, False).elem == e   # conj
        cfg = permute_mod.strided_config(permute_mod.as_strided(plain, off), off, H200_LIMITS)
        items.append((cfg, permute_mod.as_strided(plain, off), base, np.zeros(view.nbytes, np.uint8), off, 0))
        wants.append(np.ascontiguousarray(np.transpose(view, axes)).view(np.uint8).reshape(-1))
    for (cfg, p, *_), got, want in zip(items, emulate_strided_many(items), wants):
        assert got.tobytes() == want.tobytes(), (cfg.key, p)
    dense = permute_mod._canonical((7, 65), layout.c_strides((7, 65), 16), 16, (1, 0), 8)
    assert isinstance(dense, layout.TransposeProblem)          # transpose()'s kernels take any alignment


# -- the tuned config, and the conj epilogue -------------------------------------------

def _h200_info():
    from autotrans.backend.cuda import DeviceInfo
    from autotrans.core.device import DeviceId
    from conftest import H200
    return DeviceInfo(DeviceId.from_text(H200), (9, 0), 60 << 20, 1024, 227 * 1024)


def test_a_strided_problem_runs_its_tuned_config_where_the_cache_has_one(tmp_path):
    from autotrans.results.store import ResultCache
    from autotrans.tuning.strided import problem_key, strided_candidates
    from test_problem_keys import problem_record
    dev = _h200_info()
    rc = ResultCache(tmp_path / "c")
    p = layout.canonical((70, 300), (4800, 16), 8, (1, 0), 16)           # every other column: a tile problem
    ch = permute_mod.strided_choice(p, 16, "none", dev.id.text, dev.limits, rc)
    untuned = ch.config
    assert ch.source == "untuned" and untuned == permute_mod.strided_config(p, 16, dev.limits)
    other = next(c for c in strided_candidates(p, dev.limits) if c != untuned)
    key = problem_key(p, dev.id.text)
    assert rc.put_problem(key, problem_record(key, best=other, configs=[other, untuned], n_candidates=2))
    ch = permute_mod.strided_choice(p, 16, "none", dev.id.text, dev.limits, rc)
    assert (ch.config, ch.source) == (other, "tuned")
    ch = permute_mod.strided_choice(p, 16, "conj32", dev.id.text, dev.limits, rc)
    assert ch.config.epilogue == "conj32" and ch.source == "untuned"                  # conj: the untuned rule


def _complex_cases(rng, n, dtype):
    """(problem, input bytes, offset, alignment, numpy.conj of the permutation) of random complex views."""
    out = []
    e = np.dtype(dtype).itemsize
    while len(out) < n:
        rank = int(rng.integers(1, 5))
        shape = tuple(int(v) for v in rng.choice([1, 2, 3, 5, 7, 17, 33], size=rank))
        axes = tuple(int(a) for a in rng.permutation(rank))
        dense = len(out) % 2 == 0                                           # half of them contiguous
        steps = [1 if dense else int(rng.integers(1, 3)) for _ in shape]
        start = 0 if dense else 1
        big = tuple(d * s + start for d, s in zip(shape, steps))
        base = np.random.default_rng(len(out) + 7).integers(0, 256, int(np.prod(big)) * e, dtype=np.uint8)
        full = base.view(dtype).reshape(big)
        view = full[tuple(slice(start, start + d * s, s) for d, s in zip(shape, steps))]
        offset = view.__array_interface__["data"][0] - full.__array_interface__["data"][0]
        want = np.ascontiguousarray(np.conj(np.transpose(view, axes))).view(np.uint8).reshape(-1)
        align = layout.alignment(offset, 0)
        out.append((layout.canonical(shape, view.strides, e, axes, align), base, offset, align, want))
    return out


@pytest.mark.parametrize("dtype, epilogue", [(np.complex64, "conj32"), (np.complex128, "conj64")])
def test_conj_runs_every_problem_kind_through_an_epilogue_config_exactly(dtype, epilogue):
    """What permute(conj=True) launches for copies, dense transposes, tile
    and rows problems of random complex views equals numpy.conj of
    numpy.transpose bit for bit (NaN payloads included: random bits)."""
    dev = _h200_info()
    cases = _complex_cases(np.random.default_rng(3), 40, dtype)
    items = []
    for p, src, offset, align, want in cases:
        sp = permute_mod.as_strided(p, align)
        cfg = permute_mod.strided_choice(sp, align, epilogue, dev.id.text, dev.limits).config
        assert cfg.epilogue == epilogue
        items.append((cfg, sp, src, np.zeros(want.size, np.uint8), offset, 0))
    kinds = {type(c[0]).__name__ for c in cases}
    assert kinds == {"CopyProblem", "TransposeProblem", "TileProblem", "RowsProblem"}
    for (cfg, p, *_), got, case in zip(items, emulate_strided_many(items), cases):
        assert got.tobytes() == case[4].tobytes(), (cfg.key, p)


def test_conj_epilogue_by_dtype():
    assert permute_mod.epilogue_of(True, "complex64", 8) == "conj32"
    assert permute_mod.epilogue_of(True, "complex128", 16) == "conj64"
    assert permute_mod.epilogue_of(True, "float64", 8) == "none"        # the conjugate of a real is itself
    assert permute_mod.epilogue_of(False, "complex64", 8) == "none"
    with pytest.raises(ValueError, match="complex64 and complex128"):
        permute_mod.epilogue_of(True, "complex32", 4)
    with pytest.raises(TypeError, match="conj must be"):
        permute_mod.epilogue_of("yes", "complex64", 8)


def test_explain_with_axes_names_the_problem_and_its_config():
    from conftest import A100, H200
    c = autotrans.explain((64, 512, 16, 64), "float16", axes=(0, 2, 1, 3), fingerprint=A100)
    assert isinstance(c.problem, layout.RowsProblem) and c.config.variant == "rows" and c.source == "untuned"
    c = autotrans.explain((64, 512, 16, 64), "float16", axes=(0, 2, 1, 3), fingerprint=H200)   # shipped problems
    assert c.config.variant == "rows" and c.source == "nearest" and "nearest tuned problem rows:" in str(c)
    assert "; shipped, tuned on NVIDIA H100 80GB HBM3; its winner)" in str(c)    # a sibling's (cache/h100.json)
    assert autotrans.explain((5, 6), "float32", axes=(0, 1), fingerprint=H200).config is None     # a copy
    c = autotrans.explain((5, 6, 7), "complex128", axes=(2, 1, 0), conj=True, fingerprint=H200)
    assert c.config.epilogue == "conj64" and isinstance(c.problem, layout.NdTileProblem)   # fused: 16-byte elements
    with pytest.raises(ValueError, match="conj=True and to= need axes"):
        autotrans.explain((5, 6), "complex64", conj=True, fingerprint=H200)



@pytest.mark.parametrize("shape, axes, dtype, conj, to", [((0, 5), (1, 0), "float32", False, None),
                                                         ((0,), (0,), "float32", False, None),
                                                         ((3, 0, 4), (2, 1, 0), "complex64", True, None),
                                                         ((4, 0), (1, 0), "float32", False, "bfloat16")])
def test_an_empty_shape_with_axes_is_explained_and_refused_as_without(tmp_path, shape, axes, dtype, conj, to):
    from conftest import H200
    plain = autotrans.explain((0, 5), fingerprint=H200, cache_dir=tmp_path)
    c = autotrans.explain(shape, dtype, axes=axes, conj=conj, to=to, fingerprint=H200, cache_dir=tmp_path)
    assert str(c) == plain.reason == "an empty shape moves nothing"
    assert (c.problem, c.config, c.source) == (None, None, "empty")
    with pytest.raises(ValueError, match=re.escape(f"shape {shape} is empty: every dimension must be at least 1")):
        autotrans.tune(shape, dtype, axes=axes, conj=conj, to=to, cache_dir=tmp_path)
    with pytest.raises(ValueError, match="is empty"):
        autotrans.tune((0, 5), cache_dir=tmp_path)

@pytest.mark.parametrize("src, dst", [("float32", "bfloat16"), ("float16", "float32"), ("float64", "float16"),
                                      ("int32", "int8"), ("uint8", "int32")])
def test_cast_dispatch_picks_configs_that_cast_exactly(src, dst):
    """What permute(x, axes, dtype=) launches for random views (copies, dense
    transposes, tile and rows problems, random bits) equals the NumPy
    reference of astype after numpy.transpose."""
    from autotrans.kernels import config
    cast = config.cast_for(src, dst)
    ei, eo = config.CAST_SIZES[cast]
    words = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
    ref = layout.cast_reference(cast)
    dev, rng, items, wants, kinds = _h200_info(), np.random.default_rng(ei * 10 + eo), [], [], set()
    for k in range(40):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(v) for v in rng.choice([1, 2, 3, 5, 7, 17, 33], size=rank))
        axes = tuple(int(a) for a in rng.permutation(rank))
        dense = k % 2 == 0
        steps = [1 if dense else int(rng.integers(1, 3)) for _ in shape]
        start = 0 if dense else 1
        big = tuple(d * s + start for d, s in zip(shape, steps))
        base = np.random.default_rng(k).integers(0, 256, int(np.prod(big)) * ei, dtype=np.uint8)
        view = base.view(words[ei]).reshape(big)[tuple(slice(start, start + d * s, s) for d, s in zip(shape, steps))]
        offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        want = ref(np.ascontiguousarray(np.transpose(view, axes))).view(np.uint8).reshape(-1)
        align = layout.alignment(offset, 0)
        p = layout.canonical(shape, view.strides, ei, axes, align, out_itemsize=eo)
        kinds.add(type(p).__name__)
        sp = permute_mod.as_strided(p, align, cast)
        cfg = permute_mod.strided_choice(sp, align, "none", dev.id.text, dev.limits, cast=cast).config
        assert cfg.cast == cast
        items.append((cfg, sp, base, np.zeros(want.size, np.uint8), offset, 0))
        wants.append(want)
    assert "TileProblem" in kinds and len(kinds) >= 3, kinds
    for item, got, want in zip(items, emulate_strided_many(items), wants):
        assert got.tobytes() == want.tobytes(), (item[0].key, item[1])


# -- the problem permute() runs, from a description (explain, the CLI, the grid) --------

def test_permutation_problem_is_what_permute_runs():
    from autotrans.core.layout import CopyProblem, RowsProblem, TileProblem, TransposeProblem
    pp = permute_mod.permutation_problem
    assert isinstance(pp((8, 16), "float32", (0, 1))[0], CopyProblem)
    assert isinstance(pp((4, 8, 16), "float32", (0, 2, 1))[0], TransposeProblem)
    rows, cast, epi = pp((2, 64, 4, 8), "float32", (0, 2, 1, 3))
    assert isinstance(rows, RowsProblem) and (cast, epi) == ("none", "none")
    conj = pp((8, 16), "complex64", (1, 0), conj=True)
    assert isinstance(conj[0], TileProblem) and conj[1:] == ("none", "conj32")      # a transpose, strided
    bf16 = pp((8, 16), "bfloat16", (1, 0), to="float32")           # named without ml_dtypes
    assert (bf16[0].elem, bf16[0].out_elem, bf16[1]) == (2, 4, "bf16>f32")
    for dt in ("complex64", "complex128", "float32", "int8"):   # to= its own dtype: no cast, as permute(dtype=)
        assert pp((4, 8, 16), dt, (0, 2, 1), to=dt) == pp((4, 8, 16), dt, (0, 2, 1))
    with pytest.raises(ValueError, match="cast"):
        pp((4, 8, 16), "complex64", (0, 2, 1), to="complex128")
    with pytest.raises(ValueError):
        pp((8, 16), "float32", (0, 0))


def test_a_view_problem_is_the_pitched_tile_of_the_view():
    from autotrans.core.layout import TileProblem
    p, cast, epi = permute_mod.view_problem((64, 100), "float32", (1, 0), (10, 90))
    assert isinstance(p, TileProblem) and (p.m, p.n, p.ldi) == (64, 80, 400) and (cast, epi) == ("none", "none")
    with pytest.raises(ValueError, match="not a slice"):
        permute_mod.view_problem((64, 100), "float32", (1, 0), (90, 10))
