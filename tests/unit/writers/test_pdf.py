"""The PDF writer: page size from the dpi, even-odd fills, nothing that changes per run."""

from __future__ import annotations

import re
import subprocess
import time
import zlib
from pathlib import Path

from printjob_adapters.engine.canvas import fit
from printjob_adapters.engine.writers.pdf import write_pdf
from tests.unit.writers.test_writers import ring_and_circle, two_squares


def page_content(pdf: bytes) -> str:
    """The page's decompressed content stream."""
    stream = re.search(rb"stream\r?\n(.*?)endstream", pdf, re.S)
    assert stream is not None
    return zlib.decompress(stream.group(1).strip()).decode("latin-1")


def test_page_is_canvas_pixels_at_the_dpi_in_points() -> None:
    pdf = write_pdf(two_squares(), fit(100, 50, 4500, 5400, 300))
    assert b"/MediaBox [ 0 0 1080 1296 ]" in pdf


def test_page_of_an_odd_size_keeps_its_fraction() -> None:
    pdf = write_pdf(two_squares(), fit(100, 50, 1000, 333, 600))
    assert b"/MediaBox [ 0 0 120 39.96 ]" in pdf


def test_fills_are_even_odd_and_in_layer_order() -> None:
    content = page_content(write_pdf(ring_and_circle(), fit(100, 50, 100, 50, 300)))
    fills = re.findall(r"^(.*) rg$|^(f\*)$", content, re.M)
    colours = [c for c, _ in fills if c]
    assert colours == ["1 1 1", "0 .627451 0", "0 0 1"]
    assert content.count("f*") == 3
    assert "\nf\n" not in content  # no nonzero fill anywhere


def test_no_timestamp_so_bytes_do_not_change_over_time() -> None:
    art = ring_and_circle()
    first = write_pdf(art, fit(100, 50, 100, 50, 300))
    time.sleep(1.1)
    assert write_pdf(art, fit(100, 50, 100, 50, 300)) == first


def test_poppler_reads_the_page_size(tmp_path: Path) -> None:
    path = tmp_path / "out.pdf"
    path.write_bytes(write_pdf(two_squares(), fit(100, 50, 3000, 1500, 300)))
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True)
    assert re.search(r"Page size: +720 x 360 pts", info.stdout)
    assert re.search(r"Pages: +1\n", info.stdout)
