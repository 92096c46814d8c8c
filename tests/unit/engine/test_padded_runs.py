"""The padded label map's row runs, placed around the labels' own runs, are the runs of
the padded map laid out and compared pixel by pixel."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from printjob_adapters.engine.boundaries import OUTSIDE, padded_row_runs, row_runs


@settings(max_examples=200, deadline=None)
@given(
    arrays(np.int32, st.tuples(st.integers(1, 14), st.integers(1, 14)), elements=st.integers(-1, 3))
)
def test_padded_runs_are_the_runs_of_the_padded_map(labels: np.ndarray) -> None:
    padded = np.full((labels.shape[0] + 2, labels.shape[1] + 2), OUTSIDE, dtype=np.int32)
    padded[1:-1, 1:-1] = labels
    expected = row_runs(padded)
    got = padded_row_runs(labels)
    assert (got.width, got.height) == (expected.width, expected.height)
    for field in ("start", "label"):
        want, have = getattr(expected, field), getattr(got, field)
        assert have.dtype == want.dtype, field
        assert np.array_equal(have, want), field
