"""The tracer: a label map (plus the decoded pixels) to stacked flat-colour outlines.

Steps, each in its own module:

1. `boundaries`: the planar graph of face boundaries (junctions and the edges between).
2. `subpixel`: every boundary crack placed with sub-pixel accuracy from the
   anti-aliased pixels around it; junctions likewise.
3. `curves`: each edge fitted once to lines and cubic Béziers with sharp corners.
4. `stacking`: layer order, the faces each layer fills, and its closed contours built
   from the shared fitted edges.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from printjob_adapters.engine.boundaries import BoundaryGraph, build_boundary_graph
from printjob_adapters.engine.curves import FittedEdge, fit_edge
from printjob_adapters.engine.progress import Checkpoint
from printjob_adapters.engine.stacking import layer_commands, outline_edges, stack_layers
from printjob_adapters.engine.subpixel import (
    crack_points,
    crack_shifts,
    face_colors,
    junction_points,
    premultiply,
)
from printjob_adapters.engine.vector import Layer, VectorArt

#: Largest distance (pixels) between a fitted curve and its data points.
TOLERANCE = 0.4
#: Edges fitted between two checkpoint calls.
EDGES_PER_CHECKPOINT = 256


def vectorise(rgba: np.ndarray, segmentation: Any, checkpoint: Checkpoint) -> VectorArt:
    """Trace `segmentation` (labels, palette, background_removed) to one layer per
    palette colour. `rgba` is the decoded input, uint8 (H, W, 4) straight alpha, used
    for sub-pixel edge placement."""
    labels = np.asarray(segmentation.labels, dtype=np.int32)
    palette = np.asarray(segmentation.palette, dtype=np.float64).reshape(-1, 3)
    height, width = labels.shape
    colors = len(palette)
    checkpoint(0.0)
    graph = build_boundary_graph(labels)
    checkpoint(0.1)
    premultiplied = premultiply(rgba)
    shifts = crack_shifts(graph, premultiplied, face_colors(graph, premultiplied, palette))
    points = crack_points(graph, shifts)
    junctions = junction_points(graph, points)
    checkpoint(0.2)
    stacking = stack_layers(graph, colors)
    needed = outline_edges(graph, stacking.members)
    checkpoint(0.25)
    fitted = fit_edges(graph, points, junctions, needed, checkpoint)
    layers = []
    for k in stacking.order.tolist():
        rgb = tuple(int(v) for v in np.clip(np.rint(palette[k]), 0, 255))
        commands = layer_commands(graph, stacking.members[k], fitted)
        layers.append(Layer(color=rgb, commands=commands))  # type: ignore[arg-type]
    checkpoint(1.0)
    return VectorArt(
        width=width,
        height=height,
        layers=tuple(layers),
        background_removed=bool(segmentation.background_removed),
    )


def fit_edges(
    graph: BoundaryGraph,
    points: np.ndarray,
    junctions: np.ndarray,
    edges: np.ndarray,
    checkpoint: Checkpoint,
    tolerance: float = TOLERANCE,
) -> dict[int, FittedEdge]:
    """Step 3 for every edge that some outline uses, each exactly once."""
    from printjob_adapters.engine.boundaries import DX, DY

    corner_x = graph.crack_x.astype(np.float64)
    corner_y = graph.crack_y.astype(np.float64)
    corners = np.stack([corner_x, corner_y], axis=1)
    del DX, DY
    fitted: dict[int, FittedEdge] = {}
    total = max(len(edges), 1)
    for n, e in enumerate(edges.tolist()):
        if n % EDGES_PER_CHECKPOINT == 0:
            checkpoint(0.25 + 0.7 * n / total)
        s, t = int(graph.edge_start[e]), int(graph.edge_start[e + 1])
        closed = bool(graph.edge_closed[e])
        start = None if closed else junctions[graph.edge_j0[e]]
        end = None if closed else junctions[graph.edge_j1[e]]
        fitted[e] = fit_edge(
            points[s:t], graph.crack_dir[s:t], corners[s:t], closed, start, end, tolerance
        )
    return fitted
