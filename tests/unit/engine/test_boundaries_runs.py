"""The boundary graph and the stacking's neighbour search read from row runs give what
the whole-image passes and the two full walks of the cracks they replace gave: the same
arrays, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from printjob_adapters.engine import boundaries, graphs, stacking
from printjob_adapters.engine.boundaries import DX, DY, OUTSIDE, build_boundary_graph

FIELDS = (
    "faces",
    "face_label",
    "face_area",
    "crack_x",
    "crack_y",
    "crack_dir",
    "edge_start",
    "edge_left",
    "edge_right",
    "edge_closed",
    "edge_j0",
    "edge_j1",
    "junction_x",
    "junction_y",
)


def whole_image_graph(labels: np.ndarray) -> dict[str, np.ndarray]:
    """The boundary graph as the engine built it with whole-image passes: a face map
    from a cumulative run count, cracks from comparing shifted face maps, junctions
    from every corner's degree counted over all corners."""
    h, w = labels.shape
    padded = np.full((h + 2, w + 2), OUTSIDE, dtype=np.int32)
    padded[1:-1, 1:-1] = labels
    ph, pw = padded.shape
    starts = np.ones((ph, pw), dtype=bool)
    np.not_equal(padded[:, 1:], padded[:, :-1], out=starts[:, 1:])
    run = np.cumsum(starts, dtype=np.int32).reshape(ph, pw) - 1
    run_start = np.flatnonzero(starts)
    count = len(run_start)
    same = padded[1:] == padded[:-1]
    first = same.copy()
    first[:, 1:] &= starts[:-1, 1:] | starts[1:, 1:] | ~same[:, :-1]
    r, c = np.nonzero(first)
    face_count, component = graphs.connected_components(count, run[r, c], run[r + 1, c])
    first_run = np.full(face_count, count, dtype=np.int64)
    np.minimum.at(first_run, component, np.arange(count))
    order = np.argsort(first_run)
    rank = np.empty(face_count, dtype=np.int32)
    rank[order] = np.arange(face_count, dtype=np.int32)
    face_of_run = rank[component]
    length = np.diff(np.append(run_start, ph * pw))
    faces = face_of_run[run]
    face_label = padded.ravel()[run_start[first_run[order]]]
    face_area = np.bincount(face_of_run, weights=length, minlength=face_count).astype(np.int64)
    face_area[0] = 0

    above, below = faces[0 : h + 1, 1 : w + 1], faces[1 : h + 2, 1 : w + 1]
    hy, hx = np.nonzero(above != below)
    left, right = faces[1 : h + 1, 0 : w + 1], faces[1 : h + 1, 1 : w + 2]
    vy, vx = np.nonzero(left != right)
    h_pos = above[hy, hx] < below[hy, hx]
    v_pos = right[vy, vx] < left[vy, vx]
    cx = np.concatenate([np.where(h_pos, hx, hx + 1), vx]).astype(np.int32)
    cy = np.concatenate([hy, np.where(v_pos, vy, vy + 1)]).astype(np.int32)
    cd = np.concatenate([np.where(h_pos, 0, 2), np.where(v_pos, 1, 3)]).astype(np.int32)
    n = len(cx)
    stride = w + 1
    tail = cy * stride + cx
    head = (cy + DY[cd]) * stride + (cx + DX[cd])
    corners = (h + 1) * stride
    degree = np.bincount(tail, minlength=corners) + np.bincount(head, minlength=corners)
    junction = degree != 2
    for corner in (0, w, h * stride, h * stride + w):
        junction[corner] = True
    junction &= degree > 0
    idx = np.arange(n, dtype=np.int64)
    out_at = np.full(corners, -1, dtype=np.int64)
    through = ~junction[tail]
    out_at[tail[through]] = idx[through]
    succ = np.where(junction[head], -1, out_at[head])
    pred = np.full(n, -1, dtype=np.int64)
    pred[succ[succ >= 0]] = idx[succ >= 0]
    order, pred = walk_twice(succ, pred)
    edge_start = np.concatenate([np.nonzero(pred[order] < 0)[0], [n]]).astype(np.int64)
    cx, cy, cd, tail, head = cx[order], cy[order], cd[order], tail[order], head[order]
    start, last = edge_start[:-1], edge_start[1:] - 1
    closed = ~junction[tail[start]]
    jverts = np.nonzero(junction)[0]
    lr = cy[start] + boundaries._LEFT_DROW[cd[start]], cx[start] + boundaries._LEFT_DCOL[cd[start]]
    rr = (
        cy[start] + boundaries._RIGHT_DROW[cd[start]],
        cx[start] + boundaries._RIGHT_DCOL[cd[start]],
    )
    return {
        "faces": faces,
        "face_label": face_label,
        "face_area": face_area,
        "crack_x": cx,
        "crack_y": cy,
        "crack_dir": cd,
        "edge_start": edge_start,
        "edge_left": faces[lr],
        "edge_right": faces[rr],
        "edge_closed": closed,
        "edge_j0": np.where(closed, -1, np.searchsorted(jverts, tail[start])),
        "edge_j1": np.where(closed, -1, np.searchsorted(jverts, head[last])),
        "junction_x": (jverts % stride).astype(np.float64),
        "junction_y": (jverts // stride).astype(np.float64),
    }


def walk_twice(succ: np.ndarray, pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The crack order as the engine found it: a walk of the chains; if loops are left,
    each cut at its smallest crack (components over all cracks) and everything walked
    again."""
    n = len(succ)
    order = boundaries._walk(succ, pred)
    if len(order) < n:
        seen = np.zeros(n, dtype=bool)
        seen[order] = True
        loop = np.nonzero(~seen)[0]
        _, component = graphs.connected_components(n, loop, succ[loop])
        smallest = np.full(n, n, dtype=np.int64)
        np.minimum.at(smallest, component[loop], loop)
        pred = pred.copy()
        pred[np.unique(smallest[component[loop]])] = -1
        order = boundaries._walk(succ, pred)
    return order, pred


def shifted_near_pairs(faces: np.ndarray) -> np.ndarray:
    """`stacking.near_pairs` as the engine computed it: one comparison of the whole face
    map with each shift of the half-window."""
    h, w = faces.shape
    n = int(faces.max()) + 1
    near = stacking.NEAR
    stride = w + near
    padded = np.full((h + near + 1, stride), -1, dtype=np.int64)
    padded[:h, :w] = faces
    flat = padded.ravel()
    size = h * stride
    codes = []
    for dy in range(near + 1):
        for dx in range(-near, near + 1):
            if dy == 0 and dx <= 0:
                continue
            here, there = flat[:size], flat[dy * stride + dx :][:size]
            differ = (here != there) & (here >= 0) & (there >= 0)
            fa, fb = here[differ], there[differ]
            codes.append(np.minimum(fa, fb) * n + np.maximum(fa, fb))
    all_codes = np.unique(np.concatenate(codes))
    return np.stack([all_codes // n, all_codes % n], axis=1)


label_maps = st.one_of(
    # Small maps of many labels: junctions everywhere, one-pixel faces.
    arrays(
        np.int32, st.tuples(st.integers(1, 12), st.integers(1, 12)), elements=st.integers(-1, 3)
    ),
    # Larger maps of blocks: long edges, loops (islands) and straight runs.
    st.tuples(
        arrays(
            np.int32, st.tuples(st.integers(1, 8), st.integers(1, 8)), elements=st.integers(-1, 2)
        ),
        st.integers(1, 6),
        st.integers(1, 6),
    ).map(lambda t: np.kron(t[0], np.ones((t[1], t[2]), dtype=np.int32))),
)


@settings(max_examples=150, deadline=None)
@given(label_maps)
def test_the_graph_from_runs_is_the_whole_image_graph(labels: np.ndarray) -> None:
    graph = build_boundary_graph(labels)
    expected = whole_image_graph(labels)
    for field in FIELDS:
        got = getattr(graph, field)
        assert got.dtype == expected[field].dtype, field
        assert np.array_equal(got, expected[field]), field


@settings(max_examples=150, deadline=None)
@given(label_maps)
def test_near_pairs_from_runs_are_the_shifted_comparisons(labels: np.ndarray) -> None:
    graph = build_boundary_graph(labels)
    assert np.array_equal(stacking.near_pairs(graph), shifted_near_pairs(graph.faces))


@settings(max_examples=100, deadline=None)
@given(
    arrays(np.int32, st.tuples(st.integers(1, 10), st.integers(1, 10)), elements=st.integers(0, 2)),
    st.integers(0, 3),
    st.integers(0, 3),
)
def test_run_overlaps_are_the_runs_within_reach(
    labels: np.ndarray, rows_apart: int, reach: int
) -> None:
    runs = boundaries.row_runs(labels)
    end = runs.end()
    upper, lower = boundaries.run_overlaps(runs, end, rows_apart, reach)
    w = labels.shape[1]
    expected = []
    for i in range(len(runs.start)):
        for j in range(len(runs.start)):
            if runs.start[j] // w != runs.start[i] // w + rows_apart:
                continue
            a0, a1 = runs.start[i] % w, (end[i] - 1) % w + 1
            b0, b1 = runs.start[j] % w, (end[j] - 1) % w + 1
            if b0 < a1 + reach and a0 < b1 + reach:
                expected.append((i, j))
    assert list(zip(upper.tolist(), lower.tolist(), strict=True)) == expected


@settings(max_examples=150, deadline=None)
@given(label_maps)
def test_adjacent_overlaps_are_the_run_overlaps_and_their_shared_columns(
    labels: np.ndarray,
) -> None:
    for runs in (boundaries.padded_row_runs(labels), boundaries.row_runs(labels)):
        end = runs.end()
        upper, lower, shared_start, shared_length = boundaries.adjacent_overlaps(runs)
        expected_upper, expected_lower = boundaries.run_overlaps(runs, end, 1, 0)
        assert np.array_equal(upper, expected_upper)
        assert np.array_equal(lower, expected_lower)
        w = runs.width
        first = np.maximum(runs.start[upper], runs.start[lower] - w)
        assert np.array_equal(shared_start, first)
        assert np.array_equal(shared_length, np.minimum(end[upper], end[lower] - w) - first)
