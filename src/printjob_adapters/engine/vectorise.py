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
from printjob_adapters.engine.curves import (
    FittedEdge,
    Run,
    assemble,
    edge_runs,
    fit_runs,
    tiny_edge,
)
from printjob_adapters.engine.progress import Checkpoint
from printjob_adapters.engine.stacking import (
    Drawn,
    layer_commands,
    outline_edges,
    stack_layers,
)
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
#: Colour distance (premultiplied RGBA, 0..255) under which an edge's tolerance grows,
#: up to MAX_SLACK times.
SLACK_CONTRAST = 64.0
MAX_SLACK = 2.5
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
    colors4 = face_colors(graph, premultiplied, palette)
    shifts = crack_shifts(graph, premultiplied, colors4)
    points = crack_points(graph, shifts)
    junctions = junction_points(graph, points)
    checkpoint(0.2)
    stacking = stack_layers(graph, colors)
    needed = outline_edges(graph, stacking.members)
    checkpoint(0.25)
    slack = edge_slack(graph, colors4)
    fitted = fit_edges(graph, points, junctions, needed, checkpoint, slack)
    layers = []
    drawn: dict[tuple[int, bool], Drawn] = {}
    for k in stacking.order.tolist():
        rgb = tuple(int(v) for v in np.clip(np.rint(palette[k]), 0, 255))
        commands = layer_commands(graph, stacking.members[k], fitted, drawn)
        layers.append(Layer(color=rgb, commands=commands))  # type: ignore[arg-type]
    checkpoint(1.0)
    return VectorArt(
        width=width,
        height=height,
        layers=tuple(layers),
        background_removed=bool(segmentation.background_removed),
    )


def edge_slack(graph: BoundaryGraph, colors4: np.ndarray) -> np.ndarray:
    """Tolerance multiplier per edge: 1 between clearly different colours, growing to
    `MAX_SLACK` as the two faces' colours approach each other. A misplaced boundary
    costs colour error in proportion to the two colours' difference, so boundaries
    between near neighbours (shades of a gradient or a photo) may take fewer, looser
    curves at the same visible cost. O(edges)."""
    diff = colors4[graph.edge_left] - colors4[graph.edge_right]
    contrast = np.sqrt((diff * diff).sum(axis=1))
    contrast = np.where(np.isfinite(contrast), contrast, np.inf)
    return np.clip(SLACK_CONTRAST / np.maximum(contrast, 1e-6), 1.0, MAX_SLACK)


def fit_edges(
    graph: BoundaryGraph,
    points: np.ndarray,
    junctions: np.ndarray,
    edges: np.ndarray,
    checkpoint: Checkpoint,
    slack: np.ndarray | None = None,
    tolerance: float = TOLERANCE,
) -> dict[int, FittedEdge]:
    """Step 3 for every edge that some outline uses, each exactly once: tiny edges as
    their crack polygons, the others' corners and runs per edge, then all runs fitted
    together."""
    corners = np.stack([graph.crack_x, graph.crack_y], axis=1).astype(np.float64)
    starts: dict[int, np.ndarray] = {}
    runs: list[Run] = []
    run_edge: list[int] = []
    done: dict[int, FittedEdge] = {}
    total = max(len(edges), 1)
    for n, e in enumerate(edges.tolist()):
        if n % EDGES_PER_CHECKPOINT == 0:
            checkpoint(0.25 + 0.25 * n / total)
        s, t = int(graph.edge_start[e]), int(graph.edge_start[e + 1])
        closed = bool(graph.edge_closed[e])
        start = None if closed else junctions[graph.edge_j0[e]]
        end = None if closed else junctions[graph.edge_j1[e]]
        tiny = tiny_edge(points[s:t], graph.crack_dir[s:t], closed, start, end)
        if tiny is not None:
            done[n] = tiny
            continue
        first, edge_runs_ = edge_runs(
            points[s:t],
            graph.crack_dir[s:t],
            corners[s:t],
            closed,
            start,
            end,
            1.0 if slack is None else float(slack[e]),
        )
        starts[n] = first
        runs.extend(edge_runs_)
        run_edge.extend([n] * len(edge_runs_))
    pieces = fit_runs(runs, tolerance, lambda f: checkpoint(0.5 + 0.45 * f))
    grouped: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in range(len(edges))]
    for n, piece in zip(run_edge, pieces, strict=True):
        grouped[n].append(piece)
    return {
        int(e): done[n] if n in done else assemble(starts[n], grouped[n])
        for n, e in enumerate(edges.tolist())
    }
