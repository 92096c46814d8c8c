"""Steep gradients and gradients on small canvases, in automatic mode.

A gradient steep enough to have hardly a flat pixel (1.3 CIEDE2000 a pixel and more) is
still shaded art: it gets bands, not the four hard rings of a flat palette
(`colour_count.ramp_share`). Neighbouring bands stay under `colour_count.BAND_STEP`, or,
where the input itself changes faster, within a band's width of the input's own change:
a band must be about two pixels wide to be one ring, so its step cannot be smaller than
twice the input's change a pixel (`shading.STEEP`), and the colours are re-measured from
their pixels afterwards. Flat art, JPEG'd flat art, upscaled pixel art and a stamp are
never taken for a steep gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from printjob_adapters.engine import colour_count
from printjob_adapters.engine.colour import ciede2000, srgb_to_lab
from printjob_adapters.engine.colour_count import BAND_STEP
from printjob_adapters.engine.segmentation import Segmentation
from printjob_adapters.engine.shading import STEEP as STEEP_REACH

from .colour_support import path_segments, png_bytes, rgba, run, svg_of
from .hard_synthetic import jpeg, linear_gradient, pixel_grid, radial_gradient, stamp

#: Where the input changes faster than `BAND_STEP` over two pixels, bands may step by twice
#: their reach there (`shading.STEEP` times the input's own CIEDE2000 a pixel: a band two
#: pixels wide) and this much more: the re-measuring of both colours from their pixels.
REMEASURED = 1.0

STEEP = {
    # White to navy over 60 px: 1.3 CIEDE2000 a pixel, a flat pixel only at the middle
    # and outside the rim.
    "radial very steep": lambda: (
        radial_gradient(
            size=(240, 240), radius=60, inner_colour=(255, 255, 255), outer_colour=(10, 20, 60)
        ).image
    ),
    "linear steep on a 64-px canvas": lambda: (
        linear_gradient(size=(64, 64), start_colour=(255, 240, 0), end_colour=(120, 0, 160)).image
    ),
    "linear steep at 60 degrees, 128 px": lambda: (
        linear_gradient(
            size=(128, 128),
            angle_degrees=60,
            start_colour=(250, 250, 250),
            end_colour=(200, 20, 40),
        ).image
    ),
    "radial on a 96-px canvas": lambda: (
        radial_gradient(
            size=(96, 96), inner_colour=(255, 250, 220), outer_colour=(30, 90, 60)
        ).image
    ),
}


def _steps_against_own_change(image: Image.Image, seg: Segmentation) -> np.ndarray:
    """For every pixel side between two labels: the CIEDE2000 between their fill colours
    less what the input's own change allows there (the larger of `BAND_STEP` and two
    bands' reach, `REMEASURED` added, at its CIEDE2000 a pixel: the gradient's magnitude,
    largest within two pixels). Positive where a step is too large."""
    lab = srgb_to_lab(np.asarray(image.convert("RGB"), np.float64))
    across = np.zeros(lab.shape[:2])
    down = np.zeros(lab.shape[:2])
    across[:, :-1] = ciede2000(lab[:, :-1], lab[:, 1:])
    down[:-1] = ciede2000(lab[:-1], lab[1:])
    own = np.hypot(across, down)
    for _ in range(2):
        grown = own.copy()
        grown[1:] = np.maximum(grown[1:], own[:-1])
        grown[:-1] = np.maximum(grown[:-1], own[1:])
        grown[:, 1:] = np.maximum(grown[:, 1:], own[:, :-1])
        grown[:, :-1] = np.maximum(grown[:, :-1], own[:, 1:])
        own = grown
    allowed = np.maximum(BAND_STEP, 2.0 * STEEP_REACH * own + REMEASURED)
    palette = srgb_to_lab(seg.palette)
    labels = seg.labels
    over: list[np.ndarray] = []
    for a, b, room in (
        (labels[:, 1:], labels[:, :-1], allowed[:, 1:]),
        (labels[1:], labels[:-1], allowed[1:]),
    ):
        differ = (a != b) & (a >= 0) & (b >= 0)
        over.append(ciede2000(palette[a[differ]], palette[b[differ]]) - room[differ])
    return np.concatenate(over)


@pytest.mark.parametrize("name", sorted(STEEP))
def test_a_steep_gradient_gets_bands_no_further_apart_than_its_own_change(name: str) -> None:
    image = STEEP[name]()
    seg = run(image)
    assert len(seg.palette) >= 12, seg.palette.round()
    over = _steps_against_own_change(image, seg)
    assert over.max() <= 0.0, over.max()
    segments = path_segments(svg_of(png_bytes(image)))
    per_colour = 8 if name.startswith("linear") else 64
    assert segments <= per_colour * len(seg.palette), (segments, len(seg.palette))


def test_a_very_steep_radial_gradient_is_detected_as_shaded() -> None:
    image = rgba(STEEP["radial very steep"]())
    assert colour_count.ramp_share(image) >= colour_count.RAMP_SHARE
    assert colour_count.smooth_ramps(image)


def _logo(size: int = 256) -> Image.Image:
    image = Image.new("RGB", (size * 4, size * 4), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.ellipse(
        (80, 80, size * 4 - 80, size * 4 - 80), fill=(220, 60, 40), outline=(0, 0, 0), width=24
    )
    draw.rectangle((size + 40, size + 40, size * 3 - 40, size * 2), fill=(20, 90, 200))
    draw.line((100, size * 3, size * 4 - 100, size * 3 + 60), fill=(30, 30, 30), width=8)
    return image.resize((size, size), Image.Resampling.LANCZOS)


def _pixel_art_upscaled(factor: int) -> Image.Image:
    """Random cells of four colours, `factor` x bilinear (1: the 24-px sprite itself)."""
    rng = np.random.default_rng(3)
    cells = rng.choice(
        np.array([[250, 250, 250], [20, 20, 30], [230, 60, 40], [40, 160, 80]]), (24, 24)
    )
    small = Image.fromarray(cells.astype(np.uint8), "RGB")
    return small.resize((24 * factor, 24 * factor), Image.Resampling.BILINEAR)


NOT_STEEP = {
    "anti-aliased logo": _logo,
    "JPEG'd logo": lambda: jpeg(_logo(), 50),
    "pixel art upscaled 4x, bicubic": lambda: _pixel_art_upscaled(1).resize(
        (96, 96), Image.Resampling.BICUBIC
    ),
    "pixel art under JPEG noise": lambda: pixel_grid(jpeg_quality=55).image,
    "rubber stamp": lambda: stamp().image,
}


@pytest.mark.parametrize("name", sorted(NOT_STEEP))
def test_flat_art_is_not_taken_for_a_steep_gradient(name: str) -> None:
    image = rgba(NOT_STEEP[name]())
    assert colour_count.ramp_share(image) < colour_count.RAMP_SHARE / 2
    assert not colour_count.smooth_ramps(image)
