"""A large photo's specks decided in one pass (`cleanup.specks_in_one_pass`).

A photo of a dense palette over `cleanup.SPECK_SCALE_PIXELS` (not texture) skips the first
speck clean-up: its speck filter (`merge_specks`) decides every speck, and a mode-filter
pass after it straightens the boundaries its merges leave. The pixel threshold is lowered
here so that a 240 x 240 map stands in for a 3 MP photo.
"""

from __future__ import annotations

import numpy as np
import pytest

from printjob_adapters.engine import cleanup, colour_count

SIDE = 240
#: Dark sky levels (near-equal to each other) and a bright star colour far from them.
PALETTE = np.array([[12.0, 12.0, 16.0], [16.0, 16.0, 20.0], [220.0, 220.0, 200.0]])


@pytest.fixture
def large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cleanup, "SPECK_SCALE_PIXELS", SIDE * SIDE // 2)


def _sky(seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """A noisy sky of the two dark levels (a ragged blob pattern) and its pixels' colours,
    each pixel near its level's colour."""
    rng = np.random.default_rng(seed)
    labels = (rng.random((SIDE, SIDE)) < 0.35).astype(np.int32)
    rgb = np.clip(PALETTE[labels] + rng.normal(0, 1.0, (SIDE, SIDE, 3)), 0, 255)
    return labels, np.rint(rgb).astype(np.uint8)


def test_one_pass_only_for_a_large_photo_of_many_specks_and_a_dense_palette() -> None:
    near = np.ones((3, 3), dtype=bool)
    over = cleanup.SPECK_SCALE_PIXELS + 1
    many = int(cleanup.ONE_PASS_COMPONENTS * over) + 1
    assert cleanup.specks_in_one_pass(over, many, near, texture=False)
    assert not cleanup.specks_in_one_pass(over, many, near, texture=True)
    assert not cleanup.specks_in_one_pass(over, many, None, texture=False)
    assert not cleanup.specks_in_one_pass(over, many // 2, near, texture=False)
    assert not cleanup.specks_in_one_pass(cleanup.SPECK_SCALE_PIXELS, many, near, texture=False)


def test_a_large_photos_first_clean_up_leaves_its_specks_to_the_speck_filter(
    large: None,
) -> None:
    labels, rgb = _sky()
    near = colour_count.near_equal(PALETTE)
    comps = cleanup.label_components(labels)
    args = (labels, rgb, PALETTE, 3.0, 10.0, 8.0)
    one_pass = cleanup.specks_in_one_pass(labels.size, comps.count, near, texture=False)
    assert one_pass
    same = cleanup.clean_speckles(*args, comps=comps, near=near, one_pass=one_pass)
    assert same is comps
    # Texture keeps the first clean-up, which merges the sky's specks.
    assert not cleanup.specks_in_one_pass(labels.size, comps.count, near, texture=True)
    cleaned = cleanup.clean_speckles(*args, comps=comps, near=near, texture=True)
    assert cleaned.count < comps.count


def test_a_faint_star_far_from_the_sky_stays_in_a_large_photo(large: None) -> None:
    labels, rgb = _sky()
    labels[99:102, 99:104] = 0
    labels[100, 100:103] = 2  # a 3-pixel star on the noisy sky
    rgb[labels == 2] = PALETTE[2]
    near = colour_count.near_equal(PALETTE)
    assert not near[0, 2] and not near[1, 2]
    comps = cleanup.label_components(labels)
    args = (labels, rgb, PALETTE, 3.0, 10.0, 8.0)
    one_pass = cleanup.specks_in_one_pass(labels.size, comps.count, near, texture=False)
    assert one_pass
    # As in a smaller photo's two clean-ups, a speck of more than `SPECK_TINY` pixels far
    # in colour from every neighbour is the photo's own.
    out = cleanup.clean_speckles(*args, comps=comps, near=near, one_pass=one_pass).labels()
    out = cleanup.merge_specks(
        out, rgb, PALETTE, max_size=96, near=near, keep=np.zeros_like(out, bool), one_pass=one_pass
    )
    assert (out[100, 100:103] == 2).all()
    assert (out == 2).sum() == 3


def test_the_speck_filter_of_a_large_photo_ends_with_a_mode_filter_pass(
    large: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    labels, rgb = _sky(7)
    near = colour_count.near_equal(PALETTE)
    keep = np.zeros(labels.shape, dtype=bool)
    keep[50:53, 50:53] = True
    monkeypatch.setattr(cleanup, "AFTER_SPECKS_PASSES", 0)
    raw = cleanup.merge_specks(
        labels, rgb, PALETTE, max_size=8, near=near, keep=keep, one_pass=True
    )
    monkeypatch.setattr(cleanup, "AFTER_SPECKS_PASSES", 1)
    out = cleanup.merge_specks(
        labels, rgb, PALETTE, max_size=8, near=near, keep=keep, one_pass=True
    )
    # The caller's decision, not the filter's own count: without it no mode pass.
    alone = cleanup.merge_specks(labels, rgb, PALETTE, max_size=8, near=near, keep=keep)
    np.testing.assert_array_equal(alone, raw)
    expected = cleanup.majority_smooth(raw, 1, keep=keep, near=near)
    np.testing.assert_array_equal(out, expected)
    assert (out[keep] == labels[keep]).all()

    # Fewer pixel edges between colours: the ragged boundaries straightened.
    def cracks(m: np.ndarray) -> int:
        return int((m[1:] != m[:-1]).sum() + (m[:, 1:] != m[:, :-1]).sum())

    assert cracks(out) < cracks(raw)


def test_segment_decides_the_one_pass_once_on_its_first_map(
    large: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both speck steps get the one decision `segment` makes on its first label map."""
    from printjob_adapters.engine import segmentation
    from printjob_adapters.engine.options import Background

    # A dark, noisy ramp: a photo's dense palette of near-equal levels, speckled.
    rng = np.random.default_rng(3)
    ramp = 10.0 + 50.0 * np.mgrid[0:SIDE, 0:SIDE][1] / SIDE
    rgb = np.clip(ramp[..., None] + rng.normal(0, 6.0, (SIDE, SIDE, 3)), 0, 255)
    rgba = np.dstack([np.rint(rgb), np.full((SIDE, SIDE), 255.0)]).astype(np.uint8)
    decided: list[bool] = []
    seen: dict[str, bool] = {}
    real_decide = cleanup.specks_in_one_pass
    real_clean, real_merge = cleanup.clean_speckles, cleanup.merge_specks

    def decide(*args: object, **kwargs: object) -> bool:
        decided.append(real_decide(*args, **kwargs))  # type: ignore[arg-type]
        return decided[-1]

    def clean(*args: object, **kwargs: object) -> object:
        seen["clean"] = bool(kwargs.get("one_pass", False))
        return real_clean(*args, **kwargs)  # type: ignore[arg-type]

    def merge(*args: object, **kwargs: object) -> object:
        seen["merge"] = bool(kwargs.get("one_pass", False))
        return real_merge(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cleanup, "specks_in_one_pass", decide)
    monkeypatch.setattr(cleanup, "clean_speckles", clean)
    monkeypatch.setattr(cleanup, "merge_specks", merge)
    segmentation.segment(rgba, None, Background.KEEP, lambda _: None)
    assert decided == [True]  # the noisy dark sky of many specks takes the one pass
    assert seen == {"clean": decided[0], "merge": decided[0]}
