"""The PNG writer: canvas size, stated dpi, straight alpha, transparency and no seams."""

from __future__ import annotations

import io
import struct

import numpy as np
import skia
from PIL import Image

from printjob_adapters.engine.canvas import fit, place
from printjob_adapters.engine.options import OutputFormat, Size
from printjob_adapters.engine.options import TraceOptions as JobOptions
from printjob_adapters.engine.vector import VectorArt
from printjob_adapters.engine.writers.png import encode_png, render, write_png
from tests.unit.writers.test_writers import (
    BLUE,
    RED,
    YELLOW,
    circle,
    layer,
    rect,
    stacked,
    two_squares,
)


def open_png(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def phys(data: bytes) -> tuple[int, int, int]:
    """The pHYs chunk: pixels per unit across, down, and the unit (1 = metre)."""
    at = data.index(b"pHYs") + 4
    x, y, unit = struct.unpack(">IIB", data[at : at + 9])
    return x, y, unit


def test_print_canvas_is_4500_by_5400_at_300_dpi() -> None:
    placement = place(100, 50, JobOptions(format=OutputFormat.PNG))
    image = open_png(write_png(two_squares(), placement))

    assert image.format == "PNG"
    assert image.size == (4500, 5400)
    assert image.mode == "RGBA"
    # pHYs holds whole pixels per metre: 300 dpi is 11811 px/m, read back as 299.99 dpi.
    assert phys(write_png(two_squares(), placement)) == (11811, 11811, 1)
    assert tuple(round(v) for v in image.info["dpi"]) == (300, 300)


def test_explicit_size_and_dpi_are_stated() -> None:
    options = JobOptions(format=OutputFormat.PNG, size=Size(640, 480), dpi=150)
    image = open_png(write_png(two_squares(), place(100, 50, options)))

    assert image.size == (640, 480)
    assert tuple(round(v) for v in image.info["dpi"]) == (150, 150)


def test_unpainted_pixels_are_fully_transparent() -> None:
    pixels = render(two_squares(), fit(100, 50, 200, 100, 300))

    assert pixels[0, 0, 3] == 0
    assert pixels[50, 100, 3] == 0  # between the squares
    assert tuple(pixels[50, 50]) == (*RED, 255)
    assert tuple(pixels[50, 150]) == (*BLUE, 255)


def test_margins_of_a_fitted_design_are_transparent() -> None:
    pixels = render(two_squares(), fit(100, 50, 200, 200, 300))
    assert not pixels[:50, :, 3].any()
    assert not pixels[150:, :, 3].any()


def test_edges_are_anti_aliased_in_straight_alpha() -> None:
    # A red square whose left edge falls half-way across pixel column 10.
    art = VectorArt(100, 50, (layer(RED, rect(10.5, 10, 40, 40)),))
    pixels = render(art, fit(100, 50, 100, 50, 300))

    edge = pixels[20, 10]
    assert 100 < edge[3] < 160
    assert tuple(edge[:3]) == RED  # straight alpha: the colour itself, not darkened


def test_curved_edges_are_anti_aliased() -> None:
    art = VectorArt(100, 100, (layer(BLUE, circle(50, 50, 30.3)),))
    alpha = render(art, fit(100, 100, 100, 100, 300))[..., 3]
    partial = (alpha > 0) & (alpha < 255)
    assert partial.sum() > 100
    assert alpha[50, 50] == 255 and alpha[5, 5] == 0


def test_stacked_layers_leave_no_seam() -> None:
    # Yellow starts at design x = 33.37 on top of red; at 4.17 px per unit the edge falls
    # inside a pixel. The red below is whole, so the shared edge stays fully opaque.
    pixels = render(stacked(), fit(100, 50, 417, 208, 300))
    design = pixels[1:-1, 1:-1]

    assert (design[..., 3] == 255).all()
    assert tuple(pixels[100, 50]) == (*RED, 255)
    assert tuple(pixels[100, 300]) == (*YELLOW, 255)
    edge_column = round(33.37 * 4.17)
    assert (pixels[:, edge_column - 1 : edge_column + 2, 3] == 255).all()


def test_same_art_gives_same_bytes() -> None:
    placement = fit(100, 50, 300, 150, 300)
    assert write_png(stacked(), placement) == write_png(stacked(), placement)


def test_render_has_the_canvas_shape() -> None:
    pixels = render(two_squares(), fit(100, 50, 123, 45, 300))
    assert pixels.shape == (45, 123, 4)
    assert pixels.dtype == np.uint8


def test_encoding_round_trips_every_pixel_exactly() -> None:
    rng = np.random.default_rng(3)
    pixels = rng.integers(0, 256, (37, 53, 4), dtype=np.uint8)
    data = encode_png(pixels, 300)

    image = open_png(data)
    assert image.mode == "RGBA" and image.size == (53, 37)
    assert np.array_equal(np.asarray(image), pixels)


def test_an_independent_decoder_reads_it_too() -> None:
    pixels = render(stacked(), fit(100, 50, 300, 150, 300))
    data = encode_png(pixels, 300)  # kept alive: skia decodes from this buffer lazily
    decoded = skia.Image.MakeFromEncoded(data)
    assert (decoded.width(), decoded.height()) == (300, 150)
    straight = decoded.toarray(
        colorType=skia.kRGBA_8888_ColorType, alphaType=skia.kUnpremul_AlphaType
    )
    assert np.array_equal(straight, pixels)
