"""Wall time per call of autotrans.transpose() against torch's x.t().contiguous()
on a small matrix, where Python and launch overhead dominate."""
import sys
import time

import numpy as np

import autotrans
from autotrans import driver


def per_call(fn, sync, n=3000):
    for _ in range(50):
        fn()
    sync()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    sync()
    return (time.perf_counter() - t) / n * 1e6


def main(m=1024, n=1024):
    ga = driver.gpuarray()
    x = ga.to_gpu(np.random.default_rng(0).random((m, n), dtype=np.float32))
    out = ga.empty((n, m), np.float32)
    assert np.array_equal(autotrans.transpose(x).get(), x.get().T)
    print(f"{m}x{n} float32, config {autotrans.explain((m, n), np.float32)}")
    print(f"autotrans.transpose(x):        {per_call(lambda: autotrans.transpose(x), driver.synchronize):6.1f} us/call")
    print(f"autotrans.transpose(x, out):   {per_call(lambda: autotrans.transpose(x, out), driver.synchronize):6.1f} us/call")
    try:
        import torch
    except ImportError:
        return
    tx = torch.rand(m, n, device="cuda")
    print(f"torch x.t().contiguous():      {per_call(lambda: tx.t().contiguous(), torch.cuda.synchronize):6.1f} us/call")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
