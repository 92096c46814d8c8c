"""Step 4a''': fewer hidden outline copies, by a minimum cut per layer.

After `stacking.stack_layers`, layer k fills its own faces and the later-painted faces
near them (the seam rule). Its outline is every edge with exactly one side in that set,
and where both sides of such an edge are painted later than k, the edge is a hidden
copy: a later layer draws over it. Which other later faces k fills is a free choice
as long as nothing new shows, and filling them can remove copies (a background that
also fills the inside of an outlined shape draws a plain rectangle, not a frame).

Per layer, over the faces it may add (painted later than k, not yet in its set):

- forced in: k's set from the stacking (its own faces and those the seam rule added);
- forced out: faces painted before k and left-out (transparent) faces;
- free: the rest. A free face G may join k only where no new fringe of k's colour can
  be seen: every edge it would put on k's outline must run between G and a later
  face H that some layer painted after k fills together with G (solid over the edge,
  so k's anti-aliased edge there is covered). A free face with an edge to a face
  painted before k, a transparent one or the canvas border is forced out; two free
  faces sharing an uncovered edge go in or out together.

The file's segments of layer k are the fitted segments of its outline's edges, so the
best choice is a minimum s-t cut of the face adjacency graph, each edge weighing its
fitted segment count (`FittedEdges` knows them before any outline is written). The
smallest source side of a minimum cut is taken, so a layer whose cut gains nothing
keeps the stacking's set exactly. Adding faces to a layer never takes a face from
another, so every layer's cover test stays true as the later layers are cut in turn.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from printjob_adapters.engine.boundaries import BoundaryGraph
from printjob_adapters.engine.curves import FittedEdges
from printjob_adapters.engine.stacking import Stacking

#: Free faces (those a layer may add, reachable from its set) above which a layer keeps
#: the stacking's set: bounds the augmenting-path search on photos, where a layer
#: borders hundreds of later faces and a few segments matter little.
MAX_FREE_FACES = 400
#: Faces above which nothing is tried (a photo's hundreds of small faces and tens of
#: layers: the per-layer passes and flows would cost a tenth of its tracing).
MAX_FACES = 300
#: A capacity no cut can pay: an edge that must not be put on the outline.
_BLOCKED = 1 << 40


def restack(graph: BoundaryGraph, stacking: Stacking, fitted: FittedEdges) -> Stacking:
    """Step 4a''': the stacking with fewer hidden copies: the minimum cut per layer
    (`fewer_copies`), in the stacking's own paint order. O(`fewer_copies`).

    A search for a paint order writing fewer segments was built and left out: after the
    fringe trims a new order could leave a layer's colour showing as a line between two
    others (black between a red disc and white paper) or open an edge to the paper,
    which no cheap measure of the order caught (docs/engine.md)."""
    labels = graph.face_label
    if len(labels) > MAX_FACES or len(stacking.order) < 2:
        return stacking
    members = fewer_copies(graph, stacking.order, stacking.members, fitted)
    return Stacking(order=stacking.order, members=members)


def fewer_copies(
    graph: BoundaryGraph, order: np.ndarray, members: np.ndarray, fitted: FittedEdges
) -> np.ndarray:
    """Every layer's faces after the minimum cut (see module docstring), as a new
    `members` array (colours x faces); `members` itself is left as it is.
    O(layers × edges) whole-array passes plus, per layer with free faces, an
    augmenting-path max flow over its few free faces (O(free faces × arcs) per path,
    a path per unit of flow; capped by `MAX_FREE_FACES`)."""
    out = members.copy()
    labels = graph.face_label
    if len(labels) > MAX_FACES or len(order) < 2:
        return out
    left = graph.edge_left.astype(np.int64)
    right = graph.edge_right.astype(np.int64)
    segments = _segment_counts(graph, fitted)
    rank = np.full(len(labels), -1, dtype=np.int64)
    layer_rank = np.empty(len(order), dtype=np.int64)
    layer_rank[order] = np.arange(len(order))
    painted = labels >= 0
    rank[painted] = layer_rank[labels[painted]]
    for idx in range(len(order) - 1):
        k = int(order[idx])
        member = out[k]
        free = (rank > idx) & ~member
        if not free.any():
            continue
        added = _cut_layer(out, order, idx, member, free, rank, labels, left, right, segments)
        if added is not None:
            member[added] = True
    return out


def _segment_counts(graph: BoundaryGraph, fitted: FittedEdges) -> np.ndarray:
    """Fitted segments of every edge; `_BLOCKED` for an edge that was not fitted (no
    outline may newly run along it). O(edges)."""
    counts = np.full(graph.edge_count, _BLOCKED, dtype=np.int64)
    if len(fitted.ids):
        counts[fitted.ids] = np.diff(fitted.offsets)
    return counts


def _cut_layer(
    members: np.ndarray,
    order: np.ndarray,
    idx: int,
    member: np.ndarray,
    free: np.ndarray,
    rank: np.ndarray,
    labels: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    segments: np.ndarray,
) -> list[int] | None:
    """The free faces layer `order[idx]` should add (None: none). Builds the cut's arcs
    from the edges touching a free face, then runs the max flow. O(edges) plus the
    flow."""
    touch = free[left] | free[right]
    if not touch.any():
        return None
    # Orient every touching edge with a free face first.
    a = np.where(free[left], left, right)[touch]
    b = np.where(free[left], right, left)[touch]
    weight = segments[touch]
    into_set = member[b]
    if not into_set.any():
        # No free face borders the set: adding any only lengthens the outline.
        return None
    both_free = free[b]
    # Edges a free face would newly put on the outline: to a face painted before k, a
    # left-out face or the canvas border (blocked: a new fringe of k's colour; along
    # the border, the later face's own edge is placed from its pixels and may stop a
    # fraction of a pixel short of it, so k would show in the last row), or to another
    # later face, unseen only when a layer painted after k fills both.
    later_rows = members[order[idx + 1 :]]
    covered = (later_rows[:, a] & later_rows[:, b]).any(axis=0)
    open_edge = ~into_set & (rank[b] > idx) & covered
    arcs = _Arcs()
    for fa, fb, w, to_set, pair_free, ok in zip(
        a.tolist(),
        b.tolist(),
        weight.tolist(),
        into_set.tolist(),
        both_free.tolist(),
        open_edge.tolist(),
        strict=True,
    ):
        if to_set:
            arcs.add(_SOURCE, fa, w)
        elif pair_free:
            arcs.add(fa, fb, w if ok else _BLOCKED)
            arcs.add(fb, fa, w if ok else _BLOCKED)
        else:
            arcs.add(fa, _SINK, w if ok else _BLOCKED)
    reach = arcs.reachable_from_source()
    if len(reach) > MAX_FREE_FACES:
        return None
    side = arcs.min_cut_source_side(reach)
    return sorted(side) if side else None


_SOURCE = -1
_SINK = -2


class _Arcs:
    """A small flow network over face ids plus `_SOURCE` and `_SINK`: residual
    capacities in nested dicts, parallel arcs summed."""

    def __init__(self) -> None:
        self.cap: dict[int, dict[int, int]] = {}

    def add(self, u: int, v: int, c: int) -> None:
        """An arc u -> v of capacity c (added to any there), with its reverse at 0."""
        row = self.cap.setdefault(u, {})
        row[v] = min(row.get(v, 0) + c, _BLOCKED)
        self.cap.setdefault(v, {}).setdefault(u, 0)

    def reachable_from_source(self) -> set[int]:
        """Faces reachable from the source along arcs of positive capacity (the only
        ones the cut can add). O(arcs)."""
        return self._residual_reach() - {_SOURCE, _SINK}

    def min_cut_source_side(self, reach: set[int]) -> set[int]:
        """The faces on the smallest source side of a minimum cut: augmenting paths
        (shortest first, Edmonds-Karp) until none is left, then what the source
        still reaches. O(flow paths × arcs) over `reach`'s few faces."""
        if not reach:
            return set()
        if _SINK not in self.cap:
            # Nothing the faces could add borders anything outside: no cut at all.
            return reach
        while True:
            parent = self._shortest_path()
            if parent is None:
                break
            bottleneck = _BLOCKED
            v = _SINK
            while v != _SOURCE:
                u = parent[v]
                bottleneck = min(bottleneck, self.cap[u][v])
                v = u
            if bottleneck >= _BLOCKED:
                # Only blocked arcs lead to the sink: nothing can be cut there; the
                # faces stay out (their side is the sink's).
                return set()
            v = _SINK
            while v != _SOURCE:
                u = parent[v]
                self.cap[u][v] -= bottleneck
                self.cap[v][u] += bottleneck
                v = u
        return self._residual_reach() - {_SOURCE}

    def _shortest_path(self) -> dict[int, int] | None:
        parent: dict[int, int] = {_SOURCE: _SOURCE}
        queue = deque([_SOURCE])
        while queue:
            u = queue.popleft()
            for v, c in self.cap[u].items():
                if c > 0 and v not in parent:
                    parent[v] = u
                    if v == _SINK:
                        return parent
                    queue.append(v)
        return None

    def _residual_reach(self) -> set[int]:
        seen = {_SOURCE}
        queue = deque([_SOURCE])
        while queue:
            u = queue.popleft()
            for v, c in self.cap.get(u, {}).items():
                if c > 0 and v not in seen:
                    seen.add(v)
                    queue.append(v)
        return seen
