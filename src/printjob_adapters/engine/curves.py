"""Step 3 of tracing: one boundary edge's data points to cubic Bézier segments.

An edge arrives as its data points (one per crack, already placed with sub-pixel
accuracy) plus, for an open edge, its two fixed junction points. Fitting runs in three
parts:

1. Corners: the turning angle between the chords reaching `CORNER_SPAN` points back and
   forth from every gap between two data points, kept where it is a local maximum above
   `CORNER_ANGLE`. Tiny shapes (a dot, a one-pixel line end) take every crack turn as a
   corner instead, so they stay the shapes they are.
2. Corner points: each corner sits where the straight lines fitted to the points on its
   two sides meet, so a corner is sharp and lands where the two sides say it is, not on
   the pixel grid.
3. Curves: each run between corners (or junctions) is fitted with the least-squares
   cubic for fixed end tangents, refined by Newton reparametrisation and split at the
   worst point until within `tolerance`; a run that is straight within the tolerance is
   one line.

Cost is O(points × log(points)) per edge, with all per-point work in NumPy.
"""

from __future__ import annotations

import itertools

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
RMS_SHARE = 0.35
#: Most points a single fit attempt looks at.
FIT_POINTS = 48
#: First reach (points) tried for a segment.
MIN_REACH = 8


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


def edge_runs(
    points: np.ndarray,
    dirs: np.ndarray,
    corners_xy: np.ndarray,
    closed: bool,
    start: np.ndarray | None,
    end: np.ndarray | None,
) -> tuple[np.ndarray, list[Run]]:
    """Steps 1-2 for one edge: its start point and its runs between fixed points.

    `points` (m, 2) are the data points, `dirs` (m,) their crack directions,
    `corners_xy` (m, 2) the crack corner before each point (the fallback corner
    position); `start` and `end` are the junction points of an open edge."""
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
        runs.append(Run(data, t1, t2))
    return breaks[0].point, runs


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
    """Centroid and direction of the least-squares line through points[idx]."""
    pts = points[idx]
    centre = pts.mean(axis=0)
    if len(pts) < 2:
        d = int(dirs[idx[0]])
        return centre, np.array([(1, 0), (0, 1), (-1, 0), (0, -1)][d], dtype=np.float64)
    dev = pts - centre
    cov = dev.T @ dev
    # Principal axis of a 2x2 symmetric matrix in closed form.
    theta = 0.5 * np.arctan2(2 * cov[0, 1], cov[0, 0] - cov[1, 1])
    return centre, np.array([np.cos(theta), np.sin(theta)])


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
    n = float(np.hypot(v[0], v[1]))
    return v / n if n > 1e-12 else np.array([1.0, 0.0])


def _end_tangent(data: np.ndarray) -> np.ndarray:
    """Tangent leaving data[0], from the mean direction to the next few points."""
    j = min(4, len(data) - 1)
    return _unit(data[1 : j + 1].mean(axis=0) - data[0])


FIT_RUNS_PLACEHOLDER


def _line_error(data: np.ndarray, rms_tol: float) -> float:
    """Largest distance of the points from the chord (segment) between the ends, or
    infinity when their root-mean-square distance exceeds `rms_tol`."""
    rel = data - data[0]
    dx, dy = float(rel[-1, 0]), float(rel[-1, 1])
    length2 = dx * dx + dy * dy
    x, y = rel[:, 0], rel[:, 1]
    if length2 < 1e-12:
        return float(np.sqrt((x * x + y * y).max()))
    t = np.clip((x * dx + y * dy) / length2, 0.0, 1.0)
    ox = x - t * dx
    oy = y - t * dy
    d2 = ox * ox + oy * oy
    if float(d2.mean()) > rms_tol * rms_tol:
        return float("inf")
    return float(np.sqrt(d2.max()))


def _chord_params(data: np.ndarray) -> np.ndarray:
    d = np.diff(data, axis=0)
    u = np.empty(len(data))
    u[0] = 0.0
    np.cumsum(np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]), out=u[1:])
    return u / u[-1] if u[-1] > 0 else np.linspace(0.0, 1.0, len(data))


def _attempt(
    data: np.ndarray, u: np.ndarray, tx1: float, ty1: float, tx2: float, ty2: float
) -> tuple[np.ndarray, float, float]:
    """The least-squares cubic with fixed ends and end tangents for parameters u (only
    the two tangent lengths are free), and its largest and root-mean-square errors. Written out on the point
    coordinates: about twenty vector operations."""
    x0, y0 = float(data[0, 0]), float(data[0, 1])
    cx, cy = float(data[-1, 0]) - x0, float(data[-1, 1]) - y0
    rx = data[:, 0] - x0
    ry = data[:, 1] - y0
    v = 1.0 - u
    b1 = 3.0 * u * v * v
    b2 = 3.0 * u * u * v
    b3 = u * u * u
    s23 = b2 + b3
    tx = rx - s23 * cx
    ty = ry - s23 * cy
    c00 = float(b1 @ b1)
    c11 = float(b2 @ b2)
    c01 = float(b1 @ b2) * (tx1 * tx2 + ty1 * ty2)
    r0 = float(b1 @ (tx * tx1 + ty * ty1))
    r1 = float(b2 @ (tx * tx2 + ty * ty2))
    det = c00 * c11 - c01 * c01
    seg_len = float(np.hypot(cx, cy))
    a1 = a2 = seg_len / 3.0
    if abs(det) > 1e-12:
        a1 = (r0 * c11 - r1 * c01) / det
        a2 = (c00 * r1 - c01 * r0) / det
    eps = 1e-6 * max(seg_len, 1e-6)
    if not (eps < a1 < 2 * seg_len and eps < a2 < 2 * seg_len):
        a1 = a2 = seg_len / 3.0
    p1x, p1y = a1 * tx1, a1 * ty1
    p2x, p2y = cx + a2 * tx2, cy + a2 * ty2
    ex = b1 * p1x + b2 * p2x + b3 * cx - rx
    ey = b1 * p1y + b2 * p2y + b3 * cy - ry
    d2 = ex * ex + ey * ey
    bez = np.array([[x0, y0], [x0 + p1x, y0 + p1y], [x0 + p2x, y0 + p2y], [x0 + cx, y0 + cy]])
    return bez, float(np.sqrt(d2.max())), float(np.sqrt(d2.mean()))


def _reparametrise(data: np.ndarray, bez: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One Newton step per point towards the curve parameter closest to it."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = bez.tolist()
    v = 1.0 - u
    b0, b1, b2, b3 = v * v * v, 3.0 * u * v * v, 3.0 * u * u * v, u * u * u
    qx = b0 * x0 + b1 * x1 + b2 * x2 + b3 * x3 - data[:, 0]
    qy = b0 * y0 + b1 * y1 + b2 * y2 + b3 * y3 - data[:, 1]
    vv, uv, uu = 3.0 * v * v, 6.0 * u * v, 3.0 * u * u
    dx = vv * (x1 - x0) + uv * (x2 - x1) + uu * (x3 - x2)
    dy = vv * (y1 - y0) + uv * (y2 - y1) + uu * (y3 - y2)
    ddx = 6.0 * (v * (x2 - 2 * x1 + x0) + u * (x3 - 2 * x2 + x1))
    ddy = 6.0 * (v * (y2 - 2 * y1 + y0) + u * (y3 - 2 * y2 + y1))
    num = qx * dx + qy * dy
    den = dx * dx + dy * dy + qx * ddx + qy * ddy
    safe = np.abs(den) > 1e-12
    out = np.clip(u - np.where(safe, num / np.where(safe, den, 1.0), 0.0), 0.0, 1.0)
    out[0], out[-1] = 0.0, 1.0
    return np.maximum.accumulate(out)
