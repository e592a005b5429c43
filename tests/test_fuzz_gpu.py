"""Fuzzing on the GPU: thousands of random shapes through transpose() and
through a random candidate of the search space, each checked bit-exactly with
the output pre-filled with the complement of the right answer and guard bands
around it; and one matrix of more than 2^31 elements (64-bit offsets)."""
import numpy as np
import pytest

import autotrans
from autotrans.api import launch as dispatch
from autotrans.api import specialise
from autotrans.backend import cuda as driver
from autotrans.backend import memory
from autotrans.tuning import loader, verify
from autotrans.build.compile import compile_configs
from autotrans.core.problem import ELEM_SIZES, dtype_of_size
from autotrans.tuning.space import candidates, default_space

pytestmark = pytest.mark.gpu

SHAPES = 2000
GUARD = 256
POISON = 0x5A


def random_shapes(rng, n):
    primes = [2, 3, 5, 7, 11, 13, 127, 251, 509, 1021, 2039, 4093, 4999]
    special = [1] + primes + [2 ** k + d for k in range(1, 13) for d in (-1, 0, 1)]
    out = []
    for i in range(n):
        dims = [int(rng.choice(special)) if rng.random() < 0.4 else int(np.exp(rng.uniform(0, np.log(5000))))
                for _ in range(2)]
        if i % 7 == 0:
            dims[rng.integers(2)] = 1                      # 1xN and Nx1
        dims = [max(1, min(5000, d)) for d in dims]
        while dims[0] * dims[1] > 4_000_000:               # keep each case small
            dims[rng.integers(2)] //= 2
        out.append(tuple(dims) if i % 5 else (int(rng.integers(2, 5)),) + tuple(d // 4 + 1 for d in dims))
    return out


class Guarded:
    """An output GPUArray between two poisoned guard bands."""

    def __init__(self, shape, dtype):
        dt = np.dtype(dtype)
        self.n = int(np.prod(shape)) * dt.itemsize
        self.base = memory.alloc(self.n + 2 * GUARD)
        self.array = driver.gpuarray().GPUArray(shape, dt, gpudata=int(self.base) + GUARD)

    def arm(self, in_shape, e, seed):
        memory.memset(self.base, POISON, GUARD)
        memory.memset(int(self.base) + GUARD + self.n, POISON, GUARD)
        verify.fill_not_transposed(self.array.ptr, in_shape, e, seed)

    def wrong(self, in_shape, e, seed) -> tuple[int, int]:
        return verify.check_with_guards(self.array.ptr, in_shape, e, seed,
                                        [(self.base, GUARD, POISON), (int(self.base) + GUARD + self.n, GUARD, POISON)])


def test_fuzz_random_shapes(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTRANS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(specialise.ENV, "0")   # generic kernels: 2000 shapes would fill the process's build cap
    dispatch.forget()
    rng = np.random.default_rng(20261130)
    dev = driver.device()
    compiled = {e: compile_configs(default_space(e), dev.arch) for e in ELEM_SIZES}
    failures, checked_numpy = [], 0
    for i, shape in enumerate(random_shapes(rng, SHAPES)):
        e = ELEM_SIZES[i % len(ELEM_SIZES)]
        dt = dtype_of_size(e)
        x = driver.gpuarray().GPUArray(shape, dt, allocator=memory.alloc)
        seed = int(rng.integers(1 << 31))
        verify.fill_pattern(x.ptr, x.nbytes, seed)
        out = Guarded(shape[:-2] + (shape[-1], shape[-2]), dt)
        cands = candidates(shape, e, dev.limits)
        cfg = cands[rng.integers(len(cands))]
        if cfg.key not in compiled[e]:           # a shape's own candidates (skinny.shape_space's wide tiles)
            compiled[e].update(compile_configs([cfg], dev.arch))
        for label, run in (("transpose()", lambda: autotrans.transpose(x, out=out.array)),
                           (cfg.key, lambda: loader.load(cfg, compiled[e][cfg.key])(x.ptr, out.array.ptr,
                                                                                       shape))):
            out.arm(shape, e, seed)
            run()
            driver.synchronize()
            wrong, guards = out.wrong(shape, e, seed)
            if wrong or guards:
                failures.append(f"{shape} e{e} {label}: {wrong} wrong bytes, {guards} guard bytes")
        if i % 50 == 0:      # the on-GPU checker agrees with NumPy
            host = x.get()
            assert out.array.get().tobytes() == np.ascontiguousarray(np.swapaxes(host, -1, -2)).tobytes()
            checked_numpy += 1
    assert not failures, failures[:20]
    assert checked_numpy == SHAPES // 50


def test_more_than_2_pow_31_elements(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTRANS_CACHE_DIR", str(tmp_path))
    dispatch.forget()
    shape = (50000, 50000)
    assert shape[0] * shape[1] > 2 ** 31
    x = driver.gpuarray().GPUArray(shape, np.int8, allocator=memory.alloc)
    verify.fill_pattern(x.ptr, x.nbytes, 7)
    out = Guarded((50000, 50000), np.int8)
    out.arm(shape, 1, 7)
    autotrans.transpose(x, out=out.array)
    driver.synchronize()
    assert out.wrong(shape, 1, 7) == (0, 0)
    del x, out
