"""Compiled kernels, loaded: the build store's cubins handed to the backend."""
from __future__ import annotations

from ..backend import cuda as driver
from ..build.compile import Compiled, compile_configs
from ..kernels.config import KernelConfig


def load(cfg: KernelConfig, compiled: Compiled) -> driver.Kernel:
    """The loaded kernel of a compiled config (its cubin checked against its hash)."""
    return driver.Kernel(cfg, driver.load_module(compiled.object, compiled.image()))


def kernel(cfg: KernelConfig) -> driver.Kernel:
    """cfg compiled (or found in the store) for the current GPU, and loaded."""
    return load(cfg, compile_configs([cfg], driver.device().arch)[cfg.key])
