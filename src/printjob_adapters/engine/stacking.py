"""Step 4 of tracing: layer order, the faces each layer fills, and its outlines.

Layers are painted bottom first, largest colour area first (backgrounds and enclosing
colours come early). Layer k fills its own faces plus every later-painted face *near*
one of them (sharing an edge or a junction, or within `NEAR` pixels, which also catches
thin strips and diagonal touches). Hence across every boundary between two faces the
earlier of their layers is solid, and the later layer's outline is the visible edge:
no background shows through an anti-aliased edge at any zoom.

A layer's outline is the set of edges with exactly one side among its faces, each
walked with its faces on the left (the fitted edge forward or reversed) and chained at
junctions into closed contours; nothing is fitted twice.
"""

from __future__ import annotations

from collections import defaultdict

import attrs
import numpy as np

from printjob_adapters.engine.boundaries import BoundaryGraph
from printjob_adapters.engine.curves import FittedEdge
from printjob_adapters.engine.vector import Command

#: Faces whose pixels come this close (Chebyshev distance) count as neighbours.
NEAR = 2


@attrs.frozen(eq=False)
class Stacking:
    """Paint order of the colours and, per colour, which faces its layer fills."""

    #: Palette indices, bottom first.
    order: np.ndarray
    #: members[k, f]: whether palette colour k's layer fills face f.
    members: np.ndarray


def layer_order(graph: BoundaryGraph, colors: int) -> np.ndarray:
    """Palette indices by decreasing painted area (ties by index). O(faces)."""
    painted = graph.face_label >= 0
    area = np.bincount(
        graph.face_label[painted], weights=graph.face_area[painted], minlength=colors
    )
    return np.lexsort((np.arange(colors), -area))


def near_pairs(graph: BoundaryGraph) -> np.ndarray:
    """Unordered pairs (f, g) of distinct faces whose pixels lie within `NEAR` of each
    other. One comparison of the face map with each of its shifted copies:
    O(pixels × NEAR²)."""
    faces = graph.faces
    h, w = faces.shape
    codes: list[np.ndarray] = []
    for dy in range(NEAR + 1):
        for dx in range(-NEAR, NEAR + 1):
            if dy == 0 and dx <= 0:
                continue
            a = faces[0 : h - dy, max(0, -dx) : w - max(0, dx)]
            b = faces[dy:h, max(0, dx) : w - max(0, -dx)]
            differ = a != b
            fa = a[differ].astype(np.int64)
            fb = b[differ].astype(np.int64)
            lo = np.minimum(fa, fb)
            hi = np.maximum(fa, fb)
            codes.append(np.unique(lo * len(graph.face_label) + hi))
    if not codes:
        return np.zeros((0, 2), dtype=np.int64)
    all_codes = np.unique(np.concatenate(codes))
    n = len(graph.face_label)
    return np.stack([all_codes // n, all_codes % n], axis=1)


def stack_layers(graph: BoundaryGraph, colors: int) -> Stacking:
    """Step 4a: order and face sets (see module docstring). O(faces × colours)."""
    order = layer_order(graph, colors)
    rank = np.empty(colors, dtype=np.int64)
    rank[order] = np.arange(colors)
    labels = graph.face_label
    face_count = len(labels)
    members = np.zeros((colors, face_count), dtype=bool)
    own = np.nonzero(labels >= 0)[0]
    members[labels[own], own] = True
    pairs = near_pairs(graph)
    if len(pairs):
        f, g = pairs[:, 0], pairs[:, 1]
        keep = (labels[f] >= 0) & (labels[g] >= 0)
        f, g = f[keep], g[keep]
        lf, lg = labels[f], labels[g]
        g_later = rank[lg] > rank[lf]
        f_later = rank[lf] > rank[lg]
        members[lf[g_later], g[g_later]] = True
        members[lg[f_later], f[f_later]] = True
    return Stacking(order=order, members=members)


def outline_edges(graph: BoundaryGraph, members: np.ndarray) -> np.ndarray:
    """Edges lying on at least one layer's outline (the only ones worth fitting)."""
    left = members[:, graph.edge_left]
    right = members[:, graph.edge_right]
    return np.nonzero((left != right).any(axis=0))[0]


def layer_commands(
    graph: BoundaryGraph, member: np.ndarray, fitted: dict[int, FittedEdge]
) -> tuple[Command, ...]:
    """Step 4b: one layer's closed contours from the shared fitted edges.

    Edges are oriented with the layer's faces on the left, so at every junction as many
    outline edges leave as arrive, and a greedy walk closes every contour. O(outline
    edges)."""
    left_in = member[graph.edge_left]
    right_in = member[graph.edge_right]
    chosen = np.nonzero(left_in != right_in)[0]
    commands: list[Command] = []
    leaving: dict[int, list[tuple[int, bool]]] = defaultdict(list)
    for e in chosen.tolist():
        forward = bool(left_in[e])
        if graph.edge_closed[e]:
            _emit(commands, [_oriented(fitted[e], forward)])
            continue
        j = int(graph.edge_j0[e] if forward else graph.edge_j1[e])
        leaving[j].append((e, forward))
    for j in leaving:
        leaving[j].reverse()
    for j0 in sorted(leaving):
        while leaving[j0]:
            e, forward = leaving[j0].pop()
            parts = [_oriented(fitted[e], forward)]
            j = int(graph.edge_j1[e] if forward else graph.edge_j0[e])
            while j != j0 and leaving.get(j):
                e, forward = leaving[j].pop()
                parts.append(_oriented(fitted[e], forward))
                j = int(graph.edge_j1[e] if forward else graph.edge_j0[e])
            _emit(commands, parts)
    return tuple(commands)


def _oriented(edge: FittedEdge, forward: bool) -> FittedEdge:
    return edge if forward else edge.reversed()


def _emit(commands: list[Command], parts: list[FittedEdge]) -> None:
    """moveTo, the parts' segments, closePath; a final straight segment back to the
    start is left to closePath."""
    start = parts[0].start
    commands.append(("moveTo", ((float(start[0]), float(start[1])),)))
    segs = np.concatenate([p.segments for p in parts])
    lines = np.concatenate([p.is_line for p in parts])
    if len(segs) > 1 and lines[-1]:
        segs, lines = segs[:-1], lines[:-1]
    for seg, line in zip(segs.tolist(), lines.tolist(), strict=True):
        if line:
            commands.append(("lineTo", (tuple(seg[2]),)))
        else:
            commands.append(("curveTo", (tuple(seg[0]), tuple(seg[1]), tuple(seg[2]))))
    commands.append(("closePath", ()))
