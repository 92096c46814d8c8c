"""Uneven light on a scan or photo of a printed page, divided out before colours are chosen.

A page photographed or scanned under uneven light has paper that is white in one corner and
grey in another, often darker than the ink elsewhere: no colour threshold separates ink
from paper, and the page comes out as grey blobs over illegible text. The light varies
slowly; the ink does not. So the light is estimated at a large scale (the bright paper of
each block of the page, smoothed) and divided out, and the page is judged again: when the
evened-out page is ink on paper (`colour_count.two_tone`), its evened-out pixels are
traced instead. A page that is ink on paper as it is (an evenly lit one, or one whose
bold shapes only look like shadow to the block measure) is traced as it is.
Anything else (flat art, photos, colour logos) is left exactly as it is.

Cost: only for noisy, fully opaque input whose colours lie near one line (checked on a
sample, O(N / 16)): O(N) for the block percentiles; when the blocks' light varies and is
a page's, O(N) more for the bilinear upsampling, one histogram of the input (from the
distinct colours the segmentation finds anyway) and one `quantise.pixel_maps`, distinct
colours and histogram of the evened-out image (whose colours the segmentation then
reads); the greedy colours only when a histogram already looks two-tone.
"""

from __future__ import annotations

from typing import overload

import numpy as np
import numpy.typing as npt

from printjob_adapters.engine import colour_count, quantise

#: Blocks per short side of the image in which the paper's light is measured: larger than
#: a line of text, smaller than the fall-off of the light.
BLOCKS = 12
#: The paper of a block is its brightness at this percentile (ink is darker).
PAPER_PERCENTILE = 90.0
#: Light varying less than this (darkest paper over brightest) is even: nothing to divide.
EVEN_LIGHT = 0.92
#: A page's brightest paper is at least this light (luma): paper under any light a page
#: is read in is lighter than mid-grey. A dark sky with stars (the Hubble deep field, its
#: brightest block at about 40) is greys near one line too but no page, and judging it
#: ink on paper twice cost a 3 MP upscale of it a fifth of its time.
PAGE_PAPER = 96.0
_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)


@overload
def even_out(
    rgba: npt.NDArray[np.uint8], maps: quantise.PixelMaps, colours: quantise.Colours
) -> tuple[npt.NDArray[np.uint8], quantise.PixelMaps, quantise.Colours]: ...


@overload
def even_out(
    rgba: npt.NDArray[np.uint8], maps: quantise.PixelMaps, colours: None = None
) -> tuple[npt.NDArray[np.uint8], quantise.PixelMaps, quantise.Colours | None]: ...


def even_out(
    rgba: npt.NDArray[np.uint8],
    maps: quantise.PixelMaps,
    colours: quantise.Colours | None = None,
) -> tuple[npt.NDArray[np.uint8], quantise.PixelMaps, quantise.Colours | None]:
    """`rgba` with uneven light divided out, its pixel maps and its distinct colours, when
    that turns it into ink on paper; else `rgba`, `maps` and `colours` themselves (`maps`
    and `colours`, when given, are `rgba`'s: the segmentation needs them whatever the
    answer, so the page test reads them rather than finding the colours again)."""
    h, w = rgba.shape[:2]
    if min(h, w) < 2 * BLOCKS or max(maps.noise, maps.grain) < colour_count.CLEAN_NOISE:
        return rgba, maps, colours  # tiny, or a clean render: lit by nobody
    if not bool(maps.solid.all()) or not _thin(rgba):
        return rgba, maps, colours
    paper, side = _paper_blocks(rgba)
    if _surely_even_or_dark(paper):
        return rgba, maps, colours
    light = _upsample(paper, side, h, w)
    if float(light.min()) >= EVEN_LIGHT * float(light.max()) or float(light.max()) < PAGE_PAPER:
        return rgba, maps, colours
    if colour_count.smooth_ramps(rgba):
        return rgba, maps, colours  # a clean steep gradient, whose ramp measures as noise
    # Already ink on paper: nothing to gain. The light is the paper's brightness per block,
    # so a block a bold shape fills reads as shadow, and dividing it out would brighten
    # the paper beside the shape to a white the page does not have.
    page, colours = _two_tone(rgba, maps, colours)
    if page:
        return rgba, maps, colours
    gain = float(light.max()) / np.maximum(light, 1.0)
    evened = rgba.copy()
    evened[..., :3] = np.clip(rgba[..., :3] * gain[..., None] + 0.5, 0, 255).astype(np.uint8)
    evened_maps = quantise.pixel_maps(evened)
    page, evened_colours = _two_tone(evened, evened_maps)
    if not page:
        return rgba, maps, colours
    return evened, evened_maps, evened_colours


def _thin(rgba: npt.NDArray[np.uint8]) -> bool:
    """Whether the colours, sampled on every fourth row and column, lie near one line (the
    second principal axis at most `colour_count.TWO_TONE_THINNESS` of the first): ink and
    paper under any light do; photos and colour logos do not (0.3 to 0.6). Cost: O(N / 16).
    """
    sample = rgba[::4, ::4, :3].reshape(-1, 3).astype(np.float32)
    sample -= sample.mean(axis=0)
    spread = np.linalg.eigvalsh(sample.T @ sample / max(len(sample), 1))
    return bool(spread[1] <= colour_count.TWO_TONE_THINNESS**2 * spread[2])


def paper_light(rgba: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """The paper's brightness (luma, 0..255) at every pixel: the `PAPER_PERCENTILE` of each
    of about `BLOCKS` x `BLOCKS` blocks, median-smoothed over 3 x 3 blocks and upsampled
    bilinearly. Cost: O(N)."""
    paper, side = _paper_blocks(rgba)
    h, w = rgba.shape[:2]
    return _upsample(paper, side, h, w)


#: How far (luma) the rounding of the bilinear upsampling may carry a pixel's light past
#: the block values it mixes: float32 of values under 256 rounds by under 1e-4; this is a
#: hundred times that.
_ROUNDING = 0.01


def _surely_even_or_dark(paper: npt.NDArray[np.float32]) -> bool:
    """Whether the light upsampled from the block values `paper` is surely even or surely
    darker than any page's paper, as `even_out` judges it, decided on the blocks alone:
    every pixel's light is a mixture of block values (the bilinear weights are positive and
    sum to 1), so it lies between the darkest and the brightest block, up to `_ROUNDING`.
    The Hubble deep field at 3 MP (its brightest paper about 60) is turned away here
    without the 0.1 s upsampling. Cost: O(BLOCKS^2)."""
    darkest, brightest = float(paper.min()), float(paper.max())
    even = darkest - _ROUNDING >= EVEN_LIGHT * (brightest + _ROUNDING)
    return even or brightest + _ROUNDING < PAGE_PAPER


def _paper_blocks(rgba: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.float32], int]:
    """The paper's brightness of each block (the `PAPER_PERCENTILE` of its luma, median-
    smoothed over 3 x 3 blocks) and the blocks' side in pixels. Cost: O(N)."""
    # Imported here: only an unevenly lit scan gets this far, and `scipy.ndimage` costs
    # every other `printjob trace` process about 0.1 s of start-up.
    from scipy import ndimage

    h, w = rgba.shape[:2]
    side = max(4, min(h, w) // BLOCKS)
    rows, cols = -(-h // side), -(-w // side)
    luma = rgba[..., :3].astype(np.float32) @ _LUMA
    padded = np.pad(luma, ((0, rows * side - h), (0, cols * side - w)), mode="edge")
    blocks = padded.reshape(rows, side, cols, side).transpose(0, 2, 1, 3).reshape(rows, cols, -1)
    paper = np.percentile(blocks, PAPER_PERCENTILE, axis=2).astype(np.float32)
    smoothed: npt.NDArray[np.float32] = ndimage.median_filter(paper, size=3, mode="nearest")
    return smoothed, side


def _upsample(paper: npt.NDArray[np.float32], side: int, h: int, w: int) -> npt.NDArray[np.float32]:
    """The block values `paper` (blocks of `side` pixels) at every pixel of an (h, w)
    image: block centres to pixel centres, bilinear, clamped at the borders. Cost: O(N)."""
    from scipy import ndimage

    rows, cols = paper.shape
    ys = np.clip((np.arange(h) + 0.5) / side - 0.5, 0, rows - 1)
    xs = np.clip((np.arange(w) + 0.5) / side - 0.5, 0, cols - 1)
    grid = np.meshgrid(ys, xs, indexing="ij")
    out: npt.NDArray[np.float32] = ndimage.map_coordinates(paper, grid, order=1).astype(np.float32)
    return out


def _two_tone(
    rgba: npt.NDArray[np.uint8],
    maps: quantise.PixelMaps,
    colours: quantise.Colours | None = None,
) -> tuple[bool, quantise.Colours]:
    """Whether `rgba` is ink on paper, as `quantise.find_palette` will judge it, and its
    distinct colours (`colours` when given, which must be `rgba`'s). The histogram's own
    test runs first; the greedy colours (the costly part) only when it passes."""
    tol = quantise.tolerances(maps)
    if colours is None:
        colours = quantise.distinct_colours(rgba, maps)
    hist = quantise.colour_histogram(rgba, maps, colours)
    mix = max(tol.mix, 1.5 * maps.grain)
    none = np.zeros((0, 3))
    if colour_count.two_tone(hist.rgb, hist.flat, hist.edge, mix, none) is None:
        return False, colours
    found, _ = quantise.greedy_palette(hist, tol, quantise.AUTO_CAP)
    return colour_count.two_tone(hist.rgb, hist.flat, hist.edge, mix, found) is not None, colours
