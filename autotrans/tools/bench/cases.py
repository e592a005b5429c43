"""The benchmark's cases: the zoo, the held-out shapes, the quick subset."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.problem import as_bmn, elem_size, parse_dtype, parse_shape
from ...tuning.space import widest_vector

MIB = 1 << 20

CLASSES = ("square", "rect", "odd", "prime", "skinny", "small", "batched", "llm")
BANDS = ("small", "mid", "large")       # < 1 MiB, 1-16 MiB, >= 16 MiB


def band(nbytes: int) -> str:
    """The size band a case's targets depend on."""
    return "small" if nbytes < MIB else ("mid" if nbytes < 16 * MIB else "large")


@dataclass(frozen=True)
class Case:
    """One benchmark case: a shape ((M, N) or (B, M, N)) and a dtype."""
    shape: tuple
    dtype: str
    classes: tuple = ()
    held_out: bool = False

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype).name)
        if min(as_bmn(self.shape)) < 1:
            raise ValueError(f"case {self.shape}: every dimension must be at least 1")
        elem_size(self.dtype)

    @property
    def name(self) -> str:
        return f"{'x'.join(map(str, self.shape))}:{self.dtype}"

    @property
    def bmn(self) -> tuple:
        return as_bmn(self.shape)

    @property
    def elem_bytes(self) -> int:
        return np.dtype(self.dtype).itemsize

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.bmn)) * self.elem_bytes

    @property
    def out_shape(self) -> tuple:
        return self.shape[:-2] + (self.shape[-1], self.shape[-2])

    @property
    def aligned(self) -> bool:
        """Whether every input and output row is 16-byte aligned."""
        return widest_vector(self.bmn, self.elem_bytes) >= 16


def parse_cases(spec: str, held_out: bool = False) -> list[Case]:
    """Cases from lines of ``SHAPE DTYPE[,DTYPE...] CLASS[,CLASS...]`` ('#' starts a comment)."""
    out = []
    for line in spec.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        shape, dtypes, classes = line.split()
        for dt in dtypes.split(","):
            out.append(Case(parse_shape(shape), parse_dtype(dt).name, tuple(classes.split(",")), held_out))
    return out


_ZOO = """
16384x16384  int8                             square
8192x8192    int8,float16,float32             square
4096x4096    float32,float64,complex128       square
2048x2048    float32,float64                  square
1024x1024    int8,float16,float32,complex128  square
12288x3072   float32                          rect
3072x12288   float32                          rect
16384x2048   float16                          rect
2048x16384   int8                             rect
1024x8192    float64                          rect
8192x1024    complex128                       rect
4097x4095    int8,float16,float32,float64,complex128  odd
1023x1025    float32                          odd
8191x8193    int8                             odd
3001x999     float64                          odd
4093x4099    float32                          prime
7919x7907    int8                             prime
1021x1031    float16                          prime
2039x2029    float64                          prime
509x521      complex128                       prime
17x100003    float16                          prime,skinny
100003x17    float16                          prime,skinny
1048576x1    float32                          skinny
1x1048576    float32                          skinny
262144x3     float16                          skinny
3x262144     float16                          skinny
1000000x8    int8                             skinny
8x1000000    int8                             skinny
131072x16    float64                          skinny
16x131072    float64                          skinny
65536x32     complex128                       skinny
32x65536     complex128                       skinny
65536x64     float32                          skinny
64x65536     float32                          skinny
256x256      float32                          small
500x500      float32                          small
128x128      float64                          small
64x64        complex128                       small
512x512      int8                             small
300x500      float16                          small
33x33        float32                          small,odd
720x1280     int8                             small
256x64x64    float32                          batched
1024x32x32   float16                          batched
512x128x128  int8                             batched
64x96x96     float64                          batched
128x33x65    complex128                       batched,odd
4096x8x16    float32                          batched,skinny
4x2048x2048  float32                          batched
4x4096x4096  int8                             batched
2x4096x4096  float16                          batched
8x1024x1024  float64                          batched
2x1024x2048  complex128                       batched
50257x768    float32,float16                  llm     # vocabulary x hidden (GPT-2)
768x50257    float16                          llm
32000x4096   float16                          llm     # vocabulary x hidden (LLaMA)
4096x32000   int8                             llm
4096x11008   float16                          llm     # hidden x MLP (LLaMA)
11008x4096   float16                          llm
768x3072     float32                          llm     # hidden x 4 hidden (GPT-2)
3072x768     float32                          llm
32x2048x128  float16                          llm,batched   # (batch x heads, sequence, head dim)
32x128x2048  float16                          llm,batched
12x1024x64   float32                          llm,batched
64x4096x128  float16                          llm,batched
"""

# Shapes kept out of the shipped grid (tests check it): how well the untuned
# choice does on shapes nobody tuned.
_HELD_OUT = """
3000x5000    float32     rect
1500x1500    float32     square
6144x2560    float16     rect
50000x1600   float16     llm
1999x3001    int8        odd
10000x3333   int8        odd
12x345678    float32     skinny
7x500000     float32     skinny
96x1024x64   float16     batched,llm
48x200x200   int8        batched
5000x3000    float64     rect
2500x1000    float64     rect
1234x4321    complex128  odd
200x300      complex128  small
130813x263   float32     rect,long,odd
333x100003   float16     rect,long,odd
100003x333   float16     rect,long,odd
65537x301    int8        rect,long,odd
65536x384    int8        rect,long
100000x200   float64     rect,long
"""

QUICK = ("8192x8192:float32", "16384x16384:int8", "4096x4096:complex128", "1024x1024:float32",
         "4097x4095:float16", "4097x4095:float64", "17x100003:float16", "65536x64:float32",
         "64x65536:float32", "256x256:float32", "64x64:complex128", "256x64x64:float32",
         "4x2048x2048:float32", "50257x768:float32", "32000x4096:float16", "32x2048x128:float16",
         "131072x16:float64", "1999x3001:int8", "96x1024x64:float16", "5000x3000:float64")


def zoo() -> list[Case]:
    """The benchmark's cases: every element size, every class of CLASSES."""
    return parse_cases(_ZOO)


def held_out() -> list[Case]:
    """Shapes that are not in the shipped grid, reported apart."""
    return parse_cases(_HELD_OUT, held_out=True)


def quick() -> list[Case]:
    """A subset of the zoo and the held-out shapes that runs in about a minute."""
    every = {c.name: c for c in zoo() + held_out()}
    return [every[n] for n in QUICK]
