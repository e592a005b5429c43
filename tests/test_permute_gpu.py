"""permute() on the GPU: N-d permutations of torch, CuPy and PyCUDA arrays,
contiguous and strided views, checked bit for bit against NumPy; each kind of
canonical problem (copy, dense transpose, strided tile, rows); out=; errors.
A framework that is not installed is skipped."""
import importlib

import numpy as np
import pytest

import autotrans
from autotrans.api import launch
from autotrans.backend import cuda as driver
from autotrans.core import layout
from autotrans.kernels.strided import strided_problems

permute_mod = importlib.import_module("autotrans.api.permute")   # the module, not the function

pytestmark = pytest.mark.gpu

DTYPES = [np.int8, np.float16, np.float32, np.float64, np.complex128]


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTRANS_CACHE_DIR", str(tmp_path / "cache"))
    launch.forget()
    yield
    launch.forget()


def host_random(shape, dtype, seed):
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).view(dtype).reshape(shape)


def torch_mod():
    return pytest.importorskip("torch")


def to_torch(h):
    torch = torch_mod()
    if h.dtype == np.complex128:
        return torch.from_numpy(h.view(np.float64).copy()).cuda().view(torch.complex128)
    if h.dtype == np.complex64:
        return torch.from_numpy(h.view(np.float32).copy()).cuda().view(torch.complex64)
    return torch.from_numpy(h.copy()).cuda()


def torch_host(t):
    torch = torch_mod()
    torch.cuda.synchronize()
    return t.cpu().numpy()


def case(rng, rank):
    shape = tuple(int(v) for v in rng.choice([1, 2, 3, 5, 7, 16, 33, 64], size=rank))
    axes = tuple(int(a) for a in rng.permutation(rank))
    return shape, axes


def view_of(h, rng):
    """A strided view of a bigger host array (and its slices), or h itself."""
    kind = rng.integers(0, 3)
    if kind == 0 or h.ndim == 0:
        return (slice(None),) * h.ndim, h.shape
    big = tuple(d * 2 + 1 for d in h.shape)
    sl = []
    for d in h.shape:
        step = int(rng.integers(1, 3))
        start = int(rng.integers(0, 2))
        sl.append(slice(start, start + d * step, step))
    return tuple(sl), big


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_permutations_of_torch_views_match_numpy(dtype):
    torch = torch_mod()
    rng = np.random.default_rng(int(np.dtype(dtype).itemsize))
    for i in range(60):
        shape, axes = case(rng, int(rng.integers(1, 6)))
        sl, big = view_of(np.empty(shape), rng)
        hb = host_random(big, dtype, i)
        hv = hb[sl]
        tv = to_torch(hb)[sl]
        got = torch_host(autotrans.permute(tv, axes))
        want = np.ascontiguousarray(np.transpose(hv, axes))
        assert got.shape == want.shape and got.tobytes() == want.tobytes(), (shape, axes, sl, dtype)


def test_each_problem_kind_on_torch():
    torch = torch_mod()
    cases = [
        ((64, 512, 16, 64), (0, 2, 1, 3), np.float16, None),            # rows: 128-byte rows
        ((8, 100, 12, 4), (0, 2, 1, 3), np.float16, None),              # promoted: 8-byte elements
        ((33, 47, 29), (2, 1, 0), np.float32, None),                    # strided tile, one batch dim
        ((5, 7, 9, 11), (3, 1, 0, 2), np.int8, None),
        ((3, 40, 50), (0, 1, 2), np.float64, None),                     # identity: a copy
        ((300, 6000), (1, 0), np.float32, (slice(None), slice(100, 5100))),   # pitched view transposed
        ((300, 6000), (0, 1), np.float16, (slice(None), slice(100, 5100))),   # pitched copy: rows
        ((10001,), (0,), np.float32, (slice(None, None, 2),)),          # 1-d gather
        ((2, 2048, 2048), (0, 2, 1), np.float32, None),                 # dense batched transpose
    ]
    for i, (shape, axes, dtype, sl) in enumerate(cases):
        h = host_random(shape, dtype, i)
        t = to_torch(h)
        if sl is not None:
            h, t = h[sl], t[sl]
        got = torch_host(autotrans.permute(t, axes))
        want = np.ascontiguousarray(np.transpose(h, axes))
        assert got.tobytes() == want.tobytes(), (shape, axes, dtype)
        assert isinstance(autotrans.permute(t, axes), torch.Tensor)


def test_cupy_and_gpuarray_inputs():
    h = host_random((6, 35, 17, 3), np.float32, 7)
    want = np.ascontiguousarray(np.transpose(h, (2, 0, 3, 1)))
    g = driver.gpuarray().to_gpu(h)
    y = autotrans.permute(g, (2, 0, 3, 1))
    assert type(y).__name__ == "GPUArray" and y.get().tobytes() == want.tobytes()
    cp = pytest.importorskip("cupy")
    c = cp.asarray(h)
    yc = autotrans.permute(c, (2, 0, 3, 1))
    assert isinstance(yc, cp.ndarray) and cp.asnumpy(yc).tobytes() == want.tobytes()
    yv = autotrans.permute(c[:, ::2, 1:, :], (3, 2, 1, 0))
    assert cp.asnumpy(yv).tobytes() == np.ascontiguousarray(np.transpose(h[:, ::2, 1:, :], (3, 2, 1, 0))).tobytes()


def test_repeat_calls_take_a_route_and_stay_exact():
    """permute() again and again on the same layouts (the remembered route)
    writes the right bytes each time, for each axes, conj, dtype and out= it
    was called with (one route never serves another's call), on torch, CuPy
    and PyCUDA; calls a route must not serve (bool axes, conj=1, an
    overlapping out) still take the full path and its errors."""
    torch = torch_mod()
    h = [host_random((6, 35, 17, 9), np.complex64, seed) for seed in range(3)]
    xs = [to_torch(a) for a in h]
    calls = [((2, 0, 3, 1), False, None), ((0, 2, 1, 3), False, None), ((2, 0, 3, 1), True, None),
             ((3, 2, 1, 0), False, None), ([3, 2, 1, 0], True, None)]
    for k in range(12):
        axes, conj, _ = calls[k % len(calls)]
        a = h[k % 3]
        want = np.ascontiguousarray(np.transpose(a, axes))
        got = torch_host(autotrans.permute(xs[k % 3], axes, conj=conj))
        assert got.tobytes() == (np.conj(want) if conj else want).tobytes(), (k, axes, conj)
        o = torch.empty(want.shape, dtype=torch.complex64, device="cuda")
        assert autotrans.permute(xs[k % 3], axes, out=o, conj=conj) is o
        assert torch_host(o).tobytes() == (np.conj(want) if conj else want).tobytes()
    assert sum(1 for k in launch._routes._d if isinstance(k, tuple) and len(k) == 4) >= 4
    f = torch.randint(-1000, 1000, (40, 30, 20), device="cuda").float() / 7      # finite: torch.equal holds
    wantf = np.ascontiguousarray(np.transpose(torch_host(f), (2, 0, 1)))
    for _ in range(3):                               # a cast with out=: routed; a cast without: full path
        ob = torch.empty((20, 40, 30), dtype=torch.bfloat16, device="cuda")
        assert autotrans.permute(f, (2, 0, 1), out=ob, dtype=torch.bfloat16) is ob
        assert torch.equal(ob, torch.from_numpy(wantf).cuda().to(torch.bfloat16))
        assert torch.equal(autotrans.permute(f, (2, 0, 1), dtype="bfloat16"), ob)
        assert torch_host(autotrans.permute(f, (2, 0, 1))).tobytes() == wantf.tobytes()
    m = xs[0][0, 0]
    for _ in range(2):
        assert torch_host(autotrans.permute(m, (1, 0))).tobytes() == np.ascontiguousarray(h[0][0, 0].T).tobytes()
    with pytest.raises(ValueError, match="integers"):
        autotrans.permute(m, (True, False))          # equal to (1, 0) as a key: never served by its route
    with pytest.raises(TypeError, match="conj must be"):
        autotrans.permute(xs[0], (2, 0, 3, 1), conj=1)
    sq = torch.zeros((64, 64), device="cuda")
    autotrans.permute(sq, (1, 0), out=torch.empty((64, 64), device="cuda"))
    with pytest.raises(ValueError, match="overlaps"):
        autotrans.permute(sq, (1, 0), out=sq)
    cp = pytest.importorskip("cupy")
    g, c = driver.gpuarray().to_gpu(h[0]), cp.asarray(h[0])
    want = np.ascontiguousarray(np.transpose(h[0], (3, 1, 2, 0)))
    for _ in range(3):
        assert autotrans.permute(g, (3, 1, 2, 0)).get().tobytes() == want.tobytes()
        assert cp.asnumpy(autotrans.permute(c, (3, 1, 2, 0))).tobytes() == want.tobytes()
        oc = cp.empty(want.shape, cp.complex64)
        assert autotrans.permute(c, (3, 1, 2, 0), out=oc) is oc and cp.asnumpy(oc).tobytes() == want.tobytes()


def test_transposed_views_and_negative_axes():
    torch = torch_mod()
    h = host_random((70, 90), np.float16, 3)
    t = to_torch(h)
    got = torch_host(autotrans.permute(t.mT, (-1, -2)))     # a view whose strides are swapped: a copy back
    assert got.tobytes() == h.tobytes()


def test_out_and_errors():
    torch = torch_mod()
    h = host_random((4, 30, 50), np.float32, 1)
    t = to_torch(h)
    out = torch.empty((50, 4, 30), dtype=torch.float32, device="cuda")
    assert autotrans.permute(t, (2, 0, 1), out=out) is out
    assert torch_host(out).tobytes() == np.ascontiguousarray(np.transpose(h, (2, 0, 1))).tobytes()
    with pytest.raises(ValueError, match="out must have shape"):
        autotrans.permute(t, (2, 0, 1), out=torch.empty((4, 30, 50), device="cuda"))
    with pytest.raises(ValueError, match="overlaps"):
        autotrans.permute(t, (0, 1, 2), out=t)
    with pytest.raises(ValueError, match="not a permutation|out of range"):
        autotrans.permute(t, (0, 0, 1))
    with pytest.raises(ValueError, match="out of range"):
        autotrans.permute(t, (0, 1, 3))
    same = autotrans.permute(t, (0, 2, 1), conj=True)                    # a real array's conjugate: itself
    assert torch_host(same).tobytes() == np.ascontiguousarray(np.transpose(h, (0, 2, 1))).tobytes()
    with pytest.raises(ValueError, match="integers and floats"):
        autotrans.permute(t, (0, 2, 1), dtype=torch.int16)
    with pytest.raises(ValueError, match="stride"):
        autotrans.permute(t.expand(2, 4, 30, 50), (0, 1, 3, 2))          # a zero stride (broadcast)


def test_complex128_views_eight_bytes_off_permute_exactly():
    """complex128 views of a float64 buffer (8 bytes past a 16-byte boundary),
    as NumPy and CuPy allow: no kernel loads such elements whole, so tiles and
    dense transposes move them as 8-byte words."""
    cp = pytest.importorskip("cupy")
    h = np.random.default_rng(41).standard_normal(2 * 9 * 33 * 17 + 1)
    flat = cp.asarray(h)[1:].view(cp.complex128)
    assert flat.data.ptr % 16 == 8
    x = flat.reshape(9, 33, 17)
    hx = h[1:].view(np.complex128).reshape(9, 33, 17)
    for view, hview, axes in [(x[:, ::2], hx[:, ::2], (2, 1, 0)), (x, hx, (1, 2, 0)), (x[:, 1:], hx[:, 1:], (0, 2, 1))]:
        want = np.ascontiguousarray(np.transpose(hview, axes))
        assert cp.asnumpy(autotrans.permute(view, axes)).tobytes() == want.tobytes(), axes
    y = autotrans.transpose(x)               # transpose() too: the last two axes as words
    assert cp.asnumpy(y).tobytes() == np.ascontiguousarray(np.swapaxes(hx, 1, 2)).tobytes()


def test_strided_config_choice_covers_every_element_size_and_alignment():
    """strided_config() finds a runnable config for tile and rows problems of
    every element size; rows at every pointer alignment canonical() gives them
    (their element never exceeds it): these rows write runs, so flat where
    it moves the element (1, 2 or 4 bytes), rows tiles for the rest."""
    dev = driver.device()
    for e in (1, 2, 4, 8, 16):
        tile = layout.TileProblem(e, 33, 17, 17 * e * 2, 33 * e, e, (layout.Dim(3, 33 * 17 * e * 2, 33 * 17 * e),))
        assert permute_mod.strided_config(tile, 16, dev.limits).layout == "strided"
        for align in (1, 2, 4, 8, 16):
            r = min(e, align)
            rows = layout.RowsProblem(r, 7, (layout.Dim(3, 7 * r * 5, 7 * r), layout.Dim(5, 7 * r, 21 * r)))
            cfg = permute_mod.strided_config(rows, align, dev.limits)
            assert cfg.variant in (("flat", "rows") if r <= 4 else ("rows",)), cfg.key
            assert not strided_problems(cfg, rows, align), cfg.key


ND_SHIFT_CASES = [   # (shape, axes, view): fused problems of sub-word elements
    ((37, 5, 29, 41), (3, 2, 1, 0), None),               # no batch; rows of 41 elements at any alignment
    ((7, 65, 29, 61), (2, 0, 3, 1), None),               # batch dims; joined rows (65-row matrices)
    ((5, 130, 9, 41), (2, 0, 3, 1), None),               # batch dims; 130 rows: two tiles of rows
    ((61, 33, 101, 33), (1, 3, 2, 0), None),             # 33- and 61-element runs
    ((45, 2400, 61), (2, 1, 0), None),
    ((9, 70, 37), (2, 1, 0), np.s_[:, ::2]),             # every other row of a view
]


@pytest.mark.parametrize("dtype", [np.int8, np.float16])
def test_the_ndshift_untuned_rule_moves_sub_word_permutations_exactly(dtype, monkeypatch):
    """With tuning.strided.ND_SHIFT_UNTUNED (benchmarks/NOTES.md 51-52),
    permute() of 1- and 2-byte fused orders runs ndshift untuned (batch dims,
    joined rows, 61-row matrices, views; float16's 65-row matrices keep
    ndtile): bytes as NumPy's. No shipped problems here: a model that has
    them (an H100's) would take their nearest instead of the rule."""
    torch = torch_mod()
    from autotrans.api import strided_select
    from autotrans.tuning import strided as tuning_strided
    monkeypatch.setattr(tuning_strided, "ND_SHIFT_UNTUNED", True)
    monkeypatch.setattr(strided_select, "shipped_problems", lambda: [])
    picks = []
    for i, (shape, axes, view) in enumerate(ND_SHIFT_CASES):
        h = host_random(shape, dtype, 70 + i)
        t = to_torch(h)
        if view is not None:
            h, t = h[view], t[view]
        else:
            ch = autotrans.explain(shape, np.dtype(dtype).name, axes=axes)
            picks.append((ch.source, ch.config.variant if ch.config else None))
        for _ in range(2):                               # the full path, then the remembered route
            got = torch_host(autotrans.permute(t, axes))
            assert got.tobytes() == np.ascontiguousarray(np.transpose(h, axes)).tobytes(), (shape, axes, dtype)
    assert ("untuned", "ndshift") in picks, picks                 # the rule took ndshift somewhere


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_conj_of_random_permutations_of_views_matches_numpy(dtype):
    """permute(conj=True) of torch and CuPy views (random bits: NaN payloads
    included) equals numpy.conj(numpy.transpose(...)) byte for byte."""
    rng = np.random.default_rng(11)
    cp = pytest.importorskip("cupy")
    for i in range(40):
        shape, axes = case(rng, int(rng.integers(1, 5)))
        sl, big = view_of(np.empty(shape), rng)
        hb = host_random(big, dtype, 100 + i)
        want = np.ascontiguousarray(np.conj(np.transpose(hb[sl], axes)))
        got = torch_host(autotrans.permute(to_torch(hb)[sl], axes, conj=True))
        assert got.tobytes() == want.tobytes(), (shape, axes, sl, dtype)
        if i % 4 == 0:
            gc = cp.asnumpy(autotrans.permute(cp.asarray(hb)[sl], axes, conj=True))
            assert gc.tobytes() == want.tobytes(), (shape, axes, sl, dtype)
    h = host_random((2, 1024, 768), dtype, 5)                              # a dense transpose, big enough
    got = torch_host(autotrans.permute(to_torch(h), (0, 2, 1), conj=True))
    assert got.tobytes() == np.ascontiguousarray(np.conj(np.transpose(h, (0, 2, 1)))).tobytes()


def test_permute_runs_the_config_tuned_for_its_problem(tmp_path):
    """A strided problem tuned into the cache (tune_problem, on a chosen
    candidate that is not the untuned pick) is what permute() runs from then on."""
    from autotrans.results.store import ResultCache
    from autotrans.tuning.strided import strided_candidates, tune_problem
    torch = torch_mod()
    h = host_random((300, 800), np.float32, 9)
    t = to_torch(h)[:, 12:712]                                           # 16-byte aligned
    dev = driver.device_info(driver.device().ordinal)
    p = layout.canonical((300, 700), (3200, 4), 4, (1, 0), 16)
    untuned = permute_mod.strided_config(p, 16, dev.limits)
    other = next(c for c in strided_candidates(p, dev.limits) if c != untuned)
    tune_problem(p, cache=ResultCache(), configs=[other], progress=False)
    launch.forget()
    ch = permute_mod.strided_choice(p, 16, "none", dev.id.text, dev.limits)
    assert (ch.config, ch.source) == (other, "tuned")
    got = torch_host(autotrans.permute(t, (1, 0)))
    assert got.tobytes() == np.ascontiguousarray(h[:, 12:712].T).tobytes()


def test_tune_with_axes_stores_what_permute_runs(tmp_path):
    """autotrans.tune(shape, dtype, axes=...): a strided problem is tuned under
    its problem key (explain then says "tuned"), a permutation that fuses into
    a dense transpose under the transpose's key ("exact"), a copy not at all;
    permute() then runs them bit for bit."""
    torch = torch_mod()
    rec = autotrans.tune((8, 300, 12, 64), "float16", axes=(0, 2, 1, 3), progress=False, reps=3)
    assert rec is not None and rec.best.layout == "strided" and rec.failures == ()
    assert autotrans.explain((8, 300, 12, 64), "float16", axes=(0, 2, 1, 3)).source == "tuned"
    rec = autotrans.tune((6, 200, 300), "float32", axes=(0, 2, 1), progress=False, reps=3)
    assert rec.shape == (6, 200, 300) and rec.best.layout == "dense"
    assert autotrans.explain((6, 200, 300), "float32", axes=(0, 2, 1)).source == "exact"
    assert autotrans.tune((6, 1, 300), "float32", axes=(1, 0, 2)) is None
    launch.forget()
    h = host_random((8, 300, 12, 64), np.float16, 4)
    got = torch_host(autotrans.permute(to_torch(h), (0, 2, 1, 3)))
    assert got.tobytes() == np.ascontiguousarray(h.transpose(0, 2, 1, 3)).tobytes()
    h = host_random((6, 200, 300), np.float32, 5)
    got = torch_host(autotrans.permute(to_torch(h), (0, 2, 1)))
    assert got.tobytes() == np.ascontiguousarray(h.transpose(0, 2, 1)).tobytes()


def test_a_tuned_cast_is_what_permute_runs():
    """tune_problem(cast=) verifies every candidate of the cast against its
    reference and stores the winner under the cast's key; permute(dtype=)
    runs it from then on (another cast of the same sizes stays untuned)."""
    from autotrans.kernels.strided import as_strided
    from autotrans.results.store import ResultCache
    from autotrans.tuning.strided import strided_candidates, tune_problem
    torch = torch_mod()
    dev = driver.device_info(driver.device().ordinal)
    p = as_strided(layout.canonical((300, 700), (2800, 4), 4, (1, 0), 16, out_itemsize=2))
    cfgs = strided_candidates(p, dev.limits, cast="f32>bf16")
    rec = tune_problem(p, cache=ResultCache(), progress=False, reps=3, cast="f32>bf16")
    assert rec.failures == () and {c.config.generic().key for c in rec.candidates} == {c.key for c in cfgs}
    launch.forget()
    ch = permute_mod.strided_choice(p, 16, "none", dev.id.text, dev.limits, cast="f32>bf16")
    assert (ch.config, ch.source) == (rec.best, "tuned")
    f16 = permute_mod.strided_choice(p, 16, "none", dev.id.text, dev.limits, cast="f32>f16")
    assert f16.source in ("untuned", "nearest") and f16.config.cast == "f32>f16"     # never the bf16 record
    x = torch.randint(-1000, 1000, (300, 700), device="cuda").float() / 7
    assert torch.equal(autotrans.permute(x, (1, 0), dtype=torch.bfloat16), x.T.contiguous().to(torch.bfloat16))


def test_fused_cast_tiles_verify_and_permute_exactly():
    """A cast's odd (2, 1, 0) order runs as fused tiles (an NdTileProblem of
    ndtile's cast configs, session 41): every candidate verifies bit-exactly in
    tune_problem, and permute(dtype=) untuned equals torch's cast of the
    permutation, from float32 and from float64."""
    from autotrans.tuning.strided import strided_candidates, tune_problem
    torch = torch_mod()
    dev = driver.device_info(driver.device().ordinal)
    size = {"float64": 8, "float32": 4, "bfloat16": 2}
    for src, dst, cast in (("float32", "bfloat16", "f32>bf16"), ("float64", "float32", "f64>f32")):
        e, eo = size[src], size[dst]
        p = permute_mod.as_strided(layout.canonical((37, 61, 45), layout.c_strides((37, 61, 45), e), e,
                                                    (2, 1, 0), 16, out_itemsize=eo), 16, cast)
        assert isinstance(p, layout.NdTileProblem) and p.out_elem == eo, p
        cfgs = strided_candidates(p, dev.limits, cast=cast)
        rec = tune_problem(p, save=False, progress=False, reps=3, cast=cast)
        assert rec.failures == () and {c.config.generic().key for c in rec.candidates} == {c.key for c in cfgs}
        assert {c.variant for c in cfgs} == {"ndtile"}
        x = (torch.randn((257, 129, 263), device="cuda") * 100).to(getattr(torch, src))
        y = autotrans.permute(x, (2, 1, 0), dtype=getattr(torch, dst))
        assert torch.equal(y, x.permute(2, 1, 0).contiguous().to(getattr(torch, dst))), cast


def test_a_tuned_conjugate_is_what_permute_runs():
    """tune_problem(epilogue=) verifies every conjugating candidate (sign bits
    of the imaginary parts flipped) and stores the winner under the
    epilogue's key; permute(conj=True) runs it from then on, bit for bit
    NumPy's conjugate transpose, while the plain permutation stays untuned."""
    from autotrans.results.store import ResultCache
    from autotrans.tuning.strided import strided_candidates, tune_problem
    torch = torch_mod()
    dev = driver.device_info(driver.device().ordinal)
    p = permute_mod.as_strided(layout.canonical((300, 700), (5600, 8), 8, (1, 0), 16), 16)
    cfgs = strided_candidates(p, dev.limits, epilogue="conj32")
    rec = tune_problem(p, cache=ResultCache(), progress=False, reps=3, epilogue="conj32")
    assert rec.failures == () and {c.config.generic().key for c in rec.candidates} == {c.key for c in cfgs}
    assert rec.best.epilogue == "conj32"
    launch.forget()
    ch = permute_mod.strided_choice(p, 16, "conj32", dev.id.text, dev.limits)
    assert (ch.config, ch.source) == (rec.best, "tuned")
    plain = permute_mod.strided_choice(p, 16, "none", dev.id.text, dev.limits)
    assert plain.source in ("untuned", "nearest") and plain.config.epilogue == "none"  # never the conj record
    h = host_random((300, 700), np.complex64, 11)
    got = torch_host(autotrans.permute(to_torch(h), (1, 0), conj=True))
    assert got.tobytes() == np.ascontiguousarray(np.conj(h.T)).tobytes()


CAST_CASES = [("float32", "bfloat16"), ("float32", "float16"), ("bfloat16", "float32"), ("float16", "float32"),
              ("float64", "float32"), ("float32", "float64"), ("float64", "bfloat16"), ("float16", "bfloat16"),
              ("int32", "int8"), ("int8", "int32"), ("uint8", "int64"), ("int64", "uint16")]
WORD = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def torch_bits(t):
    torch = torch_mod()
    torch.cuda.synchronize()
    return t.contiguous().view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]) \
        .cpu().numpy().view(WORD[t.element_size()])


@pytest.mark.parametrize("src, dst", CAST_CASES)
def test_cast_permutations_match_the_numpy_reference(src, dst):
    """permute(x, axes, dtype=D) of torch views (random bits: NaNs, infinities
    and denormals included) equals the NumPy/ml_dtypes reference of astype
    after numpy.transpose, bit for bit; the result has dtype D; out= of D works."""
    from autotrans.kernels import config
    torch = torch_mod()
    cast = config.cast_for(src, dst)
    ref = layout.cast_reference(cast)
    es = np.dtype(WORD[config.CAST_SIZES[cast][0]]).itemsize
    rng = np.random.default_rng(len(src) * 7 + len(dst))
    for i in range(12):
        shape, axes = case(rng, int(rng.integers(1, 5)))
        sl, big = view_of(np.empty(shape), rng)
        bits = host_random(big, WORD[es], 200 + i)
        want = ref(np.ascontiguousarray(np.transpose(bits[sl], axes)))
        tb = torch.from_numpy(bits.view({1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}[es]).copy()).cuda()
        x = tb.view(getattr(torch, src))[sl]
        y = autotrans.permute(x, axes, dtype=getattr(torch, dst))
        assert y.dtype == getattr(torch, dst) and tuple(y.shape) == want.shape
        assert torch_bits(y).tobytes() == want.tobytes(), (src, dst, shape, axes, sl)
    y2 = autotrans.permute(x, axes, dtype=dst)                       # by name
    assert torch_bits(y2).tobytes() == want.tobytes()
    o = torch.empty(want.shape, dtype=getattr(torch, dst), device="cuda")
    assert autotrans.permute(x, axes, dtype=dst, out=o) is o and torch_bits(o).tobytes() == want.tobytes()


def f32_rounding_cases() -> np.ndarray:
    """float32 bits at every float16 rounding point: each exponent and sign,
    the bits dropped (13 for normal results, up to 24 for subnormal ones) just
    below, at and above half, under even and odd kept bits; NaN payloads."""
    out = []
    for sh in range(13, 25):
        half = 1 << (sh - 1)
        for upper in (0, 1 << sh, 2 << sh, 3 << sh, 0x7FFFFF & ~((1 << sh) - 1)):
            out += [(upper | low) & 0x7FFFFF for low in (half - 1, half, half + 1, 0, (1 << sh) - 1)]
    mant = np.unique(np.array(out + [1, 0x400000, 0x7FFFFF], np.uint32))
    bits = (np.arange(512, dtype=np.uint32)[:, None] << 23) | mant[None, :]   # sign and exponent, mantissas
    return bits.ravel()


@pytest.mark.parametrize("src", ["float32", "bfloat16"])
def test_casts_to_float16_round_as_numpy_at_every_boundary(src):
    """The device's float -> float16 conversion (cvt.rn.f16.f32, the NaN rules
    apart) on every rounding point of float32 (f32_rounding_cases), and on
    every bfloat16: each result bit for bit as NumPy / ml_dtypes astype."""
    from autotrans.kernels import config
    torch = torch_mod()
    cast = config.cast_for(src, "float16")
    bits = f32_rounding_cases() if src == "float32" else np.arange(1 << 16, dtype=np.uint16)
    n = 257                                                          # odd rows: shift tiles and edge paths
    bits = np.resize(bits, (-(-bits.size // n)) * n).reshape(-1, n)
    want = layout.cast_reference(cast)(np.ascontiguousarray(bits.T))
    signed = bits.view(np.int32 if bits.itemsize == 4 else np.int16)
    x = torch.from_numpy(signed.copy()).cuda().view(getattr(torch, src))
    y = autotrans.permute(x, (1, 0), dtype=torch.float16)
    assert torch_bits(y).tobytes() == want.tobytes()


def test_cast_transpose_of_a_large_matrix_and_errors():
    torch = torch_mod()
    from autotrans.kernels import config
    x = torch.randn(3000, 5000, device="cuda")
    y = autotrans.permute(x, (1, 0), dtype=torch.bfloat16)
    want = layout.cast_reference(config.cast_for("float32", "bfloat16"))(
        np.ascontiguousarray(x.cpu().numpy().T).view(np.uint32))
    assert torch_bits(y).tobytes() == want.tobytes()
    cp = pytest.importorskip("cupy")
    cx = cp.asarray(x.cpu().numpy())
    yc = autotrans.permute(cx, (1, 0), dtype="float16")
    assert yc.dtype == np.float16 and cp.asnumpy(yc).tobytes() == x.cpu().numpy().T.astype(np.float16).tobytes()
    with pytest.raises(ValueError, match="integers and floats"):
        autotrans.permute(x, (1, 0), dtype=torch.int32)
    with pytest.raises(ValueError, match="out must have shape"):
        autotrans.permute(x, (1, 0), dtype=torch.float16, out=torch.empty(5000, 3000, device="cuda"))


def test_permute_captures_a_strided_problem_it_ran_without_a_tuned_result(tmp_path, monkeypatch):
    """With AUTOTRANS_CAPTURE, permute() appends the strided problem it ran
    untuned (once), and not one it has a tuned result for; `autotrans tune
    --from` reads it back as the problem permute() runs."""
    from autotrans.api import capture
    from autotrans.results.store import ResultCache
    from autotrans.tuning.strided import tune_problem
    path = tmp_path / "met.jsonl"
    monkeypatch.setenv(capture.ENV, str(path))
    monkeypatch.setattr(capture, "_seen", set())
    h = host_random((300, 800), np.float32, 3)
    for _ in range(2):
        got = torch_host(autotrans.permute(to_torch(h)[:, 12:712], (1, 0)))
        assert got.tobytes() == np.ascontiguousarray(h[:, 12:712].T).tobytes()
    want = permute_mod.view_problem((300, 800), "float32", (1, 0), (12, 712))
    assert capture.read_problems(path) == [want]
    other = permute_mod.view_problem((300, 800), "float32", (1, 0), (16, 716))
    tune_problem(other[0], cache=ResultCache(), progress=False, reps=3)
    launch.forget()
    autotrans.permute(to_torch(h)[:, 16:716], (1, 0))
    assert capture.read_problems(path) == [want]                    # tuned: not captured


@pytest.mark.parametrize("shape, dtype, axes", [((2, 96, 3, 67), np.float16, (0, 2, 1, 3)),
                                                ((61, 37, 67), np.int8, (1, 0, 2)),
                                                ((9, 50, 64), np.float32, (1, 0, 2)),
                                                ((5, 6, 7, 9), np.float64, (3, 1, 0, 2)),
                                                ((7, 9, 11, 13), np.int8, (3, 1, 0, 2))])
def test_a_strided_problem_runs_its_kernel_compiled_for_the_launch_once_built(shape, dtype, axes, monkeypatch):
    """AUTOTRANS_SPECIALISE: an untuned strided problem runs its generic
    kernel and queues the one compiled for its launch (KernelConfig.
    fixed_args); once built, permute() loads and runs that one: bytes as
    NumPy's (flat, rows, ndtile and ndshift), and the same problem at
    another pointer alignment too."""
    from autotrans.api import specialise
    from autotrans.kernels.strided import launch_args
    monkeypatch.setenv(specialise.ENV, "1")
    monkeypatch.setattr(specialise, "_asked", set())   # earlier tests' builds count towards MAX_BUILDS
    from autotrans.api import strided_select
    monkeypatch.setattr(strided_select, "shipped_problems", lambda: [])
    torch = torch_mod()
    h = host_random(shape, dtype, 90)
    want = np.ascontiguousarray(np.transpose(h, axes)).tobytes()
    ch = autotrans.explain(shape, np.dtype(dtype).name, axes=axes)
    assert ch.source != "tuned" and "compiled for this launch" in str(ch), str(ch)
    fixed = ch.config.fixed_to_args(launch_args(ch.config, ch.problem)[1])
    assert torch_host(autotrans.permute(to_torch(h), axes)).tobytes() == want
    assert specialise.wait(300) and specialise.ready(fixed, driver.device().arch)
    assert torch_host(autotrans.permute(to_torch(h), axes)).tobytes() == want
    assert any(k == fixed.key for _, k in launch._kernels), "the fixed kernel was not loaded"
    flat = to_torch(host_random((1 + h.size,), dtype, 91))
    view = flat[1:].view(shape)                          # an element past a 16-byte boundary
    got = torch_host(autotrans.permute(view, axes)).tobytes()
    assert got == np.ascontiguousarray(np.transpose(torch_host(flat)[1:].reshape(shape), axes)).tobytes()
