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

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from printjob_adapters.engine.boundaries import BoundaryGraph, build_boundary_graph
from printjob_adapters.engine.bounds import check_borders, check_segments
from printjob_adapters.engine.curves import EdgeData, EdgeFaces, FittedEdges, fit_all, groups
from printjob_adapters.engine.detail import drawn_opaque
from printjob_adapters.engine.hidden_copies import restack
from printjob_adapters.engine.progress import Checkpoint
from printjob_adapters.engine.stacking import layer_outlines, outline_edges, stack_layers
from printjob_adapters.engine.subpixel import (
    crack_points,
    crack_shifts,
    crack_sides,
    face_colors,
    junction_points,
    stair_reach,
    thin_slack,
)
from printjob_adapters.engine.vector import MOVE, Layer, VectorArt

if TYPE_CHECKING:
    from printjob_adapters.engine.segmentation import Segmentation

#: Largest distance (pixels) between a fitted curve and its data points.
TOLERANCE = 0.4
#: Colour distance (premultiplied RGBA, 0..255) under which an edge's tolerance grows,
#: up to MAX_SLACK times.
SLACK_CONTRAST = 64.0
MAX_SLACK = 2.5
#: Layers compared at once when counting outline edges (`outline_edge_count`).
_LAYERS_AT_ONCE = 32
#: Layers whose outlines are built in one pass (`stacking.layer_outlines`): one pass
#: for the few layers of flat art, a cancel check every so many on a photo's hundreds.
_OUTLINES_AT_ONCE = 16


def vectorise(
    rgba: npt.NDArray[np.uint8], segmentation: Segmentation, checkpoint: Checkpoint
) -> VectorArt:
    """Trace `segmentation` (labels, palette, background_removed) to one layer per
    palette colour. `rgba` is the decoded input, uint8 (H, W, 4) straight alpha, used
    for sub-pixel edge placement.

    Refuses (`bounds.TooMuchDetail`) a label map of more border cracks than
    `bounds.MAX_BORDER_CRACKS` before building anything, and art of more path segments
    than `bounds.MAX_SEGMENTS` before building its commands. O(pixels) for the check,
    then O(cracks) for steps 1, 2 and 4 and `curves.fit_all`'s cost for step 3;
    `checkpoint` is called between every two steps and batches within them."""
    labels = np.asarray(segmentation.labels, dtype=np.int32)
    palette = np.asarray(segmentation.palette, dtype=np.float64).reshape(-1, 3)
    height, width = labels.shape
    colors = len(palette)
    checkpoint(0.0)
    if colors == 0:
        # Nothing to draw (a wholly transparent picture): an empty page of the right size.
        checkpoint(1.0)
        return VectorArt(width, height, (), bool(segmentation.background_removed))
    # Refused before the boundary graph is built: its memory grows with the borders.
    check_borders(labels)
    graph = build_boundary_graph(labels)
    checkpoint(0.1)
    colors4 = face_colors(graph, rgba, palette)
    sides = crack_sides(graph)
    checkpoint(0.12)
    # Art drawn opaque by rule although faint (a 25 % dot) is covered by rule too.
    shifts = crack_shifts(graph, drawn_opaque(rgba, labels), colors4, sides)
    thin = thin_slack(graph, sides)
    stairs = stair_reach(graph, shifts, colors4, thin)
    # Six arrays as long as the cracks: not kept through the fitting.
    del sides
    checkpoint(0.15)
    points = crack_points(graph, shifts)
    junctions = junction_points(graph, points)
    checkpoint(0.2)
    stacking = stack_layers(graph, colors, palette)
    checkpoint(0.22)
    needed = outline_edges(graph, stacking.members)
    check_segments(outline_edge_count(graph, stacking.members), estimate=True)
    checkpoint(0.25)
    slack = edge_slack(graph, colors4) * thin
    fitted = fit_edges(graph, points, junctions, needed, checkpoint, slack, colors4, stairs=stairs)
    stacking = restack(graph, stacking, fitted)
    order = stacking.order.tolist()
    outlines = []
    for first in range(0, len(order), _OUTLINES_AT_ONCE):
        rows = order[first : first + _OUTLINES_AT_ONCE]
        outlines += layer_outlines(graph, stacking.members[rows], fitted)
        for done in range(first, first + len(rows)):
            checkpoint(0.95 + 0.03 * done / len(order))
    # Counted from the op codes, before a command of a too busy design is built.
    check_segments(sum(int(np.count_nonzero(o.ops != MOVE)) for o in outlines))
    layers = []
    # Every colour rounded at once: the same integers as one layer at a time.
    rgb = np.clip(np.rint(palette), 0, 255).astype(np.int64).tolist()
    for k, outline in zip(order, outlines, strict=True):
        red, green, blue = rgb[k]
        layers.append(Layer(color=(red, green, blue), outline=outline))
        checkpoint(0.98)
    checkpoint(1.0)
    return VectorArt(
        width=width,
        height=height,
        layers=tuple(layers),
        background_removed=bool(segmentation.background_removed),
    )


def outline_edge_count(graph: BoundaryGraph, members: np.ndarray) -> int:
    """Edges on the layers' outlines, counted once per layer that draws them: the file's
    path segments as known before any fitting (an edge is a segment or more, but straight
    edges in a row along one line, as on the canvas border, become one).
    O(layers × edges), `_LAYERS_AT_ONCE` layers at a time so that the comparison never
    holds more than that many rows of edges."""
    total = 0
    for first in range(0, len(members), _LAYERS_AT_ONCE):
        rows = members[first : first + _LAYERS_AT_ONCE]
        total += int(np.count_nonzero(rows[:, graph.edge_left] != rows[:, graph.edge_right]))
    return total


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
    colors4: np.ndarray | None = None,
    tolerance: float = TOLERANCE,
    stairs: np.ndarray | None = None,
) -> FittedEdges:
    """Step 3 for every edge that some outline uses, each exactly once and all together
    (`curves.fit_all`; `stairs`: `subpixel.stair_reach`). O(their cracks) plus the
    fitting."""
    data = edge_data(graph, points, junctions, edges, slack, stairs)
    checkpoint(0.25)
    edges = np.asarray(edges)
    faces = None
    if colors4 is not None:
        left, right = graph.edge_left[edges], graph.edge_right[edges]
        faces = EdgeFaces(
            left=left,
            right=right,
            area=graph.face_area,
            j0=graph.edge_j0[edges],
            j1=graph.edge_j1[edges],
        )
    return fit_all(edges, data, tolerance, lambda f: checkpoint(0.5 + 0.45 * f), faces)


def edge_data(
    graph: BoundaryGraph,
    points: np.ndarray,
    junctions: np.ndarray,
    edges: np.ndarray,
    slack: np.ndarray | None = None,
    stairs: np.ndarray | None = None,
) -> EdgeData:
    """The data points of these edges gathered end to end, with their crack directions
    and corners, junction points and tolerance slack. O(their cracks)."""
    edges = np.asarray(edges, dtype=np.int64)
    first = graph.edge_start[edges]
    offsets, owner, place = groups(graph.edge_start[edges + 1] - first)
    rows = first[owner] + place
    closed = graph.edge_closed[edges].astype(bool)
    # Closed edges have no junctions (-1); they get a placeholder that is never read.
    ends = junctions if len(junctions) else np.zeros((1, 2))
    j0 = np.where(closed, 0, graph.edge_j0[edges])
    j1 = np.where(closed, 0, graph.edge_j1[edges])
    corners = np.stack([graph.crack_x[rows], graph.crack_y[rows]], axis=1).astype(np.float64)
    return EdgeData(
        points=points[rows],
        dirs=graph.crack_dir[rows],
        corners=corners,
        offsets=offsets,
        closed=closed,
        start=ends[j0],
        end=ends[j1],
        slack=np.ones(len(edges)) if slack is None else slack[edges].astype(np.float64),
        stairs=None if stairs is None else stairs[edges],
    )
