"""Family ``skinny`` (skinny.cu): transposes with one short side, 16-byte
accesses at any row and pointer alignment.

Variant ``narrow`` takes inputs of N <= tile_cols columns: a block moves
tile_rows whole input rows, one contiguous run, into N output rows.
Variant ``short`` takes inputs of M <= tile_rows rows: a block moves
tile_cols columns of all M rows into one contiguous run of the output.
The run is copied through shared memory in aligned 16-byte vectors as it is;
the short side's rows are gathered from (narrow) or scattered into (short) it
element by element, and written or read in aligned 16-byte vectors too. With
pad 1, shared memory holds one word more after every 16 n bytes of the run
(n: the short side), which keeps the element-wise phase free of bank
conflicts. vec_bytes is 16, micro_rows 1, swizzle none. Shapes whose short
side is longer than the config's are refused (aligned_for); the template
still moves them correctly, element by element."""
from __future__ import annotations

import itertools

VARIANTS = ("narrow", "short")
TEMPLATE = "skinny.cu"
MAX_SIDE = 32           # the short side's most elements as a power of two (the space's)
MAX_WIDE = 512          # past MAX_SIDE, a multiple of SIDE_STEP up to this (wide tiles)
SIDE_STEP = 8
MAX_STEPS = 8           # 16-byte vectors a thread holds in the load phase
SIDES = (4, 8, 16, 32)  # short sides of the space
SIDE_BYTES = 128        # ... up to this many bytes
BLOCK_BYTES = (4096, 8192, 16384)   # bytes of a full tile in the space
STEPS = (2, 4)          # 16-byte vectors a thread moves in the space
PADS = (0, 1)           # the space's pads (1: conflict-free element phase, 0: 16-byte shared accesses)
MAX_LONG = 1024         # KernelConfig.MAX_TILE: the long side's most elements
MIN_LONG_BYTES = 512    # the long side's fewest bytes in the space (32 vectors)


def short_side(c) -> int:
    """The most elements of the short side the config takes (S)."""
    return c.tile_cols if c.variant == "narrow" else c.tile_rows


def long_side(c) -> int:
    """Elements of the long side a block moves (L)."""
    return c.tile_rows if c.variant == "narrow" else c.tile_cols


def side_of(c, m: int, n: int) -> int:
    """The shape's side that config c takes short: N for narrow, M for short."""
    return n if c.variant == "narrow" else m


def problems(c) -> list[str]:
    e, s, l, nt = c.elem_bytes, short_side(c), long_side(c), c.threads
    if c.vec_bytes != 16 or c.micro_rows != 1 or c.swizzle != "none" or c.pad not in (0, 1):
        return ["skinny tiles take vec_bytes 16, micro_rows 1, swizzle none and pad 0 or 1 "
                "(1: a word of padding after every 16 n bytes of shared memory)"]
    p = []
    if not 2 <= s <= MAX_WIDE:
        p.append(f"the short side (narrow: tile_cols; short: tile_rows) must be 2..{MAX_WIDE}")
    elif s & (s - 1) if s <= MAX_SIDE else s % SIDE_STEP:
        p.append(f"the short side must be a power of two up to {MAX_SIDE}, past it a multiple of {SIDE_STEP}")
    elif s > nt:
        p.append("a block needs a thread for each element of the short side (threads >= its length)")
    if l * e < 16:
        p.append("the long side (narrow: tile_rows; short: tile_cols) must hold a 16-byte vector")
    elif (s * l * e // 16) % nt or (s * l * e // 16) // nt > MAX_STEPS:
        p.append(f"threads must divide the tile's 16-byte vectors, at most {MAX_STEPS} a thread")
    return p


def odd_side(c) -> str:
    """The tile side that may be a multiple of SIDE_STEP past MAX_SIDE (problems()): the short side."""
    return "cols" if c.variant == "narrow" else "rows"


def owns(c) -> bool:
    """Whether c is a wide narrow tile: one that writes the aligned output
    vectors starting in its rows whole, reading own_rows(c) rows more."""
    return c.variant == "narrow" and short_side(c) > MAX_SIDE


def own_rows(c) -> int:
    """Rows a tile reads past its own (a 16-byte vector's elements where it owns them)."""
    return 16 // c.elem_bytes if owns(c) else 0


def smem_bytes(c) -> int:
    """The run (a full tile, own_rows more rows and one vector; short: and 16
    bytes a row before and after it, for a vector's elements outside the tile),
    and with pad a word every 16 n bytes (at most a word every 16 bytes of the
    long side, and two)."""
    e, l, x = c.elem_bytes, long_side(c), own_rows(c)
    bias = 0 if c.variant == "narrow" else 16 * short_side(c)
    return (c.tile_rows + x) * c.tile_cols * e + 16 + 2 * bias + ((l + x) * e // 4 + 8 if c.pad else 0)


def aligned_for(c, m: int, n: int) -> bool:
    """Any alignment, but only shapes whose short side fits the config."""
    return side_of(c, m, n) <= short_side(c)


def pointer_align(c) -> int:
    return c.elem_bytes


# The untuned pick's kind of tile (tuning.space.skinny_default), from the grid's
# tuning records on the H200 (NOTES 42): 8 KiB, four vectors a thread; unpadded
# where the shape's short side n is odd (the element phase's lanes, 16 n bytes
# apart, then fall 4 to a bank), else padded (unpadded, an even n puts 8 to 32
# lanes on a bank).
UNTUNED_BYTES, UNTUNED_STEPS = 8192, 4


def untuned_pad(n: int) -> int:
    """The untuned pick's pad for a shape whose short side is n."""
    return 0 if n % 2 else 1


def long_for(s: int, e: int, size: int) -> int:
    """The long side of a tile of about ``size`` bytes with short side s (MIN_LONG_BYTES..MAX_LONG)."""
    return max(MIN_LONG_BYTES // e, min(MAX_LONG, size // (s * e)))


def untuned(c, n: int) -> bool:
    """Whether skinny config c is of the untuned pick's kind for short side n (UNTUNED_*, untuned_pad)."""
    s, e = short_side(c), c.elem_bytes
    l = long_for(s, e, UNTUNED_BYTES)
    return c.pad == untuned_pad(n) and long_side(c) == l and c.threads == threads_for(s * l * e // 16, UNTUNED_STEPS)


def threads_for(vectors: int, steps: int = 4) -> int:
    """``steps`` 16-byte vectors a thread, 64 to 512 threads."""
    return min(512, max(64, vectors // steps))


def space(e: int):
    """Short sides of 4..32 elements (at most 128 bytes), tiles of 4, 8 and 16
    KiB where the long side allows them (512 bytes, so that a warp's 32 lanes
    take 32 vectors of one segment, which the padding spreads over the banks,
    to 1024 elements: 4 KiB for 1-byte elements by 4), two or four vectors a
    thread, padded or not (on the H200, 100003x17 float16 went from 7.5 to
    7.1 µs with pad 0 and two vectors a thread; NOTES 42)."""
    seen = set()
    for s in SIDES:
        if s * e > SIDE_BYTES:
            continue
        for size, steps, pad in ((z, k, p) for z in BLOCK_BYTES for k in STEPS for p in PADS):
            l = long_for(s, e, size)
            nt = threads_for(s * l * e // 16, steps)
            if (s, l, nt, pad) in seen:
                continue
            seen.add((s, l, nt, pad))
            yield dict(variant="narrow", elem_bytes=e, tile_rows=l, tile_cols=s, threads=nt, vec_bytes=16, pad=pad)
            yield dict(variant="short", elem_bytes=e, tile_rows=s, tile_cols=l, threads=nt, vec_bytes=16, pad=pad)


# Wide tiles: short tiles of MAX_SIDE+ rows (up to MAX_WIDE) for shapes of few,
# long rows. A block reads a 16-byte-vector segment of every input row and
# writes one contiguous run of the output, so no tile re-moves a neighbour's
# part of the short side (a dense tile's last one does, NOTES 47) and every
# write is a whole aligned vector. Shape-dependent: the tile's rows are the
# shape's, rounded up to SIDE_STEP. On an H100 (NOTES 59) they ran odd-row
# shapes of 100-363 rows at 0.93-0.99 of a memcpy, where the space's best ran
# 0.76-0.96. Narrow tiles of as many columns (few long columns) lost
# everywhere while they wrote each output row's piece in parts at its ends;
# owning the output vectors that start in their rows (owns()), they won every
# odd shape of 257-363 columns on the H200 (NOTES 60): 0.72-0.90 of a memcpy
# where the space's best ran 0.69-0.81. Their long side: 128-byte output
# pieces, and 64 rows of 1-byte elements too; sides rounded up to 8 and to 32.
WIDE_ASPECT = 16                # the long side at least this many times the short one
WIDE_LONG_BYTES = (128, 256)    # bytes of each input row a block moves (128: the untuned pick)
WIDE_THREADS = 2                # the fewest thread counts that divide the tile, of each
NARROW_PIECE = 128              # narrow wide tiles: bytes of each output row a block writes ...
NARROW_ROWS = 64                # ... or this many rows, where fewer bytes
NARROW_DEFAULT_COLS = 129       # the untuned pick takes narrow tiles from this many columns (narrow_default)


def wide_rows(e: int, m: int, n: int) -> int | None:
    """The rows of the wide tiles an m x n shape of e-byte elements takes where
    space() holds no tile of m rows (more than MAX_SIDE or SIDE_BYTES), m <=
    MAX_WIDE and n >= WIDE_ASPECT * m: m rounded up to a power of two up to
    MAX_SIDE, past it to SIDE_STEP (problems()' short sides); else None."""
    if (m <= MAX_SIDE and m * e <= SIDE_BYTES) or m > MAX_WIDE or n < WIDE_ASPECT * m:
        return None
    if m <= MAX_SIDE:
        return 1 << (m - 1).bit_length()
    return -(-m // SIDE_STEP) * SIDE_STEP


def fewest_threads(s: int, nv: int) -> list[int]:
    """The WIDE_THREADS fewest thread counts for a tile of nv vectors whose
    short side is s (at least s threads, at most MAX_STEPS vectors a thread)."""
    fits = [t for t in range(-(-s // 32) * 32, 1025, 32) if nv % t == 0 and nv // t <= MAX_STEPS]
    return fits[:WIDE_THREADS]


def shape_space(e: int, m: int, n: int):
    """Keyword arguments of the wide tiles for an m x n shape. Few long rows
    (wide_rows(e, m, n)): short tiles with long sides of WIDE_LONG_BYTES, the
    fewest thread counts, unpadded (padding lost on every shape measured).
    Few long columns (wide_rows(e, n, m)) whose rows are not 16-byte
    aligned: narrow tiles of those columns rounded up to 8 and to 32,
    NARROW_PIECE bytes of rows (and NARROW_ROWS), the fewest thread counts,
    padded or not."""
    s = wide_rows(e, m, n)
    for lb in WIDE_LONG_BYTES if s else ():
        for nt in fewest_threads(s, s * lb // 16):
            yield dict(variant="short", elem_bytes=e, tile_rows=s, tile_cols=lb // e, threads=nt, vec_bytes=16, pad=0)
    s = wide_rows(e, n, m)
    if s is None or n * e % 16 == 0:   # 16-byte rows: the vec tiles (65536x384 int8: 0.97, narrow 0.78)
        return
    for side in dict.fromkeys((s, -(-s // 32) * 32)):
        for rows in sorted({NARROW_PIECE // e, min(NARROW_ROWS, NARROW_PIECE // e)}):
            for nt, pad in itertools.product(fewest_threads(side, side * rows * e // 16), PADS):
                yield dict(variant="narrow", elem_bytes=e, tile_rows=rows, tile_cols=side, threads=nt, vec_bytes=16,
                           pad=pad)


def narrow_default(e: int, m: int, n: int) -> dict | None:
    """The untuned pick's keyword arguments for few long columns (shape_space's
    narrow tiles), else None: the columns rounded up to 8, NARROW_PIECE bytes
    of rows, padded but for 1-byte elements, the more threads of the two
    (the H200's and H100's fastest on the odd shapes of NOTES 60, or within
    1-10% of it). Measured on 1- to 4-byte elements and 181-363 columns
    only: wider elements and fewer columns keep the space's untuned pick."""
    if e > 4 or n < NARROW_DEFAULT_COLS:
        return None
    s = wide_rows(e, n, m)
    pick = [kw for kw in shape_space(e, m, n) if kw["variant"] == "narrow" and kw["tile_cols"] == s
            and kw["tile_rows"] == NARROW_PIECE // e and kw["pad"] == (0 if e == 1 else 1)]
    return pick[-1] if s and pick else None
