"""The tracer end to end: shapes, corners, curves, sub-pixel edges, no gaps."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.ndimage import binary_erosion

from printjob_adapters.engine import subpixel
from printjob_adapters.engine.errors import Cancelled as ConversionCancelled
from printjob_adapters.engine.progress import Checkpoint, silent
from printjob_adapters.engine.vectorise import vectorise
from tests.unit.engine.test_vectorise_support import (
    Seg,
    contours,
    ellipse,
    paint,
    polygon_area,
    rasterise,
    rect,
)

WHITE = (255, 255, 255)
RED = (220, 30, 40)
BLUE = (20, 40, 200)
GREEN = (30, 170, 60)


def interior_samples(art, margin: float = 3.0) -> np.ndarray:
    """Outline samples of all layers, away from the image border."""
    samples = np.concatenate([np.concatenate(contours(layer.commands)) for layer in art.layers])
    x, y = samples[:, 0], samples[:, 1]
    keep = (x > margin) & (x < art.width - margin) & (y > margin) & (y < art.height - margin)
    return samples[keep]


def layer_of(art, color):
    matches = [layer for layer in art.layers if layer.color == color]
    assert len(matches) == 1
    return matches[0]


def distance_to_samples(points: np.ndarray, samples: np.ndarray) -> np.ndarray:
    d = np.sqrt(((points[:, None, :] - samples[None, :, :]) ** 2).sum(axis=2))
    return d.min(axis=1)


def test_one_layer_per_palette_colour_and_size():
    rgba, seg = paint(40, 50, WHITE, [(RED, rect(5, 5, 20, 30)), (BLUE, rect(25, 8, 45, 35))])
    art = vectorise(rgba, seg, silent())
    assert (art.width, art.height) == (50, 40)
    assert sorted(layer.color for layer in art.layers) == sorted([WHITE, RED, BLUE])
    assert art.background_removed is False
    for layer in art.layers:
        assert layer.commands[0][0] == "moveTo"
        assert layer.commands[-1][0] == "closePath"


def test_square_keeps_four_sharp_corners():
    rgba, seg = paint(64, 64, WHITE, [(RED, rect(12, 15, 44, 47))])
    art = vectorise(rgba, seg, silent())
    red = layer_of(art, RED)
    samples = np.concatenate(contours(red.commands))
    corners = np.array([(12, 15), (44, 15), (44, 47), (12, 47)], dtype=float)
    assert distance_to_samples(corners, samples).max() < 0.05
    # No rounding: the outline is the four straight sides.
    assert red.segment_count() <= 4


def test_anti_aliased_square_corners_land_off_grid():
    rgba, seg = paint(64, 64, WHITE, [(RED, rect(12.3, 15.6, 44.3, 47.6))])
    art = vectorise(rgba, seg, silent())
    samples = np.concatenate(contours(layer_of(art, RED).commands))
    corners = np.array([(12.3, 15.6), (44.3, 15.6), (44.3, 47.6), (12.3, 47.6)])
    assert distance_to_samples(corners, samples).max() < 0.1


def test_circle_is_few_curves_on_the_true_radius():
    cx, cy, r = 32.3, 31.7, 20.0
    rgba, seg = paint(64, 64, WHITE, [(BLUE, ellipse(cx, cy, r, r))])
    art = vectorise(rgba, seg, silent())
    blue = layer_of(art, BLUE)
    assert blue.segment_count() <= 8
    samples = np.concatenate(contours(blue.commands))
    radius = np.hypot(samples[:, 0] - cx, samples[:, 1] - cy)
    assert np.abs(radius - r).max() < 0.3


@pytest.mark.parametrize("edge", [20.3, 20.5, 20.8, 21.0])
def test_sub_pixel_vertical_edge(edge):
    rgba, seg = paint(30, 40, WHITE, [(RED, rect(-1, -1, edge, 31))])
    art = vectorise(rgba, seg, silent())
    inner = interior_samples(art)
    assert len(inner) > 0
    assert np.abs(inner[:, 0] - edge).max() < 0.1


def test_sub_pixel_slanted_edge():
    # Half-plane below the line y = 0.4 x + 7.35.
    a, b = 0.4, 7.35
    rgba, seg = paint(40, 48, WHITE, [(GREEN, lambda x, y: y > a * x + b)])
    art = vectorise(rgba, seg, silent())
    inner = interior_samples(art)
    dist = np.abs(inner[:, 1] - a * inner[:, 0] - b) / np.hypot(a, 1)
    assert len(inner) > 0
    assert dist.max() < 0.1


def test_sub_pixel_edge_against_transparency():
    rgba, seg = paint(30, 40, None, [(RED, rect(-1, -1, 17.7, 31))])
    art = vectorise(rgba, seg, silent())
    assert art.background_removed is True
    inner = interior_samples(art)
    assert len(inner) > 0
    assert np.abs(inner[:, 0] - 17.7).max() < 0.1


def test_thin_line_and_small_dot_survive():
    labels = np.zeros((20, 40), dtype=np.int32)
    labels[5, 3:35] = 1  # 1-px line
    labels[12:14, 10:12] = 2  # 2x2 dot
    labels[16, 30] = 1  # single pixel
    palette = np.array([WHITE, BLUE, RED], dtype=float)
    rgba = np.concatenate([palette[labels], np.full((20, 40, 1), 255.0)], axis=2).astype(np.uint8)
    art = vectorise(rgba, Seg(labels, palette), silent())
    blue = [polygon_area(c) for c in contours(layer_of(art, BLUE).commands)]
    red = [polygon_area(c) for c in contours(layer_of(art, RED).commands)]
    assert sorted(round(a, 3) for a in blue) == [1.0, 32.0]
    assert [round(a, 3) for a in red] == [4.0]
    out = rasterise(art, 4)
    assert (out[5 * 4 + 1 : 6 * 4 - 1, 3 * 4 : 35 * 4, :3] == BLUE).all()
    assert (out[12 * 4 + 1 : 14 * 4 - 1, 10 * 4 + 1 : 12 * 4 - 1, :3] == RED).all()


def test_no_gaps_between_abutting_regions():
    shapes = [
        (RED, rect(3.4, 2.2, 30.6, 20.5)),
        (BLUE, ellipse(22.2, 18.9, 11.3, 8.4)),
        (GREEN, rect(10.5, 14.25, 26.7, 35.8)),
        (RED, ellipse(36.0, 30.0, 5.5, 5.5)),
    ]
    rgba, seg = paint(40, 48, WHITE, shapes)
    art = vectorise(rgba, seg, silent())
    out = rasterise(art, 4)
    assert (out[..., 3] == 255).all()


def test_transparent_area_stays_transparent_and_opaque_area_is_covered():
    rgba, seg = paint(40, 40, None, [(RED, ellipse(20, 20, 15, 12)), (BLUE, rect(12, 12, 28, 24))])
    art = vectorise(rgba, seg, silent())
    out = rasterise(art, 4)
    block = np.ones((4, 4), dtype=bool)
    # One output pixel in from the input's opaque pixels: an anti-aliased outline pixel
    # against transparency is partial by nature, any hole deeper in is a gap.
    opaque = binary_erosion(np.kron(rgba[..., 3] == 255, block), np.ones((3, 3), dtype=bool))
    clear = binary_erosion(np.kron(rgba[..., 3] == 0, block), np.ones((3, 3), dtype=bool))
    assert (out[..., 3][opaque] == 255).all()
    assert (out[..., 3][clear] == 0).all()


def test_checkpoint_called_and_cancel_stops():
    rgba, seg = paint(32, 32, WHITE, [(RED, ellipse(16, 16, 9, 9))])
    seen: list[int] = []
    vectorise(rgba, seg, Checkpoint(progress=lambda phase, pct: seen.append(pct)))
    assert seen and seen[-1] == 100
    with pytest.raises(ConversionCancelled):
        vectorise(rgba, seg, Checkpoint(cancelled=lambda: True))


def test_deterministic():
    rgba, seg = paint(48, 48, WHITE, [(RED, ellipse(20, 22, 13, 9)), (BLUE, rect(25, 5, 44, 30))])
    assert vectorise(rgba, seg, silent()) == vectorise(rgba, seg, silent())


def test_every_palette_colour_gets_a_layer_even_if_tiny():
    labels = np.zeros((10, 10), dtype=np.int32)
    labels[4, 4] = 1
    palette = np.array([WHITE, RED, BLUE], dtype=float)
    rgba = np.concatenate([palette[labels], np.full((10, 10, 1), 255.0)], axis=2).astype(np.uint8)
    art = vectorise(rgba, Seg(labels, palette), silent())
    assert len(art.layers) == 3
    assert layer_of(art, RED).segment_count() > 0
    assert layer_of(art, BLUE).commands == ()


@pytest.mark.parametrize("flip_x", [False, True])
@pytest.mark.parametrize("flip_y", [False, True])
def test_a_pixel_wedged_into_a_canvas_corner_leaves_the_corner_covered(flip_x, flip_y):
    # One red pixel in the corner between a green and a blue region is a fragment the
    # fitting collapses to a point; the canvas corner must stay where it is, or every
    # layer leaves the corner uncovered (a transparent notch in the print).
    height, width = 24, 32

    def at(x0: int, y0: int, x1: int, y1: int):
        if flip_x:
            x0, x1 = width - x1, width - x0
        if flip_y:
            y0, y1 = height - y1, height - y0
        return rect(x0, y0, x1, y1)

    painted = [(RED, at(0, 0, 2, 2)), (GREEN, at(0, 1, 2, 3)), (BLUE, at(1, 0, 3, 2))]
    rgba, seg = paint(height, width, WHITE, painted)
    out = rasterise(vectorise(rgba, seg, silent()), 4)
    assert (out[..., 3] == 255).all()


shape_strategy = st.tuples(
    st.sampled_from(["rect", "ellipse"]),
    st.floats(0, 40),
    st.floats(0, 30),
    st.floats(2, 20),
    st.floats(2, 16),
    st.integers(1, 3),
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes=st.lists(shape_strategy, min_size=1, max_size=5), aa=st.booleans())
def test_random_flat_images_fill_with_label_colours_and_no_gaps(shapes, aa):
    colours = [WHITE, RED, BLUE, GREEN]
    painted = []
    for kind, x, y, w, h, c in shapes:
        fn = (
            rect(x, y, x + w, y + h)
            if kind == "rect"
            else ellipse(x + w / 2, y + h / 2, w / 2, h / 2)
        )
        painted.append((colours[c], fn))
    rgba, seg = paint(24, 32, WHITE, painted, supersample=4 if aa else 1)
    art = vectorise(rgba, seg, silent())
    out = rasterise(art, 4)
    assert (out[..., 3] == 255).all()
    # Away from edges (pixels whose 5x5 neighbourhood has one label) the colour is the
    # label's colour.
    labels = seg.labels
    padded = np.pad(labels, 2, mode="edge")
    same = np.ones_like(labels, dtype=bool)
    for dy in range(5):
        for dx in range(5):
            same &= padded[dy : dy + 24, dx : dx + 32] == labels
    centres = out[1::4, 1::4, :3][..., :3].astype(int)
    expect = seg.palette[labels].astype(int)
    assert (np.abs(centres - expect)[same] <= 1).all()


def test_left_out_colour_is_the_median_of_left_out_pixels():
    rng = np.random.default_rng(4)
    for transparent in (0.0, 0.3, 0.5, 0.51, 0.7, 1.0):
        for count in (1, 100, 101):
            rgba = rng.integers(0, 256, (3, count, 4)).astype(np.uint8)
            rgba[..., 3][rng.random((3, count)) < transparent] = 0
            left_out = rng.random((3, count)) < 0.5
            left_out[0, 0] = True
            expected = np.median(subpixel.premultiply(rgba[left_out]), axis=0)
            assert np.array_equal(subpixel._left_out_colour(rgba, left_out), expected)
