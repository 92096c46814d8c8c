"""The batched fitting search keeps every curve within tolerance of its data.

`curves.fit_runs` fits many runs at once, many reaches per run and round; whatever it
batches, each run's pieces must pass within the tolerance of that run's own points and
join end to end from its first point to its last.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from printjob_adapters.engine import curves
from printjob_adapters.engine.curves import Runs, fit_runs

#: Curve samples per fitted segment when measuring distances (joined by lines, which
#: cut a segment's curvature by well under a hundredth of a pixel).
SAMPLES = 200
TOLERANCE = 0.4


def shape_points(kind: int, size: float, turns: float, count: int, phase: float) -> np.ndarray:
    """Points along a smooth shape: an arc, a sine wave, or a spiral."""
    s = np.linspace(0.0, 1.0, count)
    if kind == 0:
        angle = phase + turns * 2 * np.pi * s
        return np.stack([size * np.cos(angle), size * np.sin(angle)], axis=1)
    if kind == 1:
        x = s * size * 4
        return np.stack([x, size * 0.3 * np.sin(turns * 2 * np.pi * s + phase)], axis=1)
    radius = size * (0.4 + 0.6 * s)
    angle = phase + turns * 2 * np.pi * s
    return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)


def runs_of(shapes: list[np.ndarray], slack: list[float]) -> Runs:
    offsets = np.zeros(len(shapes) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in shapes], out=offsets[1:])
    t1 = np.array([curves._units((p[1] - p[0])[None])[0] for p in shapes])
    t2 = np.array([curves._units((p[-2] - p[-1])[None])[0] for p in shapes])
    return Runs(data=np.concatenate(shapes), offsets=offsets, t1=t1, t2=t2, slack=np.array(slack))


def curve_samples(start: np.ndarray, segments: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """Dense points along consecutive segments from `start` (a line repeats its end;
    it is sampled evenly along its length)."""
    u = np.linspace(0.0, 1.0, SAMPLES)[:, None]
    out = []
    p0 = start
    for (p1, p2, p3), line in zip(segments, lines, strict=True):
        if line:
            p1, p2 = p0 + (p3 - p0) / 3, p0 + 2 * (p3 - p0) / 3
        out.append(
            (1 - u) ** 3 * p0 + 3 * u * (1 - u) ** 2 * p1 + 3 * u * u * (1 - u) * p2 + u**3 * p3
        )
        p0 = p3
    return np.concatenate(out)


def distances(points: np.ndarray, polyline: np.ndarray) -> np.ndarray:
    """Each point's distance to a polyline (the dense samples joined by lines)."""
    a, b = polyline[:-1], polyline[1:]
    ab = b - a
    length2 = np.maximum((ab * ab).sum(axis=1), 1e-18)
    ap = points[:, None, :] - a[None]
    t = np.clip((ap * ab[None]).sum(axis=2) / length2, 0.0, 1.0)
    gap = ap - t[:, :, None] * ab[None]
    out: np.ndarray = np.sqrt((gap * gap).sum(axis=2)).min(axis=1)
    return out


Shape = tuple[int, float, float, int, float]
shape = st.tuples(
    st.integers(0, 2),
    st.floats(3.0, 60.0),
    st.floats(0.05, 1.5),
    st.integers(4, 300),
    st.floats(0.0, 6.28),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(shape, st.floats(1.0, 2.5)), min_size=1, max_size=6))
def test_batched_fit_stays_within_tolerance_of_every_data_point(
    runs_spec: list[tuple[Shape, float]],
) -> None:
    shapes = [shape_points(*spec) for spec, _ in runs_spec]
    runs = runs_of(shapes, [s for _, s in runs_spec])
    segments, is_line, offsets = fit_runs(runs, TOLERANCE)
    for r, points in enumerate(shapes):
        pieces = segments[offsets[r] : offsets[r + 1]]
        assert len(pieces) >= 1
        # Pieces run end to end from the run's first point to its last.
        assert np.allclose(pieces[-1, 2], points[-1])
        lines = is_line[offsets[r] : offsets[r + 1]]
        assert np.array_equal(pieces[lines, 0], pieces[lines, 2])
        gap = distances(points, curve_samples(points[0], pieces, lines))
        # Attempts judge at most FIT_POINTS evenly strided points of a piece (`_try`);
        # on smooth data the points between those stay within a tenth of a pixel more.
        assert gap.max() <= TOLERANCE * runs.slack[r] + 0.1


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(shape, st.floats(1.0, 2.5)), min_size=2, max_size=6))
def test_a_run_fits_the_same_in_any_batch(runs_spec: list[tuple[Shape, float]]) -> None:
    shapes = [shape_points(*spec) for spec, _ in runs_spec]
    slack = [s for _, s in runs_spec]
    together = fit_runs(runs_of(shapes, slack), TOLERANCE)
    for r, points in enumerate(shapes):
        alone = fit_runs(runs_of([points], [slack[r]]), TOLERANCE)
        rows = slice(together[2][r], together[2][r + 1])
        assert np.array_equal(together[0][rows], alone[0])
        assert np.array_equal(together[1][rows], alone[1])
