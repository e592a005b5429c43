"""autotrans: autotuned CUDA matrix transposes.

    import autotrans
    autotrans.tune((8192, 8192), dtype="float32")   # find and cache the fastest kernel
    y = autotrans.transpose(x)                      # x: a GPUArray, torch or CuPy array...
    z = autotrans.permute(x4, (0, 2, 1, 3))         # N-d, strided views too

GPU work needs PyCUDA and an NVIDIA GPU; everything else (configs, templates,
compilation, the cache, the CLI) works without them.
"""
from .core.version import VERSION as __version__

from .api import Choice, DeviceArray, cached, explain, forget, permute, transpose, tune
from .backend.cuda import GPUUnavailable
from .emulate.banks import bank_report
from .kernels.config import KernelConfig, classic
from .results.store import CacheKey, ResultCache
from .tuning.runner import TuneResult

__all__ = ["tune", "transpose", "permute", "explain", "cached", "forget", "DeviceArray", "KernelConfig", "classic", "TuneResult",
           "Choice", "ResultCache", "CacheKey", "GPUUnavailable", "bank_report", "__version__"]
