"""Fused conjugate (KernelConfig.epilogue "conj32"/"conj64", issue 15): the
strided kernels' store epilogue, checked through the host emulator against
NumPy's ``np.ascontiguousarray(np.transpose(x, axes).conj())`` byte for byte
(NaNs with payloads, infinities, signed zeros and random bits; every byte of
the destination buffer, pitch gaps and guard bands included), on hand-built
TileProblems and RowsProblems (pitched, batched, complex numbers moved as
words smaller than themselves, output pointers off the group's alignment)
and on the problems canonical() gives, dense transposes and copies included
(strided.as_tile, strided.as_rows). Plus keys, the fit rules, and every
epilogue config compiled by nvcc."""
import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from autotrans.build import nvcc
from autotrans.core import layout
from autotrans.core.layout import CopyProblem, Dim, RowsProblem, TileProblem, TransposeProblem
from autotrans.core.problem import ELEM_SIZES
from autotrans.emulate.emulator import emulate_strided, emulate_strided_many
from autotrans.kernels import config as config_mod
from autotrans.kernels.config import EPILOGUES, KernelConfig
from autotrans.kernels.strided import (as_rows, as_tile, epilogue_problems, pointer_alignment, strided_candidates,
                                       strided_problems, strided_space)
from autotrans.kernels.templates import render, template_dir

from test_strided_kernels import _offset, assert_compiles_without_spills

REPO = Path(__file__).resolve().parent.parent
POISON = 0xA5
PAD = 32          # bytes before a view's first byte in its buffer (plus a case's shift)
EPI = {np.dtype(np.complex64): "conj32", np.dtype(np.complex128): "conj64"}
TILE8 = KernelConfig("tile", 8, 32, 32, 256, pad=1, layout="strided", epilogue="conj32")
ROWS4 = KernelConfig("rows", 4, 1024, 1, 256, 4, layout="strided", epilogue="conj32")


# -- keys ------------------------------------------------------------------------


def shipped_keys():
    keys = set()
    for path in sorted((REPO / "cache").glob("*.json")):
        for entry in json.loads(path.read_text())["entries"]:
            rec = entry["record"]
            keys.add(rec["key"])
            keys.update(r["key"] for r in rec["candidates"] + rec["failures"])
            assert "epilogue" not in rec["config"]
            assert KernelConfig.from_dict(rec["config"]).to_dict() == rec["config"]
    return sorted(keys)


def test_keys_without_an_epilogue_are_unchanged():
    keys = shipped_keys()
    assert len(keys) > 100
    strided = [c.key for e in ELEM_SIZES for c in strided_space(e)]
    for k in keys + strided:
        cfg = KernelConfig.from_key(k)
        assert cfg.key == k and cfg.epilogue == "none" and "epilogue" not in cfg.to_dict()
        assert not k.endswith(("conj32", "conj64", ":none"))
    assert KernelConfig("tile", 4, 32, 32, 256, pad=1, layout="strided").key == \
        "tile:e4:32x32:t256:v4:r1:p1:none:row:strided"
    assert KernelConfig.from_dict({**TILE8.to_dict(), "epilogue": "none"}).key == TILE8.key.removesuffix(":conj32")


def test_epilogue_keys_round_trip():
    cfgs = [c for ep in EPILOGUES[1:] for e in ELEM_SIZES for c in strided_space(e, ep)]
    assert len(cfgs) > 100 and {c.epilogue for c in cfgs} == {"conj32", "conj64"}
    for c in cfgs:
        assert c.key.endswith(f":strided:{c.epilogue}") and c.name.endswith(f"_strided_{c.epilogue}")
        assert KernelConfig.from_key(c.key) == c and KernelConfig.from_dict(c.to_dict()) == c
        assert c.to_dict()["epilogue"] == c.epilogue and c.epilogue_group == {"conj32": 8, "conj64": 16}[c.epilogue]
        plain = dataclasses.replace(c, epilogue="none")
        assert plain.key + ":" + c.epilogue == c.key and plain in strided_space(c.elem_bytes)
    assert TILE8.key == "tile:e8:32x32:t256:v8:r1:p1:none:row:strided:conj32"
    assert len({c.name for c in cfgs}) == len(cfgs)


@pytest.mark.parametrize("key, why", [
    ("tile:e8:32x32:t256:v8:r1:p1:none:row:conj32", "layout must be 'strided'"),
    ("tile:e8:32x32:t256:v8:r1:p1:none:row:strided:none", "keys without an epilogue end before it"),
    ("tile:e8:32x32:t256:v8:r1:p1:none:row:strided:conj16", "epilogue must be one of"),
    ("tile:e4:32x32:t256:v4:r1:p1:none:row:strided:conj32", "elem_bytes must be a multiple of 8"),
    ("vec:e8:32x64:t256:v16:r1:p0:xor:col:strided:conj64", "elem_bytes must be a multiple of 16"),
    ("naive:e8:8x32:t256:v8:r1:p0:none:row:strided:conj32", "naive kernels take the layouts"),
    ("tile:e8:32x32:t256:v8:r1:p1:none:row:conj32:strided", "not a KernelConfig key"),
])
def test_bad_epilogues_say_why(key, why):
    with pytest.raises(ValueError, match=why):
        KernelConfig.from_key(key)


def test_rows_take_epilogues_at_any_element_size():
    for e in ELEM_SIZES:
        for ep in EPILOGUES:
            rows = [c for c in strided_space(e, ep) if c.variant == "rows"]
            assert rows == [dataclasses.replace(c, epilogue=ep) for c in strided_space(e) if c.variant == "rows"]
        for ep, group in (("conj32", 8), ("conj64", 16)):   # tile and vec only where elements are whole groups
            tiles = {c.variant for c in strided_space(e, ep)} - {"rows"}
            assert tiles == ({"tile", "vec", "ndtile"} if e % group == 0 else set()), (e, ep)
    with pytest.raises(ValueError, match="epilogue must be one of"):
        strided_space(8, "conj")


# -- problems: what fits an epilogue, as_tile, as_rows ---------------------------------


def test_epilogue_fit_says_why():
    tile = TileProblem(8, 33, 17, 17 * 8, 33 * 8, 8, (Dim(3, 33 * 17 * 8, 33 * 17 * 8),))
    assert epilogue_problems("conj32", tile) == [] and epilogue_problems("none", tile) == []
    assert "split them over output rows" in epilogue_problems("conj64", tile)[0]
    rows = RowsProblem(4, 6, (Dim(10, 64, 24),))                      # 24-byte rows, strides of 24
    assert epilogue_problems("conj32", rows) == []
    assert "multiples of 16 B" in epilogue_problems("conj64", rows)[-1]
    assert "not whole groups" in epilogue_problems("conj32", RowsProblem(4, 3, (Dim(2, 12, 12),)))[0]
    assert "multiples of 8 B, not [12]" in epilogue_problems("conj32", RowsProblem(4, 4, (Dim(2, 16, 12),)))[0]
    with pytest.raises(ValueError, match="epilogue must be one of"):
        epilogue_problems("neg", rows)
    # through strided_problems; the output pointer needs no group alignment (align 4 here)
    assert strided_problems(ROWS4, rows, 4) == []
    assert "not whole groups" in strided_problems(ROWS4, RowsProblem(4, 3, (Dim(2, 12, 12),)), 4)[0]
    assert strided_candidates(rows, 4, "conj32") == [c for c in strided_space(4, "conj32")
                                                     if not strided_problems(c, rows, 4)]
    assert ROWS4 in strided_candidates(rows, 4, "conj32")
    assert strided_candidates(tile, 16, "conj64") == []
    with pytest.raises(TypeError, match="TileProblem or RowsProblem"):
        strided_candidates(TransposeProblem(8, (1, 4, 4)), 16)


def _reference(problem, nbytes_in: int, nbytes_out: int, seed: int = 0):
    src = np.random.default_rng(seed).integers(0, 256, nbytes_in, dtype=np.uint8)
    return src, layout.apply(problem, src, nbytes_out)


def test_as_tile_is_the_dense_transpose():
    for bmn in ((3, 5, 7), (1, 4, 9)):
        p = TransposeProblem(8, bmn)
        t = as_tile(p)
        b, m, n = bmn
        assert (t.elem, t.m, t.n, t.ldi, t.ldo, t.sci) == (8, m, n, n * 8, m * 8, 8)
        assert t.batch == ((Dim(b, m * n * 8, m * n * 8),) if b > 1 else ())
        size = math.prod(bmn) * 8
        src, want = _reference(p, size, size)
        assert np.array_equal(layout.apply(t, src, size), want)
    with pytest.raises(TypeError, match="TransposeProblem"):
        as_tile(CopyProblem(8))


def test_as_rows_is_the_copy():
    assert as_rows(CopyProblem(8000)) == RowsProblem(16, 4, (Dim(125, 64, 64),))
    assert as_rows(CopyProblem(8000), align=4) == RowsProblem(4, 16, (Dim(125, 64, 64),))
    assert as_rows(CopyProblem(3 * 4096), align=8) == RowsProblem(8, 128, (Dim(12, 1024, 1024),))
    assert as_rows(CopyProblem(24)) == RowsProblem(8, 1, (Dim(3, 8, 8),))
    assert as_rows(CopyProblem(16)) == RowsProblem(16, 1, ())
    for n, align in ((8000, 16), (504, 4), (3 * 4096 + 8, 8), (7, 16)):
        p = CopyProblem(n)
        src, want = _reference(p, n, n)
        assert np.array_equal(layout.apply(as_rows(p, align), src, n), want)
    with pytest.raises(TypeError, match="CopyProblem"):
        as_rows(TransposeProblem(8, (1, 4, 4)))
    with pytest.raises(ValueError, match="moves nothing"):
        as_rows(CopyProblem(0))


# -- rendering and nvcc ----------------------------------------------------------


def frontend(source: str) -> tuple[bool, str]:
    out, log = nvcc.run({"unit.cu": '#include "common.cuh"\n' + source}, "unit.cu",
                        ["-ptx", "-arch=sm_90", "-std=c++17"], includes=[template_dir()])
    return out is not None, log


def test_a_wrong_python_group_fails_nvcc(monkeypatch):
    ok, log = frontend(render(TILE8))
    assert ok, log[-2000:]
    assert "at::EPI_CONJ32" in render(TILE8) and "at::EPI_NONE" in render(dataclasses.replace(TILE8, epilogue="none"))
    monkeypatch.setitem(config_mod.EPILOGUE_GROUPS, "conj32", 4)
    ok, log = frontend(render(TILE8))
    assert not ok and "KernelConfig.epilogue_group (Python) disagrees with at::epi_group" in log, log[-2000:]


def test_every_epilogue_candidate_compiles_without_spills(tmp_path):
    cfgs = [c for ep in EPILOGUES[1:] for e in ELEM_SIZES for c in strided_space(e, ep)]
    assert_compiles_without_spills(cfgs, tmp_path)


# -- the emulator against NumPy --------------------------------------------------

_SPECIAL = {   # bit patterns: +-0, +-inf, quiet and signalling NaNs with payloads, subnormals, finite values
    np.uint32: [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFFC12345,
                0x7F800001, 0xFF812345, 0x00000001, 0x807FFFFF, 0x3FC00000, 0xC0100000, 0x7F7FFFFF],
    np.uint64: [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000,
                0x7FF8000000000001, 0xFFF800000000ABCD, 0x7FF0000000000001, 0xFFF0000000001234, 1,
                0x800FFFFFFFFFFFFF, 0x3FF8000000000000, 0xC002000000000000, 0x7FEFFFFFFFFFFFFF],
}


def complex_bytes(rng, dtype, count: int) -> np.ndarray:
    """The bytes of count complex values: half of their parts special floats, half random bits."""
    word = np.uint32 if np.dtype(dtype).itemsize == 8 else np.uint64
    parts = rng.integers(0, 256, 2 * count * np.dtype(word).itemsize, dtype=np.uint8).view(word)
    pick = rng.random(parts.size) < 0.5
    parts[pick] = rng.choice(np.array(_SPECIAL[word], word), int(pick.sum()))
    return parts.view(np.uint8)


def _source(rng, dtype, shape, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """A buffer holding a C-contiguous complex array of shape at byte PAD + shift, and the array."""
    n = math.prod(shape)
    buf = np.full(n * np.dtype(dtype).itemsize + 2 * PAD + shift, POISON, np.uint8)
    buf[PAD + shift:PAD + shift + n * np.dtype(dtype).itemsize] = complex_bytes(rng, dtype, n)
    return buf, np.ndarray(tuple(shape), dtype, buffer=buf, offset=PAD + shift)


def _put(buf: np.ndarray, base_shape, dtype, shift: int, y: np.ndarray) -> np.ndarray:
    """Writes y's bytes into the pitched view (base_shape, y's shape within it) of buf; returns that view."""
    out = np.ndarray(tuple(base_shape), dtype, buffer=buf, offset=PAD + shift)[..., :y.shape[-1]]
    out.view(np.uint8)[...] = np.ascontiguousarray(y).view(np.uint8)
    return out


class Case:
    """A permutation of a strided complex view x into a pitched output view:
    the problem (hand-built: a RowsProblem moving words of ``word`` bytes where
    the inner axis stays put, else a TileProblem of whole complex elements),
    both buffers, and the destination buffer it must leave: NumPy's
    ascontiguousarray(transpose(x, perm).conj()) in the view, poison around it."""

    def __init__(self, rng, dtype, shape, perm, *, in_pad=0, out_pad=0, sci_mult=1, flip=False, word=None,
                 src_shift=0, dst_shift=0):
        self.dtype, e = np.dtype(dtype), np.dtype(dtype).itemsize
        base = list(shape)
        base[-1] = shape[-1] * sci_mult + in_pad
        self.src, x = _source(rng, dtype, base, src_shift)
        x = x[..., ::sci_mult][..., :shape[-1]]
        if flip:
            x = x[::-1]
        y = np.ascontiguousarray(np.transpose(x, perm).conj())
        dbase = list(y.shape)
        dbase[-1] += out_pad
        self.dst = np.full(math.prod(dbase) * e + 2 * PAD + dst_shift, POISON, np.uint8)
        self.want = self.dst.copy()
        _put(self.want, dbase, dtype, dst_shift, y)
        out = np.ndarray(tuple(dbase), dtype, buffer=self.dst, offset=PAD + dst_shift)[..., :y.shape[-1]]
        self.src_offset, self.dst_offset = _offset(x, self.src), _offset(out, self.dst)
        self.problem = self._problem(x, out, tuple(perm), e, word or e)

    @staticmethod
    def _problem(x, out, perm, e, word):
        last = x.ndim - 1
        if perm[-1] == last:
            return RowsProblem(word, x.shape[-1] * e // word, tuple(Dim(x.shape[a], x.strides[a], out.strides[k])
                                                                    for k, a in enumerate(perm[:-1])))
        a_m, k_n = perm[-1], perm.index(last)
        batch = tuple(Dim(x.shape[a], x.strides[a], out.strides[k]) for k, a in enumerate(perm) if a not in (a_m, last))
        return TileProblem(e, x.shape[a_m], x.shape[last], x.strides[a_m], out.strides[k_n], x.strides[last], batch)

    @property
    def align(self) -> int:
        return min(16, pointer_alignment(self.src_offset, self.dst_offset))

    @property
    def epilogue(self) -> str:
        return EPI[self.dtype]

    def job(self, cfg):
        return cfg, self.problem, self.src, self.dst, self.src_offset, self.dst_offset


class CanonicalCase(Case):
    """x permuted into a C-contiguous output, as permute() runs it: the problem
    is canonical()'s for these pointers (a dense transpose through as_tile, a
    copy through as_rows)."""

    def __init__(self, rng, dtype, shape, perm, *, view=lambda a: a, src_shift=0, dst_shift=0):
        self.dtype, e = np.dtype(dtype), np.dtype(dtype).itemsize
        self.src, base = _source(rng, dtype, shape, src_shift)
        x = view(base)
        y = np.ascontiguousarray(np.transpose(x, perm).conj())
        self.dst = np.full(y.nbytes + 2 * PAD + dst_shift, POISON, np.uint8)
        self.want = self.dst.copy()
        _put(self.want, y.shape, dtype, dst_shift, y)
        self.src_offset, self.dst_offset = _offset(x, self.src), PAD + dst_shift
        self.canonical = layout.canonical(x.shape, x.strides, e, perm, self.align)
        p = self.canonical
        self.problem = as_tile(p) if isinstance(p, TransposeProblem) else as_rows(p, self.align) \
            if isinstance(p, CopyProblem) else p


def align_pad(n: int, e: int) -> int:
    """Elements to add to a side of n so that its rows are 16-byte aligned, plus one vector."""
    k = max(1, 16 // e)
    return (-n) % k + k


def tile_cases(rng, dtype):
    """Batches, rank 3 to 5, pitched inputs and outputs, columns apart, a flipped
    axis; and 16-byte aligned pitches (vec tiles) with full and edge tiles."""
    e = np.dtype(dtype).itemsize
    c = [Case(rng, dtype, (3, 37, 45), (0, 2, 1)), Case(rng, dtype, (2, 133, 69), (0, 2, 1), sci_mult=2),
         Case(rng, dtype, (2, 3, 19, 70), (2, 0, 3, 1), in_pad=3, out_pad=5),
         Case(rng, dtype, (1, 65, 33), (0, 2, 1), sci_mult=3, out_pad=2),
         Case(rng, dtype, (4, 5, 13, 6), (3, 1, 0, 2), in_pad=2, sci_mult=2, flip=True)]
    c += [Case(rng, dtype, (3, 37, 45), (0, 2, 1), in_pad=align_pad(45, e), out_pad=align_pad(37, e)),
          Case(rng, dtype, (2, 71, 133), (0, 2, 1), in_pad=align_pad(133, e), out_pad=align_pad(71, e)),
          Case(rng, dtype, (2, 3, 3, 9, 11), (3, 1, 0, 4, 2), in_pad=align_pad(11, e), out_pad=align_pad(3, e))]
    return c


def rows_cases(rng, dtype):
    """(B, S, H, D) -> (B, H, S, D) with complex numbers moved whole, two at a
    time (16-byte words of complex64), and as 8-, 4- and 1-byte words with the
    output pointer off the group's alignment; 2400 rows (full tiles); rank 5
    with pitched rows."""
    c = [Case(rng, dtype, (2, 37, 3, 3), (0, 2, 1, 3)), Case(rng, dtype, (2, 300, 4, 2), (0, 2, 1, 3)),
         Case(rng, dtype, (3, 2, 5, 4, 4), (3, 0, 2, 1, 4), in_pad=2, out_pad=4),
         Case(rng, dtype, (2, 37, 3, 2), (0, 2, 1, 3), word=4),                     # words, pointers aligned
         Case(rng, dtype, (2, 37, 3, 2), (0, 2, 1, 3), word=8),
         Case(rng, dtype, (2, 37, 3, 3), (0, 2, 1, 3), word=4, dst_shift=4),        # output pointer 4 mod 8
         Case(rng, dtype, (2, 37, 3, 3), (0, 2, 1, 3), word=4, src_shift=4),
         Case(rng, dtype, (2, 5, 3, 3), (0, 2, 1, 3), word=1, dst_shift=3),
         Case(rng, dtype, (2, 300, 4, 2), (0, 2, 1, 3), word=8, dst_shift=8)]     # 8 mod 16
    if np.dtype(dtype).itemsize == 8:
        c.append(Case(rng, dtype, (2, 37, 3, 2), (0, 2, 1, 3), word=16))          # two complex64 a word
    return c


def canonical_cases(rng, dtype):
    """What permute() gives the kernels: dense transposes (as_tile; complex64
    promoted to 16-byte elements where the inner pair stays), rows (in words
    as wide as the pointers allow), a strided tile, copies (as_rows)."""
    return [CanonicalCase(rng, dtype, (3, 37, 45), (0, 2, 1)),
            CanonicalCase(rng, dtype, (40, 50, 2), (1, 0, 2)),
            CanonicalCase(rng, dtype, (8, 12, 3, 5), (0, 2, 1, 3)),
            CanonicalCase(rng, dtype, (8, 12, 3, 5), (0, 2, 1, 3), src_shift=4),
            CanonicalCase(rng, dtype, (8, 12, 3, 5), (0, 2, 1, 3), src_shift=8, dst_shift=8),
            CanonicalCase(rng, dtype, (30, 41), (1, 0), view=lambda a: a[:, ::2]),
            CanonicalCase(rng, dtype, (1000,), (0,)),
            CanonicalCase(rng, dtype, (7, 9), (0, 1), dst_shift=4)]


def run(cfgs_of, cases) -> list:
    """Emulate every (config, case) pair cfgs_of(case) gives; each case runs on
    some config. Returns the jobs' (config, case) pairs."""
    jobs = [(c, case) for case in cases for c in cfgs_of(case)]
    assert {id(case) for _, case in jobs} == {id(case) for case in cases}
    got = emulate_strided_many([case.job(c) for c, case in jobs])
    bad = [f"{c.key} {case.problem} at {case.src_offset}/{case.dst_offset}" for (c, case), out in zip(jobs, got)
           if not np.array_equal(out, case.want)]
    assert not bad, bad[:5]
    return jobs


def fits(space):
    return lambda case: [c for c in space if not strided_problems(c, case.problem, case.align)]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_tile_and_vec_conjugate_like_numpy(dtype):
    rng = np.random.default_rng(np.dtype(dtype).itemsize)
    e, ep = np.dtype(dtype).itemsize, EPI[np.dtype(dtype)]
    space = [c for c in strided_space(e, ep) if c.variant in ("tile", "vec")]      # ndtile: tests/test_ndtile.py
    cases = tile_cases(rng, dtype)
    assert all(isinstance(c.problem, TileProblem) for c in cases)
    jobs = run(fits(space), cases)
    assert {c for c, _ in jobs} == set(space)     # every tile and vec config ran


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_rows_conjugate_like_numpy_at_any_word_size(dtype):
    rng = np.random.default_rng(100 + np.dtype(dtype).itemsize)
    ep = EPI[np.dtype(dtype)]
    cases = rows_cases(rng, dtype)
    assert all(isinstance(c.problem, RowsProblem) for c in cases)
    assert {c.problem.elem for c in cases} >= {1, 4, 8} and any(c.dst_offset % 8 for c in cases)
    space = {w: [c for c in strided_space(w, ep) if c.variant == "rows"] for w in ELEM_SIZES}
    jobs = run(lambda case: fits(space[case.problem.elem])(case), cases)
    small = [(c, case) for c, case in jobs if c.vec_bytes < c.epilogue_group]
    assert small and any(case.dst_offset % c.epilogue_group for c, case in small)   # groups from the pointer
    ran = {c for c, _ in jobs}
    for w in (4, 8):   # every rows config of these word sizes ran
        assert set(space[w]) <= ran, set(space[w]) - ran


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_canonical_problems_conjugate_like_numpy(dtype):
    """Every candidate strided_candidates gives each problem, as permute() would pick among them."""
    rng = np.random.default_rng(200 + np.dtype(dtype).itemsize)
    ep = EPI[np.dtype(dtype)]
    cases = canonical_cases(rng, dtype)
    kinds = {type(c.canonical).__name__ for c in cases}
    assert kinds == {"TransposeProblem", "RowsProblem", "TileProblem", "CopyProblem"}
    assert {c.problem.elem for c in cases} >= {16, 8, 4}
    jobs = run(lambda case: strided_candidates(case.problem, case.align, ep), cases)
    assert len(jobs) > 2 * len(cases)


def test_the_check_sees_a_missing_or_wrong_conjugate():
    """The same launch without the epilogue, or with the other one, leaves other
    bytes (the comparisons above can fail); with it, exactly the sign bits of
    the imaginary parts differ from the plain transpose."""
    rng = np.random.default_rng(7)
    case = Case(rng, np.complex64, (3, 37, 45), (0, 2, 1))
    got = emulate_strided(*case.job(TILE8))
    plain = emulate_strided(*case.job(dataclasses.replace(TILE8, epilogue="none")))
    assert np.array_equal(got, case.want) and not np.array_equal(plain, case.want)
    body = slice(case.dst_offset, case.dst_offset + 45 * 37 * 3 * 8)
    flips = (got[body] ^ plain[body]).reshape(-1, 8)
    assert set(flips[:, 7]) == {0x80} and not flips[:, :7].any()
    words = Case(rng, np.complex64, (2, 37, 3, 2), (0, 2, 1, 3), word=4, dst_shift=4)
    assert np.array_equal(emulate_strided(*words.job(ROWS4)), words.want)
    wrong = dataclasses.replace(ROWS4, epilogue="conj64")   # 16-byte groups: every other imaginary part
    assert strided_problems(wrong, words.problem, 4) == []
    assert not np.array_equal(emulate_strided(*words.job(wrong)), words.want)


def test_emulator_refuses_an_epilogue_that_does_not_fit():
    rng = np.random.default_rng(3)
    case = Case(rng, np.complex64, (2, 37, 3, 3), (0, 2, 1, 3), word=4)
    with pytest.raises(ValueError, match="not whole groups"):
        emulate_strided(*case.job(dataclasses.replace(ROWS4, epilogue="conj64")))
