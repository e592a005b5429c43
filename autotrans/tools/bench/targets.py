"""Target evaluation on result rows (plain dicts, no GPU): the peer, roofline
and untuned targets of each case, tune() times, and each target's tally."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .cases import band
from .document import number
from .results import LABELS, PEERS, ROOFLINE

# Targets: ratios of medians.
NEED_PEER = 1.00            # tuned time <= the best peer's
NEED_ROOF_LARGE = 0.92      # of the roofline, cases >= 16 MiB
NEED_ROOF_MID = 0.85        # of the roofline, cases of 1-16 MiB (below 1 MiB: the peer target alone)
NEED_UNTUNED = 0.95         # untuned speed over tuned speed
NEED_TUNE_COLD_S, NEED_TUNE_WARM_S = 10.0, 2.0
TARGETS = {"peer": NEED_PEER, "roofline_ge_16mib": NEED_ROOF_LARGE, "roofline_1_16mib": NEED_ROOF_MID,
           "untuned": NEED_UNTUNED, "tune_cold_s": NEED_TUNE_COLD_S, "tune_warm_s": NEED_TUNE_WARM_S}


@dataclass(frozen=True)
class Check:
    """One target on one case. met None: the target does not apply (note says why)."""
    case: str
    target: str          # "peer", "roofline", "untuned", "tune_cold", "tune_warm"
    value: float | None
    need: float | None
    met: bool | None
    note: str = ""

    def describe(self) -> str:
        label = {"peer": "best peer time / tuned time", "roofline": "tuned, fraction of the roofline",
                 "untuned": "untuned, fraction of tuned", "tune_cold": "tune() cold, s",
                 "tune_warm": "tune() with kernels compiled, s"}[self.target]
        value = "–" if self.value is None else f"{self.value:.3f}"
        need = "" if self.need is None else (f" (need ≤ {self.need:g})" if self.target.startswith("tune")
                                             else f" (need ≥ {self.need:.2f})")
        return f"{self.case}: {label}: {value}{need}" + (f"; {self.note}" if self.note else "")


def ok_result(results: dict, name: str) -> dict | None:
    r = results.get(name)
    return r if isinstance(r, dict) and r.get("status") == "ok" and number(r.get("median_us")) \
        and r["median_us"] > 0 else None


def _why_not(results: dict, name: str) -> str:
    r = results.get(name) or {}
    return f"{LABELS.get(name, name)} {r.get('status', 'did not run')}" + (f": {r['note']}" if r.get("note") else "")


def _overlap(a: dict, b: dict) -> bool:
    if not all(number(x.get(k)) for x in (a, b) for k in ("q1_us", "q3_us")):
        return False
    return a["q1_us"] <= b["q3_us"] and b["q1_us"] <= a["q3_us"]


def evaluate(row: dict) -> list[Check]:
    """The peer, roofline and untuned checks of one row."""
    res, name = row["results"], row["name"]
    t = ok_result(res, "tuned")
    return [_peer_check(name, res, t), _roofline_check(row, t), _untuned_check(name, res, t)]


def checks_of(row: dict) -> dict:
    """{target: Check} of one row."""
    return {c.target: c for c in evaluate(row)}


def _peer_check(name, res, t) -> Check:
    if t is None:
        return Check(name, "peer", None, NEED_PEER, False, _why_not(res, "tuned"))
    peers = {p: r for p in PEERS if (r := ok_result(res, p))}
    if not peers:
        return Check(name, "peer", None, NEED_PEER, None, "no peer ran")
    best = min(peers, key=lambda p: peers[p]["median_us"])
    v = peers[best]["median_us"] / t["median_us"]
    note = f"best peer {LABELS[best]} {peers[best]['median_us']:.2f} µs, tuned {t['median_us']:.2f} µs"
    if v < NEED_PEER and _overlap(t, peers[best]):
        note += " (the IQRs overlap)"
    return Check(name, "peer", v, NEED_PEER, v >= NEED_PEER, note)


def _roofline_check(row, t) -> Check:
    name, b = row["name"], band(row["nbytes"])
    if b == "small":
        return Check(name, "roofline", None, None, None, "below 1 MiB the peer target applies")
    need = NEED_ROOF_LARGE if b == "large" else NEED_ROOF_MID
    if t is None:
        return Check(name, "roofline", None, need, False, _why_not(row["results"], "tuned"))
    roof = row.get("roofline")
    if not roof:
        return Check(name, "roofline", None, need, None, "no roofline: both copies failed")
    v = roof["us"] / t["median_us"]
    return Check(name, "roofline", v, need, v >= need,
                 f"roofline {roof['us']:.2f} µs ({LABELS.get(roof.get('by'), roof.get('by'))}), "
                 f"tuned {t['median_us']:.2f} µs")


def _untuned_check(name, res, t) -> Check:
    if t is None:
        return Check(name, "untuned", None, NEED_UNTUNED, False, _why_not(res, "tuned"))
    u = ok_result(res, "untuned")
    if u is None:
        return Check(name, "untuned", None, NEED_UNTUNED, False, _why_not(res, "untuned"))
    v = t["median_us"] / u["median_us"]
    src = res["untuned"].get("source") or "?"
    note = f"untuned {u['median_us']:.2f} µs from {src} ({res['untuned'].get('config')})"
    if v < NEED_UNTUNED and _overlap(t, u):
        note += " (the IQRs overlap)"
    return Check(name, "untuned", v, NEED_UNTUNED, v >= NEED_UNTUNED, note)


def tune_checks(doc: dict) -> list[Check]:
    """The cold and warm tune() time checks of a document's tune_times."""
    out = []
    for t in doc.get("tune_times") or []:
        for key, target, need in (("cold_s", "tune_cold", NEED_TUNE_COLD_S), ("warm_s", "tune_warm", NEED_TUNE_WARM_S)):
            v = t.get(key)
            out.append(Check(t.get("name", "?"), target, v, need, None if not number(v) else v <= need,
                             t.get("error") or ""))
    return out


def flags(row: dict) -> list[str]:
    """Figures above 1.0 of the roofline (to be checked)."""
    roof = row.get("roofline")
    if not roof:
        return []
    out = []
    for k, r in row["results"].items():
        if k not in ROOFLINE and (r := ok_result(row["results"], k)) and roof["us"] / r["median_us"] > 1.0:
            out.append(f"{row['name']}: {LABELS.get(k, k)} {roof['us'] / r['median_us']:.3f} of the roofline "
                       f"({r['median_us']:.2f} µs against {roof['us']:.2f} µs)")
    return out


_GROUPS = (   # (label, which rows, which check)
    ("tuned ≥ best peer (median ratio ≥ 1.00), zoo", lambda r: not r["held_out"], "peer"),
    ("tuned ≥ best peer, held-out shapes", lambda r: r["held_out"], "peer"),
    ("tuned ≥ 0.92 of roofline, cases ≥ 16 MiB", lambda r: band(r["nbytes"]) == "large", "roofline"),
    ("tuned ≥ 0.85 of roofline, cases of 1-16 MiB", lambda r: band(r["nbytes"]) == "mid", "roofline"),
    ("below 1 MiB: tuned no slower than the best peer", lambda r: band(r["nbytes"]) == "small", "peer"),
    ("untuned ≥ 0.95 of tuned, zoo", lambda r: not r["held_out"], "untuned"),
    ("untuned ≥ 0.95 of tuned, held-out shapes", lambda r: r["held_out"], "untuned"),
)


class Tally(NamedTuple):
    """One target over the cases it applies to."""
    label: str
    evaluated: int
    met: int
    missed: list
    not_applicable: int


def summary(doc: dict) -> list[Tally]:
    """Each target group's tally (every zoo and held-out row, and the tune() times)."""
    out = []
    checks = {r["name"]: checks_of(r) for r in doc["rows"]}
    for label, which, target in _GROUPS:
        cs = [checks[r["name"]][target] for r in doc["rows"] if which(r)]
        out.append(_tally(label, cs))
    tc = tune_checks(doc)
    for target, label in (("tune_cold", "tune() ≤ 10 s cold (fresh process)"),
                          ("tune_warm", "tune() ≤ 2 s with kernels compiled (fresh process)")):
        cs = [c for c in tc if c.target == target]
        out.append(_tally(label, cs))
    return out


def _tally(label: str, checks) -> Tally:
    return Tally(label, sum(c.met is not None for c in checks), sum(c.met is True for c in checks),
                 [c.case for c in checks if c.met is False], sum(c.met is None for c in checks))
