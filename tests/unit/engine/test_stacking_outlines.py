"""The layers' outlines built together in one pass are each layer's outline alone."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from printjob_adapters.engine import stacking
from printjob_adapters.engine.boundaries import build_boundary_graph
from printjob_adapters.engine.progress import silent
from printjob_adapters.engine.subpixel import crack_points, junction_points
from printjob_adapters.engine.vectorise import fit_edges

label_maps = st.tuples(
    arrays(np.int32, st.tuples(st.integers(1, 7), st.integers(1, 7)), elements=st.integers(0, 3)),
    st.integers(1, 4),
).map(lambda t: np.kron(t[0], np.ones((t[1], t[1]), dtype=np.int32)))


def alone(graph, member, fitted):  # type: ignore[no-untyped-def]
    """One layer's outline as the engine built it: its edges walked into contours and
    those gathered, for this layer only."""
    left_in = member[graph.edge_left]
    right_in = member[graph.edge_right]
    chosen = np.nonzero(left_in != right_in)[0]
    forward = left_in[chosen]
    loop = graph.edge_closed[chosen]
    open_ = chosen[~loop]
    parts, part_forward, contour = stacking._walk(
        open_, forward[~loop], graph.edge_j0[open_], graph.edge_j1[open_]
    )
    loops = chosen[loop]
    count = len(loops) + int(contour.max(initial=-1)) + 1
    outline, _ = stacking._contour_outline(
        fitted,
        np.concatenate([loops, parts]).astype(np.int64),
        np.concatenate([forward[loop], part_forward]).astype(bool),
        np.concatenate([np.arange(len(loops)), contour + len(loops)]).astype(np.int64),
        count,
    )
    return outline


@settings(max_examples=60, deadline=None)
@given(label_maps)
def test_outlines_together_are_each_layers_own(labels: np.ndarray) -> None:
    graph = build_boundary_graph(labels)
    colors = int(labels.max()) + 1
    layers = stacking.stack_layers(graph, colors)
    points = crack_points(graph, np.zeros(len(graph.crack_x)))
    junctions = junction_points(graph, points)
    needed = stacking.outline_edges(graph, layers.members)
    fitted = fit_edges(graph, points, junctions, needed, silent())
    members = layers.members[layers.order]
    together = stacking.layer_outlines(graph, members, fitted)
    assert len(together) == colors
    for member, outline in zip(members, together, strict=True):
        expected = alone(graph, member, fitted)
        assert np.array_equal(outline.ops, expected.ops)
        assert np.array_equal(outline.points, expected.points)
        assert outline.points.dtype == expected.points.dtype
