"""The EPS writer: an EPSF-3.0 file with an outward bounding box and even-odd fills."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from printjob_adapters.engine.canvas import fit
from printjob_adapters.engine.writers.eps import write_eps
from tests.unit.writers.test_writers import ring_and_circle, two_squares


def header(eps: bytes) -> dict[str, str]:
    comments = {}
    for line in eps.decode("ascii").splitlines():
        if line == "%%EndComments":
            break
        if line.startswith("%%") and ":" in line:
            key, _, value = line[2:].partition(":")
            comments[key] = value.strip()
    return comments


def test_header_is_epsf_3() -> None:
    eps = write_eps(two_squares(), fit(100, 50, 100, 50, 300))
    assert eps.startswith(b"%!PS-Adobe-3.0 EPSF-3.0\n")
    assert eps.endswith(b"%%EOF\n")


def test_bounding_box_is_the_page_rounded_outward() -> None:
    comments = header(write_eps(two_squares(), fit(100, 50, 1000, 333, 600)))
    assert comments["BoundingBox"] == "0 0 120 40"  # 333 px at 600 dpi = 39.96 pt
    assert comments["HiResBoundingBox"] == "0 0 120 39.96"


def test_whole_points_are_not_rounded_up() -> None:
    comments = header(write_eps(two_squares(), fit(100, 50, 4500, 5400, 300)))
    assert comments["BoundingBox"] == "0 0 1080 1296"


def test_fills_are_even_odd_and_in_layer_order() -> None:
    lines = write_eps(ring_and_circle(), fit(100, 50, 100, 50, 300)).decode().splitlines()
    assert "/f {eofill} bind def" in "\n".join(lines)
    colours = [line for line in lines if line.endswith(" rg") and not line.startswith("/")]
    assert colours == ["1 1 1 rg", "0 0.6275 0 rg", "0 0 1 rg"]
    assert lines.count("f") == 3
    assert all(len(line) <= 255 for line in lines)  # DSC line length


def test_file_is_plain_ascii_without_dates() -> None:
    eps = write_eps(ring_and_circle(), fit(100, 50, 100, 50, 300))
    eps.decode("ascii")
    assert b"CreationDate" not in eps


def test_ghostscript_reads_the_bounding_box(tmp_path: Path) -> None:
    path = tmp_path / "out.eps"
    path.write_bytes(write_eps(two_squares(), fit(100, 50, 3000, 1500, 300)))
    result = subprocess.run(
        ["gs", "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=bbox", str(path)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    # The drawn squares: design x 10..90, y 10..40 at 30 px per unit, 0.24 pt per px, so
    # x 72..648 pt and, from the bottom of the 360 pt page, y 72..288 pt.
    hires = next(line for line in result.stderr.splitlines() if "HiRes" in line)
    box = [float(v) for v in hires.split(":")[1].split()]
    assert box == pytest.approx([72, 72, 648, 288], abs=0.1)
