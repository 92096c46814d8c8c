"""`faint_sources._detached_patches`: the patches of off pixels away from every border,
counted by `scipy.ndimage.label` (when the process has it loaded) and by the NumPy
components alike."""

from __future__ import annotations

import numpy as np
import pytest

from printjob_adapters.engine.faint_sources import _detached_patches


def test_patches_touching_the_border_are_not_counted() -> None:
    off = np.zeros((12, 12), dtype=bool)
    off[1:3, 1:3] = True  # a patch away from the border
    off[5, 5] = off[5, 6] = True  # another one
    off[6, 7] = True  # diagonal to the last: a patch of its own (4-connected)
    off[9:11, 2:8] = True  # a patch with one pixel on the border
    wide = np.zeros_like(off)
    wide[10, 7] = True
    for labelled in (False, True):
        assert _detached_patches(off, wide, labelled=labelled) == 3


@pytest.mark.parametrize("seed", range(6))
def test_both_countings_agree(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 90)), int(rng.integers(1, 90)))
    off = rng.random(shape) < rng.uniform(0.05, 0.7)
    wide = rng.random(shape) < rng.uniform(0.0, 0.2)
    assert _detached_patches(off, wide, labelled=True) == _detached_patches(
        off, wide, labelled=False
    )
