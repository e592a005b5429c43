"""Family ``rows`` (rows.cu): rows of contiguous elements gathered from
strided places (RowsProblem of autotrans.core.layout), no shared memory.

Strided launches only (KernelConfig.layout ``strided``). A block moves
``tile_rows`` rows by ``tile_cols`` elements of them with ``vec_bytes``
accesses: min(32, vectors of a tile row) threads across a row, the rest over
rows, each thread moving several rows (every load in flight before the first
store). Rows, their strides and the pointers must be ``vec_bytes``-aligned.

Configs may cast (KernelConfig.cast): vec_bytes is then the wider of a
thread's load and store, vec_elems (K) = vec_bytes / the wider element; loads
of K input elements become stores of K output ones, converted in registers;
tile_cols counts input elements (a tile row of tile_cols * the wider element
bytes on that side). A cast between sizes may also take vec_bytes of 32 or 64
(WIDE_VECS) where its narrower side's K * min(elem_bytes, out_elem_bytes) is
at most 16 bytes: the wider side then moves its vector as two or four 16-byte
accesses (at::Bytes<32>, <64>), so that both sides' accesses are 16-byte (a
float32 -> bfloat16 thread loads 2 x 16 B and stores 16 B per vector, where
vec_bytes 16 stores only 8 B). Input rows are whole K-element vectors; row
strides must be multiples of the accesses, min(16, K * elem_bytes) bytes in
and min(16, K * out_elem_bytes) out, the pointers min(16, vec_bytes)-aligned."""
from __future__ import annotations

from dataclasses import dataclass

from autotrans.core.layout import RowsProblem, row_access

VARIANTS = ("rows",)
TEMPLATE = "rows.cu"
LAYOUTS = ("strided",)
# Any element and vector size: a vector smaller than the group flips a bit where it ends one (rows.cu).
EPILOGUES = ("none", "conj32", "conj64")
TAKES_CASTS = True
MAX_VECS = 16          # vectors a thread holds
MAX_THREAD_BYTES = 128  # bytes a thread holds (registers; vec_bytes each, the wider side's)
ACCESS = 16            # bytes of the widest single access (ld.global.v4.u32)
WIDE_VECS = (32, 64)   # vec_bytes beyond kernels.config's ELEM_SIZES: casts only, in ACCESS-byte accesses


@dataclass(frozen=True)
class Geometry:
    """How rows.cu spreads a tile over its threads (its TCV, VT, RP, IR, IV;
    each rendered kernel static_asserts passes and vecs)."""
    row_vecs: int   # vectors of a tile row
    lanes: int      # threads across a tile row
    per_pass: int   # tile rows one pass of the block moves
    passes: int     # rows a thread moves
    vecs: int       # vectors a thread moves of each of its rows


def geometry(c) -> Geometry:
    tcv = c.tile_cols // c.vec_elems
    lanes = max(1, min(tcv, 32))
    per = c.threads // lanes
    return Geometry(tcv, lanes, per, c.tile_rows // per, tcv // lanes)


def problems(c) -> list[str]:
    e, v = c.elem_bytes, c.vec_bytes
    if v < max(e, c.out_elem_bytes):
        return ["rows' vec_bytes must be a multiple of elem_bytes" + ("" if c.cast == "none" else
                                                                     " and out_elem_bytes")]
    p = _wide_problems(c)
    if c.micro_rows != 1 or c.pad or c.swizzle != "none":
        p.append("rows take no micro_rows, pad or swizzle")
    if c.tile_cols % c.vec_elems:
        return p + ["rows' tile_cols*elem_bytes must be a multiple of vec_bytes" if c.cast == "none" else
                    f"rows' tile_cols must be a multiple of vec_elems ({c.vec_elems})"]
    g = geometry(c)
    if c.tile_cols & (c.tile_cols - 1) and g.row_vecs % 32:
        p.append(f"a tile row of other than a power of two must be whole vectors of 32 lanes "
                 f"({32 * c.vec_elems} elements), not {c.tile_cols}")
    if c.tile_rows % g.per_pass:
        p.append(f"tile_rows must be a multiple of threads / min(32, vectors of a tile row) ({g.per_pass})")
    elif g.passes * g.vecs > MAX_VECS or g.passes * g.vecs * v > MAX_THREAD_BYTES:
        p.append(f"a thread holds at most {MAX_VECS} vectors and {MAX_THREAD_BYTES} bytes "
                 f"(here {g.passes}x{g.vecs} of {v} B)")
    return p


def odd_side(c) -> str:
    """A rows tile may be as wide as any whole number of its 32 lanes' vectors
    (problems() checks that), not only a power of two: a row-sized tile
    (rows_fit_probe.py) moves a row of e.g. 263 elements in one block."""
    return "cols"


def _wide_problems(c) -> list[str]:
    """Why c's vec_bytes over ACCESS does not fit (empty when it does, or is
    not over): WIDE_VECS only, of a cast whose narrower side is one access."""
    v = c.vec_bytes
    if v <= ACCESS:
        return []
    if c.cast == "none":
        return [f"rows' {v}-byte vectors are for casts only (uncast rows move at most {ACCESS} B a vector)"]
    narrow = c.vec_elems * min(c.elem_bytes, c.out_elem_bytes)
    if narrow > ACCESS:
        return [f"a {v}-byte vector of {c.cast} moves {narrow} B on its narrower side: rows' {WIDE_VECS}-byte "
                f"vectors need that side to be one access (at most {ACCESS} B; take a smaller vec_bytes)"]
    return []


def smem_bytes(c) -> int:
    return 0


def aligned_for(c, m: int, n: int) -> bool:
    """Whether rows of n elements are whole vectors (rows runs strided launches only)."""
    return n % c.vec_elems == 0


def pointer_align(c) -> int:
    """vec_bytes, at most ACCESS (WIDE_VECS move in ACCESS-byte accesses)."""
    return min(c.vec_bytes, ACCESS)


def space(e: int):
    """None: rows runs no dense transpose (see strided_space)."""
    return iter(())


def strided_problems(c, problem, align: int) -> list[str]:
    """Why config c cannot run this strided problem (empty when it can): a
    RowsProblem of c's element sizes (in and out) whose rows are whole
    vectors (vec_bytes; with a cast, vec_elems elements) and whose row
    strides (input: multiples of the load's bytes, output: of the store's,
    each at most ACCESS: WIDE_VECS move in ACCESS-byte accesses) and pointers
    (align: the largest power of two dividing both) are min(vec_bytes,
    ACCESS)-aligned; a cast moving one element a vector needs only the
    smaller element's alignment (each pointer is aligned to its own element:
    api.permute checks that before it launches one)."""
    if not isinstance(problem, RowsProblem):
        return [f"rows moves RowsProblems, not {type(problem).__name__}"]
    e, v, k = c.elem_bytes, c.vec_bytes, c.vec_elems
    eo = c.out_elem_bytes
    if problem.elem != e:
        return [f"{c.key} moves {e}-byte elements, the problem {problem.elem}-byte ones"]
    if problem.out_elem != eo:
        return [f"{c.key} writes {eo}-byte elements, the problem {problem.out_elem}-byte ones"]
    p = []
    if problem.n % k:
        p.append(f"rows of {problem.n * e} B are not whole {v}-byte vectors" if eo == e else
                 f"rows of {problem.n} elements are not whole {k}-element vectors")
    ai, ao = min(k * e, ACCESS), min(k * eo, ACCESS)   # bytes of an access, in and out
    if any(d.src % ai or d.dst % ao for d in problem.rows):
        p.append(f"row strides must be multiples of vec_bytes ({v} B)" if eo == e else
                 f"row strides must be multiples of the accesses ({ai} B in, {ao} B out)")
    need = min(e, eo) if eo != e and k == 1 else min(v, ACCESS)
    if align % need:
        p.append(f"pointers must be {need}-byte aligned")
    return p


# (vec_bytes, bytes of a tile row, threads, rows a thread moves)
# 32-byte rows (16, 32, 256, 1) and 4-byte words over 512 / 1024-byte tile rows: the H200's
# best for (4, 4096, 32, 8) float32 (0, 2, 1, 3) (0.83 of memcpy, against 0.54 for 16-byte
# tile rows) and for rows of 1052 B (0.88, against 0.59 for 64-byte ones; session 8).
_STRIDED = ((16, 16, 256, 4), (16, 16, 128, 8), (16, 32, 256, 1), (16, 64, 256, 4), (16, 128, 256, 4),
            (16, 256, 256, 4), (16, 512, 256, 4), (16, 1024, 256, 2), (8, 8, 256, 4), (8, 32, 256, 4),
            (4, 4, 256, 4), (4, 64, 256, 4), (4, 512, 256, 2), (4, 1024, 128, 1))
# Casts between sizes only (WIDE_VECS: the narrower side one 16-byte access or less): 32-byte
# vectors over tile rows of 64 B to 1 KiB, the (B,S,H,D) rows' 256 B with 1, 2 and 4 rows a
# thread (torch.compile's Triton kernel moves 8 float32 -> bfloat16 a thread, 32 B in, 16 out,
# 45 us against rows' 16-byte 57 us on the H200), and 64-byte ones for casts of 4:1 and more.
_WIDE = ((32, 64, 256, 4), (32, 128, 256, 4), (32, 256, 256, 1), (32, 256, 256, 2), (32, 256, 256, 4),
         (32, 512, 256, 2), (32, 1024, 256, 2), (64, 256, 256, 2), (64, 512, 256, 2), (64, 1024, 256, 1))


def strided_space(e: int, eo: int | None = None):
    """16-byte accesses over tile rows of 16 B to 1 KiB (short rows: several
    rows a thread, up to 8), 8- and 4-byte ones for rows only that aligned,
    and element-wide ones (32 elements a tile row) for any row. eo: the
    output's element size of a cast: the same, in bytes of the wider element,
    and at most 4 rows a thread where the cast widens (its conversions at the
    stores would spill 8 rows' registers: ptxas 13.0, sm_90); a cast between
    sizes also takes the _WIDE vectors whose narrower side is one access."""
    w, eo = max(e, eo or e), eo or e
    narrow = ((w, 32 * w, 256, 4),) if w < 4 else ()
    wide = tuple(x for x in _WIDE if x[0] // w * min(e, eo) <= ACCESS) if eo != e else ()
    for v, rowb, nt, rows in _STRIDED + narrow + wide:
        if v < w or eo > e and rows > 4:
            continue
        tcv = rowb // v
        tr = nt // min(tcv, 32) * rows
        yield dict(variant="rows", elem_bytes=e, tile_rows=tr, tile_cols=rowb // w, threads=nt, vec_bytes=v,
                   layout="strided")


# Row-sized tiles (benchmarks/rows_fit_probe.py, NOTES 63): rows whose accesses are under 4
# bytes (row bytes and strides not 4-byte multiples) move in one block a band of rows, a tile
# row the row rounded up to 32 lanes' vectors, 4 or 2 rows a thread, 64 or 128 threads. On an
# H100, (8, 2048, 16, 67) float16 (0, 2, 1, 3) went 0.27 -> 0.60 of a memcpy (8x96:t64) and
# (600, 517, 70) int8 (1, 0, 2) 0.35 -> 0.63 (8x64:t64, 2-byte words); rows of 263 float32
# (4-byte accesses) lost 2.5% to the space's 4x256, so those keep the space alone.
ROW_SIZED_BELOW = 4             # accesses under this many bytes
ROW_SIZED = ((64, 4), (128, 4), (64, 2), (128, 2))   # (threads, rows a thread); the first that fits: untuned
ROW_SIZED_LANE_VECS = 7         # vectors a lane of a tile row at most (8 of 2 rows spill 24 B: ptxas 13.0, sm_90)


def problem_space(problem, eo: int | None = None):
    """Keyword arguments of the row-sized tiles (ROW_SIZED order) of a
    RowsProblem without a cast whose accesses would be under ROW_SIZED_BELOW
    bytes and whose rows are at most ROW_SIZED_LANE_VECS vectors a lane;
    none for others (rows.problems() drops those over its register bounds)."""
    e = problem.elem
    if not isinstance(problem, RowsProblem) or (eo or e) != e or problem.out_elem != e:
        return
    v = row_access(problem, ACCESS)
    if v >= ROW_SIZED_BELOW:
        return
    k = v // e
    tc = -(-problem.n // (32 * k)) * 32 * k
    if tc // k // 32 > ROW_SIZED_LANE_VECS:
        return
    for nt, rows in ROW_SIZED:
        yield dict(variant="rows", elem_bytes=e, tile_rows=nt // 32 * rows, tile_cols=tc, threads=nt,
                   vec_bytes=v, layout="strided")

