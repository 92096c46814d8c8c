"""Pixel art keeps its grid (issue 12, item 5): square cells, straight axis-aligned edges,
one right colour per cell, also under JPEG noise; a clean sprite comes out exactly."""

from __future__ import annotations

import io
import re

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image, ImageDraw

from printjob_adapters.engine import pixel_grid
from printjob_adapters.engine.options import TraceOptions
from printjob_adapters.engine.pipeline import trace
from printjob_adapters.engine.pixel_grid import Grid, change_profiles, detect_grid
from tests.unit.engine import hard_synthetic, ocr

resvg_py = pytest.importorskip("resvg_py")

_NUMBER = re.compile(r"-?\d*\.?\d+(?:e-?\d+)?")


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _render(svg: bytes, width: int) -> npt.NDArray[np.uint8]:
    png = resvg_py.svg_to_bytes(svg_string=svg.decode(), width=width, dpi=300)
    return np.asarray(ocr.over_white(Image.open(io.BytesIO(bytes(png)))))


def _path_data(svg: bytes) -> list[str]:
    return re.findall(r' d="([^"]*)"', svg.decode())


@pytest.mark.parametrize(("cell", "quality"), [(5, None), (8, None), (12, None)])
def test_clean_sprite_is_traced_exactly(cell: int, quality: int | None) -> None:
    sprite = hard_synthetic.pixel_grid(cell=cell, jpeg_quality=quality, seed=cell)
    result = trace(_png(sprite.image), TraceOptions())
    assert result.colors == len(set(sprite.cells.ravel().tolist()))
    render = _render(result.data, sprite.image.width)
    assert np.array_equal(render, np.asarray(sprite.image.convert("RGB")))


@pytest.mark.parametrize(
    ("cell", "quality"),
    [(5, 85), (5, 70), (5, 55), (8, 85), (8, 70), (8, 55), (12, 85), (12, 70), (12, 55)],
)
def test_grid_found_under_jpeg_noise(cell: int, quality: int) -> None:
    sprite = hard_synthetic.pixel_grid(cell=cell, jpeg_quality=quality, seed=cell)
    grid = detect_grid(np.asarray(sprite.image.convert("RGBA")))
    assert grid == Grid(cell, 0, 0)


def test_grid_phase_is_found_when_the_sprite_is_cropped() -> None:
    sprite = hard_synthetic.pixel_grid(cell=9, grid=(14, 14), jpeg_quality=80, seed=4)
    cropped = sprite.image.crop((4, 7, sprite.image.width, sprite.image.height))
    grid = detect_grid(np.asarray(cropped.convert("RGBA")))
    assert grid == Grid(9, 5, 2)


@pytest.mark.parametrize(("cell", "quality"), [(8, 85), (8, 55), (12, 75), (12, 55), (6, 70)])
def test_jpeg_pixel_art_keeps_square_cells_and_right_colours(cell: int, quality: int) -> None:
    sprite = hard_synthetic.pixel_grid(cell=cell, jpeg_quality=quality, seed=cell + quality)
    result = trace(_png(sprite.image), TraceOptions())
    # Straight, axis-aligned edges with every corner on the grid: only lines, only whole
    # multiples of the cell.
    for data in _path_data(result.data):
        assert not re.search(r"[CcSsQqTtAa]", data)
        for value in _NUMBER.findall(data):
            assert float(value) % cell == 0, value
    # Each cell one colour, the right one.
    render = _render(result.data, sprite.image.width).astype(np.float64)
    truth = np.array(sprite.palette, np.float64)[sprite.cells]
    rows, cols = sprite.cells.shape
    cells = render.reshape(rows, cell, cols, cell, 3)
    assert np.all(cells.max(axis=(1, 3)) == cells.min(axis=(1, 3)))
    error = np.abs(cells[:, 0, :, 0] - truth).max()
    assert error <= 24


@pytest.mark.parametrize(
    "make",
    [
        lambda: hard_synthetic.lines_and_dots().image,
        lambda: hard_synthetic.small_text().image,
        lambda: hard_synthetic.linear_gradient().image,
        lambda: hard_synthetic.stamp().image,
        lambda: hard_synthetic.white_in_artwork().image,
    ],
)
def test_other_kinds_are_not_pixel_art(make: object) -> None:
    assert callable(make)
    image = make()
    assert isinstance(image, Image.Image)
    assert detect_grid(np.asarray(image.convert("RGBA"))) is None


def test_blocky_logo_with_edges_off_the_grid_is_not_pixel_art() -> None:
    image = Image.new("RGB", (160, 160), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle([16, 16, 79, 79], fill=(200, 30, 40))
    draw.rectangle([96, 32, 143, 127], fill=(20, 60, 160))
    draw.ellipse([30, 90, 90, 150], fill=(0, 140, 60))
    assert detect_grid(np.asarray(image.convert("RGBA"))) is None


def test_change_profiles_are_the_premultiplied_change_with_and_without_alpha() -> None:
    # The integer profiles must equal the float definition they replace (premultiplied
    # RGBA, |difference| summed over the image and the channels), so the cheap rejection
    # of a non-grid image rejects exactly what the full analysis rejected.
    rng = np.random.default_rng(7)
    opaque = rng.integers(0, 256, (37, 53, 4), dtype=np.uint8)
    opaque[..., 3] = 255
    translucent = rng.integers(0, 256, (41, 29, 4), dtype=np.uint8)
    for rgba in (opaque, translucent):
        px = rgba.astype(np.float64)
        px[..., :3] *= px[..., 3:4] / 255.0
        across, down = change_profiles(rgba)
        np.testing.assert_allclose(across, np.abs(np.diff(px, axis=1)).sum(axis=(0, 2)))
        np.testing.assert_allclose(down, np.abs(np.diff(px, axis=0)).sum(axis=(1, 2)))


@pytest.mark.parametrize("alpha", [255, 200, None])
def test_change_profiles_from_differing_pairs_equal_the_whole_image_sums(
    alpha: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Flat art differs at few neighbouring pairs, and its profiles are summed there alone;
    # they must be the whole-array sums exactly, with and without transparency.
    rng = np.random.default_rng(5)
    rgba = np.zeros((45, 38, 4), dtype=np.uint8)
    rgba[..., 3] = 255 if alpha is not None else 0
    for _ in range(6):
        y, x = rng.integers(0, 40, 2)
        rgba[y : y + rng.integers(1, 12), x : x + rng.integers(1, 12)] = (
            *rng.integers(0, 256, 3),
            255 if alpha == 255 else rng.integers(1, 256),
        )
    rgba[3, :5, 3] = alpha if alpha is not None else 7  # a translucent run on the edge
    px = rgba.astype(np.float64)
    px[..., :3] *= px[..., 3:4] / 255.0
    profiles = {}
    for share in (2.0, -1.0):  # every pair at the differing pairs; the whole arrays
        monkeypatch.setattr(pixel_grid, "SPARSE_CHANGE", share)
        monkeypatch.setattr(pixel_grid, "SPARSE_CHANGE_OPAQUE", share)
        profiles[share] = change_profiles(rgba)
        np.testing.assert_allclose(profiles[share][0], np.abs(np.diff(px, axis=1)).sum(axis=(0, 2)))
        np.testing.assert_allclose(profiles[share][1], np.abs(np.diff(px, axis=0)).sum(axis=(1, 2)))
    for sparse, dense in zip(profiles[2.0], profiles[-1.0], strict=True):
        assert sparse.dtype == dense.dtype and (sparse == dense).all()


def test_translucent_jpeg_grid_is_still_found() -> None:
    # The profiles of an image with transparency take the premultiplied path: a sprite
    # under JPEG noise with a soft alpha must still be found on its grid.
    sprite = hard_synthetic.pixel_grid(cell=8, jpeg_quality=70, seed=8)
    rgba = np.array(sprite.image.convert("RGBA"))
    rgba[..., 3] = 200
    assert detect_grid(rgba) == Grid(8, 0, 0)


def test_folds_are_each_cell_sizes_sums_by_phase_for_every_image_size() -> None:
    """The folds (their index kept per image size) are, for every cell and phase, the sum
    of the profile over the lines at that phase, and stay so when sizes alternate."""
    rng = np.random.default_rng(3)
    for length, least, top in [(511, 3, 64), (97, 3, 19), (511, 5, 64), (40, 3, 13), (511, 3, 64)]:
        cells = np.arange(least, top + 1)
        profiles = tuple(rng.integers(0, 1000, length).astype(np.float64) for _ in range(2))
        folds = pixel_grid._folds(profiles, cells, top)
        for profile, fold in zip(profiles, folds, strict=True):
            for i, cell in enumerate(cells):
                phases = np.arange(1, length + 1) % cell
                want = np.bincount(phases, profile, minlength=cell)
                assert np.array_equal(fold[i, :cell], want)
                assert (fold[i, cell:] == -1.0).all()
