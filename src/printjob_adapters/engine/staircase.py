"""Hard-edged runs: staircases smoothed within the half pixel their pixels allow.

An aliased boundary (a GIF logo, MS-Paint art, a nearest-neighbour resize, a
screenshot) has no mixed pixels: every pixel is one face or the other, so its data points
are the bare crack midpoints, and a curve's outline is a staircase. All the pixels say
is that the true outline crosses the line between the two pixel centres either side of
each crack: anywhere within half a pixel of the crack, along its normal (potrace's
reading of a bitmap). The light binomial smoothing every run gets (`curves._smooth`)
leaves the long treads of a large curve in place, and the fitting then follows them: a
300-px aliased circle came out as 180 segments with bumps at 4x.

So the inner points of long hard stretches are smoothed here instead, by local
least-squares quadratics (`_local_quadratic`, Savitzky-Golay where the window is
centred): a parabola comes through such a filter unchanged, and so does a circle's arc
to second order, so a wide window takes the stairs out without shrinking the curve
(plain averaging over the same window shrank a 60-px circle by over a pixel). Each point
is then projected back into its tube: it never moves more than its reach
(`subpixel.STAIR_REACH`, just under half a pixel) along its crack's normal, so the
smoothed points never cross a pixel centre (the fitting's own tolerance comes on top).

Steps at scale: a stretch's window grows with the square root of its length (a digital
circle of radius r has treads up to about 2 sqrt(2r) pixels long and about 8r cracks
round), and stretches shorter than `MIN_STRETCH` points are left to the light pass: a
sprite's or a small word's outline is short stretches of short, irregular steps between
real corners, and those steps are its detail, not the noise of a curve. Corners and
junctions end stretches and stay fixed.

Cost: O(points × 2 MAX_HALF × SG_PASSES) over the points of long hard stretches only;
nothing for art placed from anti-aliasing (every edge's reach is 0, and `curves` does
not call in).
"""

from __future__ import annotations

import numpy as np

from printjob_adapters.engine.boundaries import DX, DY

#: Window half-width (points) of the local fits: this share of the square root of the
#: stretch's length, within bounds.
WINDOW_SHARE = 1.0
MIN_HALF = 5
MAX_HALF = 48
#: Most turning (radians) between the chords spanning a window's two halves, and the
#: factor a window too wide for it is narrowed by.
MAX_TURN = 0.5
NARROW = 0.75
_NARROWINGS = 8
#: Passes of the local fits (a second takes out what the first's side lobes leave).
SG_PASSES = 2
#: Shortest stretch (points) smoothed here: a circle of radius 5 is about 40 cracks
#: round, a 14-px letter's strokes between their corners fewer.
MIN_STRETCH = 40
#: Points next to an open stretch's fixed ends (a corner, a junction) left out of the
#: windows (they take the value their neighbours' fit gives them there): the first
#: crack after a corner may run across the stretch (the end of a stroke two pixels
#: wide), not along it.
END_KEEP = 2
#: No window covers more than this share of a closed stretch, which would round a small
#: closed shape off towards fewer sides.
SPAN_SHARE = 8


def smooth_stairs(
    data: np.ndarray,
    dirs: np.ndarray,
    first: np.ndarray,
    last: np.ndarray,
    active: np.ndarray,
    reach: np.ndarray,
    cyclic: np.ndarray | None = None,
) -> np.ndarray:
    """In place: the `active` rows of `data` smoothed within the tube of half-width
    `reach` (per row: `subpixel.STAIR_REACH`, less along a stroke one pixel thick)
    around where they are now (the crack midpoints), along the normal of their crack
    direction `dirs`. Each row belongs to a stretch of rows `first..last`: an open
    stretch (a run, whose two ends are fixed points and not active) or, where `cyclic`,
    a closed edge without corners, smoothed all the way round. Returns which rows were
    smoothed (those of stretches of at least `MIN_STRETCH` points). O(their points ×
    MAX_HALF)."""
    span_all = last - first + 1
    done: np.ndarray = active & (span_all >= MIN_STRETCH)
    rows = np.nonzero(done)[0]
    if len(rows) == 0:
        return done
    lo, hi = first[rows], last[rows]
    loop = np.zeros(len(rows), dtype=bool) if cyclic is None else cyclic[rows]
    centre = data[rows].copy()
    d = dirs[rows]
    tangent = np.stack([DX[d], DY[d]], axis=1).astype(np.float64)
    span = hi - lo + 1
    half = np.clip((WINDOW_SHARE * np.sqrt(span)).astype(np.int64), MIN_HALF, MAX_HALF)
    half = np.minimum(half, span // SPAN_SHARE)
    half = _within_turn(data, rows, lo, span, loop, half)
    width = reach[rows]
    out = data
    for _ in range(SG_PASSES):
        out = _local_quadratic(out, rows, lo, span, loop, half)
    data[rows] = _into_tube(out[rows], centre, tangent, width)
    return done


def _within_turn(
    data: np.ndarray,
    rows: np.ndarray,
    lo: np.ndarray,
    span: np.ndarray,
    loop: np.ndarray,
    half: np.ndarray,
) -> np.ndarray:
    """Each row's half-width, narrowed (by `NARROW` at a time, to `MIN_HALF` at least)
    until the chords reaching that far back and forth from it turn by at most
    `MAX_TURN`: a quadratic follows a gentle arc over its window, not a straight side
    running into a tight one (a pill's ends). O(rows × log(MAX_HALF / MIN_HALF))."""
    place = rows - lo
    out = half.copy()
    for _ in range(_NARROWINGS):
        back = _row_at(place - out, lo, span, loop)
        ahead = _row_at(place + out, lo, span, loop)
        u = data[rows] - data[back]
        v = data[ahead] - data[rows]
        turn = np.arctan2(np.abs(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]), (u * v).sum(axis=1))
        wide = (turn > MAX_TURN) & (out > MIN_HALF)
        if not wide.any():
            break
        out = np.where(wide, np.maximum(MIN_HALF, (out * NARROW).astype(np.int64)), out)
    return out


def _row_at(offset: np.ndarray, lo: np.ndarray, span: np.ndarray, loop: np.ndarray) -> np.ndarray:
    """The data row `offset` points into each stretch (first row `lo`, `span` points):
    round a loop, clamped to an open stretch's ends. O(rows)."""
    row: np.ndarray = lo + np.where(loop, offset % span, np.clip(offset, 0, span - 1))
    return row


def _local_quadratic(
    data: np.ndarray,
    rows: np.ndarray,
    lo: np.ndarray,
    span: np.ndarray,
    loop: np.ndarray,
    half: np.ndarray,
) -> np.ndarray:
    """A copy of `data` with each of `rows` replaced by the value at that row of the
    least-squares quadratic through the `2 half + 1` points around it. A loop's window
    wraps round it; an open stretch's window stays within its inner points (its fixed
    ends are left out: a corner at the tip of a stroke two pixels wide does not lie on
    either side's line) and slides inwards near them, so the points next to a corner
    are smoothed as widely as the others and a straight side stays straight up to it.
    The fit is solved per row from the window's moments. O(rows × max(half))."""
    out = data.copy()
    inner_first = np.where(loop, 0, 1 + END_KEEP)
    inner_last = np.where(loop, span - 1, span - 2 - END_KEEP)
    place = rows - lo
    # Window start (offset from the row) for open stretches: centred, slid inside.
    shift = np.where(
        loop,
        -half,
        np.clip(-half, inner_first - place, inner_last - place - 2 * half),
    )
    moments = np.zeros((5, len(rows)))
    sums = np.zeros((3, len(rows), 2))
    for k in range(int(2 * half.max(initial=0)) + 1):
        t = (shift + k).astype(np.float64)
        use = (k <= 2 * half).astype(np.float64)
        value = data[_row_at(place + shift + k, lo, span, loop)]
        power = use
        for m in range(5):
            moments[m] += power
            if m < 3:
                sums[m] += power[:, None] * value
            power = power * t
    # Normal equations of y = c0 + c1 t + c2 t^2; the row's own value is c0.
    s0, s1, s2, s3, s4 = moments
    det = s0 * (s2 * s4 - s3 * s3) - s1 * (s1 * s4 - s3 * s2) + s2 * (s1 * s3 - s2 * s2)
    ok = np.abs(det) > 1e-9
    det = np.where(ok, det, 1.0)
    c_y0 = (s2 * s4 - s3 * s3) / det
    c_y1 = -(s1 * s4 - s2 * s3) / det
    c_y2 = (s1 * s3 - s2 * s2) / det
    fitted = c_y0[:, None] * sums[0] + c_y1[:, None] * sums[1] + c_y2[:, None] * sums[2]
    out[rows] = np.where(ok[:, None], fitted, data[rows])
    return out


def _into_tube(
    points: np.ndarray, centre: np.ndarray, tangent: np.ndarray, width: np.ndarray
) -> np.ndarray:
    """`points` moved back to within `width` of `centre` along the normal of `tangent`
    (their move along the crack is kept). O(n)."""
    move = points - centre
    along = move[:, 0] * tangent[:, 0] + move[:, 1] * tangent[:, 1]
    across = move[:, 1] * tangent[:, 0] - move[:, 0] * tangent[:, 1]
    across = np.clip(across, -width, width)
    normal = np.stack([-tangent[:, 1], tangent[:, 0]], axis=1)
    out: np.ndarray = centre + along[:, None] * tangent + across[:, None] * normal
    return out
