"""Wide planes of colour: a gradient in two directions too wide for a cover of discs.

A colour that changes along x and y over tens of CIEDE2000 each way (blue to yellow
across and dark to light down; four saturated corners blended) would need over a
thousand band colours of `shading.REACH` each; the 64 farthest-point picks it used to keep
left a mosaic stepped by 11 to 15. Such a plane is banded as a lattice of cells along its
two axes (`shading._plane_cells`), each cut where the colour has moved by
`shading.PLANE_STEP`, which the speck filter leaves: neighbouring cells stay within the
bound the steep gradients hold, with a few sides per cell. A flat shape on the plane
keeps its exact colour.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from PIL import Image, ImageDraw

from printjob_adapters.engine.colour import ciede2000, srgb_to_lab

from .colour_support import path_segments, png_bytes, run, svg_of
from .test_steep_gradients import _steps_against_own_change


def _plane(size: int) -> Image.Image:
    """Linear in both axes: blue to yellow across, 35 % to 100 % light down."""
    y, x = np.mgrid[:size, :size].astype(np.float64) / (size - 1)
    left, right = np.array([30.0, 80.0, 200.0]), np.array([240.0, 200.0, 60.0])
    rgb = (left + (right - left) * x[..., None]) * (0.35 + 0.65 * y[..., None])
    return Image.fromarray(np.round(rgb).astype(np.uint8), "RGB")


def _four_corners(size: int) -> Image.Image:
    """Red, yellow, blue and white corners, blended bilinearly."""
    y, x = np.mgrid[:size, :size].astype(np.float64) / (size - 1)
    red, yellow = np.array([220.0, 40.0, 40.0]), np.array([250.0, 220.0, 60.0])
    blue, white = np.array([40.0, 70.0, 200.0]), np.array([250.0, 250.0, 250.0])
    top = red + (yellow - red) * x[..., None]
    bottom = blue + (white - blue) * x[..., None]
    rgb = top + (bottom - top) * y[..., None]
    return Image.fromarray(np.round(rgb).astype(np.uint8), "RGB")


PLANES = {
    "blue to yellow, dark to light, 192 px": lambda: _plane(192),
    "four corners, 144 px": lambda: _four_corners(144),
}


@pytest.mark.parametrize("name", sorted(PLANES))
def test_a_wide_plane_gets_bands_within_the_bound(name: str) -> None:
    image = PLANES[name]()
    seg = run(image)
    over = _steps_against_own_change(image, seg)
    assert over.max() <= 0.0, over.max()
    # A cell is a patch of the plane with a few sides, not a staircase of pieces.
    segments = path_segments(svg_of(png_bytes(image)))
    assert segments <= 10 * len(seg.palette), (segments, len(seg.palette))


def test_a_flat_shape_on_a_wide_plane_keeps_its_colour() -> None:
    image = _plane(192)
    ImageDraw.Draw(image).rectangle((70, 70, 120, 120), fill=(200, 30, 120))
    seg = run(image)
    inside = seg.labels[75:116, 75:116]
    colour = srgb_to_lab(seg.palette[inside].reshape(-1, 3))
    drawn = srgb_to_lab(np.array([[200.0, 30.0, 120.0]]))
    assert float(ciede2000(colour, np.broadcast_to(drawn, colour.shape)).max()) <= 1.0
    # The plane around it still steps within the bound.
    mask = np.zeros(seg.labels.shape, dtype=bool)
    mask[68:123, 68:123] = True
    away = seg.labels.copy()
    away[mask] = -1
    steps = _steps_against_own_change(_plane(192), attrs.evolve(seg, labels=away))
    assert steps.max() <= 0.0, steps.max()
