"""Fused tiles: core.layout.fuse_tile (TileProblem -> NdTileProblem), its
NumPy reference, the StridedArgs encoding (kernels.strided.nd_args), keys and
the untuned rule, and the ndtile family (cuda_templates/ndtile.cu): every
config of its space compiled by nvcc without spills and run by the host
emulator bit-exactly against np.transpose on whole buffers (every byte of the
destination, pitch gaps and guard bands included)."""
from __future__ import annotations

import collections
import dataclasses
import math
import re
import subprocess

import numpy as np
import pytest

from autotrans import families
from autotrans.build import nvcc
from autotrans.core import layout
from autotrans.core.layout import MAX_BATCH, Dim, NdTileProblem, TileProblem, apply, canonical, fuse_tile, moved_bytes
from autotrans.core.problem import ELEM_SIZES
from autotrans.emulate.banks import warp_ways
from autotrans.emulate.emulator import emulate_strided, emulate_strided_many
from autotrans.kernels.config import CAST_SIZES, KernelConfig
from autotrans.kernels.strided import (ND_COUNTS, byte_extent, launch_shape, nd_args, pack, pointer_alignment,
                                       strided_args, strided_candidates, strided_problems, strided_shape, strided_space)
from autotrans.kernels.templates import STRIDED_ARGS, render, render_unit, template_dir, template_file
from autotrans.results.keys import ProblemKey, check_problem, problem_from_text, problem_text
from autotrans.results.store import ResultCache
from autotrans.tuning.space import space_id
from autotrans.tuning import strided as tuning_strided
from autotrans.tuning.strided import strided_candidates as tuning_candidates
from autotrans.tuning.strided import _ND_DEFAULT, _ND_SHIFT_DEFAULT, run_problem, best_strided, default_strided, host_buffers

from conftest import H200
from test_problem_keys import problem_record
from test_strided_kernels import PAD, _buffer, _offset, _view, assert_compiles_without_spills

POISON = 0xA5
ND = families.of("ndtile")


def nd_space(e: int) -> list[KernelConfig]:
    return [c for c in strided_space(e) if c.variant == "ndtile"]


def tile_of(shape, axes, e=4, view=None) -> TileProblem:
    """The canonical TileProblem of permuting a dense array of ``shape`` (or a view of it)."""
    x = np.zeros(shape, f"V{e}")
    if view is not None:
        x = x[view]
    p = canonical(x.shape, x.strides, e, axes)
    assert isinstance(p, TileProblem), p
    return p


# -- fuse_tile --------------------------------------------------------------------


def test_the_issue_cases_fuse_into_large_matrices():
    nd = fuse_tile(tile_of((33, 65, 129, 61), (3, 2, 1, 0)))
    assert nd == NdTileProblem(4, ((33, 2045940), (65, 31476)), ((61, 1106820), (129, 8580)), 4, ())
    assert (nd.m, nd.n) == (2145, 7869) and strided_shape(nd) == (1, 2145, 7869)
    # axis 3 continues both sides; on the m side, axis 0 follows it: 9367 x 61... then axis 2 too
    nd = fuse_tile(tile_of((17, 19, 23, 29, 61), (4, 2, 0, 3, 1), 8))
    assert nd.m_side == ((19, 325496), (29, 488), (17, 6184424), (23, 14152)) and nd.n_side == ((61, 1723528),)
    assert (nd.m, nd.n, nd.batch) == (19 * 29 * 17 * 23, 61, ())
    nd = fuse_tile(tile_of((257, 509, 263), (2, 1, 0)))
    assert nd.m_side == ((257, 535468), (509, 1052)) and nd.n_side == ((263, 523252),) and nd.batch == ()
    nd = fuse_tile(tile_of((33, 65, 129, 61), (1, 3, 0, 2)))     # a batch dim left over
    assert (nd.m, nd.n, nd.batch) == (129 * 33, 61, (Dim(65, 31476, 1038708),))
    nd = fuse_tile(tile_of((33, 65, 129, 61), (2, 0, 3, 1)))
    assert (nd.m, nd.n, nd.batch) == (65, 61 * 129, (Dim(33, 2045940, 15860),))


def test_a_dim_on_both_sides_goes_where_the_tiles_are_fullest():
    # batch dim 29 continues m (dst 19*8) and n (src 61*8). On m: 551 x 61 and a
    # batch of 23 (32x32 tiles 91% full); on n, 23 follows: 19 x 40687 (59%)
    t = TileProblem(8, 19, 61, 8000, 1723528, 8, (Dim(23, 29 * 61 * 8, 19 * 29 * 17 * 8), Dim(29, 61 * 8, 19 * 8)))
    nd = fuse_tile(t)
    assert nd.m_side == ((19, 8000), (29, 488)) and nd.n_side == ((61, 1723528),)
    assert nd.batch == (Dim(23, 29 * 61 * 8, 19 * 29 * 17 * 8),)
    # the sides swapped: on m, 1769 x 19 and a batch (59%); on n, 61 x 12673 (95%)
    t = TileProblem(8, 61, 19, 8000, 1723528, 8, (Dim(23, 29 * 19 * 8, 10**6 * 8), Dim(29, 19 * 8, 61 * 8)))
    nd = fuse_tile(t)
    assert nd.m_side == ((61, 8000),) and nd.n_side == ((19, 1723528), (29, 61 * 8), (23, 10**6 * 8))
    assert nd.batch == ()


@pytest.mark.parametrize("problem", [
    tile_of((40, 50), (1, 0), view=np.s_[:, :45]),                # a plain transpose: no batch
    tile_of((3, 37, 45), (0, 2, 1), view=np.s_[:, :, 1:]),        # the batch outermost on both sides
    tile_of((6, 50, 40), (0, 2, 1), view=np.s_[::2, :, :30]),     # batched pitched matrices
    tile_of((5, 3, 6, 13), (2, 0, 3, 1), view=np.s_[..., :11]),   # n continues at 13 elements, not 11
    tile_of((5, 3, 12, 11), (2, 0, 3, 1), view=np.s_[:, :, ::2]),  # ... at every other row
    # an output pitched to rows of 5: m continues at 5 elements, not 4; n at 12, not 11
    TileProblem(4, 4, 11, 4000, 4 * 5 * 4, 4, (Dim(9, 12 * 4, 4 * 5 * 11 * 4), Dim(5, 10**5, 5 * 4))),
])
def test_nothing_fuses_where_no_side_continues_linearly(problem):
    assert fuse_tile(problem) is None


def test_a_strided_view_fuses_only_its_linear_continuations():
    t = tile_of((5, 3, 6, 11), (2, 0, 3, 1))     # the dense case of the two views above: n continues
    assert fuse_tile(t) == NdTileProblem(4, ((3, 264),), ((11, 12), (6, 660)), 4, (Dim(5, 792, 132),))
    # axis 1 every other: not linear on the input, but on the output (dst 16), where m needs it
    t = tile_of((4, 10, 9, 11), (3, 2, 1, 0), view=np.s_[:, ::2, :, :])
    nd = fuse_tile(t)
    assert nd.n_side == ((11, t.ldo), (9, 80)) and nd.m_side == ((4, t.ldi), (5, 2 * 9 * 11 * 4))
    t = TileProblem(4, 4, 11, 4000, 4 * 5 * 4, 4, (Dim(1, 44, 16), Dim(5, 10**5, 4 * 4)))
    nd = fuse_tile(t)            # size-1 dims never fuse
    assert nd.m_side == ((4, 4000), (5, 10**5)) and nd.batch == (Dim(1, 44, 16),)
    with pytest.raises(TypeError, match="TileProblem"):
        fuse_tile(NdTileProblem(4, ((2, 4),), ((2, 8),), 4, ()))


def test_m_side_fuses_into_the_output_rows_alone():
    t = tile_of((1001, 63, 131), (2, 1, 0))         # the middle dim continues both sides
    assert fuse_tile(t).m_side == ((1001, t.ldi),) and fuse_tile(t).n == 63 * 131   # fullest: the input rows
    longer = fuse_tile(t, m_side=True)
    assert longer.m_side == ((1001, t.ldi), (63, 131 * 4)) and longer.n_side == ((131, t.ldo),)
    only_n = tile_of((5, 3, 6, 11), (2, 0, 3, 1))   # nothing continues the m side
    assert fuse_tile(only_n) is not None and fuse_tile(only_n, m_side=True) is None


def random_view(rng):
    """(buffer, view): a view of rank 3 to 6 and any element size into a
    random uint8 buffer: a parent allocated in some axis order, often dense,
    else sliced with steps and padded (continuations that are not linear)."""
    rank = int(rng.integers(3, 7))
    e = int(rng.choice(ELEM_SIZES))
    shape = [int(rng.choice([1, 2, 2, 3, 3, 4, 5, 7])) for _ in range(rank)]
    while math.prod(shape) > 2000:
        shape[int(np.argmax(shape))] -= 1
    dense = rng.random() < 0.6
    steps = [1 if dense else int(rng.choice([1, 1, 2])) for _ in shape]
    pads = [0 if dense else int(rng.choice([0, 0, 1])) for _ in shape]
    parent = [(n - 1) * s + 1 + p for n, s, p in zip(shape, steps, pads)]
    order = list(rng.permutation(rank)) if rng.random() < 0.5 else list(range(rank))
    nbytes = math.prod(parent) * e
    buf = rng.integers(0, 256, nbytes, dtype=np.uint8)
    base = np.ndarray([parent[k] for k in order], f"V{e}", buffer=buf).transpose(np.argsort(order))
    return buf, base[tuple(slice(0, (n - 1) * s + 1, s) for n, s in zip(shape, steps))]


def test_random_views_fuse_and_apply_like_numpy():
    """canonical -> fuse_tile -> apply on random views against NumPy: the
    fused problem moves the same elements as its TileProblem (the same dims,
    their strides the linear ones claimed), no dim left in its batch
    continues a side, and its reference gives NumPy's permutation."""
    rng = np.random.default_rng(15)
    fused = kept = 0
    for _ in range(600):
        buf, x = random_view(rng)
        axes = tuple(int(a) for a in rng.permutation(x.ndim))
        e = x.dtype.itemsize
        t = canonical(x.shape, x.strides, e, axes)
        if not isinstance(t, TileProblem):
            continue
        nd = fuse_tile(t)
        if nd is None:
            kept += 1
            continue
        fused += 1
        e = t.elem    # (promoted where rows are short and aligned)
        tdims = [Dim(t.m, t.ldi, e), Dim(t.n, t.sci, t.ldo)] + list(t.batch)
        assert sorted(map(dataclasses.astuple, nd.dims())) == sorted(map(dataclasses.astuple, tdims))
        assert nd.dims()[0] == tdims[0] and nd.dims()[len(nd.m_side)] == tdims[1]
        assert all(d.size == 1 or (d.dst != e * nd.m and d.src != t.sci * nd.n) for d in nd.batch)
        start = x.__array_interface__["data"][0] - buf.__array_interface__["data"][0]
        src = buf[start:]
        want = np.ascontiguousarray(x.transpose(axes)).view(np.uint8).ravel()
        assert moved_bytes(nd) == moved_bytes(t) == want.size
        assert byte_extent(nd) == byte_extent(t)
        got = apply(nd, src, want.size)
        assert got.tobytes() == want.tobytes(), (x.shape, x.strides, axes, nd)
    assert fused > 100 and kept > 20, (fused, kept)


def test_apply_checks_its_buffers():
    nd = fuse_tile(tile_of((3, 4, 5), (2, 1, 0)))
    with pytest.raises(ValueError, match="touches"):
        apply(nd, np.zeros(10, np.uint8), 240)
    with pytest.raises(TypeError, match="1-d uint8"):
        apply(nd, np.zeros(60, np.float32), 240)
    flipped = dataclasses.replace(nd, m_side=((3, -80),) + nd.m_side[1:])
    with pytest.raises(ValueError, match="non-negative"):
        apply(flipped, np.zeros(240, np.uint8), 240)


# -- the launch's arguments, keys, candidates ---------------------------------------


def test_nd_args_encoding():
    p = NdTileProblem(2, ((5, 1000), (3, 70), (4, 9000)), ((7, 60), (6, 4000)), 6,
                      (Dim(2, 10**6, 2 * 10**5), Dim(3, 5 * 10**5, 10**5)))
    assert strided_shape(p) == (1, 360, 42) and ND_COUNTS == MAX_BATCH - 1 == 6   # the kernel walks B * M rows
    vals = strided_args(p, 0x1000, 0x2000)
    assert vals == nd_args(p, 0x1000, 0x2000)
    assert vals[:9] == (0x1000, 0x2000, 6, 60, 42, 9000, 4000, 6, 2)
    assert vals[9:16] == (2, 3, 5, 3, 7, 1, 2 | 1 << 8)              # batch, m (inner 2), n (inner 1), counts
    assert vals[16:23] == (10**6, 5 * 10**5, 1000, 70, 0, 0, 0)
    assert vals[23:30] == (2 * 10**5, 10**5, 0, 0, 60, 0, 0)
    assert STRIDED_ARGS.unpack(pack(p, 0x1000, 0x2000)) == vals
    one = NdTileProblem(4, ((5, 100),), ((7, 20),), 4, (Dim(3, 700, 140),))   # a TileProblem's values
    tile = TileProblem(4, 5, 7, 100, 20, 4, (Dim(3, 700, 140),))
    assert strided_args(one, 0, 0)[:16] == strided_args(tile, 0, 0)[:15] + (0,)
    assert strided_args(one, 0, 0)[16:] == strided_args(tile, 0, 0)[16:]
    assert byte_extent(one) == byte_extent(tile)
    wide = NdTileProblem(4, ((2, 4),) * 4, ((2, 8),) * 3, 4, (Dim(2, 64, 64),) * 2)   # 9 dims
    with pytest.raises(ValueError, match="at most 8 in all"):
        strided_args(wide, 0, 0)
    assert "at most 8 dims" in strided_problems(nd_space(4)[0], wide, 16)[0]
    with pytest.raises(TypeError, match="NdTileProblem"):
        nd_args(TileProblem(4, 5, 7, 100, 20, 4, ()), 0, 0)


def test_keys_of_fused_tiles():
    nd = fuse_tile(tile_of((33, 65, 129, 61), (1, 3, 0, 2)))
    text = problem_text(check_problem(nd))
    assert text == "ndtile:e4:m(129/244,33/2045940):n(61/17028):sci4:b(65/31476/1038708)"
    assert problem_from_text(text) == nd
    key = ProblemKey(H200, "0123456789abcdef-s4", nd)
    assert key.kind == "ndtile" and key.shape == (1, 65 * 4257, 61) and ProblemKey.from_text(key.text) == key
    for bad, why in [(dataclasses.replace(nd, m_side=()), "1 to 8"),
                     (dataclasses.replace(nd, sci=6), "multiple of the element size"),
                     (dataclasses.replace(nd, n_side=((61, 0),)), r"in \[1, 2\*\*62\]"),
                     (dataclasses.replace(nd, m_side=((0, 4),)), "size must be"),
                     (dataclasses.replace(nd, m_side=(129,)), "pair"),
                     (dataclasses.replace(nd, batch=(Dim(2, 4, 4),) * 6), "at most 8 dims")]:
        with pytest.raises(ValueError, match=why):
            check_problem(bad)
    with pytest.raises(ValueError, match="not a canonical"):
        problem_from_text(text.replace("129/244", "0129/244"))


def test_candidates_default_and_lookup(tmp_path):
    nd = fuse_tile(tile_of((33, 65, 129, 61), (3, 2, 1, 0)))
    tile = tile_of((33, 65, 129, 61), (3, 2, 1, 0))
    cands = strided_candidates(nd, 16)
    assert {c.variant for c in cands} == {"ndtile", "ndshift"}              # no batch: ndshift takes it too
    assert [c for c in cands if c.variant == "ndtile"] == nd_space(4)
    assert "ndtile" not in {c.variant for c in strided_candidates(tile, 16)}
    assert strided_problems(nd_space(4)[0], tile, 16) == ["ndtile moves NdTileProblems, not TileProblem"]
    assert "TileProblems, not NdTileProblem" in strided_problems(KernelConfig(
        "tile", 4, 32, 32, 256, pad=1, layout="strided"), nd, 16)[0]
    assert "pointers must be 4-byte aligned" in strided_problems(nd_space(4)[0], nd, 2)[0]
    assert default_strided(nd).key == "ndtile:e4:64x64:t256:v4:r1:p1:none:col:strided"   # _ND_DEFAULT[4][0]
    short = fuse_tile(tile_of((33, 65, 129, 61), (2, 0, 3, 1)))   # 33 matrices of 65 fused rows, walked as one
    assert short.m == 65 and strided_shape(short) == (1, 33 * 65, 61 * 129)
    assert default_strided(short).key == "ndtile:e4:64x64:t256:v4:r1:p1:none:col:strided"
    narrow = fuse_tile(tile_of((7, 9, 4096, 20), (0, 3, 2, 1)))    # 20 fused columns: 32 wide fill more than 64
    assert narrow.n == 20 and default_strided(narrow).key == "ndtile:e4:64x32:t256:v4:r1:p1:none:row:strided"
    rows = fuse_tile(tile_of((257, 509, 263), (2, 1, 0)))        # input rows of 1052 bytes: _ND_SHORT_INPUT
    assert default_strided(rows).key == "ndtile:e4:128x16:t256:v4:r1:p1:none:row:strided"
    sixty_one = fuse_tile(tile_of((33, 65, 129, 61), (1, 3, 0, 2)))   # input rows of 244 bytes: too short
    assert sixty_one.n == 61 and default_strided(sixty_one).key == "ndtile:e4:64x64:t256:v4:r1:p1:none:col:strided"
    few = fuse_tile(tile_of((45, 18641, 40), (2, 1, 0)))           # 45 fused rows fill no 128-row tile
    assert few.m == 45 and default_strided(few).key == "ndtile:e4:64x64:t256:v4:r1:p1:none:col:strided"
    assert default_strided(fuse_tile(tile_of((257, 509, 263), (2, 1, 0), 8))).tile_cols != 16   # 4-byte only
    short = NdTileProblem(4, ((20, 4 * 8000),), ((200, 80), (40, 16000)), 4, ())   # 20 rows in all
    assert default_strided(short).key == "ndtile:e4:32x64:t128:v4:r1:p1:none:row:strided"
    for e in (1, 2, 4, 8, 16):                 # each element size's measured default is in its space
        d = default_strided(fuse_tile(tile_of((5, 6, 7, 3), (3, 2, 1, 0), e)))
        if d.variant == "ndshift":              # the untuned rule's (ND_SHIFT_UNTUNED) for sub-word elements
            assert tuning_strided.ND_SHIFT_UNTUNED and (d.tile_rows, d.tile_cols, d.threads) in _ND_SHIFT_DEFAULT[e], e
        else:
            assert (d.tile_rows, d.tile_cols, d.threads, d.order) in _ND_DEFAULT[e], e
    assert default_strided(nd, epilogue="conj32") is None   # 4-byte elements split conj32's groups
    c8 = fuse_tile(tile_of((5, 6, 7), (2, 1, 0), 8))
    assert default_strided(c8, epilogue="conj32").epilogue == "conj32"
    # host buffers: the same bytes as the TileProblem's
    small = tile_of((5, 6, 7, 3), (3, 2, 1, 0))
    for a, b in zip(host_buffers(small, 3), host_buffers(fuse_tile(small), 3)):
        assert np.array_equal(a, b)
    rc = ResultCache(tmp_path / "c")
    key = ProblemKey(H200, space_id(), nd)
    assert rc.put_problem(key, problem_record(key))
    assert rc.get_problem(key).best == default_strided(nd) == best_strided(nd, H200, rc)
    assert best_strided(tile, H200, rc) is None


# -- banks, rendering, nvcc -------------------------------------------------------


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_the_space_is_small_padded_and_free_of_bank_conflicts(e):
    """Each config's pad gives conflict-free shared accesses, counted (by
    emulate.banks' rules) over the addresses of ndtile.cu's maps."""
    cfgs = nd_space(e)
    assert 6 <= len(cfgs) <= 18 and len(set(cfgs)) == len(cfgs) and all(c.layout == "strided" for c in cfgs)
    assert [c for c in strided_space(e) if c.variant == "ndtile"] == cfgs
    for c in cfgs:
        tr, tc, nt, row = c.tile_rows, c.tile_cols, c.threads, c.tile_cols + c.pad
        assert c.smem_bytes == -(-tr * row * e // 8) * 8 + 8 * (2 * tr + tc)
        worst = 1
        for k in range(tr * tc // nt):
            for w in range(nt // 32):
                ts = range(32 * w, 32 * w + 32)
                load = [((i // tc * row + i % tc) * e, e) for i in (t + k * nt for t in ts)]
                store = [((i % tr * row + i // tr) * e, e) for i in (t + k * nt for t in ts)]
                worst = max(worst, warp_ways(load), warp_ways(store))
        narrow = (tr, tc, nt, c.order) in ND.NARROW    # no pad frees both phases: at most 2-way
        assert worst == ND.bank_ways(e, tr, tc, nt, c.pad) <= (ND.NARROW_WAYS if narrow else 1), c.key
        assert ND.bank_ways(e, tr, tc, nt, 0) > 1 or c.pad == 0     # unpadded columns conflict (where padded)


_TRACER = r"""
#define AT_EMULATE 1
#include "common.cuh"
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "kernels.inc"
// Runs one strided launch of kernel argv[1] (an index into the table; args:
// argv[2], buffers of argv[3] bytes), printing "block phase tid offset bytes
// store" for every shared-memory access.
static void hook(uint32_t off, int bytes, int store) {
  printf("%u %d %d %u %d %d\n", at::emu_block, at::emu_phase, at::emu_tid, off, bytes, store);
}
template <class K> static int run(at::StridedArgs a, long n) {
  std::vector<char> in(n), out(n), smem(K::SMEM + 16);
  a.in = in.data();
  a.out = out.data();
  at::smem_hook = hook;
  return at::emulate_strided<K>(a, smem.data()) ? 0 : 1;
}
int main(int argc, char** argv) {
  at::StridedArgs a;
  FILE* f = fopen(argv[2], "rb");
  if (!f || fread(&a, sizeof a, 1, f) != 1) return 2;
  const int k = atoi(argv[1]);
  const long n = atol(argv[3]);
TABLE  return 3;
}
"""


def shared_accesses(cfgs, problems, tmp_path) -> list[dict]:
    """Each config's shared-memory accesses running its problem, from the
    kernel code itself in the host emulator (one program for all): {(phase,
    the thread's n-th access in it, warp): [(tid, offset, bytes)]} of block 0."""
    table = "".join(f"  if (k == {i}) return run<{c.name}_k>(a, n);\n" for i, c in enumerate(cfgs))
    exe, log = nvcc.run({"kernels.inc": "\n".join(render(c) for c in cfgs),
                         "tracer.cu": _TRACER.replace("TABLE", table)}, "tracer.cu", ["-O1", "-std=c++17"],
                        includes=[template_dir()])
    assert exe is not None, log[-2000:]
    path = tmp_path / "tracer"
    path.write_bytes(exe)
    path.chmod(0o700)
    out = []
    for i, p in enumerate(problems):
        (tmp_path / "args").write_bytes(pack(p, 0, 0))
        r = subprocess.run([str(path), str(i), str(tmp_path / "args"), str(moved_bytes(p))], capture_output=True,
                           text=True, check=True)
        groups, seq = collections.defaultdict(list), collections.Counter()
        for line in r.stdout.splitlines():
            blk, phase, tid, off, nb, _store = map(int, line.split())
            if blk == 0:
                groups[(phase, seq[(phase, tid)], tid // 32)].append((tid, off, nb))
                seq[(phase, tid)] += 1
        out.append(groups)
    return out


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_the_kernels_own_accesses_are_free_of_bank_conflicts(e, tmp_path):
    """The shared-memory accesses of the kernel code itself (an interior
    block, traced by the host emulator), counted by emulate.banks' rules:
    every phase of every config conflict-free (tables included); an
    unpadded tile's are not (the count can fail)."""
    unpadded = KernelConfig("ndtile", e, 32, 32, 256, pad=0, layout="strided")
    cfgs = nd_space(e) + [unpadded]
    # 2 x 2 full tiles over fused sides of 2 dims each: input (m1, m0, n1, n0), output (n1, n0, m1, m0)
    problems = [NdTileProblem(e, ((c.tile_rows, 2 * c.tile_cols * e), (2, 2 * c.tile_rows * c.tile_cols * e)),
                              ((c.tile_cols, 2 * c.tile_rows * e), (2, 2 * c.tile_rows * c.tile_cols * e)), e, ())
                for c in cfgs]
    for c, groups in zip(cfgs, shared_accesses(cfgs, problems, tmp_path)):
        assert {ph for ph, _, _ in groups} == {0, 1, 2}
        assert sum(len(v) for (ph, _, _), v in groups.items() if ph == 1) == 2 * c.tile_rows * c.tile_cols
        worst = {ph: max(warp_ways([(o, b) for _, o, b in sorted(acc)]) for (p, _, _), acc in groups.items()
                         if p == ph) for ph in (0, 1, 2)}
        if c is unpadded:
            assert worst[0] == worst[1] == 1 and worst[2] > 1, worst     # columns of a 32-wide row: one bank
        elif (c.tile_rows, c.tile_cols, c.threads, c.order) in ND.NARROW:
            assert worst[0] == worst[2] == 1 and worst[1] <= ND.NARROW_WAYS, (c.key, worst)   # loads span rows
        else:
            assert worst == {0: 1, 1: 1, 2: 1}, (c.key, worst)


def test_render_keeps_lines_and_the_entry():
    cfg = nd_space(4)[0]
    text = render(cfg)
    assert len(text.split("\n", 1)[1].splitlines()) == len(template_file(cfg).read_text().splitlines())
    assert f"AT_STRIDED_ENTRY({cfg.name}, {cfg.threads})" in text
    assert "AT_AGREE_STRIDED_ARGS(7, 240," in text
    with pytest.raises(ValueError, match="ndtile kernels take the layouts"):
        KernelConfig("ndtile", 4, 32, 32, 256, pad=1)
    with pytest.raises(ValueError, match="at most 8 2-byte elements"):
        KernelConfig("ndtile", 2, 64, 64, 256, pad=2, layout="strided")
    with pytest.raises(ValueError, match="at most 16 4-byte elements"):   # cp.async loads hold no registers
        KernelConfig("ndtile", 4, 64, 64, 128, pad=1, layout="strided")
    assert KernelConfig("ndtile", 4, 64, 64, 256, pad=1, layout="strided").threads == 256
    with pytest.raises(ValueError, match="no swizzle"):
        KernelConfig("ndtile", 4, 32, 32, 256, swizzle="xor", layout="strided")


def test_loads_are_read_only_or_asynchronous():
    """16-byte elements load through the read-only path into registers; 4- and
    8-byte ones go to shared memory by cp.async, with no ld.global at all."""
    cfgs = nd_space(16)[:1]
    out, log = nvcc.run({"unit.cu": render_unit(cfgs)}, "unit.cu", ["-ptx", "-arch=sm_90", "-std=c++17", "-O3"],
                        includes=[template_dir()])
    assert out is not None, log[-2000:]
    assert "warning" not in log, log[-2000:]
    bodies = {b.split("(", 1)[0].strip(): b for b in out.decode().split(".entry ")[1:]}
    assert set(bodies) == {c.name for c in cfgs}
    for cfg in cfgs:
        loads = re.findall(r"\bld\.global[.\w]*", bodies[cfg.name])
        assert loads and all(ld.startswith("ld.global.nc") for ld in loads), (cfg.key, set(loads))
        assert "ld.local" not in bodies[cfg.name] and "st.local" not in bodies[cfg.name]
    cfgs = [nd_space(4)[0], nd_space(8)[0]]
    out, log = nvcc.run({"unit.cu": render_unit(cfgs)}, "unit.cu", ["-ptx", "-arch=sm_90", "-std=c++17", "-O3"],
                        includes=[template_dir()])
    assert out is not None and "warning" not in log, log[-2000:]
    for cfg, body in zip(cfgs, out.decode().split(".entry ")[1:]):
        assert cfg.name in body.split("(", 1)[0]
        assert not re.findall(r"\bld\.global", body), cfg.key
        assert "cp.async.ca.shared.global [%r" in body and f"], {cfg.elem_bytes};" in body, cfg.key


def test_every_config_compiles_without_spills(tmp_path):
    cfgs = [c for e in ELEM_SIZES for c in nd_space(e)]
    cfgs += [dataclasses.replace(c, epilogue=ep) for ep, g in (("conj32", 8), ("conj64", 16))
             for e in (8, 16) if e % g == 0 for c in nd_space(e)[:2]]
    assert_compiles_without_spills(cfgs, tmp_path)


# -- the emulator against NumPy ---------------------------------------------------


class Case:
    """A permutation of a (sliced, flipped) view into a (pitched) output view:
    its TileProblem fused (it must fuse), both buffers, and the destination
    buffer it must leave. edit: a change to the fused problem that moves the
    same elements (size-1 dims inserted)."""

    def __init__(self, rng, shape, perm, e, *, view=np.s_[...], in_pad=0, out_pad=0, edit=None):
        shape, perm = tuple(shape), tuple(perm)
        base = list(shape)
        base[-1] += in_pad
        self.src = _buffer(rng, math.prod(base) * e)
        x = _view(self.src, base, e)[..., :shape[-1]][view]
        y = np.transpose(x, perm)
        dbase = list(y.shape)
        dbase[-1] += out_pad
        self.dst = np.full(math.prod(dbase) * e + 2 * PAD, POISON, np.uint8)
        self.want = self.dst.copy()
        _view(self.want, dbase, e)[..., :y.shape[-1]] = y
        out = _view(self.dst, dbase, e)[..., :y.shape[-1]]
        self.src_offset, self.dst_offset = _offset(x, self.src), _offset(out, self.dst)
        a_m, last = perm[-1], x.ndim - 1
        batch = tuple(Dim(x.shape[a], x.strides[a], out.strides[k]) for k, a in enumerate(perm)
                      if a not in (a_m, last))
        tile = TileProblem(e, x.shape[a_m], x.shape[last], x.strides[a_m], out.strides[perm.index(last)],
                           x.strides[last], batch)
        self.problem = fuse_tile(tile)
        assert self.problem is not None, tile
        if edit:
            self.problem = edit(self.problem)

    def job(self, cfg):
        return cfg, self.problem, self.src, self.dst, self.src_offset, self.dst_offset


def _ones(p: NdTileProblem) -> NdTileProblem:
    """p with size-1 dims inside both sides and in the batch (strides that must not matter)."""
    e = p.elem
    return dataclasses.replace(p, m_side=p.m_side[:1] + ((1, 999 * e),) + p.m_side[1:],
                               n_side=p.n_side + ((1, 77 * e),), batch=(Dim(1, 5 * e, 3 * e),) + p.batch)


def nd_cases(rng, e):
    """Fused sides of 2 to 4 dims, ragged and full tiles of every config (up
    to 64 x 64 and 8 x 128), leftover batch dims, pitched inputs and outputs,
    every other element, flipped axes (negative strides), size-1 dims, and
    matrices smaller than a tile."""
    return [Case(rng, (5, 13, 9, 15), (3, 2, 1, 0), e),                            # 65 x 135
            Case(rng, (3, 5, 13, 9, 11), (0, 4, 3, 2, 1), e, out_pad=1),            # 3 x 5 x 1287 (n: 3 dims)
            Case(rng, (3, 5, 4, 6, 7), (4, 2, 0, 3, 1), e),                         # 360 x 7 (m: 4 dims)
            Case(rng, (4, 10, 9, 11), (3, 2, 1, 0), e, view=np.s_[:, ::2], in_pad=2),   # 180 x 11, pitched
            Case(rng, (4, 6, 9, 11), (1, 3, 0, 2), e),                              # 6 x 36 x 11
            Case(rng, (5, 13, 9, 15), (3, 2, 1, 0), e, view=np.s_[::-1, :, ::-1]),  # m flipped: 585 x 15
            Case(rng, (3, 5, 4, 6, 7), (4, 2, 0, 3, 1), e, edit=_ones),             # 8 dims
            Case(rng, (2, 3, 2, 3), (3, 2, 1, 0), e),                               # 6 x 6
            Case(rng, (17, 2, 3, 70), (2, 0, 3, 1), e, view=np.s_[::-1]),          # 17 x 2 x 210, flipped
            Case(rng, (3, 50, 13, 8), (3, 1, 0, 2), e),                             # 1950 x 8: short input runs
            Case(rng, (2, 41, 7, 5), (3, 1, 0, 2), e, in_pad=1),                    # 574 x 5, pitched
            Case(rng, (3, 4, 43, 17), (3, 0, 1, 2), e)]                             # 516 x 17 (m: 3 dims)


def run_cases(cfgs, cases) -> None:
    """Emulate every (config, case) pair (each config runs every case)."""
    jobs = [(c, case) for c in cfgs for case in cases]
    for c, case in jobs:
        assert not strided_problems(c, case.problem, min(16, pointer_alignment(case.src_offset, case.dst_offset)))
    got = emulate_strided_many([case.job(c) for c, case in jobs])
    bad = [f"{c.key} {case.problem}" for (c, case), out in zip(jobs, got) if not np.array_equal(out, case.want)]
    assert not bad, bad[:5]


@pytest.mark.parametrize("e", ELEM_SIZES)
def test_every_config_matches_numpy(e):
    rng = np.random.default_rng(40 + e)
    cases = nd_cases(rng, e)
    ps = [c.problem for c in cases]
    assert {len(p.m_side) for p in ps} >= {1, 2, 4} and {len(p.n_side) for p in ps} >= {1, 2}
    assert any(p.batch for p in ps) and any(d.src < 0 for p in ps for d in p.dims())
    tiles = {(c.tile_rows, c.tile_cols) for c in nd_space(e)}
    assert all(any(p.m >= tr and p.n >= tc for p in ps) for tr, tc in tiles)          # full tiles
    assert all(any(p.m % tr and p.n % tc for p in ps) for tr, tc in tiles)            # ragged ones
    assert all(any(math.prod(d.size for d in p.batch) > 1 and p.m % tr for p in ps)   # tiles holding rows
               for tr, _ in tiles)                                                     # of two matrices
    run_cases(nd_space(e), cases)


@pytest.mark.parametrize("ep, e", [("conj32", 8), ("conj64", 16)])
def test_epilogues_conjugate_like_numpy(ep, e):
    """A complex permutation through conj: every group's sign bit flipped."""
    rng = np.random.default_rng(7)
    case = Case(rng, (5, 13, 9, 15), (3, 2, 1, 0), e)
    want, g = case.want.copy(), 8 if ep == "conj32" else 16
    want[PAD + g - 1:want.size - PAD:g] ^= 0x80   # the output: every byte from PAD to the end's PAD
    cfg = dataclasses.replace(nd_space(e)[0], epilogue=ep)
    assert np.array_equal(emulate_strided(*case.job(cfg)), want)


def test_the_check_sees_a_wrong_side():
    """Swapping a side's dims (or the encoding's counts) moves elements
    elsewhere: the buffer comparison catches it."""
    case = Case(np.random.default_rng(9), (3, 5, 4, 6, 7), (4, 2, 0, 3, 1), 4)
    cfg = nd_space(4)[0]
    assert np.array_equal(emulate_strided(*case.job(cfg)), case.want)
    good = case.problem
    case.problem = dataclasses.replace(good, m_side=good.m_side[::-1])
    assert not np.array_equal(emulate_strided(*case.job(cfg)), case.want)
    case.problem = dataclasses.replace(good, m_side=good.m_side[:1] + ((1, 4),) + good.m_side[1:])
    assert np.array_equal(emulate_strided(*case.job(cfg)), case.want)    # a size-1 dim changes nothing
    with pytest.raises(ValueError, match="outside the 8-byte destination buffer"):
        emulate_strided(cfg, good, case.src, np.zeros(8, np.uint8), case.src_offset, 0)


def test_run_problem_fuses_small_or_odd_matrices_and_wide_elements():
    small = tile_of((33, 65, 129, 61), (3, 2, 1, 0))          # 33 x 61 matrices: half-empty tiles
    assert run_problem(small) == fuse_tile(small)
    big = tile_of((1001, 63, 131), (2, 1, 0))                  # tiles 0.80 full; the fullest fusion: input rows
    assert fuse_tile(big).n > big.n and run_problem(big) is big
    aligned = tile_of((300, 333, 301), (2, 1, 0))              # output rows of 1200 bytes: 16-byte multiples
    assert fuse_tile(aligned).m > aligned.m and run_problem(aligned) is aligned
    odd = tile_of((257, 509, 263), (2, 1, 0))                  # output rows of 1028 bytes, lengthened by fusing
    assert fuse_tile(odd).m == 257 * 509 and run_problem(odd) == fuse_tile(odd)
    wide = tile_of((257, 509, 263), (2, 1, 0), 8)              # 8-byte elements always fuse
    assert run_problem(wide) == fuse_tile(wide)
    plain = tile_of((64, 96), (1, 0), view=np.s_[:, :48])       # a pitched view: nothing to fuse
    assert fuse_tile(plain) is None and run_problem(plain) is plain
    rows = layout.canonical((4, 5, 64), (1280, 256, 4), 4, (1, 0, 2), 16)   # 256-byte rows
    assert run_problem(rows) is rows


def cast_tile_of(shape, axes, cast="f32>bf16") -> TileProblem:
    """tile_of's problem with a cast's output elements (canonical(..., out_itemsize=))."""
    e, eo = CAST_SIZES[cast]
    p = canonical(shape, layout.c_strides(shape, e), e, axes, out_itemsize=eo)
    assert isinstance(p, TileProblem) and p.out_elem == eo, p
    return p


def test_casts_fuse_by_the_same_rule_and_run_on_ndtile_only():
    """A cast's TileProblem fuses as a plain one (output strides in output
    bytes: the m side continues where a dim's dst is out_elem * M) where its
    input elements are 4 bytes or more (CAST_FUSE_ELEM), its fused problem keys
    with :o, and only ndtile configs of that cast run it (ndshift takes no
    cast); the untuned pick is ndtile's rule's tile."""
    odd = cast_tile_of((257, 509, 263), (2, 1, 0))            # output rows of 514 bytes, lengthened
    nd = run_problem(odd, "f32>bf16")
    assert nd == fuse_tile(odd) and nd.m == 257 * 509 and nd.out_elem == 2 and nd.m_side[1] == (509, 263 * 4)
    plain = run_problem(tile_of((257, 509, 263), (2, 1, 0)))
    assert nd.m_side == plain.m_side and nd.batch == plain.batch == ()               # the same dims...
    assert nd.n_side == tuple((n, d // 2) for n, d in plain.n_side)                   # ...half the bytes out
    assert layout.moved_bytes(nd) == layout.moved_bytes(plain) // 2
    text = problem_text(check_problem(nd))
    assert text.endswith(":sci4:b():o2") and problem_from_text(text) == nd
    assert problem_from_text(problem_text(plain)) == plain and ":o" not in problem_text(plain)
    cands = strided_candidates(nd, 16, cast="f32>bf16")
    assert cands and {c.variant for c in cands} == {"ndtile"} and {c.cast for c in cands} == {"f32>bf16"}
    assert strided_candidates(nd, 16) == []                   # plain configs write 4-byte elements
    assert "writes 4-byte elements" in strided_problems(nd_space(4)[0], nd, 16)[0]
    assert default_strided(nd, cast="f32>bf16").key == "ndtile:e4:128x16:t256:v4:r1:p1:none:row:strided:f32>bf16"
    narrow = run_problem(cast_tile_of((257, 509, 263), (2, 1, 0), "f64>f32"), "f64>f32")   # 8-byte elements
    assert isinstance(narrow, NdTileProblem) and narrow.out_elem == 4
    assert default_strided(narrow, cast="f64>f32").variant == "ndtile"
    widen = cast_tile_of((33, 65, 61), (2, 1, 0), "bf16>f32")   # sub-word input: keeps shift tiles' vectors
    assert fuse_tile(widen) is not None and run_problem(widen, "bf16>f32") is widen
    fused = fuse_tile(widen)                                    # though ndtile's casts run it when asked
    assert fused.out_elem == 4 and default_strided(fused, cast="bf16>f32").variant == "ndtile"
    with pytest.raises(ValueError, match="multiple of the element size 2"):   # n side's dst: output bytes
        check_problem(dataclasses.replace(nd, n_side=((263, 2 * 130813 + 1),)))
    small = cast_tile_of((5, 6, 7), (2, 1, 0))
    for a, b in zip(host_buffers(small, 3, "f32>bf16"), host_buffers(fuse_tile(small), 3, "f32>bf16")):
        assert np.array_equal(a, b)                           # the same bytes as the TileProblem's


# -- ndshift: shift tiles through offset tables ------------------------------------


def ndshift_space(e: int) -> list[KernelConfig]:
    return [c for c in strided_space(e) if c.variant == "ndshift"]


def ndshift_cases(rng, e):
    """nd_cases' problems whose input columns are adjacent, and fused matrices
    of full tiles of every ndshift config ((3, 2, 1, 0) of 4-D, (2, 1, 0) of
    3-D arrays), with batch dims too ((2, 0, 3, 1) of 4-D arrays), and
    matrices of one tile's rows whose output rows follow one another."""
    return [c for c in nd_cases(rng, e) if c.problem.sci == e] + [
        Case(rng, (3, 130, 9, 41), (2, 0, 3, 1), e),                          # 3 x 130 x 369
        Case(rng, (2, 300, 7, 23), (2, 0, 3, 1), e, view=np.s_[::-1]),        # 2 x 300 x 161, flipped batch
        Case(rng, (5, 3, 270, 19), (1, 2, 0, 3)[::-1], e, out_pad=2),         # (3, 0, 2, 1): batch 3, pitched out
        # matrices of one tile's rows whose output rows follow one another (joins)
        Case(rng, (3, 45, 9, 41), (2, 0, 3, 1), e),                           # 3 x 45 x 369
        Case(rng, (4, 20, 5, 37), (2, 0, 3, 1), e),                           # 4 x 20 x 185
        Case(rng, (3, 5, 4, 97), (3, 2, 1, 0), e),                            # 60 x 97
        Case(rng, (2, 100, 7, 23), (2, 0, 3, 1), e, out_pad=1),               # pitched: rows do not follow
        Case(rng, (37, 5, 29, 41), (3, 2, 1, 0), e),                          # 185 x 1189: m and n of 2 dims
        Case(rng, (41, 9, 3, 97), (3, 2, 1, 0), e),                           # 369 x 291
        Case(rng, (33, 19, 45), (2, 1, 0), e),                                # 627 x 45
        Case(rng, (7, 300, 23), (2, 1, 0), e, in_pad=3),                      # 2100 x 23, pitched
        Case(rng, (9, 70, 37), (2, 1, 0), e, view=np.s_[::-1])]               # 630 x 37, flipped rows


@pytest.mark.parametrize("e", (1, 2, 4))
def test_ndshift_moves_fused_problems_like_numpy(e):
    """Every ndshift config on fused matrices (rows' input offsets and columns'
    output offsets from its tables): full tiles, ragged ones, tiles of fewer
    rows than an output vector, rows at every alignment, flipped m sides,
    batch dims (flipped, pitched)."""
    cases = ndshift_cases(np.random.default_rng(60 + e), e)
    ps = [c.problem for c in cases]
    assert sum(bool(p.batch) for p in ps) >= 6 and sum(not p.batch for p in ps) >= 6
    ko = 16 // e
    assert {len(p.m_side) for p in ps} >= {2, 3, 4} and {len(p.n_side) for p in ps} >= {1, 2}
    assert any(s < 0 for p in ps for _, s in p.m_side)
    assert all(any(0 < p.m % c.tile_rows < ko for p in ps) for c in ndshift_space(e))   # element-wise last tiles
    assert all(any(p.m >= c.tile_rows + ko and p.n >= c.tile_cols for p in ps) for c in ndshift_space(e))
    run_cases(ndshift_space(e), cases)


def odd_row_space(e: int) -> list[KernelConfig]:
    return [KernelConfig(**d) for d in families.of("ndshift").odd_row_space(e)]


@pytest.mark.parametrize("e", (1, 2))
def test_odd_row_ndshift_tiles_move_fused_problems_like_numpy(e, tmp_path):
    """ndshift tiles of 72 and 112 rows (ODD_ROW_TILES outside the tuning
    space, not powers of two) move ndshift_cases and matrices of 65 and 70
    rows exactly, and compile for sm_90 without spills (the space's 80-row
    ones run with ndshift_space's tests)."""
    cfgs = odd_row_space(e)
    assert cfgs and all(c.tile_rows & (c.tile_rows - 1) for c in cfgs)
    assert not {c.key for c in cfgs} & {c.key for c in strided_space(e)}
    rng = np.random.default_rng(80 + e)
    cases = ndshift_cases(rng, e) + [Case(rng, (5, 65, 9, 41), (2, 0, 3, 1), e),          # 65 rows: one tile
                                     Case(rng, (3, 70, 7, 23), (2, 0, 3, 1), e, out_pad=1),
                                     Case(rng, (2, 200, 5, 33), (2, 0, 3, 1), e)]        # 200: ragged tiles
    assert all(any(p.m % c.tile_rows and p.m > c.tile_rows for p in (x.problem for x in cases)) for c in cfgs)
    run_cases(cfgs, cases)
    assert_compiles_without_spills(cfgs, tmp_path)


def test_ndshift_takes_fused_problems_only():
    """ndshift's constraints: an NdTileProblem of its elements, input columns
    adjacent, strides (batch dims' too) and pointers of whole elements;
    strided configs of one tile a block without a cast. Its tiles do not
    span matrices: it launches B x M x N, where ndtile walks B * M rows."""
    nd = fuse_tile(tile_of((33, 65, 129, 61), (3, 2, 1, 0), 1))
    cfg = ndshift_space(1)[0]
    assert strided_problems(cfg, nd, 16) == []
    batched = fuse_tile(tile_of((33, 65, 129, 61), (2, 0, 3, 1), 1))
    assert batched.batch and strided_problems(cfg, batched, 16) == []
    assert launch_shape(cfg, batched) == (33, 65, 61 * 129)
    assert launch_shape(nd_space(1)[0], batched) == strided_shape(batched) == (1, 33 * 65, 61 * 129)
    b2 = fuse_tile(tile_of((33, 65, 129, 61), (2, 0, 3, 1), 2))
    assert strided_problems(ndshift_space(2)[0], b2, 16) == []
    odd = dataclasses.replace(b2, batch=(Dim(33, 3, b2.batch[0].dst),))      # a batch stride of 3 bytes
    assert "multiples of the element size" in strided_problems(ndshift_space(2)[0], odd, 16)[0]
    assert "not TileProblem" in strided_problems(cfg, tile_of((33, 65, 129, 61), (3, 2, 1, 0), 1), 16)[0]
    assert "2-byte ones" in strided_problems(cfg, fuse_tile(tile_of((5, 6, 7, 3), (3, 2, 1, 0), 2)), 16)[0]
    assert "column pitch" in strided_problems(cfg, dataclasses.replace(nd, sci=2), 16)[0]
    assert "pointers must be 2-byte" in strided_problems(ndshift_space(2)[0], fuse_tile(
        tile_of((5, 6, 7, 3), (3, 2, 1, 0), 2)), 1)[0]
    for bad in (dict(layout="dense"), dict(strip=2), dict(cast="i8>i32")):
        with pytest.raises(ValueError, match="ndshift configs are strided"):
            dataclasses.replace(cfg, **bad)
    assert KernelConfig.from_key(cfg.key) == cfg and cfg.key.startswith("ndshift:e1:")


def test_the_untuned_rule_takes_ndshift_for_sub_word_elements(monkeypatch):
    """With ND_SHIFT_UNTUNED, 1- and 2-byte fused problems take the first
    _ND_SHIFT_DEFAULT ndshift tile that fills their fused matrix nearly as well
    as the best, batched or not; 4-byte ones, 16-bit ones that fill no tile to
    _ND_SHIFT_MIN_FILL, and sub-word ones ndshift cannot run (input columns not
    adjacent) keep ndtile; without it every fused problem takes ndtile."""
    nd1 = fuse_tile(tile_of((33, 65, 129, 61), (3, 2, 1, 0), 1))
    monkeypatch.setattr(tuning_strided, "ND_SHIFT_UNTUNED", False)
    assert default_strided(nd1).variant == "ndtile"
    monkeypatch.setattr(tuning_strided, "ND_SHIFT_UNTUNED", True)
    cases = {  # (shape, axes): (fused rows x columns, its int8 tile, its 16-bit tile; None: ndtile)
        ((33, 65, 129, 61), (3, 2, 1, 0)): ((2145, 7869), (128, 128, 256), (64, 64, 256)),
        ((33, 1000, 129, 61), (1, 3, 0, 2)): ((4257, 61), (256, 64, 256), (64, 64, 256)),   # 61 columns: 64 wide
        ((33, 65, 129, 61), (2, 0, 3, 1)): ((65, 7869), (80, 128, 128), (80, 64, 128)),     # 65 rows: 80-row tiles
        ((33, 20, 129, 61), (2, 0, 3, 1)): ((20, 7869), (64, 128, 256), None),              # 16-bit: none to 0.6
        ((33, 200, 129, 61), (2, 0, 3, 1)): ((200, 7869), (128, 128, 256), (64, 64, 256)),  # 80 rows fill 0.83,
        #                                                    the others 0.78: within 0.8 of it, they lead
        ((61, 3, 101, 5), (1, 3, 2, 0)): ((61, 1515), (64, 128, 256), (64, 64, 256)),       # 61 rows fill 64
    }
    for e in (1, 2):
        for (shape, axes), (mn, *tiles) in cases.items():
            nd = fuse_tile(tile_of(shape, axes, e))
            d = default_strided(nd)
            assert (nd.m, nd.n) == mn
            if tiles[e - 1] is None:
                assert d.variant == "ndtile", (e, axes)
            else:
                assert d.variant == "ndshift" and (d.tile_rows, d.tile_cols, d.threads) == tiles[e - 1], (e, axes)
            assert tuning_candidates(nd)[0] == d          # the default leads the tuner's (the early-stop bar)
    nd4 = fuse_tile(tile_of((33, 65, 129, 61), (3, 2, 1, 0), 4))
    assert any(c.variant == "ndshift" for c in strided_candidates(nd4, 16))
    assert default_strided(nd4).variant == "ndtile"
    pitched = dataclasses.replace(fuse_tile(tile_of((33, 65, 129, 61), (3, 2, 1, 0), 2)), sci=4)
    assert default_strided(pitched).variant == "ndtile"


def test_ndshift_bank_report_has_its_tables_and_no_races():
    from autotrans.emulate.banks import bank_problem, bank_report
    from autotrans.emulate.races import races
    cfg = ndshift_space(2)[1]
    p = bank_problem(cfg)
    assert isinstance(p, NdTileProblem) and not p.batch and p.m == 2 * cfg.tile_rows + 1
    phases = {a.phase for a in bank_report(cfg)}
    assert phases == {"tables", "load", "mid", "store"}
    assert races(cfg) == []
