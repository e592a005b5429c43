"""autotrans: autotuned CUDA matrix transposes.

    import autotrans
    autotrans.tune((8192, 8192), dtype="float32")   # find and cache the fastest kernel
    y = autotrans.transpose(x)                      # x: a pycuda GPUArray

GPU work needs PyCUDA and an NVIDIA GPU; everything else (configs, templates,
compilation, the cache, the CLI) works without them.
"""
from .core.version import VERSION as __version__

from .api import Choice, DeviceArray, cached, explain, forget, transpose, tune
from .backend.cuda import GPUUnavailable
from .emulate.banks import bank_report
from .kernels.config import KernelConfig, classic
from .results.store import CacheKey, ResultCache
from .tuning.runner import TuneResult

__all__ = ["tune", "transpose", "explain", "cached", "forget", "DeviceArray", "KernelConfig", "classic", "TuneResult",
           "Choice", "ResultCache", "CacheKey", "GPUUnavailable", "bank_report", "__version__"]
