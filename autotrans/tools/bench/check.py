"""Bit-exact output checks on the GPU: every output, ours and the peers', on
the complement of the input first, then on the input itself."""
from __future__ import annotations

import numpy as np

from ...backend import cuda as driver
from ...backend.driver import locate
from .cases import Case
from .gpu import Data, Gpu
from .results import Entry

# torch's .contiguous() and CuPy's ascontiguousarray return their input when
# its transposed layout is already C-contiguous (a side of 1): nothing moves.
VIEW_NOTE = "returned its input's memory (a view: no bytes moved), so it is not timed as a transpose"


def output(gpu: Gpu, e: Entry, case: Case, data: Data):
    """None, or (status, why): the output on the complement input, then on
    the input, must be the transposed input (the input, for the copies); an
    output that is the input's own memory is ("view", VIEW_NOTE)."""
    n = case.nbytes
    for src in (data.xc, data.x):
        if e.into_y:
            shape, size = ((1, 1, n), 1) if e.copy else (case.bmn, case.elem_bytes)
            gpu.prefill_wrong(data.y, src, shape, size)
        out = e.call(src)
        why = _layout_problem(out, case.out_shape)
        if why:
            return "wrong", why
        ptr = _pointer(out)
        if not e.into_y and ptr == src:
            return "view", VIEW_NOTE
        why = None if isinstance(out, int) else _foreign_problem(ptr)
        if why:
            return "failed", f"cannot check: {why}"
        bad = gpu.copy_diff(ptr, src, n) if e.copy else gpu.transpose_diff(ptr, src, case.bmn, case.elem_bytes)
        del out
        if bad:
            which = "complement input" if src == data.xc else "input"
            return "wrong", f"{bad} of {n} output bytes wrong (on the {which})"
    return None


def xla_output(gpu: Gpu, xla, case: Case, data: Data):
    """None, or (status, why), for an XLA transpose (peers.Xla): on the GPU
    when its output is in our context, else on the host. Drops its inputs."""
    for src in (data.xc, data.x):
        y = xla.fn(xla.arrays[src])
        y.block_until_ready()
        if tuple(y.shape) != case.out_shape or np.dtype(y.dtype) != np.dtype(case.dtype):
            return "wrong", f"output {tuple(y.shape)} {y.dtype}, expected {case.out_shape} {case.dtype}"
        bad = _xla_diff(gpu, y, xla.hosts[src], src, case)
        if bad:
            return "wrong", f"{bad} of {case.nbytes} output bytes wrong"
    xla.hosts = xla.arrays = None
    return None


def _xla_diff(gpu: Gpu, y, host, src: int, case: Case) -> int:
    """Bytes of the XLA output y that differ from transpose(src) (host: src's copy)."""
    try:
        ptr = int(y.unsafe_buffer_pointer())
        if _foreign_problem(ptr):
            raise NotImplementedError("not in our context")
        return gpu.transpose_diff(ptr, src, case.bmn, case.elem_bytes)
    except (AttributeError, NotImplementedError, RuntimeError):   # compare on the host
        want = np.ascontiguousarray(np.swapaxes(host, -1, -2)).reshape(-1).view(np.uint8)
        return int(np.count_nonzero(np.asarray(y).reshape(-1).view(np.uint8) != want))


def _pointer(out) -> int:
    if isinstance(out, int):
        return out
    if hasattr(out, "data_ptr"):
        return int(out.data_ptr())
    return int(out.__cuda_array_interface__["data"][0])


def _foreign_problem(ptr: int) -> str | None:
    """Why our kernels must not read ptr: not device memory of our context."""
    where = locate(ptr)
    if where.memory == 0:
        return "its output is not device memory CUDA knows"
    if where.ctx != driver.home_context():
        return "its output lives in another CUDA context"
    return None


def _layout_problem(out, shape) -> str | None:
    if isinstance(out, int):
        return None
    got = tuple(out.shape)
    if got != tuple(shape):
        return f"output shape {got}, expected {tuple(shape)}"
    contiguous = out.is_contiguous() if hasattr(out, "is_contiguous") else bool(out.flags.c_contiguous)
    return None if contiguous else "the output is not C-contiguous"
