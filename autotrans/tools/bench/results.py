"""Results: one contender on one case (Result), one case's row (Row), and the
contender ready to run (Entry)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...core.problem import gbps
from ...tuning import timing
from .cases import Case, band

# Memory bandwidth on the datasheet, GB/s, by a part of the GPU's name (the first that
# matches; most specific first). A GPU not named here gets no datasheet fraction.
DATASHEETS = (("H200", 4800.0), ("H100 NVL", 3900.0), ("H100 PCIe", 2000.0), ("H100 80GB HBM3", 3350.0),
              ("A100-SXM4-80GB", 2039.0), ("A100-SXM4-40GB", 1555.0))
CONTENDERS = ("tuned", "untuned", "memcpy", "copy16", "torch", "torch_compile", "cupy", "geam", "jax")
ROOFLINE = ("memcpy", "copy16")
PEERS = ("torch", "torch_compile", "cupy", "geam")    # the peer target's field (XLA is an estimate)
PEER_COLUMNS = PEERS + ("jax",)                        # every peer, as the tables show them
LABELS = {"tuned": "autotrans tuned", "untuned": "autotrans untuned", "memcpy": "cudaMemcpy D2D",
          "copy16": "16-byte copy kernel", "torch": "torch eager", "torch_compile": "torch.compile",
          "cupy": "CuPy", "geam": "cuBLAS geam", "jax": "XLA*"}


def datasheet_gbps(gpu: str) -> float | None:
    """The datasheet's memory bandwidth (GB/s) of the GPU named gpu; None if not in DATASHEETS."""
    return next((gbps for part, gbps in DATASHEETS if part in str(gpu)), None)


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception as one line of at most ``limit`` characters."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text[:limit]


@dataclass(frozen=True)
class Result:
    """One contender on one case. status: ok, wrong (a bit-exact check failed),
    failed (an error), missing (its library is not installed), n/a (it cannot
    do this case), view (it returned its input: not a transpose), skipped."""
    status: str
    median_us: float | None = None
    q1_us: float | None = None
    q3_us: float | None = None
    n: int = 0
    config: str | None = None
    source: str | None = None
    setup_s: float | None = None      # tune() / compile seconds spent on this case
    note: str = ""

    @classmethod
    def timed(cls, samples, **kw) -> "Result":
        if not samples:
            return cls("failed", note="no timing sample", **kw)
        s = timing.Stats.of(samples)
        return cls("ok", s.median_us, s.q1_us, s.q3_us, s.n, **kw)

    def to_dict(self) -> dict:
        return {"status": self.status, "median_us": self.median_us, "q1_us": self.q1_us, "q3_us": self.q3_us,
                "iqr_us": None if self.q1_us is None else self.q3_us - self.q1_us, "n": self.n,
                "config": self.config, "source": self.source, "setup_s": self.setup_s, "note": self.note}


@dataclass(frozen=True)
class Row:
    """One case: every contender's result."""
    case: Case
    results: dict = field(default_factory=dict)     # contender name -> Result
    spin_us: float = 0.0
    seconds: float = 0.0
    datasheet_gbps: float | None = None             # the GPU's (datasheet_gbps), for frac_datasheet

    def roofline(self) -> tuple[float, str] | None:
        """(µs, which) of the faster copy, or None if neither ran."""
        ok = [(r.median_us, k) for k in ROOFLINE if (r := self.results.get(k)) and r.status == "ok"]
        return min(ok) if ok else None

    def to_dict(self) -> dict:
        c, roof = self.case, self.roofline()
        out = {"name": c.name, "shape": list(c.shape), "bmn": list(c.bmn), "dtype": c.dtype,
               "elem_bytes": c.elem_bytes, "nbytes": c.nbytes, "classes": list(c.classes),
               "held_out": c.held_out, "band": band(c.nbytes), "aligned": c.aligned,
               "roofline": None if roof is None else _figures(c.nbytes, roof[0], {"us": roof[0], "by": roof[1]},
                                                           self.datasheet_gbps),
               "results": {k: _result_dict(r, c.nbytes, roof, self.datasheet_gbps) for k, r in self.results.items()},
               "spin_us": self.spin_us, "seconds": round(self.seconds, 3)}
        # flat "<contender>_us" medians, as `autotrans bench` and `autotrans report` read them
        for name, r in self.results.items():
            out[f"{name}_us"] = r.median_us if r.status == "ok" else None
        tuned = self.results.get("tuned")
        out["autotrans_us"] = out.get("tuned_us")
        out["config"] = tuned.config if tuned else None
        return out


def _figures(nbytes: int, us: float, d: dict, datasheet: float | None) -> dict:
    """d with the GB/s of moving nbytes in us and its fraction of the datasheet (None: not known)."""
    d["gbps"] = gbps(nbytes, us)
    d["frac_datasheet"] = d["gbps"] / datasheet if datasheet else None
    return d


def _result_dict(r: Result, nbytes: int, roof, datasheet: float | None) -> dict:
    d = r.to_dict()
    if r.status == "ok":
        _figures(nbytes, r.median_us, d, datasheet)
        d["frac_roofline"] = roof[0] / r.median_us if roof else None
    return d


@dataclass
class Entry:
    """A contender ready to run: call(src) runs it on input src and returns its
    output (a device pointer, or an array holding one)."""
    name: str
    call: object
    copy: bool = False          # the roofline's copies: the output must equal the input
    into_y: bool = True         # writes the case's output buffer (pre-filled before each check)
    config: str | None = None
    source: str | None = None
    setup_s: float | None = None
    note: str = ""

    def result(self, status: str, note: str) -> Result:
        return Result(status, config=self.config, source=self.source, setup_s=self.setup_s, note=note)
