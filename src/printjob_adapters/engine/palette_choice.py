"""An explicit `colors=N`: keep the N artwork colours that matter most to the eye.

When the artwork has more flat colours than asked for, some must merge into others. The
cost of merging colour j into colour m is how much the picture changes where j was:

    weight_j * distance(j, m)

- The distance stresses lightness (`LIGHTNESS_WEIGHT`) over chroma: the eye reads shapes
  and letters by lightness contrast, so black ink is far from the yellow it sits on, and a
  second shade of the background is near it. Only moderately: hue matters too (a green
  leaf must not give way to a second red).
- The weight counts a colour's edge pixels (`quantise.Histogram.edge`: strokes, outlines,
  small text) `EDGE_WEIGHT` times its interior pixels: a dark outline or text ink covers
  few pixels but carries the drawing.

The N colours are chosen by weighted k-medoids over the artwork's own colours, so every
colour kept is an exact colour of the artwork, never a muddy average; anti-aliasing tints
are never among them (the greedy palette has already rejected mixtures of two colours).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from printjob_adapters.engine.colour import srgb_to_lab
from printjob_adapters.engine.nearest import PointSet

FloatArray = npt.NDArray[np.floating[Any]]

#: Lightness differences count this many times as much as chroma ones.
LIGHTNESS_WEIGHT = 1.5
#: An edge pixel (stroke, outline, text) counts this many times as much as an interior one.
EDGE_WEIGHT = 16.0
#: Medoid refinement rounds after the greedy start.
_ROUNDS = 4


def visual_distance(lab1: FloatArray, lab2: FloatArray) -> FloatArray:
    """CIELAB distance with lightness weighted by `LIGHTNESS_WEIGHT` (broadcasting)."""
    diff = np.asarray(lab1, dtype=np.float64) - np.asarray(lab2, dtype=np.float64)
    diff[..., 0] *= LIGHTNESS_WEIGHT
    out: FloatArray = np.sqrt((diff * diff).sum(axis=-1))
    return out


def keep_most_visible(
    hist_lab: FloatArray, flat: FloatArray, edge: FloatArray, palette: FloatArray, k: int
) -> FloatArray:
    """The `k` colours of `palette` (sRGB) whose loss the eye would notice most, in order
    of choice. Every histogram bin (CIELAB, with flat and edge pixel counts) weighs on its
    nearest palette colour. Cost: O(B log K) to weigh the B bins, O(K^2 k) to choose.
    """
    if k >= len(palette):
        return palette
    lab = srgb_to_lab(palette)
    _, idx = PointSet(lab).query(hist_lab)
    weight = np.bincount(idx, flat + EDGE_WEIGHT * edge, minlength=len(palette))
    dist = visual_distance(lab[:, None, :], lab[None, :, :])
    best = np.full(len(palette), np.inf)
    medoids: list[int] = []
    for _ in range(k):
        cost = (weight[:, None] * np.minimum(best[:, None], dist)).sum(axis=0)
        cost[medoids] = np.inf
        pick = int(np.argmin(cost))
        medoids.append(pick)
        best = np.minimum(best, dist[:, pick])
    for _ in range(_ROUNDS):
        owner = np.argmin(dist[:, medoids], axis=1)
        for j in range(k):
            members = np.flatnonzero(owner == j)
            if members.size == 0:  # a duplicate colour: its twin owns the members
                continue
            inner = (weight[members, None] * dist[np.ix_(members, members)]).sum(axis=0)
            medoids[j] = int(members[np.argmin(inner)])
    out: FloatArray = palette[medoids]
    return out


#: A photo refused for its segments is traced again with this share of its colours.
RETRY_SHARE = 0.5
#: ... when it has at least this many (a photo's dense palette); fewer are not a photo.
RETRY_MIN_COLOURS = 8


def fewer_for_segments(palette: npt.NDArray[np.floating[Any]]) -> int | None:
    """The colour count to trace a photo with again when its automatic trace passed the
    segment cap (`bounds.TooManySegments`): half its colours, so it gets fewer, larger
    regions instead of a refusal (the stereo motorcycle upscaled to 3 MP: 87 colours and
    665 000 segments). None when `palette` is not a photo's dense palette
    (`colour_count.near_equal`): flat art that busy is refused as before. O(K^2)."""
    from printjob_adapters.engine import colour_count

    if len(palette) < RETRY_MIN_COLOURS or colour_count.near_equal(palette) is None:
        return None
    return max(RETRY_MIN_COLOURS // 2, int(len(palette) * RETRY_SHARE))
