"""The shared hard-image generators draw what their truth says, and OCR reads small text."""

from __future__ import annotations

import numpy as np
from PIL import Image

from tests.unit.engine import hard_synthetic as synthetic
from tests.unit.engine import ocr


def test_lines_and_dots_are_where_the_truth_says_in_their_colour() -> None:
    drawn = synthetic.lines_and_dots()
    pixels = np.array(drawn.image)
    assert {line.width for line in drawn.lines} == {1, 2}
    assert {dot.size for dot in drawn.dots} == {2, 3}
    painted = np.zeros(pixels.shape[:2], bool)
    for line in drawn.lines:
        mask = line.mask(drawn.image.size)
        assert (pixels[mask] == line.colour).all()
        across = mask.any(axis=1).sum() if line.horizontal else mask.any(axis=0).sum()
        assert across == line.width
        painted |= mask
    for dot in drawn.dots:
        x, y = (round(c - (dot.size - 1) / 2) for c in dot.centre)
        block = pixels[y : y + dot.size, x : x + dot.size]
        assert (block == dot.colour).all()
        painted[y : y + dot.size, x : x + dot.size] = True
    assert (pixels[~painted] == synthetic.WHITE).all()


def test_transparent_lines_leave_the_rest_clear() -> None:
    drawn = synthetic.lines_and_dots(transparent=True)
    alpha = np.array(drawn.image)[..., 3]
    painted = np.zeros(alpha.shape, bool)
    for line in drawn.lines:
        painted |= line.mask(drawn.image.size)
    assert drawn.background is None
    assert (alpha[painted] == 255).all()
    assert (alpha[~painted] != 255).sum() > 0.8 * (~painted).sum()


def test_tesseract_reads_8px_dejavu_words_from_a_4x_upscale() -> None:
    drawn = synthetic.small_text(pixel_size=8)
    read = ocr.read_words(ocr.upscale(drawn.image, 4))
    assert ocr.word_recall(frozenset(drawn.words), read) >= 0.85


def test_word_recall_of_blank_paper_against_text_is_zero() -> None:
    drawn = synthetic.small_text(pixel_size=10)
    blank = Image.new("RGB", drawn.image.size, synthetic.WHITE)
    assert ocr.words_recall(drawn.image, drawn.image) == 1.0
    assert ocr.words_recall(drawn.image, blank) == 0.0


def test_recall_and_normalisation() -> None:
    assert ocr.normalise_word("Cancel,") == "cancel"
    assert ocr.word_recall(frozenset(), frozenset({"x"})) == 1.0
    assert ocr.word_recall(frozenset({"ab", "cd"}), frozenset({"ab"})) == 0.5


def test_pixel_grid_cells_are_square_blocks_of_the_palette() -> None:
    clean = synthetic.pixel_grid(cell=6, grid=(10, 9), jpeg_quality=None, seed=3)
    pixels = np.array(clean.image)
    assert clean.image.size == (9 * 6, 10 * 6)
    expected = np.array(clean.palette, np.uint8)[clean.cells]
    assert (pixels[::6, ::6] == expected).all()
    assert (pixels[5::6, 5::6] == expected).all()
    noisy = synthetic.pixel_grid(cell=6, grid=(10, 9), jpeg_quality=60, seed=3)
    difference = np.abs(np.array(noisy.image).astype(int) - pixels.astype(int))
    assert difference.max() > 10  # the JPEG noise is really there
    assert np.median(difference) < 12  # ... and the cells still read as their colours


def test_gradients_run_smoothly_between_their_colours() -> None:
    linear = synthetic.linear_gradient(size=(200, 50))
    row = np.array(linear.image)[25].astype(int)
    assert tuple(row[0]) == linear.start_colour and tuple(row[-1]) == linear.end_colour
    assert np.abs(np.diff(row, axis=0)).max() <= 2
    radial = synthetic.radial_gradient(size=(101, 101))
    pixels = np.array(radial.image)
    assert tuple(pixels[50, 50]) == radial.inner_colour
    assert tuple(pixels[0, 0]) == radial.outer_colour
    assert np.abs(np.diff(pixels[50].astype(int), axis=0)).max() <= 8


def test_stamp_is_two_tones_under_noise() -> None:
    drawn = synthetic.stamp(seed=1)
    pixels = np.array(drawn.image).astype(float)
    ink = pixels[drawn.ink_mask].mean(axis=0)
    paper = pixels[~drawn.ink_mask].mean(axis=0)
    assert np.abs(ink - drawn.ink).max() < 40
    assert np.abs(paper - drawn.paper).max() < 30
    assert len({tuple(p) for p in pixels.reshape(-1, 3).astype(int)}) > 1000  # noisy, not flat
    assert drawn.image.tobytes() == synthetic.stamp(seed=1).image.tobytes()


def test_white_parts_of_the_artwork_touch_the_white_background() -> None:
    drawn = synthetic.white_in_artwork()
    pixels = np.array(drawn.image)
    assert drawn.white_part_mask.any()
    assert (pixels[drawn.white_part_mask] == synthetic.WHITE).all()
    assert (pixels[~drawn.artwork_mask] == synthetic.WHITE).all()
    outside = ~drawn.artwork_mask
    touching = drawn.white_part_mask & (np.roll(outside, 1, axis=1) | np.roll(outside, -1, axis=1))
    assert touching.any()
