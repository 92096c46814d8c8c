"""Every writer, rendered back by a real renderer: the right colours at the right places.

SVG is rendered with resvg, PDF with poppler's `pdftoppm`, EPS with ghostscript and PNG is
read back with Pillow. The art is built by hand (squares, circles drawn with curves, shapes
with holes, stacked layers) so these tests do not depend on the tracer.
"""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import numpy as np
import pytest
import resvg_py
from PIL import Image

from printjob_adapters.engine.canvas import Placement, fit
from printjob_adapters.engine.vector import Command, Layer, VectorArt
from printjob_adapters.engine.writers import write
from printjob_core.model import OutputFormat

RED, BLUE, GREEN, YELLOW, WHITE = (255, 0, 0), (0, 0, 255), (0, 160, 0), (255, 220, 0), (255,) * 3
KAPPA = 0.5522847498


# -- building art by hand ------------------------------------------------------------------


def rect(x0: float, y0: float, x1: float, y1: float) -> list[Command]:
    """A closed rectangle contour, clockwise on screen."""
    return [
        ("moveTo", ((x0, y0),)),
        ("lineTo", ((x1, y0),)),
        ("lineTo", ((x1, y1),)),
        ("lineTo", ((x0, y1),)),
        ("closePath", ()),
    ]


def circle(cx: float, cy: float, r: float) -> list[Command]:
    """A closed circle contour of four cubic curves."""
    k = KAPPA * r
    return [
        ("moveTo", ((cx + r, cy),)),
        ("curveTo", ((cx + r, cy + k), (cx + k, cy + r), (cx, cy + r))),
        ("curveTo", ((cx - k, cy + r), (cx - r, cy + k), (cx - r, cy))),
        ("curveTo", ((cx - r, cy - k), (cx - k, cy - r), (cx, cy - r))),
        ("curveTo", ((cx + k, cy - r), (cx + r, cy - k), (cx + r, cy))),
        ("closePath", ()),
    ]


def layer(color: tuple[int, int, int], *contours: list[Command]) -> Layer:
    return Layer(color, tuple(command for contour in contours for command in contour))


def two_squares() -> VectorArt:
    """A red square on the left, a blue one on the right, nothing else (100 x 50 units)."""
    return VectorArt(100, 50, (layer(RED, rect(10, 10, 40, 40)), layer(BLUE, rect(60, 10, 90, 40))))


def ring_and_circle() -> VectorArt:
    """A white ground, a green square ring (hole by even-odd) and a blue circle."""
    return VectorArt(
        100,
        50,
        (
            layer(WHITE, rect(0, 0, 100, 50)),
            # Both contours run the same way: only even-odd leaves the hole empty.
            layer(GREEN, rect(5, 5, 45, 45), rect(15, 15, 35, 35)),
            layer(BLUE, circle(75, 25, 20)),
        ),
    )


def stacked() -> VectorArt:
    """Red everywhere, yellow from a fractional x to the right edge, on top of it."""
    return VectorArt(
        100,
        50,
        (layer(RED, rect(0, 0, 100, 50)), layer(YELLOW, rect(33.37, 0, 100, 50))),
        background_removed=True,
    )


# -- rendering back --------------------------------------------------------------------------


def render(data: bytes, fmt: OutputFormat, placement: Placement, tmp_path: Path) -> np.ndarray:
    """The file rendered at its own dpi, so one canvas pixel is one rendered pixel (RGB on
    white)."""
    if fmt is OutputFormat.SVG:
        png = bytes(
            resvg_py.svg_to_bytes(
                svg_string=data.decode(),
                dpi=96,
                width=placement.canvas_width,
                height=placement.canvas_height,
            )
        )
        image = Image.open(io.BytesIO(png))
    elif fmt is OutputFormat.PNG:
        image = Image.open(io.BytesIO(data))
    else:
        source = tmp_path / f"file.{fmt.value}"
        source.write_bytes(data)
        out = tmp_path / "render.png"
        if fmt is OutputFormat.PDF:
            command = ["pdftoppm", "-png", "-r", str(placement.dpi), "-singlefile", str(source)]
            command.append(str(out.with_suffix("")))
        else:
            command = [
                "gs", "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-dEPSCrop",
                "-sDEVICE=png16m", f"-r{placement.dpi}", f"-sOutputFile={out}", str(source),
            ]  # fmt: skip
        subprocess.run(command, check=True, capture_output=True, timeout=60)
        image = Image.open(out)
    image.load()
    white = Image.new("RGBA", image.size, WHITE)
    return np.asarray(Image.alpha_composite(white, image.convert("RGBA")).convert("RGB"))


def near(pixel: np.ndarray, color: tuple[int, int, int], tolerance: int = 8) -> bool:
    return bool(np.all(np.abs(pixel.astype(int) - color) <= tolerance))


FORMATS = list(OutputFormat)


# -- the tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_squares_land_left_and_right(fmt: OutputFormat, tmp_path: Path) -> None:
    placement = fit(100, 50, 200, 100, dpi=72)
    pixels = render(write(two_squares(), placement, fmt), fmt, placement, tmp_path)

    assert pixels.shape[:2] == (100, 200)
    assert near(pixels[50, 50], RED)
    assert near(pixels[50, 150], BLUE)
    for y, x in [(50, 100), (5, 5), (95, 195), (10, 50)]:
        assert near(pixels[y, x], WHITE), (y, x, pixels[y, x])


@pytest.mark.parametrize("fmt", FORMATS)
def test_curves_and_even_odd_holes(fmt: OutputFormat, tmp_path: Path) -> None:
    placement = fit(100, 50, 400, 200, dpi=72)
    pixels = render(write(ring_and_circle(), placement, fmt), fmt, placement, tmp_path)

    assert near(pixels[40, 40], GREEN)  # the ring's body
    assert near(pixels[100, 100], WHITE)  # its hole, left empty by the even-odd rule
    assert near(pixels[100, 300], BLUE)  # the circle's centre
    assert near(pixels[100, 225], BLUE)  # just inside its left edge (x = 300 - 75)
    # Inside the circle's bounding box, outside the circle: the curve is a curve.
    assert near(pixels[100 - 70, 300 + 70], WHITE)
    assert near(pixels[190, 390], WHITE)


@pytest.mark.parametrize("fmt", FORMATS)
def test_design_is_fitted_and_centred(fmt: OutputFormat, tmp_path: Path) -> None:
    # A 100 x 50 design on a 200 x 200 canvas: scale 2, a 50 px margin above and below.
    placement = fit(100, 50, 200, 200, dpi=72)
    pixels = render(write(two_squares(), placement, fmt), fmt, placement, tmp_path)

    assert pixels.shape[:2] == (200, 200)
    assert near(pixels[100, 50], RED)
    assert near(pixels[100, 150], BLUE)
    assert near(pixels[60, 50], WHITE)  # design y = 5: above the red square
    assert near(pixels[80, 50], RED)  # design y = 15


@pytest.mark.parametrize("fmt", FORMATS)
def test_stacked_layers_paint_in_order(fmt: OutputFormat, tmp_path: Path) -> None:
    placement = fit(100, 50, 300, 150, dpi=72)
    pixels = render(write(stacked(), placement, fmt), fmt, placement, tmp_path)

    assert near(pixels[75, 50], RED)
    assert near(pixels[75, 200], YELLOW)


@pytest.mark.parametrize("fmt", FORMATS)
def test_same_art_gives_same_bytes(fmt: OutputFormat) -> None:
    placement = fit(100, 50, 300, 150, dpi=300)
    first = write(ring_and_circle(), placement, fmt)
    second = write(ring_and_circle(), placement, fmt)
    assert first == second


@pytest.mark.parametrize("fmt", FORMATS)
def test_format_may_be_given_as_text(fmt: OutputFormat) -> None:
    placement = fit(100, 50, 100, 50, dpi=300)
    assert write(two_squares(), placement, fmt.value) == write(two_squares(), placement, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_art_without_layers_is_an_empty_page(fmt: OutputFormat) -> None:
    placement = fit(100, 50, 100, 50, dpi=300)
    assert write(VectorArt(100, 50, ()), placement, fmt)
