"""Colour conversions and the quantisation steps on their own."""

from __future__ import annotations

import io

import numpy as np
import pytest
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


def test_spread5_matches_rank_filters_and_keys_read_rgba() -> None:
    from scipy import ndimage

    rng = np.random.default_rng(3)
    for shape in [(1, 1, 4), (1, 7, 3), (2, 2, 4), (5, 3, 3), (17, 23, 4)]:
        img = rng.integers(0, 256, shape).astype(np.uint8)
        want = np.stack(
            [
                ndimage.maximum_filter(img[..., c], 5) - ndimage.minimum_filter(img[..., c], 5)
                for c in range(shape[2])
            ],
            axis=-1,
        )
        assert (quantise._spread5(img) == want[..., :3].max(axis=-1)).all()
        mask = rng.random(shape[:2]) < 0.8
        eroded = ndimage.minimum_filter(mask.view(np.uint8), 5).view(bool)
        assert (~quantise._dilate(~mask, 2) == eroded).all()
        if shape[2] == 4:
            rgb = np.ascontiguousarray(img[..., :3])
            assert (quantise.colour_keys(img) == quantise.colour_keys(rgb)).all()


@pytest.mark.parametrize("band_bytes", [1, 8, 64, 1 << 17])
def test_spread5_in_bands_is_the_whole_image_filter(
    band_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bands of one row up to the whole image give the rank filters' answer, at every
    band edge and image border."""
    from scipy import ndimage

    monkeypatch.setattr(quantise, "SPREAD_BAND_BYTES", band_bytes)
    rng = np.random.default_rng(band_bytes)
    for shape in [
        (1, 5, 4), (3, 6, 3), (6, 1, 4), (5, 5, 4), (8, 5, 4), (5, 11, 3),
        (40, 9, 4), (67, 66, 3), (130, 7, 4),
    ]:  # fmt: skip
        # Few levels, so flat runs and equal neighbours occur as in artwork.
        img = (rng.integers(0, 4, shape) * 60).astype(np.uint8)
        want = np.stack(
            [
                ndimage.maximum_filter(img[..., c], 5) - ndimage.minimum_filter(img[..., c], 5)
                for c in range(3)
            ],
            axis=-1,
        ).max(axis=-1)
        assert (quantise._spread5(img) == want).all()


def test_opacity_and_low_counts_match_their_definitions() -> None:
    rng = np.random.default_rng(5)
    img = rng.integers(0, 256, (31, 17, 4)).astype(np.uint8)
    img[..., 3] = rng.choice([0, 127, 128, 200, 254, 255], (31, 17))
    opaque, solid = quantise._opacity(img)
    assert (opaque == (img[..., 3] >= 128)).all() and (solid == (img[..., 3] == 255)).all()
    strided = img[:, ::2]
    opaque, solid = quantise._opacity(strided)
    assert (opaque == (strided[..., 3] >= 128)).all()
    assert (solid == (strided[..., 3] == 255)).all()
    opaque, solid = quantise._opacity(np.ascontiguousarray(img[..., :3]))
    assert opaque.all() and solid.all()
    values = rng.choice([0, 0, 0, 1, 5, 16, 17, 200], 5000).astype(np.uint8)
    want = np.bincount(values, minlength=256)[:17]
    assert (quantise._low_counts(values, 17) == want).all()
    assert (quantise._low_counts(values[:0], 17) == 0).all()


def _reference_assign(rgb, maps, palette, tol):  # type: ignore[no-untyped-def]
    """`assign` as first written: per-pixel candidate distances, every edge pixel tested."""
    h, w = maps.opaque.shape
    labels = np.full((h, w), -1, dtype=np.int32)
    idx, dist = quantise.nearest(srgb_to_lab(rgb[maps.opaque].astype(float)), srgb_to_lab(palette))
    labels[maps.opaque] = idx
    pure = np.zeros((h, w), dtype=bool)
    pure[maps.opaque] = dist <= tol.point
    reliable = np.where(maps.flat & pure, labels, -1)
    ys, xs = np.nonzero(maps.opaque & ~maps.flat & quantise._dilate(reliable >= 0, 3))
    rel = np.pad(reliable, 3, constant_values=-1)
    cand = np.stack([rel[ys + 3 + dy, xs + 3 + dx] for dy, dx in quantise._OFFSETS], axis=1)
    col = rgb[ys, xs].astype(np.float32)
    diff = col[:, None, :] - palette.astype(np.float32)[np.maximum(cand, 0)]
    cd = (diff * diff).sum(axis=-1)
    cd[cand < 0] = np.inf
    rows = np.arange(len(ys))
    first = np.argmin(cd, axis=1)
    b1, d1 = cand[rows, first], np.sqrt(cd[rows, first])
    cd[cand == b1[:, None]] = np.inf
    second = np.argmin(cd, axis=1)
    b2 = cand[rows, second]
    has_pair = (b1 >= 0) & np.isfinite(cd[rows, second])
    res, _ = quantise.segment_residual(col.astype(float), palette[b1], palette[b2], tol.split)
    absent = ~(cand == labels[ys, xs][:, None]).any(axis=1)
    ringing = (b1 >= 0) & absent & (d1 <= quantise.RINGING_REACH * tol.mix)
    take = (has_pair & (res < tol.mix)) | ringing
    labels[ys[take], xs[take]] = b1[take]
    return labels


@pytest.mark.parametrize(
    ("colours", "size", "noise", "alpha"),
    [(5, 100, 0, False), (12, 120, 0, False), (12, 64, 4, True), (30, 96, 0, False)],
)
def test_assign_matches_reference(colours: int, size: int, noise: int, alpha: bool) -> None:
    # Anti-aliased discs (edges between interiors and Lanczos ringing). Clean with few
    # colours: distances per distinct colour; noisy (more distinct colours than edge
    # pixels): per pixel; 30 colours: per candidate.
    rng = np.random.default_rng(colours)
    pal = rng.integers(0, 256, (colours, 3))
    big = Image.new("RGB", (size * 4, size * 4), tuple(int(v) for v in pal[0]))
    d = ImageDraw.Draw(big)
    step = size * 4 // 6
    for i, c in enumerate(pal[1:]):
        x, y = (i % 6) * step + 4, (i // 6) * step + 4
        r = int(rng.integers(step // 2, step + step // 2))
        d.ellipse([x, y, x + r, y + r], fill=tuple(int(v) for v in c))
    small = np.asarray(big.resize((size, size), Image.Resampling.LANCZOS)).astype(int)
    small = np.clip(small + rng.integers(-noise, noise + 1, small.shape), 0, 255)
    arr = np.full((size, size, 4), 255, np.uint8)
    arr[..., :3] = small
    if alpha:
        arr[: size // 4, : size // 3, 3] = 0
    maps = quantise.pixel_maps(arr)
    tol = quantise.tolerances(maps)
    rgb = np.ascontiguousarray(arr[..., :3])
    palette = pal.astype(np.float64)
    want = _reference_assign(rgb, maps, palette, tol)
    assert (quantise.assign(rgb, maps, palette, tol) == want).all()
    assert (quantise.assign(arr, maps, palette, tol) == want).all()


@pytest.mark.parametrize("flip", [False, True])
def test_assign_breaks_exact_ties_by_position_like_reference(flip: bool) -> None:
    # A 1-px column exactly halfway between black and red, both interiors around it: its
    # two nearest interior colours tie, and the first in `_OFFSETS` order wins.
    arr = np.full((40, 41, 4), 255, np.uint8)
    arr[:, :20, :3] = (0, 0, 0)
    arr[:, 20, :3] = (100, 0, 0)
    arr[:, 21:, :3] = (200, 0, 0)
    arr[10:14, 5:9, :3] = (0, 0, 255)  # a third colour, so there are more than two
    if flip:
        arr = np.ascontiguousarray(arr[:, ::-1])
    maps = quantise.pixel_maps(arr)
    tol = quantise.tolerances(maps)
    rgb = np.ascontiguousarray(arr[..., :3])
    palette = np.array([[100.0, 0, 0], [0, 0, 0], [200, 0, 0], [0, 0, 255]])
    want = _reference_assign(rgb, maps, palette, tol)
    got = quantise.assign(rgb, maps, palette, tol)
    assert (got == want).all()
    assert set(np.unique(got[:, 20])) <= {1, 2}  # the mixture column joined a neighbour


def test_count_runs_is_bincount_and_runs_rebuild_the_values() -> None:
    rng = np.random.default_rng(11)
    for n, levels, run in [(0, 3, 1), (1, 3, 1), (500, 4, 40), (500, 7, 1), (3000, 2, 300)]:
        # Runs of random lengths (label maps), or a value per step (noise, the fallback).
        values = np.repeat(rng.integers(0, levels, n), rng.integers(1, run + 1, n))[:n]
        for dtype in (np.int32, np.int64):
            typed = values.astype(dtype)
            want = np.bincount(typed, minlength=levels + 2)
            got = quantise.count_runs(typed.reshape(1, -1) if n else typed, levels + 2)
            assert got.dtype == np.int64 and (got == want).all()
            # Values down to -2 counted two bins up, as the tint count keys its pixels.
            shifted = quantise.count_runs(typed - 2, levels + 2, shift=2)
            assert shifted.dtype == np.int64 and (shifted == want).all()
            run_value, run_length = quantise.runs_of(typed)
            assert (np.repeat(run_value, run_length) == typed).all()
            assert (run_value[1:] != run_value[:-1]).all()


@pytest.mark.parametrize("k", [1, 3, 8])
def test_nearest_colour_of_each_mask_is_the_loops_answer(
    k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table per (distinct colour, interior mask) gives the colour-by-colour loop's
    nearest colour and ties, ties included (coarse values make many)."""
    rng = np.random.default_rng(k)
    levels = np.array([0, 60, 120, 180, 240], dtype=np.uint8)
    rgba = levels[rng.integers(0, len(levels), (30, 40, 4))]
    rgba[..., 3] = 255
    rgba[:3, :, 3] = 0
    maps = quantise.pixel_maps(rgba)
    colours = quantise.distinct_colours(rgba, maps)
    pal32 = levels[rng.integers(0, len(levels), (k, 3))].astype(np.float32)
    table = quantise._squared_distances(colours.rgb.astype(np.float32), pal32)
    at = np.flatnonzero(maps.opaque.ravel())
    labels = rng.integers(-1, k, (30, 40)).astype(np.int32)
    around: np.ndarray[tuple[int, int], np.dtype[np.unsignedinteger]] = rng.integers(
        0, 1 << k, (30, 40)
    ).astype(np.uint8 if k <= 8 else np.uint16)
    rows = quantise.pixel_rows(rgba)
    by_table = quantise._nearest_may_differ(around, labels, at, rows, colours, pal32, table)
    monkeypatch.setattr(quantise, "MAY_DIFFER_TABLE", 0)
    by_loop = quantise._nearest_may_differ(around, labels, at, rows, colours, pal32, table)
    assert by_table.dtype == bool and by_table.any() and not by_table.all()
    assert np.array_equal(by_table, by_loop)


@pytest.mark.parametrize("k", [1, 3, 8])
def test_table_of_the_masks_seen_gives_the_full_tables_answer(
    k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table cut down to the interior masks the edge pixels have answers as the table
    of every mask and as the colour-by-colour loop, ties included."""
    rng = np.random.default_rng(10 + k)
    levels = np.array([0, 60, 120, 180, 240], dtype=np.uint8)
    rgba = levels[rng.integers(0, len(levels), (30, 40, 4))]
    rgba[..., 3] = 255
    maps = quantise.pixel_maps(rgba)
    colours = quantise.distinct_colours(rgba, maps)
    pal32 = levels[rng.integers(0, len(levels), (k, 3))].astype(np.float32)
    table = quantise._squared_distances(colours.rgb.astype(np.float32), pal32)
    at = np.flatnonzero(maps.opaque.ravel())
    labels = rng.integers(-1, k, (30, 40)).astype(np.int32)
    # A few masks only, as edge pixels have.
    masks = rng.integers(0, 1 << k, 3)
    around = masks[rng.integers(0, len(masks), (30, 40))].astype(np.uint8)
    rows = quantise.pixel_rows(rgba)
    answers = []
    for seen_from, table_most in ((0, 1 << 16), (1 << 30, 1 << 16), (0, 0)):
        monkeypatch.setattr(quantise, "SEEN_MASKS_FROM", seen_from)
        monkeypatch.setattr(quantise, "MAY_DIFFER_TABLE", table_most)
        answers.append(
            quantise._nearest_may_differ(around, labels, at, rows, colours, pal32, table)
        )
    assert answers[0].dtype == bool and answers[0].any()
    assert np.array_equal(answers[0], answers[1]) and np.array_equal(answers[0], answers[2])


@pytest.mark.parametrize("k", [2, 8, 16])
def test_interior_bits_are_the_interior_colours_among_the_24_candidates(k: int) -> None:
    rng = np.random.default_rng(k)
    h, w = 23, 31
    labels = rng.integers(-1, k, (h, w)).astype(np.int32)
    reliable = (rng.random((h, w)) < 0.3) & (labels >= 0)
    bits, around = quantise._interior_bits(labels, reliable, k)
    want = np.zeros((h, w), dtype=np.int64)
    for y in range(h):
        for x in range(w):
            for dy, dx in quantise._OFFSETS:
                yy, xx = y + dy, x + dx
                if 0 <= yy < h and 0 <= xx < w and reliable[yy, xx]:
                    want[y, x] |= 1 << int(labels[yy, xx])
    # The windows hold the pixel itself too; edge pixels, where the masks are read, are
    # never interiors.
    edge = ~reliable
    assert np.array_equal(around[edge].astype(np.int64), want[edge])
    stride = w + 6
    inner = bits.ravel()[(np.arange(h)[:, None] + 3) * stride + np.arange(w)[None, :] + 3]
    assert np.array_equal(inner, np.where(reliable, 1 << np.maximum(labels, 0), 0))


@pytest.mark.parametrize("k", [2, 8, 16])
def test_interior_bits_from_given_label_bits_are_those_from_the_labels(k: int) -> None:
    """`assign` hands over each pixel's bit where its colour is pure (0 elsewhere) and the
    flat mask; the masks are those of the labels with the reliable (pure and flat) pixels."""
    rng = np.random.default_rng(100 + k)
    h, w = 19, 27
    labels = rng.integers(-1, k, (h, w)).astype(np.int32)
    pure = (rng.random((h, w)) < 0.6) & (labels >= 0)
    flat = rng.random((h, w)) < 0.5
    bit = np.uint8 if k <= 8 else np.uint16
    label_bits = np.where(pure, np.left_shift(1, np.maximum(labels, 0)), 0).astype(bit)
    bits, around = quantise._interior_bits(labels, pure & flat, k)
    given_bits, given_around = quantise._interior_bits(labels, flat, k, label_bits)
    assert np.array_equal(bits, given_bits) and np.array_equal(around, given_around)
    assert around.any()


@pytest.mark.parametrize("band_bytes", [1, 64, 1 << 17])
def test_spread5_finds_the_solid_interiors_as_an_alpha_minimum(
    band_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fully opaque 5x5 windows, found by the spread's own pass: the same as eroding
    the fully opaque pixels (`_dilate` of the rest), at every band edge and border."""
    monkeypatch.setattr(quantise, "SPREAD_BAND_BYTES", band_bytes)
    rng = np.random.default_rng(band_bytes)
    for shape in [(1, 1, 4), (3, 7, 4), (5, 5, 4), (9, 4, 4), (40, 33, 4), (67, 66, 4)]:
        img = rng.integers(0, 256, shape).astype(np.uint8)
        img[..., 3] = np.where(rng.random(shape[:2]) < 0.97, 255, rng.integers(0, 255))
        interior = np.zeros(shape[:2], dtype=bool)
        spread = quantise._spread5(img, interior)
        assert np.array_equal(spread, quantise._spread5(img))
        assert np.array_equal(interior, ~quantise._dilate(img[..., 3] != 255, 2))
        saturated = quantise._spread5(img, interior.copy(), saturate_outside=True)
        assert np.array_equal(saturated, np.where(interior, spread, 255))


@pytest.mark.parametrize("transparent", [False, True])
def test_colour_runs_from_the_grids_row_changes_are_those_of_every_key(transparent: bool) -> None:
    """The distinct colours found from the pixels that differ from the one before them in
    their row (`pixel_grid.RowChanges`) are those found from every pixel's key: runs that
    cross rows, alpha either side of 128 and colour behind transparency included."""
    from printjob_adapters.engine import pixel_grid

    rng = np.random.default_rng(7 + transparent)
    for h, w in [(128, 160), (97, 203), (130, 70)]:
        blocks = rng.integers(0, 3, (h // 32 + 1, w // 64 + 1, 4)).astype(np.uint8) * 120
        rgba = np.ascontiguousarray(np.repeat(np.repeat(blocks, 32, 0), 64, 1)[:h, :w])
        if transparent:
            rgba[..., 3] = np.where(rgba[..., 3] == 0, 0, np.where(rgba[..., 3] > 200, 255, 127))
            rgba[5, :, :3] = rng.integers(0, 256, (w, 3))  # colour under transparency
        else:
            rgba[..., 3] = 255
        rgba[h // 2, w // 3] = (9, 9, 9, 255)  # a lone pixel
        _, changes = pixel_grid.detect_grid_and_changes(rgba)
        assert changes is not None
        maps = quantise.pixel_maps(rgba)
        every = quantise.distinct_colours(rgba, maps)
        listed = quantise.distinct_colours(rgba, maps, changes.after)
        for name in ("keys", "rgb", "inverse", "count", "flat", "run_colour", "run_length"):
            assert np.array_equal(getattr(every, name), getattr(listed, name)), name
        assert len(every.keys) > 2
