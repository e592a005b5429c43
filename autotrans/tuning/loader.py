"""Compiled kernels, loaded: the build store's cubins handed to the backend."""
from __future__ import annotations

from ..backend import cuda as driver
from ..build.compile import Compiled, compile_configs
from ..kernels.config import KernelConfig


def load(cfg: KernelConfig, compiled: Compiled, ctx: int | None = None) -> driver.Kernel:
    """The loaded kernel of a compiled config (its cubin checked against its hash),
    in context ctx (default: PyCUDA's)."""
    return driver.Kernel(cfg, driver.load_module(compiled.object, compiled.image(), ctx))


def kernel(cfg: KernelConfig, arch: str | None = None, ctx: int | None = None) -> driver.Kernel:
    """cfg compiled (or found in the store) for arch (default: the current GPU's), and loaded."""
    return load(cfg, compile_configs([cfg], arch or driver.device().arch)[cfg.key], ctx)
