"""Steep gradients saved as JPEG, and the centre of a very steep radial gradient.

JPEG's block noise bends a steep gradient's rounded ramps every few pixels, so the straight
ramps of `colour_count.ramp_share` miss it (3 % of the sampled pixels where its PNG has
19 %); on lines smoothed along themselves the noise averages out and the ramps are found
again (`colour_count.jpeg_ramps`), while flat art, JPEG'd or not, pixel art and stamps stay
far under the threshold. Once shaded, the bands hold the same bound as the PNG's: measured
against the change of the gradient as drawn (before JPEG), neighbouring bands are at most
`colour_count.BAND_STEP` apart, or two bands' reach at the input's own change. A radial
gradient so steep that its centre is not linear over a few pixels gets bands there too,
not two colours far apart.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from printjob_adapters.engine import colour_count

from .colour_support import path_segments, png_bytes, rgba, run, svg_of
from .hard_synthetic import jpeg, linear_gradient, pixel_grid, radial_gradient, stamp
from .test_steep_gradients import NOT_STEEP, _logo, _steps_against_own_change


def _radial_navy() -> Image.Image:
    """White to navy over 60 px: 1.3 CIEDE2000 a pixel."""
    return radial_gradient(
        size=(240, 240), radius=60, inner_colour=(255, 255, 255), outer_colour=(10, 20, 60)
    ).image


def _radial_red() -> Image.Image:
    """White to red over 30 px on a 64-px canvas: 3.4 CIEDE2000 a pixel."""
    return radial_gradient(
        size=(64, 64), radius=30, inner_colour=(255, 255, 255), outer_colour=(200, 0, 0)
    ).image


def _linear_navy() -> Image.Image:
    """White to navy across a 120-px canvas: 1.3 CIEDE2000 a pixel."""
    return linear_gradient(
        size=(120, 120), start_colour=(255, 255, 255), end_colour=(10, 20, 60)
    ).image


#: Each gradient as drawn, the JPEG quality it is saved at (None: PNG) and the most path
#: segments a colour it may take (a straight band edge, or a ring fitted from a staircase).
CASES = {
    "radial white to navy, quality 75": (_radial_navy, 75, 64),
    "radial white to navy, quality 85": (_radial_navy, 85, 64),
    "radial white to navy, quality 90": (_radial_navy, 90, 64),
    "radial white to red on 64 px, quality 75": (_radial_red, 75, 64),
    "radial white to red on 64 px, quality 85": (_radial_red, 85, 64),
    "radial white to red on 64 px, PNG": (_radial_red, None, 64),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_steep_gradient_under_jpeg_gets_bands_within_its_own_change(name: str) -> None:
    drawn, quality, per_colour = CASES[name]
    clean = drawn()
    image = jpeg(clean, quality) if quality is not None else clean
    seg = run(image)
    assert len(seg.palette) >= 12, seg.palette.round()
    over = _steps_against_own_change(clean, seg)
    assert over.max() <= 0.0, over.max()
    segments = path_segments(svg_of(png_bytes(image)))
    assert segments <= per_colour * len(seg.palette), (segments, len(seg.palette))


@pytest.mark.parametrize("quality", [75, 85, 90])
def test_a_jpegd_steep_radial_gradient_is_detected_as_shaded(quality: int) -> None:
    image = rgba(jpeg(_radial_navy(), quality))
    assert colour_count.ramp_share(image) < colour_count.RAMP_SHARE  # what JPEG hid
    assert colour_count.jpeg_ramp_share(image) >= 2 * colour_count.RAMP_SHARE
    assert colour_count.smooth_ramps(image)


def test_a_jpegd_steep_linear_gradient_is_smooth_shaded_art() -> None:
    # At quality 75 its luma bends by 2 levels (`roughness`): taken for a photo before.
    image = rgba(jpeg(_linear_navy(), 75))
    assert colour_count.roughness(image) >= colour_count.SMOOTH_ROUGHNESS
    assert colour_count.jpeg_ramps(image)
    seg = run(jpeg(_linear_navy(), 75))
    assert len(seg.palette) >= 40, len(seg.palette)


def _pixel_art_upscaled_bicubic() -> Image.Image:
    return NOT_STEEP["pixel art upscaled 4x, bicubic"]()


NOT_SHADED = {
    **NOT_STEEP,
    "JPEG'd logo, quality 75": lambda: jpeg(_logo(), 75),
    "JPEG'd logo, quality 90": lambda: jpeg(_logo(), 90),
    "pixel art under JPEG noise, quality 85": lambda: pixel_grid(jpeg_quality=85).image,
    "JPEG'd upscaled pixel art": lambda: jpeg(_pixel_art_upscaled_bicubic(), 75),
    "JPEG'd rubber stamp": lambda: jpeg(stamp().image, 80),
}


@pytest.mark.parametrize("name", sorted(NOT_SHADED))
def test_flat_art_under_jpeg_is_not_taken_for_a_steep_gradient(name: str) -> None:
    image = rgba(NOT_SHADED[name]())
    assert colour_count.jpeg_ramp_share(image) < colour_count.RAMP_SHARE / 2
    assert not colour_count.jpeg_ramps(image)
    assert not colour_count.smooth_ramps(image)


def test_smoothed_ramps_need_straight_runs_not_just_change() -> None:
    # Soft noise over a flat grey: every pixel changes, none lies on a ramp.
    rng = np.random.default_rng(5)
    noise = np.clip(128 + rng.normal(0, 6, (96, 96, 1)).repeat(3, axis=2), 0, 255)
    image = rgba(Image.fromarray(noise.astype(np.uint8), "RGB"))
    assert colour_count.jpeg_ramp_share(image) < colour_count.RAMP_SHARE / 2


def test_a_photo_upscaled_to_3_mp_is_not_taken_for_a_steep_gradient() -> None:
    """A photo upscaled smooth (the benchmark's 3 MP cat: Lanczos, sensor noise, JPEG 90)
    has a few smoothed ramps, but far fewer than a steep gradient: it keeps the photo
    path, whose palette is both faster and truer to it than gradient bands."""
    from skimage import data as samples

    cat = Image.fromarray(samples.chelsea()).resize((2123, 1412), Image.Resampling.LANCZOS)
    noisy = np.asarray(cat, dtype=np.float64)
    noisy += np.random.default_rng(20240601).normal(0.0, 2.0, noisy.shape)
    photo = Image.fromarray(np.clip(np.rint(noisy), 0, 255).astype(np.uint8))
    image = rgba(jpeg(photo, 90))
    share = colour_count.jpeg_ramp_share(image)
    assert colour_count.RAMP_SHARE <= share < colour_count.JPEG_RAMP_SHARE
    assert not colour_count.jpeg_ramps(image)
