"""The own hard set is the same from every clone and its manifest describes its files."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import hard_images

KINDS = {
    "ui-text",
    "hairline",
    "pixel-jpeg",
    "stamp",
    "scan",
    "gradient-bg",
    "photo",
    "logo-jpeg",
    "emoji-up",
}


def test_the_own_set_is_drawn_identically_twice(tmp_path: Path) -> None:
    first = hard_images.build(tmp_path / "a")
    second = hard_images.build(tmp_path / "b")
    assert first.read_text() == second.read_text()
    for path in sorted((tmp_path / "a").rglob("*.*")):
        twin = tmp_path / "b" / path.relative_to(tmp_path / "a")
        assert path.read_bytes() == twin.read_bytes(), path.name


def test_the_manifest_names_every_file_its_size_truth_and_kind(tmp_path: Path) -> None:
    manifest_path = hard_images.build(tmp_path)
    items = json.loads(manifest_path.read_text())["items"]
    assert {item["kind"] for item in items} == KINDS
    assert len({item["id"] for item in items}) == len(items)
    for item in items:
        with Image.open(tmp_path / item["file"]) as image:
            assert image.size == (item["width"], item["height"])
            assert (image.format == "JPEG") == (item["variant"] == "jpeg")
        if item["gt4x"]:
            with Image.open(tmp_path / item["gt4x"]) as truth:
                assert truth.size == (4 * item["width"], 4 * item["height"])
        if item["kind"] in ("ui-text", "scan"):
            assert item["text"] is True
        assert item["license"] and item["source"]["package"]
