"""GPU arrays of any producer, without a GPU: __cuda_array_interface__ and
DLPack parsing (producers written here, NumPy's real capsules), dtype names
and sizes, the error for every kind of bad input (raised before any driver
call), streams, the bounded memo, and the winners index over real sqlitedict
caches that change under it."""
import gc
import os
import shutil
import sys
import weakref

import numpy as np
import pytest

from autotrans import transpose
from autotrans.api import launch
from autotrans.api.index import Index, Stamp
from autotrans.backend import arrays
from autotrans.kernels.config import KernelConfig
from autotrans.results.store import CacheKey, ResultCache
from autotrans.tuning.space import Limits, space_id

from conftest import H200, make_record

H200_LIMITS = Limits(smem_per_block=232448)


class CAI:
    """A producer that only speaks __cuda_array_interface__."""

    def __init__(self, **cai):
        self.__cuda_array_interface__ = cai


def cai(shape=(4, 6), typestr="<f4", ptr=0x7F0000001000, version=3, **kw):
    return CAI(shape=shape, typestr=typestr, data=(ptr, False), version=version, **kw)


class DL:
    """A producer that only speaks DLPack, claiming whatever device it is told."""

    def __init__(self, array, device=(arrays.DL_CPU, 0)):
        self.array, self.device = array, device
        self.calls = 0

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None):
        self.calls += 1
        return self.array.__dlpack__(max_version=max_version)


# -- __cuda_array_interface__ ----------------------------------------------------

def test_cai_v3_is_parsed_into_one_record():
    a = arrays.describe(cai(strides=(24, 4), stream=0x5555))
    assert (a.kind, a.ptr, a.shape, a.strides, a.itemsize, a.dtype) == \
        ("cai", 0x7F0000001000, (4, 6), (24, 4), 4, "float32")
    assert a.stream == 0x5555 and not a.readonly
    ro = arrays.describe(CAI(shape=(2, 2), typestr="|u1", data=(0x1000, True), version=3, stream=None))
    assert ro.readonly and ro.stream is None and ro.itemsize == 1 and ro.strides is None


def test_cai_v2_has_no_stream_even_if_one_is_present():
    assert arrays.describe(cai(version=2, stream=0x5555)).stream is None


@pytest.mark.parametrize("bad, err, match", [
    (cai(stream=0), ValueError, "stream 0 is not allowed"),
    (cai(stream=True), ValueError, "stream must be"),
    (cai(mask=(1, False)), ValueError, "masked"),
    (cai(typestr="<q9"), TypeError, "typestr"),
    (CAI(shape=(2, 2), data=(1, False)), ValueError, "typestr"),
    (cai(strides=(4,)), ValueError, "1 strides for 2 dimensions"),
    (cai(ptr=0), ValueError, "null data pointer"),
    (CAI(shape=(2, 2), typestr="<f4", data=12345), ValueError, "pointer, read_only"),
])
def test_malformed_cai_is_refused_clearly(bad, err, match):
    with pytest.raises(err, match=match):
        arrays.describe(bad)


def test_framework_only_dtypes_go_by_element_size():
    # what torch.bfloat16 or a float8 looks like to a CAI consumer: raw bytes of the right size
    assert arrays.describe(cai(typestr="<V2")).itemsize == 2
    assert arrays.describe(cai(typestr="|V1")).itemsize == 1
    assert arrays.dl_dtype(_view(4, 16)) == ("bfloat16", 2)
    assert arrays.dl_dtype(_view(10, 8)) == ("float8_e4m3fn", 1)
    assert arrays.dl_dtype(_view(12, 8)) == ("float8_e5m2", 1)
    assert arrays.dl_dtype(_view(5, 128)) == ("complex128", 16)
    assert arrays._dl_of("bfloat16", None) == (4, 16)
    assert arrays._dl_of("float32", np.dtype(np.float32)) == (2, 32)
    assert arrays._dl_of("void16", np.dtype("V2")) is None
    with pytest.raises(TypeError, match="sub-byte"):
        arrays.dl_dtype(_view(17, 4))
    with pytest.raises(TypeError, match="lanes"):
        arrays.dl_dtype(_view(2, 32, lanes=4))
    with pytest.raises(TypeError, match="3 bytes"):
        arrays.dl_dtype(_view(1, 24))


def _view(code, bits, lanes=1):
    return arrays.DLView(arrays.DL_CUDA, 0, 0x1000, (2, 2), None, code, bits, lanes, False, False)


# -- DLPack ----------------------------------------------------------------------

@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_capsules_are_read_with_ctypes(versioned):
    base = np.arange(5 * 8, dtype=np.float32).reshape(5, 8)
    view = base[1:, ::2]                                   # offset, strided
    cap = view.__dlpack__(max_version=(1, 0) if versioned else None)
    before = sys.getrefcount(base)
    imp = arrays.DLPackImport(cap)
    v = imp.view
    assert v.versioned is versioned
    assert v.ptr == view.ctypes.data and v.shape == (4, 4) and v.strides == view.strides
    assert (v.device_type, v.code, v.bits, v.lanes) == (arrays.DL_CPU, 2, 32, 1)
    with pytest.raises(ValueError, match="unconsumed"):
        arrays.DLPackImport(cap)                          # renamed: consumed once
    del imp
    gc.collect()
    assert sys.getrefcount(base) <= before                # the producer's deleter ran


def test_read_only_flag_of_versioned_capsules():
    a = np.zeros((2, 3), np.int16)
    a.flags.writeable = False
    imp = arrays.DLPackImport(a.__dlpack__(max_version=(1, 0)))
    assert imp.view.readonly and imp.view.code == 0 and imp.view.bits == 16


def test_host_memory_is_refused_before_dlpack_is_called():
    host = DL(np.zeros((4, 4), np.float32))
    with pytest.raises(TypeError, match=r"host memory \(CPU\)"):
        arrays.describe(host)
    assert host.calls == 0
    with pytest.raises(TypeError, match="AMD"):
        arrays.describe(DL(np.zeros((4, 4)), (arrays.DL_ROCM, 0)))
    with pytest.raises(TypeError, match="pinned host"):
        arrays.describe(DL(np.zeros((4, 4)), (arrays.DL_CUDA_HOST, 0)))


def test_a_cuda_dlpack_producer_is_parsed():
    data = np.arange(12, dtype=np.uint16).reshape(3, 4)
    a = arrays.describe(DL(data, (arrays.DL_CUDA, 1)))    # NumPy's capsule says CPU: the view is what counts
    assert a.kind == "dlpack" and a.ptr == data.ctypes.data and a.shape == (3, 4)
    assert a.itemsize == 2 and a.dtype == "uint16" and a.device == 1 and a.native == (1, 16)
    assert isinstance(a.keep, arrays.DLPackImport)


class Owner:
    pass


@pytest.mark.parametrize("versioned", [False, True])
def test_exported_capsules_round_trip_and_release_their_owner(versioned):
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    owner = Owner()
    gone = weakref.ref(owner)

    class Producer:
        def __dlpack_device__(self):
            return (arrays.DL_CPU, 0)

        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            return arrays.export_capsule(host.ctypes.data, (2, 3), (2, 32), (arrays.DL_CPU, 0), owner, versioned)

    y = np.from_dlpack(Producer())
    del owner
    assert y.tobytes() == host.tobytes() and gone() is not None
    del y
    gc.collect()
    assert gone() is None                                  # NumPy called our deleter


def test_an_unconsumed_export_capsule_releases_its_owner():
    owner = Owner()
    gone = weakref.ref(owner)
    cap = arrays.export_capsule(0x1000, (2, 2), (2, 32), (arrays.DL_CUDA, 0), owner, False)
    del owner
    assert gone() is not None
    del cap
    gc.collect()
    assert gone() is None and not arrays._exports


# -- layouts and bad inputs ------------------------------------------------------

@pytest.mark.parametrize("shape, strides, match", [
    ((8, 8), (64, 8), "non-contiguous"),
    ((8, 6), (4, 32), "Fortran"),
    ((8,), None, "2-D"),
    ((2, 2, 2, 2), None, "4-D"),
])
def test_layout_problems_are_named(shape, strides, match):
    assert match in arrays.layout_problem(arrays.describe(cai(shape=shape, strides=strides)))


def test_size_one_dimensions_may_have_any_stride():
    assert arrays.layout_problem(arrays.describe(cai(shape=(1, 6), strides=(999, 4)))) is None
    assert arrays.layout_problem(arrays.describe(cai(shape=(3, 1, 6), strides=(24, 7, 4)))) is None
    assert arrays.layout_problem(arrays.describe(cai(shape=(0, 6), strides=(5, 3)))) is None


@pytest.mark.parametrize("bad, err, match", [
    (np.zeros((4, 4), np.float32), TypeError, "NumPy array in host memory"),
    ([[1, 2], [3, 4]], TypeError, "GPUArray, torch.Tensor, CuPy"),
    (DL(np.zeros((4, 4), np.float32)), TypeError, "host memory"),
    (cai(shape=(8, 8), strides=(64, 8)), ValueError, "non-contiguous"),
    (cai(shape=(8, 6), strides=(4, 32)), ValueError, "Fortran"),
    (cai(shape=(8,)), ValueError, "2-D"),
    (cai(typestr="|V3"), TypeError, "itemsize 3"),
    (cai(stream=0), ValueError, "stream 0"),
])
def test_transpose_refuses_bad_input_before_any_driver_call(bad, err, match):
    with pytest.raises(err, match=match):
        transpose(bad)


@pytest.mark.parametrize("stream, err", [(-1, ValueError), (True, TypeError), ("s", TypeError),
                                         (object(), TypeError)])
def test_bad_streams_are_refused(stream, err):
    with pytest.raises(err, match="stream"):
        transpose(cai(), stream=stream)


def test_stream_handles():
    class Proto:
        def __cuda_stream__(self):
            return (0, 0xABC)

    assert arrays.stream_handle(0) == 0 and arrays.stream_handle(0x1234) == 0x1234
    assert arrays.stream_handle(Proto()) == 0xABC
    assert arrays.current_stream("cai", 0) is None


# -- memo and index --------------------------------------------------------------

def test_lru_is_bounded_and_keeps_what_is_used():
    lru = launch.LRU(3)
    for k in "abc":
        lru.put(k, k.upper())
    assert lru.get("a") == "A"                   # a is now the most recent
    lru.put("d", "D")
    assert len(lru) == 3 and lru.get("b") is None and lru.get("a") == "A" and lru.get("d") == "D"


def test_the_plan_memo_stays_bounded_over_many_shapes():
    launch.forget()
    for s in range(1, launch.PLAN_LIMIT + 500):
        info = arrays.describe(cai(shape=(s, 7)))
        launch._plan(("t", s), info, None)
    assert len(launch._plans) == launch.PLAN_LIMIT
    launch.forget()
    assert len(launch._plans) == 0


def put(cache, shape, e=4, config=None):
    rec = make_record(shape, e, H200)
    if config is not None:
        rec["config"], rec["key"] = config.to_dict(), config.key
    assert cache.put(CacheKey(H200, space_id(), shape, e), rec)
    return rec


def test_index_reads_once_and_again_when_the_cache_changes(tmp_path):
    cache = ResultCache(tmp_path / "c")
    index = Index(shipped=[])
    assert index.table(H200, 4, H200_LIMITS, cache).rows == [] and index.loads == 1
    assert index.choose((512, 512), 4, H200, H200_LIMITS, cache).source == "default"
    assert index.loads == 1                                  # no file yet, nothing changed
    rec = put(cache, (4096, 4096))
    c = index.choose((4096, 4096), 4, H200, H200_LIMITS, cache)
    assert c.source == "exact" and c.config.key == rec["key"] and index.loads == 2
    for s in range(1, 101):
        assert index.choose((32 * (2 * s + 1), 4096), 4, H200, H200_LIMITS, cache).source == "nearest"
    assert index.loads == 2                                  # unseen shapes read no records
    other = put(cache, (4096, 4096), config=KernelConfig("vec", 4, 32, 32, 64, 16, 4, 0, "xor", "col"))
    assert index.choose((4096, 4096), 4, H200, H200_LIMITS, cache).config.key == other["key"]
    assert index.loads == 3                                  # a rewrite of the same size is seen too
    assert index.table(H200, 2, H200_LIMITS, cache).rows == [] and index.loads == 4   # per element size


def test_index_sees_a_replaced_file(tmp_path):
    a, b = ResultCache(tmp_path / "a"), ResultCache(tmp_path / "b")
    put(a, (2048, 2048))
    index = Index(shipped=[])
    assert index.choose((2048, 2048), 4, H200, H200_LIMITS, b).source == "default"
    b.folder.mkdir()
    shutil.copy(a.path, tmp_path / "new")
    os.replace(tmp_path / "new", b.path)                   # a new inode under the same name
    assert index.choose((2048, 2048), 4, H200, H200_LIMITS, b).source == "exact"
    b.path.unlink()
    assert index.choose((2048, 2048), 4, H200, H200_LIMITS, b).source == "default"
    assert Stamp.of(b.path) == Stamp(None, None, None)
