"""Cancel checks inside palette choice: `colors=1000` on noise seeds hundreds of colours
over every distinct colour, seconds of work at 3 MP that must not run unchecked."""

from __future__ import annotations

import numpy as np
import pytest

from printjob_adapters.engine import quantise
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
