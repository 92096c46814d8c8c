"""The outline walk a chain at a time gives the contours of the walk edge by edge."""

from __future__ import annotations

import numpy as np
import pytest

from printjob_adapters.engine import stacking
from printjob_adapters.engine.boundaries import build_boundary_graph


def balanced_edges(seed: int, shuffled: bool) -> tuple[np.ndarray, ...]:
    """Closed walks over a few junctions that many walks share (junctions of several
    exits), long runs through junctions of their own (chains, some entered in the
    middle by the walk's outer loop) and rings of junctions of their own: every junction
    has as many edges arriving as leaving. Junction numbers are sparse and unordered."""
    rng = np.random.default_rng(seed)
    ids = rng.permutation(100_000)
    fresh = iter(ids[20:].tolist())
    hubs = ids[:20]
    steps: list[tuple[int, int]] = []
    for _ in range(rng.integers(3, 30)):
        stops = rng.choice(hubs, size=int(rng.integers(1, 6))).tolist()
        path: list[int] = []
        for hub in stops:
            path.append(hub)
            path += [next(fresh) for _ in range(int(rng.integers(0, 12)))]
        steps += list(zip(path, path[1:] + path[:1], strict=True))
    for _ in range(rng.integers(0, 6)):
        ring = [next(fresh) for _ in range(int(rng.integers(1, 9)))]
        steps += list(zip(ring, ring[1:] + ring[:1], strict=True))
    start, end = np.array(steps, dtype=np.int64).reshape(-1, 2).T
    n = len(start)
    edges = np.sort(rng.choice(10 * n, size=n, replace=False)).astype(np.int64)
    if shuffled:
        edges = rng.permutation(edges)
    forward = rng.random(n) < 0.5
    j0 = np.where(forward, start, end)
    j1 = np.where(forward, end, start)
    keep = rng.permutation(n)
    return edges, forward[keep], j0[keep], j1[keep]


@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("seed", range(40))
def test_chained_walk_makes_the_contours_of_the_edge_walk(seed: int, shuffled: bool) -> None:
    edges, forward, j0, j1 = balanced_edges(seed, shuffled)
    chained = stacking._walk_chained(edges, forward, j0, j1)
    assert chained is not None
    for got, want in zip(chained, stacking._walk_edges(edges, forward, j0, j1), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_a_junction_of_more_arrivals_than_exits_is_left_to_the_edge_walk() -> None:
    # 1 -> 2 -> 3 and 4 -> 2: two edges arrive at junction 2, one leaves.
    edges = np.arange(3, dtype=np.int64)
    forward = np.ones(3, dtype=bool)
    j0 = np.array([1, 2, 4])
    j1 = np.array([2, 3, 2])
    assert stacking._walk_chained(edges, forward, j0, j1) is None
    walked = stacking._walk(edges, forward, j0, j1)
    for got, want in zip(walked, stacking._walk_edges(edges, forward, j0, j1), strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_photo_like_layer_walks_the_same_either_way() -> None:
    # Blobs of three colours on noise: thousands of outline edges, past the threshold.
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 3, size=(40, 40)).astype(np.int32)
    labels = np.kron(labels, np.ones((3, 3), dtype=np.int32))
    labels[rng.random(labels.shape) < 0.15] = 3
    graph = build_boundary_graph(labels)
    member = np.zeros(len(graph.face_label), dtype=bool)
    member[graph.face_label == 0] = True
    left_in = member[graph.edge_left]
    right_in = member[graph.edge_right]
    chosen = np.nonzero(left_in != right_in)[0]
    forward = left_in[chosen]
    open_ = chosen[~graph.edge_closed[chosen]]
    args = (open_, forward[~graph.edge_closed[chosen]], graph.edge_j0[open_], graph.edge_j1[open_])
    assert len(open_) >= stacking._CHAINED_WALK
    chained = stacking._walk_chained(*args)
    assert chained is not None
    for got, want in zip(chained, stacking._walk_edges(*args), strict=True):
        np.testing.assert_array_equal(got, want)
