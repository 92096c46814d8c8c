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
from printjob_adapters.engine.stacking import Stacking, near_pairs, outline_edges, stack_layers

#: Free faces (those a layer may add, reachable from its set) above which a layer keeps
#: the stacking's set: bounds the augmenting-path search on photos, where a layer
#: borders hundreds of later faces and a few segments matter little.
MAX_FREE_FACES = 400
#: Faces above which nothing is tried (a photo's hundreds of small faces and tens of
#: layers: the per-layer passes and flows would cost a tenth of its tracing).
MAX_FACES = 300
#: Layers up to which other paint orders are tried (`better_order`): every layer moved
#: to every place is layers² whole-array costings, a few tens on flat art.
MAX_ORDER_LAYERS = 12
#: A capacity no cut can pay: an edge that must not be put on the outline.
_BLOCKED = 1 << 40


def restack(
    graph: BoundaryGraph, stacking: Stacking, palette: np.ndarray, fitted: FittedEdges
) -> Stacking:
    """Step 4a''': the stacking with fewer hidden copies: a better paint order where one
    is found (`better_order`), then the minimum cut per layer (`fewer_copies`).
    O(`better_order` + `fewer_copies`)."""
    labels = graph.face_label
    if len(labels) > MAX_FACES or len(stacking.order) < 2:
        return stacking
    segments = _segment_counts(graph, fitted)
    pairs = near_pairs(graph) if stacking.pairs is None else stacking.pairs
    fringes = _Fringes(graph, palette)
    order = better_order(graph, stacking.order, pairs, segments, fringes)
    if order is not None:
        again = stack_layers(graph, len(order), palette, order=order, pairs=pairs)
        # Every edge on the new outlines must have been fitted (it always is: each
        # edge between two faces lies on the later one's layer), the fringes the
        # refinements leave must show no more than the old order's, and no more edge
        # may be left with nothing of either side under it (`_open_edges`).
        fitted_all = np.all(segments[outline_edges(graph, again.members)] < _BLOCKED)
        if (
            fitted_all
            and fringes.error(again.order, again.members)
            <= fringes.error(stacking.order, stacking.members)
            and _open_edges(graph, again) <= _open_edges(graph, stacking)
        ):
            stacking = again
    members = fewer_copies(graph, stacking.order, stacking.members, fitted)
    return Stacking(order=stacking.order, members=members, pairs=pairs)


def _open_edges(graph: BoundaryGraph, stacking: Stacking) -> int:
    """Pixels of edge between two painted faces of different layers where the earlier
    layer does not fill the later face (`stacking._trim_fringes` leaves such a face
    out when a layer painted before both fills them): along it the two layers only
    abut, and the layer under both shows through their anti-aliased pixels, a seam. An
    order the fringe trims leave with more of these than the stacking's own is not
    taken (two black discs under a red square, reordered, opened the square's whole
    border). O(edges)."""
    labels = graph.face_label
    left, right = graph.edge_left, graph.edge_right
    rank = np.empty(len(stacking.order), dtype=np.int64)
    rank[stacking.order] = np.arange(len(stacking.order))
    left_label, right_label = labels[left], labels[right]
    between = (left_label >= 0) & (right_label >= 0) & (left_label != right_label)
    left_first = rank[np.maximum(left_label, 0)] < rank[np.maximum(right_label, 0)]
    earlier = np.where(left_first, left_label, right_label)
    later_face = np.where(left_first, right, left)
    opened = between & ~stacking.members[np.maximum(earlier, 0), later_face]
    length = np.diff(graph.edge_start)
    return int(length[opened].sum())


class _Fringes:
    """How much the layers' fringes show: where layer k's outline runs along an edge
    between a face it fills though painted later (not its own) and a face painted
    before k (or left transparent), k's colour peeks out between the two in the
    anti-aliased pixels. Each such edge counts its length times the distance between
    k's colour and the colour it stands in for (a transparent face counts as far as
    black from white), so a near-white layer peeking over white paper costs little
    and a black one a lot. O(layers × edges) per call."""

    def __init__(self, graph: BoundaryGraph, palette: np.ndarray) -> None:
        self.left = graph.edge_left
        self.right = graph.edge_right
        self.labels = graph.face_label
        self.length = np.diff(graph.edge_start).astype(np.float64)
        rgb = np.asarray(palette, dtype=np.float64).reshape(-1, 3)
        diff = rgb[:, None, :] - rgb[None, :, :]
        far = float(np.sqrt(3.0) * 255.0)
        # distance[k, label + 1]: column 0 for left-out faces (label -1).
        self.distance = np.concatenate(
            [np.full((len(rgb), 1), far), np.sqrt((diff * diff).sum(axis=2))], axis=1
        )

    def error(self, order: np.ndarray, members: np.ndarray) -> float:
        colors = len(order)
        rank = np.empty(colors, dtype=np.int64)
        rank[order] = np.arange(colors)
        labels = self.labels
        face_rank = np.where(labels >= 0, rank[np.maximum(labels, 0)], -1)
        in_left = members[:, self.left]
        in_right = members[:, self.right]
        cut = in_left != in_right
        inside = np.where(in_left, self.left, self.right)
        outside = np.where(in_left, self.right, self.left)
        layer = np.arange(colors)[:, None]
        out_label = labels[outside]
        # A left-out face (-1) always shows through; the canvas outside never does.
        shows = (out_label == -1) | ((out_label >= 0) & (face_rank[outside] < rank[layer]))
        peeks = cut & (labels[inside] != layer) & shows
        weight = self.distance[layer, np.maximum(out_label, -1) + 1] * self.length
        return float((weight * peeks).sum())


def better_order(
    graph: BoundaryGraph,
    order: np.ndarray,
    pairs: np.ndarray,
    segments: np.ndarray,
    fringes: _Fringes,
) -> np.ndarray | None:
    """A paint order whose seam-rule face sets (own faces plus later faces near them)
    put fewer fitted segments on the layers' outlines than `order`'s, with fringes that
    show no more (`_Fringes`), or None.

    The largest-area-first order paints a white belly before the black body around it,
    so the belly's layer fills the body and writes the body's silhouette a second time;
    the body painted first fills the belly instead, and its silhouette is written once.
    A local search: each layer in turn moved to every other place, kept when strictly
    cheaper, until a pass moves none (at most a few passes). The costings are
    whole-array over the faces and the edges, every candidate still to come costed in
    one pass (a flat logo's search is a few tens of NumPy calls instead of a few
    hundred). O(passes × layers² × layers × (faces + edges)) work in O(passes × moves)
    calls, for at most `MAX_ORDER_LAYERS` layers."""
    colors = len(order)
    if colors < 2 or colors > MAX_ORDER_LAYERS or len(pairs) == 0:
        return None
    labels = graph.face_label
    keep = (labels[pairs[:, 0]] >= 0) & (labels[pairs[:, 1]] >= 0)
    f, g = pairs[keep, 0], pairs[keep, 1]
    lf, lg = labels[f], labels[g]
    own = np.zeros((colors, len(labels)), dtype=bool)
    painted = np.nonzero(labels >= 0)[0]
    own[labels[painted], painted] = True
    left, right = graph.edge_left, graph.edge_right

    def seam_rule(candidate: list[int]) -> tuple[np.ndarray, np.ndarray]:
        arranged = np.array(candidate, dtype=np.int64)
        rank = np.empty(colors, dtype=np.int64)
        rank[arranged] = np.arange(colors)
        members = own.copy()
        g_later = rank[lg] > rank[lf]
        members[lf[g_later], g[g_later]] = True
        members[lg[~g_later], f[~g_later]] = True
        return arranged, members

    # Layer k fills a face x that is its own, or that is near a face of k's (a near
    # pair) and painted later than k: `seam_rule`'s sets, for many orders at once.
    near = np.zeros_like(own)
    near[lf, g] = True
    near[lg, f] = True
    face_colour = np.maximum(labels, 0)
    painted_face = labels >= 0

    def costs(candidates: list[list[int]]) -> list[int]:
        """Every candidate order's `cost`, in one whole-array pass over them all."""
        arranged = np.array(candidates, dtype=np.int64)
        rank = np.argsort(arranged, axis=1)  # each order's inverse permutation
        face_rank = rank[:, face_colour]
        later = (face_rank[:, None, :] > rank[:, :, None]) & painted_face
        members = own | (near & later)
        cut = members[:, :, left] != members[:, :, right]
        return [int(c) for c in (cut * segments).sum(axis=(1, 2))]

    best = order.tolist()
    best_cost = start_cost = costs([best])[0]
    fringe_limit: float | None = None
    for _ in range(3):
        moved = False
        # The bottom layer (the paper: the largest area) stays at the bottom: painted
        # above shapes, its colour would peek out between them along their edges.
        movers = best[1:]
        done = 0
        while done < len(movers):
            # Each mover's candidates are `rest` (the order without it) with it put back
            # somewhere. Those of all movers still to come are costed at once from the
            # current order, then taken in turn as one by one; after a move the later
            # movers' candidates change, and are costed again from the new order.
            batch = []
            for colour in movers[done:]:
                rest = [c for c in best if c != colour]
                batch.append([[*rest[:place], colour, *rest[place:]] for place in range(1, colors)])
            flat_costs = costs([candidate for group in batch for candidate in group])
            for group in batch:
                group_costs, flat_costs = flat_costs[: len(group)], flat_costs[len(group) :]
                done += 1
                moved_here = False
                for candidate, candidate_cost in zip(group, group_costs, strict=True):
                    if candidate == best or candidate_cost >= best_cost:
                        continue
                    if fringe_limit is None:
                        fringe_limit = fringes.error(*seam_rule(order.tolist()))
                    if fringes.error(*seam_rule(candidate)) <= fringe_limit:
                        best, best_cost, moved, moved_here = candidate, candidate_cost, True, True
                if moved_here:
                    break
        if not moved:
            break
    if best_cost >= start_cost:
        return None
    return np.array(best, dtype=np.int64)


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
