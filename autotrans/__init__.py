"""autotrans: autotuned CUDA matrix transposes.

    import autotrans
    autotrans.tune((8192, 8192), dtype="float32")   # find and cache the fastest kernel
    y = autotrans.transpose(x)                      # x: a pycuda GPUArray

GPU work needs PyCUDA and an NVIDIA GPU; everything else (configs, templates,
compilation, the cache, the CLI) works without them.
"""
__version__ = "0.1.0"

from .banks import bank_report
from .cache import CacheKey, ResultCache
from .config import KernelConfig, classic
from .dispatch import Choice, cached, explain, transpose
from .driver import GPUUnavailable
from .tuner import TuneResult, tune

__all__ = ["tune", "transpose", "explain", "cached", "KernelConfig", "classic", "TuneResult",
           "Choice", "ResultCache", "CacheKey", "GPUUnavailable", "bank_report", "__version__"]
