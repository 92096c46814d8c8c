"""Gradients in two directions, and the tip of a steep radial gradient under JPEG.

A gradient whose colour changes along x and y independently (a blend across and a
shading down, four corners blended) spans a plane of colours, not a line: its bands tile
the plane, and how many it needs grows with the plane's area. Clean shaded art may take
up to `colour_count.AUTO_MAX` colours where the gradient needs them
(`shading.CLEAN_MAX_COLOURS`), under JPEG noise when its colour changes two ways
(`shading._two_dimensional`); neighbouring bands then stay within the bound the steep
gradients hold (`test_steep_gradients._steps_against_own_change`), where 64 colours
stepped by up to 2.4 more. A gradient along one line never needs more than 64.

Under JPEG noise a steep radial gradient's tip (white to red at 3.4 CIEDE2000 a pixel) is
a bend no linear pixel reaches: it places a band of its own (`shading.BENT_REACH`) instead
of keeping its white a whole band step from the nearest band.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from printjob_adapters.engine import colour_count, shading

from .colour_support import path_segments, png_bytes, run, svg_of
from .hard_synthetic import jpeg, linear_gradient, radial_gradient
from .test_steep_gradients import _steps_against_own_change


def _two_axis(size: int, left: tuple[int, int, int], right: tuple[int, int, int]) -> Image.Image:
    """`left` to `right` across, 80 % to 100 % light down (each channel scaled)."""
    y, x = np.mgrid[:size, :size].astype(np.float64) / (size - 1)
    start, end = np.array(left, np.float64), np.array(right, np.float64)
    rgb = (start + (end - start) * x[..., None]) * (0.8 + 0.2 * y[..., None])
    return Image.fromarray(np.round(rgb).astype(np.uint8), "RGB")


TWO_AXIS = {
    "blue-grey to sand, shaded down, 128 px": lambda: _two_axis(
        128, (110, 125, 160), (215, 195, 140)
    ),
    "teal to peach, shaded down, 160 px": lambda: _two_axis(160, (90, 150, 150), (230, 180, 150)),
}


@pytest.mark.parametrize("quality", [None, 90])
@pytest.mark.parametrize("name", sorted(TWO_AXIS))
def test_a_two_axis_gradient_gets_bands_within_the_bound(name: str, quality: int | None) -> None:
    drawn = TWO_AXIS[name]()
    image = drawn if quality is None else jpeg(drawn, quality)
    seg = run(image)
    assert colour_count.SHADED_MAX < len(seg.palette) <= colour_count.AUTO_MAX
    over = _steps_against_own_change(drawn, seg)
    assert over.max() <= 0.0, over.max()
    # A band is a patch of the plane: a few sides each, not a staircase of pieces.
    segments = path_segments(svg_of(png_bytes(image)))
    assert segments <= 20 * len(seg.palette), (segments, len(seg.palette))


@pytest.mark.parametrize(
    "image",
    [
        linear_gradient(size=(240, 160)).image,
        radial_gradient(size=(200, 200)).image,
        linear_gradient(size=(320, 60), start_colour=(0, 0, 0), end_colour=(255, 255, 255)).image,
    ],
    ids=["linear blue to yellow", "radial cream to wine", "linear black to white"],
)
def test_a_gradient_along_one_line_keeps_at_most_64_colours(image: Image.Image) -> None:
    assert len(run(image).palette) <= shading.MAX_COLOURS
    # Under JPEG noise, more colours would cover the noise, not the gradient.
    assert len(run(jpeg(image, 75)).palette) <= shading.MAX_COLOURS


def test_a_jpegd_steep_radial_gradients_tip_gets_a_band_of_its_own() -> None:
    clean = radial_gradient(
        size=(64, 64), radius=30, inner_colour=(255, 255, 255), outer_colour=(200, 0, 0)
    ).image
    seg = run(jpeg(clean, 90))
    over = _steps_against_own_change(clean, seg)
    assert over.max() <= 0.0, over.max()
    segments = path_segments(svg_of(png_bytes(jpeg(clean, 90))))
    assert segments <= 64 * len(seg.palette), (segments, len(seg.palette))
