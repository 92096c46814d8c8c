"""The fitting search over cut runs: long or winding runs are searched in pieces side by
side (`curves._cut_runs`) and joined again (`curves._join_cuts`)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from printjob_adapters.engine import curves
from printjob_adapters.engine.curves import Runs, fit_runs

TOLERANCE = 0.4


def one_run(points: np.ndarray) -> Runs:
    return Runs(
        data=points,
        offsets=np.array([0, len(points)]),
        t1=curves._units((points[1] - points[0])[None]),
        t2=curves._units((points[-2] - points[-1])[None]),
        slack=np.ones(1),
    )


def spiral(count: int, turns: float) -> np.ndarray:
    s = np.linspace(0.0, 1.0, count)
    angle = turns * 2 * np.pi * s
    radius = 40 + 200 * s
    return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)


def search_rounds(runs: Runs, monkeypatch) -> int:
    calls = []
    original = curves._try

    def record(*args):
        calls.append(len(args[1]))
        return original(*args)

    monkeypatch.setattr(curves, "_try", record)
    fit_runs(runs, TOLERANCE)
    monkeypatch.setattr(curves, "_try", original)
    return len(calls)


def test_a_long_straight_run_cut_in_pieces_is_one_line_again():
    x = np.linspace(0.0, 900.0, 1800)
    points = np.stack([x, 0.3 * x + 5.0], axis=1)
    assert len(curves._cut_runs(one_run(points)).run) > 3
    segments, is_line, offsets = fit_runs(one_run(points), TOLERANCE)
    assert list(offsets) == [0, 1]
    assert is_line[0]
    assert np.allclose(segments[0, 2], points[-1])


def test_search_rounds_do_not_grow_with_a_runs_length(monkeypatch):
    short = search_rounds(one_run(spiral(600, 3.0)), monkeypatch)
    long = search_rounds(one_run(spiral(2400, 12.0)), monkeypatch)
    assert long <= short + 2


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(2, 900), min_size=1, max_size=5),
    st.sampled_from([0.01, 0.2, 1.5]),
    st.integers(0, 2**32 - 1),
)
def test_cut_pieces_cover_each_run_end_to_end(sizes: list[int], wiggle: float, seed: int):
    rng = np.random.default_rng(seed)
    shapes = []
    for size in sizes:
        heading = np.cumsum(rng.normal(0.0, wiggle, size))
        shapes.append(np.cumsum(np.stack([np.cos(heading), np.sin(heading)], axis=1), axis=0))
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    count = len(sizes)
    runs = Runs(
        data=np.concatenate(shapes),
        offsets=offsets,
        t1=np.tile([1.0, 0.0], (count, 1)),
        t2=np.tile([-1.0, 0.0], (count, 1)),
        slack=np.ones(count),
    )
    pieces = curves._cut_runs(runs)
    assert np.all(np.diff(pieces.run) >= 0)
    for r, size in enumerate(sizes):
        mine = np.nonzero(pieces.run == r)[0]
        # Consecutive pieces share their cut point; the first starts at 0, the last ends
        # at the run's end; a cut run's pieces hold `CUT_MIN` points or more.
        assert pieces.start[mine[0]] == 0
        assert pieces.end[mine[-1]] == size - 1
        assert np.array_equal(pieces.start[mine[1:]], pieces.end[mine[:-1]])
        if len(mine) > 1:
            assert np.all(pieces.end[mine] - pieces.start[mine] + 1 >= curves.CUT_MIN)
            # Both sides of a cut take the same tangent, so the run stays smooth there.
            assert np.allclose(pieces.t1[mine[1:]], -pieces.t2[mine[:-1]])
