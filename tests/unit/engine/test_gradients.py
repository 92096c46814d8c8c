"""Gradients in automatic mode: bands too close to see, and a bounded number of paths.

`colour_count.BAND_STEP` (2.5 CIEDE2000) is the design step between neighbouring bands.
Measured on the final fill colours (re-measured from their pixels, after the speck filter):
95 % of the length of every band edge is under that step and none reaches 4 (steep
radial rims, where the speck filter merges rings of one or two pixels, reach 3.2 to 3.5);
a flat logo on a gradient keeps its exact colours.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from PIL import Image, ImageDraw

from printjob_adapters.engine.colour import delta_e2000_srgb
from printjob_adapters.engine.colour_count import BAND_STEP

from .colour_support import neighbour_steps, path_segments, png_bytes, run, svg_of
from .hard_synthetic import linear_gradient, radial_gradient

GRADIENTS = {
    "linear blue to yellow": lambda: linear_gradient().image,
    "linear white to black at 30 degrees": lambda: (
        linear_gradient(
            angle_degrees=30, start_colour=(250, 250, 250), end_colour=(10, 10, 10)
        ).image
    ),
    "linear pale sky": lambda: (
        linear_gradient(
            size=(320, 200), start_colour=(215, 235, 250), end_colour=(250, 245, 225)
        ).image
    ),
    "radial cream to wine": lambda: radial_gradient().image,
    "radial sky to navy": lambda: (
        radial_gradient(
            size=(300, 200), inner_colour=(200, 230, 255), outer_colour=(20, 40, 120)
        ).image
    ),
}


def _assert_no_visible_steps(steps: np.ndarray, border: np.ndarray) -> None:
    assert steps.max() < 4.0, steps.max()
    # Weighted by the length of the border: 95 % of every band edge is under the design step.
    order = np.argsort(steps)
    share = np.cumsum(border[order]) / border.sum()
    assert steps[order][np.searchsorted(share, 0.95)] < BAND_STEP, (steps.round(2), border)


def _assert_no_visible_bands(image: Image.Image) -> int:
    seg = run(image)
    _assert_no_visible_steps(*neighbour_steps(seg))
    return len(seg.palette)


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_a_gradient_shows_no_band(name: str) -> None:
    image = GRADIENTS[name]()
    colours = _assert_no_visible_bands(image)
    assert colours <= 64
    segments = path_segments(svg_of(png_bytes(image)))
    # Reasonable: a straight band edge is a handful of segments, a ring a few dozen.
    per_colour = 8 if name.startswith("linear") else 64
    assert segments <= per_colour * colours, (segments, colours)


def test_a_flat_logo_on_a_gradient_keeps_its_colours_and_its_outline() -> None:
    background = linear_gradient(
        size=(480, 320), start_colour=(215, 235, 250), end_colour=(250, 245, 225)
    ).image.resize((960, 640))
    draw = ImageDraw.Draw(background)
    draw.ellipse((200, 120, 760, 520), fill=(220, 60, 160), outline=(0, 0, 0), width=6)
    draw.rectangle((380, 260, 580, 380), fill=(120, 40, 170))
    image = background.resize((480, 320), Image.Resampling.LANCZOS)
    seg = run(image)
    for colour in [(220, 60, 160), (120, 40, 170), (0, 0, 0)]:
        de = delta_e2000_srgb(seg.palette, np.array(colour, float))
        assert de.min() < 1.0, (colour, seg.palette.round())
    # The background's own bands, above the logo, show no step.
    top = attrs.evolve(seg, labels=seg.labels[:50])
    _assert_no_visible_steps(*neighbour_steps(top))
