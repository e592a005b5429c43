"""transpose() on the GPU: right answers, and a clear TypeError/ValueError for
every kind of bad input; a cache that cannot be used never stops a transpose."""
import warnings

import numpy as np
import pytest

import autotrans
from conftest import make_record
from autotrans.api import launch as dispatch
from autotrans.backend import cuda as driver
from autotrans.results.store import CacheKey, ResultCache
from autotrans.core.problem import as_bmn
from autotrans.kernels.config import KernelConfig
from autotrans.tuning.space import space_id

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTRANS_CACHE_DIR", str(tmp_path / "cache"))
    dispatch.forget()
    yield tmp_path / "cache"
    dispatch.forget()


def ga():
    return driver.gpuarray()


def host_random(shape, dtype, seed=0):
    raw = np.random.default_rng(seed).integers(0, 256, int(np.prod(shape)) * np.dtype(dtype).itemsize,
                                               dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def expect(x):
    return np.ascontiguousarray(np.swapaxes(x, -1, -2))


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.complex64, np.complex128, "V16"])
@pytest.mark.parametrize("shape", [(1, 1), (1, 1000), (999, 1), (3, 1, 77), (3, 77, 1), (257, 131), (4, 96, 160), (1024, 2048)])
def test_right_answers(shape, dtype):
    x = host_random(shape, dtype)
    y = autotrans.transpose(ga().to_gpu(x))
    assert y.shape == expect(x).shape and y.dtype == x.dtype
    assert y.get().tobytes() == expect(x).tobytes()


def test_out_and_stream():
    x = host_random((300, 500), np.float32)
    out = ga().empty((500, 300), np.float32)
    stream = driver.cuda().Stream()
    assert autotrans.transpose(ga().to_gpu(x), out=out, stream=stream) is out
    stream.synchronize()
    assert out.get().tobytes() == expect(x).tobytes()


def test_unaligned_pointers_still_give_the_right_answer():
    flat = host_random((1 + 64 * 96,), np.float32)
    base = ga().to_gpu(flat)
    view = base[1:].reshape(64, 96)        # 4 bytes past a 16-byte boundary
    assert view.ptr % 16 == 4
    assert autotrans.transpose(view).get().tobytes() == expect(flat[1:].reshape(64, 96)).tobytes()


def test_new_outputs_are_ordinary_gpuarrays():
    x = np.random.default_rng(0).random((70, 30), dtype=np.float32)
    y = autotrans.transpose(ga().to_gpu(x))
    z = autotrans.transpose(ga().to_gpu(x))
    assert isinstance(y, ga().GPUArray) and y.flags.c_contiguous and y.strides == (280, 4)
    assert y.ptr != z.ptr and y.get().tobytes() == z.get().tobytes() == expect(x).tobytes()
    assert (y + 0).get().tobytes() == y.get().tobytes()


def test_a_second_thread_can_transpose():
    x = host_random((300, 200), np.float32)
    g = ga().to_gpu(x)
    got, errors = [], []

    def work():
        try:
            y = autotrans.transpose(g)              # PyCUDA has no context on this thread
            with driver.pycuda_current():
                got.append(y.get().tobytes())
        except Exception as exc:                    # noqa: BLE001 - asserted below
            errors.append(exc)

    import threading
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors and got == [expect(x).tobytes()]


def test_zero_size_dimensions():
    for shape in [(0, 5), (5, 0), (3, 0, 4), (0, 4, 4)]:
        y = autotrans.transpose(ga().empty(shape, np.float32))
        assert y.shape == shape[:-2] + (shape[-1], shape[-2])


@pytest.mark.parametrize("make, err, match", [
    (lambda: ga().to_gpu(np.zeros((8, 8), np.float32))[:, ::2], ValueError, "non-contiguous"),
    (lambda: ga().to_gpu(np.zeros((8, 6), np.float32)).T, ValueError, "Fortran"),
    (lambda: ga().to_gpu(np.zeros(8, np.float32)), ValueError, "2-D"),
    (lambda: ga().to_gpu(np.zeros((2, 2, 2, 2), np.float32)), ValueError, "4-D"),
    (lambda: ga().empty((4, 4), "V3"), TypeError, "itemsize 3"),
    (lambda: np.zeros((4, 4), np.float32), TypeError, "NumPy array"),
])
def test_bad_input_is_refused_clearly(make, err, match):
    with pytest.raises(err, match=match):
        autotrans.transpose(make())


def test_bad_out_is_refused_clearly():
    x = ga().to_gpu(host_random((64, 32), np.float32))
    with pytest.raises(ValueError, match="shape"):
        autotrans.transpose(x, out=ga().empty((64, 32), np.float32))
    with pytest.raises(ValueError, match="dtype"):
        autotrans.transpose(x, out=ga().empty((32, 64), np.int32))
    with pytest.raises(TypeError, match="GPUArray"):
        autotrans.transpose(x, out=np.empty((32, 64), np.float32))
    square = ga().to_gpu(host_random((64, 64), np.float32))
    with pytest.raises(ValueError, match="overlaps"):
        autotrans.transpose(square, out=square)
    big = ga().empty((2 * 64 * 64,), np.float32)
    src = big[: 64 * 64].reshape(64, 64)
    with pytest.raises(ValueError, match="overlaps"):
        autotrans.transpose(src, out=big[64 * 32: 64 * 32 + 64 * 64].reshape(64, 64))


def test_stored_config_that_cannot_run_here_falls_back(own_cache):
    dev = driver.device()
    big = KernelConfig("vec", 4, 256, 256, 1024, 16, 4, 0, "xor", "col")
    assert big.smem_bytes > dev.smem_optin
    rec = make_record((512, 512), 4, dev.id.text, n_candidates=1)
    rec["config"], rec["key"] = big.to_dict(), big.key
    ResultCache().put(CacheKey(dev.id.text, space_id(), (512, 512), 4), rec)
    x = host_random((512, 512), np.float32)
    with pytest.warns(RuntimeWarning, match="cannot run here"):
        y = autotrans.transpose(ga().to_gpu(x))
    assert y.get().tobytes() == expect(x).tobytes()


def test_unusable_cache_folder_never_stops_transposes(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("AUTOTRANS_CACHE_DIR", str(blocker / "cache"))
    dispatch.forget()
    x = host_random((300, 200), np.float32)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert autotrans.transpose(ga().to_gpu(x)).get().tobytes() == expect(x).tobytes()
    with pytest.warns(Warning, match="not|cannot"):
        res = autotrans.tune((256, 256), np.float32, progress=False)
    assert res.best and ResultCache().get(CacheKey(driver.device().id.text, space_id(),
                                                   as_bmn((256, 256)), 4)) is None


@pytest.mark.parametrize("dtype, shape", [(np.float32, (333, 517)), (np.int8, (3, 700, 1281)),
                                          (np.float16, (1021, 1031)), (np.complex128, (129, 67))])
def test_specialised_untuned_shapes_run_their_fixed_kernel_exactly(monkeypatch, dtype, shape):
    """AUTOTRANS_SPECIALISE: the first call runs the generic kernel and queues
    the fixed one; once it is built, calls run it, bit-exact on every element
    size and at an unaligned pointer too."""
    from autotrans.api import specialise
    monkeypatch.setenv(specialise.ENV, "1")
    monkeypatch.setattr(specialise, "_asked", set())   # earlier tests' builds count towards MAX_BUILDS
    x = host_random(shape, dtype, seed=5)
    e, bmn = np.dtype(dtype).itemsize, as_bmn(shape)
    first = dispatch.kernel_for(shape, e)
    assert not first.cfg.fixed
    assert autotrans.transpose(ga().to_gpu(x)).get().tobytes() == expect(x).tobytes()
    assert specialise.wait(300)
    fixed = dispatch.kernel_for(shape, e)
    assert fixed.cfg.fixed == "x".join(map(str, bmn)) and fixed.cfg.generic() == first.cfg
    assert autotrans.transpose(ga().to_gpu(x)).get().tobytes() == expect(x).tobytes()
    flat = host_random((1 + x.size,), dtype, seed=6)
    view = ga().to_gpu(flat)[1:].reshape(shape)        # e bytes past a 16-byte boundary
    assert autotrans.transpose(view).get().tobytes() == expect(flat[1:].reshape(shape)).tobytes()


@pytest.mark.parametrize("dtype, shape", [(np.float32, (257, 13387)), (np.int8, (100, 20003)),
                                          (np.float64, (2, 129, 6553)), (np.float16, (301, 6553))])
def test_few_long_odd_rows_run_the_wide_tile_exactly(monkeypatch, dtype, shape):
    """Untuned, few long rows that are not 16-byte aligned run the wide short
    tile (its generic kernel, then its fixed one), bit-exact, at an unaligned
    pointer too; tune() verifies and times its wide candidates."""
    from autotrans.api import specialise
    monkeypatch.setenv(specialise.ENV, "0")
    x = host_random(shape, dtype, seed=7)
    e = np.dtype(dtype).itemsize
    cfg = dispatch.kernel_for(shape, e).cfg
    assert cfg.variant == "short" and cfg.tile_rows > 32, cfg.key
    assert autotrans.transpose(ga().to_gpu(x)).get().tobytes() == expect(x).tobytes()
    flat = host_random((1 + x.size,), dtype, seed=8)
    view = ga().to_gpu(flat)[1:].reshape(shape)        # e bytes past a 16-byte boundary
    assert autotrans.transpose(view).get().tobytes() == expect(flat[1:].reshape(shape)).tobytes()
    res = autotrans.tune(shape, dtype, progress=False, reps=3)
    wide = [c["key"] for c in res.candidates if KernelConfig.from_key(c["key"]).variant == "short"
            and KernelConfig.from_key(c["key"]).tile_rows > 32]
    assert wide and not [f for f in res.failures if f["key"].startswith("short:")], res.failures
    assert autotrans.transpose(ga().to_gpu(x)).get().tobytes() == expect(x).tobytes()


@pytest.mark.parametrize("dtype, shape", [(np.float32, (13387, 257)), (np.int8, (20003, 301)),
                                          (np.float64, (2, 6553, 129)), (np.float16, (6553, 333))])
def test_few_long_odd_columns_tune_the_narrow_wide_tiles_exactly(monkeypatch, dtype, shape):
    """Untuned, few long columns that are not 16-byte aligned run the narrow
    wide tile (1- to 4-byte elements) bit-exactly; tune() verifies and times
    the narrow wide candidates (no failures); the tuned transpose is
    bit-exact, at an unaligned pointer too."""
    from autotrans.api import specialise
    monkeypatch.setenv(specialise.ENV, "0")
    x = host_random(shape, dtype, seed=9)
    e = np.dtype(dtype).itemsize
    cfg = dispatch.kernel_for(shape, e).cfg
    assert (cfg.variant == "narrow" and cfg.tile_cols > 32) == (e <= 4), cfg.key
    assert autotrans.transpose(ga().to_gpu(x)).get().tobytes() == expect(x).tobytes()
    res = autotrans.tune(shape, dtype, progress=False, reps=3)
    wide = [c["key"] for c in res.candidates if KernelConfig.from_key(c["key"]).variant == "narrow"
            and KernelConfig.from_key(c["key"]).tile_cols > 32]
    assert len(wide) >= 4 and not [f for f in res.failures if f["key"].startswith("narrow:")], res.failures
    assert autotrans.transpose(ga().to_gpu(x)).get().tobytes() == expect(x).tobytes()
    flat = host_random((1 + x.size,), dtype, seed=10)
    view = ga().to_gpu(flat)[1:].reshape(shape)        # e bytes past a 16-byte boundary
    assert autotrans.transpose(view).get().tobytes() == expect(flat[1:].reshape(shape)).tobytes()
