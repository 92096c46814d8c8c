"""Whether a noisy image whose colours a flat palette explains is really a photo of many
faint sources (a deep-sky field: a few thousand galaxies of a few pixels on black).

`quantise.greedy_palette` explains every pixel of such a field as one of three colours or
a mixture of two of them (black sky, white stars, one galaxy colour), exactly as it explains
a JPEG'd logo's edges, and no flat pixel is off its colours, so it is traced as flat art
and its faint galaxies, mixtures of sky and star, are painted as sky. The two differ in
*where* the pixels a flat palette leaves visibly off (`colour_count.VISIBLE`) lie:

- in JPEG'd flat art they are anti-aliasing and ringing next to the edges between its
  colours, so every patch of them touches a border between two palette colours;
- in a field of faint sources each source is a patch of its own in the middle of the sky,
  whose nearest palette colour is the sky's: it touches no border at all.

`per_10k` counts the 4-connected patches of visibly-off pixels that touch no border
between the pixels' nearest palette colours (nor come within a pixel of one), per 10,000
pixels: 169 on scikit-image's Hubble deep field (JPEG 90), at most 41 on the JPEG'd flat
art, pixel art and blurry emoji that a flat palette explains in both corpora and the
benchmark's own set (a JPEG'd pixel sprite 41, a JPEG'd flag 40, a JPEG'd logo 31, every
clean render 0). Photos score high too (greyscale camera 90, coins 78, moon 70) but are
told apart before this is asked; stamps and scans (170-600) are two-tone and never get here.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import numpy.typing as npt

from printjob_adapters.engine import colour_count, graphs
from printjob_adapters.engine.colour import ciede2000, srgb_to_lab
from printjob_adapters.engine.nearest import PointSet

FloatArray = npt.NDArray[np.floating[Any]]
BoolArray = npt.NDArray[np.bool_]

#: Detached patches of visibly-off pixels per 10,000 pixels from which the image is a field
#: of faint sources: 169 on a deep-sky field, at most 41 on JPEG'd flat art and pixel art
#: (between the two, on a geometric scale).
SOURCES_PER_10K = 80.0


def many(
    shape: tuple[int, int],
    opaque: BoolArray,
    colour_index: npt.NDArray[np.integer[Any]],
    colour_lab: FloatArray,
    palette: FloatArray,
) -> bool:
    """Whether the image is a field of faint sources: `per_10k` at least
    `SOURCES_PER_10K`."""
    return per_10k(shape, opaque, colour_index, colour_lab, palette) >= SOURCES_PER_10K


def per_10k(
    shape: tuple[int, int],
    opaque: BoolArray,
    colour_index: npt.NDArray[np.integer[Any]],
    colour_lab: FloatArray,
    palette: FloatArray,
) -> float:
    """Patches of the pixels a flat `palette` (sRGB) leaves visibly off that lie away from
    every border between palette colours (see the module), per 10,000 pixels. `colour_index` is
    each pixel's distinct colour as an (H, W) map (-1 where not opaque) and `colour_lab`
    those colours in CIELAB. Cost: O(U log K) for U distinct colours, then a few
    whole-image compares, O(N), and the patches of the off pixels (`_detached_patches`).
    """
    if len(palette) == 0 or not opaque.any():
        return 0.0
    palette_lab = srgb_to_lab(np.asarray(palette, dtype=np.float64))
    _, nearest = PointSet(palette_lab).query(colour_lab)
    off_colour = ciede2000(colour_lab, palette_lab[nearest]) > colour_count.VISIBLE
    safe = np.where(opaque, colour_index, 0)
    label = np.where(opaque, nearest[safe], -1)
    off = opaque & off_colour[safe]
    if not off.any():
        return 0.0
    # Borders between nearest palette colours (transparency counts as one), widened by a
    # pixel in every direction: anti-aliasing and ringing sit on them.
    border = np.zeros(shape, dtype=bool)
    across = label[:, 1:] != label[:, :-1]
    border[:, 1:] |= across
    border[:, :-1] |= across
    across = label[1:] != label[:-1]
    border[1:] |= across
    border[:-1] |= across
    near = border.copy()
    near[1:] |= border[:-1]
    near[:-1] |= border[1:]
    wide = near.copy()
    wide[:, 1:] |= near[:, :-1]
    wide[:, :-1] |= near[:, 1:]
    detached = _detached_patches(off, wide, labelled="scipy.ndimage" in sys.modules)
    return detached * 10_000 / label.size


def _detached_patches(off: BoolArray, wide: BoolArray, labelled: bool) -> int:
    """The 4-connected patches of `off` pixels none of whose pixels is `wide`.

    With `labelled`, by `scipy.ndimage.label` (its default cross): one pass in C, O(N),
    0.45 → 0.17 s of the Hubble field's call at 3 MP. It is asked only when the process
    has loaded `scipy.ndimage` already (a photo's segmentation does): importing it
    costs about 0.4 s, more than it saves below a few megapixels, and flat art never
    loads scipy. Else each off pixel is a node joined to its off neighbours to the
    right and below (`graphs.connected_components`), O(P log P) for P off pixels. The
    same count either way."""
    if labelled:
        from scipy import ndimage

        patch, count = ndimage.label(off)
        reached = np.zeros(count + 1, dtype=bool)
        reached[patch[wide & off]] = True
        return int(count - np.count_nonzero(reached[1:]))
    at = np.flatnonzero(off)
    node = np.full(off.size, -1, dtype=np.int64)
    node[at] = np.arange(len(at))
    width = off.shape[1]
    right = off[:, :-1] & off[:, 1:]
    below = off[:-1] & off[1:]
    left_of = np.flatnonzero(np.pad(right, ((0, 0), (0, 1))))
    above = np.flatnonzero(below)
    count, patch = graphs.connected_components(
        len(at),
        np.concatenate([node[left_of], node[above]]),
        np.concatenate([node[left_of + 1], node[above + width]]),
    )
    touching = np.zeros(count, dtype=bool)
    touching[patch[wide.ravel()[at]]] = True
    return int(count - np.count_nonzero(touching))
