"""Background detection and removal (background=remove).

Decisions:
- Transparent input: when at least half of the image border is transparent (label -1), the
  transparency *is* the background. Nothing more is removed, and removal counts as done
  (`background_removed` is True) because the output leaves a background out, as asked.
- Otherwise the background is the palette colour covering at least half of the border
  pixels. With no such majority (flags, photos, full-bleed art) there is no background
  and nothing is removed.
- All pixels of that colour are removed, including enclosed islands: a print shop expects the
  counter of an "O" or the gap between a logo's letters to show the garment, and a colour
  touching the border on more than half its length is the paper, not part of the artwork.
- When removal would leave nothing (a single-colour image, or nothing opaque at all),
  nothing is removed and `removed` is False.
"""

from __future__ import annotations

import attrs
import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int32]

#: Fraction of the border a colour (or transparency) must cover to be the background.
BORDER_MAJORITY = 0.5


@attrs.frozen(eq=False)
class Removal:
    """Outcome of background removal."""

    labels: IntArray
    removed: bool
    #: Palette index that was removed (None when transparency was the background or none).
    index: int | None = None


def border_pixels(labels: IntArray) -> IntArray:
    """The labels along the image's outermost ring (each pixel once)."""
    if labels.shape[0] <= 2 or labels.shape[1] <= 2:
        return labels.ravel()
    return np.concatenate([labels[0], labels[-1], labels[1:-1, 0], labels[1:-1, -1]])


def remove_background(labels: IntArray) -> Removal:
    """Background step: leave out the border's majority colour. Cost: O(N)."""
    ring = border_pixels(labels)
    if (ring < 0).mean() >= BORDER_MAJORITY:
        removed = bool((labels < 0).any() and (labels >= 0).any())
        return Removal(labels=labels, removed=removed)
    counts = np.bincount(ring[ring >= 0])
    index = int(np.argmax(counts))
    if counts[index] < BORDER_MAJORITY * len(ring):
        return Removal(labels=labels, removed=False)
    hit = labels == index
    if not (labels[~hit] >= 0).any():
        return Removal(labels=labels, removed=False)
    return Removal(labels=np.where(hit, -1, labels).astype(np.int32), removed=True, index=index)
