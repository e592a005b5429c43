"""The main job: tune one shape on this GPU, then transpose an array with the
result and check it against NumPy.

    python examples/quickstart.py [SHAPE] [DTYPE]       # default 8192x8192 float32
"""
import sys
import time

import numpy as np

import autotrans
from autotrans.backend import cuda as driver
from autotrans.core.problem import parse_shape


def main(shape_s="8192x8192", dtype="float32"):
    shape = parse_shape(shape_s)
    result = autotrans.tune(shape, dtype)                 # finds, verifies and caches the fastest kernel
    print(result)
    x = np.random.default_rng(0).integers(0, 100, shape).astype(dtype)
    gx = driver.gpuarray().to_gpu(x)
    print("transpose() uses", autotrans.explain(shape, dtype))
    y = autotrans.transpose(gx)                           # uses the cached best config
    driver.synchronize()
    t = time.perf_counter()
    for _ in range(20):
        autotrans.transpose(gx, out=y)
    driver.synchronize()
    ms = (time.perf_counter() - t) / 20 * 1e3
    assert np.array_equal(y.get(), np.swapaxes(x, -1, -2)), "transpose differs from NumPy"
    print(f"transpose of {shape_s} {dtype}: bit-exact against NumPy, {ms:.3f} ms per call")


if __name__ == "__main__":
    try:
        main(*sys.argv[1:])
    except autotrans.GPUUnavailable as exc:
        sys.exit(f"quickstart: no GPU to run on: {exc}")
    except (ValueError, TypeError) as exc:
        sys.exit(f"quickstart: {exc}")
