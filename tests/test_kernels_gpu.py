"""Every candidate of the default space, every element size, on the GPU:
bit-exact against NumPy, output poisoned first, guard bands checked."""
import numpy as np
import pytest

from autotrans import driver
from autotrans.compile import compile_configs
from autotrans.config import ELEM_SIZES
from autotrans.space import default_space

pytestmark = pytest.mark.gpu

GUARD = 512
POISON = 0xA5
# Odd shapes for scalar kernels; for vector kernels, shapes whose rows stay
# aligned but that still leave ragged edge tiles. Batched shapes included.
ODD = [(1, 1), (1, 333), (257, 1), (131, 257), (3, 67, 129)]
ALIGNED_ODD = [(16, 48), (208, 304), (2, 48, 400)]
EVEN = [(256, 512), (2, 128, 128)]


def random_array(rng, shape, e):
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * e, dtype=np.uint8)
    return raw.view(f"V{e}").reshape(shape)


def run_on_gpu(kernel, x):
    """Launch kernel on x; return (output bytes, guards untouched)."""
    n = x.nbytes
    src = driver.alloc(n)
    dst = driver.alloc(n + 2 * GUARD)
    driver.htod(src, np.ascontiguousarray(x).view(np.uint8).ravel())
    driver.memset(dst, POISON, n + 2 * GUARD)
    kernel(src, int(dst) + GUARD, x.shape)
    driver.synchronize()
    buf = driver.dtoh(dst, n + 2 * GUARD)
    guards = np.concatenate([buf[:GUARD], buf[GUARD + n:]])
    return buf[GUARD:GUARD + n], bool((guards == POISON).all())


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_every_candidate_bit_exact(e):
    dev = driver.device()
    cfgs = [c for c in default_space(e) if not dev.limits.problems(c)]
    compiled = compile_configs(cfgs, dev.arch)
    rng = np.random.default_rng(e)
    failures = []
    for cfg in cfgs:
        kernel = driver.Kernel(cfg, compiled[cfg.key])
        shapes = EVEN + [s for s in ODD + ALIGNED_ODD if cfg.aligned_for(s[-2:])]
        assert any(len(s) == 3 for s in shapes)
        assert any(s[-2] % cfg.tile_rows or s[-1] % cfg.tile_cols for s in shapes)  # edge tiles
        for shape in shapes:
            x = random_array(rng, shape, e)
            got, guards_ok = run_on_gpu(kernel, x)
            want = np.ascontiguousarray(np.swapaxes(x, -1, -2)).view(np.uint8).ravel()
            if not guards_ok or not np.array_equal(got, want):
                failures.append(f"{cfg.key} {shape}: guards_ok={guards_ok}, "
                                f"{int((got != want).sum())} wrong bytes")
    assert not failures, "\n".join(failures[:20])
