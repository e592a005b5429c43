"""Every candidate of the default space, every element size, on the GPU:
bit-exact against NumPy, output poisoned first, guard bands checked."""
import numpy as np
import pytest

from autotrans.backend import cuda as driver
from autotrans.backend import memory
from autotrans.tuning import loader
from autotrans.build.compile import compile_configs
from autotrans.core.problem import ELEM_SIZES
from autotrans.tuning.space import default_space

pytestmark = pytest.mark.gpu

GUARD = 512
POISON = 0xA5
# Odd shapes for scalar kernels; for vector kernels, shapes whose rows stay
# aligned but that still leave ragged edge tiles. Batched shapes included.
ODD = [(1, 1), (1, 333), (257, 1), (131, 257), (3, 67, 129)]
ALIGNED_ODD = [(16, 48), (208, 304), (2, 48, 400)]
EVEN = [(256, 512), (2, 128, 128)]
# Whole tiles take batches of small matrices only: ragged last blocks, vectors
# across rows and matrices, one-element sides.
SMALL_BATCHES = [(64, 8, 16), (13, 8, 16), (9, 4, 6), (7, 2, 2), (5, 1, 16), (5, 33, 33), (3, 12, 20), (6, 32, 32)]


def shapes_for(cfg):
    if cfg.variant == "whole":
        return [s for s in SMALL_BATCHES if cfg.aligned_for(s[-2:])]
    return EVEN + [s for s in ODD + ALIGNED_ODD if cfg.aligned_for(s[-2:])]


def random_array(rng, shape, e):
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * e, dtype=np.uint8)
    return raw.view(f"V{e}").reshape(shape)


def run_on_gpu(kernel, x, src_off=0, dst_off=0):
    """Launch kernel on x (read from src_off, written to dst_off bytes past
    aligned addresses); return (output bytes, guards untouched)."""
    n, g = x.nbytes, GUARD + dst_off
    src = memory.alloc(n + src_off)
    dst = memory.alloc(n + 2 * g)
    memory.htod(int(src) + src_off, np.ascontiguousarray(x).view(np.uint8).ravel())
    memory.memset(dst, POISON, n + 2 * g)
    kernel(int(src) + src_off, int(dst) + g, x.shape)
    driver.synchronize()
    buf = memory.dtoh(dst, n + 2 * g)
    guards = np.concatenate([buf[:g], buf[g + n:]])
    return buf[g:g + n], bool((guards == POISON).all())


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_every_candidate_bit_exact(e):
    dev = driver.device()
    cfgs = [c for c in default_space(e) if not dev.limits.problems(c.threads, c.smem_bytes)]
    compiled = compile_configs(cfgs, dev.arch)
    rng = np.random.default_rng(e)
    failures = []
    for cfg in cfgs:
        kernel = loader.load(cfg, compiled[cfg.key])
        shapes = shapes_for(cfg)
        assert any(len(s) == 3 for s in shapes)
        assert cfg.variant == "whole" or any(s[-2] % cfg.tile_rows or s[-1] % cfg.tile_cols for s in shapes)  # edges
        for shape in shapes:
            x = random_array(rng, shape, e)
            got, guards_ok = run_on_gpu(kernel, x)
            want = np.ascontiguousarray(np.swapaxes(x, -1, -2)).view(np.uint8).ravel()
            if not guards_ok or not np.array_equal(got, want):
                failures.append(f"{cfg.key} {shape}: guards_ok={guards_ok}, "
                                f"{int((got != want).sum())} wrong bytes")
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("e", (1, 2, 4))
def test_shift_tiles_take_rows_and_pointers_at_any_alignment(e):
    dev = driver.device()
    space = [c for c in default_space(e) if c.variant == "shift" and not dev.limits.problems(c.threads, c.smem_bytes)]
    cfgs = list({(c.swizzle, c.threads): c for c in space}.values())
    assert len(cfgs) >= 4
    compiled = compile_configs(cfgs, dev.arch)
    rng = np.random.default_rng(100 + e)
    failures = []
    for cfg in cfgs:
        kernel = loader.load(cfg, compiled[cfg.key])
        tr, tc = cfg.tile_rows, cfg.tile_cols
        for shape, src_off, dst_off in [((2 * tr + 1, 2 * tc + 3), 0, 0), ((3, tr + 5, 3 * tc - 1), e, 3 * e),
                                        ((4 * tr - 1, 4 * tc + 1), 7 * e, e), ((2 * tr, 2 * tc), 5 * e, 0)]:
            x = random_array(rng, shape, e)
            got, guards_ok = run_on_gpu(kernel, x, src_off % 16, dst_off % 16)
            want = np.ascontiguousarray(np.swapaxes(x, -1, -2)).view(np.uint8).ravel()
            if not guards_ok or not np.array_equal(got, want):
                failures.append(f"{cfg.key} {shape} offsets {src_off}/{dst_off}: guards_ok={guards_ok}, "
                                f"{int((got != want).sum())} wrong bytes")
    assert not failures, "\n".join(failures[:20])


def test_a_dimension_past_2_to_the_31():
    """64-bit kernel arguments: a (1, 2**31 + 37) byte matrix through the naive
    kernel and the untuned default (a shift tile: its rows are not aligned)."""
    from autotrans.kernels.config import KernelConfig, classic
    from autotrans.tuning.space import default_config
    from autotrans.tuning.verify import Buffers
    dev = driver.device()
    shape = (1, 1, 2 ** 31 + 37)
    bufs = Buffers(shape, 1, seed=11)
    for cfg in (classic("naive", 1), default_config(shape, 1, dev.limits)):
        assert cfg.blocks(shape) < 2 ** 31
        assert bufs.verify(loader.kernel(cfg)) is None, cfg.key
    with pytest.raises(ValueError, match="2\\^31|2\\*\\*31|blocks"):
        KernelConfig("naive", 1, 8, 32, 256).check_launch((1, 2 ** 16 * 8, 2 ** 15 * 32))


def test_fixed_shapes_bit_exact_and_held_to_their_shape():
    """A sample of each family compiled for one shape (KernelConfig.fixed):
    bit-exact on it; any other shape is refused before a launch."""
    dev = driver.device()
    rng = np.random.default_rng(5)
    cfgs = []
    for e in ELEM_SIZES:
        space = [c for c in default_space(e) if not dev.limits.problems(c.threads, c.smem_bytes)]
        for v in sorted({c.variant for c in space}):
            fam = [c for c in space if c.variant == v]
            for c in (fam[0], fam[len(fam) // 2], fam[-1]):
                cfgs += [c.fixed_to(s) for s in shapes_for(c)[-2:]]
    assert len({c.variant for c in cfgs}) == 8 and len(cfgs) >= 150
    compiled = compile_configs(cfgs, dev.arch)
    failures = []
    for cfg in cfgs:
        kernel = loader.load(cfg, compiled[cfg.key])
        x = random_array(rng, cfg.fixed_shape if cfg.fixed_shape[0] > 1 else cfg.fixed_shape[1:], cfg.elem_bytes)
        got, guards_ok = run_on_gpu(kernel, x)
        want = np.ascontiguousarray(np.swapaxes(x, -1, -2)).view(np.uint8).ravel()
        if not guards_ok or not np.array_equal(got, want):
            failures.append(f"{cfg.key}: guards_ok={guards_ok}, {int((got != want).sum())} wrong bytes")
    assert not failures, "\n".join(failures[:20])
    b, m, n = cfgs[0].fixed_shape
    with pytest.raises(ValueError, match="compiled for the shape"):
        loader.load(cfgs[0], compiled[cfgs[0].key])(0, 0, (b + 1, m, n))
