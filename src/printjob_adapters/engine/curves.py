"""Step 3 of tracing: boundary edges' data points to lines and cubic Béziers.

Edges arrive together (`EdgeData`): the data points of every edge (one per crack,
already placed with sub-pixel accuracy) end to end, plus each open edge's two fixed
junction points. Every part below is whole-array work over all edges, corners, runs or
fit attempts at once; a ragged group (an edge's points, a run's points) is a stretch of
one concatenated array given by offsets. Fitting runs in four parts:

1. Corners (`_find_corners`): the turning angle between the chords reaching
   `CORNER_SPAN` points back and forth from every gap between two data points, kept
   where it is a local maximum above `CORNER_ANGLE`. Tiny edges (a dot, a one-pixel line
   end, a short step between junctions) are their crack polygon instead (`_tiny_edges`),
   so they stay the shapes they are.
2. Corner points (`_corner_breaks`): each corner sits where the straight lines fitted to
   the points on its two sides meet, so a corner is sharp and lands where the two sides
   say it is, not on the pixel grid. Corners and junctions cut the edge into runs
   (`split_edges`).
3. Smoothing (`_smooth`): a light binomial filter over each run's inner points takes
   the short stair steps out of hard-edged (not anti-aliased) boundaries; the long
   stretches of hard edges (`EdgeData.stairs`) are smoothed within their pixels' half
   pixel instead (`staircase`), closed ones before their split points are chosen.
4. Curves (`fit_runs`): each run greedily covered by as few pieces as fit within the
   tolerance, each piece a straight line when one fits, else the least-squares cubic
   for fixed end points and tangents refined by Newton reparametrisation. Tangents are
   shared at the joins, so runs are smooth (G1) between corners. Long or winding runs
   are searched in pieces side by side (`_cut_runs`), joined again afterwards.

Cost: O(points) for parts 1-3 (plus a Python loop over the clusters of corner
candidates closer than the chord span, O(candidates log candidates), see `_thin_one`);
part 4 tries O(log(run length)) candidates per
piece, and every try is whole-array work over all unfinished runs at once, on at most
`FIT_POINTS` points per run; its rounds are bounded by the segments of one cut piece
(about four), not of a whole run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping

import attrs
import numpy as np
import numpy.typing as npt

from printjob_adapters.engine.staircase import smooth_stairs

try:  # NumPy's own `einsum` kernel, without its Python-level dispatch (half a
    # microsecond of a call that takes one to three; the fitting makes hundreds).
    from numpy._core.multiarray import c_einsum as _einsum
except ImportError:  # pragma: no cover - another NumPy layout
    _einsum = np.einsum

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]

#: Decimals kept in fitted coordinates (design units).
DECIMALS = 4
#: Smoothing passes over each run's data points before fitting.
SMOOTH_PASSES = 2
#: Chord length (in data points) of the turning-angle test.
CORNER_SPAN = 3
#: Turning angle (radians) from which a local maximum counts as a corner.
CORNER_ANGLE = 0.9
#: Corners this sharp may lie closer together than the chord span.
SHARP_ANGLE = 1.5
#: Points per side used to fit a corner's two lines.
CORNER_SIDE = 6
#: Closed edges this short (cracks) are traced as their crack polygon.
TINY_LOOP = 12
#: Open edges this short (cracks) take every crack turn as a corner.
TINY_OPEN = 4
#: Share of a face's area that the chords of its tiny open edges may move between it and
#: its neighbours (`_stub_chords`): a junction stub beside big faces becomes one line,
#: while a dot or a line's end split by junctions keeps its crack polygon.
CHORD_SHARE = 0.0625
#: Faces smaller than this (pixels) are below the smallest dot the engine keeps (2 x 2):
#: anti-aliasing fragments at a junction, whose tiny edges are chords whatever they move.
DOT_AREA = 4
#: Farthest (pixels) a junction moves when a fragment collapses (`_collapse_fragments`).
COLLAPSE_REACH = 1.0
#: Newton reparametrisation (each step followed by a new least-squares fit) is tried
#: while the error is within this many tolerances, for at most `NEWTON_STEPS` steps on
#: attempts spanning at least `NEWTON_LONG` points and `NEWTON_SHORT_STEPS` on shorter
#: ones: the later steps let long pieces reach further (fewer segments), while short
#: attempts, most of a photo's, gain little from them.
NEWTON_RANGE = 6.0
#: After the first step, only attempts within this many tolerances take more: on the
#: corpus none further off was brought within the tolerance by later steps.
NEWTON_LATE_RANGE = 1.5
NEWTON_STEPS = 4
NEWTON_SHORT_STEPS = 2
NEWTON_LONG = 32
#: Points either side used for the tangent where a run is split.
SPLIT_TANGENT_REACH = 3
#: Root-mean-square error allowed, as a share of the tolerance on the largest error:
#: noise may touch the tolerance, a systematic offset may not.
RMS_SHARE = 0.25
#: Most points a single fit attempt looks at.
FIT_POINTS = 24
#: Points next to a junction checked for lying behind it.
JUNCTION_LOOKAHEAD = 3
#: Points along the run giving the tangent at a junction.
END_TANGENT_REACH = 3
#: First reach (points) tried for a segment.
MIN_REACH = 8
#: Runs longer than this many points are cut into pieces fitted side by side, so that
#: the search's rounds do not grow with a run's length (`_cut_runs`).
CUT_LENGTH = 200
#: Turning (radians) one cubic segment takes on average: an eighth of a turn within
#: the tolerance of smoothed pixel edges (0.7 to 1 radian per curved segment on flat art).
SEGMENT_TURN = np.pi / 4
#: Most turning one piece of a cut run takes: four segments' worth.
CUT_TURN = 4 * SEGMENT_TURN
#: A piece's cost (`_cut_runs`) in integer units.
_COST_UNIT = 1 << 30
#: Fewest points a piece of a cut run holds.
CUT_MIN = 24
#: Points either side over which the straightness and turning of a run are measured.
CUT_SPAN = 8
#: Reaches tried per run and round of the search.
PROBES = 6
#: Reaches tried first for a later segment, as multiples of the previous segment's length
#: (finest near 1, where the answer usually is).
_AROUND = np.array([0.5, 0.7, 0.85, 1.0, 1.125, 1.25, 1.5, 2.0])
#: Fit attempts are padded to a multiple of this many points (see `_try`).
_WIDTH_STEP = 8
#: Batches of at least this many attempts are split by padded width.
_SPLIT_ROWS = 2048
#: Most reaches one run tries in one round of the search (`_AROUND` is the longest list).
_PROBE_SLOTS = 8
#: Any search step at least this long reaches every run's end; capping there keeps the
#: doubling steps within int64 without changing a single probe.
_STEP_CAP = 1 << 40
#: Multiples of the step tried by a doubling round, and the sevenths of the bracket
#: tried by a bisection round (both `PROBES` of them; the last repeats fill the slots).
_DOUBLINGS = np.array([1 << min(k, PROBES - 1) for k in range(_PROBE_SLOTS)])
_SEVENTHS = np.array([min(k, PROBES) for k in range(1, _PROBE_SLOTS + 1)])
#: Sorts after every probe: marks an unused slot.
_NO_PROBE = np.iinfo(np.int64).max
#: `_AROUND` as Python floats, for the search's per-run path (`_round_few`).
_AROUND_FLOATS = _AROUND.tolist()
#: Rounds with at most this many searching runs take the per-run path.
_FEW_RUNS = 16
#: Most fit attempts tried in one whole-array call: the search reports progress (and so
#: notices a cancel) between batches, about every 0.1 s of work however many runs there are.
ATTEMPT_BATCH = 32_768
#: Clusters of corner candidates thinned between two ticks (`_thin_corners`).
_CLUSTERS_PER_TICK = 64
#: Unit step of each crack direction code (0 = +x, 1 = +y, 2 = -x, 3 = -y).
_AXIS = np.array([(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)])


@attrs.frozen(eq=False)
class FittedEdge:
    """An edge's outline from its start point: segments (S, 3, 2) holding the two
    control points and end point of each cubic (lines repeat their end point)."""

    start: np.ndarray
    segments: np.ndarray
    is_line: np.ndarray

    @property
    def end(self) -> np.ndarray:
        point: np.ndarray = self.segments[-1, 2]
        return point

    def reversed(self) -> FittedEdge:
        """The same outline walked backwards (identical coordinates)."""
        ends = np.concatenate([self.start[None], self.segments[:-1, 2]])[::-1]
        seg = self.segments[::-1]
        out = np.stack([seg[:, 1], seg[:, 0], ends], axis=1)
        lines = self.is_line[::-1]
        out[lines, 0] = ends[lines]
        out[lines, 1] = ends[lines]
        return FittedEdge(start=self.segments[-1, 2].copy(), segments=out, is_line=lines)


class FittedEdges(Mapping[int, FittedEdge]):
    """Many fitted edges in flat arrays: edge `ids[k]` starts at `start[k]`, and its
    segments (control points and end, as in `FittedEdge`) are
    `segments[offsets[k]:offsets[k + 1]]`, with `is_line` alike. As a mapping, edge id
    to `FittedEdge`."""

    def __init__(
        self,
        ids: np.ndarray,
        start: np.ndarray,
        segments: np.ndarray,
        is_line: np.ndarray,
        offsets: np.ndarray,
    ) -> None:
        self.ids = ids
        self.start = start
        self.segments = segments
        self.is_line = is_line
        self.offsets = offsets
        self._position = {e: k for k, e in enumerate(ids.tolist())}

    def position(self, edge_ids: np.ndarray) -> np.ndarray:
        """Row in `start` (and index into `offsets`) of each of these edge ids."""
        lookup = np.full(int(self.ids.max(initial=-1)) + 1, -1, dtype=np.int64)
        lookup[self.ids] = np.arange(len(self.ids))
        rows: np.ndarray = lookup[edge_ids]
        return rows

    @functools.cached_property
    def seg_from(self) -> np.ndarray:
        """The point each segment starts from: the previous segment's end, or its
        edge's start point for the first."""
        out = np.empty((len(self.segments), 2))
        if len(out):
            out[1:] = self.segments[:-1, 2]
            owners = np.nonzero(np.diff(self.offsets) > 0)[0]
            out[self.offsets[owners]] = self.start[owners]
        return out

    def __getitem__(self, e: int) -> FittedEdge:
        k = self._position[int(e)]
        s, t = int(self.offsets[k]), int(self.offsets[k + 1])
        return FittedEdge(
            start=self.start[k], segments=self.segments[s:t], is_line=self.is_line[s:t]
        )

    def __iter__(self) -> Iterator[int]:
        return iter(self.ids.tolist())

    def __len__(self) -> int:
        return len(self.ids)


@attrs.frozen(eq=False)
class EdgeData:
    """The data points of many edges, end to end: edge k owns rows
    `offsets[k]:offsets[k + 1]` of `points` (n, 2), `dirs` (their crack directions) and
    `corners` (the crack corner before each point: the fallback corner position).
    `start` and `end` (k, 2) are the junction points of open edges (unused for closed
    ones); `slack` scales each edge's fitting tolerance; `stairs` is how far (pixels)
    each edge's points may move along their crack's normal when its staircase is
    smoothed (`staircase`: hard-edged edges only; 0, or None for all, where the points
    are placed from anti-aliasing)."""

    points: np.ndarray
    dirs: np.ndarray
    corners: np.ndarray
    offsets: np.ndarray
    closed: np.ndarray
    start: np.ndarray
    end: np.ndarray
    slack: np.ndarray
    stairs: np.ndarray | None = None

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def take(self, which: np.ndarray) -> EdgeData:
        """The edges selected by the mask or indices `which`, in order. O(their points)."""
        idx = np.nonzero(which)[0] if which.dtype == bool else which
        offsets, owner, place = groups(self.lengths[idx])
        rows = self.offsets[idx][owner] + place
        return self.with_rows(rows, offsets, idx)

    def with_rows(self, rows: np.ndarray, offsets: np.ndarray, idx: np.ndarray) -> EdgeData:
        return EdgeData(
            points=self.points.take(rows, axis=0),
            dirs=self.dirs[rows],
            corners=self.corners.take(rows, axis=0),
            offsets=offsets,
            closed=self.closed[idx],
            start=self.start.take(idx, axis=0),
            end=self.end.take(idx, axis=0),
            slack=self.slack[idx],
            stairs=None if self.stairs is None else self.stairs[idx],
        )


@attrs.frozen(eq=False)
class EdgeFaces:
    """The two faces either side of every edge of an `EdgeData` and every face's area:
    what a tiny edge's chord may cost the faces it bounds (`_stub_chords`)."""

    left: np.ndarray
    right: np.ndarray
    #: Pixels per face id; 0 (the outside ring) counts as unbounded.
    area: np.ndarray
    #: Each open edge's two junction ids (-1 for a closed edge), when fragments may
    #: collapse to a point (`_collapse_fragments`).
    j0: np.ndarray | None = None
    j1: np.ndarray | None = None


@attrs.frozen(eq=False)
class Runs:
    """Smoothed data points between fixed points, many runs end to end: run r owns rows
    `offsets[r]:offsets[r + 1]` of `data` (its first and last rows are the fixed
    points), leaves its first point along `t1[r]` and arrives at its last pointing back
    along `t2[r]`; `slack[r]` multiplies the fitting tolerance."""

    data: np.ndarray
    offsets: np.ndarray
    t1: np.ndarray
    t2: np.ndarray
    slack: np.ndarray


def _no_tick() -> None:
    return None


def groups(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For groups of these sizes laid end to end: their offsets (one more than groups),
    and every element's group and place within it. O(elements)."""
    counts = np.asarray(counts, dtype=np.int64)
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    place = np.arange(offsets[-1], dtype=np.int64) - offsets[:-1][owner]
    return offsets, owner, place


def _units(v: np.ndarray) -> np.ndarray:
    """Rows of `v` scaled to unit length ((1, 0) for a zero row)."""
    n = np.hypot(v[:, 0], v[:, 1])
    ok = n > 1e-12
    out: Floats = v / np.where(ok, n, 1.0)[:, None]
    if not ok.all():
        out[~ok] = (1.0, 0.0)
    return out


def fit_all(
    ids: np.ndarray,
    edges: EdgeData,
    tolerance: float,
    progress: Callable[[float], None] | None = None,
    faces: EdgeFaces | None = None,
) -> FittedEdges:
    """Steps 1-4 for every edge of `edges` (graph edge ids `ids`): tiny edges as their
    crack polygons (or, given the `faces` either side, junction stubs as one chord: see
    `_stub_chords`), the others split into runs and all runs fitted together.
    Coordinates are rounded once here, so every outline replaying an edge writes the
    same numbers. O(points) plus the fitting search (`fit_runs`)."""
    count = len(ids)
    start = np.zeros((count, 2))

    def tick() -> None:
        if progress is not None:
            progress(0.0)

    tiny, tiny_start, tiny_ends, tiny_off = _tiny_edges(edges, faces)
    if faces is not None:
        collapsed = _collapse_fragments(edges, faces, tiny, np.diff(tiny_off))
        if collapsed is not None:
            edges = collapsed
            tiny, tiny_start, tiny_ends, tiny_off = _tiny_edges(edges, faces)
    tick()
    big = np.nonzero(~tiny)[0]
    first, runs, run_edge = split_edges(edges.take(big), tick)
    tick()
    segs, lines, seg_off = fit_runs(runs, tolerance, progress)
    # Segments per edge: a tiny edge's lines, or its runs' pieces (runs are in edge order).
    per_edge = np.zeros(count, dtype=np.int64)
    per_edge[tiny] = np.diff(tiny_off)
    per_edge[big] = np.bincount(run_edge, weights=np.diff(seg_off), minlength=len(big)).astype(
        np.int64
    )
    offsets, owner, _ = groups(per_edge)
    segments = np.empty((int(offsets[-1]), 3, 2))
    is_line = np.empty(int(offsets[-1]), dtype=bool)
    tiny_rows = np.nonzero(tiny[owner])[0]
    segments[tiny_rows] = np.repeat(tiny_ends[:, None, :], 3, axis=1)
    is_line[tiny_rows] = True
    big_rows = np.nonzero(~tiny[owner])[0]
    segments[big_rows] = segs
    is_line[big_rows] = lines
    start[tiny] = tiny_start
    start[big] = first
    return FittedEdges(
        ids=np.asarray(ids, dtype=np.int64),
        start=np.round(start, DECIMALS) + 0.0,
        segments=np.round(segments, DECIMALS) + 0.0,
        is_line=is_line,
        offsets=offsets,
    )


def fit_edge(
    points: np.ndarray,
    dirs: np.ndarray,
    corners_xy: np.ndarray,
    closed: bool,
    start: np.ndarray | None,
    end: np.ndarray | None,
    tolerance: float,
) -> FittedEdge:
    """Fit one edge (steps 1-4): `points` (m, 2) its data points, `dirs` (m,) their crack
    directions, `corners_xy` (m, 2) the crack corner before each point; `start` and
    `end` the junction points of an open edge."""
    fitted = fit_all(
        np.array([0]), _one_edge(points, dirs, corners_xy, closed, start, end), tolerance
    )
    return fitted[0]


def tiny_edge(
    points: np.ndarray,
    dirs: np.ndarray,
    closed: bool,
    start: np.ndarray | None,
    end: np.ndarray | None,
) -> FittedEdge | None:
    """One edge's crack polygon if it is tiny (see `_tiny_edges`), else None."""
    edges = _one_edge(points, dirs, points, closed, start, end)
    tiny, first, ends, _ = _tiny_edges(edges)
    if not tiny[0]:
        return None
    return FittedEdge(
        start=np.round(first[0], DECIMALS) + 0.0,
        segments=np.round(np.repeat(ends[:, None, :], 3, axis=1), DECIMALS) + 0.0,
        is_line=np.ones(len(ends), dtype=bool),
    )


def _one_edge(
    points: np.ndarray,
    dirs: np.ndarray,
    corners_xy: np.ndarray,
    closed: bool,
    start: np.ndarray | None,
    end: np.ndarray | None,
) -> EdgeData:
    if not closed:
        assert start is not None and end is not None
    none = np.zeros(2)
    return EdgeData(
        points=np.asarray(points, dtype=np.float64).reshape(-1, 2),
        dirs=np.asarray(dirs, dtype=np.int64),
        corners=np.asarray(corners_xy, dtype=np.float64).reshape(-1, 2),
        offsets=np.array([0, len(points)], dtype=np.int64),
        closed=np.array([closed]),
        start=np.asarray(none if start is None else start, dtype=np.float64)[None],
        end=np.asarray(none if end is None else end, dtype=np.float64)[None],
        slack=np.ones(1),
    )


def _tiny_edges(
    edges: EdgeData, faces: EdgeFaces | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Steps 1-3 at once for tiny edges (`TINY_LOOP` / `TINY_OPEN` cracks or fewer): the
    crack polygon, every turn a corner where the axis-parallel lines through the two
    neighbouring data points cross. A closed polygon starts at its first corner and
    comes back to it; an open one runs from its start junction through its corners to
    its end junction, or straight from one junction to the other where `faces` is given
    and `_stub_chords` finds the chord harmless. Returns which edges are tiny (a closed
    edge with fewer than three turns is not), and per tiny edge its start point and its
    line ends (offsets per tiny edge). O(points of tiny edges); most edges of busy
    images are tiny."""
    m = edges.lengths
    tiny = m <= np.where(edges.closed, TINY_LOOP, TINY_OPEN)
    sel = np.nonzero(tiny)[0]
    _, owner, place = groups(m[sel])
    rows = edges.offsets[sel][owner] + place
    closed = edges.closed[sel]
    # The point before each one (a closed edge's last before its first).
    prev = np.where(place == 0, rows + m[sel][owner] - 1, rows - 1)
    turn = np.nonzero((closed[owner] | (place > 0)) & (edges.dirs[prev] != edges.dirs[rows]))[0]
    p, q = edges.points.take(prev[turn], axis=0), edges.points.take(rows[turn], axis=0)
    # The crack before runs along x (even code) or y (odd code).
    along_x = edges.dirs[prev[turn]] % 2 == 0
    corner = np.where(
        along_x[:, None], np.stack([q[:, 0], p[:, 1]], 1), np.stack([p[:, 0], q[:, 1]], 1)
    )
    turns = np.bincount(owner[turn], minlength=len(sel))
    keep = ~closed | (turns >= 3)
    tiny[sel[~keep]] = False
    first_corner = np.searchsorted(owner[turn], np.arange(len(sel)))
    sel, closed, turns, first_corner = sel[keep], closed[keep], turns[keep], first_corner[keep]
    if faces is not None:
        chord = _stub_chords(edges, sel, closed, turns, first_corner, corner, faces)
        turns = np.where(chord, 0, turns)
    # One table of candidate points: the corners, then each kept edge's end junction.
    table = np.concatenate([corner, edges.end.take(sel, axis=0)])
    start = np.where(
        closed[:, None],
        table.take(np.minimum(first_corner, len(table) - 1), axis=0),
        edges.start.take(sel, axis=0),
    )
    offsets, eo, ej = groups(np.where(closed, turns, turns + 1))
    loop = closed[eo]
    idx = first_corner[eo] + np.where(loop, (ej + 1) % np.maximum(turns[eo], 1), ej)
    idx = np.where(~loop & (ej == turns[eo]), len(corner) + eo, idx)
    return tiny, start, table.take(idx, axis=0), offsets


def _stub_chords(
    edges: EdgeData,
    sel: np.ndarray,
    closed: np.ndarray,
    turns: np.ndarray,
    first_corner: np.ndarray,
    corner: np.ndarray,
    faces: EdgeFaces,
) -> np.ndarray:
    """Which tiny edges `sel` (their `turns` crack corners from `first_corner` in
    `corner`) are drawn as one chord between their junctions instead of their crack
    polygon: the open ones with a turn whose chord is harmless to both faces it bounds.
    A chord moves the area between it and the polygon from one face to the other; a
    face allows it when it is smaller than a dot the engine keeps (`DOT_AREA`: an
    anti-aliased pixel or two wedged into a junction, the usual owner of such stubs) or
    when the areas all its candidate chords move add up to at most `CHORD_SHARE` of it
    (the outside ring is unbounded). So a junction stub between big faces, or around a
    stray pixel, becomes one line, while a 2 px dot, a one-pixel line's end or a serif
    split by junctions keeps its shape. O(corners of tiny edges)."""
    cand = np.nonzero(~closed & (turns > 0))[0]
    chord = np.zeros(len(sel), dtype=bool)
    if len(cand) == 0:
        return chord
    edge = sel[cand]
    # Each candidate's polygon: start junction, its corners, end junction; the shoelace
    # sum closes it with the chord back to the start.
    k = turns[cand]
    offsets, owner, place = groups(k + 2)
    at_corner = np.clip(first_corner[cand][owner] + place - 1, 0, max(len(corner) - 1, 0))
    pts = corner.take(at_corner, axis=0) if len(corner) else np.zeros((len(owner), 2))
    pts = np.where((place == 0)[:, None], edges.start.take(edge[owner], axis=0), pts)
    pts = np.where((place == k[owner] + 1)[:, None], edges.end.take(edge[owner], axis=0), pts)
    following = np.where(place == k[owner] + 1, offsets[:-1][owner], np.arange(len(owner)) + 1)
    nxt = pts.take(following, axis=0)
    cross = pts[:, 0] * nxt[:, 1] - pts[:, 1] * nxt[:, 0]
    moved = np.abs(np.add.reduceat(cross, offsets[:-1])) / 2.0
    left, right = faces.left[edge], faces.right[edge]
    count = len(faces.area)
    load = np.bincount(left, weights=moved, minlength=count)
    load += np.bincount(right, weights=moved, minlength=count)
    area = faces.area
    allows = (area == 0) | (area < DOT_AREA) | (load <= CHORD_SHARE * area)
    chord[cand] = allows[left] & allows[right]
    return chord


def _collapse_fragments(
    edges: EdgeData, faces: EdgeFaces, tiny: np.ndarray, tiny_lines: np.ndarray
) -> EdgeData | None:
    """`edges` with the junctions around every collapsed fragment moved to one point,
    or None when there is none. A face smaller than a dot the engine keeps
    (`DOT_AREA`) all of whose outline edges are tiny open edges drawn as one line each
    (chords, `_stub_chords`, or single cracks) has lost its area or nearly: it is a
    pixel of anti-aliasing wedged into a junction. Its junctions (and any joined to
    them by another such face) go to their mean, so its edges shrink to nothing and
    every edge ending there ends at that point: every layer drawing them draws the
    same geometry (no seam), with the fragment's short lines gone (`stacking` drops
    segments of no length). The points move by about a pixel at most. O(edges)."""
    if faces.j0 is None or faces.j1 is None:
        return None
    count = len(faces.area)
    lines = np.zeros(len(tiny), dtype=np.int64)
    lines[tiny] = tiny_lines
    single = tiny & ~edges.closed & (lines == 1)
    bounding = np.bincount(faces.left, minlength=count) + np.bincount(faces.right, minlength=count)
    simple = np.bincount(faces.left, weights=single, minlength=count) + np.bincount(
        faces.right, weights=single, minlength=count
    )
    small = (faces.area > 0) & (faces.area < DOT_AREA) & (bounding > 0) & (simple == bounding)
    merge = np.nonzero(single & (small[faces.left] | small[faces.right]))[0]
    if len(merge) == 0:
        return None
    a, b = faces.j0[merge], faces.j1[merge]
    # Junction groups by label propagation along the merged edges (a group spans a
    # few junctions, so a few rounds).
    junction_count = int(max(faces.j0.max(initial=-1), faces.j1.max(initial=-1))) + 1
    group = np.arange(junction_count)
    while True:
        low = np.minimum(group[a], group[b])
        if np.array_equal(group[a], low) and np.array_equal(group[b], low):
            break
        np.minimum.at(group, a, low)
        np.minimum.at(group, b, low)
        group = group[group]
    # Each junction's point, read from the edges that end there.
    point = np.zeros((junction_count, 2))
    open_ = np.nonzero(~edges.closed)[0]
    point[faces.j0[open_]] = edges.start[open_]
    point[faces.j1[open_]] = edges.end[open_]
    members = np.unique(np.concatenate([a, b]))
    sums = np.zeros((junction_count, 2))
    np.add.at(sums, group[members], point[members])
    sizes = np.bincount(group[members], minlength=junction_count)
    centre = sums[group[members]] / sizes[group[members]][:, None]
    # A group spread wider than `COLLAPSE_REACH` (a chain of stray pixels along a
    # photo's edge) stays as it is: moving its junctions that far would bend the
    # edges beside them out of shape.
    shift = np.hypot(*(centre - point[members]).T)
    spread = np.zeros(junction_count)
    np.maximum.at(spread, group[members], shift)
    near = spread[group[members]] <= COLLAPSE_REACH
    # A group with a junction on the canvas border (an end of an edge along the outside
    # ring, face 0) stays as it is: its mean lies inside the canvas, and moving a border
    # junction there would cut the canvas corner or border away from every layer.
    outer = open_[(faces.left[open_] == 0) | (faces.right[open_] == 0)]
    on_border = np.zeros(junction_count, dtype=bool)
    on_border[faces.j0[outer]] = True
    on_border[faces.j1[outer]] = True
    pinned = np.zeros(junction_count, dtype=bool)
    np.logical_or.at(pinned, group[members], on_border[members])
    near &= ~pinned[group[members]]
    if not near.any():
        return None
    moved = point.copy()
    moved[members[near]] = centre[near]
    start, end = edges.start.copy(), edges.end.copy()
    start[open_] = moved[faces.j0[open_]]
    end[open_] = moved[faces.j1[open_]]
    return attrs.evolve(edges, start=start, end=end)


def split_edges(
    edges: EdgeData, tick: Callable[[], None] | None = None
) -> tuple[np.ndarray, Runs, np.ndarray]:
    """Steps 1-3 for many edges at once: each edge's start point, all its runs between
    fixed points (smoothed, with their end tangents), and the edge of every run (runs
    in edge order, each edge's in order along it). `tick` is called between steps and
    clusters of corners (progress and cancel). O(points)."""
    tick = tick or _no_tick
    edges = _drop_behind(edges)
    m = edges.lengths
    tick()
    gap_rows = np.nonzero(_find_corners(edges, tick))[0]
    tick()
    _, edge_of, place_in = groups(m)
    edges, gap_rows = _roll_loops(edges, gap_rows, edge_of, place_in)
    corner_edge, gap = edge_of[gap_rows], place_in[gap_rows]
    count = np.bincount(corner_edge, minlength=len(m))
    edges = _smooth_loops(edges, count, edge_of)
    # Every edge's breaks, in order along it: its corners, its junctions (open edges),
    # and for a closed edge without corners two split points across from each other.
    breaks = [_corner_breaks(edges, corner_edge, gap)]
    open_ = np.nonzero(~edges.closed)[0]
    no_tangent = np.full((len(open_), 2), np.nan)
    breaks.append(
        _Breaks(
            open_, np.zeros(len(open_), dtype=np.int64), edges.start[open_], no_tangent, no_tangent
        )
    )
    breaks.append(_Breaks(open_, m[open_], edges.end[open_], no_tangent, no_tangent))
    smooth = np.nonzero(edges.closed & (count == 0))[0]
    breaks.append(_smooth_breaks(edges, smooth, np.zeros(len(smooth), dtype=np.int64)))
    breaks.append(_smooth_breaks(edges, smooth, m[smooth] // 2))
    table = _Breaks.concat(breaks)
    # A closed edge's last break is its first one again at the far end. Its first is at
    # gap 0: a corner (after `_roll_loops`) or its first smooth split point (the
    # second, at half its length, comes last in the table and is left out of the
    # search), and no other break shares an edge and gap, so one sort puts all in place.
    head = table.edge[: len(table.edge) - len(smooth)]
    wrap = table.take(np.nonzero(edges.closed[head] & (table.gap[: len(head)] == 0))[0])
    wrap = _Breaks(wrap.edge, m[wrap.edge], wrap.point, wrap.tan_in, wrap.tan_out)
    table = _Breaks.concat([table, wrap])
    table = table.take(np.lexsort((table.gap, table.edge)))
    # Two consecutive breaks of one edge, a and b, bound a run: a's point, the data
    # points from a's gap up to b's, and b's point.
    a = np.nonzero(table.edge[1:] == table.edge[:-1])[0]
    b = a + 1
    run_edge = table.edge[a]
    first = table.point.take(np.searchsorted(table.edge, np.arange(len(m))), axis=0)
    n = table.gap[b] - table.gap[a] + 2
    offsets, owner, place = groups(n)
    src = edges.offsets[run_edge][owner] + table.gap[a][owner] + place - 1
    inner = (place > 0) & (place < n[owner] - 1)
    data = np.empty((int(offsets[-1]), 2))
    if len(edges.points):
        # Every row gathered in one call (clipped: a run's two ends may point outside
        # the points, and are overwritten by its breaks next).
        edges.points.take(src, axis=0, out=data, mode="clip")
    data[offsets[:-1]] = table.point.take(a, axis=0)
    data[offsets[1:] - 1] = table.point.take(b, axis=0)
    smoothed = inner & (n[owner] >= 4)
    if edges.stairs is not None and edges.stairs.any():
        tube = edges.stairs[run_edge][owner]
        stairs = smooth_stairs(
            data,
            edges.dirs.take(src, mode="clip"),
            offsets[:-1][owner],
            offsets[1:][owner] - 1,
            smoothed & (tube > 0),
            tube,
        )
        smoothed &= ~stairs
    _smooth(data, smoothed)
    # Where a break has no tangent (a junction), the run's own chord gives it.
    reach = np.minimum(END_TANGENT_REACH, n - 1)
    head, tail = offsets[:-1], offsets[1:] - 1
    t1 = table.tan_out.take(a, axis=0)
    t2 = table.tan_in.take(b, axis=0)
    free1 = np.isnan(t1[:, 0])
    free2 = np.isnan(t2[:, 0])
    h, t = head[free1], tail[free2]
    t1[free1] = _units(data.take(h + reach[free1], axis=0) - data.take(h, axis=0))
    t2[free2] = _units(data.take(t - reach[free2], axis=0) - data.take(t, axis=0))
    runs = Runs(data=data, offsets=offsets, t1=t1, t2=t2, slack=edges.slack[run_edge])
    return first, runs, run_edge


@attrs.frozen(eq=False)
class _Breaks:
    """Fixed points between runs, one row each: the edge, the index `gap` of the first
    data point after it, the point, and the tangents arriving (pointing back) and
    leaving there (NaN where the run's own end tangent is used: at junctions)."""

    edge: np.ndarray
    gap: np.ndarray
    point: np.ndarray
    tan_in: np.ndarray
    tan_out: np.ndarray

    def take(self, idx: np.ndarray) -> _Breaks:
        return _Breaks(
            self.edge[idx],
            self.gap[idx],
            self.point.take(idx, axis=0),
            self.tan_in.take(idx, axis=0),
            self.tan_out.take(idx, axis=0),
        )

    @staticmethod
    def concat(parts: list[_Breaks]) -> _Breaks:
        return _Breaks(
            np.concatenate([p.edge for p in parts]).astype(np.int64),
            np.concatenate([p.gap for p in parts]).astype(np.int64),
            np.concatenate([p.point for p in parts]).reshape(-1, 2),
            np.concatenate([p.tan_in for p in parts]).reshape(-1, 2),
            np.concatenate([p.tan_out for p in parts]).reshape(-1, 2),
        )


def _smooth_loops(edges: EdgeData, corners: np.ndarray, owner: np.ndarray) -> EdgeData:
    """Hard-edged closed edges without corners (a circle's, a ring's) with their
    staircases smoothed all the way round (`staircase.smooth_stairs`), before their
    split points are chosen: a split point is fixed, and one left on the stairs would
    stay a notch in the smoothed outline. Their `stairs` become 0, so their runs are
    not smoothed again. O(their points)."""
    if edges.stairs is None:
        return edges
    loops = edges.closed & (corners == 0) & (edges.stairs > 0)
    if not loops.any():
        return edges
    points = edges.points.copy()
    lo = edges.offsets[:-1][owner]
    smooth_stairs(
        points,
        edges.dirs,
        lo,
        edges.offsets[1:][owner] - 1,
        loops[owner],
        edges.stairs[owner],
        cyclic=np.ones(len(points), dtype=bool),
    )
    return attrs.evolve(edges, points=points, stairs=np.where(loops, 0.0, edges.stairs))


def _drop_behind(edges: EdgeData) -> EdgeData:
    """Open edges without their first (last) few points where these lie behind the
    start (end) junction (it moved along the edge past them), which would make the
    outline double back there; an edge keeps all its points if none would be left.
    O(edges)."""
    m = edges.lengths
    keep = np.ones(len(edges.points), dtype=bool)
    sel = np.nonzero(~edges.closed & (m >= 2))[0]
    if len(sel) == 0:
        return edges
    first, mm = edges.offsets[sel], m[sel]
    # Both ends of every edge at once (starts, then ends): the row of the end point,
    # the way (+1 or -1) inwards, its junction, and the edge's points.
    end_row = np.concatenate([first, first + mm - 1])
    inwards = np.repeat(np.array([1, -1]), len(sel))
    junction = np.concatenate([edges.start.take(sel, axis=0), edges.end.take(sel, axis=0)])
    count = np.concatenate([mm, mm])
    reach = np.minimum(JUNCTION_LOOKAHEAD, count - 1)
    way = edges.points.take(end_row + inwards * reach, axis=0) - junction
    # The first `JUNCTION_LOOKAHEAD` points from each end (as far as the edge has them).
    end, k = np.nonzero(np.arange(JUNCTION_LOOKAHEAD) < count[:, None])
    rows = end_row[end] + inwards[end] * k
    head = edges.points.take(rows, axis=0) - junction.take(end, axis=0)
    w = way.take(end, axis=0)
    # A point may be looked at from both ends of a short edge: dropping is idempotent.
    keep[rows[~(head[:, 0] * w[:, 0] + head[:, 1] * w[:, 1] > 0)]] = False
    _, owner, _ = groups(m)
    kept = np.bincount(owner, weights=keep, minlength=len(m)).astype(np.int64)
    cut = (kept > 0) & (kept < m)
    if not cut.any():
        return edges
    rows = np.nonzero(keep | ~cut[owner])[0]
    new_offsets, _, _ = groups(np.where(cut, kept, m))
    return edges.with_rows(rows, new_offsets, np.arange(len(m)))


def _find_corners(edges: EdgeData, tick: Callable[[], None] | None = None) -> np.ndarray:
    """Step 1: whether the gap before each data point is a corner.

    Tiny edges (at most `TINY_LOOP` / `TINY_OPEN` points) take every crack turn.
    Otherwise gap i lies between points i-1 and i (a closed edge's gap 0 between its
    last and first points; an open edge's gaps run 1..m-1, its junctions standing
    before and after its points); its angle is between the chords p[i-1] - p[i-1-k] and
    p[i+k] - p[i], and a corner is a local maximum of at least `CORNER_ANGLE`,
    thinned by `_thin_corners`. O(points)."""
    m = edges.lengths
    total = len(edges.points)
    _, owner, place = groups(m)
    closed = edges.closed
    tiny = m <= np.where(closed, TINY_LOOP, TINY_OPEN)
    rows = np.arange(total)
    prev = np.where(place == 0, rows + m[owner] - 1, rows - 1)
    corner: np.ndarray = (
        tiny[owner] & (closed[owner] | (place > 0)) & (edges.dirs[prev] != edges.dirs)
    )
    gaps = np.nonzero(~tiny[owner] & (closed[owner] | (place > 0)))[0]
    if len(gaps) == 0:
        return corner
    e, i = owner[gaps], place[gaps]
    mm, loop = m[e], closed[e]
    # Closed edges too short for the chord span take a shorter one (none are, while a
    # closed edge that short is tiny: then the span is one number for every gap).
    short = loop & (mm < 4 * CORNER_SPAN)
    k = np.where(short, np.maximum(1, mm // 4), CORNER_SPAN) if short.any() else CORNER_SPAN
    # Open edges index an extended sequence: start junction, the points, end junction.
    table = np.concatenate([edges.points, edges.start, edges.end])
    # Inside an edge the chords' far ends are plain offsets from the gap's own row; only
    # the gaps within the span of an edge's ends wrap around (closed edges) or stop at
    # a junction (open ones): O(edges × span) of them, looked up on their own.
    back = gaps - 1 - k
    fwd = gaps + k
    near = np.nonzero((i <= k) | (i + k >= mm))[0]
    if len(near):
        ne, ni, nm, nl = e[near], i[near], mm[near], loop[near]
        nk = k[near] if isinstance(k, np.ndarray) else k
        nf = edges.offsets[ne]

        def at(x: np.ndarray, cyclic: np.ndarray) -> np.ndarray:
            extended = np.where(
                x == 0, total + ne, np.where(x == nm + 1, total + len(m) + ne, nf + x - 1)
            )
            return np.where(nl, nf + cyclic % nm, extended)

        back[near] = at(np.maximum(ni - nk, 0), ni - 1 - nk)
        fwd[near] = at(np.minimum(ni + 1 + nk, nm + 1), ni + nk)
    # The points either side of a gap are never junctions: the point before it (the
    # edge's last for a closed edge's gap 0) and the point after it, the gap's own row.
    d1 = table.take(prev[gaps], axis=0) - table.take(back, axis=0)
    d2 = table.take(fwd, axis=0) - table.take(gaps, axis=0)
    cross = d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]
    dot = d1[:, 0] * d2[:, 0] + d1[:, 1] * d2[:, 1]
    angle = np.arctan2(np.abs(cross), dot)
    # Neighbouring gaps of the same edge (cyclic on a closed edge, none past an open
    # edge's ends).
    # The angles shifted by one, then fixed at every edge's first and last gap (O(edges)).
    heads = np.nonzero(np.concatenate([[True], e[1:] != e[:-1]]))[0]
    tails = np.concatenate([heads[1:], [len(gaps)]]) - 1
    looped = loop[heads]
    before = np.empty_like(angle)
    before[1:] = angle[:-1]
    before[heads] = np.where(looped, angle[tails], -1.0)
    after = np.empty_like(angle)
    after[:-1] = angle[1:]
    after[tails] = np.where(looped, angle[heads], -1.0)
    cand = np.nonzero((angle >= CORNER_ANGLE) & (angle >= before) & (angle >= after))[0]
    (tick or _no_tick)()
    span = k[cand] if isinstance(k, np.ndarray) else np.full(len(cand), k)
    kept = _thin_corners(e[cand], i[cand], angle[cand], span, mm[cand], loop[cand], tick)
    corner[gaps[cand[kept]]] = True
    return corner


def _thin_corners(
    edge: np.ndarray,
    gap: np.ndarray,
    angle: np.ndarray,
    span: np.ndarray,
    m: np.ndarray,
    closed: np.ndarray,
    tick: Callable[[], None] | None = None,
) -> np.ndarray:
    """Which corner candidates (sorted by edge and gap) stay: strongest first, a weaker
    one within the chord span of a kept one is the same corner seen twice, unless both
    are sharp (the two corners of a thin line's end).

    Only candidates within the span of each other interact, so candidates fall into
    independent clusters (chains of neighbours closer than the span; on a closed edge
    also across its start). A lone candidate stays; of a pair the stronger stays, and
    the weaker too if both are sharp; larger clusters (rare in photos and art, but a
    1-px square wave's border is one cluster as long as the image is wide) are decided
    one candidate at a time (`_thin_one`). O(candidates log candidates)."""
    count = len(gap)
    keep = np.ones(count, dtype=bool)
    if count < 2:
        return keep
    linked = np.zeros(count, dtype=bool)  # linked[k]: candidate k is near candidate k - 1
    linked[1:] = (edge[1:] == edge[:-1]) & (gap[1:] - gap[:-1] <= span[1:])
    cluster = np.cumsum(~linked) - 1
    # A closed edge's last and first candidates are neighbours across its start: the
    # last cluster joins the first.
    first = np.nonzero(np.concatenate([[True], edge[1:] != edge[:-1]]))[0]
    last = np.concatenate([first[1:], [count]]) - 1
    wrap = (
        closed[first]
        & (cluster[last] != cluster[first])
        & (gap[first] + m[first] - gap[last] <= span[first])
    )
    if wrap.any():
        joined = np.arange(int(cluster[-1]) + 1)
        joined[cluster[last[wrap]]] = cluster[first[wrap]]
        cluster = joined[cluster]
    size = np.bincount(cluster)
    # Members of each cluster side by side (a wrapped cluster's are far apart).
    order = np.argsort(cluster, kind="stable")
    offsets = np.concatenate([[0], np.cumsum(size)])
    pairs = offsets[:-1][size == 2]
    a, b = order[pairs], order[pairs + 1]
    a_first = (angle[a] > angle[b]) | ((angle[a] == angle[b]) & (gap[a] < gap[b]))
    strong = np.where(a_first, a, b)
    weak = np.where(a_first, b, a)
    keep[weak] = (angle[weak] >= SHARP_ANGLE) & (angle[strong] >= SHARP_ANGLE)
    for done, c in enumerate(np.nonzero(size > 2)[0].tolist()):
        if tick is not None and done % _CLUSTERS_PER_TICK == 0:
            tick()
        members = order[offsets[c] : offsets[c + 1]]
        k = members[0]
        keep[members] = _thin_one(
            gap[members], angle[members], int(span[k]), int(m[k]), bool(closed[k])
        )
    return keep


def _thin_one(gap: np.ndarray, angle: np.ndarray, span: int, m: int, closed: bool) -> np.ndarray:
    """`_thin_corners` for one edge's candidates, one at a time (strongest first).

    Gaps are distinct, so at most 2 `span` + 1 kept candidates lie within the span of
    any one: each candidate looks up only those gaps (cyclic on a closed edge) among the
    kept ones instead of scanning them all. O(candidates × (log candidates + span))."""
    g, a = gap.tolist(), angle.tolist()
    kept_angle: dict[int, float] = {}  # gap -> angle of the kept candidate there
    keep = np.zeros(len(g), dtype=bool)
    for c in sorted(range(len(g)), key=lambda c: (-a[c], g[c])):
        near = {(g[c] + d) % m if closed else g[c] + d for d in range(-span, span + 1)}
        clash = [kept_angle[q] for q in near if q in kept_angle]
        if not clash or (a[c] >= SHARP_ANGLE and all(x >= SHARP_ANGLE for x in clash)):
            kept_angle[g[c]] = a[c]
            keep[c] = True
    return keep


def _roll_loops(
    edges: EdgeData, gap_rows: np.ndarray, owner: np.ndarray, place: np.ndarray
) -> tuple[EdgeData, np.ndarray]:
    """Closed edges with corners rotated to start at their first corner, so that their
    runs never wrap around. Returns the edges and the corner rows moved along. O(points)."""
    m = edges.lengths
    shift = np.zeros(len(m), dtype=np.int64)
    has = np.zeros(len(m), dtype=bool)
    firsts = (
        gap_rows[np.concatenate([[True], owner[gap_rows][1:] != owner[gap_rows][:-1]])]
        if len(gap_rows)
        else gap_rows
    )
    shift[owner[firsts]] = place[firsts]
    has[owner[firsts]] = True
    roll = has & edges.closed & (shift > 0)
    if not roll.any():
        return edges, gap_rows
    moved = roll[owner]
    first = edges.offsets[:-1][owner]
    src = np.where(moved, first + (place + shift[owner]) % m[owner], np.arange(len(owner)))
    rolled = edges.with_rows(src, edges.offsets, np.arange(len(m)))
    return rolled, np.where(roll[owner[gap_rows]], gap_rows - shift[owner[gap_rows]], gap_rows)


def _corner_breaks(edges: EdgeData, edge: np.ndarray, gap: np.ndarray) -> _Breaks:
    """Step 2: each corner's point, where the lines through its two sides meet.

    A side is the points up to halfway to the neighbouring corner (at most
    `CORNER_SIDE`); the point right at the corner is left out when there are enough,
    since its pixel mixes both sides. A side of one point is the line through it along
    its crack. The crack corner stands in when the lines are near parallel or meet far
    from it. Corners are sorted by edge and gap. O(corners × CORNER_SIDE)."""
    count = len(gap)
    m, first, closed = edges.lengths[edge], edges.offsets[:-1][edge], edges.closed[edge]
    offsets, _, _ = groups(np.bincount(edge, minlength=len(edges.closed)))
    lo, hi = offsets[:-1][edge], offsets[1:][edge] - 1
    idx = np.arange(count)
    has_prev = idx > lo
    has_next = idx < hi
    prev_gap = np.where(has_prev, gap[np.maximum(idx - 1, 0)], np.where(closed, gap[hi] - m, 0))
    next_gap = np.where(
        has_next, gap[np.minimum(idx + 1, count - 1)], np.where(closed, gap[lo] + m, m)
    )
    wa = np.maximum(
        1, np.minimum(CORNER_SIDE, np.where(has_prev | closed, (gap - prev_gap) // 2, gap))
    )
    wb = np.maximum(
        1, np.minimum(CORNER_SIDE, np.where(has_next | closed, (next_gap - gap) // 2, m - gap))
    )
    ca, ua = _side_lines(edges, first, m, gap - wa, wa - (wa >= 3))
    cb, ub = _side_lines(edges, first, m, gap + (wb >= 3), wb - (wb >= 3))
    cross = ua[:, 0] * ub[:, 1] - ua[:, 1] * ub[:, 0]
    meets = np.abs(cross) >= 0.25
    diff = cb - ca
    t = (diff[:, 0] * ub[:, 1] - diff[:, 1] * ub[:, 0]) / np.where(meets, cross, 1.0)
    point = ca + t[:, None] * ua
    fallback = edges.corners.take(first + gap % m, axis=0)
    far = np.hypot(point[:, 0] - fallback[:, 0], point[:, 1] - fallback[:, 1]) > 1.5
    point = np.where((~meets | far)[:, None], fallback, point)
    return _Breaks(edge, gap, point, _toward(ua, ca - point), _toward(ub, cb - point))


def _side_lines(
    edges: EdgeData, first: np.ndarray, m: np.ndarray, start: np.ndarray, count: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Centroid and direction of the least-squares line through `count` consecutive
    points from place `start` (cyclic) of each edge: the principal axis of the 2x2
    scatter matrix in closed form. Sums run point by point in order over at most
    `CORNER_SIDE` columns. O(rows × CORNER_SIDE)."""
    t = np.arange(CORNER_SIDE)
    use = t < count[:, None]
    rows = np.where(use, first[:, None] + (start[:, None] + t) % m[:, None], first[:, None])
    x = np.where(use, edges.points[:, 0].take(rows), 0.0)
    y = np.where(use, edges.points[:, 1].take(rows), 0.0)
    mx = _column_sum(x) / count
    my = _column_sum(y) / count
    dx = np.where(use, x - mx[:, None], 0.0)
    dy = np.where(use, y - my[:, None], 0.0)
    sxx = _column_sum(dx * dx)
    syy = _column_sum(dy * dy)
    sxy = _column_sum(dx * dy)
    theta = 0.5 * np.arctan2(2 * sxy, sxx - syy)
    u = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    single = count < 2
    u[single] = _AXIS[edges.dirs[rows[single, 0]]]
    return np.stack([mx, my], axis=1), u


def _column_sum(a: np.ndarray) -> np.ndarray:
    """Row sums of a few columns, added left to right (padding columns hold zeros)."""
    out = a[:, 0] + 0.0
    for col in range(1, a.shape[1]):
        out += a[:, col]
    return out


def _toward(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rows of `u`, flipped where they point away from `v`."""
    return np.where((u[:, 0] * v[:, 0] + u[:, 1] * v[:, 1] >= 0)[:, None], u, -u)


def _smooth_breaks(edges: EdgeData, edge: np.ndarray, gap: np.ndarray) -> _Breaks:
    """Split points on smooth closed edges: between points gap-1 and gap, with the
    tangent of the chord across it. O(rows)."""
    m, first = edges.lengths[edge], edges.offsets[:-1][edge]

    def p(k: np.ndarray) -> np.ndarray:
        point: np.ndarray = edges.points.take(first + k % m, axis=0)
        return point

    point = 0.5 * (p(gap - 1) + p(gap))
    t = _units(p(gap + 1) - p(gap - 2))
    return _Breaks(edge, gap, point.reshape(-1, 2), -t, t)


def _smooth(data: np.ndarray, inner: np.ndarray) -> None:
    """Step 3, in place: binomial smoothing of the runs' inner points (mask `inner`:
    rows of runs of four points or more, not their ends, which stay fixed). Removes
    the stair steps of hard-edged (not anti-aliased) boundaries; on well-placed points
    it moves a curve of radius r by about SMOOTH_PASSES / (4 r) pixels. Computed for
    every row from its two neighbours (contiguous slices) and kept where `inner`.
    O(points)."""
    if len(data) < 3:
        return
    inner = inner[1:-1, None]
    for _ in range(SMOOTH_PASSES):
        smoothed = 0.25 * (data[:-2] + data[2:]) + 0.5 * data[1:-1]
        np.copyto(data[1:-1], smoothed, where=inner)


def fit_runs(
    runs: Runs, tol: float, progress: Callable[[float], None] | None = None
) -> tuple[Floats, Bools, Ints]:
    """Step 4 for many runs at once: each run to as few segments as fit within `tol`.
    Returns the segments (S, 3, 2: control points and end; a line repeats its end),
    whether each is a line, and the offsets of each run's segments.

    Long or winding runs are first cut into pieces of a few segments' turning at their
    straightest points (`_cut_runs`), and all pieces are searched side by side, so the
    rounds do not grow with a run's length; afterwards the two segments either side of
    each cut are tried as one (`_join_cuts`).

    Greedy from each piece's start: a segment reaches as far as one line or cubic still
    fits, and the next one leaves with the data's own tangent there. Greedy reach is
    optimal for covering a run with fewest pieces, given that a shorter piece fits
    whenever a longer one does (near enough for fitting). The reach is searched in
    rounds (`_probes`): first the whole piece (or, for a winding one, reaches around the
    length its turning predicts), later segments reaches around the previous segment's
    length, then doubling reaches while all fit, then `PROBES` evenly spaced reaches
    between the last success and the first failure, until that bracket is within an
    eighth of the reach. Every round tries all probes of all unfinished pieces together
    (`_try`) and updates every piece's search state with whole-array work, so the
    Python overhead is per round, not per run or attempt. O(segments per piece ×
    log(piece length) / log(PROBES)) rounds plus the joining rounds (one, more only
    where a run was cut several times in a row of joins), each attempt on at most
    `FIT_POINTS` points; O(points) for the cutting."""
    count = len(runs.offsets) - 1
    if count == 0:
        return np.zeros((0, 3, 2)), np.zeros(0, dtype=bool), np.zeros(1, dtype=np.int64)
    pieces = _cut_runs(runs)
    segments, lines, piece_offsets, ends = _fit_pieces(runs, pieces, tol, progress)
    if len(pieces.run) == count:
        return segments, lines, piece_offsets
    return _join_cuts(runs, tol, pieces.run, pieces.start, segments, lines, piece_offsets, ends)


@attrs.frozen(eq=False)
class _Pieces:
    """Stretches of runs searched as runs of their own (`_cut_runs`): piece p is points
    `start[p]..end[p]` of run `run[p]`, leaves its first point along `t1[p]`, arrives
    at its last pointing back along `t2[p]`, and its search starts with the step
    `first_step[p]` (see `_Bracket`)."""

    run: Ints
    start: Ints
    end: Ints
    t1: Floats
    t2: Floats
    first_step: Ints


def _join_cuts(
    runs: Runs,
    tol: float,
    piece_run: Ints,
    piece_start: Ints,
    segments: Floats,
    lines: Bools,
    piece_offsets: Ints,
    ends: Ints,
) -> tuple[Floats, Bools, Ints]:
    """The segments of cut runs put back together: at every cut the segment before it
    and the one after are tried as one (a straight line cut in two nearly always is
    one), and where it fits it replaces both. Where two neighbouring cuts would both
    take the same segment, the first does and the second is tried again against the
    joined segment in the next round (a straight run cut in many). One `_try` per
    round for all cuts; the first also tries every two neighbouring cuts that share a
    segment as one attempt, which is what that second round tries, so it usually
    finds its results already made. O(segments) per round."""
    seg_piece = np.repeat(np.arange(len(piece_run)), np.diff(piece_offsets))
    seg_run = piece_run[seg_piece]
    end_at = ends + piece_start[seg_piece]
    begin_at = np.empty_like(end_at)
    begin_at[1:] = end_at[:-1]
    has = np.diff(piece_offsets) > 0
    begin_at[piece_offsets[:-1][has]] = piece_start[has]
    cut = np.nonzero(piece_run[:-1] == piece_run[1:])[0]  # piece cut from the next
    before = piece_offsets[cut + 1] - 1  # the segment ending at each cut
    segments, lines = segments.copy(), lines.copy()
    keep = np.ones(len(segments), dtype=bool)
    nxt = np.arange(1, len(segments) + 1)  # the kept segment after each kept one
    # Attempts already made, by (run, start, end): a row's result depends only on
    # these (see `_try`), so a later round looks them up instead of trying again.
    known: dict[tuple[int, int, int], int] = {}
    known_ok, known_seg, known_line = (
        np.zeros(0, dtype=bool),
        np.zeros((0, 3, 2)),
        np.zeros(0, dtype=bool),
    )
    first_round = True
    while len(before):
        after = nxt[before]
        run = seg_run[before]
        start, end = begin_at[before], end_at[after]
        # The first round also tries, for every two neighbouring cuts that share a
        # segment, the three segments as one: what the second round tries where both
        # fit (the later cut waits for the earlier one's join), so that round is
        # usually a lookup instead of a `_try` of its own.
        chained = np.nonzero(before[1:] == after[:-1])[0] if first_round else np.zeros(0, np.int64)
        first_round = False
        keys = list(zip(run.tolist(), start.tolist(), end.tolist(), strict=True))
        new_rows = [k for k, key in enumerate(keys) if key not in known]
        t_run = np.concatenate([run[new_rows], run[chained + 1]])
        t_start = np.concatenate([start[new_rows], start[chained]])
        t_end = np.concatenate([end[new_rows], end[chained + 1]])
        if len(t_run):
            ok_t, seg_t, line_t = _try_from(runs, tol, t_run, t_start, t_end)
            base = len(known_ok)
            for k, key in enumerate(
                zip(t_run.tolist(), t_start.tolist(), t_end.tolist(), strict=True)
            ):
                known.setdefault(key, base + k)
            known_ok = np.concatenate([known_ok, ok_t])
            known_seg = np.concatenate([known_seg, seg_t])
            known_line = np.concatenate([known_line, line_t])
        found = np.array([known[key] for key in keys], dtype=np.int64)
        ok, joined, joined_line = known_ok[found], known_seg.take(found, axis=0), known_line[found]
        # A cut whose segment before is the one after the previous cut waits a round
        # if that cut joins.
        waits = np.zeros(len(before), dtype=bool)
        waits[1:] = (before[1:] == after[:-1]) & ok[:-1]
        waits &= ok
        for k in np.nonzero(waits)[0].tolist():
            if not ok[k - 1] or waits[k - 1]:
                waits[k] = False
        join = ok & ~waits
        b, a = before[join], after[join]
        segments[b], lines[b] = joined[join], joined_line[join]
        end_at[b] = end_at[a]
        nxt[b] = nxt[a]
        keep[a] = False
        # A waiting cut's segment before is now the one its neighbour joined into.
        before = np.roll(before, 1)[waits]
    per_run = np.bincount(seg_run[keep], minlength=len(runs.offsets) - 1)
    offsets = np.zeros(len(per_run) + 1, dtype=np.int64)
    np.cumsum(per_run, out=offsets[1:])
    kept = keep.nonzero()[0]
    return segments.take(kept, axis=0), lines[kept], offsets


def _try_from(
    runs: Runs, tol: float, run: Ints, start: Ints, end: Ints
) -> tuple[Bools, Floats, Bools]:
    """`_try` for the points `start..end` of runs `run`, each leaving its start along
    the run's own tangent there."""
    off, last = runs.offsets[:-1][run], np.diff(runs.offsets)[run] - 1
    t_end = runs.t2.take(run, axis=0)
    t_in = np.where(
        (start == 0)[:, None],
        runs.t1.take(run, axis=0),
        -_tangent_back(runs.data, off, last, start, t_end),
    )
    return _try(runs.data, off, last, start, end, t_in, t_end, tol * runs.slack[run])


def _fit_pieces(
    runs: Runs, pieces: _Pieces, tol: float, progress: Callable[[float], None] | None
) -> tuple[Floats, Bools, Ints, Ints]:
    """`fit_runs`' search over the pieces of the runs (`_cut_runs`). Returns the
    segments, whether each is a line, the offsets of each piece's segments and the
    point (within its piece) where each segment ends."""
    count = len(pieces.run)
    search = _Search.start(
        runs.data,
        runs.offsets[:-1][pieces.run] + pieces.start,
        pieces.end - pieces.start,
        pieces.t1,
        pieces.t2,
        tol * runs.slack[pieces.run],
    )
    search.bracket.step[:] = pieces.first_step
    if progress is not None:
        search.tick = lambda: progress(search.done / count)
    active = np.arange(count)
    while len(active):
        step = _round_few if len(active) <= _FEW_RUNS else _round
        active = step(search, active)
        search.tick()
    runs_of = np.concatenate(search.found_run)
    order = np.argsort(runs_of, kind="stable")
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(runs_of, minlength=count), out=offsets[1:])
    segments = np.concatenate(search.found_seg).reshape(-1, 3, 2)
    ends = np.concatenate(search.found_end)
    segments = segments.take(order, axis=0)
    return segments, np.concatenate(search.found_line)[order], offsets, ends[order]


def _cut_runs(runs: Runs) -> _Pieces:
    """Long or winding runs cut into pieces fitted side by side: a piece holds at most
    about `CUT_LENGTH` points or `CUT_TURN` radians of turning (the turning measured
    between the chords `CUT_SPAN` points back and ahead of every point), whichever
    comes first, so that it takes a few segments and the search's rounds do not grow
    with a run's length. Each cut lies at the straightest point of the middle half of
    its stretch: there the tangent is well defined and a segment ends at no cost to the
    curve's shape. A cut point ends one piece and starts the next, and both take the
    run's own tangent there (`_tangent_back`), as a segment's end does, so the run stays
    smooth across it. Runs shorter than `4 * CUT_MIN` points are left whole and
    unmeasured.

    Every run is one piece or more, in run order; a piece's first segment starts its
    search with the reach its turning predicts (`_first_reach`).
    O(points of the runs of at least `4 * CUT_MIN` points)."""
    lengths = np.diff(runs.offsets)
    count = len(lengths)
    measured = np.nonzero(lengths >= 4 * CUT_MIN)[0]
    if len(measured) == 0:
        zeros = np.zeros(count, dtype=np.int64)
        return _Pieces(np.arange(count), zeros, lengths - 1, runs.t1, runs.t2, zeros)
    pts = runs.data
    size = lengths[measured]
    sub_off, owner, place = groups(size)
    rows = runs.offsets[:-1][measured][owner] + place
    first = rows - place
    last = first + size[owner] - 1
    span = np.maximum(1, np.minimum(CUT_SPAN, np.minimum(place, last - rows)))
    here = pts.take(rows, axis=0)
    back = _units(here - pts.take(np.maximum(rows - span, first), axis=0))
    ahead = _units(pts.take(np.minimum(rows + span, last), axis=0) - here)
    straight = _einsum("ij,ij->i", back, ahead)
    inner = (place > 0) & (rows < last)
    turning = np.where(inner, np.arccos(np.clip(straight, -1.0, 1.0)) / span, 0.0)
    # Turning and cost are summed as integers (`_COST_UNIT` to a piece), so that a
    # run's sums and so its cuts do not depend on the runs before it in the batch.
    turn_units = np.rint(turning * (_COST_UNIT / CUT_TURN)).astype(np.int64)
    turned = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(turn_units + _COST_UNIT // CUT_LENGTH, out=turned[1:])
    cost = turned[1:]
    base = turned[sub_off[:-1]]
    total = cost[sub_off[1:] - 1] - base
    most = (size - 1) // (2 * CUT_MIN) - 1
    cuts = np.minimum(np.maximum(0, -(-total // _COST_UNIT) - 1), most)
    # Pieces of every run, in run order (a run left whole is one piece from 0).
    all_cuts = np.zeros(count, dtype=np.int64)
    all_cuts[measured] = cuts
    piece_off, piece_run, piece_k = groups(all_cuts + 1)
    starts = np.zeros(len(piece_run), dtype=np.int64)
    ends = lengths[piece_run] - 1
    inner_piece = piece_k > 0
    closing = np.zeros(len(piece_run), dtype=bool)
    closing[piece_off[1:] - 1] = True
    if len(piece_run) > count:
        _, cut_of, cut_k = groups(cuts)  # cut_of: index into `measured`
        n, start = size[cut_of], sub_off[:-1][cut_of]
        share = cuts[cut_of] + 1
        aim = base[cut_of] + ((cut_k + 1) * total[cut_of]) // share
        centre = np.searchsorted(cost, aim) - start
        # Centres at least `2 * CUT_MIN` points from each other and the run's ends (a
        # sharp turn can put several aims on one point), so that with each cut within
        # a quarter of the way to its neighbours every piece holds `CUT_MIN` points: a
        # running maximum per run (the runs kept apart by an offset larger than any
        # run), then a running minimum from the end.
        gap = 2 * CUT_MIN
        apart = cut_of * (2 * int(lengths.max()) + 2 * gap)
        later = share - 2 - cut_k  # cuts after this one in its run
        centre = np.maximum(centre, (cut_k + 1) * gap)
        centre = np.maximum.accumulate(centre - cut_k * gap + apart) - apart + cut_k * gap
        centre = np.minimum(centre, n - 1 - (later + 1) * gap)
        high = np.minimum.accumulate((centre + later * gap + apart)[::-1])[::-1]
        centre = high - apart - later * gap
        before = np.where(cut_k > 0, np.roll(centre, 1), 0)
        after = np.where(cut_k < share - 2, np.roll(centre, -1), n - 1)
        half = np.maximum(1, np.minimum(centre - before, after - centre) // 4)
        # Each cut looks at `2 * reach + 1` points around its centre, all cuts at once.
        reach = int(half.max())
        offsets = np.arange(-reach, reach + 1)
        at = np.clip(centre[:, None] + offsets, 1, (n - 2)[:, None])
        inside = np.abs(offsets)[None, :] <= half[:, None]
        flat = np.where(inside, straight[start[:, None] + at], -np.inf)
        cut_at = at[np.arange(len(at)), flat.argmax(axis=1)]
        starts[inner_piece] = cut_at
        ends[~closing] = cut_at
        run_first = runs.offsets[:-1][measured[cut_of]]
        cut_tangent = _tangent_back(pts, run_first, n - 1, cut_at, np.zeros((len(cut_at), 2)))
    # Every measured run's pieces: their turning gives their first reach.
    in_measured = np.zeros(count, dtype=bool)
    in_measured[measured] = True
    where = np.full(count, -1, dtype=np.int64)
    where[measured] = sub_off[:-1]
    piece_m = np.nonzero(in_measured[piece_run])[0]
    at_run = where[piece_run[piece_m]]
    spent = turned[at_run + ends[piece_m]] - turned[at_run + starts[piece_m]]
    length_part = (ends[piece_m] - starts[piece_m]) * (_COST_UNIT // CUT_LENGTH)
    piece_turn = (spent - length_part) * (CUT_TURN / _COST_UNIT)
    first_step = np.zeros(len(piece_run), dtype=np.int64)
    first_step[piece_m] = _first_reach(ends[piece_m] - starts[piece_m] + 1, piece_turn)
    t1 = runs.t1.take(piece_run, axis=0)
    t2 = runs.t2.take(piece_run, axis=0)
    if len(piece_run) > count:
        t1[inner_piece] = -cut_tangent
        t2[~closing] = cut_tangent
    return _Pieces(piece_run, starts, ends, t1, t2, first_step)


def _first_reach(lengths: Ints, turn: Floats) -> Ints:
    """The reach the search tries first for a run's (or piece's) first segment, as the
    search step (see `_Bracket`): the whole run (0) where it turns by at most about two
    segments' worth, else reaches around the length one segment's turning takes
    (-length)."""
    segments = turn / SEGMENT_TURN
    guess = np.maximum(MIN_REACH, np.rint((lengths - 1) / np.maximum(segments, 1.0)))
    return np.where(segments <= 1.0, 0, -guess.astype(np.int64))


@attrs.define(eq=False)
class _Bracket:
    """The reach search of some runs, one entry per run in each named array:

    - `start`: the point the current segment starts from (an index within the run);
    - `lo`..`hi`: the reaches (end points) not yet settled;
    - `best`: the longest reach that fitted so far, -1 for none yet;
    - `step`: what the next doubling round tries: 0 the whole run (a run's first
      segment), -n reaches around n (the previous segment's length), +n multiples of n;
    - `doubling`: 1 while the search still doubles, 0 once it bisects;
    - `last`, `off`: the run's last point and the row of its first point in the point
      array (fixed for the run).

    All are rows of one int64 table (fields x runs), so that gathering or scattering a
    group of runs is one indexing call whatever the number of fields."""

    table: Ints
    start: Ints
    lo: Ints
    hi: Ints
    best: Ints
    step: Ints
    doubling: Ints
    last: Ints
    off: Ints

    @staticmethod
    def of(table: Ints) -> _Bracket:
        """The bracket whose fields are the rows of `table` (views, not copies)."""
        return _Bracket(table, *table)

    def take(self, idx: Ints) -> _Bracket:
        """A copy of the entries `idx`."""
        return _Bracket.of(self.table.take(idx, axis=1))

    def put(self, idx: Ints, part: _Bracket) -> None:
        """Store `part` as the entries `idx`."""
        self.table[:, idx] = part.table


@attrs.define(eq=False)
class _Search:
    """The fitting search of every run: the runs' points, the reach search (`bracket`),
    each run's tolerance, the tangent arriving at its end (`t_end`) and the one leaving
    its current segment's start (`t_in`), the best segment found so far for the current
    segment, and the segments found, in the order they were settled."""

    pts: Floats
    bracket: _Bracket
    tols: Floats
    t_end: Floats
    t_in: Floats
    best_seg: Floats
    best_line: Bools
    found_run: list[Ints] = attrs.field(factory=list)
    found_seg: list[Floats] = attrs.field(factory=list)
    found_line: list[Bools] = attrs.field(factory=list)
    found_end: list[Ints] = attrs.field(factory=list)
    done: int = 0
    #: Called between batches of attempts and after every round (progress and cancel).
    tick: Callable[[], None] = attrs.field(default=lambda: None)

    @staticmethod
    def start(
        pts: Floats, off: Ints, last: Ints, t_in: Floats, t_end: Floats, tols: Floats
    ) -> _Search:
        """The search of runs that are points `off[k]..off[k] + last[k]` of `pts`."""
        count = len(off)
        fields = len(attrs.fields(_Bracket)) - 1  # every field but `table` is one row
        bracket = _Bracket.of(np.zeros((fields, count), dtype=np.int64))
        bracket.lo[:] = 1
        bracket.hi[:] = bracket.last[:] = last
        bracket.best[:] = -1
        bracket.doubling[:] = 1
        bracket.off[:] = off
        return _Search(
            pts=pts,
            bracket=bracket,
            tols=tols,
            t_end=t_end,
            t_in=t_in.copy(),
            best_seg=np.zeros((count, 3, 2)),
            best_line=np.zeros(count, dtype=bool),
        )

    def attempt(self, runs: Ints, cand: Ints) -> tuple[Bools, Floats, Bools]:
        """`_try` for one probe per row: run `runs[k]` from its current start to point
        `cand[k]`. At most `ATTEMPT_BATCH` rows at a time, with a `tick` between
        batches; a row's result does not depend on its batch (see `_try`)."""
        if len(runs) > ATTEMPT_BATCH:
            parts = []
            for at in range(0, len(runs), ATTEMPT_BATCH):
                self.tick()
                parts.append(
                    self.attempt(runs[at : at + ATTEMPT_BATCH], cand[at : at + ATTEMPT_BATCH])
                )
            return (
                np.concatenate([p[0] for p in parts]),
                np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]),
            )
        b = self.bracket
        return _try(
            self.pts,
            b.off[runs],
            b.last[runs],
            b.start[runs],
            cand,
            self.t_in.take(runs, axis=0),
            self.t_end.take(runs, axis=0),
            self.tols[runs],
        )

    def next_segment(self, runs: Ints) -> Bools:
        """Record the best segment of each of these runs; those not at their end start
        their next segment there. Returns which of them reached their end."""
        b = self.bracket.take(runs)
        # A run with no success at all takes one step as a line.
        none = np.nonzero(b.best < 0)[0]
        b.best[none] = b.start[none] + 1
        step_end = self.pts.take(b.off[none] + b.start[none] + 1, axis=0)
        self.best_seg[runs[none]] = step_end[:, None, :]
        self.best_line[runs[none]] = True
        self.found_run.append(runs)
        self.found_seg.append(self.best_seg.take(runs, axis=0))
        self.found_line.append(self.best_line[runs])
        self.found_end.append(b.best.copy())
        ended = b.best >= b.last
        self.done += int(ended.sum())
        go = np.nonzero(~ended)[0]
        end = b.best[go]
        self.t_in[runs[go]] = -_tangent_back(
            self.pts, b.off[go], b.last[go], end, self.t_end.take(runs[go], axis=0)
        )
        b.step[go] = -np.maximum(MIN_REACH, end - b.start[go])
        b.start[go] = end
        b.lo[go] = end + 1
        b.hi[go] = b.last[go]
        b.best[go] = -1
        b.doubling[go] = 1
        self.bracket.put(runs, b)
        return ended


def _round(search: _Search, active: Ints) -> Ints:
    """One round of the search for many runs, as whole-array work: probes, one `_try`
    for all of them, and every run's update. Returns the runs still searching."""
    a = search.bracket.take(active)
    cand = _probes(a)
    valid = cand >= 0
    row_of, col = np.nonzero(valid)
    ok_rows, seg, line_rows = search.attempt(active[row_of], cand[row_of, col])
    ok = np.zeros(cand.shape, dtype=bool)
    ok[row_of, col] = ok_rows
    where = np.zeros(cand.shape, dtype=np.int64)
    where[row_of, col] = np.arange(len(row_of))
    # Probes are sorted per run, valid ones first: the successes before the first
    # failure raise the bracket's low end, the first failure lowers its high end; a
    # success at the run's end finishes the run whatever came before.
    fails = valid & ~ok
    has_fail = fails.any(axis=1)
    first_fail = np.where(has_fail, fails.argmax(axis=1), valid.sum(axis=1))
    whole_at = ok & (cand == a.last[:, None])
    whole = whole_at.any(axis=1)
    rows = np.arange(len(active))
    below = np.maximum(first_fail - 1, 0)
    pick_col = np.where(whole, whole_at.argmax(axis=1), below)
    got = np.nonzero((first_fail > 0) | whole)[0]
    a.best[got] = cand[got, pick_col[got]]
    picked = where[got, pick_col[got]]
    search.best_seg[active[got]] = seg.take(picked, axis=0)
    search.best_line[active[got]] = line_rows[picked]
    a.lo[:] = np.where(first_fail > 0, cand[rows, below] + 1, a.lo)
    a.hi[:] = np.where(has_fail, cand[rows, np.minimum(first_fail, _PROBE_SLOTS - 1)] - 1, a.hi)
    a.doubling &= ~has_fail
    # Search on while doubling, or while the bracket is wider than an eighth of the
    # best reach so far.
    open_ = a.lo <= a.hi
    more = (a.doubling == 1) & open_
    slack = np.where(a.best >= 0, np.maximum(1, (a.best - a.start) // 8), 1)
    finish = whole | ~(more | (open_ & (a.hi - a.lo + 1 >= slack)))
    a.doubling &= more
    search.bracket.put(active, a)
    fin = np.nonzero(finish)[0]
    ended = search.next_segment(active[fin])
    finish[fin[~ended]] = False
    searching: Ints = active[~finish]
    return searching


def _round_few(search: _Search, active: Ints) -> Ints:
    """`_round` for a few runs (most rounds of flat art): the same probes, verdicts and
    next segments, worked out per run in plain Python, which for a handful of runs costs
    less than the whole-array calls. Returns the runs still searching.

    It pays, a little: on the runs of the 18 images of the two shared corpora (SVG,
    automatic colours), `fit_runs` took 519 ms of CPU with it and 538 ms without it
    (best of 12, interleaved in one process), up to 15 % less on flat art (si-markdown
    6.9 vs 8.0 ms, om-apple 17.7 vs 19.8 ms); whole conversions of those images took
    0.7 % less CPU in all (1.830 vs 1.843 s, median 50.4 vs 51.1 ms, best of 6,
    interleaved per image). The engine benchmark's wall-clock figures on the shared
    2-core machine varied by more than that from run to run. The output is the same
    either way."""
    start, lo, hi, best, step, doubling, last, off = search.bracket.table.take(
        active, axis=1
    ).tolist()
    probes: list[list[int]] = []
    for k, i in enumerate(start):
        if doubling[k] and step[k] < 0:
            length = -step[k]
            reaches = {min(i + max(1, round(length * f)), hi[k]) for f in _AROUND_FLOATS} - {i}
            step[k] = 2 * length + 1
        elif doubling[k] and step[k] == 0:
            reaches = {last[k]}
            step[k] = MIN_REACH << PROBES
        elif doubling[k]:
            reaches = {min(i + step[k] * (1 << p), hi[k]) for p in range(PROBES)}
            step[k] = min(step[k] << PROBES, _STEP_CAP)
        else:
            width = hi[k] - lo[k] + 1
            reaches = {lo[k] + (width * p) // (PROBES + 1) for p in range(1, PROBES + 1)}
        probes.append(sorted(j for j in reaches if j >= lo[k]))
    owner = [k for k, tries in enumerate(probes) for _ in tries]
    flat = np.array([j for tries in probes for j in tries], dtype=np.int64)
    ok_rows, seg, line_rows = search.attempt(active[owner], flat)
    ok = ok_rows.tolist()
    new_best: dict[int, int] = {}  # entry -> its attempt's row
    finish: list[int] = []
    at = 0
    for k, tries in enumerate(probes):
        first_fail = -1
        whole = False
        for q, j in enumerate(tries):
            if ok[at + q]:
                if j == last[k]:
                    whole = True
                    best[k] = j
                    new_best[k] = at + q
                    break
                if first_fail < 0:
                    best[k] = j
                    new_best[k] = at + q
                    lo[k] = j + 1
            elif first_fail < 0:
                first_fail = q
                hi[k] = j - 1
        at += len(tries)
        if not whole:
            if first_fail >= 0:
                doubling[k] = 0
            if doubling[k] and lo[k] <= hi[k]:
                continue
            doubling[k] = 0
            slack = max(1, (best[k] - start[k]) // 8) if best[k] >= 0 else 1
            if lo[k] <= hi[k] and hi[k] - lo[k] + 1 >= slack:
                continue
        finish.append(k)
    if new_best:
        picked = list(new_best.values())
        search.best_seg[active[list(new_best)]] = seg.take(picked, axis=0)
        search.best_line[active[list(new_best)]] = line_rows[picked]
    # `_Search.next_segment` for the finished runs, per run.
    runs = active.tolist()
    for k in finish:
        if best[k] < 0:  # no success at all: one step as a line
            best[k] = start[k] + 1
            search.best_seg[runs[k]] = search.pts[off[k] + best[k]]
            search.best_line[runs[k]] = True
    fin_runs = [runs[k] for k in finish]
    search.found_run.append(np.array(fin_runs, dtype=np.int64))
    search.found_seg.append(search.best_seg.take(fin_runs, axis=0))
    search.found_line.append(search.best_line[fin_runs])
    search.found_end.append(np.array([best[k] for k in finish], dtype=np.int64))
    ended = [k for k in finish if best[k] >= last[k]]
    go = [k for k in finish if best[k] < last[k]]
    search.done += len(ended)
    if go:
        go_runs = active[go]
        go_off, go_last, go_best = np.array([(off[k], last[k], best[k]) for k in go]).T
        search.t_in[go_runs] = -_tangent_back(
            search.pts, go_off, go_last, go_best, search.t_end.take(go_runs, axis=0)
        )
    for k in go:
        step[k] = -max(MIN_REACH, best[k] - start[k])
        start[k], lo[k], hi[k], best[k], doubling[k] = best[k], best[k] + 1, last[k], -1, 1
    search.bracket.table[:, active] = [start, lo, hi, best, step, doubling, last, off]
    searching = np.ones(len(active), dtype=bool)
    searching[ended] = False
    return active[searching]


def _probes(a: _Bracket) -> Ints:
    """One round's reaches for each searching run, sorted and distinct, padded with
    -1; each run's next search step is stored in `a.step`. Every kind of round is
    computed for every run and the run's own kind picked, which for the few runs of
    most rounds is cheaper than sorting the runs by kind. O(runs)."""
    i_, lo_, hi_ = a.start[:, None], a.lo[:, None], a.hi[:, None]
    step = a.step
    searching = a.doubling == 1
    # A later segment: reaches around the previous segment's length, finely enough that
    # one round usually settles it.
    around = searching & (step < 0)
    reach = np.maximum(1, np.rint(-step[:, None] * _AROUND).astype(np.int64))
    c_around = np.minimum(i_ + reach, hi_)
    # Doubling reaches (a first segment whose whole run did not fit goes to bisection).
    double = searching & (step > 0)
    c_double = np.minimum(i_ + step[:, None] * _DOUBLINGS, hi_)
    # Bisection: evenly spaced reaches inside the bracket.
    c_bisect = lo_ + ((a.hi - a.lo + 1)[:, None] * _SEVENTHS) // (PROBES + 1)
    cand = np.where(around[:, None], c_around, np.where(double[:, None], c_double, c_bisect))
    usable = np.where(around[:, None], (c_around != i_) & (c_around >= lo_), cand >= lo_)
    cand = np.where(usable, cand, _NO_PROBE)
    # A run's first segment tries the whole run first.
    whole = searching & (step == 0)
    cand[whole] = _NO_PROBE
    cand[whole, 0] = a.last[whole]
    a.step[:] = np.where(
        around,
        1 - 2 * step,
        np.where(
            whole,
            MIN_REACH << PROBES,
            np.where(double, np.minimum(step << PROBES, _STEP_CAP), step),
        ),
    )
    cand.sort(axis=1)
    cand[:, 1:][cand[:, 1:] == cand[:, :-1]] = _NO_PROBE
    cand.sort(axis=1)
    cand[cand == _NO_PROBE] = -1
    return cand


def _tangent_back(pts: Floats, off: Ints, last: Ints, j: Ints, t_end: Floats) -> Floats:
    """Tangent at point j of each run pointing back along it (the run's own at its end):
    the chord across j, `SPLIT_TANGENT_REACH` points either side where the run has
    them. Both the tangent arriving at a tried segment's end and the one leaving the
    next segment's start (negated) come from here, so consecutive segments share it.
    O(rows)."""
    reach = np.maximum(1, np.minimum(SPLIT_TANGENT_REACH, np.minimum(j, last - j)))
    back = _units(
        pts.take(off + np.maximum(j - reach, 0), axis=0)
        - pts.take(off + np.minimum(j + reach, last), axis=0)
    )
    tangent: Floats = np.where((j >= last)[:, None], t_end, back)
    return tangent


def _try(
    pts: np.ndarray,
    off: np.ndarray,
    last: np.ndarray,
    start: np.ndarray,
    cand: np.ndarray,
    t_in: np.ndarray,
    t_end: np.ndarray,
    tol: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One fit attempt per row: a line, else the least-squares cubic with fixed ends and
    end tangents (only the two tangent lengths free) refined by Newton steps, through
    the points start..cand of each row's run. Returns success, segment (control points
    and end; a line repeats its end) and whether it is a line. Rows longer than
    `FIT_POINTS` are judged on an evenly strided subset (ends kept): the points are
    smoothed, so their neighbours say little more, and the cost stays bounded.

    Rows are padded with their end point, which adds exact zeros to every sum, so a
    row's result does not depend on the padded width as long as that is a multiple of
    `_WIDTH_STEP` (NumPy's sums then group the real terms alike). Large batches are
    therefore tried in groups of 8, 16 and 24 columns (short attempts cost a third);
    small ones in one group, where the call count matters more than the columns."""
    used = np.minimum(cand - start + 1, FIT_POINTS)
    width = -(-used // _WIDTH_STEP) * _WIDTH_STEP
    widths = np.unique(width) if len(used) >= _SPLIT_ROWS else width.max(initial=_WIDTH_STEP)[None]
    if len(widths) == 1:
        return _attempt(pts, off, last, start, cand, t_in, t_end, tol, int(widths[0]))
    ok = np.empty(len(used), dtype=bool)
    seg = np.empty((len(used), 3, 2))
    line = np.empty(len(used), dtype=bool)
    for w in widths.tolist():
        rows = np.nonzero(width == w)[0]
        ok[rows], seg[rows], line[rows] = _attempt(
            pts,
            off[rows],
            last[rows],
            start[rows],
            cand[rows],
            t_in.take(rows, axis=0),
            t_end.take(rows, axis=0),
            tol[rows],
            w,
        )
    return ok, seg, line


def _attempt(
    pts: np.ndarray,
    off: np.ndarray,
    last: np.ndarray,
    start: np.ndarray,
    cand: np.ndarray,
    t_in: np.ndarray,
    t_end: np.ndarray,
    tol: np.ndarray,
    width: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_try` for rows of at most `width` points, padded to `width` columns. Points are
    held as (2, points, rows) arrays, x then y, rows innermost: one array operation does
    both coordinates, and every sum, maximum or running value over a row's points is a
    pass over whole contiguous rows of the array (NumPy's inner loop then runs along
    the rows, not once per row over its few points, which cost three times a plain
    product per element). Each row's sums add its points in order, one at a time, so a
    row's result does not depend on the other rows or on the padded width."""
    if len(start) == 1:
        # One row alone would be summed along its points as a contiguous run (NumPy's
        # pairwise and unrolled sums, another order); as two copies it is summed point
        # by point like every row of a larger batch, so it fits the same in any batch.
        off, last, start, cand, t_in, t_end, tol = (
            np.repeat(a, 2, axis=0) for a in (off, last, start, cand, t_in, t_end, tol)
        )
        ok, seg, line = _attempt(pts, off, last, start, cand, t_in, t_end, tol, width)
        return ok[:1], seg[:1], line[:1]
    span = cand - start
    used = np.minimum(span + 1, FIT_POINTS)
    frac = _fractions(width).take(used - 1, axis=1)
    # (The span as floats first: a float times int64 array is cast element by element
    # through a buffer, one (width, rows) call's worth; the values are the same.)
    place = np.rint(frac * span.astype(np.float64)).astype(np.int64)
    place += off + start
    # Gathered as (points, rows, 2) from the contiguous points and then laid out x
    # then y: `take` on the transposed view would first copy all of `pts` (every
    # point of every run) on each attempt.
    data = pts.take(place, axis=0).transpose(2, 0, 1).copy()
    p0 = data[:, 0]
    p3 = data[:, -1]
    rel = data - p0[:, None]
    chord = p3 - p0
    rms2 = (RMS_SHARE * tol) ** 2
    tol2 = tol * tol
    # Line test (padding repeats the end point: distance 0).
    length2 = chord[0] ** 2 + chord[1] ** 2
    along = rel * chord[:, None]
    t = np.add(along[0], along[1], out=along[0])
    t /= np.maximum(length2, 1e-12)
    np.maximum(t, 0.0, out=t)
    np.minimum(t, 1.0, out=t)
    off_line = rel - t * chord[:, None]
    off_line *= off_line
    d2 = np.add(off_line[0], off_line[1], out=off_line[0])
    line = (span <= 1) | (
        (np.maximum.reduce(d2, axis=0) <= tol2) & (np.add.reduce(d2, axis=0) <= rms2 * used)
    )
    seg = np.empty((len(span), 3, 2))
    seg[:] = p3.T[:, None]
    ok = line.copy()
    todo = np.nonzero(~line)[0]
    if len(todo) == 0:
        return ok, seg, line
    # Every row's fixed values (`_fixed`) are worked out, and then the cubic rows' are
    # taken with one indexing call (none when every row is one), rather than taking
    # each input of the table apart: per row the values are the same, and the calls
    # are fewer. The Newton steps' per-row limits ride in the same table, so a step
    # takes all of a row's fixed values with one indexing call.
    fixed = _fixed(t_in.T, _tangent_back(pts, off, last, cand, t_end).T, chord, used)
    fixed[_TOL2] = tol2
    fixed[_RMS2] = rms2
    fixed[_REACH] = NEWTON_RANGE**2 * tol2
    fixed[_LATE_REACH] = NEWTON_LATE_RANGE**2 * tol2
    fixed[_LONG] = span + 1 >= NEWTON_LONG
    sub = rel
    if len(todo) < len(span):
        fixed = fixed.take(todo, axis=1)
        sub = rel.take(todo, axis=2)
    fixed[_ROW] = np.arange(len(todo))
    diff = sub[:, 1:] - sub[:, :-1]
    u = np.zeros((width, len(todo)))
    np.cumsum(np.hypot(diff[0], diff[1]), axis=0, out=u[1:])
    u /= np.maximum(u[-1], 1e-12)
    bez, emax2, ems2, err = _cubic(sub, u, fixed)
    # The rows a Newton step retries only ever shrink (a good row stays good, and the
    # later steps' range is narrower), so the steps work on the retried rows alone,
    # each taking its rows from the previous step's, and only the results are scattered.
    r_err, r_bez, r_u, r_sub, r_fixed = err, bez, u, sub, fixed
    r_max2, r_ms2 = emax2, ems2
    reach = _REACH
    for step in range(NEWTON_STEPS):
        retry = (r_max2 < r_fixed[reach]) & ((r_max2 > r_fixed[_TOL2]) | (r_ms2 > r_fixed[_RMS2]))
        if step >= NEWTON_SHORT_STEPS:
            retry &= r_fixed[_LONG] > 0.0
        r = retry.nonzero()[0]
        if len(r) == 0:
            break
        if len(r) < len(retry):
            r_err, r_bez, r_u = r_err.take(r, axis=2), r_bez.take(r, axis=2), r_u.take(r, axis=1)
            r_sub, r_fixed = r_sub.take(r, axis=2), r_fixed.take(r, axis=1)
        r_u = _newton(r_err, r_bez, r_u)
        r_bez, r_max2, r_ms2, r_err = _cubic(r_sub, r_u, r_fixed)
        rows = r_fixed[_ROW].astype(np.int64)
        bez[:, :, rows], emax2[rows], ems2[rows] = r_bez, r_max2, r_ms2
        reach = _LATE_REACH
    ok[todo] = (emax2 <= fixed[_TOL2]) & (ems2 <= fixed[_RMS2])
    seg[todo] = bez.transpose(2, 1, 0) + p0.take(todo, axis=1).T[:, None]
    return ok, seg, line


@functools.cache
def _fractions(width: int) -> Floats:
    """Where each of `width` points samples an attempt of s + 1 points (s < `FIT_POINTS`
    steps), as a share of its span, laid out (points, s): column s holds min(point, s) /
    max(s, 1), so an attempt looks its column up with one `take` instead of computing it
    (three calls on (width, rows) arrays). Read only: shared by every attempt of this
    width."""
    steps = np.arange(FIT_POINTS)[None, :]
    table: Floats = np.minimum(np.arange(width)[:, None], steps) / np.maximum(steps, 1)
    table.flags.writeable = False
    return table


#: Rows of `_fixed`'s table: the two tangents (x, y each), the chord, the points used,
#: the tangents' dot product, a third of the chord's length, and the least and most
#: tangent length `_cubic` accepts; then what `_attempt`'s Newton steps need of each
#: row: the squared tolerance and RMS allowed, the squared errors from which the first
#: and the later steps give up, the row's place among the attempt's cubic rows, and
#: whether it is long (1.0) or not (0.0).
_T1, _T2, _CHORD, _USED, _DOT, _THIRD, _EPS, _LIMIT = 0, 2, 4, 6, 7, 8, 9, 10
_TOL2, _RMS2, _REACH, _LATE_REACH, _ROW, _LONG, _FIXED_ROWS = 11, 12, 13, 14, 15, 16, 17


def _fixed(t1: Floats, t2: Floats, chord: Floats, used: Ints) -> Floats:
    """What `_cubic` needs of each row that the Newton steps do not change, as one
    (`_FIXED_ROWS`, rows) table, so that a step takes its rows with one indexing call.
    Tangents and chords (2, rows); O(rows)."""
    fixed = np.empty((_FIXED_ROWS, len(used)))
    fixed[_T1 : _T1 + 2] = t1
    fixed[_T2 : _T2 + 2] = t2
    fixed[_CHORD : _CHORD + 2] = chord
    fixed[_USED] = used
    fixed[_DOT] = t1[0] * t2[0] + t1[1] * t2[1]
    seg_len = np.hypot(chord[0], chord[1])
    fixed[_THIRD] = seg_len / 3
    fixed[_EPS] = 1e-6 * np.maximum(seg_len, 1e-6)
    fixed[_LIMIT] = 2 * seg_len
    return fixed


def _cubic(
    rel: np.ndarray, u: np.ndarray, fixed: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Least-squares tangent lengths per row (points `rel` (2, points, rows) relative
    to the start, parameters `u` (points, rows); tangents, chords and the rest in
    `fixed`, see `_fixed`), the cubic's control points and end (relative, (2, 3,
    rows)), its largest and mean squared error, and the curve at every parameter minus
    its point (2, points, rows: the next Newton step's start).

    The Bernstein weights are one (3, points, rows) array, so each sum over the points
    (the 2x2 normal equations, their right-hand sides, the curve at every parameter)
    is one `einsum` over all rows and both coordinates, and both tangent lengths are
    solved as one (2, rows) array: the cost of a call is mostly its NumPy calls (about
    30), not its points."""
    if u.shape[1] == 1:
        # One row is fitted as two copies of it: see `_attempt` (its sums' order).
        bez, emax2, ems2, err = _cubic(
            np.repeat(rel, 2, axis=2), np.repeat(u, 2, axis=1), np.repeat(fixed, 2, axis=1)
        )
        return bez[:, :, :1], emax2[:1], ems2[:1], err[:, :, :1]
    v = 1.0 - u
    # One block: the points less the chord's share (x, y), then the three weights.
    work = np.empty((5, *u.shape))
    basis = work[2:]
    uv3 = 3.0 * u * v
    np.multiply(uv3, v, out=basis[0])
    np.multiply(uv3, u, out=basis[1])
    np.multiply(u * u, u, out=basis[2])
    chord = fixed[_CHORD : _CHORD + 2]
    tangents = fixed[_T1 : _T2 + 2].reshape(2, 2, -1)  # (tangent, coordinate, row)
    np.multiply(basis[1] + basis[2], chord[:, None], out=work[:2])
    np.subtract(rel, work[:2], out=work[:2])
    # Sums of the first two weights times each row of the block, in one call: the
    # right-hand sides (weight, coordinate, row), then the normal equations.
    sums = _einsum("kji,lji->kli", basis[:2], work[:4])
    rhs, gram = sums[:, :2], sums[:, 2:]
    # The right-hand sides along each weight's own tangent. (Sums of two terms are
    # written out as two ufunc calls: the same products added in the same order as
    # `einsum` adds them, in less time.)
    along = rhs * tangents
    r = np.add(along[:, 0], along[:, 1])
    c01 = gram[0, 1] * fixed[_DOT]
    det = gram[0, 0] * gram[1, 1] - c01 * c01
    # A singular system gives NaN lengths, which the sanity test below replaces.
    sdet = np.where(np.abs(det) > 1e-12, det, np.nan)
    # (r0 c11 - r1 c01, r1 c00 - r0 c01) / det, both rows at once.
    lengths = r * gram.diagonal().T[::-1]
    lengths -= r[::-1] * c01
    lengths /= sdet
    sane = (lengths > fixed[_EPS]) & (lengths < fixed[_LIMIT])
    lengths = np.where(sane[0] & sane[1], lengths, fixed[_THIRD])
    bez = np.empty((2, 3, u.shape[1]))
    np.multiply(lengths, tangents.transpose(1, 0, 2), out=bez[:, :2])
    bez[:, 1] += chord
    bez[:, 2] = chord
    err = _einsum("lji,kli->kji", basis, bez)
    err -= rel
    square = err * err
    e2 = np.add(square[0], square[1])
    return bez, np.maximum.reduce(e2, axis=0), np.add.reduce(e2, axis=0) / fixed[_USED], err


def _newton(err: np.ndarray, bez: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One Newton step per point towards the curve parameter closest to it (`err` (2,
    points, rows) the curve at `u` (points, rows) minus each point, as `_cubic` leaves
    it; `bez` (2, 3, rows) the relative control points and end). The cubic's two
    derivatives are taken in power form, B(u) = u (a + b u + c u^2), by Horner's rule."""
    p1, p2, p3 = bez[:, 0], bez[:, 1], bez[:, 2]
    a = 3.0 * p1
    b = 3.0 * p2
    c = p3 - b
    c += a
    b -= 6.0 * p1
    q = err
    # B' = a + 2 b u + 3 c u^2 and B'' = 2 b + 6 c u, (2, points, rows) each.
    q2 = np.multiply(6.0 * c[:, None], u)
    q1 = np.multiply(q2, 0.5)
    q2 += 2.0 * b[:, None]
    q1 += 2.0 * b[:, None]
    q1 *= u
    q1 += a[:, None]
    both = q * q1
    num = np.add(both[0], both[1])
    q1 *= q1
    den = np.add(q1[0], q1[1])
    q2 *= q
    den += q2[0]
    den += q2[1]
    # A flat denominator takes no step (the point's share of the step is num / inf = 0).
    num /= np.where(np.abs(den) > 1e-12, den, np.inf)
    out = np.subtract(u, num, out=num)
    np.maximum(out, 0.0, out=out)
    np.minimum(out, 1.0, out=out)
    out[0] = 0.0
    np.copyto(out[-1], 1.0, where=u[-1] >= 1.0)
    return np.maximum.accumulate(out, axis=0)
