"""Speckle clean-up on hand-made label maps."""

from __future__ import annotations

import numpy as np
import pytest

from printjob_adapters.engine.cleanup import (
    _components_graph,
    _merge,
    _pixels_of,
    clean_speckles,
    components,
    label_components,
    photo_like,
    remove_speckles,
)

PALETTE = np.array([[255.0, 255, 255], [200, 30, 40], [20, 20, 140]])


def image(labels: np.ndarray) -> np.ndarray:
    return PALETTE[labels].astype(np.uint8)


def test_components_per_colour_and_graph_agree() -> None:
    rng = np.random.default_rng(0)
    labels = rng.integers(-1, 3, (40, 50)).astype(np.int32)
    comp, n = components(labels)
    comp2, n2 = _components_graph(labels)
    inside = labels >= 0
    a, b = comp[inside], comp2[inside]
    # Same partition: a one-to-one map between the two numberings.
    pairs = np.unique(np.stack([a, b], 1), axis=0)
    assert len(pairs) == len(np.unique(a)) == len(np.unique(b))
    assert a.max() < n and b.max() < n2
    assert (comp[~inside] == 0).all() and (comp2[~inside] == 0).all()


def test_off_colour_speckle_is_merged_but_true_colour_dot_kept() -> None:
    labels = np.zeros((30, 30), np.int32)
    labels[:, 15:] = 2
    rgb = image(labels)
    # A pixel labelled red whose colour is nearly white: noise, not a red dot.
    labels[5, 5] = 1
    rgb[5, 5] = (240, 235, 235)
    # A genuine 2x2 red dot and a 1-px red line on blue.
    labels[20:22, 5:7] = 1
    rgb[20:22, 5:7] = PALETTE[1]
    labels[3:27, 25] = 1
    rgb[3:27, 25] = PALETTE[1]
    out = remove_speckles(labels, rgb, PALETTE, point_tol=2.0, mix_tol=8.0, noise=0.0)
    assert out[5, 5] == 0
    assert (out[20:22, 5:7] == 1).all()
    assert (out[3:27, 25] == 1).all()


def test_mixture_speckle_goes_to_nearer_neighbour() -> None:
    pal = np.array([[255.0, 255, 255], [20, 20, 20], [128, 128, 128]])
    labels = np.zeros((20, 20), np.int32)
    labels[:, 10:] = 1
    rgb = pal[labels].astype(np.uint8)
    # A grey pixel on the white/black edge is a mixture, even though grey is a palette colour.
    labels[8, 10] = 2
    rgb[8, 10] = (120, 120, 120)
    out = remove_speckles(labels, rgb, pal, point_tol=2.0, mix_tol=8.0, noise=0.0)
    assert out[8, 10] == 1


def test_lone_pixels_in_noisy_input_are_merged() -> None:
    labels = np.zeros((20, 20), np.int32)
    labels[10, 10] = 2
    rgb = image(labels)
    out = remove_speckles(labels, rgb, PALETTE, point_tol=2.0, mix_tol=8.0, noise=10.0)
    assert out[10, 10] == 0
    kept = remove_speckles(labels, rgb, PALETTE, point_tol=2.0, mix_tol=8.0, noise=0.0)
    assert kept[10, 10] == 2


def test_transparent_pixels_stay_transparent() -> None:
    labels = np.full((10, 10), -1, np.int32)
    labels[4, 4] = 1
    out = remove_speckles(labels, image(np.maximum(labels, 0)), PALETTE, 2.0, 8.0, 10.0)
    assert (out == labels).all()


def test_components_agree_with_graph_for_many_colours() -> None:
    labels = np.random.default_rng(1).integers(-1, 9, (40, 50)).astype(np.int32)
    comp, n = components(labels)
    comp2, _ = _components_graph(labels)
    inside = labels >= 0
    pairs = np.unique(np.stack([comp[inside], comp2[inside]], 1), axis=0)
    assert len(pairs) == len(np.unique(comp[inside])) == len(np.unique(comp2[inside]))
    assert (comp[~inside] == 0).all() and comp.max() < n


def _blobs(
    seed: int, colours: int, shape: tuple[int, int] = (37, 53), block: int = 6, specks: float = 0.15
) -> np.ndarray:
    """A label map of blocks with scattered specks, some transparent (-1) pixels."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(-1, colours, (shape[0] // block + 1, shape[1] // block + 1))
    labels = np.kron(coarse, np.ones((block, block), dtype=np.int64))[: shape[0], : shape[1]]
    specks = rng.random(shape) < specks
    labels[specks] = rng.integers(-1, colours, int(specks.sum()))
    return labels.astype(np.int32)


def _expected_order(labels: np.ndarray, comp: np.ndarray) -> np.ndarray:
    """Component ids sorted the way `components` numbers them (first pixel, per colour
    first when there are at most 4 colours)."""
    ids = comp.ravel()
    first = np.full(ids.max() + 1, ids.size)
    np.minimum.at(first, ids, np.arange(ids.size))
    lab = np.full(ids.max() + 1, -1)
    lab[ids] = labels.ravel()
    keep = np.flatnonzero(lab >= 0)
    if labels.max() + 1 > 4:
        return keep[np.argsort(first[keep])]
    return keep[np.lexsort((first[keep], lab[keep]))]


@pytest.mark.parametrize(
    ("seed", "colours", "block", "specks"),
    # Specks make many run joins (photo-like), big plain blocks few (flat art).
    [
        (0, 1, 6, 0.15),
        (1, 3, 6, 0.15),
        (2, 4, 6, 0.15),
        (3, 5, 6, 0.15),
        (4, 12, 6, 0.15),
        (5, 3, 40, 0.0),
        (6, 9, 40, 0.001),
    ],
)
def test_component_numbering_and_facts(seed: int, colours: int, block: int, specks: float) -> None:
    labels = _blobs(seed, colours, (150, 170), block, specks)
    comps = label_components(labels)
    comp = comps.ids()
    # Ids 1, 2, ... in order: colour by colour for up to 4 colours, else by first pixel.
    assert (_expected_order(labels, comp) == np.arange(1, comps.count)).all()
    assert (comps.labels() == labels).all()
    assert (comps.size == np.bincount(comp.ravel(), minlength=comps.count)).all()
    ref, _ = _components_graph(labels)
    inside = labels >= 0
    pairs = np.unique(np.stack([comp[inside], ref[inside]], 1), axis=0)
    assert len(pairs) == len(np.unique(comp[inside])) == len(np.unique(ref[inside]))


@pytest.mark.parametrize(("seed", "colours"), [(5, 3), (6, 4), (7, 6), (8, 12)])
def test_merging_components_matches_labelling_afresh(seed: int, colours: int) -> None:
    labels = _blobs(seed, colours)
    comps = label_components(labels)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        small = (comps.size <= 6) & (comps.label >= 0)
        pixels = _pixels_of(comps, small)
        # Every small component takes a random colour (possibly a neighbour's, possibly
        # one that no neighbour has), as a speckle merge does.
        new_label = comps.label.copy()
        movers = np.flatnonzero(small)
        new_label[movers] = rng.integers(0, colours, len(movers))
        merged = _merge(comps, new_label, pixels)
        fresh = label_components(new_label[comps.ids()])
        assert (merged.ids() == fresh.ids()).all()
        assert (merged.label == fresh.label).all()
        assert (merged.size == fresh.size).all()
        assert (merged.first == fresh.first).all()
        comps = merged


def test_photo_like_with_known_components_agrees() -> None:
    labels = _blobs(9, 3, (80, 90))
    comps = clean_speckles(labels, image(np.maximum(labels, 0)), PALETTE, 2.0, 8.0, 10.0)
    cleaned = comps.labels()
    assert (cleaned != labels).any()
    assert (
        cleaned == remove_speckles(labels, image(np.maximum(labels, 0)), PALETTE, 2.0, 8.0, 10.0)
    ).all()
    assert photo_like(cleaned, 0.0, comps) == photo_like(cleaned, 0.0)


def test_merge_specks_leaves_no_small_component_and_never_swaps() -> None:
    from printjob_adapters.engine.cleanup import components, merge_specks

    labels = np.zeros((40, 40), np.int32)
    labels[:, 20:] = 2
    labels[5, 5] = 1  # a lone speck in white
    labels[10:12, 30:32] = 1  # a 2x2 speck in blue
    labels[20, 19] = 2  # two touching specks of different colours
    labels[20, 18] = 1
    out = merge_specks(labels, image(labels), PALETTE, max_size=8)
    comp, n = components(out)
    size = np.bincount(comp.ravel(), minlength=n)
    assert ((size[1:] == 0) | (size[1:] >= 8)).all()
    assert out[5, 5] == 0 and (out[10:12, 30:32] == 2).all()


def test_two_nearest_matches_a_stable_sort() -> None:
    from printjob_adapters.engine.cleanup import _two_nearest

    rng = np.random.default_rng(12)
    group = np.sort(rng.integers(0, 300, 2000))
    d = rng.integers(0, 6, 2000).astype(float)  # many ties
    best, second = _two_nearest(group, d)
    order = np.lexsort((d, group))
    head = np.ones(len(order), dtype=bool)
    head[1:] = group[order][1:] != group[order][:-1]
    starts = np.flatnonzero(head)
    assert (best == order[starts]).all()
    has2 = np.append(starts[1:], len(order)) - starts > 1
    assert (second[has2] == order[starts[has2] + 1]).all()
    assert (second[~has2] == -1).all()


def _reference_majority(labels: np.ndarray) -> np.ndarray:
    """The mode filter as first written: a window sum per label, boolean-indexed updates."""
    from scipy import ndimage

    best = np.zeros(labels.shape, dtype=np.uint8)
    winner = labels.copy()
    own = np.zeros(labels.shape, dtype=np.uint8)
    for value in range(-1, int(labels.max()) + 1):
        hit = labels == value
        count = ndimage.uniform_filter(hit.astype(np.float64), 3, mode="constant") * 9
        count = np.rint(count).astype(np.uint8)
        better = count > best
        best[better] = count[better]
        winner[better] = value
        own[hit] = count[hit]
    return np.where(best > own, winner, labels)


@pytest.mark.parametrize("colours", [2, 5, 40, 200])
def test_majority_pass_matches_reference(colours: int) -> None:
    from printjob_adapters.engine.cleanup import _majority

    labels = np.random.default_rng(colours).integers(-1, colours, (50, 61)).astype(np.int32)
    assert (_majority(labels) == _reference_majority(labels)).all()


def test_distinct_keys_by_bitmap_or_sort() -> None:
    from printjob_adapters.engine.cleanup import _distinct_keys

    keys = np.random.default_rng(13).integers(0, 5000, 3000).astype(np.int64)
    want = np.unique(keys)
    assert (_distinct_keys(keys, 5000) == want).all()  # bitmap
    assert (_distinct_keys(keys, 1 << 30) == want).all()  # sort
    assert len(_distinct_keys(keys[:0], 10)) == 0
