"""The docs' relative links point at files that exist (README.md, the NOTES,
the result reports), so a moved or renamed result file breaks CI, not a reader."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", REPO / "benchmarks" / "NOTES.md", *sorted((REPO / "benchmarks" / "results").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def broken_links(md: Path) -> list[str]:
    """The relative link targets of a markdown file that name no file or folder."""
    out = []
    for target in LINK.findall(md.read_text(encoding="utf-8")):
        path = target.split("#", 1)[0]
        if not path or re.match(r"^[a-z][a-z0-9+.-]*:", path):       # an anchor, or a URL (https:, mailto:)
            continue
        if not (md.parent / path).exists():
            out.append(target)
    return out


@pytest.mark.parametrize("md", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(md):
    assert broken_links(md) == []


def test_a_broken_link_is_reported(tmp_path):
    (tmp_path / "there.md").write_text("x")
    md = tmp_path / "doc.md"
    md.write_text("[a](there.md) [b](gone.json#top) [c](https://example.org/x) [d](#anchor) [e](sub/)")
    assert broken_links(md) == ["gone.json#top", "sub/"]
    assert len(DOCS) > 10 and DOCS[0].name == "README.md"


def test_the_readme_results_table_is_the_result_file_it_names():
    """README's ## Results: its table and targets line are readme_table of the
    result file its "The table and [...](...)" sentence links, verbatim."""
    from autotrans.tools.bench import load_results, readme_table
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Results"):]
    source = re.search(r"The table and \[[^]]+\]\(([^)]+)\)", section).group(1)
    expected = readme_table(load_results(REPO / source.replace(".md", ".json"))).strip()
    assert expected.startswith("Measured with") and expected in section


def test_the_readme_permute_table_is_the_two_runs_it_names():
    """README's ### permute(): its table is permute_bench.py --readme of the
    untuned and tuned result files it links first, verbatim."""
    import importlib.util
    import json
    spec = importlib.util.spec_from_file_location("permute_bench_docs", REPO / "benchmarks" / "permute_bench.py")
    pb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pb)
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### permute()"):]
    untuned, tuned = LINK.findall(section)[:2]
    assert "tuned" not in Path(untuned).name and "tuned" in Path(tuned).name
    docs = [json.loads((REPO / f.replace(".md", ".json")).read_text(encoding="utf-8")) for f in (untuned, tuned)]
    table = pb.readme_table(*docs)
    assert table.count("\n") > 20 and table in section
