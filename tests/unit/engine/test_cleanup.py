"""Speckle clean-up on hand-made label maps."""

from __future__ import annotations

import numpy as np

from printjob_adapters.engine.cleanup import _components_graph, components, remove_speckles

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


def test_components_grid_agrees_with_graph_for_many_colours() -> None:
    from printjob_adapters.engine.cleanup import _components_grid

    labels = np.random.default_rng(1).integers(-1, 9, (40, 50)).astype(np.int32)
    comp, n = _components_grid(labels)
    comp2, _ = _components_graph(labels)
    inside = labels >= 0
    pairs = np.unique(np.stack([comp[inside], comp2[inside]], 1), axis=0)
    assert len(pairs) == len(np.unique(comp[inside])) == len(np.unique(comp2[inside]))
    assert (comp[~inside] == 0).all() and comp.max() < n


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
