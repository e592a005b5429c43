"""Who a GPU is (for reusing results) and what it allows a block (for choosing configs)."""
from __future__ import annotations

import re
from dataclasses import dataclass

_TEXT = re.compile(r"^(?P<name>[^|]+)\|sm_(?P<cc>\d+)\|(?P<sms>\d+)sm\|driver (?P<driver>[^|]+)"
                   r"\|cuda (?P<cuda>[^|]+)$")


@dataclass(frozen=True)
class DeviceId:
    """A GPU model and the software it runs: results are reused only on the same
    ``text``; shipped results on the same ``hardware`` (any driver)."""
    name: str
    arch: str          # "sm_90"
    sms: int
    driver: str
    cuda: str

    def __post_init__(self):
        for f in ("name", "driver", "cuda"):
            v = getattr(self, f)
            if not isinstance(v, str) or not v or "|" in v or not v.isprintable():
                raise ValueError(f"device {f} must be printable text without '|', not {v!r}")
        if not isinstance(self.arch, str) or not re.fullmatch(r"sm_\d+", self.arch):
            raise ValueError(f"device arch must look like sm_90, not {self.arch!r}")
        if isinstance(self.sms, bool) or not isinstance(self.sms, int) or self.sms < 1:
            raise ValueError(f"device SM count must be a positive int, not {self.sms!r}")

    @property
    def text(self) -> str:
        """``NAME|sm_XX|NNsm|driver D|cuda C``: the stable text in cache keys."""
        return f"{self.name}|{self.arch}|{self.sms}sm|driver {self.driver}|cuda {self.cuda}"

    @property
    def hardware(self) -> str:
        """``NAME|sm_XX|NNsm``: the model, whatever driver and toolkit."""
        return f"{self.name}|{self.arch}|{self.sms}sm"

    @classmethod
    def from_text(cls, text: str) -> "DeviceId":
        """Inverse of ``text``; ValueError for anything else."""
        m = _TEXT.match(text) if isinstance(text, str) else None
        if not m:
            raise ValueError(f"not a device fingerprint (NAME|sm_XX|NNsm|driver D|cuda C): {text!r}")
        return cls(m["name"], f"sm_{m['cc']}", int(m["sms"]), m["driver"], m["cuda"])

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Limits:
    """What a device allows a block; defaults are every CUDA GPU's minimum."""
    max_threads: int = 1024
    smem_per_block: int = 48 * 1024    # with the opt-in attribute, where the device has more

    def problems(self, threads: int, smem_bytes: int) -> list[str]:
        """Why a block of this many threads and bytes of shared memory cannot run."""
        p = []
        if threads > self.max_threads:
            p.append(f"{threads} threads > device limit {self.max_threads}")
        if smem_bytes > self.smem_per_block:
            p.append(f"{smem_bytes} B shared memory > device limit {self.smem_per_block}")
        return p
