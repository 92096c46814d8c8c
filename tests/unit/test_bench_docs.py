"""The engine benchmark rewrites only its own parts of docs/engine.md."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import engine_bench as bench


def test_the_intro_is_refreshed_and_a_colleagues_section_in_it_kept() -> None:
    head = (
        "# Engine benchmark\n\nold words\n\n"
        "## Pixel art (2026-11-24)\n\nkept as written\n\n"
        "## Method\n\nold method\n"
    )
    merged = bench.merged_intro(head)
    headings = [heading for heading, _ in bench._sections(merged)]
    assert headings[:3] == ["# Engine benchmark", "## Pixel art (2026-11-24)", "## Method"]
    assert "## Metric definitions" in headings
    assert "kept as written" in merged
    assert "old words" not in merged and "old method" not in merged
    assert "**Detail recall**" in merged


def test_a_hard_section_is_replaced_in_place_and_another_label_added_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "engine.md"
    docs.write_text("# Engine benchmark\n\n## Colour count\n\nmine\n")
    monkeypatch.setattr(bench, "DOCS", docs)
    bench.write_hard_docs("baseline", "## Hard images (baseline)\n\nfirst")
    bench.write_hard_docs("baseline", "## Hard images (baseline)\n\nsecond")
    bench.write_hard_docs("after-merge", "## Hard images (after-merge)\n\nthird")
    text = docs.read_text()
    assert "first" not in text
    assert text.index("## Colour count") < text.index("second") < text.index("third")
    assert text.count("## Hard images (baseline)") == 1
