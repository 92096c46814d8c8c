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

import heapq
from collections import defaultdict

import attrs
import numpy as np

from printjob_adapters.engine.boundaries import BoundaryGraph, Runs, run_overlaps, sorted_unique
from printjob_adapters.engine.curves import FittedEdges, groups
from printjob_adapters.engine.graphs import connected_components, walk_chains
from printjob_adapters.engine.vector import CLOSE, CURVE, LINE, MOVE, OP_POINTS, Command, Outline

#: Faces whose pixels come this close (Chebyshev distance) count as neighbours.
NEAR = 2
#: Runs whose neighbours `near_pairs` gathers at once (about 15 pairs each at most).
_NEAR_BATCH = 1 << 18
#: Open outline edges from which `_walk` goes a chain at a time: below about a thousand
#: the whole-array set-up of `_walk_chained` costs more than the walk it spares.
_CHAINED_WALK = 1024
#: What a junction met by `_walk_chained`'s outer loop is: one with several edges
#: leaving, the start of a ring of single-exit junctions, or a chain's smallest junction
#: inside it.
_BRANCH, _RING, _INSIDE = 0, 1, 2


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
    other, ascending. Read from the face map's row runs: in one row, a run and the next
    (they touch) and the one after when the run between is a single pixel (`NEAR` = 2
    reaches no further along a row); and the runs of the `NEAR` rows below whose columns
    come within `NEAR` of each other (`boundaries.run_overlaps`). Pairs of one face are
    dropped and the rest made unique (`_unique_codes`), per batch of runs. O(runs log
    runs + pairs); `_NEAR_BATCH` runs at a time, so the memory stays bounded when every
    pixel is a run of its own."""
    faces = graph.faces
    h, w = faces.shape
    n = len(graph.face_label)
    runs = Runs(start=graph.run_start, label=graph.run_face, width=w, height=h)
    end = runs.end()
    row = runs.start // w
    face = graph.run_face.astype(np.int64)
    single = (end - runs.start) == 1
    batches: list[np.ndarray] = []
    for first in range(0, len(runs.start), _NEAR_BATCH):
        stop = min(first + _NEAR_BATCH, len(runs.start))
        codes: list[np.ndarray] = []
        # The same row: the next run, and the one after a run of one pixel.
        for step in (1, 2):
            upper = np.arange(first, min(stop, len(row) - step))
            same_row = row[upper] == row[upper + step]
            if step == 2:
                same_row &= single[upper + 1]
            codes.append(_pair_codes(face[upper[same_row]], face[upper[same_row] + step], n))
        for rows_apart in range(1, NEAR + 1):
            upper, lower = run_overlaps(runs, end, rows_apart, NEAR, first, stop)
            codes.append(_pair_codes(face[upper], face[lower], n))
        batches.append(_unique_codes(np.concatenate(codes), n))
    all_codes = batches[0] if len(batches) == 1 else _sorted_codes(np.concatenate(batches), n)
    return np.stack([all_codes // n, all_codes % n], axis=1)


#: Faces up to which `_unique_codes` marks pairs in a table of every pair (64 K entries)
#: instead of sorting them.
_TABLE_FACES = 256


def _pair_codes(fa: np.ndarray, fb: np.ndarray, n: int) -> np.ndarray:
    """min * n + max of every pair of different faces. O(pairs)."""
    apart = fa != fb
    fa, fb = fa[apart], fb[apart]
    codes: np.ndarray = np.minimum(fa, fb) * n + np.maximum(fa, fb)
    return codes


def _unique_codes(codes: np.ndarray, n: int) -> np.ndarray:
    """The distinct pair codes, ascending: for a few faces (flat art) marked in a table
    of all n * n pairs and read back in order, O(codes + n²); else sorted (`np.unique`),
    O(codes log codes)."""
    if n > _TABLE_FACES:
        return _sorted_codes(codes, n)
    seen = np.zeros(n * n, dtype=bool)
    seen[codes] = True
    return np.flatnonzero(seen)


def _sorted_codes(codes: np.ndarray, n: int) -> np.ndarray:
    """The distinct pair codes, ascending, by a sort (`boundaries.sorted_unique`), in 32
    bits when every code fits (n² < 2³¹; a photo's 10,000-50,000 faces): NumPy's own
    `unique` hashes first, and a 32-bit sort is quicker still (the Hubble field's 1.25
    million codes: 0.10 → 0.015 s). O(codes log codes)."""
    if n * n <= np.iinfo(np.int32).max:
        return sorted_unique(codes.astype(np.int32)).astype(np.int64)
    return sorted_unique(codes)


def stack_layers(graph: BoundaryGraph, colors: int, palette: np.ndarray | None = None) -> Stacking:
    """Step 4a: order and face sets (see module docstring); `palette` (colours x 3,
    0..255), when given, keeps the faces of a near shade in a layer (`_trim_fringes`).
    O(faces × colours)."""
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
        _trim_fringes(
            graph,
            order,
            rank,
            members,
            np.concatenate([pairs, pairs[:, ::-1]]),
            _near_shades(palette, colors),
        )
    return Stacking(order=order, members=members)


#: Largest distance (RGB, 0..255) between two palette colours that count as near
#: shades (`_near_shades`): neighbouring bands of a gradient are a few units apart,
#: flat art's colours (anti-aliasing tints merged away) many more.
NEAR_SHADE = 12.0


def _near_shades(palette: np.ndarray | None, colors: int) -> np.ndarray | None:
    """near[k, j]: whether palette colours k and j are near shades (within
    `NEAR_SHADE`); None without a palette. O(colours²)."""
    if palette is None:
        return None
    rgb = np.asarray(palette, dtype=np.float64).reshape(colors, 3)
    diff = rgb[:, None, :] - rgb[None, :, :]
    near: np.ndarray = np.sqrt((diff * diff).sum(axis=2)) <= NEAR_SHADE
    return near


def _trim_fringes(
    graph: BoundaryGraph,
    order: np.ndarray,
    rank: np.ndarray,
    members: np.ndarray,
    pairs: np.ndarray,
    near_shade: np.ndarray | None = None,
) -> None:
    """Step 4a': take a later face G out of layer k where that shortens k's fringe.

    Layer k filling G (painted later) draws G's edges to faces painted *before* k; there
    k's colour peeks out between the two (a fringe of up to a quarter of k along the
    anti-aliased edge). Leaving G out moves that fringe to G's edges with k's own faces
    instead, so G is left out when those are shorter, and only when an earlier layer
    already fills G and every face of k's set near G (it stays solid underneath: no
    seam).

    Not when G's colour is a near shade of k's (`near_shade[k, label]`, the bands of a
    gradient): there k's fringe is all but G's own colour, invisible, while leaving G
    out would let the earlier layer under both show along G's edges with k's faces, in
    the anti-aliased pixels both outlines share: a light or dark hairline along the
    band border. O(colours × (edges + faces near the candidates))."""
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
            # Sums of whole crack counts: exact in float64 in any order, as `np.add.at`'s.
            fringe_in += np.bincount(
                a[sel],
                weights=np.where((other_rank >= 0) & (other_rank < idx), length[sel], 0),
                minlength=face_count,
            )
            fringe_out += np.bincount(
                a[sel], weights=np.where(labels[b[sel]] == k, length[sel], 0), minlength=face_count
            )
        trim = added & (fringe_out < fringe_in)
        if near_shade is not None:
            shade = near_shade[k].take(np.maximum(labels, 0))
            trim &= ~shade
            _slide_under(
                graph,
                order,
                idx,
                members,
                sorted_pairs,
                bounds,
                near_shade,
                added & ~shade & (fringe_in > 0),
            )
        candidates = np.nonzero(trim & member)[0]
        if len(candidates) == 0:
            continue
        member[
            candidates[_left_out(members, order[:idx], member, candidates, sorted_pairs, bounds)]
        ] = False


def _left_out(
    members: np.ndarray,
    below: np.ndarray,
    member: np.ndarray,
    candidates: np.ndarray,
    sorted_pairs: np.ndarray,
    bounds: np.ndarray,
) -> np.ndarray:
    """Which of `candidates` (ascending) `_trim_fringes` leaves out of the layer whose
    faces are `member`: taken in ascending order, G is left out when one layer of
    `below` fills G and every face near G still in the layer (those before G already
    left out are not).

    Whole-array instead of one candidate at a time: leaving a face out only shrinks the
    sets the later candidates need filled, so a candidate left out given some of the
    earlier ones left out is left out given more. Hence the faces left out given the
    candidates found so far (first none) are all left out in the walk too, and repeating
    until nothing is added gives exactly the walk's set (its smallest candidate missing
    would have all the walk's earlier ones found, so would be found). A round is
    O(layers × (candidates + their near faces)); there are as many rounds as the longest
    chain of candidates left out only after a near one (one or two on a photo)."""
    first, stop = bounds[candidates], bounds[candidates + 1]
    _, owner, place = groups(stop - first)
    near = sorted_pairs[first[owner] + place, 1]
    inside = member[near]
    owner, near = owner[inside], near[inside]
    near_count = np.bincount(owner, minlength=len(candidates))
    offsets = np.zeros(len(candidates) + 1, dtype=np.int64)
    np.cumsum(near_count, out=offsets[1:])
    # The near faces that are candidates themselves, and which candidate each is.
    at = np.searchsorted(candidates, near)
    at[at == len(candidates)] = 0
    near_candidate = candidates[at] == near
    earlier_candidate = near_candidate & (at < owner)
    own_filled = members[np.ix_(below, candidates)]
    near_filled = members[np.ix_(below, near)]
    left_out = np.zeros(len(candidates), dtype=bool)
    while True:
        # A near face an earlier candidate left out no longer needs filling.
        gone = earlier_candidate & left_out[at]
        missing = np.zeros((len(below), len(near) + 1), dtype=np.int64)
        np.cumsum(~near_filled & ~gone, axis=1, out=missing[:, 1:])
        all_filled = missing[:, offsets[1:]] == missing[:, offsets[:-1]]
        found = (own_filled & all_filled).any(axis=0)
        if np.array_equal(found, left_out):
            return left_out
        left_out = found


def _slide_under(
    graph: BoundaryGraph,
    order: np.ndarray,
    idx: int,
    members: np.ndarray,
    sorted_pairs: np.ndarray,
    bounds: np.ndarray,
    near_shade: np.ndarray,
    fringed: np.ndarray,
) -> None:
    """Step 4a'': the faces G that layer k (`order[idx]`) fills though their colour is
    far from k's, and that border a face painted before k (`fringed`): k's colour would
    peek out along those borders, a hairline of a far colour (a flat shape's colour
    between two bands of a gradient). When an earlier layer of a near shade of G's
    colour already fills G, that layer is made to fill the faces of k's set near G too,
    and G is left out of k: every border of G then has that layer solid underneath (no
    seam), and what shows in the anti-aliased pixels along G's borders is all but G's
    own colour. Only faces of near shades are involved, so art without such shades
    (flat art) is left as it was. O(candidates × (colours + faces near them))."""
    candidates = np.nonzero(fringed & members[order[idx]])[0]
    if len(candidates) == 0:
        return
    labels = graph.face_label
    member = members[order[idx]]
    below = order[:idx]
    # Only a candidate some earlier layer of a near shade fills moves: most do not (on a
    # photo about 2 % do). A candidate moving only fills faces of earlier layers, so one
    # that no such layer fills yet can come to be only when a candidate before it that
    # moves fills it; those are visited then, in ascending order as the walk would.
    shaded = (
        near_shade[np.ix_(below, labels[candidates])] & members[np.ix_(below, candidates)]
    ).any(axis=0)
    waiting = np.flatnonzero(shaded).tolist()
    visited = shaded.copy()
    while waiting:
        position = heapq.heappop(waiting)
        g = int(candidates[position])
        shades = below[near_shade[below, labels[g]] & members[below, g]]
        if len(shades) == 0:
            continue
        near = sorted_pairs[bounds[g] : bounds[g + 1], 1]
        near = near[member[near]]
        # The topmost of them: the layer nearest in paint order to the faces it joins.
        members[int(shades[-1]), near] = True
        member[g] = False
        at = np.searchsorted(candidates, near)
        at = at[(at < len(candidates)) & (candidates[np.minimum(at, len(candidates) - 1)] == near)]
        # Only the candidates after this one: the walk has decided those before.
        at = at[(at > position) & ~visited[at]]
        visited[at] = True
        for later in at.tolist():
            heapq.heappush(waiting, later)


def outline_edges(graph: BoundaryGraph, members: np.ndarray) -> np.ndarray:
    """Edges lying on at least one layer's outline (the only ones worth fitting)."""
    left = members[:, graph.edge_left]
    right = members[:, graph.edge_right]
    return np.nonzero((left != right).any(axis=0))[0]


def layer_outline(graph: BoundaryGraph, member: np.ndarray, fitted: FittedEdges) -> Outline:
    """Step 4b: one layer's closed contours from the shared fitted edges
    (`layer_outlines` of one layer)."""
    return layer_outlines(graph, member[None, :], fitted)[0]


def layer_outlines(graph: BoundaryGraph, members: np.ndarray, fitted: FittedEdges) -> list[Outline]:
    """Step 4b: the closed contours of every layer (`members[k]`: its faces) from the
    shared fitted edges.

    Edges are oriented with the layer's faces on the left, so at every junction as many
    outline edges leave as arrive, and a greedy walk (`_walk`) closes every contour;
    loops (closed edges) are contours of their own, first. The contours of all the
    layers, numbered one after the other, then have their segments gathered from the
    fitted edges' arrays (forward or reversed) in one pass (`_contour_outline`), cut
    apart per layer. O(outline edges + their segments)."""
    edges: list[np.ndarray] = []
    directions: list[np.ndarray] = []
    contours: list[np.ndarray] = []
    layer_contours = [0]
    for member in members:
        left_in = member[graph.edge_left]
        right_in = member[graph.edge_right]
        chosen = np.nonzero(left_in != right_in)[0]
        forward = left_in[chosen]
        loop = graph.edge_closed[chosen]
        open_ = chosen[~loop]
        parts, part_forward, contour = _walk(
            open_, forward[~loop], graph.edge_j0[open_], graph.edge_j1[open_]
        )
        loops = chosen[loop]
        count = len(loops) + int(contour.max(initial=-1)) + 1
        edges += [loops, parts]
        directions += [forward[loop], part_forward]
        contours += [
            np.arange(len(loops)) + layer_contours[-1],
            contour + len(loops) + layer_contours[-1],
        ]
        layer_contours.append(layer_contours[-1] + count)
    outline, op_start = _contour_outline(
        fitted,
        np.concatenate(edges).astype(np.int64),
        np.concatenate(directions).astype(bool),
        np.concatenate(contours).astype(np.int64),
        layer_contours[-1],
    )
    op_cut = op_start[layer_contours].tolist()
    point_start = np.zeros(len(outline.ops) + 1, dtype=np.int64)
    np.cumsum(OP_POINTS[outline.ops], out=point_start[1:])
    point_cut = point_start[op_cut].tolist()
    return [
        Outline(ops=outline.ops[a:b], points=outline.points[c:d])
        for a, b, c, d in zip(op_cut[:-1], op_cut[1:], point_cut[:-1], point_cut[1:], strict=True)
    ]


def layer_commands(
    graph: BoundaryGraph, member: np.ndarray, fitted: FittedEdges
) -> tuple[Command, ...]:
    """`layer_outline` as RecordingPen-style commands."""
    return layer_outline(graph, member, fitted).commands()


def _walk(
    edges: np.ndarray, forward: np.ndarray, j0: np.ndarray, j1: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The open outline edges chained into contours: from the smallest junction with an
    edge left, each contour takes at every junction the smallest edge id leaving it
    that is not used yet, until it is back where it began. Returns the edges in walking
    order, their directions and their contours. A photo's layers (thousands of edges)
    are walked a chain at a time (`_walk_chained`), a logo's few edges one at a time
    (`_walk_edges`): the same contours. O(edges)."""
    if len(edges) >= _CHAINED_WALK:
        walked = _walk_chained(edges, forward, j0, j1)
        if walked is not None:
            return walked
    return _walk_edges(edges, forward, j0, j1)


def _walk_edges(
    edges: np.ndarray, forward: np.ndarray, j0: np.ndarray, j1: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_walk` as a pointer walk, one step per edge (junctions are few per edge, and the
    order depends on the choices before). O(edges)."""
    leaving: dict[int, list[tuple[int, bool, int]]] = defaultdict(list)
    for e, fwd, a, b in zip(
        edges.tolist(), forward.tolist(), j0.tolist(), j1.tolist(), strict=True
    ):
        start, end = (a, b) if fwd else (b, a)
        leaving[start].append((e, fwd, end))
    for j in leaving:
        leaving[j].reverse()
    out_edge: list[int] = []
    out_forward: list[bool] = []
    out_contour: list[int] = []
    contour = 0
    for j0_ in sorted(leaving):
        waiting = leaving[j0_]
        while waiting:
            e, fwd, j = waiting.pop()
            out_edge.append(e)
            out_forward.append(fwd)
            out_contour.append(contour)
            while j != j0_ and leaving.get(j):
                e, fwd, j = leaving[j].pop()
                out_edge.append(e)
                out_forward.append(fwd)
                out_contour.append(contour)
            contour += 1
    return (
        np.array(out_edge, dtype=np.int64),
        np.array(out_forward, dtype=bool),
        np.array(out_contour, dtype=np.int64),
    )


def _walk_chained(
    edges: np.ndarray, forward: np.ndarray, j0: np.ndarray, j1: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """`_walk` a chain at a time, or None where a junction has more edges arriving than
    leaving (the walk can stop early there; `_walk_edges` keeps that case).

    Most junctions on a layer's outline have one edge leaving: there the walk has no
    choice, so the edges fall into chains from a junction of several exits to the next
    (`graphs.walk_chains`; a ring of single-exit junctions is one chain from its smallest
    junction, where the outer loop meets it first). The Python loop then steps over
    chains: at a junction of several exits the chains leave in the order the edges do;
    a contour that the outer loop starts inside a chain (at its smallest inner junction,
    when no walk has taken the chain yet) runs from there to the chain's end and closes
    when the walk takes the same chain from its head, with the part before that
    junction. The pieces are then laid out by a prefix sum. O(edges log chain length)
    in arrays, O(chains) in Python."""
    n = len(edges)
    start = np.where(forward, j0, j1).astype(np.int64)
    end = np.where(forward, j1, j0).astype(np.int64)
    # Edges grouped by the junction they leave, in their given order within it.
    by_start = np.argsort(start, kind="stable")
    s_start = start[by_start]
    s_end = end[by_start]
    # s_start ascends: its distinct junctions, first places and counts by one comparison
    # of neighbours (as `np.unique` gives them, without its sort).
    new_junction = np.ones(n, dtype=bool)
    np.not_equal(s_start[1:], s_start[:-1], out=new_junction[1:])
    first_out = np.flatnonzero(new_junction)
    junction = s_start[first_out]
    degree = np.diff(np.append(first_out, n))
    arriving, in_degree = np.unique(s_end, return_counts=True)
    if not (np.array_equal(junction, arriving) and np.array_equal(degree, in_degree)):
        return None
    at_start = np.searchsorted(junction, s_start)
    at_end = np.searchsorted(junction, s_end)
    # The one edge leaving where an edge ends, when that junction has only one.
    child = first_out[at_end]
    has_child = degree[at_end] == 1
    heads = np.flatnonzero(degree[at_start] >= 2)
    order = walk_chains(child, has_child, heads)
    if len(order) < n:
        heads, has_child = _cut_rings(order, child, has_child, heads, s_start)
        order = walk_chains(child, has_child, heads)
    is_head = np.zeros(n, dtype=bool)
    is_head[heads] = True
    chain_first = np.flatnonzero(is_head[order])
    chain_stop = np.append(chain_first[1:], n)
    chain_len = chain_stop - chain_first
    chains = len(chain_first)
    # A junction of several exits: its chains are consecutive (heads in edge order).
    chain_of_head = np.empty(n, dtype=np.int64)
    chain_of_head[order[chain_first]] = np.arange(chains)
    branch = np.flatnonzero(degree >= 2)
    next_chain = np.zeros(len(junction), dtype=np.int64)
    next_chain[branch] = chain_of_head[first_out[branch]]
    stop_chain = next_chain + np.where(degree >= 2, degree, 0)
    ring = degree[at_start[order[chain_first]]] == 1
    rings = np.flatnonzero(ring)
    met_at = [junction[branch], s_start[order[chain_first[rings]]]]
    met_kind = [np.full(len(branch), _BRANCH), np.full(len(rings), _RING)]
    met_what = [branch, rings]
    met_cut = [np.zeros(len(branch), dtype=np.int64), np.zeros(len(rings), dtype=np.int64)]
    # Each chain's smallest inner junction (a ring's are all met after its start).
    chain_of = np.repeat(np.arange(chains), chain_len)
    inner = np.ones(n, dtype=bool)
    inner[chain_stop - 1] = False
    inner &= ~ring[chain_of]
    place = np.flatnonzero(inner)
    if len(place):
        owner = chain_of[place]
        smallest = np.lexsort((s_end[order[place]], owner))
        lead = np.ones(len(smallest), dtype=bool)
        lead[1:] = owner[smallest][1:] != owner[smallest][:-1]
        chosen = place[smallest[lead]]
        met_at.append(s_end[order[chosen]])
        met_kind.append(np.full(len(chosen), _INSIDE))
        met_what.append(chain_of[chosen])
        met_cut.append(chosen - chain_first[chain_of[chosen]] + 1)
    by_junction = np.argsort(np.concatenate(met_at), kind="stable")
    pieces = _walk_pieces(
        np.concatenate(met_kind)[by_junction].tolist(),
        np.concatenate(met_what)[by_junction].tolist(),
        np.concatenate(met_cut)[by_junction].tolist(),
        next_chain.tolist(),
        stop_chain.tolist(),
        at_end[order[chain_stop - 1]].tolist(),
        chain_len.tolist(),
    )
    piece_chain, low, high, piece_contour = (np.array(p, dtype=np.int64) for p in pieces)
    length = high - low
    begin = np.zeros(len(length) + 1, dtype=np.int64)
    np.cumsum(length, out=begin[1:])
    at = np.repeat(chain_first[piece_chain] + low - begin[:-1], length) + np.arange(begin[-1])
    taken = by_start[order[at]]
    return (
        edges[taken].astype(np.int64),
        forward[taken].astype(bool),
        np.repeat(piece_contour, length),
    )


def _cut_rings(
    order: np.ndarray,
    child: np.ndarray,
    has_child: np.ndarray,
    heads: np.ndarray,
    s_start: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The heads and child links with every ring of single-exit junctions (the edges
    `order` did not reach) cut where it leaves its smallest junction: the edge from
    there heads the ring's chain, the edge arriving there ends it."""
    reached = np.zeros(len(child), dtype=bool)
    reached[order] = True
    ring_edges = np.flatnonzero(~reached)
    _, ring = connected_components(len(child), ring_edges, child[ring_edges])
    ring_of = ring[ring_edges]
    smallest = np.lexsort((s_start[ring_edges], ring_of))
    lead = np.ones(len(smallest), dtype=bool)
    lead[1:] = ring_of[smallest][1:] != ring_of[smallest][:-1]
    ring_heads = ring_edges[smallest[lead]]
    has_child = has_child.copy()
    has_child[ring_edges[np.isin(child[ring_edges], ring_heads)]] = False
    return np.concatenate([heads, ring_heads]), has_child


def _walk_pieces(
    kinds: list[int],
    whats: list[int],
    cuts: list[int],
    next_chain: list[int],
    stop_chain: list[int],
    chain_end: list[int],
    chain_len: list[int],
) -> tuple[list[int], list[int], list[int], list[int]]:
    """`_walk_chained`'s loop over the junctions the outer loop meets, in ascending
    order (`kinds`: `_BRANCH` with its junction, `_RING` or `_INSIDE` with its chain and
    the inner junction's place in it): the walk as pieces of chains, (chain, first,
    stop, contour) each. A junction's chains are taken through `next_chain` up to
    `stop_chain`. O(chains)."""
    p_chain: list[int] = []
    p_low: list[int] = []
    p_high: list[int] = []
    p_contour: list[int] = []
    taken = [False] * len(chain_len)
    contour = 0
    for kind, what, cut in zip(kinds, whats, cuts, strict=True):
        if kind == _BRANCH:
            home = what
            while next_chain[home] < stop_chain[home]:
                c = next_chain[home]
                j = home
                while True:
                    next_chain[j] = c + 1
                    taken[c] = True
                    p_chain.append(c)
                    p_low.append(0)
                    p_high.append(chain_len[c])
                    p_contour.append(contour)
                    j = chain_end[c]
                    if j == home or next_chain[j] >= stop_chain[j]:
                        break
                    c = next_chain[j]
                contour += 1
        elif kind == _RING:
            taken[what] = True
            p_chain.append(what)
            p_low.append(0)
            p_high.append(chain_len[what])
            p_contour.append(contour)
            contour += 1
        elif not taken[what]:
            taken[what] = True
            p_chain.append(what)
            p_low.append(cut)
            p_high.append(chain_len[what])
            p_contour.append(contour)
            j = chain_end[what]
            while next_chain[j] < stop_chain[j]:
                c = next_chain[j]
                next_chain[j] = c + 1
                p_chain.append(c)
                p_low.append(0)
                p_contour.append(contour)
                if c == what:
                    p_high.append(cut)
                    break
                taken[c] = True
                p_high.append(chain_len[c])
                j = chain_end[c]
            contour += 1
    return p_chain, p_low, p_high, p_contour


def _contour_outline(
    fitted: FittedEdges, edge: np.ndarray, forward: np.ndarray, contour: np.ndarray, count: int
) -> tuple[Outline, np.ndarray]:
    """The `count` contours made of these edges (in order, each forward or reversed,
    `contour` numbering them from 0 in order) as an outline: moveTo, the edges'
    segments, closePath; and the index of every contour's moveTo among the commands
    (and of the end). Straight segments continuing each other exactly (where the
    contour passes a junction of other layers' edges on a straight line, such as the
    image border) become one (`_merge_straight`); a final straight segment back to the
    start is left to closePath. O(segments)."""
    k = fitted.position(edge)
    first, stop = fitted.offsets[k], fitted.offsets[k + 1]
    _, owner, place = groups(stop - first)
    seg = np.where(forward[owner], first[owner] + place, stop[owner] - 1 - place)
    fwd = forward[owner][:, None]
    segs = fitted.segments[seg]
    origin = fitted.seg_from[seg]
    src = np.where(fwd, origin, segs[:, 2])
    c1 = np.where(fwd, segs[:, 0], segs[:, 1])
    c2 = np.where(fwd, segs[:, 1], segs[:, 0])
    dst = np.where(fwd, segs[:, 2], origin)
    line = fitted.is_line[seg]
    of = contour[owner]
    turned = _end_on_a_line(src, dst, line, of, count)
    if turned is not None:
        src, c1, c2, dst, line = src[turned], c1[turned], c2[turned], dst[turned], line[turned]
    # Lines of no length (the edges of a fragment collapsed to a point, see
    # `curves._collapse_fragments`) draw nothing; then no spike may be left.
    empty = line & (src == dst).all(axis=1)
    if empty.any():
        src, c1, c2, dst, line, of = _rows(np.nonzero(~empty)[0], src, c1, c2, dst, line, of)
    solid = _without_spikes(dst, line, of, count)
    if solid is not None:
        src, c1, c2, dst, line, of = _rows(solid, src, c1, c2, dst, line, of)
    keep = _merge_straight(src, dst, line, of)
    # The last segment of a contour of two or more, if straight, is the closePath.
    body = np.bincount(of[keep], minlength=count)
    kept = np.nonzero(keep)[0]
    is_last = np.zeros(len(of), dtype=bool)
    if len(kept):
        ends = np.nonzero(np.append(of[kept][1:] != of[kept][:-1], True))[0]
        is_last[kept[ends]] = True
    keep &= ~(is_last & line & (body[of] > 1))
    body = np.bincount(of[keep], minlength=count)
    # Lay out each contour: moveTo, its kept segments, closePath (none for a contour
    # that was all spikes).
    op_start = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.where(body > 0, body + 2, 0), out=op_start[1:])
    drawn = body > 0
    ops = np.empty(int(op_start[-1]), dtype=np.int8)
    ops[op_start[:-1][drawn]] = MOVE
    ops[op_start[1:][drawn] - 1] = CLOSE
    kept = np.nonzero(keep)[0]
    _, _, rank = groups(body)
    slot = op_start[of[kept]] + 1 + rank
    ops[slot] = np.where(line[kept], LINE, CURVE)
    point_start = np.zeros(len(ops) + 1, dtype=np.int64)
    np.cumsum(OP_POINTS[ops], out=point_start[1:])
    points = np.empty((int(point_start[-1]), 2))
    # A contour starts where its first segment does (kept, or merged into the next).
    head = np.searchsorted(of, np.nonzero(drawn)[0])
    points[point_start[op_start[:-1][drawn]]] = src[head]
    at = point_start[slot]
    curve = ~line[kept]
    points[at[curve]] = c1[kept[curve]]
    points[at[curve] + 1] = c2[kept[curve]]
    points[at + np.where(curve, 2, 0)] = dst[kept]
    return Outline(ops=ops, points=points), op_start


def _end_on_a_line(
    src: np.ndarray, dst: np.ndarray, line: np.ndarray, contour: np.ndarray, count: int
) -> np.ndarray | None:
    """The segments' order with every contour that ends on a curve but holds a straight
    segment turned (cyclically) to end on its last straight run instead, so that the
    closePath draws that run: one command fewer, the same shape. A run's end is a
    straight segment the next one (cyclically) does not continue straight, so no run
    is split across the start. Contours already ending on a straight segment keep
    their start (pixel-grid art, all straight, keeps its bytes). None when no contour
    turns. `contour` ascends. O(segments)."""
    n = len(line)
    if n == 0:
        return None
    start = np.searchsorted(contour, np.arange(count))
    stop = np.append(start[1:], n)
    used = stop > start
    start, stop = start[used], stop[used]
    following = np.arange(1, n + 1)
    following[stop - 1] = start
    run_end = line & ~(line[following] & _continues(src, dst, dst[following]))
    last_run_end = np.maximum.reduceat(np.where(run_end, np.arange(n), -1), start)
    turn = ~line[stop - 1] & (last_run_end >= 0)
    if not turn.any():
        return None
    length = stop - start
    # Per segment: its contour's start, length and the run end to finish on (or the
    # contour's own last segment, for no turn).
    owner = np.repeat(np.arange(len(start)), length)
    finish = np.where(turn, last_run_end, stop - 1)
    at = np.arange(n)
    place = start[owner] + (at - finish[owner] - 1) % length[owner]
    order = np.empty(n, dtype=np.int64)
    order[place] = at
    return order


def _rows(rows: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """These rows of every array."""
    return tuple(a[rows] for a in arrays)


def _without_spikes(
    dst: np.ndarray, line: np.ndarray, contour: np.ndarray, count: int
) -> np.ndarray | None:
    """The segments that stay when every straight segment followed (cyclically, in its
    contour) by the same segment walked back is dropped with it: a zero-area spike. One
    comes from a face of a pixel or two whose tiny edges are all chords between the
    same two junctions (`curves._stub_chords`): the face is gone, yet a layer that
    fills it and neither neighbour, or both neighbours and not it, still walks both
    chords. A pair is found only where the two are next to each other, so a spike
    hidden behind another is left in (none on the corpus). None when there is no
    spike. O(segments)."""
    n = len(line)
    if n < 2:
        return None
    start = np.searchsorted(contour, np.arange(count))
    stop = np.append(start[1:], n)
    following = np.arange(1, n + 1)
    used = stop > start
    following[stop[used] - 1] = start[used]
    # Chained segments: the next one starts where this one ends, so it walks this one
    # back when it ends where this one starts (the previous segment's end).
    previous = np.empty(n, dtype=np.int64)
    previous[following] = np.arange(n)
    back = line & line[following] & (following != np.arange(n))
    back &= (dst[following] == dst[previous]).all(axis=1)
    if not back.any():
        return None
    spike = back.copy()
    spike[following[back]] = True
    return np.nonzero(~spike)[0]


def _merge_straight(
    src: np.ndarray, dst: np.ndarray, line: np.ndarray, contour: np.ndarray
) -> np.ndarray:
    """Which segments stay when every straight segment that continues the straight
    segment before it (same contour; its end on the line from where that one's merged
    run began, and beyond it) replaces that one. The pairwise test is whole-array; it
    is exact unless the segment before was itself merged, so only stretches of
    straight pairs holding a merge (rare) are followed one segment at a time.
    O(segments)."""
    n = len(line)
    keep = np.ones(n, dtype=bool)
    if n < 2:
        return keep
    paired = np.zeros(n, dtype=bool)
    paired[1:] = line[1:] & line[:-1] & (contour[1:] == contour[:-1])
    pairwise = np.zeros(n, dtype=bool)
    pairwise[1:] = paired[1:] & _continues(src[:-1], dst[:-1], dst[1:])
    merged = pairwise.copy()
    followed = 0
    for k in np.nonzero(pairwise)[0].tolist():
        if k < followed:
            continue
        # The first merge of its stretch: the segment before it was not merged.
        before = src[k - 1].tolist()
        j = k + 1
        while j < n and paired[j]:
            if merged[j - 1]:
                merged[j] = _continues_at(before, dst[j - 1].tolist(), dst[j].tolist())
            else:
                before = src[j - 1].tolist()
            j += 1
        followed = j
    keep[:-1] = ~merged[1:]
    return keep


def _continues_at(a: list[float], b: list[float], c: list[float]) -> bool:
    """`_continues` for one triple of points."""
    abx, aby = b[0] - a[0], b[1] - a[1]
    bcx, bcy = c[0] - b[0], c[1] - b[1]
    cross = abx * bcy - aby * bcx
    return abs(cross) <= 1e-9 * (abx * abx + aby * aby + bcx * bcx + bcy * bcy) and (
        abx * bcx + aby * bcy > 0
    )


def _continues(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Whether each b lies on the straight run from a to c (and between them)."""
    abx, aby = b[:, 0] - a[:, 0], b[:, 1] - a[:, 1]
    bcx, bcy = c[:, 0] - b[:, 0], c[:, 1] - b[:, 1]
    cross = abx * bcy - aby * bcx
    on_line: np.ndarray = np.abs(cross) <= 1e-9 * (abx * abx + aby * aby + bcx * bcx + bcy * bcy)
    continues: np.ndarray = on_line & (abx * bcx + aby * bcy > 0)
    return continues
