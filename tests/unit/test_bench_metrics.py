"""The engine benchmark's metric functions (bench/metrics.py), on tiny synthetic inputs."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("skimage")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import metrics as m


@pytest.mark.parametrize(
    ("d", "segments"),
    [
        ("M0 0L1 1 2 2h3v4z", 5),
        ("M0 0 1 1 2 2Z", 3),  # implicit linetos after a moveto
        ("m1-2.5.5", 0),  # "-2.5.5" is -2.5 then .5: one pair, a bare moveto
        ("M0 0c1 2 3 4 5 6 1 2 3 4 5 6s1 1 2 2q1 1 2 2t3 3z", 6),
        ("M0 0a1 1 0 012 3a1,1,0,1,0,2,3", 2),  # compact arc flags
        ("M1e-3-2E+2l.5.5.5.5", 2),
        ("M0 0L1", 0),  # incomplete trailing group
        ("M0 0zM1 1z", 2),
        ("", 0),
    ],
)
def test_count_path_segments(d: str, segments: int) -> None:
    assert m.count_path_segments(d) == segments


def test_tokenize_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        m.count_path_segments("M0 0 L x")


def test_svg_colors_and_segments_follow_inheritance() -> None:
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10" fill="red">'
        '<defs><path fill="#00ff00" d="M0 0L9 9z"/></defs>'
        '<g fill="#0000FF"><path d="M0 0H5V5z"/></g>'
        '<path d="M0 0h1"/>'
        '<path fill="none" stroke="currentColor" color="#123" d="M0 0l1 1"/>'
        '<rect width="1" height="1" fill="rgb(0,0,255)"/>'
        "</svg>"
    )
    assert m.svg_fill_colors(svg) == {"#0000ff", "#ff0000", "#112233"}
    assert m.svg_segments(svg) == 3 + 1 + 1 + 4


def test_over_white_composites_straight_alpha() -> None:
    rgba = np.array([[[0, 0, 0, 0], [0, 0, 0, 255], [255, 0, 0, 128]]], np.uint8)
    rgb = m.over_white(rgba)
    assert rgb[0, 0].tolist() == [255, 255, 255]
    assert rgb[0, 1].tolist() == [0, 0, 0]
    assert rgb[0, 2].tolist() == [255, 127, 127]


def _step(width: int = 64, blur: int = 0) -> np.ndarray:
    """A vertical black/white step edge, optionally blurred into a linear ramp."""
    row = np.where(np.arange(width) < width // 2, 0.0, 255.0)
    if blur:
        row = np.convolve(np.pad(row, blur, mode="edge"), np.ones(blur) / blur, "same")[blur:-blur]
    image = np.repeat(row[None, :, None], width, axis=0).repeat(3, axis=2)
    return np.rint(image).astype(np.uint8)


def test_identical_images_score_perfectly() -> None:
    rgb = _step()
    lab = m.to_lab(rgb)
    band = m.edge_band(m.edge_pixels(lab))
    energy = m.difference_energy_map(lab)
    assert band.any() and not band.all()
    assert m.masked_mean(m.delta_e_map(lab, lab)) == 0.0
    assert m.sharpness(energy, energy, band) == pytest.approx(1.0)
    assert m.ssim(rgb, rgb) == pytest.approx(1.0)


def test_blur_lowers_sharpness_and_raises_edge_error() -> None:
    sharp, blurred = _step(), _step(blur=8)
    lab, lab_blur = m.to_lab(sharp), m.to_lab(blurred)
    band = m.edge_band(m.edge_pixels(lab))
    ratio = m.sharpness(m.difference_energy_map(lab_blur), m.difference_energy_map(lab), band)
    assert ratio is not None and ratio < 0.3
    de = m.delta_e_map(lab_blur, lab)
    edge_error = m.masked_mean(de, band)
    whole_error = m.masked_mean(de)
    assert edge_error is not None and whole_error is not None and edge_error > whole_error


def test_edge_band_is_within_radius() -> None:
    edges = np.zeros((21, 21), bool)
    edges[10, 10] = True
    band = m.edge_band(edges, radius=4)
    assert band[10, 14] and not band[10, 15]
    assert band[13, 12] and not band[14, 14]


def test_seams_count_interior_gaps_not_outline() -> None:
    alpha = np.zeros((8, 8), np.uint8)
    alpha[2:6, 2:6] = 255
    interior = m.opaque_interior(alpha, 4)
    out = m.upscale_nearest(alpha, 4).copy()
    out[8, 8:24] = 200  # the outermost 4x pixel row of the opaque square: outline, not seam
    assert m.seam_pixels(out, interior) == 0
    out[16, 9:23] = 0  # a hairline gap across the middle
    assert m.seam_pixels(out, interior) == 14
    assert m.seam_pixels(out, m.opaque_interior(alpha, 4, margin=4)) == 8


def test_seams_count_canvas_edge_strips_wider_than_one_pixel() -> None:
    alpha = np.full((4, 4), 255, np.uint8)
    interior = m.opaque_interior(alpha, 4)
    out = np.full((16, 16), 255, np.uint8)
    out[0, :] = 0  # the outermost row may be partial (touching curves)
    assert m.seam_pixels(out, interior) == 0
    out[1, :] = 0  # a second row is a gap
    assert m.seam_pixels(out, interior) == 14
