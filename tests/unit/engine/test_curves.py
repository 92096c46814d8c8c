"""Edge fitting and shared edges: corners, curves, reversal, one fit per boundary."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from printjob_adapters.engine import curves, stacking
from printjob_adapters.engine.boundaries import build_boundary_graph
from printjob_adapters.engine.curves import FittedEdge, fit_all, fit_edge, split_edges, tiny_edge
from printjob_adapters.engine.progress import silent
from printjob_adapters.engine.stacking import layer_commands, stack_layers
from printjob_adapters.engine.subpixel import crack_points, junction_points
from printjob_adapters.engine.vector import Outline
from printjob_adapters.engine.vectorise import edge_data, edge_slack, fit_edges, vectorise
from tests.unit.engine.test_vectorise_support import Seg, contours, ellipse, paint, rasterise, rect


def segment_keys(commands):
    """Every drawn segment as (start, controls..., end) tuples."""
    out = []
    cur = start = None
    for op, pts in commands:
        if op == "moveTo":
            cur = start = pts[0]
        elif op == "closePath":
            if cur != start:
                out.append((cur, start))
            cur = start
        else:
            out.append((cur, *pts))
            cur = pts[-1]
    return out


def reverse_key(key):
    if len(key) == 2:
        return (key[1], key[0])
    return (key[3], key[2], key[1], key[0])


def test_reversed_edge_has_identical_coordinates():
    edge = FittedEdge(
        start=np.array([0.0, 0.0]),
        segments=np.array([[[1, 0], [2, 1], [3, 3]], [[5, 5], [5, 5], [5, 5]]], dtype=float),
        is_line=np.array([False, True]),
    )
    back = edge.reversed()
    assert back.start.tolist() == [5, 5]
    assert back.segments[0, 2].tolist() == [3, 3] and back.is_line[0]
    assert back.segments[1].tolist() == [[2, 1], [1, 0], [0, 0]] and not back.is_line[1]
    again = back.reversed()
    assert np.array_equal(again.segments, edge.segments) and np.array_equal(again.start, edge.start)


def test_shared_boundary_is_identical_and_reversed_in_both_faces_outlines():
    _rgba, seg = paint(
        40,
        40,
        (255, 255, 255),
        [((200, 0, 0), ellipse(16, 20, 11, 13)), ((0, 0, 200), rect(20, 4, 36, 36))],
    )
    graph = build_boundary_graph(seg.labels)
    points = crack_points(graph, np.zeros(len(graph.crack_x)))
    junctions = junction_points(graph, points)
    edges = np.arange(graph.edge_count)
    fitted = fit_edges(graph, points, junctions, edges, silent())
    # Each face's own outline (no stacking): faces of label 1 and of label 2.
    red = graph.face_label == 1
    blue = graph.face_label == 2
    red_keys = set(segment_keys(layer_commands(graph, red, fitted)))
    blue_keys = set(segment_keys(layer_commands(graph, blue, fitted)))
    shared = {k for k in red_keys if reverse_key(k) in blue_keys}
    # The red/blue boundary exists and both outlines draw it with the same numbers.
    between = [
        e
        for e in range(graph.edge_count)
        if {graph.face_label[graph.edge_left[e]], graph.face_label[graph.edge_right[e]]} == {1, 2}
    ]
    assert between
    expected = sum(len(fitted[e].segments) for e in between)
    assert len(shared) >= expected - 1  # a closing straight segment may be implied


def test_layers_reuse_the_same_fitted_edges():
    rgba, seg = paint(
        48,
        48,
        (255, 255, 255),
        [((200, 0, 0), ellipse(20, 22, 14, 12)), ((0, 0, 200), ellipse(30, 26, 9, 11))],
    )
    art = vectorise(rgba, seg, silent())
    keys = [set(segment_keys(layer.commands)) for layer in art.layers]
    blue = next(k for k, layer in zip(keys, art.layers, strict=True) if layer.color == (0, 0, 200))
    others = set().union(
        *(k for k, layer in zip(keys, art.layers, strict=True) if layer.color != (0, 0, 200))
    )
    others |= {reverse_key(k) for k in others}
    # Every piece of the top layer's outline that another layer also outlines is the
    # very same curve there; pieces not found elsewhere are interior to lower layers.
    curves = [k for k in blue if len(k) == 4]
    assert curves
    shared = [k for k in curves if k in others]
    assert shared


def test_fit_edge_square_loop_is_four_lines_through_corners():
    # A 10x10 square's crack loop, clockwise from (0, 0), midpoints as data.
    dirs = np.array([0] * 10 + [1] * 10 + [2] * 10 + [3] * 10)
    step = np.array([(1, 0), (0, 1), (-1, 0), (0, -1)], dtype=float)
    corners = np.concatenate([[[0.0, 0.0]], np.cumsum(step[dirs], axis=0)[:-1]])
    points = corners + 0.5 * step[dirs]
    edge = fit_edge(points, dirs, corners, True, None, None, 0.4)
    assert edge.is_line.all() and len(edge.segments) == 4
    ends = {tuple(p) for p in edge.segments[:, 2].tolist()}
    assert ends == {(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)}


def test_open_edge_keeps_its_junction_end_points():
    labels = np.zeros((20, 30), dtype=np.int32)
    labels[:, 15:] = 1
    labels[10:, :] = 2
    graph = build_boundary_graph(labels)
    points = crack_points(graph, np.zeros(len(graph.crack_x)))
    junctions = junction_points(graph, points)
    fitted = fit_edges(graph, points, junctions, np.arange(graph.edge_count), silent())
    for e, edge in fitted.items():
        if graph.edge_closed[e]:
            continue
        assert np.allclose(edge.start, junctions[graph.edge_j0[e]])
        assert np.allclose(edge.end, junctions[graph.edge_j1[e]])


def test_stacking_earlier_layer_fills_under_later_neighbours():
    _rgba, seg = paint(
        40,
        40,
        (255, 255, 255),
        [((200, 0, 0), rect(8, 8, 32, 32)), ((0, 0, 200), rect(15, 15, 25, 25))],
    )
    graph = build_boundary_graph(seg.labels)
    stacking = stack_layers(graph, len(seg.palette))
    # Largest first: white, red, blue.
    assert stacking.order.tolist() == [0, 1, 2]
    blue_face = graph.faces[20, 20]
    red_face = graph.faces[10, 10]
    assert stacking.members[1, blue_face] and stacking.members[1, red_face]
    assert not stacking.members[2, red_face]


def test_outline_samples_helper_closes_contours():
    commands = (
        ("moveTo", ((0.0, 0.0),)),
        ("lineTo", ((4.0, 0.0),)),
        ("lineTo", ((4.0, 4.0),)),
        ("closePath", ()),
    )
    (c,) = contours(commands, per_curve=4)
    assert np.allclose(c[-1], (0.0, 0.0))


def test_tiny_edge_is_its_crack_polygon():
    # A 1x2 pixel loop: six cracks, corners at the four turns.
    dirs = np.array([0, 1, 1, 2, 3, 3])
    step = np.array([(1, 0), (0, 1), (-1, 0), (0, -1)], dtype=float)
    corners = np.concatenate([[[0.0, 0.0]], np.cumsum(step[dirs], axis=0)[:-1]])
    points = corners + 0.5 * step[dirs]
    edge = tiny_edge(points, dirs, True, None, None)
    assert edge is not None and edge.is_line.all()
    nodes = {tuple(p) for p in edge.segments[:, 2].tolist()}
    assert nodes == {(0.0, 0.0), (1.0, 0.0), (1.0, 2.0), (0.0, 2.0)}
    assert tiny_edge(np.zeros((40, 2)), np.zeros(40, dtype=np.int64), True, None, None) is None


def test_straight_runs_through_junctions_merge_into_one_segment():
    labels = np.zeros((12, 12), dtype=np.int32)
    labels[:, 6:] = 1
    labels[5:7, 5:7] = 2  # a dot on the boundary: junctions along the image border stay
    palette = np.array([(255, 255, 255), (0, 0, 0), (200, 0, 0)], dtype=float)
    rgba = np.concatenate([palette[labels], np.full((12, 12, 1), 255.0)], axis=2)
    art = vectorise(rgba.astype(np.uint8), Seg(labels, palette), silent())
    bottom = art.layers[0]
    # The bottom layer covers the whole canvas: its outline is the image rectangle.
    assert bottom.segment_count() == 4


def test_fringe_trim_keeps_middle_colour_off_the_outer_edge():
    # White background (largest), a black body, an orange beak mostly outside it.
    white, black, orange = (255, 255, 255), (0, 0, 0), (255, 170, 0)
    rgba, seg = paint(
        48,
        48,
        white,
        [(black, rect(4, 10, 24, 44)), (orange, ellipse(30.3, 22.6, 10.2, 5.1))],
    )
    art = vectorise(rgba, seg, silent())
    graph = build_boundary_graph(seg.labels)
    stacking = stack_layers(graph, len(seg.palette))
    beak = graph.faces[23, 36]
    assert graph.face_label[beak] == 2
    assert not stacking.members[1, beak]  # black does not fill under the beak
    out = rasterise(art, 4).astype(float)
    # Along the beak's outer edge every pixel mixes orange and white only.
    rgb = out[..., :3]
    t = np.clip(
        (rgb - white) @ np.subtract(orange, white) / np.sum(np.subtract(orange, white) ** 2), 0, 1
    )
    off = np.linalg.norm(rgb - (white + t[..., None] * np.subtract(orange, white)), axis=2)
    outer = np.zeros(off.shape, dtype=bool)
    outer[4 * 14 : 4 * 31, 4 * 26 : 4 * 42] = True
    assert off[outer].max() < 3.0


def test_edges_between_near_colours_get_looser_tolerance():
    labels = np.zeros((10, 30), dtype=np.int32)
    labels[:, 10:20] = 1
    labels[:, 20:] = 2
    palette = np.array([(0, 0, 0), (255, 255, 255), (245, 250, 255)], dtype=float)
    graph = build_boundary_graph(labels)
    colors4 = np.full((len(graph.face_label), 4), np.nan)
    painted = graph.face_label >= 0
    colors4[painted, :3] = palette[graph.face_label[painted]]
    colors4[painted, 3] = 255
    slack = edge_slack(graph, colors4)
    pairs = {
        frozenset((int(graph.face_label[a]), int(graph.face_label[b]))): float(s)
        for a, b, s in zip(graph.edge_left, graph.edge_right, slack, strict=True)
    }
    assert pairs[frozenset((0, 1))] == 1.0
    assert pairs[frozenset((1, 2))] > 2.0
    assert pairs[frozenset((-2, 0))] == 1.0  # the image border


def busy_edges(seed: int = 3):
    """The edges of a small image with curves, corners, thin parts and islands, as the
    tracer gathers them (with junction points and some tolerance slack)."""
    rng = np.random.default_rng(seed)
    shapes = [((200, 0, 0), ellipse(20, 22, 14, 12)), ((0, 0, 200), rect(30, 8, 52, 20))]
    for _ in range(6):
        x, y = rng.uniform(6, 58, 2)
        colour = tuple(int(v) for v in rng.integers(0, 255, 3))
        shapes.append((colour, ellipse(x, y, rng.uniform(1.5, 6), rng.uniform(1.5, 6))))
    _rgba, seg = paint(48, 64, (255, 255, 255), shapes)
    graph = build_boundary_graph(seg.labels)
    points = crack_points(graph, rng.uniform(-0.4, 0.4, len(graph.crack_x)))
    junctions = junction_points(graph, points)
    ids = np.arange(graph.edge_count)
    slack = rng.uniform(1.0, 2.5, graph.edge_count)
    return ids, edge_data(graph, points, junctions, ids, slack)


def test_fitting_edges_together_matches_fitting_each_alone():
    ids, data = busy_edges()
    together = fit_all(ids, data, 0.4)
    for k, e in enumerate(ids.tolist()):
        alone = fit_all(np.array([e]), data.take(np.array([k])), 0.4)[e]
        assert np.array_equal(together[e].start, alone.start)
        assert np.array_equal(together[e].segments, alone.segments)
        assert np.array_equal(together[e].is_line, alone.is_line)


def test_per_run_and_whole_array_search_rounds_agree(monkeypatch):
    _ids, data = busy_edges(seed=5)
    _first, runs, _owner = split_edges(data.take(np.arange(len(data.closed))))
    assert len(runs.offsets) > 20
    monkeypatch.setattr(curves, "_FEW_RUNS", 0)
    arrays_only = curves.fit_runs(runs, 0.4)
    monkeypatch.setattr(curves, "_FEW_RUNS", 10**9)
    per_run = curves.fit_runs(runs, 0.4)
    for a, b in zip(arrays_only, per_run, strict=True):
        assert np.array_equal(a, b)


def recorded_attempts(monkeypatch, seed: int) -> list[tuple[np.ndarray, ...]]:
    """The arguments of every `_try` call the search of a busy image makes."""
    _ids, data = busy_edges(seed=seed)
    _first, runs, _owner = split_edges(data)
    calls = []
    original = curves._try

    def record(*args):
        calls.append(args)
        return original(*args)

    monkeypatch.setattr(curves, "_try", record)
    curves.fit_runs(runs, 0.4)
    monkeypatch.setattr(curves, "_try", original)
    return calls


def test_fit_attempts_do_not_depend_on_padded_width(monkeypatch):
    original = curves._try
    for args in recorded_attempts(monkeypatch, 7):
        monkeypatch.setattr(curves, "_SPLIT_ROWS", 10**9)  # one width for all rows
        one = original(*args)
        monkeypatch.setattr(curves, "_SPLIT_ROWS", 1)  # 8, 16 or 24 columns per row
        split = original(*args)
        for a, b in zip(one, split, strict=True):
            assert np.array_equal(a, b)


def test_corner_thinning_matches_deciding_one_candidate_at_a_time():
    rng = np.random.default_rng(11)
    for _ in range(200):
        count = int(rng.integers(1, 12))
        m = int(rng.integers(13, 40))
        closed = bool(rng.integers(0, 2))
        gap = np.sort(rng.choice(np.arange(0 if closed else 1, m), count, replace=False))
        angle = rng.choice([0.95, 1.2, 1.5, 1.6, 2.0, 2.5], count) + rng.uniform(0, 0.01, count)
        span = np.full(count, 3)
        kept = curves._thin_corners(
            np.zeros(count, dtype=np.int64),
            gap,
            angle,
            span,
            np.full(count, m),
            np.full(count, closed),
        )
        assert np.array_equal(kept, curves._thin_one(gap, angle, 3, m, closed))


def test_open_tiny_edge_runs_from_junction_through_turns_to_junction():
    # Three cracks: right, down, right; junctions at both ends.
    dirs = np.array([0, 1, 0])
    points = np.array([[0.5, 0.0], [1.0, 0.5], [1.5, 1.0]])
    edge = tiny_edge(points, dirs, False, np.array([0.0, 0.0]), np.array([2.0, 1.0]))
    assert edge is not None and edge.is_line.all()
    assert edge.start.tolist() == [0.0, 0.0]
    assert edge.segments[:, 2].tolist() == [[1.0, 0.0], [1.0, 1.0], [2.0, 1.0]]


def test_fitted_edges_map_edge_ids_to_their_segments():
    ids, data = busy_edges()
    fitted = fit_all(ids[::-1].copy(), data.take(np.arange(len(ids))[::-1].copy()), 0.4)
    assert len(fitted) == len(ids) and list(fitted) == ids[::-1].tolist()
    origin = fitted.seg_from
    for k, e in enumerate(ids[::-1].tolist()):
        edge = fitted[e]
        s, t = fitted.offsets[k], fitted.offsets[k + 1]
        assert np.array_equal(edge.segments, fitted.segments[s:t])
        # Each segment starts where the one before it ends.
        assert np.array_equal(origin[s], edge.start)
        assert np.array_equal(origin[s + 1 : t], edge.segments[:-1, 2])
    assert fitted.position(ids).tolist() == ids[::-1].tolist()


def merge_one_by_one(src, dst, line, contour):
    """Reference for `_merge_straight`: a straight segment continuing the straight
    segment before it (from where that one's merged run began) replaces it."""
    keep = np.ones(len(line), dtype=bool)
    before = None
    for k in range(len(line)):
        if k and line[k] and line[k - 1] and contour[k] == contour[k - 1]:
            if before is None:
                before = src[k - 1].tolist()
            if stacking._continues_at(before, dst[k - 1].tolist(), dst[k].tolist()):
                keep[k - 1] = False
                continue
        before = None
    return keep


def test_straight_merges_match_merging_one_segment_at_a_time():
    rng = np.random.default_rng(2)
    for _ in range(300):
        n = int(rng.integers(1, 14))
        # Points on a few lines (so that runs of collinear segments are common), some
        # doubling back.
        steps = rng.choice([-1.0, 1.0, 2.0], (n, 1)) * rng.choice(
            [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.3, 0.7]], n
        )
        dst = np.round(rng.uniform(0, 3, 2) + np.cumsum(steps, axis=0), 4)
        src = np.concatenate([[dst[0] - steps[0]], dst[:-1]])
        line = rng.random(n) < 0.8
        contour = np.cumsum(rng.random(n) < 0.15)
        expected = merge_one_by_one(src, dst, line, contour)
        assert np.array_equal(stacking._merge_straight(src, dst, line, contour), expected)


def test_outline_arrays_and_commands_round_trip():
    commands = (
        ("moveTo", ((0.0, 0.0),)),
        ("lineTo", ((4.0, 0.0),)),
        ("curveTo", ((5.0, 1.0), (5.0, 2.0), (4.0, 3.0))),
        ("closePath", ()),
        ("moveTo", ((1.5, 1.5),)),
        ("lineTo", ((2.5, 1.5),)),
        ("closePath", ()),
    )
    outline = Outline.from_commands(commands)
    assert outline.ops.tolist() == [0, 1, 2, 3, 0, 1, 3]
    assert outline.points.shape == (7, 2)
    assert outline.commands() == commands


@settings(max_examples=40, deadline=None)
@given(
    arrays(np.int32, st.tuples(st.integers(1, 8), st.integers(1, 8)), elements=st.integers(-1, 2))
)
def test_near_pairs_are_the_faces_within_reach_of_each_other(labels):
    graph = build_boundary_graph(labels)
    faces = graph.faces
    h, w = faces.shape
    expected = set()
    for y in range(h):
        for x in range(w):
            for dy in range(-stacking.NEAR, stacking.NEAR + 1):
                for dx in range(-stacking.NEAR, stacking.NEAR + 1):
                    if 0 <= y + dy < h and 0 <= x + dx < w:
                        f, g = int(faces[y, x]), int(faces[y + dy, x + dx])
                        if f != g:
                            expected.add((min(f, g), max(f, g)))
    assert {tuple(p) for p in stacking.near_pairs(graph).tolist()} == expected
