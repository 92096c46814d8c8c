"""Step 4 of tracing: layer order, the faces each layer fills, and its outlines.

Layers are painted bottom first, largest colour area first (backgrounds and enclosing
colours come early). Layer k fills its own faces plus every later-painted face *near*
one of them (sharing an edge or a junction, or within `NEAR` pixels, which also catches
thin strips and diagonal touches). Hence across every boundary between two faces the
earlier of their layers is solid, and the later layer's outline is the visible edge:
no background shows through an anti-aliased edge at any zoom.

The one price is the fringe: where a later face G that layer k fills also borders a face
painted before k, k's edge along that border peeks out between the two. A refinement
(`_trim_fringes`) leaves G out of layer k when that makes the fringe shorter and an
earlier layer already fills G and its neighbours in k's set (so no seam can open).

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
        _trim_fringes(graph, order, rank, members, np.concatenate([pairs, pairs[:, ::-1]]))
    return Stacking(order=order, members=members)


def _trim_fringes(
    graph: BoundaryGraph,
    order: np.ndarray,
    rank: np.ndarray,
    members: np.ndarray,
    pairs: np.ndarray,
) -> None:
    """Step 4a': take a later face G out of layer k where that shortens k's fringe.

    Layer k filling G (painted later) draws G's edges to faces painted *before* k; there
    k's colour peeks out between the two (a fringe of up to a quarter of k along the
    anti-aliased edge). Leaving G out moves that fringe to G's edges with k's own faces
    instead, so G is left out when those are shorter, and only when an earlier layer
    already fills G and every face of k's set near G (it stays solid underneath: no
    seam). O(colours × (edges + faces near the candidates))."""
    labels = graph.face_label
    length = np.diff(graph.edge_start).astype(np.float64)
    left, right = graph.edge_left, graph.edge_right
    painted_rank = np.where(labels >= 0, rank[np.maximum(labels, 0)], -1)
    face_count = len(labels)
    by_face = np.argsort(pairs[:, 0], kind="stable")
    sorted_pairs = pairs[by_face]
    bounds = np.searchsorted(sorted_pairs[:, 0], np.arange(face_count + 1))
    for idx in range(1, len(order)):
        k = int(order[idx])
        member = members[k]
        added = member & (labels != k) & (labels >= 0)
        if not added.any():
            continue
        fringe_in = np.zeros(face_count)
        fringe_out = np.zeros(face_count)
        for a, b in ((left, right), (right, left)):
            sel = added[a]
            other_rank = painted_rank[b[sel]]
            np.add.at(
                fringe_in, a[sel], np.where((other_rank >= 0) & (other_rank < idx), length[sel], 0)
            )
            np.add.at(fringe_out, a[sel], np.where(labels[b[sel]] == k, length[sel], 0))
        candidates = np.nonzero(added & (fringe_out < fringe_in))[0]
        if len(candidates) == 0:
            continue
        earlier = members[order[:idx]]
        for g in candidates.tolist():
            near = sorted_pairs[bounds[g] : bounds[g + 1], 1]
            near = near[member[near]]
            need = np.concatenate([[g], near])
            if earlier[:, need].all(axis=1).any():
                member[g] = False


def outline_edges(graph: BoundaryGraph, members: np.ndarray) -> np.ndarray:
    """Edges lying on at least one layer's outline (the only ones worth fitting)."""
    left = members[:, graph.edge_left]
    right = members[:, graph.edge_right]
    return np.nonzero((left != right).any(axis=0))[0]


Drawn = tuple[tuple[float, float], list[Command]]


def layer_commands(
    graph: BoundaryGraph,
    member: np.ndarray,
    fitted: dict[int, FittedEdge],
    cache: dict[tuple[int, bool], Drawn] | None = None,
) -> tuple[Command, ...]:
    """Step 4b: one layer's closed contours from the shared fitted edges.

    Edges are oriented with the layer's faces on the left, so at every junction as many
    outline edges leave as arrive, and a greedy walk closes every contour. Each edge's
    commands (either way round) are built once in `cache` and reused by every layer
    drawing it. O(outline edges)."""
    cache = {} if cache is None else cache
    left_in = member[graph.edge_left]
    right_in = member[graph.edge_right]
    chosen = np.nonzero(left_in != right_in)[0].tolist()
    forward_of = left_in[chosen].tolist()
    closed = graph.edge_closed[chosen].tolist()
    j0s = graph.edge_j0[chosen].tolist()
    j1s = graph.edge_j1[chosen].tolist()
    commands: list[Command] = []
    leaving: dict[int, list[tuple[int, bool, int]]] = defaultdict(list)
    for e, forward, loop, a, b in zip(chosen, forward_of, closed, j0s, j1s, strict=True):
        if loop:
            _emit(commands, [_drawn(cache, fitted, e, forward)])
            continue
        start, end = (a, b) if forward else (b, a)
        leaving[start].append((e, forward, end))
    for j in leaving:
        leaving[j].reverse()
    for j0 in sorted(leaving):
        while leaving[j0]:
            e, forward, j = leaving[j0].pop()
            parts = [_drawn(cache, fitted, e, forward)]
            while j != j0 and leaving.get(j):
                e, forward, j = leaving[j].pop()
                parts.append(_drawn(cache, fitted, e, forward))
            _emit(commands, parts)
    return tuple(commands)


def _drawn(
    cache: dict[tuple[int, bool], Drawn], fitted: dict[int, FittedEdge], e: int, forward: bool
) -> Drawn:
    """An edge's start point and drawing commands, forward or reversed (memoised)."""
    key = (e, forward)
    got = cache.get(key)
    if got is None:
        edge = fitted[e] if forward else fitted[e].reversed()
        segs = edge.segments.tolist()
        cmds: list[Command] = [
            ("lineTo", (tuple(seg[2]),))
            if line
            else ("curveTo", (tuple(seg[0]), tuple(seg[1]), tuple(seg[2])))
            for seg, line in zip(segs, edge.is_line.tolist(), strict=True)
        ]  # type: ignore[misc]
        x, y = edge.start.tolist()
        got = cache[key] = ((x, y), cmds)
    return got


def _emit(commands: list[Command], parts: list[Drawn]) -> None:
    """moveTo, the parts' segments, closePath. Straight segments continuing each other
    exactly (where the contour passes a junction of other layers' edges on a straight
    line, such as the image border) become one; a final straight segment back to the
    start is left to closePath."""
    start = parts[0][0]
    commands.append(("moveTo", (start,)))
    body: list[Command] = []
    here = start
    before = start
    for part in parts:
        for cmd in part[1]:
            end = cmd[1][-1]
            if (
                cmd[0] == "lineTo"
                and body
                and body[-1][0] == "lineTo"
                and _continues(before, here, end)
            ):
                body[-1] = cmd
            else:
                body.append(cmd)
                before = here
            here = end
    if len(body) > 1 and body[-1][0] == "lineTo":
        body.pop()
    commands.extend(body)
    commands.append(("closePath", ()))


def _continues(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> bool:
    """Whether b lies on the straight run from a to c (and between them)."""
    abx, aby = b[0] - a[0], b[1] - a[1]
    bcx, bcy = c[0] - b[0], c[1] - b[1]
    cross = abx * bcy - aby * bcx
    return abs(cross) <= 1e-9 * (abx * abx + aby * aby + bcx * bcx + bcy * bcy) and (
        abx * bcx + aby * bcy > 0
    )
