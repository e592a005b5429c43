"""The markdown report of a result document (benchmarks/results/<gpu>.md) and
the per-case table `autotrans bench` prints."""
from __future__ import annotations

import numpy as np

from ...core.problem import gbps
from .cases import MIB
from .document import METHOD, number
from .results import LABELS, PEER_COLUMNS
from .targets import checks_of, evaluate, flags, ok_result, summary, tune_checks


def _us(r: dict | None) -> str:
    if not isinstance(r, dict):
        return "–"
    if r.get("status") != "ok":
        return {"n/a": "–"}.get(r.get("status"), r.get("status", "–"))
    return f"{r['median_us']:.1f}"


def mib(nbytes: int) -> str:
    """A size in MiB as the tables show it."""
    x = nbytes / MIB
    return f"{x:.0f}" if x >= 10 else f"{x:.2f}"


def ratio(x) -> str:
    """A ratio to three places, or a dash."""
    return "–" if x is None else f"{x:.3f}"


def _tuned_cell(t: dict | None, res: dict) -> str:
    if t is None:
        return _us(res.get("tuned"))
    iqr = t["q3_us"] - t["q1_us"] if number(t.get("q1_us")) and number(t.get("q3_us")) else None
    return f"{t['median_us']:.1f}" + ("" if iqr is None else f" ({iqr:.1f})")


def frac_roofline(row: dict) -> float | None:
    """The roofline over the tuned median (None if either is missing)."""
    t, roof = ok_result(row["results"], "tuned"), row.get("roofline")
    return roof["us"] / t["median_us"] if t and roof else None


def _cells(row: dict) -> list[str]:
    res, checks = row["results"], checks_of(row)
    t, roof, frac = ok_result(res, "tuned"), row.get("roofline"), frac_roofline(row)
    roof_s = f"{roof['us']:.1f} ({roof.get('by')})" if roof else "–"
    gb = f"{gbps(row['nbytes'], t['median_us']):.0f}" if t else "–"
    datasheet = ratio(t.get("frac_datasheet")) if t and number(t.get("frac_datasheet")) else "–"
    return ([row["name"], mib(row["nbytes"]), roof_s, _tuned_cell(t, res), gb,
             ratio(frac) + (" ⚑" if frac and frac > 1.0 else ""), datasheet, ratio(checks["untuned"].value)]
            + [_us(res.get(k)) for k in PEER_COLUMNS]
            + [ratio(checks["peer"].value)])


def markdown(rows) -> str:
    """The per-case table of benchmark rows (what `autotrans bench` prints):
    medians in µs, the tuned kernel against the roofline and the datasheet,
    untuned against tuned, the best peer against tuned."""
    head = ("| case | MiB | roofline µs | tuned µs (IQR) | GB/s | of roofline | of datasheet | untuned/tuned "
            "| torch | torch.compile | CuPy | geam | XLA* µs | best peer/tuned |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    return head + "".join("| " + " | ".join(_cells(r)) + " |\n" for r in rows)


def _statuses(rows) -> list[str]:
    """Contenders that did not run, grouped by (contender, status, reason)."""
    groups: dict = {}
    for r in rows:
        for k, res in r["results"].items():
            if res.get("status") != "ok":
                groups.setdefault((k, res["status"], res.get("note", "")), []).append(r["name"])
    lines = []
    for (k, status, note), names in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        lines.append(f"| {LABELS.get(k, k)} | {status} | {len(names)} | {shown} | {note[:200]} |")
    if not lines:
        return ["Every contender ran and passed its checks on every case."]
    return ["| contender | status | cases | which | why |", "|---|---|---:|---|---|"] + lines


def _meta_line(m: dict) -> str:
    peers = m.get("peers") or {}
    soft = ", ".join(f"{k} {v}" for k, v in peers.items() if k != "missing" and not k.endswith("_stream"))
    warn = "".join(f" **Warning: {k[:-7]}'s current stream is {v}.**" for k, v in peers.items()
                   if k.endswith("_stream"))
    missing = (peers.get("missing") or {}) if isinstance(peers.get("missing"), dict) else {}
    gone = "".join(f" Missing: {k} ({v})." for k, v in missing.items())
    return (f"{m.get('fingerprint', m.get('gpu', '?'))}, {m.get('sms', '?')} SMs, "
            f"L2 {(m.get('l2_bytes') or 0) / MIB:.0f} MiB; autotrans {m.get('autotrans', '?')} "
            f"(space {m.get('space', '?')}); {soft or 'no peers'}; {m.get('date', '?')}; "
            f"{m.get('reps', '?')} repetitions per case, L2 flush {(m.get('flush_bytes') or 0) / MIB:.0f} MiB; "
            + (f"datasheet {m['datasheet_gbps'] / 1000:g} TB/s." if number(m.get("datasheet_gbps"))
               else "no datasheet bandwidth known.") + gone + warn)


# Where the measurements of what limits each class of miss are (benchmarks/NOTES.md);
# the report lists them after the misses.
LIMITS = (
    "Odd and prime shapes of 1-, 2- and 4-byte elements (the roofline targets): rows at odd byte offsets "
    "make each tile row touch a sector more than its bytes need. The emulator's sector count bounds each "
    "tuned kernel (results/sectors-h200.md; NOTES 33, 35); ncu on the 3-D int8 order: L2-bound, L2 at 88% "
    "of its peak against DRAM at 42% (NOTES 29).",
    "Below 1 MiB, against torch.compile: by ncu's kernel durations the tuned kernels are as fast as "
    "Triton's (results/ncu-small-h200.md; NOTES 36). The event times there resolve no better than the "
    "gaps: the same kernel's median moves by up to 0.55 µs between runs, and by up to 0.8 µs with the "
    "address of its output buffer (memcpy's alike), while the shared-memory carveout and the spin "
    "length change nothing between contenders (results/launch-floor-h200.md; NOTES 37).",
    "Untuned against tuned: below about 2 MiB the tuned column wins with kernels compiled for the one "
    "shape, which an untuned call does not compile; elsewhere a faster config exists among the nearby "
    "winners and no rule tried finds it (NOTES 35, 36).",
    "A miss marked (the IQRs overlap) is within this run's spread.",
)


def report(doc: dict) -> str:
    """The markdown report of a result document: method, targets (each miss
    stated), the zoo and held-out tables, peers' status, configs, tune() time."""
    m, rows = doc.get("meta", {}), doc.get("rows", [])
    out = [f"# autotrans benchmark: {m.get('gpu', '?')}", "", _meta_line(m), "", "## Method", ""]
    out += [f"- {line}" for line in doc.get("method", METHOD)]
    out += _targets(doc) + _tables(doc) + _configs(rows) + _tune_times(doc) + _compile_times(rows)
    return "\n".join(out) + "\n"


def _targets(doc: dict) -> list[str]:
    """The targets' tallies, each miss, and the figures above the roofline."""
    rows = doc.get("rows", [])
    out = ["", "## Targets", "", "| target | evaluated | met | missed | n/a |", "|---|---:|---:|---|---:|"]
    for label, n, met, missed, na in summary(doc):
        out.append(f"| {label} | {n} | {met} | {len(missed)}{': ' + ', '.join(missed) if missed else ''} | {na} |")
    missed = [c for r in rows for c in evaluate(r) if c.met is False] + \
             [c for c in tune_checks(doc) if c.met is False]
    out += ["", "### Missed targets", ""]
    out += [f"- {c.describe()}" for c in missed] or ["Every target is met in this run."]
    if missed:
        out += ["", "### What limits the misses", ""] + [f"- {line}" for line in LIMITS]
    flagged = [f for r in rows for f in flags(r)]
    out += ["", "### Above 1.0 of the roofline (to be checked)", ""]
    out += [f"- ⚑ {f}" for f in flagged] or ["No figure is above 1.0 of the roofline."]
    if doc.get("not_run"):
        out += ["", f"**Not run** (time budget): {', '.join(doc['not_run'])}."]
    return out


def _tables(doc: dict) -> list[str]:
    """The zoo and held-out tables, and the contenders that did not run."""
    rows = doc.get("rows", [])
    zoo_rows, held = [r for r in rows if not r["held_out"]], [r for r in rows if r["held_out"]]
    return (["", f"## Zoo ({len(zoo_rows)} cases)", "", markdown(zoo_rows).rstrip(),
             "", f"## Held-out shapes ({len(held)}, not in the shipped grid)", "", markdown(held).rstrip(),
             "", "## Contenders that did not run", ""] + _statuses(rows))


def _configs(rows) -> list[str]:
    out = ["", "## Configs", "", "| case | tuned config | tune s | untuned config | untuned from |",
           "|---|---|---:|---|---|"]
    for r in rows:
        t, u = r["results"].get("tuned", {}), r["results"].get("untuned", {})
        setup = f"{t['setup_s']:.1f}" if number(t.get("setup_s")) else "cached"
        why = f": {u['note']}" if u.get("note") and u.get("source") == "nearest" else ""
        out.append(f"| {r['name']} | `{t.get('config') or '–'}` | {setup} | `{u.get('config') or '–'}` | "
                   f"{u.get('source') or '–'}{why} |")
    return out


def _tune_times(doc: dict) -> list[str]:
    out = ["", "## tune() time (fresh process each; cold: empty cache and kernel store)", ""]
    tt = doc.get("tune_times") or []
    if not tt:
        return out + ["Not measured in this run."]
    out += ["| case | cold s | warm s | process cold s | process warm s | error |", "|---|---:|---:|---:|---:|---|"]
    return out + [f"| {t.get('name')} | {ratio(t.get('cold_s'))} | {ratio(t.get('warm_s'))} | "
                  f"{t.get('cold_process_s', '–')} | {t.get('warm_process_s', '–')} | {t.get('error') or ''} |"
                  for t in tt]


def _compile_times(rows) -> list[str]:
    compile_s = [r["results"]["torch_compile"]["setup_s"] for r in rows
                 if number((r["results"].get("torch_compile") or {}).get("setup_s"))]
    if not compile_s:
        return []
    return ["", f"torch.compile took {sum(compile_s):.0f} s over {len(compile_s)} shapes "
            f"(median {float(np.median(compile_s)):.1f} s, max {max(compile_s):.1f} s)."]
