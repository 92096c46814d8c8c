"""Photos at print size, faster: the shortcuts taken for photos over 1 MP give exactly the
results of the general stages they stand in for."""

from __future__ import annotations

import numpy as np
import pytest

from printjob_adapters.engine import cleanup, quantise, segmentation
from printjob_adapters.engine.colour import srgb_to_lab
from printjob_adapters.engine.nearest import RADIUS_POINTS, PointSet


def _peaks_by_pair_query(
    hist: quantise.Histogram, tol: quantise.Tolerances, limit: int
) -> np.ndarray:
    """The candidates as the pair query over every bin defines them."""
    w = hist.flat + 0.25 * hist.edge
    pairs = PointSet(hist.lab).query_pairs(tol.point, output_type="ndarray")
    neighbour_max = np.zeros_like(w)
    np.maximum.at(neighbour_max, pairs[:, 0], w[pairs[:, 1]])
    np.maximum.at(neighbour_max, pairs[:, 1], w[pairs[:, 0]])
    idx = np.flatnonzero((w >= neighbour_max) & (w > 0))
    idx = idx[np.argsort(-w[idx], kind="stable")][:limit]
    return hist.rgb[idx]


def _photo_histogram(seed: int, bins: int) -> quantise.Histogram:
    """A photo-like cloud at print size: a few dense clusters of colours and a sparse
    haze, one mean colour per 6-bit cell, weights summing past 1 MP, ties included."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(20, 235, (6, 3))
    spread = rng.uniform(4, 30, (6, 1))
    cluster = rng.integers(0, 6, bins)
    colour = centres[cluster] + rng.normal(0, 1, (bins, 3)) * spread[cluster]
    haze = rng.random(bins) < 0.2
    colour[haze] = rng.uniform(0, 255, (int(haze.sum()), 3))
    colour = np.clip(colour, 0, 255)
    cell = np.floor(colour / 4).astype(np.int64)
    _, first = np.unique(cell[:, 0] * 4096 + cell[:, 1] * 64 + cell[:, 2], return_index=True)
    # The bin's mean anywhere in its cell, as the histogram's means are.
    rgb = cell[first] * 4 + rng.uniform(0, 3, (len(first), 3))
    flat = np.floor(rng.pareto(1.2, len(first)) * 3)
    edge = np.floor(rng.pareto(1.2, len(first)) * 4)
    scale = 1_500_000 / max(flat.sum() + edge.sum(), 1.0)
    # Whole pixel counts: equal weights stay equal, and ties are part of the test.
    flat, edge = np.floor(flat * scale), np.floor(edge * scale)
    return quantise.Histogram(rgb=rgb, lab=srgb_to_lab(rgb), flat=flat, edge=edge)


@pytest.mark.parametrize("seed", range(6))
def test_a_large_photos_candidates_are_the_pair_querys_peaks(seed: int) -> None:
    hist = _photo_histogram(seed, 12_000)
    assert RADIUS_POINTS < len(hist.rgb) <= quantise.DENSE_BINS  # the path under test
    assert hist.flat.sum() + hist.edge.sum() > quantise.LARGE_PHOTO_PIXELS
    for point in (4.0, 9.0):
        tol = quantise.Tolerances(point=point, rgb=8.0, mix=10.0, split=0.2, min_area=1200.0)
        for limit in (64, 5000):
            expected = _peaks_by_pair_query(hist, tol, limit)
            found = quantise._candidates(hist, tol, limit)
            assert found.shape == expected.shape
            assert np.array_equal(found, expected)


@pytest.mark.parametrize("seed", range(8))
def test_the_settled_mode_filter_gives_the_per_label_result(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Mostly settled maps (smooth regions, ragged borders) take the gathered path, maps
    of 2 x 2 blocks the whole-image one; both give what summing each label gives."""
    rng = np.random.default_rng(seed)
    height, width = (int(v) for v in rng.integers(20, 90, 2))
    colours = int(rng.integers(13, 200))
    coarse = rng.integers(-1, colours, (height // 6 + 1, width // 6 + 1))
    labels = np.repeat(np.repeat(coarse, 6, 0), 6, 1)[:height, :width].astype(np.int32)
    if seed % 2:
        small = rng.integers(-1, colours, (height // 2 + 1, width // 2 + 1))
        labels = np.repeat(np.repeat(small, 2, 0), 2, 1)[:height, :width].astype(np.int32)
    ragged = rng.random((height, width)) < 0.15
    labels[ragged] = rng.integers(-1, colours, int(ragged.sum()))
    monkeypatch.setattr(cleanup, "WINDOW_BLOCK", 97)  # several blocks, one cut mid-row
    by_window = cleanup._majority_by_window(labels)
    monkeypatch.setattr(cleanup, "WINDOW_LABELS", 10**9)
    per_label = cleanup._majority(labels)
    assert (by_window == per_label).all()
    assert (by_window != labels).any()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_table_of_values_gives_what_sorting_gives(seed: int) -> None:
    rng = np.random.default_rng(seed)
    span = int(rng.integers(1, 5_000_000))
    values = rng.integers(0, span, int(rng.integers(1, 300_000))).astype(np.int32)
    values[: len(values) // 3] = values[0]  # a run of ties
    found, inverse = quantise.dense_unique(values, span)
    expected, expected_inverse = np.unique(values, return_inverse=True)
    assert np.array_equal(found, expected)
    assert inverse.dtype == np.int32
    assert np.array_equal(inverse, expected_inverse)


@pytest.mark.parametrize("transparent", [False, True])
def test_a_large_photos_colours_from_the_key_table_are_the_sorted_ones(
    transparent: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `TABLE_KEYS` runs the distinct colours come from a table of every key; pixels
    left out (key -1) must still sort first and be dropped."""
    rng = np.random.default_rng(7)
    rgba = rng.integers(0, 256, (300, 400, 4), dtype=np.uint8)
    rgba[..., 3] = 255
    rgba[100:140, 50:300] = (10, 200, 30, 255)  # a flat band: long runs
    if transparent:
        rgba[::7, ::3, 3] = 0
    maps = quantise.pixel_maps(rgba)
    monkeypatch.setattr(quantise, "TABLE_KEYS", 1 << 40)
    sorted_colours = quantise.distinct_colours(rgba, maps)
    monkeypatch.setattr(quantise, "TABLE_KEYS", 1_000)
    table_colours = quantise.distinct_colours(rgba, maps)
    for field in ("keys", "rgb", "inverse", "count", "flat", "run_colour", "run_length"):
        a, b = getattr(sorted_colours, field), getattr(table_colours, field)
        assert a.dtype == b.dtype, field
        assert np.array_equal(a, b), field


@pytest.mark.parametrize("photo", [False, True])
def test_colour_estimates_from_the_pair_table_are_the_sorted_ones(
    photo: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `bincount`'s reach the (label, colour) pairs come from a table of every pair
    when it is dense enough; the colours must be those the sort gives."""
    rng = np.random.default_rng(11)
    rgba = rng.integers(0, 256, (300, 400, 4), dtype=np.uint8)
    rgba[..., 3] = 255
    rgba[:150, :200] = (240, 240, 230, 255)  # flat areas for the flat-pixel estimate
    rgba[150:, 200:] = (20, 40, 160, 255)
    maps = quantise.pixel_maps(rgba)
    colours = quantise.distinct_colours(rgba, maps)
    palette = rng.uniform(0, 255, (96, 3))
    palette[0], palette[1] = (239, 241, 229), (21, 39, 161)
    labels = rng.integers(0, 96, (300, 400)).astype(np.int32)
    labels[:150, :200], labels[150:, 200:] = 0, 1
    tol = quantise.tolerances(maps)
    assert len(palette) * len(colours.keys) > 1 << 22  # past bincount's reach

    def estimate() -> np.ndarray:
        return segmentation._estimate_colours(
            labels, rgba, maps, palette, tol, colours=colours, photo=photo
        )

    monkeypatch.setattr(segmentation, "DENSE_PAIRS", 0)
    by_sorting = estimate()
    monkeypatch.setattr(segmentation, "DENSE_PAIRS", 1 << 24)
    monkeypatch.setattr(segmentation, "DENSE_PAIRS_PER_RUN", 1 << 20)
    assert np.array_equal(estimate(), by_sorting)
    assert not np.array_equal(by_sorting, palette)  # something was measured


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_corner_groups_are_the_eight_connected_components_of_each_label(seed: int) -> None:
    """The corner joins read every boundary pixel's diagonals in full, clipped at the
    image's edges: the groups must still be each label's 8-connected components, with
    pixels on the last row and the side columns (whose diagonals are off the image)."""
    from scipy import ndimage

    from printjob_adapters.engine import detail

    rng = np.random.default_rng(seed)
    h, w = int(rng.integers(1, 60)), int(rng.integers(1, 60))
    labels = rng.integers(-1, 3, (h, w)).astype(np.int32)
    comps = cleanup.label_components(labels)
    boundary = np.flatnonzero(detail.boundary_mask(labels))
    group, _ = detail.corner_groups(comps, labels, boundary)
    pixel_group = group[comps.to_id[comps.base]]
    for label in range(3):
        inside = labels == label
        reference, _ = ndimage.label(inside, structure=np.ones((3, 3)))
        pairs = set(zip(pixel_group[inside].tolist(), reference[inside].tolist(), strict=True))
        assert len(pairs) == len(set(pixel_group[inside].tolist()))
        assert len(pairs) == len(set(reference[inside].tolist()))
