"""Background removal decisions on label maps."""

from __future__ import annotations

import numpy as np

from printjob_adapters.engine.background import remove_background


def test_border_majority_colour_removed_enclosed_islands_kept() -> None:
    # Design decision 13: only what surrounds the design goes; an enclosed island of the
    # background's colour is part of the design (no holes punched in a subject).
    labels = np.zeros((20, 20), np.int32)
    labels[4:16, 4:16] = 1
    labels[8:12, 8:12] = 0  # counter inside the shape
    out = remove_background(labels)
    assert out.removed and out.index == 0
    outside = labels == 0
    outside[8:12, 8:12] = False
    assert (out.labels[outside] == -1).all()
    assert (out.labels[8:12, 8:12] == 0).all()
    assert (out.labels[labels == 1] == 1).all()


def test_transparent_border_is_the_background() -> None:
    labels = np.full((20, 20), -1, np.int32)
    labels[5:15, 5:15] = 0
    labels[8:12, 8:12] = 1
    out = remove_background(labels)
    assert out.removed and out.index is None
    assert (out.labels == labels).all()


def test_no_majority_no_removal() -> None:
    labels = np.repeat(np.arange(3, dtype=np.int32), 10)[None, :].repeat(30, axis=0)
    out = remove_background(labels)
    assert not out.removed and (out.labels == labels).all()


def test_single_colour_is_never_removed() -> None:
    labels = np.zeros((10, 10), np.int32)
    out = remove_background(labels)
    assert not out.removed and (out.labels == 0).all()
