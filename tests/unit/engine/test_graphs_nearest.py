"""The NumPy graph and neighbour stages give SciPy's answers, number for number.

`graphs` and `nearest` replace `scipy.sparse.csgraph` and `scipy.spatial.cKDTree` so that
`printjob trace` does not load them; the engine's output must not change by a bit, so
each function is compared with the SciPy call it replaces on random inputs, including
the awkward ones (duplicate edges, self-loops, isolated nodes, cycles, ties, points on
the radius, empty sets).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components, depth_first_order
from scipy.spatial import cKDTree

from printjob_adapters.engine import graphs, nearest
from printjob_adapters.engine.nearest import PointSet


@st.composite
def edge_lists(draw: st.DrawFn) -> tuple[int, np.ndarray, np.ndarray]:
    count = draw(st.integers(1, 60))
    edges = draw(st.lists(st.tuples(st.integers(0, count - 1), st.integers(0, count - 1))))
    src = np.array([a for a, _ in edges], dtype=np.int64)
    dst = np.array([b for _, b in edges], dtype=np.int64)
    return count, src, dst


@given(edge_lists())
@settings(max_examples=300, deadline=None)
def test_components_match_scipy_numbering_included(
    graph: tuple[int, np.ndarray, np.ndarray],
) -> None:
    count, src, dst = graph
    matrix = coo_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), (count, count))
    want_n, want = connected_components(matrix, directed=False)
    got_n, got = graphs.connected_components(count, src, dst)
    assert got_n == want_n
    assert np.array_equal(got, want)


def test_components_of_a_long_path_in_scrambled_order() -> None:
    rng = np.random.default_rng(3)
    count = 200_000
    nodes = rng.permutation(count)
    src, dst = nodes[:-1], nodes[1:]
    n, labels = graphs.connected_components(count, src, dst)
    assert n == 1 and not labels.any()


def test_components_of_a_grid_image_match_scipy() -> None:
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, size=(300, 300))
    idx = np.arange(labels.size).reshape(labels.shape)
    right = labels[:, :-1] == labels[:, 1:]
    down = labels[:-1] == labels[1:]
    src = np.concatenate([idx[:, :-1][right], idx[:-1][down]])
    dst = np.concatenate([idx[:, 1:][right], idx[1:][down]])
    matrix = coo_matrix((np.ones(len(src)), (src, dst)), (labels.size,) * 2)
    want_n, want = connected_components(matrix, directed=False)
    got_n, got = graphs.connected_components(labels.size, src, dst)
    assert got_n == want_n and np.array_equal(got, want)


@st.composite
def chains(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """succ/pred of crack chains: paths and closed loops over a shuffled node set."""
    n = draw(st.integers(0, 80))
    order = np.array(draw(st.permutations(list(range(n)))), dtype=np.int64)
    cuts = sorted(set(draw(st.lists(st.integers(1, max(n - 1, 1)), max_size=10))))
    succ = np.full(n, -1, dtype=np.int64)
    pred = np.full(n, -1, dtype=np.int64)
    for piece in np.split(order, [c for c in cuts if c < n]):
        if len(piece) == 0:
            continue
        succ[piece[:-1]] = piece[1:]
        pred[piece[1:]] = piece[:-1]
        if draw(st.booleans()):  # a closed loop
            succ[piece[-1]] = piece[0]
            pred[piece[0]] = piece[-1]
    return succ, pred


def _scipy_walk(succ: np.ndarray, pred: np.ndarray) -> np.ndarray:
    n = len(succ)
    firsts = np.flatnonzero(pred < 0)
    if not len(firsts):
        return np.zeros(0, dtype=np.int32)
    child = np.where(succ >= 0, succ, 0)
    has_child = (succ >= 0) & (pred[child] == np.arange(n))
    src = np.concatenate([np.flatnonzero(has_child), np.full(len(firsts), n)])
    dst = np.concatenate([child[has_child], firsts])
    # One root over the firsts: SciPy visits a node's children in ascending order.
    graph = csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n + 1, n + 1))
    order = depth_first_order(graph, n, directed=True, return_predecessors=False)
    out: np.ndarray = order[order < n]
    return out


@given(chains())
@settings(max_examples=300, deadline=None)
def test_chain_walk_matches_scipys_depth_first_order(chain: tuple[np.ndarray, np.ndarray]) -> None:
    succ, pred = chain
    n = len(succ)
    child = np.where(succ >= 0, succ, 0)
    has_child = (succ >= 0) & (pred[child] == np.arange(n)) if n else np.zeros(0, bool)
    got = graphs.walk_chains(child, has_child, np.flatnonzero(pred < 0))
    assert got.dtype == np.int32
    assert np.array_equal(got, _scipy_walk(succ, pred))


def test_a_chain_of_a_million_nodes_walks_in_order() -> None:
    n = 1_000_000
    child = np.arange(1, n + 1)
    has_child = child < n
    got = graphs.walk_chains(np.minimum(child, n - 1), has_child, [0])
    assert np.array_equal(got, np.arange(n))


colours = hnp.arrays(
    np.float64,
    st.tuples(st.integers(0, 40), st.just(3)),
    # Coarse values: many exact ties and points exactly on a radius.
    elements=st.integers(-8, 8).map(lambda v: v * 1.5),
)


@given(colours.filter(len), colours)
@settings(max_examples=300, deadline=None)
def test_nearest_matches_ckdtree(points: np.ndarray, queries: np.ndarray) -> None:
    want_d, _ = cKDTree(points).query(queries)
    got_d, got_i = PointSet(points).query(queries)
    assert np.array_equal(got_d, want_d)
    # On an exact tie either point is nearest: the distances agree, the index may not.
    off = points[got_i] - queries
    assert np.array_equal(np.sqrt((off * off).sum(axis=1)), got_d)


@given(colours, st.sampled_from([0.0, 1.5, 2.0, 3.0, 4.5, 7.9]))
@settings(max_examples=300, deadline=None)
def test_pairs_within_a_radius_match_ckdtree(points: np.ndarray, r: float) -> None:
    want = cKDTree(points).query_pairs(r, output_type="ndarray")
    got = PointSet(points).query_pairs(r, output_type="ndarray")
    assert sorted(map(tuple, got.tolist())) == sorted(map(tuple, want.tolist()))


@given(colours, colours, st.sampled_from([0.0, 1.5, 2.0, 3.0, 4.5, 7.9]))
@settings(max_examples=300, deadline=None)
def test_balls_match_ckdtree(points: np.ndarray, queries: np.ndarray, r: float) -> None:
    tree, mine = cKDTree(points), PointSet(points)
    want = tree.query_ball_point(queries, r, return_sorted=False)
    got = mine.query_ball_point(queries, r, return_sorted=False)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert sorted(g.tolist()) == sorted(w)
    for q in queries[:5]:
        assert list(mine.query_ball_point(q, r)) == sorted(tree.query_ball_point(q, r))


@given(colours, colours, st.sampled_from([0.0, 1.5, 2.0, 4.5]))
@settings(max_examples=200, deadline=None)
def test_ball_pairs_are_the_balls_flattened_in_order(
    points: np.ndarray, queries: np.ndarray, r: float
) -> None:
    mine = PointSet(points)
    rows, hits = mine.ball_pairs(queries, r)
    balls = mine.query_ball_point(queries, r) if len(queries) else []
    assert rows.tolist() == [i for i, ball in enumerate(balls) for _ in ball]
    assert hits.tolist() == [j for ball in balls for j in ball.tolist()]


@given(colours, colours, st.sampled_from([0.0, 1.5, 2.0, 4.5]))
@settings(max_examples=200, deadline=None)
def test_small_sets_measured_whole_find_what_the_grid_finds(
    points: np.ndarray, queries: np.ndarray, r: float
) -> None:
    """Sets this small take the every-distance path; the grid, which larger sets take,
    must find the same pairs and balls."""
    mine = PointSet(points)
    grid = mine._grid(r)
    assert sorted(map(tuple, mine.query_pairs(r).tolist())) == sorted(
        map(tuple, grid.pairs(r).tolist())
    )
    rows, hits = mine.ball_pairs(queries, r)
    grid_rows, grid_hits = grid.within(queries, r)
    assert sorted(zip(rows.tolist(), hits.tolist(), strict=True)) == sorted(
        zip(grid_rows.tolist(), grid_hits.tolist(), strict=True)
    )


def test_grid_pairs_all_offsets_at_once_are_those_offset_by_offset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Few occupied cubes search every neighbour offset at once, many one offset at a
    time: the same pairs in the same order, and the tree's pairs."""
    rng = np.random.default_rng(5)
    for n, r in ((1, 2.0), (40, 1.5), (325, 6.0), (900, 3.0)):
        points = np.round(rng.uniform(0, 60, size=(n, 3)))  # points exactly on a radius
        grid = PointSet(points)._grid(r)
        batched = grid.pairs(r)
        monkeypatch.setattr(nearest, "BATCH_CUBES", 0)
        one_by_one = grid.pairs(r)
        monkeypatch.undo()
        assert np.array_equal(batched, one_by_one)
        want = cKDTree(points).query_pairs(r, output_type="ndarray")
        assert sorted(map(tuple, batched.tolist())) == sorted(map(tuple, want.tolist()))
        assert n < 300 or len(batched) > 0


def test_ball_pairs_of_a_large_set_are_the_trees_balls() -> None:
    rng = np.random.default_rng(13)
    points = np.round(rng.uniform(0, 60, size=(5_000, 3)), 1)
    rows, hits = PointSet(points).ball_pairs(points[:50], 2.0)
    balls = cKDTree(points).query_ball_point(points[:50], 2.0, return_sorted=True)
    assert rows.tolist() == [i for i, ball in enumerate(balls) for _ in ball]
    assert hits.tolist() == [j for ball in balls for j in ball]


def test_nearest_of_real_valued_colours_matches_ckdtree_exactly() -> None:
    rng = np.random.default_rng(11)
    points = rng.uniform(-100, 100, size=(300, 3))
    queries = rng.uniform(-110, 110, size=(3_000, 3))  # the whole-array path
    want_d, want_i = cKDTree(points).query(queries)
    got_d, got_i = PointSet(points).query(queries)
    assert np.array_equal(got_i, want_i)
    assert np.array_equal(got_d, want_d)


def test_large_sets_take_the_tree_and_agree_with_it() -> None:
    rng = np.random.default_rng(12)
    points = np.round(rng.uniform(0, 60, size=(5_000, 3)), 1)
    mine, tree = PointSet(points), cKDTree(points)
    pairs = mine.query_pairs(1.5)
    want = tree.query_pairs(1.5, output_type="ndarray")
    assert sorted(map(tuple, pairs.tolist())) == sorted(map(tuple, want.tolist()))
    balls = mine.query_ball_point(points[:50], 2.0)
    assert [sorted(b.tolist()) for b in balls] == [
        sorted(b) for b in tree.query_ball_point(points[:50], 2.0)
    ]
    queries = rng.uniform(0, 60, size=(1_000, 3))
    d, i = mine.query(queries)
    want_d, want_i = tree.query(queries)
    assert np.array_equal(d, want_d) and np.array_equal(i, want_i)
