"""Colour conversions and the quantisation steps on their own."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, ImageDraw

from printjob_adapters.engine import quantise
from printjob_adapters.engine.colour import (
    ciede2000,
    delta_e2000_srgb,
    lab_to_srgb,
    oklab_to_srgb,
    srgb_to_lab,
    srgb_to_linear,
    srgb_to_oklab,
)


def test_colour_round_trips() -> None:
    rgb = np.random.default_rng(0).uniform(0, 255, (500, 3))
    assert np.abs(lab_to_srgb(srgb_to_lab(rgb)) - rgb).max() < 1e-6
    assert np.abs(oklab_to_srgb(srgb_to_oklab(rgb)) - rgb).max() < 1e-6
    u8 = np.arange(256, dtype=np.uint8)
    assert np.abs(srgb_to_linear(u8) - srgb_to_linear(u8.astype(float))).max() < 1e-6


def test_known_values() -> None:
    assert np.allclose(srgb_to_lab([255, 255, 255]), [100, 0, 0], atol=0.01)
    assert np.allclose(srgb_to_lab([255, 0, 0]), [53.24, 80.09, 67.20], atol=0.05)
    assert np.allclose(srgb_to_oklab([255, 255, 255]), [100, 0, 0], atol=0.01)
    # Sharma, Wu & Dalal (2005) CIEDE2000 test pairs 1 and 7.
    assert abs(ciede2000([50, 2.6772, -79.7751], [50, 0, -82.7485]) - 2.0425) < 1e-3
    assert abs(ciede2000([50, 0, 0], [50, -1, 2]) - 2.3669) < 1e-3
    assert delta_e2000_srgb([10, 20, 30], [10, 20, 30]) == 0


def test_segment_residual_accepts_mixtures_and_overshoot_only() -> None:
    c1, c2 = np.array([200.0, 40, 40]), np.array([20.0, 20, 140])
    mix = 0.3 * c1 + 0.7 * c2
    res, t = quantise.segment_residual(mix, c1, c2)
    assert res < 1e-9 and abs(t - 0.7) < 1e-9
    res, _ = quantise.segment_residual(c1 + 0.1 * (c1 - c2), c1, c2)  # ringing overshoot
    assert res < 1e-9
    res, _ = quantise.segment_residual(np.array([40.0, 200, 40]), c1, c2)  # a real colour
    assert res > 50
    # Luma mixed fully, chroma barely (JPEG chroma blur): only a mixture when split is allowed.
    ycc = quantise._YCC
    p = np.linalg.solve(ycc, ycc @ c1 + np.r_[0.9, 0.5, 0.5] * (ycc @ (c2 - c1)))
    assert quantise.segment_residual(p, c1, c2, split=0.5)[0] < 1e-6
    assert quantise.segment_residual(p, c1, c2)[0] > 8


def test_noise_level_separates_clean_art_from_jpeg() -> None:
    img = Image.new("RGB", (120, 120), (255, 255, 255))
    ImageDraw.Draw(img).ellipse([20, 20, 100, 100], fill=(200, 30, 40))
    clean = np.asarray(img.convert("RGBA"))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=60)
    jpeg = np.asarray(Image.open(buf).convert("RGBA"))
    assert quantise.pixel_maps(clean).noise == 0
    assert quantise.pixel_maps(jpeg).noise > quantise.pixel_maps(clean).noise


def test_reduce_palette_keeps_artwork_colours() -> None:
    img = Image.new("RGB", (90, 30), (255, 255, 255))
    d = ImageDraw.Draw(img)
    d.rectangle([30, 0, 59, 29], fill=(20, 20, 20))
    d.rectangle([60, 0, 89, 29], fill=(245, 248, 250))
    arr = np.asarray(img.convert("RGBA"))
    pal = quantise.find_palette(arr[..., :3], quantise.pixel_maps(arr), 2)
    got = {tuple(np.rint(c).astype(int)) for c in pal}
    assert (20, 20, 20) in got and len(got) == 2
    assert got <= {(255, 255, 255), (20, 20, 20), (245, 248, 250)}


def test_transparent_colour_is_ignored() -> None:
    arr = np.zeros((40, 40, 4), np.uint8)
    arr[..., :3] = (0, 255, 0)  # colour hidden under alpha 0
    arr[10:30, 10:30] = (200, 30, 40, 255)
    pal = quantise.find_palette(arr[..., :3], quantise.pixel_maps(arr), None)
    assert len(pal) == 1 and np.abs(pal[0] - (200, 30, 40)).max() < 1
