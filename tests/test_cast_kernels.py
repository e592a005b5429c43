"""Fused casts (KernelConfig.cast, issue 15's permute(x, axes, dtype=)): the
strided kernels' conversions (cuda_templates/cast.cuh), checked bit for bit
against NumPy's astype of np.transpose(x, axes) (float16 casts are NumPy's
own; bfloat16 ones ml_dtypes', re-derived here by nearest-value search, not
by the kernels' bias trick) for every cast pair: the conversions alone on
every 16-bit input and on special and random 32/64-bit ones (a host program
built from cast.cuh, the GPU's code), and through the host emulator on
tile, vec and rows configs: odd shapes, 2-d to 5-d permutations, strided
inputs, pitched outputs, and canonical()'s problems (a dense transpose as
as_tile, a copy as as_rows), inputs full of NaNs (quiet and signalling, both
signs, payloads), infinities, signed zeros, subnormals, values that round to
subnormals or overflow in the output type, exact ties both ways and random
bits; every byte of the destination buffer checked; rows' 32- and 64-byte
vectors of casts (the wider side in 16-byte accesses) on rows pitched to 16
bytes. Plus the dtype-name mapping, keys, the fit rules, and every cast config
compiled by nvcc (the wide vectors' accesses checked in the PTX)."""
import dataclasses
import itertools
import json
import math
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from autotrans.build import nvcc
from autotrans.core import layout
from autotrans.core.layout import CopyProblem, Dim, RowsProblem, TileProblem, TransposeProblem
from autotrans.core.problem import ELEM_SIZES
from autotrans.emulate.emulator import emulate_strided, emulate_strided_many
from autotrans.kernels.config import CAST_SIZES, CASTS, DTYPE_TAGS, KernelConfig, cast_for
from autotrans.kernels.strided import (as_rows, as_strided, as_tile, byte_extent, pointer_alignment,
                                       strided_candidates, strided_problems, strided_space)
from autotrans.kernels.templates import render, render_unit, template_dir
from autotrans.results.keys import check_problem, problem_from_text, problem_text

from test_strided_kernels import assert_compiles_without_spills

REPO = Path(__file__).resolve().parent.parent
POISON = 0xA5
PAD = 32   # bytes before a view's first byte in its buffer
NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i16": np.int16, "i32": np.int32,
      "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
FMT = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}   # exponent, fraction bits
FLOAT_CASTS = [c for c in CASTS[1:] if c[0] in "fb"]
INT_CASTS = [c for c in CASTS[1:] if c[0] in "iu"]


def words(nbytes: int):
    return np.dtype(f"<u{nbytes}")


def sides(cast: str) -> tuple[str, str]:
    src, dst = cast.split(">")
    return src, dst


# -- the reference: NumPy astype; bfloat16 as ml_dtypes rounds ------------------------


def f32_to_bf16(f: np.ndarray) -> np.ndarray:
    """float32 bits to bfloat16 bits by the nearest of the two bfloat16
    neighbours (ties to the even one; past the largest finite value, by
    IEEE's rule with 2^128 standing for infinity); NaN -> 0x7FC0 | sign."""
    f = f.astype(np.uint32)
    mag = f & np.uint32(0x7FFFFFFF)
    lo = mag >> 16
    x = (mag.view(np.float32)).astype(np.float64)
    lo_v = (lo.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    hi_v = ((lo.astype(np.uint32) + 1) << 16).view(np.float32).astype(np.float64)
    hi_v = np.where(lo == 0x7F7F, 2.0 ** 128, hi_v)
    tie = (hi_v - x) == (x - lo_v)
    up = np.where(tie, (lo & 1) == 1, (hi_v - x) < (x - lo_v))
    r = np.where(up, lo + 1, lo)
    r = np.where(mag == 0x7F800000, 0x7F80, r) | ((f >> 16) & 0x8000)
    return np.where(mag > 0x7F800000, ((f >> 16) & 0x8000) | 0x7FC0, r).astype(np.uint16)


def reference(cast: str, w: np.ndarray) -> np.ndarray:
    """The output words of a cast of input words w: NumPy's astype (every
    cast but bfloat16's), ml_dtypes' static_cast<To>(static_cast<float>(x))
    for bfloat16 (float32 -> float16 as Eigen's scalar code: NaN -> 0x7E00 | sign)."""
    src, dst = sides(cast)
    with np.errstate(all="ignore"):
        if "bf16" not in (src, dst):
            return w.view(NP[src]).astype(NP[dst]).view(words(np.dtype(NP[dst]).itemsize))
        if dst == "bf16":
            return f32_to_bf16(w.view(NP[src]).astype(np.float32).view(np.uint32))
        f = (w.astype(np.uint32) << 16).view(np.float32)
        if dst == "f16":
            return np.where(np.isnan(f), (w & 0x8000) | 0x7E00, f.astype(np.float16).view(np.uint16)).astype(np.uint16)
        return f.astype(NP[dst]).view(words(np.dtype(NP[dst]).itemsize))


# -- inputs full of special values ----------------------------------------------------


def _bits(tag: str, sign: int, exp: int, man: int) -> int:
    e, m = FMT[tag]
    return (sign << (e + m)) | (exp << m) | man


def float_specials(tag: str) -> list[int]:
    """Both signs of: zeros, infinities, quiet and signalling NaNs with and
    without payloads (top and bottom payload bits), subnormals (least,
    largest, a middle one), the least normal, the largest finite value, one."""
    e, m = FMT[tag]
    top = (1 << e) - 1
    q = 1 << (m - 1)
    mans = [(0, 0), (top, 0), (top, q), (top, q | 1), (top, (1 << m) - 1), (top, 1), (top, q >> 1),
            (top, (q >> 1) | 1), (0, 1), (0, (1 << m) - 1), (0, q | 3), (1, 0), (top - 1, (1 << m) - 1),
            ((1 << (e - 1)) - 1, 0)]
    return [_bits(tag, s, x, y) for s in (0, 1) for x, y in mans]


@np.errstate(all="ignore")
def _exactly(tag: str, v: np.ndarray) -> np.ndarray:
    """The float64 values of v exactly representable in tag, as its words."""
    if tag == "f64":
        return v.view(np.uint64)
    if tag == "bf16":
        f = v.astype(np.float32)
        ok = (f.astype(np.float64) == v) & ((f.view(np.uint32) & 0xFFFF) == 0)
        return (f.view(np.uint32)[ok] >> 16).astype(np.uint16)
    f = v.astype(NP[tag])
    return f[f.astype(np.float64) == v].view(words(np.dtype(NP[tag]).itemsize))


@np.errstate(all="ignore")
def landmarks(tag: str, rng) -> np.ndarray:
    """float64 values where rounding to tag is decided: its least subnormal,
    half and 1.5 times it (ties), the subnormal-normal border, the largest
    finite value and the overflow tie past it (and a quarter ulp short),
    exact ties between neighbours at random exponents of both parities, and
    random values across (and a bit past) tag's range."""
    e, m = FMT[tag]
    bias = (1 << (e - 1)) - 1
    tiny, least = 2.0 ** (1 - bias - m), 2.0 ** (1 - bias)
    big, ulp = (2 - 2.0 ** -m) * 2.0 ** bias, 2.0 ** (bias - m)
    fixed = [tiny, tiny / 2, tiny * 1.5, tiny * 2.5, tiny / 4, least, least - tiny / 2, least - tiny,
             big, big + ulp / 2, big + ulp / 4, big + ulp, 1.0, 1 + 2.0 ** -(m + 1), 1 + 3 * 2.0 ** -(m + 1)]
    ex = rng.integers(1 - bias - m, bias + 1, 300)
    man = rng.integers(0, 1 << min(m, 50), 300).astype(np.float64)
    ties = (1 + (man * 2 + 1) / 2.0 ** (min(m, 50) + 1)) * np.exp2(ex.astype(np.float64))
    spread = np.exp2(rng.uniform(-bias - m - 3, bias + 2, 300))
    v = np.concatenate([np.array(fixed), ties, spread])
    v = v[np.isfinite(v)]
    return np.concatenate([v, -v])


def interesting(cast: str, rng) -> np.ndarray:
    """Input words for a cast: the input type's specials, the landmarks of
    both types that the input represents exactly and their neighbours (one
    unit of the last place either way: just past a tie), and random bits."""
    src, dst = sides(cast)
    eb = CAST_SIZES[cast][0]
    if src[0] in "iu":
        n = 8 * eb
        vals = [0, 1, (1 << n) - 1, 1 << (n - 1), (1 << (n - 1)) - 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF]
        fixed = np.array([v & ((1 << n) - 1) for v in vals], np.uint64).astype(words(eb))
    else:
        land = [_exactly(src, landmarks(t, rng)) for t in (src, dst)]
        near = np.concatenate(land)
        fixed = np.concatenate([np.array(float_specials(src), np.uint64).astype(words(eb)), near,
                                near + 1, near - 1]).astype(words(eb))
    rand = rng.integers(0, 256, fixed.size * eb, dtype=np.uint8).view(words(eb))
    return np.concatenate([fixed, rand])


def fill(rng, cast: str, count: int) -> np.ndarray:
    """count input words: interesting(cast) repeated and shuffled, every kind in."""
    pool = interesting(cast, rng)
    return rng.permutation(np.resize(pool, max(count, 1)))[:count]


# -- the mapping and the table -------------------------------------------------------------


def test_cast_names_and_sizes():
    assert len(CASTS) == 31 and CASTS[0] == "none" and len(set(CASTS)) == len(CASTS)
    assert set(CAST_SIZES) == set(CASTS[1:]) == set(layout.CASTS)
    assert len(FLOAT_CASTS) == 12 and len(INT_CASTS) == 18
    for c in CASTS[1:]:
        src, dst = sides(c)
        assert CAST_SIZES[c] == (layout.CAST_TYPES[src], layout.CAST_TYPES[dst]) and src != dst
    assert {a for c in FLOAT_CASTS for a in sides(c)} == set(FMT)
    assert {c for c in INT_CASTS if CAST_SIZES[c][1] < CAST_SIZES[c][0]} == {
        f"i{a}>i{b}" for a, b in itertools.permutations((8, 16, 32, 64), 2) if b < a}


INT_NAMES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_NAMES = ["float16", "bfloat16", "float32", "float64"]


def test_cast_for_every_pair():
    assert set(DTYPE_TAGS) == set(INT_NAMES + FLOAT_NAMES)
    seen = set()
    for a, b in itertools.product(FLOAT_NAMES, repeat=2):
        c = cast_for(a, b)
        assert c == ("none" if a == b else f"{DTYPE_TAGS[a]}>{DTYPE_TAGS[b]}")
        seen.add(c)
    for a, b in itertools.product(INT_NAMES, repeat=2):
        c = cast_for(a, b)
        sa, sb = np.dtype(a).itemsize, np.dtype(b).itemsize
        if sa == sb:
            assert c == "none"
            continue
        want = f"i{8 * sa}>i{8 * sb}" if sb < sa else f"{'i' if a[0] == 'i' else 'u'}{8 * sa}>" \
                                                           f"{'i' if a[0] == 'i' else 'u'}{8 * sb}"
        assert c == want, (a, b, c)
        seen.add(c)
    assert seen == set(CASTS)
    assert cast_for("uint16", "int8") == "i16>i8" and cast_for("int8", "uint64") == "i8>i64"
    assert cast_for("uint8", "int32") == "u8>u32" and cast_for("int32", "uint32") == "none"


def test_cast_for_is_numpy_astype():
    """The cast cast_for names moves every bit as NumPy's astype between the two dtypes does."""
    rng = np.random.default_rng(1)
    names = INT_NAMES + ["float16", "float32", "float64"]
    for a, b in itertools.product(names, repeat=2):
        if (a[0] in "iu") != (b[0] in "iu"):
            continue
        c = cast_for(a, b)
        eb = np.dtype(a).itemsize
        w = interesting(c, rng) if c != "none" else rng.integers(0, 256, 4000 * eb, dtype=np.uint8).view(words(eb))
        with np.errstate(all="ignore"):
            want = w.view(a).astype(b).view(words(np.dtype(b).itemsize))
        got = w.view(words(np.dtype(b).itemsize)) if c == "none" else layout.cast_reference(c)(w)
        assert np.array_equal(got, want), (a, b, c)


@pytest.mark.parametrize("src, dst, why", [
    ("float32", "int32", "between integers and floats"), ("int8", "float16", "between integers and floats"),
    ("complex64", "float32", "cast src must be one of"), ("float32", "float8_e4m3fn", "cast dst must be one of"),
    ("bool", "int8", "cast src must be one of"), (np.float32, "float16", "cast src must be one of"),
    ("float32", 4, "cast dst must be one of"),
])
def test_cast_for_refuses_what_is_not_built(src, dst, why):
    with pytest.raises(ValueError, match=why):
        cast_for(src, dst)


def test_the_references_agree():
    """core.layout's reference (what apply uses) is this file's, on every cast."""
    rng = np.random.default_rng(2)
    for c in CASTS[1:]:
        w = interesting(c, rng)
        assert np.array_equal(layout.cast_reference(c)(w), reference(c, w)), c
    with pytest.raises(ValueError, match="unknown cast"):
        layout.cast_reference("f32>f8")


def test_bfloat16_rules_from_ml_dtypes():
    """The rules read in ml_dtypes' and Eigen's source (see cast.cuh): NaN ->
    0x7FC0 | sign; float64 -> bfloat16 rounds twice, through float32; bfloat16
    -> float16 gives NaN 0x7E00 | sign; bfloat16 -> float64 quiets NaNs (via float32)."""
    f32 = np.array([0x7F800001, 0xFF812345, 0x7FC00000, 0x3F808000, 0x3F818000, 0x3F808001, 0x7F7FFFFF,
                    0x7F7F7FFF, 0x00008000, 0x00018000, 0x807FFFFF], np.uint32)
    assert [hex(v) for v in reference("f32>bf16", f32)] == [
        "0x7fc0", "0xffc0", "0x7fc0", "0x3f80", "0x3f82", "0x3f81", "0x7f80", "0x7f7f", "0x0", "0x2", "0x8080"]
    twice = np.array([np.float64(1 + 2 ** -8 + 2 ** -30)]).view(np.uint64)   # above the tie, but float32 says tie
    assert reference("f64>bf16", twice)[0] == 0x3F80
    bf = np.array([0x7F81, 0xFFC1, 0x7F80, 0x4780, 0x477F, 0x0001], np.uint16)
    assert [hex(v) for v in reference("bf16>f16", bf)] == ["0x7e00", "0xfe00", "0x7c00", "0x7c00", "0x7bf8", "0x0"]
    assert hex(reference("bf16>f64", bf[:1])[0]) == "0x7ff8200000000000"
    assert hex(reference("f16>f32", np.array([0x7C01], np.uint16))[0]) == "0x7f802000"   # numpy: not quieted


# -- the conversions alone: cast.cuh compiled for the host ----------------------------------

CONVERT = r"""
#include "cast.cuh"
#include <cstdio>
#include <cstdlib>
#include <vector>
template <int C> int run(const char* in, const char* out) {
  typedef at::Cast<C> K;
  FILE* f = fopen(in, "rb");
  if (!f) return 2;
  fseek(f, 0, SEEK_END);
  long n = ftell(f) / K::IN;
  fseek(f, 0, SEEK_SET);
  std::vector<typename at::Word<K::IN>::T> a(n);
  std::vector<typename at::Word<K::OUT>::T> b(n);
  if (n && fread(a.data(), K::IN, n, f) != (size_t)n) return 2;
  fclose(f);
  for (long i = 0; i < n; ++i) b[i] = K::conv(a[i]);
  f = fopen(out, "wb");
  if (!f || fwrite(b.data(), K::OUT, n, f) != (size_t)n) return 2;
  fclose(f);
  return 0;
}
int main(int argc, char** argv) {
  int id = atoi(argv[1]);
%s
  return 1;
}
"""


@pytest.fixture(scope="module")
def converter():
    """A host program running at::Cast<C>::conv of cast.cuh: `prog C in out`."""
    cases = "\n".join(f"  if (id == {i}) return run<at::CAST_{c.replace('>', '_').upper()}>(argv[2], argv[3]);"
                      for i, c in enumerate(CASTS[1:], start=1))
    exe, log = nvcc.run({"convert.cu": CONVERT % cases}, "convert.cu", ["-O2", "-std=c++17"],
                        includes=[template_dir()])
    assert exe is not None, log[-3000:]
    d = tempfile.TemporaryDirectory(prefix="autotrans-cast-")
    path = Path(d.name) / "convert"
    path.write_bytes(exe)
    path.chmod(0o700)
    yield path
    d.cleanup()


def convert(exe, cast: str, w: np.ndarray) -> np.ndarray:
    with tempfile.TemporaryDirectory(prefix="autotrans-cast-") as d:
        src, dst = Path(d) / "in", Path(d) / "out"
        w.tofile(src)
        subprocess.run([str(exe), str(CASTS.index(cast)), str(src), str(dst)], check=True)
        return np.fromfile(dst, words(CAST_SIZES[cast][1]))


@pytest.mark.parametrize("cast", CASTS[1:])
def test_every_conversion_matches_numpy(converter, cast):
    """Every 8- and 16-bit input; 32- and 64-bit ones: the specials, every
    landmark and its neighbours, random bits, and every exponent of the
    input with random fractions."""
    rng = np.random.default_rng(CASTS.index(cast))
    eb = CAST_SIZES[cast][0]
    if eb <= 2:
        w = np.arange(1 << (8 * eb), dtype=np.uint64).astype(words(eb))
    else:
        w = np.concatenate([interesting(cast, rng)] * 3)
        w[w.size // 3:] ^= rng.integers(0, 2, w.size - w.size // 3, dtype=np.uint64).astype(words(eb))
        src = sides(cast)[0]
        if src in FMT:
            e, m = FMT[src]
            fr = rng.integers(0, 1 << min(m, 62), 64, dtype=np.uint64)
            sweep = [(s << (e + m)) | (x << m) | fr for s in (0, 1) for x in range(1 << e)]
            w = np.concatenate([w, np.concatenate(sweep).astype(words(eb))])
    got, want = convert(converter, cast, w), reference(cast, w)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(hex(int(w[i])), hex(int(got[i])), hex(int(want[i]))) for i in bad[:5]]


# -- keys and the fit rules ------------------------------------------------------------------

TILE = KernelConfig("tile", 4, 32, 32, 256, pad=1, layout="strided", cast="f32>bf16")
VEC = KernelConfig("vec", 4, 64, 64, 256, 16, 4, 0, "xor", "col", "strided", cast="f32>bf16")
ROWS = KernelConfig("rows", 4, 128, 32, 256, 16, layout="strided", cast="f32>bf16")
WIDE = KernelConfig.from_key("rows:e4:64x64:t256:v32:r1:p0:none:row:strided:f32>bf16")   # 32 B in, 16 out


def test_keys_without_a_cast_are_unchanged():
    keys = set()
    for path in sorted((REPO / "cache").glob("*.json")):
        for entry in json.loads(path.read_text())["entries"]:
            rec = entry["record"]
            keys.update([rec["key"]] + [r["key"] for r in rec["candidates"] + rec["failures"]])
            assert "cast" not in rec["config"]
    keys |= {c.key for ep in ("none", "conj32", "conj64") for e in ELEM_SIZES for c in strided_space(e, ep)}
    assert len(keys) > 100
    for k in sorted(keys):
        cfg = KernelConfig.from_key(k)
        assert cfg.key == k and cfg.cast == "none" and "cast" not in cfg.to_dict() and ">" not in k


def test_cast_keys_round_trip():
    cfgs = [c for cast in CASTS[1:] for c in strided_space(CAST_SIZES[cast][0], cast=cast)]
    assert len(cfgs) > 600 and {c.cast for c in cfgs} == set(CASTS[1:])
    assert {c.variant for c in cfgs} == {"tile", "vec", "rows", "shift", "ndtile"}
    for c in cfgs:
        assert c.key.endswith(f":strided:{c.cast}") and KernelConfig.from_key(c.key) == c
        assert KernelConfig.from_dict(c.to_dict()) == c and c.to_dict()["cast"] == c.cast
        assert (c.elem_bytes, c.out_elem_bytes) == CAST_SIZES[c.cast]
        assert c.vec_elems >= 1 and c.vec_bytes == c.vec_elems * max(c.elem_bytes, c.out_elem_bytes)
    assert len({c.name for c in cfgs}) == len(cfgs) and all(c.name.isidentifier() for c in cfgs)
    assert TILE.key == "tile:e4:32x32:t256:v4:r1:p1:none:row:strided:f32>bf16"
    assert TILE.name == "at_tile_e4_32x32_t256_v4_r1_p1_none_row_strided_f32_bf16"
    assert KernelConfig("tile", 2, 32, 32, 256, pad=1, layout="strided", cast="bf16>f64").vec_bytes == 8
    plain = dataclasses.replace(VEC, cast="none")
    assert plain.key + ":f32>bf16" == VEC.key and plain in strided_space(4)
    wide = [c for c in cfgs if c.vec_bytes > 16]
    assert {c.vec_bytes for c in wide} == {32, 64} and {c.variant for c in wide} == {"rows"}
    assert {c.cast for c in wide} == {c for c in CASTS[1:] if len(set(CAST_SIZES[c])) == 2}   # sizes differ
    assert all(c.vec_elems * min(c.elem_bytes, c.out_elem_bytes) <= 16 for c in wide)
    assert WIDE in cfgs and (WIDE.vec_elems, WIDE.pointer_align) == (8, 16) and KernelConfig.from_key(WIDE.key) == WIDE
    assert WIDE.family.geometry(WIDE) == WIDE.family.Geometry(8, 8, 32, 2, 1)


@pytest.mark.parametrize("key, why", [
    ("tile:e4:32x32:t256:v4:r1:p1:none:row:f32>bf16", "layout must be 'strided'"),
    ("tile:e2:32x32:t256:v4:r1:p1:none:row:strided:f32>bf16", "elem_bytes must be 4"),
    ("tile:e8:32x32:t256:v8:r1:p1:none:row:strided:conj32:f64>f32", "a cast and an epilogue do not combine"),
    ("tile:e4:32x32:t256:v4:r1:p1:none:row:strided:f32>f8", "cast must be 'none' or 'SRC>DST'"),
    ("tile:e4:32x32:t256:v4:r1:p1:none:row:strided:i32>u16", "cast must be 'none' or 'SRC>DST'"),
    ("tile:e4:32x32:t256:v8:r1:p1:none:row:strided:f32>bf16", "tile uses scalar accesses"),
    ("naive:e4:8x32:t256:v4:r1:p0:none:row:strided:f32>bf16", "naive kernels take the layouts"),
    ("rows:e4:64x2:t256:v16:r1:p0:none:row:strided:f32>bf16", "rows' tile_cols must be a multiple of vec_elems"),
    ("vec:e2:64x64:t256:v4:r1:p0:xor:col:strided:bf16>f32", "micro_rows must be a power of two dividing vec_elems"),
    ("tile:e4:32x32:t256:v4:r1:p1:none:row:strided:f32>bf16:conj32", "not a KernelConfig key"),
    ("rows:e4:64x64:t256:v32:r1:p0:none:row:strided", "rows' 32-byte vectors are for casts only"),
    ("rows:e2:32x128:t256:v32:r1:p0:none:row:strided:f16>bf16", "moves 32 B on its narrower side"),
    ("rows:e8:16x128:t256:v64:r1:p0:none:row:strided:f64>f32", "moves 32 B on its narrower side"),
    ("rows:e4:128x64:t256:v48:r1:p0:none:row:strided:f32>bf16",
     r"vec_bytes must be one of \(1, 2, 4, 8, 16\) \(or, rows casts, \(32, 64\)\)"),
    ("rows:e4:256x64:t256:v32:r1:p0:none:row:strided:f32>bf16", r"at most 16 vectors and 128 bytes \(here 8x1 of 32 B\)"),
    ("vec:e4:64x64:t256:v32:r4:p0:xor:col:strided:f32>bf16", r"vec_bytes must be one of \(1, 2, 4, 8, 16\) and"),
    ("tile:e4:32x32:t256:v32:r1:p1:none:row:strided:f32>bf16", r"vec_bytes must be one of \(1, 2, 4, 8, 16\) and"),
])
def test_bad_casts_say_why(key, why):
    with pytest.raises(ValueError, match=why):
        KernelConfig.from_key(key)


def test_strided_space_takes_casts():
    for cast in CASTS[1:]:
        e, eo = CAST_SIZES[cast]
        space = strided_space(e, cast=cast)
        assert space and all(c.cast == cast for c in space)
        geometry = lambda c: (c.tile_rows, c.tile_cols, c.threads, c.pad, c.swizzle, c.order)  # noqa: E731
        assert [geometry(c) for c in space if c.variant == "tile"] == \
            [geometry(c) for c in strided_space(e) if c.variant == "tile"]
    f32 = strided_space(4, cast="f32>bf16")
    assert {(c.variant, c.vec_bytes) for c in f32} >= {("vec", 16), ("vec", 8), ("rows", 16), ("rows", 32),
                                                      ("tile", 4)}
    assert max(c.vec_bytes for c in f32) == 32 and max(c.vec_bytes for c in strided_space(8, cast="f64>bf16")) == 64
    assert max(c.vec_bytes for c in strided_space(2, cast="f16>bf16")) == 16      # one size: no wide vectors
    assert max(c.vec_bytes for c in strided_space(2, cast="bf16>f32")) == 32      # widening: 16 B in, 32 out
    for args, why in (((2, "none", "f32>bf16"), "reads 4-byte elements, not 2-byte"),
                      ((8, "conj32", "f64>f32"), "do not combine"), ((4, "none", "f32>i8"), "cast must be")):
        with pytest.raises(ValueError, match=why):
            strided_space(*args)


def test_cast_problems_say_why():
    tile = TileProblem(4, 33, 17, 17 * 4, 40 * 2, 4, (Dim(3, 33 * 17 * 4, 17 * 80),), 2)
    assert strided_problems(TILE, tile, 16) == []
    assert "writes 2-byte elements, the problem 4-byte" in strided_problems(
        TILE, dataclasses.replace(tile, out_elem=4, ldo=160, batch=()), 16)[0]
    plain = dataclasses.replace(TILE, cast="none")
    assert "writes 4-byte elements, the problem 2-byte ones" in strided_problems(plain, tile, 16)[0]
    odd = dataclasses.replace(tile, ldo=81)
    assert "(4 B in, 2 B out)" in strided_problems(TILE, odd, 16)[0]
    assert strided_problems(TILE, tile, 2) == []                         # each pointer on its own element
    assert "pointers must be 2-byte aligned" in strided_problems(TILE, tile, 1)[0]
    vec_tile = TileProblem(4, 64, 64, 80 * 4, 72 * 2, 4, (), 2)   # input rows 16 B multiples, output 8 B
    assert strided_problems(VEC, vec_tile, 16) == []
    assert "(16 B in, 8 B out)" in strided_problems(VEC, dataclasses.replace(vec_tile, ldo=66 * 2), 16)[0]
    rows = RowsProblem(4, 8, (Dim(10, 64, 16),), 2)
    assert strided_problems(ROWS, rows, 16) == []
    assert "not whole 4-element vectors" in strided_problems(ROWS, dataclasses.replace(rows, n=6), 16)[0]
    assert "(16 B in, 8 B out)" in strided_problems(ROWS, RowsProblem(4, 8, (Dim(10, 64, 12),), 2), 16)[0]
    assert strided_candidates(rows, 16) == []                          # a casting problem needs its cast
    cands = strided_candidates(rows, 16, cast="f32>bf16")
    assert ROWS in cands and cands == [c for c in strided_space(4, cast="f32>bf16")
                                       if not strided_problems(c, rows, 16)]
    assert strided_candidates(RowsProblem(4, 8, (Dim(10, 64, 32),)), 16, cast="f32>bf16") == []


def test_wide_rows_vectors_need_16_byte_accesses_and_whole_vectors():
    """A 32-byte vector of f32>bf16 is two 16-byte loads and one 16-byte
    store: pitches and pointers aligned to 16 bytes (not 32) suffice, rows
    must still be whole 8-element vectors."""
    rows = RowsProblem(4, 24, (Dim(10, 112, 48),), 2)     # 96 B in, 48 out; input pitch 112: not 32-byte aligned
    assert strided_problems(WIDE, rows, 16) == [] and strided_problems(ROWS, rows, 16) == []
    assert strided_problems(WIDE, rows, 8) == ["pointers must be 16-byte aligned"]
    assert "not whole 8-element vectors" in strided_problems(WIDE, dataclasses.replace(rows, n=20), 16)[0]
    for d in (Dim(10, 104, 48), Dim(10, 112, 56)):       # a pitch of 8-byte multiples, in or out
        assert "(16 B in, 16 B out)" in strided_problems(WIDE, RowsProblem(4, 24, (d,), 2), 16)[0]
    assert strided_problems(ROWS, RowsProblem(4, 24, (Dim(10, 112, 56),), 2), 16) == []   # 16 B in, 8 out
    widen = KernelConfig.from_key("rows:e2:64x64:t256:v32:r1:p0:none:row:strided:bf16>f32")  # 16 B in, 32 out
    assert strided_problems(widen, RowsProblem(2, 24, (Dim(10, 64, 112),), 4), 16) == []
    assert "(16 B in, 16 B out)" in strided_problems(widen, RowsProblem(2, 24, (Dim(10, 56, 112),), 4), 16)[0]
    cands = strided_candidates(rows, 16, cast="f32>bf16")
    assert WIDE in cands and {c.vec_bytes for c in cands} >= {16, 32}


def test_problem_text_of_casts():
    tile = TileProblem(4, 33, 17, 68, 66, 4, (Dim(3, 2244, 1122),), 2)
    assert problem_text(tile) == "tile:e4:33x17:ldi68:ldo66:sci4:b(3/2244/1122):o2"
    assert problem_from_text(problem_text(tile)) == tile == check_problem(tile)
    rows = RowsProblem(2, 5, (Dim(4, 10, 40),), 8)
    assert problem_text(rows) == "rows:e2:n5:r(4/10/40):o8" and problem_from_text(problem_text(rows)) == rows
    same = RowsProblem(2, 5, (Dim(4, 10, 10),), 2)
    assert same == RowsProblem(2, 5, (Dim(4, 10, 10),)) and problem_text(same) == "rows:e2:n5:r(4/10/10)"
    for bad in ("rows:e2:n5:r(4/10/10):o2", "rows:e2:n5:r(4/10/40):o3", "tile:e4:3x3:ldi12:ldo3:sci4:b():o2"):
        with pytest.raises(ValueError, match="not a (canonical )?strided problem"):
            problem_from_text(bad)


def test_as_tile_as_rows_as_strided_with_casts():
    t = as_tile(TransposeProblem(4, (3, 5, 7), 2))
    assert t == TileProblem(4, 5, 7, 28, 10, 4, (Dim(3, 140, 70),), 2)
    assert as_tile(TransposeProblem(2, (1, 5, 7), 8)).batch == ()
    assert as_rows(CopyProblem(8000, 4, 2)) == RowsProblem(4, 16, (Dim(125, 64, 32),), 2)
    assert as_rows(CopyProblem(4096 * 8, 8, 2), align=1) == RowsProblem(8, 128, (Dim(32, 1024, 256),), 2)
    assert as_rows(CopyProblem(6, 2, 8)) == RowsProblem(2, 1, (Dim(3, 2, 8),), 8)
    assert as_rows(CopyProblem(16, 2, 2)) == RowsProblem(2, 8, (), 2)      # f16 -> bf16: elements kept
    assert as_strided(TransposeProblem(4, (3, 5, 7), 2)) == t
    assert as_strided(CopyProblem(8000), 4) == as_rows(CopyProblem(8000), 4)
    assert as_strided(t) is t
    with pytest.raises(TypeError, match="TileProblem or RowsProblem"):
        as_strided(None)
    rng = np.random.default_rng(3)
    for p, nin in ((TransposeProblem(4, (3, 5, 7), 2), 420), (CopyProblem(8000, 4, 2), 8000),
                   (CopyProblem(48, 2, 8), 48)):
        src = rng.integers(0, 256, nin, dtype=np.uint8)
        cast = {(4, 2): "f32>f16", (2, 8): "f16>f64"}[(p.elem, p.out_elem)]
        out = layout.moved_bytes(p)
        assert np.array_equal(layout.apply(as_strided(p), src, out, cast), layout.apply(p, src, out, cast))
    assert byte_extent(t) == ((0, 420), (0, 210))
    assert byte_extent(RowsProblem(4, 8, (Dim(10, 64, 16),), 2)) == ((0, 9 * 64 + 32), (0, 9 * 16 + 16))


# -- rendering and nvcc ----------------------------------------------------------------------


def frontend(source: str) -> tuple[bool, str]:
    out, log = nvcc.run({"unit.cu": '#include "common.cuh"\n' + source}, "unit.cu",
                        ["-ptx", "-arch=sm_90", "-std=c++17"], includes=[template_dir()])
    return out is not None, log


def test_a_wrong_python_size_fails_nvcc(monkeypatch):
    ok, log = frontend(render(VEC))
    assert ok, log[-2000:]
    assert "at::CAST_F32_BF16" in render(VEC) and "at::CAST_NONE" in render(dataclasses.replace(VEC, cast="none"))
    from autotrans.kernels import config as config_mod
    monkeypatch.setitem(config_mod.CAST_SIZES, "f32>bf16", (4, 4))
    bad = render(dataclasses.replace(TILE))
    monkeypatch.undo()
    ok, log = frontend(bad)
    assert not ok and "disagree with at::Cast" in log, log[-2000:]


def test_every_cast_candidate_compiles_without_spills(tmp_path):
    cfgs = [c for cast in CASTS[1:] for c in strided_space(CAST_SIZES[cast][0], cast=cast)]
    assert any(c.vec_bytes == 64 for c in cfgs)
    assert_compiles_without_spills(cfgs, tmp_path)


@pytest.mark.exhaustive
def test_wide_rows_cast_candidates_compile_without_spills_on_sm_80(tmp_path):
    """The 32- and 64-byte rows vectors on sm_80 too (the other cast
    candidates are held to sm_90 only: ptxas 13.0 spills a few bytes in 9
    of them for sm_80, none of them wide)."""
    cfgs = [c for cast in CASTS[1:] for c in strided_space(CAST_SIZES[cast][0], cast=cast) if c.vec_bytes > 16]
    assert len(cfgs) > 200
    assert_compiles_without_spills(cfgs, tmp_path, "sm_80")


WIDE_KEYS = ("rows:e4:32x64:t256:v32:r1:p0:none:row:strided:f32>bf16",    # 2 x 16 B in, 16 B out
             "rows:e2:32x64:t256:v32:r1:p0:none:row:strided:bf16>f32",    # 16 B in, 2 x 16 B out
             "rows:e8:16x128:t256:v64:r1:p0:none:row:strided:f64>bf16",   # 4 x 16 B in, 16 B out
             "rows:e8:32x32:t256:v32:r1:p0:none:row:strided:f64>f32")


def test_wide_rows_vectors_are_16_byte_accesses_in_registers():
    """PTX of rows' 32- and 64-byte cast vectors: every global access is a
    16-byte ld.global.nc.v4.u32 or st.global.v4.u32 (the 16-byte vectors of
    f32>bf16 store 8 bytes, st.global.v4.u16), nothing in local memory."""
    cfgs = [KernelConfig.from_key(k) for k in WIDE_KEYS] + [ROWS]
    out, log = nvcc.run({"unit.cu": render_unit(cfgs)}, "unit.cu", ["-ptx", "-arch=sm_90", *nvcc.FLAGS[:2]],
                        includes=[template_dir()])
    assert out is not None, log[-2000:]
    bodies = {b.split("(", 1)[0].strip(): b for b in out.decode().split(".entry ")[1:]}
    for c in cfgs:
        body = bodies[c.name]
        loads, stores = set(re.findall(r"\bld\.global[.\w]*", body)), set(re.findall(r"\bst\.global[.\w]*", body))
        assert loads == {"ld.global.nc.v4.u32"} and ".local" not in body, (c.key, loads)
        assert stores == ({"st.global.v4.u32"} if c.vec_bytes > 16 else {"st.global.v4.u16"}), (c.key, stores)


def test_rows_cu_refuses_a_wide_vector_without_a_cast():
    """rows.cu's static_assert agrees with rows.py's problems(): a 32-byte
    vector rendered without a cast (past the Python check) fails nvcc."""
    bad = KernelConfig.from_key(WIDE_KEYS[0])
    object.__setattr__(bad, "cast", "none")   # frozen: what problems() would refuse
    ok, log = frontend(render(bad))
    assert not ok and "rows.py's problems(): V over 16" in log, log[-2000:]
    ok, log = frontend(render(KernelConfig.from_key(WIDE_KEYS[0])))
    assert ok, log[-2000:]


# -- the emulator against NumPy --------------------------------------------------------------


class Case:
    """A permutation with a cast of a strided view x (input words full of
    interesting(cast) values) into an output view, and the destination
    buffer it must leave: the cast of np.transpose(x, perm) in the view,
    poison around it.

    out_pad: the output's rows padded by that many elements (a hand-built,
    pitched problem); without it the output is C-contiguous and the problem
    canonical()'s for these pointers, as permute() runs it (as_strided);
    fused: that TileProblem's fused tiles (core.layout.fuse_tile: an NdTileProblem)."""

    def __init__(self, rng, cast, shape, perm, *, in_pad=0, out_pad=None, step=1, flip=False, shift=0,
                 fused=False):
        self.cast, (e, eo) = cast, CAST_SIZES[cast]
        base = list(shape)
        base[-1] = shape[-1] * step + in_pad
        n = math.prod(base)
        self.src = np.full(n * e + 2 * PAD + shift, POISON, np.uint8)
        self.src[PAD + shift:PAD + shift + n * e] = fill(rng, cast, n).view(np.uint8)
        x = np.ndarray(tuple(base), words(e), buffer=self.src, offset=PAD + shift)[..., ::step][..., :shape[-1]]
        if flip:
            x = x[::-1]
        y = reference(cast, np.ascontiguousarray(np.transpose(x, perm)))
        dshape = list(y.shape)
        dshape[-1] += out_pad or 0
        self.dst = np.full(math.prod(dshape) * eo + 2 * PAD, POISON, np.uint8)
        self.want = self.dst.copy()
        view = np.ndarray(tuple(dshape), words(eo), buffer=self.want, offset=PAD)[..., :y.shape[-1]]
        view[...] = y
        out = np.ndarray(tuple(dshape), words(eo), buffer=self.dst, offset=PAD)[..., :y.shape[-1]]
        self.src_offset = x.__array_interface__["data"][0] - self.src.__array_interface__["data"][0]
        self.dst_offset = PAD
        if out_pad is None:
            self.canonical = layout.canonical(x.shape, x.strides, e, perm, self.align, out_itemsize=eo)
            self.problem = as_strided(self.canonical, self.align)
        else:
            self.canonical = None
            self.problem = self._problem(x, out, tuple(perm), e, eo)
        if fused:
            self.problem = layout.fuse_tile(self.problem)
            assert self.problem is not None, (shape, perm)

    @staticmethod
    def _problem(x, out, perm, e, eo):
        last = x.ndim - 1
        if perm[-1] == last:
            return RowsProblem(e, x.shape[-1], tuple(Dim(x.shape[a], x.strides[a], out.strides[k])
                                                    for k, a in enumerate(perm[:-1])), eo)
        a_m, k_n = perm[-1], perm.index(last)
        batch = tuple(Dim(x.shape[a], x.strides[a], out.strides[k]) for k, a in enumerate(perm) if a not in (a_m, last))
        return TileProblem(e, x.shape[a_m], x.shape[last], x.strides[a_m], out.strides[k_n], x.strides[last], batch, eo)

    @property
    def align(self) -> int:
        return min(16, pointer_alignment(self.src_offset, self.dst_offset))

    def job(self, cfg):
        return cfg, self.problem, self.src, self.dst, self.src_offset, self.dst_offset


def aligned(n: int, e: int) -> int:
    """Elements to pad a row of n by, so that it is 16-byte aligned, plus a vector."""
    k = max(1, 16 // e)
    return (-n) % k + k


def cases(rng, cast):
    """Tiles: pitched, batched, 3-d to 5-d, strided and flipped inputs, vector-aligned
    pitches; rows: heads swaps, 5-d; canonical: dense 2-d and batched transposes,
    a strided tile, rows, a plain copy of a contiguous array, a single element;
    fused tiles of 3-d and 4-d orders (one of a strided input, one with a batch dim)."""
    e, eo = CAST_SIZES[cast]
    return [Case(rng, cast, (3, 37, 45), (0, 2, 1), out_pad=3),
            Case(rng, cast, (2, 3, 19, 21), (2, 0, 3, 1), in_pad=3, out_pad=5, step=2),
            Case(rng, cast, (4, 5, 13, 6), (3, 1, 0, 2), in_pad=2, out_pad=1, flip=True),
            Case(rng, cast, (2, 35, 69), (0, 2, 1), in_pad=aligned(69, e), out_pad=aligned(35, eo)),
            Case(rng, cast, (2, 3, 3, 9, 11), (3, 1, 0, 4, 2), in_pad=aligned(11, e), out_pad=aligned(3, eo)),
            Case(rng, cast, (2, 37, 3, 8), (0, 2, 1, 3), out_pad=0),
            Case(rng, cast, (3, 2, 5, 4, 6), (3, 0, 2, 1, 4), in_pad=2, out_pad=4),
            Case(rng, cast, (67, 45), (1, 0)),
            Case(rng, cast, (2, 64, 48), (0, 2, 1)),
            Case(rng, cast, (9, 7, 5), (2, 1, 0), step=2),
            Case(rng, cast, (8, 12, 3, 16), (0, 2, 1, 3)),
            Case(rng, cast, (5, 700), (0, 1)),
            Case(rng, cast, (1, 1), (1, 0)),
            Case(rng, cast, (37, 9, 35), (2, 1, 0), fused=True),
            Case(rng, cast, (5, 3, 7, 33), (2, 0, 3, 1), step=2, fused=True),
            Case(rng, cast, (4, 6, 3, 5), (3, 2, 1, 0), in_pad=2, fused=True)]


def picks(cast) -> list[KernelConfig]:
    """Configs of every family, vector width and edge path of a cast's space:
    per family and vec_bytes the first config (its space's order), plus the
    smallest tiles (edge tiles, many blocks) and the widest rows."""
    space = strided_space(CAST_SIZES[cast][0], cast=cast)
    firsts = {(c.variant, c.vec_bytes): c for c in reversed(space)}
    small = [c for c in space if c.variant == "tile" and c.tile_rows == 8]
    return list(dict.fromkeys(list(firsts.values()) + small + [c for c in space if c.variant == "rows"][-1:]))


def run_cases(jobs):
    got = emulate_strided_many([case.job(c) for c, case in jobs])
    bad = [f"{c.key} {case.problem}" for (c, case), out in zip(jobs, got) if not np.array_equal(out, case.want)]
    assert not bad, bad[:4]


@pytest.mark.parametrize("group", [FLOAT_CASTS, INT_CASTS], ids=["floats", "integers"])
def test_every_cast_permutes_like_numpy(group):
    """Every cast on every case, each on the picked configs that can run it
    (every case runs somewhere, every picked config runs some case)."""
    rng = np.random.default_rng(len(group))
    jobs = []
    for cast in group:
        cfgs, cs = picks(cast), cases(rng, cast)
        kinds = {type(c.canonical).__name__ for c in cs}
        assert kinds >= {"TransposeProblem", "TileProblem", "RowsProblem", "CopyProblem"}, kinds
        assert sum(type(c.problem).__name__ == "NdTileProblem" for c in cs) == 3
        mine = [(c, case) for case in cs for c in cfgs if not strided_problems(c, case.problem, case.align)]
        assert {id(case) for _, case in mine} == {id(case) for case in cs}, cast
        assert {c for c, _ in mine} == set(cfgs), cast
        assert {c.variant for c, _ in mine} == {c.variant for c in strided_space(CAST_SIZES[cast][0], cast=cast)}
        jobs += mine
    run_cases(jobs)


@pytest.mark.parametrize("cast", ["f32>bf16", "f32>f16"])
def test_the_main_casts_on_every_candidate(cast):
    """float32 -> bfloat16 / float16, the fast path's casts: every config
    strided_candidates gives each case (as permute() would pick among them)."""
    rng = np.random.default_rng(CASTS.index(cast))
    cs = cases(rng, cast)
    jobs = [(c, case) for case in cs for c in strided_candidates(case.problem, case.align, cast=cast)]
    assert {id(case) for _, case in jobs} == {id(case) for case in cs}
    assert {c for c, _ in jobs} == set(strided_space(4, cast=cast))
    run_cases(jobs)


WIDE_CASTS = ["f32>bf16", "f32>f16", "bf16>f32", "f64>f32", "f64>bf16", "f16>f64", "i32>i16", "i64>i8", "u8>u32"]


def wide_cases(rng, cast):
    """Rows of whole 64-byte vectors of the wider element (d of them; so whole
    32-byte ones too): (B,S,H,D) heads swaps of odd S and H (canonical, and
    pitched 16 bytes past the row on both sides, an input pointer 16 bytes
    past 32-byte alignment: nothing aligned to 32), rank 5, rows of 3 and 17
    vectors (over the widest tile row, 1 KiB), one row dimension over 1200
    rows (more than a tile's), a single row."""
    e, eo = CAST_SIZES[cast]
    d, pi, po = 64 // max(e, eo), 16 // e, 16 // eo
    return [Case(rng, cast, (2, 37, 3, d), (0, 2, 1, 3)),
            Case(rng, cast, (3, 5, 7, 3 * d), (0, 2, 1, 3), in_pad=pi, out_pad=po, shift=16),
            Case(rng, cast, (2, 3, 5, 4, d), (3, 0, 2, 1, 4), in_pad=pi, out_pad=po),
            Case(rng, cast, (5, 3, 17 * d), (1, 0, 2), out_pad=po),
            Case(rng, cast, (1200, d), (0, 1), in_pad=pi, out_pad=0),
            Case(rng, cast, (1, 2 * d), (0, 1), out_pad=0)]


def test_wide_rows_vectors_permute_like_numpy():
    """Every 32- and 64-byte rows config of narrowing, widening, 2:1, 4:1 and
    8:1 casts (floats and integers) on every wide case, against NumPy /
    ml_dtypes; the cases' pitches and pointers are 16-byte aligned, not 32."""
    rng = np.random.default_rng(32)
    jobs = []
    for cast in WIDE_CASTS:
        cfgs = [c for c in strided_space(CAST_SIZES[cast][0], cast=cast) if c.vec_bytes > 16]
        cs = wide_cases(rng, cast)
        assert cfgs and all(isinstance(c.problem, RowsProblem) for c in cs), cast
        assert any(d.src % 32 and d.dst % 32 for c in cs for d in c.problem.rows) and any(c.align == 16 for c in cs)
        mine = [(c, case) for case in cs for c in cfgs if not strided_problems(c, case.problem, case.align)]
        assert len(mine) == len(cfgs) * len(cs), cast                   # each wide config runs every case
        jobs += mine
    assert {c.vec_bytes for c, _ in jobs} == {32, 64}
    run_cases(jobs)


SHIFT_CASTS = ["f32>bf16", "f32>f16", "bf16>f32", "f16>bf16", "i8>i32", "u8>u16", "i32>i8", "i16>i8"]


def shift_cast_cases(rng, cast, tr: int, tc: int):
    """Rows and pitches at every alignment of the elements, an input pointer
    off 16-byte alignment (nothing padded to vectors), batch axes inside and around the
    tile's, a flipped batch axis, matrices of several full tr x tc tiles (the
    last ones edge tiles: strided shift tiles do not overlap) and smaller ones."""
    e, eo = CAST_SIZES[cast]
    return [Case(rng, cast, (3, 37, 45), (0, 2, 1)),
            Case(rng, cast, (2, tr + 19, tc + 7), (0, 2, 1), in_pad=3, out_pad=5, shift=max(e, eo)),
            Case(rng, cast, (tc + 5, 3, tr + 9), (2, 1, 0)),
            Case(rng, cast, (2, 3, 2 * tr + 1, tc + 3), (1, 3, 0, 2), in_pad=1, out_pad=2, flip=True),
            Case(rng, cast, (tr + 1, 2 * tc + 13), (1, 0), out_pad=1)]


@pytest.mark.parametrize("cast", SHIFT_CASTS)
def test_shift_casts_at_any_alignment(cast):
    """Every shift config of narrowing (2:1, 4:1), widening (1:2, 1:4) and
    same-size casts on rows at any alignment, full tiles included: each
    aligned output vector converts the input elements it holds (the store
    phase reads ko = 16 / out_elem_bytes of them; the tile reads ko more rows)."""
    rng = np.random.default_rng(300 + SHIFT_CASTS.index(cast))
    cfgs = [c for c in strided_space(CAST_SIZES[cast][0], cast=cast) if c.variant == "shift"]
    cs = shift_cast_cases(rng, cast, max(c.tile_rows for c in cfgs), max(c.tile_cols for c in cfgs))
    assert cfgs and any(c.problem.ldi % 16 and c.problem.ldo % 16 for c in cs)   # rows not vector-aligned
    jobs = [(c, case) for case in cs for c in cfgs if not strided_problems(c, case.problem, case.align)]
    assert len(jobs) == len(cfgs) * len(cs), cast                                   # every config, every case
    run_cases(jobs)


@pytest.mark.parametrize("cast", ["f32>bf16", "f32>f16", "bf16>f32", "i8>i32"])
def test_strips_of_shift_tiles_cast_at_any_alignment(cast):
    """Strips (KernelConfig.strip 2 and 4) of every shift config of the
    narrowing, widening and 1:4 casts, on the rows at any alignment above."""
    rng = np.random.default_rng(330 + SHIFT_CASTS.index(cast))
    shifts = [c for c in strided_space(CAST_SIZES[cast][0], cast=cast) if c.variant == "shift"]
    cfgs = [dataclasses.replace(c, strip=k) for c in shifts for k in (2, 4)]
    cs = shift_cast_cases(rng, cast, max(c.tile_rows for c in cfgs), max(c.tile_cols for c in cfgs))
    jobs = [(c, case) for case in cs for c in cfgs if not strided_problems(c, case.problem, case.align)]
    assert len(jobs) == len(cfgs) * len(cs), cast
    run_cases(jobs)


@pytest.mark.parametrize("cast", ["f32>bf16", "bf16>f32", "i8>i32"])
def test_seams_of_shift_tiles_cast(cast):
    """Strips with seams (KernelConfig.seam) of every shift config of a
    narrowing, a widening and a 1:4 cast: the vector two output rows share,
    converted from the previous matrix's last rows and this one's first, on
    (2, 1, 0) orders whose rows take one tile and a bit, or end in fewer rows
    than an output vector, and the cases above."""
    rng = np.random.default_rng(360 + SHIFT_CASTS.index(cast))
    e, eo = CAST_SIZES[cast]
    shifts = [c for c in strided_space(e, cast=cast) if c.variant == "shift"]
    cfgs = [dataclasses.replace(c, strip=k, seam=1) for c in shifts for k in (2, 4)]
    tr, tc = max(c.tile_rows for c in cfgs), max(c.tile_cols for c in cfgs)
    cs = shift_cast_cases(rng, cast, tr, tc) + [Case(rng, cast, (2 * tr + 16 // eo - 1, 4, 37), (2, 1, 0)),
                                                Case(rng, cast, (tr + 3, 5, tc + 1), (2, 1, 0))]
    jobs = [(c, case) for case in cs for c in cfgs if not strided_problems(c, case.problem, case.align)]
    assert len(jobs) == len(cfgs) * len(cs), cast
    run_cases(jobs)


def test_the_check_sees_a_wrong_or_missing_cast():
    """The same launch with another cast of the same sizes, or a plain copy of
    the bits, leaves other bytes: the comparisons above can fail."""
    rng = np.random.default_rng(9)
    case = Case(rng, "f32>bf16", (3, 37, 45), (0, 2, 1), out_pad=3)
    assert np.array_equal(emulate_strided(*case.job(TILE)), case.want)
    other = emulate_strided(*case.job(dataclasses.replace(TILE, cast="f32>f16")))
    assert not np.array_equal(other, case.want)
    ints = emulate_strided(*case.job(dataclasses.replace(TILE, cast="i32>i16")))   # the low halves
    body = slice(case.dst_offset, case.dst_offset + 45 * 40 * 3 * 2)
    assert not np.array_equal(ints[body], case.want[body])


def test_emulator_refuses_a_cast_that_does_not_fit():
    rng = np.random.default_rng(4)
    case = Case(rng, "f32>bf16", (2, 37, 3, 8), (0, 2, 1, 3), out_pad=0)
    with pytest.raises(ValueError, match="writes 4-byte elements, the problem 2-byte ones"):
        emulate_strided(*case.job(dataclasses.replace(ROWS, cast="none")))
    with pytest.raises(ValueError, match="moves 8-byte elements"):
        emulate_strided(*case.job(KernelConfig("rows", 8, 64, 16, 256, 16, layout="strided", cast="f64>bf16")))
