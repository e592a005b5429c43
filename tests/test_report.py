"""autotrans.tools.report: landscape data and real PNG / HTML files from realistic records."""
from __future__ import annotations

import base64
import re
import struct
import sys

import pytest

from autotrans.tools import report
from autotrans.kernels.config import KernelConfig
from autotrans.tuning.space import default_space

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def record(record_factory):
    return record_factory((8192, 8192), 4, seed=11)


def test_record_uses_the_default_space(record):
    space = {c.key for c in default_space(4)}
    keys = [c["key"] for c in record["candidates"]] + [f["key"] for f in record["failures"]]
    assert len(keys) > 20 and set(keys) <= space


def test_family_names():
    fams = {report.family(c) for c in default_space(4)}
    assert {"vec / xor swizzle", "tile / plain", "tile / padded", "tile / xor swizzle", "naive",
            "remapped"} <= fams
    for c in default_space(2):
        name = report.family(c)
        assert name.split(" / ")[0] == c.variant


def test_landscape_takes_the_best_of_each_cell(record):
    land = report.landscape(record)
    timed = report.candidate_gbps(record)
    assert len(timed) == len(record["candidates"])
    seen = 0
    for name, fam in land.items():
        for (tile, threads), g in fam["gbps"].items():
            members = [g2 for k, g2 in timed.items()
                       if report.family(KernelConfig.from_key(k)) == name
                       and (KernelConfig.from_key(k).tile_rows, KernelConfig.from_key(k).tile_cols) == tile
                       and KernelConfig.from_key(k).threads == threads]
            assert g == max(members)
            assert timed[fam["keys"][(tile, threads)]] == g
            assert tile in fam["tiles"] and threads in fam["threads"]
            seen += len(members)
    assert seen == len(timed)
    best = max(timed, key=timed.get)
    assert best == record["key"]
    # failed configs appear as failed cells unless another config timed the same cell
    failed_cells = sum(len(f["failed"]) for f in land.values())
    assert failed_cells <= len(record["failures"])


def test_typed_and_stored_records_give_the_same_landscape(record):
    from autotrans.results.record import TuneRecord
    typed = TuneRecord.from_json(record)
    assert report.landscape(typed) == report.landscape(record)
    assert report.candidate_gbps(typed) == {r["key"]: r["gbps"] for r in record["candidates"]}
    assert report.default_title(typed) == report.default_title(record)


@pytest.mark.parametrize("mutate, problem", [
    (lambda r: r["candidates"][0].pop("median_us"), "candidate 0: missing median_us"),
    (lambda r: r["candidates"].append({"key": "not-a-key", "gbps": 1.0}), "candidate"),
    (lambda r: r["candidates"][1].update(key="x"), "not a KernelConfig key"),
    (lambda r: r["candidates"][2].update(gbps="fast"), "gbps must be a positive finite number"),
    (lambda r: r["failures"].append("junk"), "failure 2 must be a JSON object"),
])
def test_invalid_records_are_refused_naming_the_problem(record, tmp_path, mutate, problem):
    mutate(record)
    for f in (report.landscape, report.candidate_gbps, report.default_title):
        with pytest.raises(ValueError, match=problem):
            f(record)
    with pytest.raises(ValueError, match=problem):
        report.render(record, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_render_png(record, tmp_path):
    bars = {"autotrans": record["gbps"], "torch": record["gbps"] * 0.7, "torch_compile": record["gbps"] * 0.9,
            "cupy": record["gbps"] * 0.65, "memcpy": record["memcpy_gbps"], "copy16": record["memcpy_gbps"] * 1.01}
    out = report.render(record, tmp_path / "land.png", bars=bars)
    assert out == tmp_path / "land.png"
    data = out.read_bytes()
    w, h = png_size(data)
    assert w > 800 and h > 400 and len(data) > 20000
    plain = report.render(record, tmp_path / "nobars.png", title="no bars")
    assert plain.read_bytes()[:8] == PNG_MAGIC and plain.read_bytes() != data


def test_the_bars_roofline_is_the_faster_copy():
    assert report.roofline_gbps({"autotrans": 4000.0, "memcpy": 4100.0, "copy16": 4250.0}) == 4250.0
    assert report.roofline_gbps({"autotrans": 4000.0, "memcpy": 4100.0}) == 4100.0
    assert report.roofline_gbps({"autotrans": 4000.0, "copy16": None}) is None


def test_render_html_embeds_the_png(record, tmp_path):
    out = report.render(record, tmp_path / "land.html", bars={"autotrans": 3000.0, "memcpy": 4000.0},
                        title="8192x8192 <float32>")
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "8192x8192 &lt;float32&gt;" in page          # title escaped
    m = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert m, page[:500]
    png = base64.b64decode(m.group(1))
    w, h = png_size(png)
    assert w > 800 and h > 400
    assert record["key"] in page                          # the fastest candidates' table


def test_render_default_title_and_other_formats(record, tmp_path):
    title = report.default_title(record)
    assert title.startswith("8192x8192 float32 on NVIDIA H200: best " + record["key"])
    assert f"{record['frac_memcpy']:.0%} of memcpy" in title
    svg = report.render(record, tmp_path / "land.svg").read_text()
    assert "<svg" in svg and "threads per block" in svg
    with pytest.raises(ValueError, match="cannot write"):
        report.render(record, tmp_path / "land.xyz")
    assert not (tmp_path / "land.xyz").exists()


def test_render_refuses_databases_and_folders_and_replaces_files_whole(record, tmp_path):
    """A database (even behind a link) or a folder is refused before drawing;
    an existing picture is replaced, not appended to or truncated first."""
    db = tmp_path / "results.sqlite"
    db.write_bytes(b"SQLite format 3\x00" + bytes(100))
    (tmp_path / "link.png").symlink_to(db)
    for target, why in ((tmp_path / "link.png", "SQLite database"), (tmp_path, "directory")):
        with pytest.raises(ValueError, match=f"refusing to write the report to .*{why}"):
            report.render(record, target)
    assert db.read_bytes()[:16] == b"SQLite format 3\x00"
    old = tmp_path / "old.png"
    old.write_bytes(b"x" * 10)
    assert report.render(record, old).read_bytes()[:8] == PNG_MAGIC
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []   # no temporaries left


def test_render_small_records_and_errors(record_factory, tmp_path):
    rec = record_factory((4, 96, 160), 2, dtype="float16", seed=3)
    rec["candidates"] = rec["candidates"][:1]
    out = report.render(rec, tmp_path / "one.png")
    assert png_size(out.read_bytes())[0] > 300
    with pytest.raises(ValueError, match="no timed candidates"):
        report.render(dict(rec, candidates=[], failures=[]), tmp_path / "none.png")


def test_importing_report_does_not_import_matplotlib():
    import subprocess
    code = ("import sys, autotrans, autotrans.tools.report, autotrans.cli; "
            "sys.exit(1 if 'matplotlib' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO).returncode == 0


def test_render_leaves_pyplot_backend_alone(record, tmp_path):
    """render() draws on its own Agg canvas: pyplot's backend choice is untouched."""
    import subprocess
    code = f"""
import matplotlib
matplotlib.use("svg")
import matplotlib.pyplot as plt
import json
from autotrans.tools import report
report.render(json.load(open({str(tmp_path / 'rec.json')!r})), {str(tmp_path / 'x.png')!r})
assert matplotlib.get_backend() == "svg", matplotlib.get_backend()
"""
    import json
    (tmp_path / "rec.json").write_text(json.dumps(record))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "x.png").read_bytes()[:8] == PNG_MAGIC
