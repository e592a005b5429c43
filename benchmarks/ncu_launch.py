"""Launch given configs on one shape (twice each), for a profiler such as ncu;
with the key ``torch.compile``, torch.compile's transpose of the same shape
(compiled first, then launched twice):

    ncu --clock-control none --kernel-name regex:^at_ python benchmarks/ncu_launch.py 4097x4095 float32 KEY...
    ncu --clock-control none --kernel-name regex:triton python benchmarks/ncu_launch.py 512x512 int8 torch.compile
"""
import argparse

import numpy as np

from autotrans.backend import cuda as driver
from autotrans.backend import memory
from autotrans.build.compile import compile_configs
from autotrans.kernels.config import KernelConfig
from autotrans.tuning import loader, verify

PEER = "torch.compile"


def main(shape_s, dtype, *keys):
    shape = tuple(int(s) for s in shape_s.split("x"))
    if PEER in keys:
        _torch_compile(shape, dtype)
    cfgs = [KernelConfig.from_key(k) for k in keys if k != PEER]
    if not cfgs:
        return
    dev = driver.device()
    compiled = compile_configs(cfgs, dev.arch)
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    src, dst = memory.alloc(n), memory.alloc(n)
    verify.fill_pattern(src, n, 1234)
    for c in cfgs:
        k = loader.load(c, compiled[c.key])
        for _ in range(2):
            k(src, dst, shape)
    driver.synchronize()


def _torch_compile(shape, dtype):
    import torch
    x = torch.ones(shape, dtype=getattr(torch, np.dtype(dtype).name), device="cuda")
    f = torch.compile(lambda t: t.mT.contiguous(), dynamic=False)
    for _ in range(3):
        f(x)
    torch.cuda.synchronize()


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape", help="e.g. 4097x4095 or 8x512x512")
    ap.add_argument("dtype", help="e.g. float32")
    ap.add_argument("keys", nargs="+", metavar="KEY", help=f"config keys, or {PEER}")
    return ap


if __name__ == "__main__":
    a = parser().parse_args()
    main(a.shape, a.dtype, *a.keys)
