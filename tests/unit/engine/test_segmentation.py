"""Segmentation stage: colour counts, palette accuracy, clean-up, background, determinism."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from printjob_adapters.engine import quantise, segmentation
from printjob_adapters.engine.colour import delta_e2000_srgb
from printjob_adapters.engine.errors import Cancelled as ConversionCancelled
from printjob_adapters.engine.options import Background
from printjob_adapters.engine.progress import Checkpoint, silent
from printjob_adapters.engine.segmentation import Segmentation, segment

WHITE = (255, 255, 255)
RED = (210, 47, 39)
BLUE = (0, 12, 138)
YELLOW = (255, 185, 21)
GREEN = (0, 120, 71)
BLACK = (20, 20, 20)


def draw_logo(colours: list[tuple[int, int, int]], size: int = 160, scale: int = 4) -> Image.Image:
    """Shapes in `colours` (first is the background), anti-aliased by 4x supersampling."""
    big = Image.new("RGB", (size * scale, size * scale), colours[0])
    d = ImageDraw.Draw(big)
    s = scale
    shapes = [
        lambda c: d.ellipse([10 * s, 12 * s, 90 * s, 95 * s], fill=c),
        lambda c: d.polygon([(70 * s, 20 * s), (150 * s, 60 * s), (95 * s, 140 * s)], fill=c),
        lambda c: d.rectangle([20 * s, 105 * s, 75 * s, 150 * s], fill=c),
        lambda c: d.ellipse([105 * s, 100 * s, 150 * s, 150 * s], fill=c),
    ]
    for shape, colour in zip(shapes, colours[1:], strict=False):
        shape(colour)
    return big.resize((size, size), Image.Resampling.LANCZOS)


def rgba(img: Image.Image) -> np.ndarray:
    return np.asarray(img.convert("RGBA")).copy()


def run(
    arr: np.ndarray, colors: int | None = None, bg: Background = Background.KEEP
) -> Segmentation:
    return segment(arr, colors, bg, silent())


def assert_palette_matches(
    seg: Segmentation, truth: list[tuple[int, int, int]], tol: float
) -> None:
    de = delta_e2000_srgb(seg.palette[:, None, :], np.array(truth, float)[None, :, :])
    assert de.min(axis=0).max() < tol, de.round(2)
    assert de.min(axis=1).max() < tol, de.round(2)


def assert_well_formed(seg: Segmentation, shape: tuple[int, int]) -> None:
    assert seg.labels.dtype == np.int32 and seg.labels.shape == shape
    assert seg.palette.dtype == np.float64 and seg.palette.shape[1] == 3
    k = len(seg.palette)
    used = np.unique(seg.labels[seg.labels >= 0])
    assert used.tolist() == list(range(k))
    assert seg.labels.min() >= -1
    assert len({tuple(np.rint(c).astype(int)) for c in seg.palette}) == k


def test_antialiased_flat_image_gives_exact_colours_and_accurate_palette() -> None:
    truth = [WHITE, RED, BLUE, YELLOW]
    seg = run(rgba(draw_logo(truth)))
    assert_well_formed(seg, (160, 160))
    assert len(seg.palette) == 4
    assert_palette_matches(seg, truth, 1.5)


def test_box_downsampled_image_with_close_colours_keeps_them_apart() -> None:
    truth = [WHITE, (245, 248, 250), (41, 47, 51), (255, 172, 51)]
    big = draw_logo(truth, size=640, scale=1)
    seg = run(rgba(big.resize((160, 160), Image.Resampling.BOX)))
    assert len(seg.palette) == 4
    assert_palette_matches(seg, truth, 1.5)


def test_jpeg_round_trip_stays_near_truth() -> None:
    truth = [WHITE, RED, BLUE, YELLOW, GREEN]
    buf = io.BytesIO()
    draw_logo(truth, size=200).save(buf, "JPEG", quality=75)
    seg = run(rgba(Image.open(buf)))
    assert 5 <= len(seg.palette) <= 7
    de = delta_e2000_srgb(seg.palette[:, None, :], np.array(truth, float)[None, :, :])
    assert de.min(axis=0).max() < 3.0, de.round(2)


def test_exact_count_when_asked_for_fewer() -> None:
    seg = run(rgba(draw_logo([WHITE, RED, BLUE, YELLOW, GREEN])), colors=2)
    assert_well_formed(seg, (160, 160))
    assert len(seg.palette) == 2


def test_fewer_colours_than_asked_keeps_what_it_has() -> None:
    truth = [WHITE, RED, BLUE]
    seg = run(rgba(draw_logo(truth)), colors=8)
    assert len(seg.palette) == 3
    assert_palette_matches(seg, truth, 1.5)


def test_one_colour() -> None:
    seg = run(rgba(draw_logo([WHITE, RED, BLUE])), colors=1)
    assert len(seg.palette) == 1
    assert (seg.labels == 0).all()


def test_thin_line_and_small_dot_survive_cleanup() -> None:
    img = Image.new("RGB", (80, 80), WHITE)
    d = ImageDraw.Draw(img)
    d.rectangle([40, 0, 79, 79], fill=BLUE)
    d.line([(5, 10), (35, 10)], fill=RED, width=1)
    d.rectangle([10, 30, 12, 32], fill=BLUE)
    d.line([(50, 5), (50, 70)], fill=YELLOW, width=1)
    seg = run(rgba(img))
    assert len(seg.palette) == 4
    red = int(np.argmin(np.abs(seg.palette - RED).sum(axis=1)))
    black = int(np.argmin(np.abs(seg.palette - BLUE).sum(axis=1)))
    yellow = int(np.argmin(np.abs(seg.palette - YELLOW).sum(axis=1)))
    assert (seg.labels[10, 5:36] == red).all()
    assert (seg.labels[30:33, 10:13] == black).all()
    assert (seg.labels[5:71, 50] == yellow).all()


def test_edge_mixture_never_becomes_the_colour_between() -> None:
    # Dark red lies between black and red: the black/red edge must not grow a dark-red rim.
    dark_red = (105, 24, 20)
    big = Image.new("RGB", (480, 480), WHITE)
    d = ImageDraw.Draw(big)
    d.ellipse([40, 40, 440, 440], fill=BLACK)
    d.ellipse([80, 80, 400, 400], fill=RED)
    d.rectangle([300, 10, 470, 60], fill=dark_red)
    seg = run(rgba(big.resize((120, 120), Image.Resampling.LANCZOS)))
    assert len(seg.palette) == 4
    dr = int(np.argmin(np.abs(seg.palette - dark_red).sum(axis=1)))
    assert (seg.labels[18:102, 18:102] != dr).all()


def test_speckles_from_noise_are_merged() -> None:
    rng = np.random.default_rng(1)
    arr = rgba(draw_logo([WHITE, RED, BLUE]))
    ys, xs = rng.integers(0, 160, 40), rng.integers(0, 160, 40)
    arr[ys, xs, :3] = rng.integers(0, 256, (40, 3))
    seg = run(arr)
    assert len(seg.palette) == 3


def test_transparent_pixels_are_left_out_and_do_not_pollute_the_palette() -> None:
    big = Image.new("RGBA", (480, 480), (0, 255, 0, 0))
    d = ImageDraw.Draw(big)
    d.ellipse([40, 40, 440, 440], fill=(*RED, 255))
    d.rectangle([200, 200, 280, 280], fill=(*BLUE, 255))
    arr = rgba(big.resize((120, 120), Image.Resampling.LANCZOS))
    seg = run(arr)
    assert ((arr[..., 3] < 128) == (seg.labels == -1)).all()
    assert len(seg.palette) == 2
    assert_palette_matches(seg, [RED, BLUE], 1.5)
    removed = run(arr, bg=Background.REMOVE)
    assert removed.background_removed
    assert len(removed.palette) == 2
    assert not run(arr).background_removed


def test_remove_border_colour_keeping_enclosed_counters() -> None:
    # Design decision 13: the background is what surrounds the design; the white the
    # design encloses (the counter of an "O") is part of it.
    img = Image.new("RGB", (100, 100), WHITE)
    d = ImageDraw.Draw(img)
    d.ellipse([20, 20, 80, 80], fill=BLUE)
    d.ellipse([40, 40, 60, 60], fill=WHITE)  # the counter of an "O"
    seg = run(rgba(img), bg=Background.REMOVE)
    assert seg.background_removed
    assert len(seg.palette) == 2
    assert seg.labels[0, 0] == -1 and seg.labels[50, 50] >= 0
    assert delta_e2000_srgb(seg.palette[seg.labels[50, 50]], WHITE) < 1.0
    assert delta_e2000_srgb(seg.palette[seg.labels[25, 50]], BLUE) < 1.0
    assert seg.background_color is not None
    assert delta_e2000_srgb(seg.background_color, WHITE) < 1.0


def test_nothing_removed_when_nothing_would_remain() -> None:
    arr = np.full((40, 60, 4), 255, dtype=np.uint8)
    arr[..., :3] = RED
    seg = run(arr, bg=Background.REMOVE)
    assert not seg.background_removed
    assert len(seg.palette) == 1 and (seg.labels == 0).all()


def test_no_majority_border_colour_means_no_background() -> None:
    img = Image.new("RGB", (90, 60), RED)
    d = ImageDraw.Draw(img)
    d.rectangle([0, 20, 89, 39], fill=WHITE)
    d.rectangle([0, 40, 89, 59], fill=BLUE)
    seg = run(rgba(img), bg=Background.REMOVE)
    assert not seg.background_removed
    assert len(seg.palette) == 3


def test_deterministic() -> None:
    rng = np.random.default_rng(3)
    arr = np.concatenate(
        [rng.integers(0, 256, (64, 64, 3), dtype=np.uint8), np.full((64, 64, 1), 255, np.uint8)],
        axis=2,
    )
    a, b = run(arr), run(arr)
    assert np.array_equal(a.labels, b.labels) and np.array_equal(a.palette, b.palette)
    c, d = run(arr, colors=12), run(arr, colors=12)
    assert np.array_equal(c.labels, d.labels) and len(c.palette) == 12


def test_photo_like_input_is_sane() -> None:
    y, x = np.mgrid[0:120, 0:160]
    arr = np.zeros((120, 160, 4), np.uint8)
    arr[..., 0] = x * 255 // 159
    arr[..., 1] = y * 255 // 119
    arr[..., 2] = 128
    arr[..., 3] = 255
    seg = run(arr)
    assert_well_formed(seg, (120, 160))
    assert 8 <= len(seg.palette) <= 64


def test_checkpoint_is_called_and_cancel_propagates() -> None:
    calls: list[int] = []
    cp = Checkpoint(progress=lambda phase, pct: calls.append(pct))
    run_arr = rgba(draw_logo([WHITE, RED]))
    segment(run_arr, None, Background.KEEP, cp)
    assert len(calls) >= 4 and calls[-1] == 100
    with pytest.raises(ConversionCancelled):
        segment(run_arr, None, Background.KEEP, Checkpoint(cancelled=lambda: True))


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        run(np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(ValueError):
        run(np.zeros((4, 4, 4), np.uint8), colors=0)


@st.composite
def flat_images(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """Random rectangles/ellipses of distinct random colours, optionally anti-aliased."""
    rgb = st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255))
    colours: list[tuple[int, int, int]] = []
    for c in draw(st.lists(rgb, min_size=2, max_size=5)):
        # Distinct flat colours only: two near-identical fills are one colour. (Very dark
        # colours can differ by ΔE 12 yet by only a few sRGB levels, hence both tests.)
        if all(
            delta_e2000_srgb(c, o) > 12 and np.linalg.norm(np.subtract(c, o)) > 32 for o in colours
        ):
            colours.append(c)
    scale = draw(st.sampled_from([1, 4]))
    size = 64
    img = Image.new("RGB", (size * scale, size * scale), colours[0])
    d = ImageDraw.Draw(img)
    for colour in colours[1:]:
        x0, y0 = draw(st.integers(0, 40)), draw(st.integers(0, 40))
        w, h = draw(st.integers(10, 30)), draw(st.integers(10, 30))
        box = [x0 * scale, y0 * scale, (x0 + w) * scale, (y0 + h) * scale]
        if draw(st.booleans()):
            d.ellipse(box, fill=colour)
        else:
            d.rectangle(box, fill=colour)
    truth = np.asarray(img.resize((size, size), Image.Resampling.NEAREST)).astype(float)
    if scale > 1:
        img = img.resize((size, size), Image.Resampling.BOX)
    return rgba(img), truth


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(flat_images())
def test_interior_pixels_keep_their_colour(case: tuple[np.ndarray, np.ndarray]) -> None:
    arr, _truth = case
    seg = run(arr)
    assert_well_formed(seg, arr.shape[:2])
    rgb = arr[..., :3].astype(int)
    # Interior: the 5x5 neighbourhood has exactly one input colour (no edge nearby).
    from scipy import ndimage

    key = rgb[..., 0] * 65536 + rgb[..., 1] * 256 + rgb[..., 2]
    interior = ndimage.maximum_filter(key, 5) == ndimage.minimum_filter(key, 5)
    got = seg.palette[seg.labels[interior]]
    de = delta_e2000_srgb(got, rgb[interior].astype(float))
    assert de.max() < 2.0


def test_tiny_images_always_get_a_colour() -> None:
    one = np.full((1, 1, 4), 255, np.uint8)
    assert len(run(one).palette) == 1 and run(one).labels[0, 0] == 0
    dot = np.zeros((3, 3, 4), np.uint8)
    dot[..., 3] = 255
    dot[1, 1, :3] = 255
    seg = run(dot)
    assert len(seg.palette) == 2
    removed = run(dot, bg=Background.REMOVE)
    assert removed.background_removed and removed.labels[1, 1] == 0
    empty = np.zeros((5, 5, 4), np.uint8)
    seg = run(empty, bg=Background.REMOVE)
    assert len(seg.palette) == 0 and (seg.labels == -1).all() and not seg.background_removed


def test_exact_count_on_noise_is_exact() -> None:
    arr = np.random.default_rng(5).integers(0, 256, (48, 48, 4)).astype(np.uint8)
    arr[..., 3] = 255
    for k in (3, 50, 400):
        seg = run(arr, colors=k)
        assert_well_formed(seg, (48, 48))
        assert len(seg.palette) == k


def _photo_like(size: int = 160) -> np.ndarray:
    """A smooth two-axis gradient with strong per-pixel noise: a photo's texture."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    base = np.stack([xx / size * 200 + 20, yy / size * 200 + 20, (xx + yy) / size * 100 + 40], 2)
    noisy = base + np.random.default_rng(11).normal(0, 18, base.shape)
    arr = np.full((size, size, 4), 255, np.uint8)
    arr[..., :3] = np.clip(noisy, 0, 255).astype(np.uint8)
    return arr


def _tiny_components(labels: np.ndarray, limit: int = 8) -> int:
    from printjob_adapters.engine.cleanup import components

    comp, n = components(labels)
    size = np.bincount(comp.ravel(), minlength=n)
    size[0] = 0
    return int(((size > 0) & (size < limit)).sum())


def test_speck_filter_keeps_thin_line_and_dot_in_flat_art() -> None:
    # Large enough for the speck filter to be considered; flat art must not be photo-like.
    img = Image.new("RGB", (200, 200), WHITE)
    d = ImageDraw.Draw(img)
    d.rectangle([100, 0, 199, 199], fill=BLUE)
    d.line([(5, 10), (90, 10)], fill=RED, width=1)
    d.rectangle([10, 30, 12, 32], fill=BLUE)
    d.line([(150, 5), (150, 190)], fill=YELLOW, width=1)
    seg = run(rgba(img))
    assert len(seg.palette) == 4
    red = int(np.argmin(np.abs(seg.palette - RED).sum(axis=1)))
    blue = int(np.argmin(np.abs(seg.palette - BLUE).sum(axis=1)))
    yellow = int(np.argmin(np.abs(seg.palette - YELLOW).sum(axis=1)))
    assert (seg.labels[10, 5:91] == red).all()
    assert (seg.labels[30:33, 10:13] == blue).all()
    assert (seg.labels[5:191, 150] == yellow).all()


def test_photo_like_input_ends_with_few_tiny_regions() -> None:
    from printjob_adapters.engine import cleanup, quantise

    arr = _photo_like()
    seg = run(arr)
    assert _tiny_components(seg.labels) <= 5
    # Without the speck filter the same palette leaves hundreds of specks.
    rgb = np.ascontiguousarray(arr[..., :3])
    maps = quantise.pixel_maps(arr)
    raw = quantise.assign(rgb, maps, seg.palette, quantise.tolerances(maps))
    assert _tiny_components(raw) > 100
    assert cleanup.photo_like(raw, maps.noise)


def test_speck_filter_keeps_every_colour_when_a_count_is_asked_for() -> None:
    arr = _photo_like(96)
    seg = run(arr, colors=24)
    assert len(seg.palette) == 24


def test_compact_keeps_an_unchanged_map_and_rewrites_otherwise() -> None:
    from printjob_adapters.engine.segmentation import _compact

    labels = np.array([[0, 1, -1], [2, 1, 0]], dtype=np.int32)
    palette = np.array([[10.0, 20, 30], [200, 0, 0], [0, 0, 200]])
    same, pal = _compact(labels, palette, np.array([True, True, True]))
    assert same is labels and pal is palette
    assert (_compact(labels, palette)[0] == labels).all()
    # Colour 0 unused; colour 2 rounds to colour 1: one colour is left, first seen first.
    merged = np.array([[1, 1, -1], [2, 2, 1]], dtype=np.int32)
    twin = np.array([[10.0, 20, 30], [200, 0, 0], [200.2, 0, 0.4]])
    out, pal = _compact(merged, twin)
    assert (out == np.array([[0, 0, -1], [0, 0, 0]])).all() and len(pal) == 1
    assert (_compact(merged, twin, np.array([False, True, True]))[0] == out).all()


@pytest.mark.parametrize("photo", [False, True])
def test_colours_are_the_means_of_their_measured_pixels(photo: bool) -> None:
    """`_estimate_colours` against a pixel-by-pixel reading: a colour is the mean of its
    pixels that are flat (or, in a photo, fully opaque), labelled with it and within the
    sRGB tolerance of it; transparent pixels and pixels without a label never count."""
    rng = np.random.default_rng(7 if photo else 8)
    h, w = 48, 40
    rgba = np.zeros((h, w, 4), dtype=np.uint8)
    base = np.array([[200, 30, 40], [20, 160, 60], [30, 40, 190]], dtype=np.uint8)
    rgba[..., :3] = base[(np.arange(w)[None, :] // 14 + np.arange(h)[:, None] // 16) % 3]
    noise = rng.integers(-3, 4, (h, w, 3))
    rgba[..., :3] = np.clip(rgba[..., :3].astype(int) + noise, 0, 255).astype(np.uint8)
    rgba[..., :3][rng.random((h, w)) < 0.05] = [250, 250, 0]  # far from every colour
    rgba[..., 3] = 255
    rgba[:6, :6, 3] = 0
    rgba[40:, 30:, 3] = 150
    maps = quantise.pixel_maps(rgba)
    tol = quantise.tolerances(maps)
    palette = base.astype(np.float64) + 2.0
    labels = ((np.arange(w)[None, :] // 14 + np.arange(h)[:, None] // 16) % 3).astype(np.int32)
    labels[~maps.opaque] = -1
    labels[20:23, 5:9] = -1  # opaque but without a label: never measured
    got = segmentation._estimate_colours(labels, rgba, maps, palette, tol, photo=photo)
    measured = (maps.solid if photo else maps.flat) & (labels >= 0)
    want = palette.copy()
    for c in range(len(palette)):
        px = rgba[..., :3][measured & (labels == c)].astype(np.float64)
        px = px[((px - palette[c]) ** 2).sum(axis=1) <= tol.rgb**2]
        if len(px):
            want[c] = px.mean(axis=0)
    assert np.allclose(got, want, rtol=0, atol=1e-9)
    assert not np.allclose(got, palette)
