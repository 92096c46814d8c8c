"""The design's silhouette, for background removal: what the background may not enter.

A region of the background's colour that is part of the design (the white stripes of a
cone, a white gap between two parts of a badge) has no edge against the background: only
the shape of the design around it tells. The silhouette is the design mask

1. closed over gaps up to `2 * closing_radius` pixels (slits between touching parts,
   anti-aliasing and JPEG ringing along an edge), with its holes filled (a region enclosed
   by the design is inside it), and
2. with the bands between two stacked parts of one outline bridged (`stripe_bridges`): when
   the outer edges of two parts lie on one straight line on both sides of the gap between
   them, as the sides of a cone do across its stripes, that line is drawn in as outline.
   The two lines must converge, as the sides of a tapering object do: letters side by side
   do not qualify, as their outlines meet the line joining them at a point (a rounded top)
   or, where they run along it (flat-topped stems), the top and bottom lines are parallel.
   Stripes across an object with parallel sides (a striped pole) are not bridged for the
   same reason: that is the price of never keeping the gaps of a word.

Of the closed mask only what it encloses joins the silhouette, never the closing's own
bridges: the gap between two letters is closed but encloses nothing, so it stays outside.

SciPy's `ndimage` is imported on first use, so that a trace that keeps its background
never loads it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]

#: Closing radius: one pixel per this many pixels of the design's longer side, within
#: `RADIUS_BOUNDS` (6 px on a 512-px logo: a region the design encloses but for slits up
#: to 12 px wide is inside the silhouette).
RADIUS_PER = 80
RADIUS_BOUNDS = (1, 12)
#: The design parts considered for stripe bridging: the largest few, each at least this
#: share of the design.
BRIDGE_PARTS = 12
BRIDGE_MIN_SHARE = 0.01
#: Both outer edges must run along the bridging line for at least this share of the gap's
#: length on each side, within `LINE_TOLERANCE` pixels of it or `LINE_SLACK` of the line's
#: length if more (JPEG noise, blur and the pixel steps of a slanted edge stay within it).
EDGE_SUPPORT = 0.4
LINE_TOLERANCE = 2.5
LINE_SLACK = 0.01
#: Depth (pixels) peeled off the design before it is split into parts for bridging (one
#: ring of 8 neighbours).
CORE_DEPTH = 1
#: The sides of a gap: outline points within this many times the gap's width of the other
#: part (`_facing`), from at most `FACING_POINTS` points per part.
FACING = 1.8
FACING_POINTS = 600
#: Least angle (degrees) between the two bridging lines: the sides of a tapering object.
MIN_CONVERGENCE = 5.0
#: Depth, in line tolerances, of a part's side facing a bridging line, measured to tell a
#: straight side (its whole length lies along the line) from a curve touching it (20 px at
#: the least tolerance).
SIDE_DEPTH = 8.0
#: The gap must be at least this share of the distance between the two bridging lines: a
#: band across the design, not a slit between two letters of a word (a slit up to
#: `2 * closing_radius` is closed anyway).
BAND_SHARE = 0.1


def closing_radius(design: BoolArray) -> int:
    """The closing radius for `design` (see `RADIUS_PER`)."""
    rows = np.flatnonzero(design.any(axis=1))
    cols = np.flatnonzero(design.any(axis=0))
    if len(rows) == 0:
        return RADIUS_BOUNDS[0]
    extent = max(rows[-1] - rows[0], cols[-1] - cols[0]) + 1
    low, high = RADIUS_BOUNDS
    return int(np.clip(round(extent / RADIUS_PER), low, high))


def design_silhouette(design: BoolArray, bridges: bool = True) -> BoolArray:
    """The silhouette of `design` (module docstring): the design and every region it
    encloses once its gaps are closed and its stripes bridged. The closing's own bridges
    are not part of it, so a gap between two letters (closed, but enclosing nothing) stays
    outside; its pixels go to the enclosed region or the outside, whichever is nearer.
    `bridges=False` leaves the stripe bridging out (a cheaper, rougher silhouette).
    Cost: O(N) for up to six chamfer distance transforms and a hole filling, plus the
    stripe bridging (`stripe_bridges`)."""
    from scipy import ndimage

    if not design.any():
        return design.copy()
    radius = closing_radius(design)
    pad = radius + 1
    padded = np.pad(design | stripe_bridges(design) if bridges else design, pad)
    grown = near(padded, radius)
    closed = ~near(~grown, radius)
    closed = closed[pad:-pad, pad:-pad] | design
    filled = ndimage.binary_fill_holes(closed)
    enclosed = filled & ~closed
    between = closed & ~design
    if enclosed.any() and between.any():
        # The closing's bridges split between the enclosed region and the outside, each
        # pixel to the nearer, so an enclosed region keeps its corners up to the bridge.
        to_outside = distance_to(~filled)
        to_enclosed = distance_to(enclosed)
        enclosed |= between & (to_enclosed < to_outside)
    silhouette: BoolArray = design | enclosed
    return silhouette


def distance_to(mask: BoolArray, metric: str = "taxicab") -> IntArray:
    """Chamfer distance (pixel steps, `metric` "taxicab" or "chessboard") from every pixel
    to the nearest True pixel of `mask`; larger than the image where `mask` is empty.
    O(N), some ten times faster than SciPy's Euclidean transform."""
    from scipy import ndimage

    if not mask.any():
        return np.full(mask.shape, sum(mask.shape) + 1, dtype=np.int32)
    steps: IntArray = ndimage.distance_transform_cdt(~mask, metric=metric).astype(np.int32)
    return steps


def near(mask: BoolArray, radius: int) -> BoolArray:
    """Pixels within `radius` of `mask` under an octagon (at most `radius` steps by
    chessboard and 1.5 `radius` by taxicab): the mask dilated by a near-disc. O(N)."""
    within: BoolArray = (distance_to(mask, "chessboard") <= radius) & (
        distance_to(mask) <= 1.5 * radius
    )
    return within


def label_components(mask: BoolArray, diagonal: bool = False) -> tuple[IntArray, int]:
    """Connected components of `mask` (1..count, 0 outside), 4-connected unless `diagonal`."""
    from scipy import ndimage

    structure = np.ones((3, 3), bool) if diagonal else None
    regions, count = ndimage.label(mask, structure=structure)
    return regions.astype(np.int32), int(count)


def border_contacts(regions: IntArray, count: int) -> tuple[IntArray, IntArray]:
    """Per region 1..count (index 0 unused): how many of its pixel sides lie on the image
    border, and how many face a pixel of another region or of none. O(N)."""
    border = np.zeros(count + 1, dtype=np.int64)
    for edge in (regions[0], regions[-1], regions[:, 0], regions[:, -1]):
        border += np.bincount(edge, minlength=count + 1)
    other = np.zeros(count + 1, dtype=np.int64)
    for a, b in (
        (regions[1:], regions[:-1]),
        (regions[:, 1:], regions[:, :-1]),
    ):
        differ = a != b
        other += np.bincount(a[differ], minlength=count + 1)
        other += np.bincount(b[differ], minlength=count + 1)
    border[0] = other[0] = 0
    return border.astype(np.int32), other.astype(np.int32)


def stripe_bridges(design: BoolArray) -> BoolArray:
    """The bands between pairs of design parts whose outer edges continue one another in a
    straight line on both sides of the gap (module docstring), as one mask. Cost: O(N) to
    label the parts, O(P²·h) hulls over the P <= `BRIDGE_PARTS` largest parts with h hull
    vertices, and a half-plane test over each bridged pair's bounding box."""
    # The parts' cores: JPEG noise or anti-aliasing may tie two parts together across a
    # stripe with a thread a pixel or two wide; the cores keep them apart.
    core = distance_to(~design, "chessboard") > CORE_DEPTH
    parts, count = label_components(core, diagonal=True)
    out = np.zeros_like(design)
    if count < 2:
        return out
    area = np.bincount(parts.ravel(), minlength=count + 1)
    area[0] = 0
    order = np.argsort(area)[::-1][:BRIDGE_PARTS]
    order = order[area[order] >= max(16, BRIDGE_MIN_SHARE * area.sum())]
    outlines = [_outline_points(parts, int(i)) for i in order]
    for a in range(len(order)):
        for b in range(a + 1, len(order)):
            near_a, near_b = _facing(outlines[a], outlines[b])
            hull_a, hull_b = _convex_hull(near_a), _convex_hull(near_b)
            for p, q in _stacked(hull_a, hull_b, near_a, near_b):
                _draw_segment(out, p, q)
    return out


def _facing(out_a: FloatArray, out_b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The outline points of each part within `FACING` times the parts' closest approach of
    the other part: the two sides of the gap between them, without the far parts of either
    (the wide foot of a cone, which would hide the line of its sides). O(n·m) over outline
    points, thinned to at most `FACING_POINTS` per part."""
    a = out_a[:: max(1, len(out_a) // FACING_POINTS)]
    b = out_b[:: max(1, len(out_b) // FACING_POINTS)]
    distance = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2))
    to_b, to_a = distance.min(axis=1), distance.min(axis=0)
    reach = FACING * max(float(to_b.min()), 1.0)
    return a[to_b <= reach], b[to_a <= reach]


def _outline_points(parts: IntArray, index: int) -> FloatArray:
    """The first and last pixel centre (x, y) of part `index` on each of its rows and
    columns: every vertex of its convex hull is among them, and they sample its outline."""
    ys, xs = np.nonzero(parts == index)
    points = []
    for major, minor, swap in ((ys, xs, False), (xs, ys, True)):
        order = np.lexsort((minor, major))
        m, n = major[order], minor[order]
        first = np.r_[True, m[1:] != m[:-1]]
        last = np.r_[m[1:] != m[:-1], True]
        for pick in (first, last):
            pair = (n[pick], m[pick]) if not swap else (m[pick], n[pick])
            points.append(np.stack(pair, axis=1))
    stacked: FloatArray = np.unique(np.concatenate(points), axis=0).astype(np.float64)
    return stacked


def _convex_hull(points: FloatArray) -> FloatArray:
    """Convex hull vertices (counter-clockwise in x-right, y-down terms: clockwise on
    screen), Andrew's monotone chain; collinear points dropped. O(n log n)."""
    pts = np.unique(points, axis=0)
    if len(pts) <= 2:
        return pts

    def chain(seq: Any) -> list[Any]:
        hull: list[Any] = []
        for p in seq:
            while len(hull) >= 2 and _cross(hull[-2], hull[-1], p) <= 0:
                hull.pop()
            hull.append(p)
        return hull

    rows = [tuple(p) for p in pts]
    lower = chain(rows)
    upper = chain(rows[::-1])
    return np.array(lower[:-1] + upper[:-1], dtype=np.float64)


def _cross(o: Any, a: Any, b: Any) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def _stacked(
    hull_a: FloatArray, hull_b: FloatArray, out_a: FloatArray, out_b: FloatArray
) -> list[tuple[FloatArray, FloatArray]]:
    """The two bridging segments when the hull of both parts has exactly two edges from one
    part to the other, along each the two parts' outlines run on for at least
    `EDGE_SUPPORT` of the gap, and the gap is a band (`BAND_SHARE`); else none."""
    if len(hull_a) < 3 or len(hull_b) < 3:
        return []
    union = _convex_hull(np.concatenate([hull_a, hull_b]))
    in_a = _member(union, hull_a)
    bridges = [i for i in range(len(union)) if in_a[i] != in_a[(i + 1) % len(union)]]
    if len(bridges) != 2:
        return []
    gaps, middles = [], []
    for i in bridges:
        p, q = union[i], union[(i + 1) % len(union)]
        start, end = (out_a, out_b) if in_a[i] else (out_b, out_a)
        gap = _supported_gap(p, q, start, end)
        if gap is None:
            return []
        gaps.append(gap)
        middles.append((p + q) / 2)
    span = float(np.hypot(*(middles[0] - middles[1])))
    if min(gaps) < BAND_SHARE * span or not _converging(union, bridges):
        return []
    return [(union[i], union[(i + 1) % len(union)]) for i in bridges]


def _converging(hull: FloatArray, bridges: list[int]) -> bool:
    """Whether the two bridging edges of `hull` meet at an angle of `MIN_CONVERGENCE`
    degrees or more: the sides of a tapering object (a cone), not the top and bottom lines
    of a row of letters, which are parallel."""
    directions = [hull[(i + 1) % len(hull)] - hull[i] for i in bridges]
    a, b = (d / np.hypot(*d) for d in directions)
    sine = abs(float(a[0] * b[1] - a[1] * b[0]))
    return bool(sine >= np.sin(np.deg2rad(MIN_CONVERGENCE)))


def _member(points: FloatArray, of: FloatArray) -> BoolArray:
    """Which rows of `points` are rows of `of`."""
    same = (points[:, None, :] == of[None, :, :]).all(axis=2)
    member: BoolArray = same.any(axis=1)
    return member


def _supported_gap(
    p: FloatArray, q: FloatArray, near_p: FloatArray, near_q: FloatArray
) -> float | None:
    """The gap's length on segment p->q when the outline `near_p` runs along it from p and
    `near_q` runs along it up to q, each for at least `EDGE_SUPPORT` of that gap and of its
    own part's extent along the line; else None."""
    direction = q - p
    length = float(np.hypot(*direction))
    if length < 1.0:
        return None
    unit = direction / length
    normal = np.array([-unit[1], unit[0]])
    tolerance = max(LINE_TOLERANCE, LINE_SLACK * length)

    def along(points: FloatArray) -> FloatArray:
        rel = points - p
        found: FloatArray = (rel @ unit)[np.abs(rel @ normal) <= tolerance]
        return found

    # The line may pass a part's corner next to the gap (a hull vertex a fraction of a
    # pixel proud of the side), so each part's run along it is measured both ways.
    t_p, t_q = along(near_p), along(near_q)
    if len(t_p) == 0 or len(t_q) == 0:
        return None
    reach_p, reach_q = float(np.ptp(t_p)), float(np.ptp(t_q))
    gap = float(t_q.min() - t_p.max())
    if gap <= 1.0 or min(reach_p, reach_q) < EDGE_SUPPORT * gap:
        return None
    # A straight side, not a curve touching the line: a disc meets its tangent for a
    # short stretch of its width near the line, a cone's piece along most of its side.
    depth = SIDE_DEPTH * tolerance
    if reach_p < EDGE_SUPPORT * _side(near_p, p, unit, normal, depth) or (
        reach_q < EDGE_SUPPORT * _side(near_q, p, unit, normal, depth)
    ):
        return None
    return gap


def _side(
    points: FloatArray, origin: FloatArray, unit: FloatArray, normal: FloatArray, depth: float
) -> float:
    """The extent along `unit` of the outline `points` lying within `depth` pixels of the
    line through `origin`: the length of the part's side facing the line."""
    rel = points - origin
    near = np.abs(rel @ normal) <= depth
    return float(np.ptp(rel[near] @ unit)) if near.any() else 0.0


def _draw_segment(out: BoolArray, p: FloatArray, q: FloatArray) -> None:
    """Set the pixels on segment p->q (x, y pixel centres) in `out`, 4-connected so that
    no 4-connected region crosses it. O(length)."""
    steps = int(np.ceil(2 * np.abs(q - p).sum())) + 1
    t = np.linspace(0.0, 1.0, steps)
    xs = np.rint(p[0] + t * (q[0] - p[0])).astype(int)
    ys = np.rint(p[1] + t * (q[1] - p[1])).astype(int)
    h, w = out.shape
    inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
    xs, ys = xs[inside], ys[inside]
    out[ys, xs] = True
    # Close diagonal steps: where consecutive pixels differ in both x and y, add the corner.
    diagonal = (np.diff(xs) != 0) & (np.diff(ys) != 0)
    out[ys[:-1][diagonal], xs[1:][diagonal]] = True
