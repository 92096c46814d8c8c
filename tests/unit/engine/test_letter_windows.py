"""The small-text windows (`small_text._dilate`, `small_text._erode`) against SciPy's
filters, on maps of every small shape: worked on slices of the map in its own memory
order, they must give what the filters give."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from printjob_adapters.engine import small_text


def test_dilate_is_the_grey_dilation_of_a_non_negative_map() -> None:
    rng = np.random.default_rng(12)
    for _ in range(150):
        h, w = (int(v) for v in rng.integers(1, 24, 2))
        component = rng.integers(0, 6, (h, w)).astype(np.int32)
        component *= rng.random((h, w)) < 0.3
        for reach in (1, 2, 3):
            side = 2 * reach + 1
            want = ndimage.grey_dilation(component, size=(side, side), mode="constant", cval=0)
            got = small_text._dilate(component, reach)
            assert got.flags.c_contiguous
            assert (got == want).all()


def test_erode_holds_where_the_whole_line_window_holds() -> None:
    rng = np.random.default_rng(13)
    for _ in range(150):
        h, w = (int(v) for v in rng.integers(1, 24, 2))
        mask = rng.random((h, w)) < 0.75
        for axis in (0, 1):
            for reach in (1, 2):
                size = [1, 1]
                size[axis] = 2 * reach + 1
                want = ndimage.minimum_filter(mask, size=size, mode="constant", cval=False)
                assert (small_text._erode(mask, axis, reach) == want).all()
