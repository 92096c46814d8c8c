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
sample, O(N / 16)) and whose paper light varies: one histogram of the input and one
`quantise.pixel_maps` and histogram of the evened-out image, O(N), plus O(N) for the block
percentiles and the bilinear upsampling; the greedy colours only when a histogram
already looks two-tone.
"""

from __future__ import annotations

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


def even_out(
    rgba: npt.NDArray[np.uint8], maps: quantise.PixelMaps
) -> tuple[npt.NDArray[np.uint8], quantise.PixelMaps]:
    """`rgba` with uneven light divided out, and its pixel maps, when that turns it into ink
    on paper; else `rgba` and `maps` themselves (`maps` are `rgba`'s)."""
    h, w = rgba.shape[:2]
    if min(h, w) < 2 * BLOCKS or max(maps.noise, maps.grain) < colour_count.CLEAN_NOISE:
        return rgba, maps  # tiny, or a clean render: lit by nobody
    if not bool(maps.solid.all()) or not _thin(rgba):
        return rgba, maps
    light = paper_light(rgba)
    if float(light.min()) >= EVEN_LIGHT * float(light.max()) or float(light.max()) < PAGE_PAPER:
        return rgba, maps
    if colour_count.smooth_ramps(rgba):
        return rgba, maps  # a clean steep gradient, whose ramp measures as noise
    # Already ink on paper: nothing to gain. The light is the paper's brightness per block,
    # so a block a bold shape fills reads as shadow, and dividing it out would brighten
    # the paper beside the shape to a white the page does not have.
    if _two_tone(rgba, maps):
        return rgba, maps
    gain = float(light.max()) / np.maximum(light, 1.0)
    evened = rgba.copy()
    evened[..., :3] = np.clip(rgba[..., :3] * gain[..., None] + 0.5, 0, 255).astype(np.uint8)
    evened_maps = quantise.pixel_maps(evened)
    if not _two_tone(evened, evened_maps):
        return rgba, maps
    return evened, evened_maps


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
    paper = ndimage.median_filter(paper, size=3, mode="nearest")
    # Block centres to pixel centres, bilinear, clamped at the borders.
    ys = np.clip((np.arange(h) + 0.5) / side - 0.5, 0, rows - 1)
    xs = np.clip((np.arange(w) + 0.5) / side - 0.5, 0, cols - 1)
    grid = np.meshgrid(ys, xs, indexing="ij")
    out: npt.NDArray[np.float32] = ndimage.map_coordinates(paper, grid, order=1).astype(np.float32)
    return out


def _two_tone(rgba: npt.NDArray[np.uint8], maps: quantise.PixelMaps) -> bool:
    """Whether `rgba` is ink on paper, as `quantise.find_palette` will judge it. The
    histogram's own test runs first; the greedy colours (the costly part) only when it
    passes."""
    tol = quantise.tolerances(maps)
    hist = quantise.colour_histogram(rgba, maps)
    mix = max(tol.mix, 1.5 * maps.grain)
    none = np.zeros((0, 3))
    if colour_count.two_tone(hist.rgb, hist.flat, hist.edge, mix, none) is None:
        return False
    found, _ = quantise.greedy_palette(hist, tol, quantise.AUTO_CAP)
    return colour_count.two_tone(hist.rgb, hist.flat, hist.edge, mix, found) is not None
