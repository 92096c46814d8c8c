"""Cancel checks inside palette choice and clean-up: `colors=1000` on noise seeds hundreds
of colours, and 2 x 2 blocks of 1000 colours give millions of specks: seconds of work at
3 MP that must not run unchecked."""

from __future__ import annotations

import numpy as np
import pytest

from printjob_adapters.engine import cleanup, colour_count, quantise
from printjob_adapters.engine.errors import Cancelled
from printjob_adapters.engine.options import Background
from printjob_adapters.engine.progress import Checkpoint
from printjob_adapters.engine.segmentation import segment


def noise(size: int = 160) -> np.ndarray:
    rng = np.random.default_rng(7)
    rgba = np.full((size, size, 4), 255, dtype=np.uint8)
    rgba[..., :3] = rng.integers(0, 256, (size, size, 3), dtype=np.uint8)
    return rgba


def test_many_colours_on_noise_are_chosen_with_a_check_every_few_dozen_seeds() -> None:
    rgba = noise()
    ticks: list[int] = []
    palette = quantise.find_palette(
        rgba, quantise.pixel_maps(rgba), 600, tick=lambda: ticks.append(1)
    )

    assert len(palette) == 600
    # About 540 seeds beyond the greedy colours, and eight k-means rounds.
    assert len(ticks) >= (600 - quantise.GREEDY_MAX) // quantise.SEEDS_PER_CHECK + 8


def test_a_cancel_stops_the_palette_choice() -> None:
    calls = 0

    def cancelled() -> bool:
        nonlocal calls
        calls += 1
        return calls > 3  # the checks before the palette pass; then a stop is asked

    with pytest.raises(Cancelled) as stopped:
        segment(noise(), 600, Background.KEEP, Checkpoint(cancelled=cancelled))
    # Stopped inside the seeding, not after the whole palette was chosen.
    assert any(entry.name == "refine_palette" for entry in stopped.traceback)


def blocks(size: int = 120, colours: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """2 x 2 blocks of `colours` random colours: labels and their RGB image."""
    rng = np.random.default_rng(3)
    cells = rng.integers(0, colours, (size // 2, size // 2))
    labels = np.kron(cells, np.ones((2, 2), dtype=np.int64)).astype(np.int32)
    palette = rng.integers(0, 256, (colours, 3)).astype(np.float64)
    return labels, palette[labels].astype(np.uint8)


def test_the_mode_filter_checks_every_few_labels() -> None:
    labels, _ = blocks()
    ticks: list[int] = []
    cleanup.majority_smooth(labels, passes=2, tick=lambda: ticks.append(1))

    present = len(np.unique(labels))
    assert len(ticks) >= 2 * (present // cleanup.LABELS_PER_CHECK)


def test_the_speck_merges_check_every_pass() -> None:
    labels, rgb = blocks()
    palette = np.unique(rgb.reshape(-1, 3), axis=0).astype(np.float64)
    ticks: list[str] = []
    cleanup.clean_speckles(
        labels, rgb, palette, 1.0, 1.0, 0.0, passes=2, tick=lambda: ticks.append("clean")
    )
    cleanup.merge_specks(labels, rgb, palette, passes=2, tick=lambda: ticks.append("specks"))

    assert ticks.count("clean") >= 1 and ticks.count("specks") >= 1


def test_growing_a_photo_palette_checks_every_few_dozen_seeds() -> None:
    rng = np.random.default_rng(11)
    lab = rng.uniform((0.0, -60.0, -60.0), (100.0, 60.0, 60.0), (20000, 3))
    weight = np.ones(len(lab))
    ticks: list[int] = []
    grown = colour_count.grow_palette(
        lab, weight, np.zeros((0, 3)), 0, lambda errors: False, 256, tick=lambda: ticks.append(1)
    )

    assert len(grown) == 256
    # 1 + 4 + 5 + 10 + ... seeds in doubling rounds, each with its Lloyd iterations.
    assert len(ticks) >= 256 // colour_count.SEEDS_PER_CHECK + 6
