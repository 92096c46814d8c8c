"""A large field of faint sources: colours placed where the error is visible.

At print size a field of faint sources (the Hubble deep field) has its colours capped
(`quantise.LARGE_SOURCES_COLOURS`); seeded on every bin's error they went to the noise of
its sky. `colour_count.grow_palette`'s `served` seeds only where a bin is further than it
from every colour, and such a palette, apart on purpose, is still a photo's
(`colour_count.near_equal`'s `photo`).
"""

from __future__ import annotations

import numpy as np

from printjob_adapters.engine import cleanup, colour_count, quantise
from printjob_adapters.engine.colour import srgb_to_lab


def _field() -> tuple[np.ndarray, np.ndarray]:
    """A histogram (CIELAB bins, pixel weights): a dark sky of many heavy bins within a
    few units of black, and a bright orange source and a blue one of a few light bins."""
    rng = np.random.default_rng(2)
    sky = np.column_stack(
        [rng.uniform(1.0, 6.0, 400), rng.uniform(-2.0, 2.0, 400), rng.uniform(-2.0, 2.0, 400)]
    )
    orange = np.array([70.0, 20.0, 40.0]) + rng.normal(0, 1.0, (30, 3))
    blue = np.array([60.0, 0.0, -40.0]) + rng.normal(0, 1.0, (30, 3))
    lab = np.vstack([sky, orange, blue])
    weight = np.concatenate([np.full(400, 5000.0), np.full(60, 3.0)])
    return lab, weight


def _grown(served: float) -> np.ndarray:
    lab, weight = _field()

    def never(_error: np.ndarray) -> bool:
        return False

    seeds = np.array([[10.0, 10.0, 10.0]])
    palette = colour_count.grow_palette(
        lab, weight, seeds, 0, never, cap=6, growth=colour_count.PHOTO_GROWTH, served=served
    )
    return srgb_to_lab(palette)


def _sources_drawn(palette_lab: np.ndarray) -> tuple[bool, bool]:
    orange = np.linalg.norm(palette_lab - [70.0, 20.0, 40.0], axis=1).min() < 10.0
    blue = np.linalg.norm(palette_lab - [60.0, 0.0, -40.0], axis=1).min() < 10.0
    return bool(orange), bool(blue)


def test_capped_colours_seeded_on_every_bins_error_go_to_the_sky() -> None:
    assert _sources_drawn(_grown(0.0)) != (True, True)


def test_colours_seeded_where_the_error_is_visible_draw_both_sources() -> None:
    palette = _grown(quantise.SOURCES_SERVED)
    assert _sources_drawn(palette) == (True, True)
    # The sky keeps a colour.
    assert palette[:, 0].min() < 8.0


def test_a_palette_apart_on_purpose_is_still_a_photos() -> None:
    palette = np.array(
        [[10.0, 10.0, 10.0], [200.0, 150.0, 100.0], [80.0, 120.0, 220.0], [250.0, 250.0, 240.0]]
    )
    assert colour_count.near_equal(palette) is None
    near = colour_count.near_equal(palette, photo=True)
    assert near is not None
    assert near.shape == (4, 4)
    assert near.diagonal().all()
    assert not near[0, 1]


def test_only_a_large_photos_histogram_is_large() -> None:
    lab, weight = _field()
    small = quantise.Histogram(
        rgb=np.zeros((len(lab), 3)), lab=lab, flat=weight / 1000.0, edge=np.zeros(len(lab))
    )
    assert not quantise._large(small)
    big = quantise.Histogram(rgb=small.rgb, lab=lab, flat=weight, edge=np.zeros(len(lab)))
    assert quantise._large(big)


def test_a_field_of_sources_keeps_the_speck_area_at_print_size() -> None:
    big = 3 * cleanup.SPECK_SCALE_PIXELS
    assert cleanup.speck_area(big, photo=True) == 3 * cleanup.SPECK_AREA
    assert cleanup.speck_area(big, photo=True, sources=True) == cleanup.SPECK_AREA
    assert cleanup.speck_area(big, photo=False, sources=True) == cleanup.SPECK_AREA
