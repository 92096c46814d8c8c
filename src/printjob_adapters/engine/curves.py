"""Step 3 of tracing: boundary edges' data points to lines and cubic Béziers.

An edge arrives as its data points (one per crack, already placed with sub-pixel
accuracy) plus, for an open edge, its two fixed junction points. Fitting runs in four
parts:

1. Corners (`_find_corners`): the turning angle between the chords reaching
   `CORNER_SPAN` points back and forth from every gap between two data points, kept
   where it is a local maximum above `CORNER_ANGLE`. Tiny edges (a dot, a one-pixel line
   end, a short step between junctions) are their crack polygon instead (`tiny_edge`),
   so they stay the shapes they are.
2. Corner points (`_corner_breaks`): each corner sits where the straight lines fitted to
   the points on its two sides meet, so a corner is sharp and lands where the two sides
   say it is, not on the pixel grid. Corners and junctions cut the edge into runs.
3. Smoothing (`_smooth`): a light binomial filter over each run's inner points takes
   the stair steps out of hard-edged (not anti-aliased) boundaries.
4. Curves (`fit_runs`): each run greedily covered by as few pieces as fit within the
   tolerance, each piece a straight line when one fits, else the least-squares cubic
   for fixed end points and tangents refined by Newton reparametrisation. Tangents are
   shared at the joins, so runs are smooth (G1) between corners.

Cost: O(points) per edge for parts 1-3; part 4 tries O(log(run length)) candidates per
piece, and every try is whole-array work over all unfinished runs at once, on at most
`FIT_POINTS` points per run.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import attrs
import numpy as np

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
#: Newton reparametrisation is tried when the first error is within this many
#: tolerances, for at most this many steps.
NEWTON_RANGE = 6.0
NEWTON_STEPS = 2
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
#: Reaches tried per run and round of the search.
PROBES = 6
#: Reaches tried first for a later segment, as multiples of the previous segment's length
#: (finest near 1, where the answer usually is).
_AROUND = (0.5, 0.7, 0.85, 1.0, 1.125, 1.25, 1.5, 2.0)


@attrs.frozen(eq=False)
class FittedEdge:
    """An edge's outline from its start point: segments (S, 3, 2) holding the two
    control points and end point of each cubic (lines repeat their end point)."""

    start: np.ndarray
    segments: np.ndarray
    is_line: np.ndarray

    @property
    def end(self) -> np.ndarray:
        return self.segments[-1, 2]

    def reversed(self) -> FittedEdge:
        """The same outline walked backwards (identical coordinates)."""
        ends = np.concatenate([self.start[None], self.segments[:-1, 2]])[::-1]
        seg = self.segments[::-1]
        out = np.stack([seg[:, 1], seg[:, 0], ends], axis=1)
        lines = self.is_line[::-1]
        out[lines, 0] = ends[lines]
        out[lines, 1] = ends[lines]
        return FittedEdge(start=self.segments[-1, 2].copy(), segments=out, is_line=lines)


@attrs.frozen
class _Break:
    """A fixed point between two runs: the run before ends at `point`, arriving along
    `-tan_in`; the run after leaves it along `tan_out`. `gap` is the index of the first
    data point after it."""

    gap: int
    point: np.ndarray
    tan_in: np.ndarray | None
    tan_out: np.ndarray | None


@attrs.frozen(eq=False)
class Run:
    """Smoothed data points between two fixed points (its first and last rows), with
    the tangents leaving the first and arriving (pointing back) at the last."""

    data: np.ndarray
    t1: np.ndarray
    t2: np.ndarray
    #: Multiplier of the fitting tolerance for this run.
    slack: float = 1.0


def fit_edge(
    points: np.ndarray,
    dirs: np.ndarray,
    corners_xy: np.ndarray,
    closed: bool,
    start: np.ndarray | None,
    end: np.ndarray | None,
    tolerance: float,
) -> FittedEdge:
    """Fit one edge (steps 1-3); see `edge_runs` for the arguments."""
    first, runs = edge_runs(points, dirs, corners_xy, closed, start, end)
    return assemble(first, fit_runs(runs, tolerance))


def tiny_edge(
    points: np.ndarray,
    dirs: np.ndarray,
    closed: bool,
    start: np.ndarray | None,
    end: np.ndarray | None,
) -> FittedEdge | None:
    """Steps 1-3 at once for a tiny edge (`TINY_LOOP` / `TINY_OPEN` cracks or fewer):
    its crack polygon, every turn a corner where the axis-parallel lines through the
    two neighbouring data points cross. None when the edge is not tiny. O(m), plain
    floats (most edges of busy images are tiny)."""
    m = len(points)
    if m > (TINY_LOOP if closed else TINY_OPEN):
        return None
    pts = points.tolist()
    dd = dirs.tolist()
    corners: list[tuple[float, float]] = []
    for g in range(0 if closed else 1, m):
        a, b = dd[g - 1], dd[g]
        if a == b:
            continue
        p, q = pts[g - 1], pts[g]
        # The crack before runs along x (even code) or y (odd code).
        corners.append((q[0], p[1]) if a % 2 == 0 else (p[0], q[1]))
    if closed:
        if len(corners) < 3:
            return None
        first, rest = corners[0], [*corners[1:], corners[0]]
    else:
        assert start is not None and end is not None
        first, rest = (float(start[0]), float(start[1])), [*corners, (float(end[0]), float(end[1]))]
    segs = np.repeat(np.array(rest, dtype=np.float64)[:, None, :], 3, axis=1)
    return assemble(np.array(first), [(segs, np.ones(len(rest), dtype=bool))])


def edge_runs(
    points: np.ndarray,
    dirs: np.ndarray,
    corners_xy: np.ndarray,
    closed: bool,
    start: np.ndarray | None,
    end: np.ndarray | None,
    slack: float = 1.0,
) -> tuple[np.ndarray, list[Run]]:
    """Steps 1-2 for one edge: its start point and its runs between fixed points.

    `points` (m, 2) are the data points, `dirs` (m,) their crack directions,
    `corners_xy` (m, 2) the crack corner before each point (the fallback corner
    position); `start` and `end` are the junction points of an open edge; `slack`
    scales the fitting tolerance of its runs."""
    if not closed:
        assert start is not None and end is not None
        keep = _ahead(points, start) & _ahead(points[::-1], end)[::-1]
        if not keep.all() and keep.any():
            points, dirs, corners_xy = points[keep], dirs[keep], corners_xy[keep]
    m = len(points)
    tiny = m <= (TINY_LOOP if closed else TINY_OPEN)
    gaps = _tiny_corners(dirs, closed) if tiny else _find_corners(points, closed, start, end)
    if closed and len(gaps) > 0:
        shift = int(gaps[0])
        points = np.roll(points, -shift, axis=0)
        dirs = np.roll(dirs, -shift)
        corners_xy = np.roll(corners_xy, -shift, axis=0)
        gaps = gaps - shift
    breaks = _corner_breaks(points, dirs, corners_xy, gaps, closed)
    if closed:
        if not breaks:
            breaks = [_smooth_break(points, 0), _smooth_break(points, m // 2)]
        first = breaks[0]
        breaks = [*breaks, _Break(m + first.gap, first.point, first.tan_in, first.tan_out)]
        points = np.concatenate([points, points[: first.gap]]) if first.gap else points
    else:
        assert start is not None and end is not None
        breaks = [_Break(0, start, None, None), *breaks, _Break(m, end, None, None)]
    runs = []
    for a, b in itertools.pairwise(breaks):
        data = _smooth(np.concatenate([a.point[None], points[a.gap : b.gap], b.point[None]]))
        t1 = a.tan_out if a.tan_out is not None else _end_tangent(data)
        t2 = b.tan_in if b.tan_in is not None else _end_tangent(data[::-1])
        runs.append(Run(data, t1, t2, slack))
    return breaks[0].point, runs


def _ahead(points: np.ndarray, junction: np.ndarray) -> np.ndarray:
    """False for the first few points if they lie behind the junction (it moved along
    the edge past them), which would make the outline double back there."""
    ok = np.ones(len(points), dtype=bool)
    if len(points) < 2:
        return ok
    head = points[:JUNCTION_LOOKAHEAD] - junction
    way = points[min(JUNCTION_LOOKAHEAD, len(points) - 1)] - junction
    ok[: len(head)] = head @ way > 0
    return ok


def assemble(start: np.ndarray, pieces: list[tuple[np.ndarray, np.ndarray]]) -> FittedEdge:
    """An edge from its start point and its runs' fitted segments. Coordinates are
    rounded once here, so every outline replaying the edge writes the same numbers."""
    segs = np.concatenate([p[0] for p in pieces]).reshape(-1, 3, 2)
    return FittedEdge(
        start=np.round(start, DECIMALS) + 0.0,
        segments=np.round(segs, DECIMALS) + 0.0,
        is_line=np.concatenate([p[1] for p in pieces]).astype(bool),
    )


def _smooth(data: np.ndarray) -> np.ndarray:
    """Binomial smoothing of a run's inner points (its ends stay fixed). Removes the
    stair steps of hard-edged (not anti-aliased) boundaries; on well-placed points it
    moves a curve of radius r by about SMOOTH_PASSES / (4 r) pixels. O(n)."""
    if len(data) < 4:
        return data
    out = data.copy()
    for _ in range(SMOOTH_PASSES):
        out[1:-1] = 0.25 * (out[:-2] + out[2:]) + 0.5 * out[1:-1]
    return out


def _tiny_corners(dirs: np.ndarray, closed: bool) -> np.ndarray:
    """Step 1 for tiny edges: every crack turn is a corner. O(m)."""
    if closed:
        turn = dirs != np.roll(dirs, 1)
        return np.nonzero(turn)[0]
    return np.nonzero(dirs[1:] != dirs[:-1])[0] + 1


def _find_corners(
    points: np.ndarray, closed: bool, start: np.ndarray | None, end: np.ndarray | None
) -> np.ndarray:
    """Step 1: gaps whose turning angle is a local maximum above `CORNER_ANGLE`.

    Gap i lies between points i-1 and i; its angle is between the chords
    p[i-1] - p[i-1-k] and p[i+k] - p[i]. O(m)."""
    m = len(points)
    k = CORNER_SPAN
    if closed:
        if m < 4 * k:
            k = max(1, m // 4)
        ext = points
        i = np.arange(m)
        back, near_b = (i - 1 - k) % m, (i - 1) % m
        near_f, fwd = i, (i + k) % m
    else:
        if m < 2:
            return np.zeros(0, dtype=np.int64)
        ext = np.concatenate([start[None], points, end[None]])  # type: ignore[index]
        i = np.arange(1, m)
        back, near_b = np.maximum(i - k, 0), i
        near_f, fwd = i + 1, np.minimum(i + 1 + k, m + 1)
    d1 = ext[near_b] - ext[back]
    d2 = ext[fwd] - ext[near_f]
    cross = d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]
    dot = (d1 * d2).sum(axis=1)
    angle = np.arctan2(np.abs(cross), dot)
    if closed:
        before, after = np.roll(angle, 1), np.roll(angle, -1)
    else:
        before = np.concatenate([[-1.0], angle[:-1]])
        after = np.concatenate([angle[1:], [-1.0]])
    cand = np.nonzero((angle >= CORNER_ANGLE) & (angle >= before) & (angle >= after))[0]
    # Strongest first; a weaker corner within the chord span of a kept one is the same
    # corner seen twice, unless both are sharp (the two corners of a thin line's end).
    kept: list[int] = []
    for c in sorted(cand.tolist(), key=lambda c: (-angle[c], c)):
        clash = [q for q in kept if min(abs(c - q), m - abs(c - q) if closed else m) <= k]
        if not clash or (angle[c] >= SHARP_ANGLE and all(angle[q] >= SHARP_ANGLE for q in clash)):
            kept.append(c)
    kept.sort()
    gaps = np.array(kept, dtype=np.int64)
    return gaps if closed else gaps + 1


def _corner_breaks(
    points: np.ndarray,
    dirs: np.ndarray,
    corners_xy: np.ndarray,
    gaps: np.ndarray,
    closed: bool,
) -> list[_Break]:
    """Step 2: each corner's point, where the lines through its two sides meet.

    A side is the points up to halfway to the neighbouring corner (at most
    `CORNER_SIDE`); the point right at the corner is left out when there are enough,
    since its pixel mixes both sides. A side of one point is the line through it along
    its crack. O(corners × CORNER_SIDE)."""
    m = len(points)
    count = len(gaps)
    breaks: list[_Break] = []
    for n, g in enumerate(gaps):
        g = int(g)
        if closed:
            prev_gap = int(gaps[n - 1]) - (m if n == 0 else 0)
            next_gap = int(gaps[(n + 1) % count]) + (m if n == count - 1 else 0)
        else:
            prev_gap = int(gaps[n - 1]) if n > 0 else 0
            next_gap = int(gaps[n + 1]) if n + 1 < count else m
        if count == 1 and closed:
            prev_gap, next_gap = g - m, g + m
        wa = max(1, min(CORNER_SIDE, (g - prev_gap) // 2 if n > 0 or closed else g))
        wb = max(1, min(CORNER_SIDE, (next_gap - g) // 2 if n + 1 < count or closed else m - g))
        side_a = np.arange(g - wa, g) % m
        side_b = np.arange(g, g + wb) % m
        if len(side_a) >= 3:
            side_a = side_a[:-1]
        if len(side_b) >= 3:
            side_b = side_b[1:]
        ca, ua = _line(points, dirs, side_a)
        cb, ub = _line(points, dirs, side_b)
        fallback = corners_xy[g % m]
        point = _intersect(ca, ua, cb, ub)
        if point is None or np.hypot(*(point - fallback)) > 1.5:
            point = fallback.astype(np.float64)
        tan_in = _toward(ua, ca - point)
        tan_out = _toward(ub, cb - point)
        breaks.append(_Break(g, point, tan_in, tan_out))
    return breaks


def _line(points: np.ndarray, dirs: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centroid and direction of the least-squares line through points[idx] (a handful
    of points: plain float arithmetic is cheaper than array calls here)."""
    pts = points[idx].tolist()
    count = len(pts)
    mx = sum(p[0] for p in pts) / count
    my = sum(p[1] for p in pts) / count
    if count < 2:
        d = int(dirs[idx[0]])
        return np.array([mx, my]), np.array([(1, 0), (0, 1), (-1, 0), (0, -1)][d], dtype=float)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    syy = sum((p[1] - my) ** 2 for p in pts)
    sxy = sum((p[0] - mx) * (p[1] - my) for p in pts)
    # Principal axis of a 2x2 symmetric matrix in closed form.
    theta = 0.5 * math.atan2(2 * sxy, sxx - syy)
    return np.array([mx, my]), np.array([math.cos(theta), math.sin(theta)])


def _intersect(ca: np.ndarray, ua: np.ndarray, cb: np.ndarray, ub: np.ndarray) -> np.ndarray | None:
    cross = ua[0] * ub[1] - ua[1] * ub[0]
    if abs(cross) < 0.25:
        return None
    diff = cb - ca
    t = (diff[0] * ub[1] - diff[1] * ub[0]) / cross
    return ca + t * ua


def _toward(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return u if float(u @ v) >= 0 else -u


def _smooth_break(points: np.ndarray, g: int) -> _Break:
    """A split point on a smooth closed edge: between points g-1 and g, with the
    tangent of the chord across it."""
    m = len(points)
    point = 0.5 * (points[(g - 1) % m] + points[g % m])
    t = _unit(points[(g + 1) % m] - points[(g - 2) % m])
    return _Break(g, point, -t, t)


def _unit(v: np.ndarray) -> np.ndarray:
    x, y = float(v[0]), float(v[1])
    n = math.hypot(x, y)
    return np.array([x / n, y / n]) if n > 1e-12 else np.array([1.0, 0.0])


def _end_tangent(data: np.ndarray) -> np.ndarray:
    """Tangent leaving data[0], along the chord to a point a few steps on."""
    return _unit(data[min(END_TANGENT_REACH, len(data) - 1)] - data[0])


def fit_runs(
    runs: list[Run], tol: float, progress: Callable[[float], None] | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Step 3 for many runs at once: each run to as few segments as fit within `tol`.

    Greedy from each run's start: a segment reaches as far as one line or cubic still
    fits, and the next one leaves with the data's own tangent there. Greedy reach is
    optimal for covering a run with fewest pieces, given that a shorter piece fits
    whenever a longer one does (near enough for fitting). The reach is searched with
    several probes per round: first the whole run and a doubling sequence of reaches
    (from `MIN_REACH`, or the previous segment's length), then `PROBES` evenly spaced
    reaches between the last success and the first failure. Every round tries all
    probes of all unfinished runs together (`_try`, whole-array work), so the number
    of rounds, not of attempts, sets the Python overhead; only the search bookkeeping
    is per run. O(segments × log(run length) / log(PROBES)) rounds, each attempt on at
    most `FIT_POINTS` points."""
    count = len(runs)
    if count == 0:
        return []
    n = np.array([len(r.data) for r in runs], dtype=np.int64)
    off = np.concatenate([[0], np.cumsum(n)[:-1]])
    pts = np.concatenate([r.data for r in runs])
    t_end = np.array([r.t2 for r in runs], dtype=np.float64)
    t_in = np.array([r.t1 for r in runs], dtype=np.float64)
    tols = tol * np.array([r.slack for r in runs], dtype=np.float64)
    last_l = (n - 1).tolist()
    n_l = n.tolist()
    off_l = off.tolist()
    start = [0] * count
    lo = [1] * count
    hi = list(last_l)
    best = [-1] * count
    best_seg: list[np.ndarray | None] = [None] * count
    best_line = [False] * count
    step = [0] * count
    doubling = [True] * count
    out: list[list[np.ndarray]] = [[] for _ in range(count)]
    out_lines: list[list[bool]] = [[] for _ in range(count)]
    active = list(range(count))
    done = 0
    while active:
        row_run: list[int] = []
        row_cand: list[int] = []
        probes: list[list[int]] = []
        for r in active:
            i = start[r]
            if doubling[r] and step[r] < 0:
                # A later segment: reaches around the previous segment's length, finely
                # enough that one round usually settles it.
                length = -step[r]
                c = sorted({min(i + max(1, round(length * f)), hi[r]) for f in _AROUND} - {i})
                c = [j for j in c if j >= lo[r]]
                step[r] = 2 * length + 1
            elif doubling[r]:
                # The whole run first (a run's first segment only), then doubling reaches.
                s0 = step[r] if step[r] else MIN_REACH
                c = [last_l[r]] if step[r] == 0 else []
                for k in range(PROBES):
                    nxt = min(i + s0 * (1 << k), hi[r])
                    if nxt >= lo[r] and (not c or nxt > c[-1]):
                        c.append(nxt)
                    if nxt >= hi[r]:
                        break
                c.sort()
                step[r] = s0 << PROBES
            else:
                width = hi[r] - lo[r] + 1
                c = sorted({lo[r] + (width * k) // (PROBES + 1) for k in range(1, PROBES + 1)})
            probes.append(c)
            row_run.extend([r] * len(c))
            row_cand.extend(c)
        rr = np.array(row_run, dtype=np.int64)
        ok, seg, line = _try(
            pts,
            off[rr],
            (n - 1)[rr],
            np.array([start[r] for r in row_run], dtype=np.int64),
            np.array(row_cand, dtype=np.int64),
            t_in[rr],
            t_end[rr],
            tols[rr],
        )
        ok_l = ok.tolist()
        line_l = line.tolist()
        keep: list[int] = []
        row = 0
        for r, c in zip(active, probes, strict=True):
            i = start[r]
            first_fail = -1
            whole = False
            for q, j in enumerate(c):
                if ok_l[row + q]:
                    if j == last_l[r]:
                        whole = True
                        best[r], best_seg[r], best_line[r] = j, seg[row + q], line_l[row + q]
                        break
                    if first_fail < 0:
                        best[r], best_seg[r], best_line[r] = j, seg[row + q], line_l[row + q]
                        lo[r] = j + 1
                elif first_fail < 0:
                    first_fail = q
                    hi[r] = j - 1
            row += len(c)
            if not whole:
                if first_fail >= 0:
                    doubling[r] = False
                if doubling[r] and lo[r] <= hi[r]:
                    keep.append(r)
                    continue
                doubling[r] = False
                slack = max(1, (best[r] - i) // 8) if best[r] >= 0 else 1
                if lo[r] <= hi[r] and hi[r] - lo[r] + 1 >= slack:
                    keep.append(r)
                    continue
            # Finish this segment.
            if best[r] < 0:
                p = pts[off_l[r] + i + 1]
                best[r], best_seg[r], best_line[r] = i + 1, np.stack([p, p, p]), True
            out[r].append(np.array(best_seg[r], copy=True))
            out_lines[r].append(bool(best_line[r]))
            b = best[r]
            if b >= last_l[r]:
                done += 1
                continue
            t_in[r] = -_tangent_back(pts[off_l[r] : off_l[r] + n_l[r]], b, t_end[r])
            step[r] = -max(MIN_REACH, b - i)
            start[r] = b
            lo[r], hi[r], best[r] = b + 1, last_l[r], -1
            doubling[r] = True
            keep.append(r)
        active = keep
        if progress is not None:
            progress(done / count)
    return [
        (np.array(out[r]).reshape(-1, 3, 2), np.array(out_lines[r], dtype=bool))
        for r in range(count)
    ]


def _tangent_back(data: np.ndarray, j: int, t_end: np.ndarray) -> np.ndarray:
    """Tangent at data[j] pointing back along the run (the run's own at its end)."""
    n = len(data)
    if j >= n - 1:
        return t_end
    reach = max(1, min(SPLIT_TANGENT_REACH, j, n - 1 - j))
    return _unit(data[j - reach] - data[j + reach])


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
    smoothed, so their neighbours say little more, and the cost stays bounded."""
    span = cand - start
    used = np.minimum(span + 1, FIT_POINTS)
    col = np.arange(FIT_POINTS)[None, :]
    frac = np.minimum(col, (used - 1)[:, None]) / np.maximum(used - 1, 1)[:, None]
    idx = start[:, None] + np.rint(frac * span[:, None]).astype(np.int64)
    data = pts[off[:, None] + idx]
    p0 = data[:, 0]
    p3 = data[:, -1]
    rel = data - p0[:, None]
    chord = p3 - p0
    rms2 = (RMS_SHARE * tol) ** 2
    tol2 = tol * tol
    # Line test (padding repeats the end point: distance 0).
    rx, ry = rel[..., 0], rel[..., 1]
    cx, cy = chord[:, 0:1], chord[:, 1:2]
    length2 = chord[:, 0] ** 2 + chord[:, 1] ** 2
    t = np.clip((rx * cx + ry * cy) / np.maximum(length2, 1e-12)[:, None], 0, 1)
    dx = rx - t * cx
    dy = ry - t * cy
    d2 = dx * dx + dy * dy
    line = (span <= 1) | ((d2.max(axis=1) <= tol2) & (d2.sum(axis=1) <= rms2 * used))
    seg = np.repeat(p3[:, None], 3, axis=1)
    ok = line.copy()
    todo = np.nonzero(~line)[0]
    if len(todo) == 0:
        return ok, seg, line
    # Tangent arriving at the candidate end: the run's own at its end, else the chord
    # across the candidate point.
    j = cand[todo]
    reach = np.maximum(1, np.minimum(SPLIT_TANGENT_REACH, np.minimum(j, last[todo] - j)))
    back = (
        pts[off[todo] + np.maximum(j - reach, 0)]
        - pts[off[todo] + np.minimum(j + reach, last[todo])]
    )
    back /= np.maximum(np.hypot(back[:, 0], back[:, 1]), 1e-12)[:, None]
    t2 = np.where((j >= last[todo])[:, None], t_end[todo], back)
    t1 = t_in[todo]
    sub = rel[todo]
    diff = np.diff(sub, axis=1)
    steps = np.hypot(diff[..., 0], diff[..., 1])
    u = np.concatenate([np.zeros((len(todo), 1)), np.cumsum(steps, axis=1)], axis=1)
    u /= np.maximum(u[:, -1:], 1e-12)
    ch = chord[todo]
    cnt = used[todo]
    bez, emax2, ems2 = _cubic(sub, u, t1, t2, ch, cnt)
    tol2, rms2 = tol2[todo], rms2[todo]
    good = (emax2 <= tol2) & (ems2 <= rms2)
    for _ in range(NEWTON_STEPS):
        retry = ~good & (emax2 < NEWTON_RANGE**2 * tol2)
        if not retry.any():
            break
        r = np.nonzero(retry)[0]
        u2 = _newton(sub[r], bez[r], u[r])
        b2, m2, s2 = _cubic(sub[r], u2, t1[r], t2[r], ch[r], cnt[r])
        u[r], bez[r], emax2[r], ems2[r] = u2, b2, m2, s2
        good = (emax2 <= tol2) & (ems2 <= rms2)
    ok[todo] = good
    seg[todo] = bez + p0[todo, None]
    return ok, seg, line


def _cubic(
    rel: np.ndarray,
    u: np.ndarray,
    t1: np.ndarray,
    t2: np.ndarray,
    chord: np.ndarray,
    used: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least-squares tangent lengths per row (points relative to the start), the
    cubic's control points and end (relative), and its largest and mean squared error.
    x and y are handled as separate (rows, points) arrays: NumPy reductions over a last
    axis of length 2 cost more than the arithmetic."""
    rx, ry = rel[..., 0], rel[..., 1]
    cx, cy = chord[:, 0:1], chord[:, 1:2]
    t1x, t1y = t1[:, 0:1], t1[:, 1:2]
    t2x, t2y = t2[:, 0:1], t2[:, 1:2]
    v = 1.0 - u
    b1 = 3.0 * u * v * v
    b2 = 3.0 * u * u * v
    b3 = u * u * u
    b23 = b2 + b3
    tmpx = rx - b23 * cx
    tmpy = ry - b23 * cy
    c00 = np.einsum("ij,ij->i", b1, b1)
    c11 = np.einsum("ij,ij->i", b2, b2)
    c01 = np.einsum("ij,ij->i", b1, b2) * (t1[:, 0] * t2[:, 0] + t1[:, 1] * t2[:, 1])
    r0 = np.einsum("ij,ij->i", b1, tmpx * t1x + tmpy * t1y)
    r1 = np.einsum("ij,ij->i", b2, tmpx * t2x + tmpy * t2y)
    det = c00 * c11 - c01 * c01
    seg_len = np.hypot(chord[:, 0], chord[:, 1])
    safe = np.abs(det) > 1e-12
    sdet = np.where(safe, det, 1.0)
    a1 = np.where(safe, (r0 * c11 - r1 * c01) / sdet, seg_len / 3)
    a2 = np.where(safe, (c00 * r1 - c01 * r0) / sdet, seg_len / 3)
    eps = 1e-6 * np.maximum(seg_len, 1e-6)
    sane = (a1 > eps) & (a2 > eps) & (a1 < 2 * seg_len) & (a2 < 2 * seg_len)
    a1 = np.where(sane, a1, seg_len / 3)
    a2 = np.where(sane, a2, seg_len / 3)
    c1 = a1[:, None] * t1
    c2 = chord + a2[:, None] * t2
    ex = b1 * c1[:, 0:1] + b2 * c2[:, 0:1] + b3 * cx - rx
    ey = b1 * c1[:, 1:2] + b2 * c2[:, 1:2] + b3 * cy - ry
    e2 = ex * ex + ey * ey
    bez = np.stack([c1, c2, chord], axis=1)
    return bez, e2.max(axis=1), e2.sum(axis=1) / used


def _newton(rel: np.ndarray, bez: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One Newton step per point towards the curve parameter closest to it (rows of
    points relative to the start; `bez` the relative control points and end). x and y
    as separate (rows, points) arrays, as in `_cubic`."""
    v = 1.0 - u
    w = u
    num = np.zeros_like(u)
    den = np.zeros_like(u)
    for axis in (0, 1):
        p1 = bez[:, 0, axis : axis + 1]
        p2 = bez[:, 1, axis : axis + 1]
        p3 = bez[:, 2, axis : axis + 1]
        q = 3 * w * v * v * p1 + 3 * w * w * v * p2 + w**3 * p3 - rel[..., axis]
        q1 = 3 * v * v * p1 + 6 * w * v * (p2 - p1) + 3 * w * w * (p3 - p2)
        q2 = 6 * v * (p2 - 2 * p1) + 6 * w * (p3 - 2 * p2 + p1)
        num += q * q1
        den += q1 * q1 + q * q2
    safe = np.abs(den) > 1e-12
    out = np.clip(u - np.where(safe, num / np.where(safe, den, 1.0), 0.0), 0.0, 1.0)
    out[:, 0] = 0.0
    out[:, -1] = np.where(u[:, -1] >= 1.0, 1.0, out[:, -1])
    return np.maximum.accumulate(out, axis=1)
