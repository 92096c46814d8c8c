"""Photos at print size, round 4: the tables that stand in for sorts and lists in the
detail mask, the speck filters and the edge unmixing give exactly the results of the
paths they replace."""

from __future__ import annotations

import numpy as np
import pytest

from printjob_adapters.engine import cleanup, detail, quantise


def _speckled(seed: int, colours: int, shape: tuple[int, int] = (61, 83)) -> np.ndarray:
    """A label map of blocks with many specks and some transparent (-1) pixels."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(-1, colours, (shape[0] // 5 + 1, shape[1] // 5 + 1))
    labels = np.kron(coarse, np.ones((5, 5), dtype=np.int64))[: shape[0], : shape[1]]
    specks = rng.random(shape) < 0.3
    labels[specks] = rng.integers(-1, colours, int(specks.sum()))
    return labels.astype(np.int32)


@pytest.mark.parametrize(("seed", "colours"), [(0, 2), (1, 5), (2, 16), (3, 40)])
def test_surrounding_labels_from_the_count_table_are_the_sorted_ones(
    monkeypatch: pytest.MonkeyPatch, seed: int, colours: int
) -> None:
    labels = _speckled(seed, colours)
    comps = cleanup.label_components(labels)
    boundary = np.flatnonzero(detail.boundary_mask(labels))
    group, groups = detail.corner_groups(comps, labels, boundary)
    group_of = detail._GroupOf(comps.base.ravel(), group.take(comps.to_id))
    for wanted in (
        np.ones(labels.size, dtype=bool),
        np.random.default_rng(seed).random(labels.size) < 0.4,
    ):
        at = np.flatnonzero(wanted & (labels.ravel() >= 0))
        at_group = group_of(at)
        # The table whatever its size against the keys, then the sort.
        monkeypatch.setattr(detail, "DENSE_PAIRS_PER_KEY", 10**6)
        first, second = detail._surrounding_labels(labels, at_group, at, groups)
        monkeypatch.setattr(detail, "DENSE_PAIRS", 0)
        sorted_first, sorted_second = detail._surrounding_labels(labels, at_group, at, groups)
        monkeypatch.undo()
        assert (first == sorted_first).all()
        assert (second == sorted_second).all()
        assert (first >= -1).any() and (second >= -1).any() and (second == -2).any()


def _pairs_by_listing(
    comps: cleanup.Components, current: tuple[np.ndarray, np.ndarray], small: np.ndarray
) -> np.ndarray:
    """The (small component, neighbouring label) pairs, each pixel's neighbours listed."""
    cur, q = current
    found = set()
    for i, own in enumerate(cur):
        if not small[own]:
            continue
        for other in q[i]:
            if other >= 0 and comps.label[other] >= 0 and comps.label[other] != comps.label[own]:
                found.add((int(own), int(comps.label[other])))
    return np.array(sorted(found), dtype=np.int64).reshape(-1, 2)


@pytest.mark.parametrize(("seed", "colours"), [(4, 3), (5, 12)])
def test_neighbour_pairs_from_the_table_are_the_listed_ones(
    monkeypatch: pytest.MonkeyPatch, seed: int, colours: int
) -> None:
    labels = _speckled(seed, colours)
    comps = cleanup.label_components(labels)
    small = (comps.size <= cleanup.SPECKLE_MAX) & (comps.label >= 0)
    pixels = cleanup._pixels_of(comps, small)
    current = cleanup._current_ids(comps, pixels)
    expected = _pairs_by_listing(comps, current, small)
    assert len(expected) > 100
    assert np.array_equal(cleanup._neighbour_pairs(comps, current, small), expected)
    monkeypatch.setattr(cleanup, "_PAIR_TABLE", 0)
    assert np.array_equal(cleanup._neighbour_pairs(comps, current, small), expected)


@pytest.mark.parametrize("seed", [6, 7])
def test_the_speck_filters_are_the_same_with_the_ids_read_once(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """`_merge` given the pass's ids, or reading them itself: the same components."""
    labels = _speckled(seed, 8)
    rng = np.random.default_rng(seed)
    palette = rng.uniform(0, 255, (8, 3))
    rgb = np.clip(palette[np.maximum(labels, 0)] + rng.normal(0, 6, (*labels.shape, 3)), 0, 255)
    rgb = rgb.astype(np.uint8)
    cleaned = cleanup.clean_speckles(labels, rgb, palette, 6.0, 10.0, 8.0)
    specks = cleanup.merge_specks(labels, rgb, palette, max_size=20)
    original = cleanup._merge

    def reading_itself(comps, new_label, pixels, current=None):  # type: ignore[no-untyped-def]
        return original(comps, new_label, pixels)

    monkeypatch.setattr(cleanup, "_merge", reading_itself)
    assert (
        cleanup.clean_speckles(labels, rgb, palette, 6.0, 10.0, 8.0).ids() == cleaned.ids()
    ).all()
    assert (cleanup.merge_specks(labels, rgb, palette, max_size=20) == specks).all()
    assert (specks != labels).any()


@pytest.mark.parametrize(("seed", "colours"), [(8, 20), (9, 48)])
def test_edges_unmixed_by_the_table_per_colour_as_per_pixel(
    monkeypatch: pytest.MonkeyPatch, seed: int, colours: int
) -> None:
    """A photo-like image of more than `MASK_COLOURS` colours whose distinct colours are
    fewer than half its edge pixels (the large table's case), unmixed both ways."""
    rng = np.random.default_rng(seed)
    h, w = 96, 128
    palette = rng.uniform(0, 255, (colours, 3))
    coarse = rng.integers(0, colours, (h // 8 + 1, w // 8 + 1))
    labels = np.kron(coarse, np.ones((8, 8), dtype=np.int64))[:h, :w].astype(np.int32)
    # Colours in steps of 16: few distinct ones, many pixels each.
    rgb = palette[labels] + rng.normal(0, 14, (h, w, 3))
    rgb = (np.clip(rgb, 0, 255) // 16 * 16).astype(np.uint8)
    rgba = np.concatenate([rgb, np.full((h, w, 1), 255, dtype=np.uint8)], axis=2)
    maps = quantise.pixel_maps(rgba)
    colours_found = quantise.distinct_colours(rgba, maps)
    edge = ~maps.flat & maps.opaque
    reliable = maps.flat | (rng.random((h, w)) < 0.3)
    tol = quantise.Tolerances(point=4.0, rgb=8.0, mix=30.0, split=0.2, min_area=10.0)
    assert colours > quantise.MASK_COLOURS
    assert 2 * len(colours_found.keys) <= int((edge & quantise._dilate(reliable, 3)).sum())

    def unmixed(entries: int) -> np.ndarray:
        monkeypatch.setattr(quantise, "SMALL_TABLE_ENTRIES", 0)
        monkeypatch.setattr(quantise, "TABLE_ENTRIES", entries)
        out = labels.copy()
        quantise._unmix_edges(out, rgba, edge, reliable, palette, tol, colours_found)
        return out

    monkeypatch.setattr(quantise, "TABLE_COLOURS", 64)
    by_table = unmixed(1 << 24)
    by_pixel = unmixed(0)
    assert (by_table == by_pixel).all()
    assert (by_table != labels).any()
