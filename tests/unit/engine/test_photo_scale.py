"""Photos at print size: a noisy photo is cleaned and traced, never refused as noise.

The lone-pixel cap (`bounds.MAX_SPECK_PIXELS`) exists for pathological input (random
noise, 1-px checkerboards), whose clean-up would hold a worker for tens of seconds; an
ordinary photo of a dark sky has sensor noise too, and must be traced. The caps are
lowered here so a 600 x 600 image stands in for a 3 MP one (the same counts per pixel).
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from printjob_adapters.engine import bounds, cleanup, quantise, segmentation
from printjob_adapters.engine.colour import srgb_to_lab
from printjob_adapters.engine.options import TraceOptions
from printjob_adapters.engine.pipeline import trace

SIDE = 600
#: A cap the synthetic sky's lone pixels pass (about 22 000 before the clean-up).
LOWERED_CAP = 10_000


def _jpeg(pixels: np.ndarray, quality: int = 90) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.clip(np.rint(pixels), 0, 255).astype(np.uint8)).save(
        buffer, "JPEG", quality=quality
    )
    return buffer.getvalue()


def night_sky(side: int = SIDE, noise: float = 6.0, seed: int = 3) -> bytes:
    """A camera-like photo: a dark sky with a coloured glow (smooth fields), faint stars
    of one or two pixels, a hill of smooth shading, Gaussian sensor noise, JPEG 90."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:side, 0:side].astype(np.float64)
    glow = np.exp(-((x - 0.6 * side) ** 2 + (y - 0.4 * side) ** 2) / (2 * (0.25 * side) ** 2))
    image = np.empty((side, side, 3))
    image[..., 0] = 10 + 120 * glow * (x / side)
    image[..., 1] = 12 + 60 * glow + 30 * (y / side)
    image[..., 2] = 22 + 140 * glow * (1 - x / side)
    for _ in range(side * side // 400):
        cy, cx = rng.uniform(0, side, 2)
        radius, brightness = rng.uniform(0.6, 1.8), rng.uniform(40, 200)
        star = brightness * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * radius * radius))
        image += star[..., None] * rng.uniform(0.7, 1.0, 3)
    hill = y > 0.7 * side + 0.08 * side * np.sin(x / side * 7)
    ground = np.stack([40 + 60 * (x / side), 70 + 50 * (y / side), 30 + 20 * np.cos(x / 40)], -1)
    image[hill] = ground[hill]
    image += rng.normal(0.0, noise, image.shape)
    return _jpeg(image)


def test_a_noisy_photo_of_a_dark_sky_is_cleaned_and_traced_not_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted: list[int] = []
    real_check = segmentation.check_specks

    def counting_check(labels: np.ndarray) -> None:
        counted.append(bounds.speck_pixels(labels))
        real_check(labels)

    monkeypatch.setattr(segmentation, "check_specks", counting_check)
    monkeypatch.setattr(bounds, "MAX_SPECK_PIXELS", LOWERED_CAP)
    traced = trace(night_sky(), TraceOptions())
    # Its lone pixels were joined to their surroundings before they were counted.
    assert counted and counted[0] <= LOWERED_CAP
    assert traced.colors >= 8  # traced as a photo, in many colours
    assert traced.data.startswith(b"<?xml") or b"<svg" in traced.data[:500]


def test_the_same_sky_is_over_the_lowered_cap_before_its_lone_pixels_join() -> None:
    # The test above is only meaningful when the sky's raw colour map passes the cap.
    monkeypatched_cap = LOWERED_CAP
    seen: list[int] = []
    real = cleanup.join_lone_pixels

    def spy(labels: np.ndarray, *args: object) -> np.ndarray:
        seen.append(bounds.speck_pixels(labels))
        return real(labels, *args)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bounds, "MAX_SPECK_PIXELS", monkeypatched_cap)
        patch.setattr(cleanup, "join_lone_pixels", spy)
        trace(night_sky(), TraceOptions())
    assert seen and seen[0] > monkeypatched_cap


@pytest.mark.parametrize("colors", [None, 1000])
def test_pure_random_noise_is_still_refused(
    monkeypatch: pytest.MonkeyPatch, colors: int | None
) -> None:
    monkeypatch.setattr(bounds, "MAX_SPECK_PIXELS", LOWERED_CAP)
    noise = np.random.default_rng(7).integers(0, 256, (SIDE // 2, SIDE // 2, 3))
    with pytest.raises(bounds.TooMuchDetail, match=r"too noisy to trace"):
        trace(_jpeg(noise.astype(np.float64)), TraceOptions(colors=colors))


def test_lone_pixels_join_the_nearest_coloured_neighbour_that_is_not_lone() -> None:
    labels = np.array(
        [
            [0, 0, 1, 1],
            [0, 2, 1, 1],
            [0, 0, 1, 1],
            [3, 0, 1, 1],
        ],
        dtype=np.int32,
    )
    palette = np.array([[0, 0, 0], [200, 200, 200], [0, 0, 0], [0, 0, 0]], dtype=np.float64)
    rgb = np.zeros((4, 4, 3), dtype=np.uint8)
    rgb[1, 1] = (180, 180, 180)  # its own colour is nearest the light neighbour's
    joined = cleanup.join_lone_pixels(labels, rgb, palette)
    assert joined[1, 1] == 1
    assert joined[3, 0] == 0  # the corner's only paired neighbours are dark
    lone = np.zeros(labels.shape, dtype=bool)
    lone[1, 1] = lone[3, 0] = True
    assert (joined[~lone] == labels[~lone]).all()  # paired pixels keep their labels
    # A checkerboard has no paired pixel at all: nothing joins.
    board = (np.indices((6, 6)).sum(axis=0) % 2).astype(np.int32)
    same = cleanup.join_lone_pixels(board, np.zeros((6, 6, 3), np.uint8), palette[:2])
    assert (same == board).all()


def test_a_photos_speck_area_grows_with_its_pixels_over_the_reference() -> None:
    assert cleanup.speck_area(512 * 512, photo=True) == cleanup.SPECK_AREA
    assert cleanup.speck_area(cleanup.SPECK_SCALE_PIXELS, photo=True) == cleanup.SPECK_AREA
    assert cleanup.speck_area(3 * cleanup.SPECK_SCALE_PIXELS, photo=True) == 3 * cleanup.SPECK_AREA
    # Flat art, stamps and scans keep theirs at any size.
    assert cleanup.speck_area(3 * cleanup.SPECK_SCALE_PIXELS, photo=False) == cleanup.SPECK_AREA


def test_a_photo_past_the_segment_cap_is_traced_again_in_fewer_colours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from printjob_adapters.engine import vectorise

    counted: list[int] = []
    real_check = vectorise.check_segments

    def counting_check(segments: int, estimate: bool = False) -> None:
        if not estimate:
            counted.append(segments)
        real_check(segments, estimate)

    monkeypatch.setattr(vectorise, "check_segments", counting_check)
    sky = night_sky()
    first = trace(sky, TraceOptions())
    full = counted[-1]
    monkeypatch.setattr(bounds, "MAX_SEGMENTS", int(0.9 * full))
    counted.clear()
    again = trace(sky, TraceOptions())
    assert counted[0] == full  # the first trace passed the cap ...
    assert counted[-1] <= int(0.9 * full)  # ... and the second is under it
    assert again.colors <= first.colors // 2 + 1
    # An explicit colour count is what the customer asked for: refused, not changed.
    with pytest.raises(bounds.TooManySegments, match=r"path segments, at most"):
        trace(sky, TraceOptions(colors=first.colors))


@pytest.mark.parametrize("seed", range(6))
def test_the_window_mode_filter_gives_the_per_label_result(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    height, width = (int(v) for v in rng.integers(1, 40, 2))
    colours = int(rng.integers(2, 300))
    labels = rng.integers(-1, colours, (height, width)).astype(np.int32)
    if seed % 2:  # blocks of 2 x 2: the window has majorities to find
        labels = np.repeat(np.repeat(labels, 2, 0), 2, 1)[:height, :width].copy()
    by_window = cleanup._majority_by_window(labels)
    monkeypatch.setattr(cleanup, "WINDOW_LABELS", 10**9)
    per_label = cleanup._majority(labels)
    assert (by_window == per_label).all()


def _colour_cloud(pixels: float) -> quantise.Histogram:
    """A photo's histogram: 6000 bins spread over the sRGB cube, `pixels` in all."""
    rng = np.random.default_rng(5)
    rgb = rng.uniform(0.0, 255.0, (6000, 3))
    share = np.full(len(rgb), pixels / len(rgb))
    return quantise.Histogram(rgb=rgb, lab=srgb_to_lab(rgb), flat=0.8 * share, edge=0.2 * share)


@pytest.mark.parametrize("sources", [False, True])
def test_a_photo_at_print_size_grows_its_palette_only_to_the_large_photo_cap(
    sources: bool,
) -> None:
    cap = quantise.LARGE_SOURCES_COLOURS if sources else quantise.LARGE_PHOTO_COLOURS
    seeds = np.array([[128.0, 128.0, 128.0]])
    small = quantise._photo_palette(_colour_cloud(500_000), seeds, sources=sources)
    large = quantise._photo_palette(_colour_cloud(3_000_000), seeds, sources=sources)
    # The same cloud at screen size needs more colours than the cap; at print size it stops
    # there, so its segments stay within the cap in one trace.
    assert len(small) > cap
    assert len(large) == cap
