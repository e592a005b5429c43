"""The kernels' own template code, run on the host by the emulator, checked
bit-exactly against NumPy: every element lands where np.swapaxes puts it, and
nothing is written outside the output."""
import numpy as np
import pytest

from autotrans.kernels.config import CLASSIC_NAMES, ELEM_SIZES, classic
from autotrans.emulate.emulator import emulate_many, kernel_table
from autotrans.tuning.space import default_space

PRIMES = (7, 13, 131, 257)


def sample_vec(e):
    """One vec and shift config of each (vector width, micro-rows, swizzle,
    padding, order)."""
    seen, out = set(), []
    for c in default_space(e):
        k = (c.variant, c.vec_bytes, c.micro_rows, c.swizzle, c.pad > 0, c.order)
        if c.variant in ("vec", "shift") and k not in seen:
            seen.add(k)
            out.append(c)
    return out


def random_array(rng, shape, e):
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * e, dtype=np.uint8)
    return raw.view(f"V{e}").reshape(shape)


def odd_shapes(cfg):
    """1x1, 1xN, Nx1, primes, batches, exact tiles; vec configs get the
    multiples of their vector width that keep rows aligned."""
    tr, tc = cfg.tile_rows, cfg.tile_cols
    if cfg.variant == "shift":   # rows of every alignment, full and edge tiles
        return [(1, 1), (257, 1), (131, 257), (2 * tr + 1, 2 * tc + 3), (3, tr + 5, 2 * tc - 1), (2 * tr, tc)]
    if cfg.variant != "vec":
        return [(1, 1), (1, 333), (257, 1), (131, 257), (3, 67, 129), (2 * tr, tc)]
    k = cfg.vec_elems
    return [(k, k), (k * 7, k * 13), (k * 131, k * 3), (2, k * 5, k * 11),
            (2 * cfg.tile_rows, 2 * cfg.tile_cols), (cfg.tile_rows + k, 3 * cfg.tile_cols - k)]


def check(items, offset=0):
    results = emulate_many(items, offset)
    bad = []
    for (cfg, x), r in zip(items, results):
        want = np.ascontiguousarray(np.swapaxes(x, -1, -2))
        if not r.guards_ok or r.out.tobytes() != want.tobytes():
            bad.append(f"{cfg.key} {x.shape} offset={offset} guards_ok={r.guards_ok}")
    assert not bad, bad[:10]


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_index_math_matches_numpy(e):
    rng = np.random.default_rng(e)
    cfgs = [classic(n, e) for n in CLASSIC_NAMES] + sample_vec(e)
    assert len(cfgs) >= 10
    check([(c, random_array(rng, s, e)) for c in cfgs for s in odd_shapes(c)])


@pytest.mark.parametrize("key", ["tile:e1:32x32:t256:v1:r1:p1:none:row",
                                 "tile:e2:32x32:t256:v2:r1:p0:xor:row",
                                 "vec:e4:64x32:t256:v4:r1:p1:none:col",
                                 "naive:e4:8x32:t256:v4:r1:p0:none:row",
                                 "vec:e8:64x32:t256:v8:r1:p0:xor:col",
                                 "shift:e1:64x256:t256:v16:r4:p0:xor:col",
                                 "shift:e4:64x64:t256:v16:r1:p4:none:row"])
def test_4097_by_4095(key):
    from autotrans.kernels.config import KernelConfig
    cfg = KernelConfig.from_key(key)
    x = random_array(np.random.default_rng(1), (4097, 4095), cfg.elem_bytes)
    check([(cfg, x)])


@pytest.mark.parametrize("e", (1, 2, 4))
@pytest.mark.parametrize("offset", (1, 6, 12))
def test_shift_tiles_take_pointers_at_any_element_alignment(e, offset):
    rng = np.random.default_rng(offset)
    cfgs = [c for c in sample_vec(e) if c.variant == "shift"]
    assert cfgs
    check([(c, random_array(rng, s, e)) for c in cfgs for s in odd_shapes(c)[2:5]], offset=offset * e % 16)


def test_shared_memory_size_agrees_with_templates():
    cfgs = [classic(n, e) for e in ELEM_SIZES for n in CLASSIC_NAMES] + \
           [c for e in ELEM_SIZES for c in sample_vec(e)]
    table = kernel_table(cfgs)
    for c in cfgs:
        assert table[c.name]["smem"] == c.smem_bytes, c.key
        assert table[c.name]["threads"] == c.threads
        assert table[c.name]["tile"] == (c.tile_rows, c.tile_cols)


def test_vec_refuses_unaligned_rows():
    cfg = next(c for c in default_space(4) if c.variant == "vec" and c.vec_bytes == 16)
    with pytest.raises(ValueError, match="aligned"):
        emulate_many([(cfg, np.zeros((5, 7), np.float32))])


# -- 64-bit dimensions and the launch limit ------------------------------------

from autotrans.emulate.emulator import blocks, build, trace  # noqa: E402
from autotrans.kernels.config import MAX_BLOCKS, KernelConfig  # noqa: E402

BIG = [(1, 1), (0, 5, 5), (3, 7, 2**33 + 1), (2**31 + 3, 5), (2, 2**31 + 5, 3 * 2**31 - 1), (2**40, 2**20)]


@pytest.mark.parametrize("key", ["naive:e4:8x32:t256:v4:r1:p0:none:row", "tile:e1:32x32:t256:v1:r1:p1:none:row",
                                 "shift:e1:64x256:t256:v16:r4:p0:xor:col"])
def test_cpp_grid_agrees_with_python_past_32_bits(key):
    cfg = KernelConfig.from_key(key)
    assert blocks(cfg, BIG) == [cfg.blocks(s) for s in BIG]
    assert cfg.blocks(BIG[-1]) > 2**32   # 64-bit on both sides


def test_launch_limit_names_the_grid_limit():
    cfg = classic("naive", 4)                         # 8 x 32 tiles
    exact = (1, 8, 32 * MAX_BLOCKS)                   # the largest grid there is
    assert cfg.blocks(exact) == MAX_BLOCKS and cfg.launch_problems(exact) == []
    over = (1, 2**16 * 8, 2**15 * 32)                  # exactly 2^31 blocks
    assert cfg.blocks(over) == 2**31
    (p,) = cfg.launch_problems(over)
    assert "2^31-1" in p and str(2**31) in p and cfg.key in p
    with pytest.raises(ValueError, match=r"2\^31-1"):
        cfg.check_launch(over)
    with pytest.raises(ValueError, match=r"2\^31-1"):
        trace(cfg, over)                               # refused before anything is allocated
    assert cfg.launch_problems((2**31 + 7, 1)) == []  # a long dimension alone is fine


def test_emulator_refuses_a_grid_past_2_to_the_31(tmp_path):
    """at::emulate itself will not run a launch that no GPU grid can hold."""
    import subprocess
    cfg = classic("naive", 4)
    (tmp_path / "in").write_bytes(bytes(16))
    (tmp_path / "out").write_bytes(bytes(16))
    r = subprocess.run([str(build([cfg]))], input=f"run {cfg.name} 1 {2**16 * 8} {2**15 * 32} in 0 out 0 - 0\n",
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 1 and "needs 2^31 blocks or more" in r.stdout


@pytest.mark.parametrize("key, shape", [("vec:e4:64x32:t256:v4:r1:p1:none:col", (3, 67, 132)),
                                        ("shift:e1:64x256:t256:v16:r4:p0:xor:col", (131, 257)),
                                        ("tile:e2:32x32:t256:v2:r1:p0:xor:row", (1, 333))])
def test_a_fixed_shape_runs_that_shape_and_refuses_others(key, shape):
    from autotrans.kernels.config import KernelConfig
    cfg = KernelConfig.from_key(key).fixed_to(shape)
    rng = np.random.default_rng(3)
    check([(cfg, random_array(rng, shape, cfg.elem_bytes))])
    with pytest.raises(ValueError, match="compiled for the shape"):
        emulate_many([(cfg, random_array(rng, (2,) + shape[-2:], cfg.elem_bytes))])


def test_a_fixed_config_is_traced_on_its_own_shape():
    from autotrans.emulate.emulator import trace
    from autotrans.kernels.config import KernelConfig
    generic = KernelConfig.from_key("tile:e4:32x32:t256:v4:r1:p1:none:row")
    fixed = generic.fixed_to((64, 64))
    assert trace(fixed) == trace(generic, (64, 64))
    with pytest.raises(ValueError, match="compiled for the shape 1x64x64 only"):
        trace(fixed, (96, 64))


@pytest.mark.parametrize("key", ["vec:e1:64x64:t128:v8:r4:p0:xor:row", "vec:e4:32x32:t64:v16:r4:p0:xor:row",
                                 "vec:e8:32x32:t128:v16:r2:p0:xor:row", "vec:e2:128x128:t256:v16:r8:p0:xor:col"])
def test_edge_tiles_of_whole_vectors_move_vectors(key):
    """The corner tile of a (TR + K) x (TC + K) matrix holds K x K elements:
    its load phase reads K vectors and stores their K * K elements to shared
    memory; its store phase reads K vectors of shared memory, as interior tiles
    do (and stores them as vectors), not K * K single elements."""
    from autotrans.emulate.emulator import trace
    from autotrans.kernels.config import KernelConfig
    cfg = KernelConfig.from_key(key)
    k = cfg.vec_elems
    acc = trace(cfg, (cfg.tile_rows + k, cfg.tile_cols + k), block=3)
    stores = [nbytes for _, _, _, _, nbytes, store in acc if store]
    loads = [nbytes for _, _, _, _, nbytes, store in acc if not store]
    assert stores == [cfg.elem_bytes] * (k * k)
    assert loads == [cfg.vec_bytes] * k
    rng = np.random.default_rng(5)
    check([(cfg, random_array(rng, (cfg.tile_rows + k, cfg.tile_cols + k), cfg.elem_bytes))])
