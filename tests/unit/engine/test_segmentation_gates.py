"""The segmentation's cheap screens and gates skip only what would have changed nothing.

Each stage that now looks at candidate pixels (or colours) first is run on an input where
the candidates are few and must still be found: a faint 1-px line among many colours, a
tint of anti-aliasing, a hairline on transparency, a diagonal stroke.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from printjob_adapters.engine import detail

WHITE = (255, 255, 255)
#: Colours of the palette besides white: more than a screen chunk holds when
#: `RIDGE_CHUNK` is made small, so the chunking is exercised.
COLOURS = [(0, 0, 0), (200, 30, 30), (30, 150, 40), (20, 40, 200), (240, 200, 20), (120, 0, 160)]


def _faint_lines(coverage: float) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float64]]:
    """White, with one vertical 1-px line of each colour at `coverage` (a hairline
    thinner than a pixel) in columns 5, 10, ...; the palette is white then the colours."""
    rgb = np.full((24, 40, 3), 255.0)
    for i, colour in enumerate(COLOURS):
        rgb[2:-2, 5 + 5 * i] = (1 - coverage) * np.array(WHITE) + coverage * np.array(colour)
    palette = np.array([WHITE, *COLOURS], dtype=np.float64)
    return np.rint(rgb).astype(np.uint8), palette


@pytest.mark.parametrize("batch", [detail.RIDGE_BATCH, 0])
@pytest.mark.parametrize("chunk", [detail.RIDGE_CHUNK, 7])
def test_faint_one_pixel_lines_of_every_colour_are_recovered(
    chunk: int, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(detail, "RIDGE_CHUNK", chunk)
    monkeypatch.setattr(detail, "RIDGE_BATCH", batch)  # all directions at once, or one by one
    rgb, palette = _faint_lines(0.4)
    labels = np.zeros(rgb.shape[:2], dtype=np.int32)  # nearest colour: all white
    edge = np.ones(labels.shape, dtype=bool)
    flat = np.zeros(labels.shape, dtype=bool)
    out = detail.recover_strokes(labels, rgb, palette, edge, flat, 0.0, 8.0).labels
    for i in range(len(COLOURS)):
        column = out[3:-3, 5 + 5 * i]
        assert (column == i + 1).all(), (i, column)
    # Nothing else moved: the screen found the lines and only them.
    others = np.ones(labels.shape, dtype=bool)
    others[2:-2, 5 : 5 + 5 * len(COLOURS) : 5] = False
    assert (out[others] == 0).all()


def test_directions_screened_together_or_one_by_one_recover_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Faint lines along all four directions, crossing, over two backgrounds, anti-aliased
    # at random coverages: the batched screen and the screen per direction must give the
    # same map, pixel for pixel.
    rng = np.random.default_rng(4)
    size = 48
    cover = np.zeros((size, size))
    yy, xx = np.mgrid[:size, :size]
    for line in (yy == 9, xx == 30, yy == xx, yy + xx == size - 5, yy == 2 * xx // 3):
        cover[line] = rng.uniform(0.3, 0.7, int(line.sum()))
    ground = np.where(xx < size // 2, 0.0, 1.0)[..., None] * np.array([20, 40, 200.0])
    ground += np.where(xx < size // 2, 1.0, 0.0)[..., None] * np.array(WHITE, dtype=float)
    rgb = (1 - cover[..., None]) * ground + cover[..., None] * np.array([0, 0, 0.0])
    rgb = np.rint(rgb).astype(np.uint8)
    palette = np.array([WHITE, (20, 40, 200), (0, 0, 0)], dtype=np.float64)
    labels = np.where(xx < size // 2, 0, 1).astype(np.int32)
    edge = cover > 0
    flat = ~edge
    outs = []
    for batch in (detail.RIDGE_BATCH, 0):
        monkeypatch.setattr(detail, "RIDGE_BATCH", batch)
        outs.append(detail.recover_strokes(labels, rgb, palette, edge, flat, 0.0, 8.0).labels)
    assert (outs[0] != labels).sum() > 50  # the lines came back
    assert np.array_equal(outs[0], outs[1])


def test_a_soft_edge_is_no_ridge() -> None:
    # A ramp from white to black across four pixels: every pixel a mixture, none a ridge.
    ramp = np.array([255, 255, 204, 153, 102, 51, 0, 0, 0], dtype=np.float64)
    rgb = np.repeat(np.rint(ramp)[None, :, None], 3, axis=2).repeat(9, axis=0).astype(np.uint8)
    palette = np.array([WHITE, (0, 0, 0)], dtype=np.float64)
    labels = np.where(ramp[None, :].repeat(9, axis=0) >= 128, 0, 1).astype(np.int32)
    edge = np.ones(labels.shape, dtype=bool)
    flat = np.zeros(labels.shape, dtype=bool)
    out = detail.recover_strokes(labels, rgb, palette, edge, flat, 0.0, 8.0).labels
    assert np.array_equal(out, labels)


def test_anti_aliasing_tint_is_resolved_into_its_ends() -> None:
    # A grey drawn nowhere as an area, only as the soft edge of black on white, is a tint:
    # its pixels go to the nearer end, and the flat white and black stay.
    rgb = np.full((20, 20, 3), 255, dtype=np.uint8)
    rgb[:, 10:] = 0
    rgb[:, 9] = 170  # a third of the way to black
    rgb[:, 10] = 85  # two thirds
    palette = np.array([WHITE, (0, 0, 0), (128, 128, 128)], dtype=np.float64)
    labels = np.where(rgb[..., 0] == 255, 0, 1).astype(np.int32)
    labels[:, 9:11] = 2
    flat = (rgb[..., 0] == 255) | (rgb[..., 0] == 0)
    edge = ~flat
    out = detail.recover_strokes(labels, rgb, palette, edge, flat, 0.0, 8.0).labels
    assert (out[:, 9] == 0).all() and (out[:, 10] == 1).all()
    assert (out[:, :9] == 0).all() and (out[:, 11:] == 1).all()


def test_faint_hairline_on_transparency_comes_back() -> None:
    # Opaque images skip the transparency step; one with a left-out, half-covered
    # hairline must still get it back.
    rgba = np.zeros((12, 12, 4), dtype=np.uint8)
    rgba[..., :3] = 20
    rgba[2:-2, 6, 3] = 110  # 43 % coverage: left out with the background
    rgba[8:, 8:, 3] = 255  # an opaque square: the one palette colour
    labels = np.full((12, 12), -1, dtype=np.int32)
    labels[8:, 8:] = 0
    palette = np.array([(20, 20, 20)], dtype=np.float64)
    edge = np.zeros(labels.shape, dtype=bool)
    flat = labels >= 0
    out = detail.recover_strokes(labels, rgba, palette, edge, flat, 0.0, 8.0).labels
    assert (out[3:-3, 6] == 0).all()


def test_detail_mask_finds_a_lone_line_and_dot_among_large_areas() -> None:
    # The mask now looks only at the pixels of small or thin groups (listed from the
    # runs): a 1-px diagonal line and a 2x2 dot on a large white area beside a large
    # black one are kept, the areas are not.
    labels = np.zeros((40, 60), dtype=np.int32)
    labels[:, 40:] = 1
    for i in range(12):
        labels[5 + i, 5 + i] = 2
    labels[30:32, 10:12] = 3
    palette = np.array([WHITE, (0, 0, 0), (200, 30, 30), (20, 40, 200)], dtype=np.float64)
    rgb = palette[labels].astype(np.uint8)
    keep = detail.detail_mask(labels, rgb, palette, 0.0, 8.0)
    assert keep[labels == 2].all() and keep[labels == 3].all()
    assert not keep[labels <= 1].any()


def _diagonal_stroke(rising: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A 1-px black diagonal on white in a 16 x 16 map: labels, rows, columns, palette."""
    labels = np.zeros((16, 16), dtype=np.int32)
    cols = np.arange(2, 14)
    rows = cols if not rising else 15 - cols
    labels[rows, cols] = 1
    palette = np.array([WHITE, (0, 0, 0)], dtype=np.float64)
    return labels, rows, cols, palette


@pytest.mark.parametrize("rising", [False, True])
def test_diagonal_stroke_is_bridged_in_both_directions(rising: bool) -> None:
    # bridge_corners now lists the blocks on a stroke's diagonal from `keep`: a falling
    # and a rising 1-px diagonal must both become 4-connected, and nothing off them moves.
    labels, rows, cols, palette = _diagonal_stroke(rising)
    rgb = palette[labels].astype(np.uint8)
    keep = labels == 1
    out = detail.bridge_corners(labels, rgb, palette, keep)
    line = out == 1
    # Each step between consecutive diagonal pixels is now joined by an edge neighbour.
    for r0, c0, r1 in zip(rows[:-1], cols[:-1], rows[1:], strict=True):
        assert line[r0, c0 + 1] or line[r1, c0]
    assert np.count_nonzero(line) == 2 * len(cols) - 1
    assert detail.bridge_corners(labels, rgb, palette, np.zeros_like(keep)) is labels


@pytest.mark.parametrize("rising", [False, True])
def test_bridging_in_place_makes_the_map_a_copy_would(rising: bool) -> None:
    # The segmentation bridges its own map in place (no copy of the whole map): the same
    # values as the copying call, written into the given map, which is returned; a map
    # of another type or layout is still copied, and the caller's is left as it was.
    labels, _rows, cols, palette = _diagonal_stroke(rising)
    labels[3, 12] = labels[12, 3] = 1  # lone dots off the stroke: never bridged
    rgb = palette[labels].astype(np.uint8)
    keep = labels == 1
    copied = detail.bridge_corners(labels, rgb, palette, keep)
    assert copied is not labels and np.count_nonzero(copied != labels) == len(cols) - 1
    own = labels.copy()
    bridged = detail.bridge_corners(own, rgb, palette, keep, in_place=True)
    assert bridged is own and np.array_equal(bridged, copied)
    wide = labels.astype(np.int64)
    out = detail.bridge_corners(wide, rgb, palette, keep, in_place=True)
    assert out is not wide and np.array_equal(out, copied)
    assert np.array_equal(wide, labels)
    strided = np.asfortranarray(labels)
    out = detail.bridge_corners(strided, rgb, palette, keep, in_place=True)
    assert out is not strided and np.array_equal(out, copied)
    assert np.array_equal(strided, labels)


@pytest.mark.parametrize("transparent", [False, True])
def test_own_colour_distances_from_the_table_are_the_per_pixel_ones(transparent: bool) -> None:
    # Few distinct colours, many pixels: the table per distinct colour is taken, and its
    # look-ups must be the per-pixel float64 distances to the bit.
    from printjob_adapters.engine import quantise

    rng = np.random.default_rng(9)
    levels = np.array([0, 17, 128, 200, 255], dtype=np.uint8)
    rgba = levels[rng.integers(0, len(levels), (60, 50, 4))]
    rgba[..., 3] = 255
    if transparent:
        rgba[:5, :, 3] = 0
    maps = quantise.pixel_maps(rgba)
    colours = quantise.distinct_colours(rgba, maps)
    palette = rng.uniform(0, 255, (4, 3))
    at = np.flatnonzero(maps.opaque.ravel())
    own = rng.integers(0, len(palette), len(at)).astype(np.int32)
    rows = quantise.pixel_rows(rgba)
    assert len(colours.keys) * len(palette) <= len(at)  # the table path
    by_table = detail._own_distance(rows, palette, at, own, colours)
    by_pixel = detail._own_distance(rows, palette, at, own, None)
    assert np.array_equal(by_table, by_pixel)
