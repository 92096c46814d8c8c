"""The planar boundary graph: faces, junctions, edges between them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from printjob_adapters.engine.boundaries import DX, DY, OUTSIDE, build_boundary_graph, label_faces


def edge_cracks(graph, e):
    s, t = graph.edge_start[e], graph.edge_start[e + 1]
    return graph.crack_x[s:t], graph.crack_y[s:t], graph.crack_dir[s:t]


def check_graph(labels):
    graph = build_boundary_graph(labels)
    h, w = labels.shape
    faces = graph.faces
    # Faces are 4-connected runs of one label.
    assert (graph.face_label[faces[1:-1, 1:-1]] == labels).all()
    assert (faces[0, :] == 0).all() and graph.face_label[0] == OUTSIDE
    lr, lc = graph.left_pixels()
    rr, rc = graph.right_pixels()
    left, right = faces[lr, lc], faces[rr, rc]
    # Every crack separates two different faces, the smaller id on its left.
    assert (left < right).all()
    # Every boundary crack of the label map appears exactly once.
    padded = np.full((h + 2, w + 2), OUTSIDE)
    padded[1:-1, 1:-1] = labels
    expected = (padded[:-1, 1:-1] != padded[1:, 1:-1]).sum() + (
        padded[1:-1, :-1] != padded[1:-1, 1:]
    ).sum()
    keys = set(
        zip(
            np.minimum(graph.crack_x, graph.crack_x + DX[graph.crack_dir]).tolist(),
            np.minimum(graph.crack_y, graph.crack_y + DY[graph.crack_dir]).tolist(),
            (graph.crack_dir % 2).tolist(),
            strict=True,
        )
    )
    assert len(graph.crack_x) == expected == len(keys)
    for e in range(graph.edge_count):
        x, y, d = edge_cracks(graph, e)
        s = graph.edge_start[e]
        # Cracks of an edge are contiguous and separate the edge's two faces.
        assert (x[:-1] + DX[d[:-1]] == x[1:]).all() and (y[:-1] + DY[d[:-1]] == y[1:]).all()
        assert (left[s : s + len(x)] == graph.edge_left[e]).all()
        assert (right[s : s + len(x)] == graph.edge_right[e]).all()
        if graph.edge_closed[e]:
            assert x[-1] + DX[d[-1]] == x[0] and y[-1] + DY[d[-1]] == y[0]
        else:
            j0, j1 = graph.edge_j0[e], graph.edge_j1[e]
            assert (graph.junction_x[j0], graph.junction_y[j0]) == (x[0], y[0])
            end = (x[-1] + DX[d[-1]], y[-1] + DY[d[-1]])
            assert (graph.junction_x[j1], graph.junction_y[j1]) == end
    return graph


def test_island_is_one_closed_edge():
    labels = np.zeros((8, 8), dtype=np.int32)
    labels[2:5, 3:6] = 1
    graph = check_graph(labels)
    inner = [e for e in range(graph.edge_count) if graph.face_label[graph.edge_right[e]] == 1]
    assert len(inner) == 1 and graph.edge_closed[inner[0]]
    x, _, _ = edge_cracks(graph, inner[0])
    assert len(x) == 12


def test_three_regions_meet_at_junctions():
    labels = np.zeros((6, 9), dtype=np.int32)
    labels[:, 3:6] = 1
    labels[:, 6:] = 2
    graph = check_graph(labels)
    # Two vertical boundaries, each from the top border to the bottom one.
    inner = [e for e in range(graph.edge_count) if graph.edge_left[e] != 0]
    assert len(inner) == 2
    for e in inner:
        x, _y, d = edge_cracks(graph, e)
        assert len(x) == 6 and (d % 2 == 1).all()


def test_diagonal_touch_is_a_junction_and_faces_stay_separate():
    labels = np.array([[1, 0], [0, 1]], dtype=np.int32)
    graph = check_graph(labels)
    assert len(np.unique(graph.faces[1:-1, 1:-1])) == 4
    centre = np.nonzero((graph.junction_x == 1) & (graph.junction_y == 1))[0]
    assert len(centre) == 1


@settings(max_examples=40, deadline=None)
@given(
    arrays(np.int32, st.tuples(st.integers(1, 9), st.integers(1, 9)), elements=st.integers(-1, 2))
)
def test_random_label_maps(labels):
    check_graph(labels)


def flood_faces(padded):
    """Reference face numbering: 4-connected flood fill from every unvisited pixel in
    raster order, numbered in that order."""
    h, w = padded.shape
    faces = np.full((h, w), -1, dtype=np.int64)
    count = 0
    for y0 in range(h):
        for x0 in range(w):
            if faces[y0, x0] >= 0:
                continue
            stack = [(y0, x0)]
            faces[y0, x0] = count
            while stack:
                y, x = stack.pop()
                for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                    if (
                        0 <= ny < h
                        and 0 <= nx < w
                        and faces[ny, nx] < 0
                        and padded[ny, nx] == padded[y, x]
                    ):
                        faces[ny, nx] = count
                        stack.append((ny, nx))
            count += 1
    return faces, count


@settings(max_examples=40, deadline=None)
@given(
    arrays(np.int32, st.tuples(st.integers(1, 9), st.integers(1, 9)), elements=st.integers(-1, 2))
)
def test_faces_are_numbered_by_first_pixel(labels):
    padded = np.full((labels.shape[0] + 2, labels.shape[1] + 2), OUTSIDE, dtype=np.int32)
    padded[1:-1, 1:-1] = labels
    faces, label, area = label_faces(padded)
    expected, expected_count = flood_faces(padded)
    assert np.array_equal(faces, expected)
    assert len(label) == len(area) == expected_count
    assert np.array_equal(label[faces], padded)
    assert np.array_equal(area, np.bincount(expected.ravel()))


@settings(max_examples=40, deadline=None)
@given(
    arrays(np.int32, st.tuples(st.integers(1, 9), st.integers(1, 9)), elements=st.integers(-1, 2))
)
def test_edges_are_laid_out_by_first_crack(labels):
    # Edges come in the order of their first crack's id among the extracted cracks; a
    # loop starts at its smallest one. Rebuild that order by walking the cracks one by
    # one (horizontal cracks first, in raster order, then vertical ones, as extracted).
    graph = build_boundary_graph(labels)
    rank = {}
    # Extraction order: horizontal cracks (dir 0 or 2) by (row, col), then vertical ones.
    key = {}
    for s in range(len(graph.crack_x)):
        x, y, d = int(graph.crack_x[s]), int(graph.crack_y[s]), int(graph.crack_dir[s])
        if d % 2 == 0:
            key[s] = (0, y, min(x, x + DX[d]))
        else:
            key[s] = (1, min(y, y + DY[d]), x)
    for e in range(graph.edge_count):
        s, t = graph.edge_start[e], graph.edge_start[e + 1]
        keys = [key[c] for c in range(s, t)]
        rank[e] = min(keys) if graph.edge_closed[e] else keys[0]
        if graph.edge_closed[e]:
            # A loop is cut open at its smallest crack, which comes first.
            assert keys[0] == min(keys)
    firsts = [rank[e] for e in range(graph.edge_count)]
    assert firsts == sorted(firsts)
