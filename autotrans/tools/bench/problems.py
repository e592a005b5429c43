"""The shipped strided problems (benchmarks/grid.py --problems): permutations
whose problem runs a strided kernel, tuned for the shipped results that
permute() takes exactly or as the nearest tuned problem (api.strided_select).
Their sizes differ from permute_bench.py's cases, so that the benchmark's
untuned column measures the nearest rule, not an exact hit."""
from __future__ import annotations

from dataclasses import dataclass

BSHD = (0, 2, 1, 3)


@dataclass(frozen=True)
class PermuteCase:
    """One permutation of a C-contiguous array: numpy.transpose(x, axes),
    with the cast to ``to`` or the conjugate in the same pass; ``cols``: of
    the view x[..., start:stop] instead (a pitched view)."""
    shape: tuple
    dtype: str
    axes: tuple
    to: str | None = None
    conj: bool = False
    classes: tuple = ()
    cols: tuple | None = None

    @property
    def name(self) -> str:
        view = "" if self.cols is None else f"[:{self.cols[0]}:{self.cols[1]}]"
        return (f"{'x'.join(map(str, self.shape))}{view}:{self.dtype}:{','.join(map(str, self.axes))}"
                + (f">{self.to}" if self.to else "") + (":conj" if self.conj else ""))

    def problem(self) -> tuple:
        """(the problem permute() runs for it, its cast, its epilogue):
        api.permute.permutation_problem, or of its view."""
        from ...api.permute import permutation_problem, view_problem
        if self.cols is None:
            return permutation_problem(self.shape, self.dtype, self.axes, conj=self.conj, to=self.to)
        return view_problem(self.shape, self.dtype, self.axes, self.cols)


_CASES = (
    # the inner axis stays put: rows of 16-128 bytes ((B, S, H, D) -> (B, H, S, D)), and odd rows
    *[PermuteCase(s, dt, BSHD, classes=("rows",)) for s, dt in (
        ((4, 2048, 16, 64), "float16"), ((8, 1024, 32, 8), "float32"), ((4, 2048, 16, 64), "int8"),
        ((2, 1024, 16, 128), "float32"))],
    PermuteCase((233, 457, 251), "float32", (1, 0, 2), classes=("rows", "odd")),
    # rows of sub-word accesses (2-byte-aligned rows: 134 B, 70 B), the row-sized rows tiles' class
    PermuteCase((4, 1024, 16, 67), "float16", BSHD, classes=("rows", "odd")),
    PermuteCase((300, 311, 70), "int8", (1, 0, 2), classes=("rows", "odd")),
    # (2, 1, 0) of odd 3-D arrays: batched strided transposes at any alignment
    *[PermuteCase(s, dt, (2, 1, 0), classes=("3-D", "odd")) for s, dt in (
        ((401, 701, 241), "int8"), ((301, 501, 203), "float16"), ((229, 457, 241), "float32"),
        ((161, 301, 139), "float64"), ((131, 211, 127), "complex128"))],
    PermuteCase((256, 512, 256), "int8", (2, 1, 0), classes=("3-D",)),      # 16-byte aligned rows
    # general 4-D orders of odd sizes (fused tiles)
    PermuteCase((37, 61, 101, 53), "float32", (3, 2, 1, 0), classes=("4-D", "odd")),
    PermuteCase((37, 61, 101, 53), "float32", (1, 3, 0, 2), classes=("4-D", "odd")),
    PermuteCase((41, 67, 97, 59), "int8", (3, 2, 1, 0), classes=("4-D", "odd")),
    PermuteCase((37, 61, 101, 53), "float16", (2, 0, 3, 1), classes=("4-D", "odd")),
    # a pitched 2-D view
    PermuteCase((4096, 4352), "float32", (1, 0), cols=(128, 4224), classes=("view",)),
    # cast-transposes, aligned and odd, and a cast of rows
    *[PermuteCase(s, dt, (1, 0), to=to, classes=("cast",) + (("odd",) if s[0] % 2 else ())) for s in
      ((4096, 4096), (2049, 4095)) for dt, to in (("float32", "bfloat16"), ("float32", "float16"),
                                                ("bfloat16", "float32"))],
    PermuteCase((4, 2048, 16, 64), "float32", BSHD, to="bfloat16", classes=("cast", "rows")),
    PermuteCase((229, 457, 241), "float32", (2, 1, 0), to="bfloat16", classes=("cast", "3-D", "odd")),  # fused
    # conjugate transposes
    PermuteCase((2048, 2048), "complex64", (1, 0), conj=True, classes=("conj",)),
    PermuteCase((2, 1024, 1024), "complex128", (0, 2, 1), conj=True, classes=("conj",)),
    PermuteCase((4, 2048, 16, 64), "complex64", BSHD, conj=True, classes=("conj", "rows")),
)


def problem_grid() -> list[PermuteCase]:
    """The permutations tuned for the shipped strided results."""
    return list(_CASES)


__all__ = ["PermuteCase", "problem_grid"]
