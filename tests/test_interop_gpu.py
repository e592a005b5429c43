"""transpose() on every kind of GPU array: inputs and outputs of each kind
bit-exact, framework-only dtypes by element size, streams (producer on A,
transpose on B, no host synchronize between), eight threads at once, out= of
another kind, clear errors for what cannot be transposed, and the first-call
cost of an unseen shape. A framework that is not installed is skipped."""
import threading

import numpy as np
import pytest

import autotrans
from autotrans.api import DeviceArray, launch
from autotrans.backend import cuda as driver
from autotrans.backend import driver as cu

pytestmark = pytest.mark.gpu

SHAPES = [(1, 1), (257, 131), (4, 96, 160), (1024, 2048)]
SLEEP_CYCLES = 200_000_000          # ~0.1 s of a busy GPU: a race would show


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTRANS_CACHE_DIR", str(tmp_path / "cache"))
    launch.forget()
    yield
    launch.forget()


def host_random(shape, dtype=np.float32, seed=0):
    raw = np.random.default_rng(seed).integers(0, 256, int(np.prod(shape)) * np.dtype(dtype).itemsize,
                                               dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def expect(x):
    return np.ascontiguousarray(np.swapaxes(x, -1, -2))


def torch_bytes(t):
    """A CUDA tensor's bytes on the host (any dtype, bfloat16 and float8 too)."""
    import torch
    return t.contiguous().view(torch.uint8).cpu().numpy().tobytes()


# -- inputs and outputs of every kind ----------------------------------------------

TORCH_DTYPES = ["float32", "float16", "bfloat16", "int8", "complex64", "float64", "float8_e4m3fn",
                "float8_e5m2", "bool"]


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_torch_in_torch_out(shape, dtype):
    torch = pytest.importorskip("torch")
    if not hasattr(torch, dtype):
        pytest.skip(f"torch has no {dtype}")
    dt = getattr(torch, dtype)
    e = torch.empty((), dtype=dt).element_size()
    raw = torch.from_numpy(host_random(shape + (e,), np.uint8)).cuda()
    if dt == torch.bool:
        raw &= 1                                         # torch's own copy normalises other bytes
    x = raw.view(dt).reshape(shape)
    y = autotrans.transpose(x)
    assert type(y) is torch.Tensor and y.dtype == dt and y.device == x.device and y.is_contiguous()
    assert tuple(y.shape) == shape[:-2] + (shape[-1], shape[-2])
    torch.cuda.current_stream().synchronize()
    assert torch_bytes(y) == torch_bytes(x.transpose(-1, -2))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.complex128])
@pytest.mark.parametrize("shape", SHAPES)
def test_cupy_in_cupy_out(shape, dtype):
    cupy = pytest.importorskip("cupy")
    h = host_random(shape, dtype)
    y = autotrans.transpose(cupy.asarray(h))
    assert type(y) is cupy.ndarray and y.dtype == h.dtype and y.flags.c_contiguous
    assert cupy.asnumpy(y).tobytes() == expect(h).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.uint16, np.complex64])
def test_numba_in_numba_out(dtype):
    ncuda = pytest.importorskip("numba.cuda")
    h = host_random((257, 131), dtype)
    y = autotrans.transpose(ncuda.to_device(h))
    assert ncuda.is_cuda_array(y) and type(y).__module__.startswith("numba")
    assert y.copy_to_host().tobytes() == expect(h).tobytes()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8"])
def test_jax_in_jax_out(dtype):
    jax = pytest.importorskip("jax")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX sees no GPU")
    import jax.numpy as jnp
    h = host_random((257, 131), np.uint16 if dtype == "bfloat16" else dtype)
    x = jax.device_put(jnp.asarray(h), gpu)
    if dtype == "bfloat16":
        x = jax.lax.bitcast_convert_type(x, jnp.bfloat16)
    y = autotrans.transpose(x)
    assert isinstance(y, jax.Array) and y.dtype == x.dtype and y.shape == (131, 257)
    got = np.asarray(jax.lax.bitcast_convert_type(y, jnp.uint16) if dtype == "bfloat16" else y)
    assert got.tobytes() == expect(h).tobytes()
    assert (y + 0).shape == (131, 257)                  # and JAX can compute with it


def test_pycuda_in_pycuda_out_is_unchanged():
    ga = driver.gpuarray()
    h = host_random((300, 500), np.float32)
    y = autotrans.transpose(ga.to_gpu(h))
    assert isinstance(y, ga.GPUArray) and y.get().tobytes() == expect(h).tobytes()


class CAIOnly:
    """Another producer: only __cuda_array_interface__ (v3, with its stream)."""

    def __init__(self, owner, stream=None):
        d = dict(owner.__cuda_array_interface__)
        d["version"] = 3
        d["stream"] = stream
        self.owner, self.__cuda_array_interface__ = owner, d


class DLPackOnly:
    def __init__(self, owner):
        self.owner = owner

    def __dlpack_device__(self):
        return self.owner.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None):
        return self.owner.__dlpack__(stream=stream)


def test_other_producers_get_a_device_array():
    torch = pytest.importorskip("torch")
    h = host_random((257, 131), np.float32)
    t = torch.from_numpy(h).cuda()
    torch.cuda.synchronize()
    for wrapped in (CAIOnly(t), DLPackOnly(t)):
        y = autotrans.transpose(wrapped)
        assert isinstance(y, DeviceArray) and y.shape == (131, 257)
        assert y.get().tobytes() == expect(h).tobytes()
        cai = y.__cuda_array_interface__
        assert cai["version"] == 3 and cai["stream"] in (1, y.stream) and cai["data"][0] == y.ptr
        back = torch.from_dlpack(y)                      # and it exports DLPack
        assert torch_bytes(back) == expect(h).tobytes()


# -- streams -----------------------------------------------------------------------

def torch_late_on_stream_a(torch, h):
    """(x, A, B, src): two new torch streams and a tensor x that stream A fills
    with src (= h) only late, after a GPU sleep; src must outlive the copy."""
    src = torch.from_numpy(h).cuda()
    x = torch.zeros_like(src)
    a, b = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(a):
        torch.cuda._sleep(SLEEP_CYCLES)
        x.copy_(src)                                     # ready only late on stream A
    return x, a, b, src


def test_torch_producer_on_stream_a_transpose_on_stream_b():
    torch = pytest.importorskip("torch")
    h = host_random((2048, 1024), np.float32)
    x, a, b, _src = torch_late_on_stream_a(torch, h)
    with torch.cuda.stream(a):                           # x's producer: the current stream, A
        y = autotrans.transpose(x, stream=b)             # B must wait for A: an event, no host sync
        z = autotrans.transpose(x, stream=b.cuda_stream)  # a raw handle too
    b.synchronize()
    assert torch_bytes(y) == torch_bytes(z) == expect(h).tobytes()


def test_torch_input_runs_on_the_current_stream():
    torch = pytest.importorskip("torch")
    h = host_random((2048, 1024), np.float32)
    src = torch.from_numpy(h).cuda()
    x = torch.zeros_like(src)
    a = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(a):
        torch.cuda._sleep(SLEEP_CYCLES)
        x.copy_(src)
        y = autotrans.transpose(x)                       # on A, after the copy
        out = y.clone()                                  # torch work on A after ours (bit copy)
    a.synchronize()
    assert torch_bytes(out) == expect(h).tobytes()


def test_cupy_producer_on_stream_a_transpose_on_stream_b():
    cupy = pytest.importorskip("cupy")
    h = host_random((2048, 1024), np.float32)
    src = cupy.asarray(h)
    a, b = cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True)
    cupy.cuda.Device().synchronize()
    with a:
        x = cupy.zeros_like(src)
        _spin(cupy)
        x[...] = src
        y = autotrans.transpose(x, stream=b)
    b.synchronize()
    assert cupy.asnumpy(y).tobytes() == expect(h).tobytes()


def _spin(cupy):
    """Keep the current CuPy stream busy for a while (a clock64 spin kernel)."""
    k = cupy.RawKernel(r'''extern "C" __global__ void spin(long long n) {
        long long t = clock64(); while (clock64() - t < n) {} }''', "spin")
    k((1,), (1,), (np.int64(SLEEP_CYCLES),))


def test_cai_v3_stream_is_waited_for():
    torch = pytest.importorskip("torch")
    h = host_random((2048, 1024), np.float32)
    x, a, b, _src = torch_late_on_stream_a(torch, h)
    y = autotrans.transpose(CAIOnly(x, stream=a.cuda_stream), stream=b)
    assert y.stream == b.cuda_stream and y.__cuda_array_interface__["stream"] == b.cuda_stream
    assert y.get().tobytes() == expect(h).tobytes()       # get() waits for B only


# -- threads -----------------------------------------------------------------------

def test_eight_threads_a_thousand_calls_each():
    ga = driver.gpuarray()
    torch = None
    try:
        import torch
    except ImportError:
        pass
    cases = []
    for i, (shape, dtype) in enumerate([((64, 96), np.float32), ((33, 7), np.int8), ((2, 40, 24), np.float16),
                                        ((128, 16), np.complex128), ((5, 300), np.float64)]):
        h = host_random(shape, dtype, seed=i)
        cases.append((ga.to_gpu(h), expect(h).tobytes(), torch.from_numpy(h).cuda() if torch else None))
    if torch:
        torch.cuda.synchronize()
    errors = []

    def work(t):
        try:
            for i in range(1000):
                g, want, tt = cases[(i + t) % len(cases)]
                if tt is not None and i % 2:
                    y = autotrans.transpose(tt)
                    torch.cuda.current_stream().synchronize()
                    got = y.cpu().numpy().tobytes()
                else:
                    y = autotrans.transpose(g)
                    with driver.pycuda_current():
                        got = y.get().tobytes()
                if got != want:
                    errors.append(f"thread {t} call {i}: wrong bytes")
                    return
        except Exception as exc:             # noqa: BLE001 - reported below
            errors.append(f"thread {t}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[:5]


# -- out= across kinds ---------------------------------------------------------------

def test_out_of_another_kind():
    torch = pytest.importorskip("torch")
    cupy = pytest.importorskip("cupy")
    ga = driver.gpuarray()
    h = host_random((300, 200), np.float32)
    want = expect(h).tobytes()
    o1 = cupy.empty((200, 300), np.float32)
    assert autotrans.transpose(torch.from_numpy(h).cuda(), out=o1) is o1
    torch.cuda.synchronize()
    assert cupy.asnumpy(o1).tobytes() == want
    o2 = ga.empty((200, 300), np.float32)
    assert autotrans.transpose(cupy.asarray(h), out=o2) is o2
    cupy.cuda.Device().synchronize()
    assert o2.get().tobytes() == want
    o3 = torch.empty((200, 300), dtype=torch.float32, device="cuda")
    assert autotrans.transpose(ga.to_gpu(h), out=o3) is o3
    torch.cuda.synchronize()
    assert o3.cpu().numpy().tobytes() == want


def test_wrong_out_is_refused():
    torch = pytest.importorskip("torch")
    x = torch.zeros((64, 32), device="cuda")
    with pytest.raises(ValueError, match="shape"):
        autotrans.transpose(x, out=torch.empty((64, 32), device="cuda"))
    with pytest.raises(ValueError, match="dtype"):
        autotrans.transpose(x, out=torch.empty((32, 64), dtype=torch.int32, device="cuda"))
    with pytest.raises(TypeError, match="out: .*cpu"):
        autotrans.transpose(x, out=torch.empty((32, 64)))
    with pytest.raises(ValueError, match="C-contiguous"):
        autotrans.transpose(x, out=torch.empty((64, 32), device="cuda").T)
    sq = torch.zeros((64, 64), device="cuda")
    with pytest.raises(ValueError, match="overlaps"):
        autotrans.transpose(sq, out=sq)


def test_repeat_calls_with_out_take_the_route_and_stay_checked():
    """transpose(x, out=y) again and again (the out= route) writes the right
    bytes every time, on torch, CuPy and PyCUDA; an overlapping, wrongly
    shaped or lazily conjugated out on a repeat call is still refused."""
    torch = pytest.importorskip("torch")
    cupy = pytest.importorskip("cupy")
    ga = driver.gpuarray()
    h = [host_random((256, 384), np.float32, seed) for seed in range(3)]
    want = [expect(a).tobytes() for a in h]
    tx = [torch.from_numpy(a).cuda() for a in h]
    ty = torch.empty((384, 256), device="cuda")
    for k in range(9):
        assert autotrans.transpose(tx[k % 3], out=ty) is ty
        assert torch_bytes(ty) == want[k % 3]
    assert any(isinstance(k, tuple) and len(k) == 2 and k[0][0] == "torch" for k in launch._routes._d)
    sq = torch.zeros((64, 64), device="cuda")
    autotrans.transpose(sq, out=torch.empty((64, 64), device="cuda"))
    with pytest.raises(ValueError, match="overlaps"):
        autotrans.transpose(sq, out=sq)
    with pytest.raises(ValueError, match="shape"):
        autotrans.transpose(tx[0], out=torch.empty((256, 384), device="cuda"))
    c = torch.from_numpy(host_random((32, 48), np.complex64)).cuda()
    co = torch.empty((48, 32), dtype=torch.complex64, device="cuda")
    autotrans.transpose(c, out=co)
    with pytest.raises(ValueError, match="conjugate"):
        autotrans.transpose(c, out=co.conj())
    cx, cy = [cupy.asarray(a) for a in h], cupy.empty((384, 256), np.float32)
    gx, gy = [ga.to_gpu(a) for a in h], ga.empty((384, 256), np.float32)
    for k in range(6):
        assert autotrans.transpose(cx[k % 3], out=cy) is cy
        assert cupy.asnumpy(cy).tobytes() == want[k % 3]
        assert autotrans.transpose(gx[k % 3], out=gy) is gy
        assert gy.get().tobytes() == want[k % 3]


# -- bad input ---------------------------------------------------------------------

def test_bad_torch_inputs_are_refused_clearly():
    torch = pytest.importorskip("torch")
    cases = [(torch.zeros((4, 4)), TypeError, "torch tensor on cpu"),
             (torch.zeros((8, 8), device="cuda")[:, ::2], ValueError, "non-contiguous"),
             (torch.zeros((8, 6), device="cuda").T, ValueError, "Fortran"),
             (torch.zeros(8, device="cuda"), ValueError, "2-D"),
             (torch.zeros((4, 4), dtype=torch.complex64, device="cuda").conj(), ValueError, "conj")]
    for x, err, match in cases:
        with pytest.raises(err, match=match):
            autotrans.transpose(x)


def test_host_pointers_are_not_device_memory():
    h = np.zeros(1024, np.float32)
    assert cu.locate(h.ctypes.data).memory in (0, cu.MEMORY_HOST)
    with pytest.raises((TypeError, ValueError), match="host memory|not CUDA device memory"):
        autotrans.transpose(_cai_at(h))


def _cai_at(h):
    class Fake:
        __cuda_array_interface__ = {"shape": (32, 32), "typestr": "<f4", "data": (h.ctypes.data, False),
                                    "version": 2}
    return Fake()


def test_the_device_comes_from_the_pointer():
    torch = pytest.importorskip("torch")
    x = torch.zeros((16, 16), device="cuda")
    loc = cu.locate(x.data_ptr())
    assert loc.ordinal == x.device.index and loc.ctx == cu.primary(loc.ordinal)
    assert loc.memory == cu.MEMORY_DEVICE
