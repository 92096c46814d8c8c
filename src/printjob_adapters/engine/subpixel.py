"""Step 2 of tracing: sub-pixel placement of the boundary from anti-aliased pixels.

A pixel on the boundary between faces of colours P and Q whose colour is c ≈ a·P +
(1 - a)·Q is covered to the fraction a by P's face. For each boundary crack the pixels on
its two sides tell how far the true edge lies from the crack: a deficit (1 - a) on the
left pixel moves it into the left pixel, a coverage a of the left colour in the right
pixel moves it into the right one. Colours are compared in premultiplied RGBA, so the
same rule covers edges against transparency (there alpha is the coverage) and against a
removed opaque background.

The crack midpoints, moved along their normals by these amounts, are the data points the
curves are fitted to. A junction moves to the point nearest the lines fitted through the
first data points of the edges meeting there (staying on the image border if it is on
it), so the shared end points of neighbouring edges are sub-pixel too.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

import numpy as np

from printjob_adapters.engine.boundaries import (
    _LEFT_DCOL,
    _LEFT_DROW,
    _RIGHT_DCOL,
    _RIGHT_DROW,
    DX,
    DY,
    OUTSIDE,
    BoundaryGraph,
)

#: Largest shift of a crack (pixels): a well-segmented edge never lies further than half
#: a pixel from its crack, and the cap keeps the two sides of a thin line from crossing.
MAX_SHIFT = 0.5
#: Least width (pixels) of a stroke one pixel thick, whatever its anti-aliasing says:
#: 8-px text and faint hairlines cover less than a pixel but must still print.
MIN_STROKE = 0.7
#: Largest inward shift of either side of such a stroke.
THIN_SHIFT = (1.0 - MIN_STROKE) / 2
#: Fitting-tolerance multiplier of the edges along such strokes (`thin_slack`).
THIN_SLACK = 0.5
#: Outward lean (pixels) of outlines against left-out (transparent) faces.
VOID_LEAN = 0.025
#: Data points per edge end fitted for junction placement.
JUNCTION_REACH = 6
#: Largest junction move from its crack corner (pixels, per axis): under half a pixel,
#: so neighbouring junctions (one pixel apart at least) never trade places.
JUNCTION_SHIFT = 0.45
#: Largest slide of a junction along the image border (pixels).
BORDER_SLIDE = 0.95
#: Weight of the image border line and of the pull to the crack corner.
BORDER_WEIGHT = 1000.0
PULL = 0.05
#: Largest shift (pixels, besides the lean) of a crack whose two pixels are both wholly
#: their faces' colours: an edge all of whose cracks are such is hard-edged (aliased).
HARD_SHIFT = 0.02
#: How far the data points of a hard edge may move along their normals when its
#: staircase is smoothed (`staircase`): just under the half pixel to the pixel centres,
#: and a little less along a stroke one pixel thick. Both sides of such a stroke are
#: staircases of one line half a pixel either side of its middle, smoothed over the
#: same windows by the same linear fits, so they move alike and the stroke keeps its
#: width (1-px lines at shallow angles traced 0.84-1.25 px wide, 0.88-1.42 as stairs);
#: the smaller reach is the margin where they do not (near its ends). At 0.15 (the
#: most a stroke may narrow on each side, `THIN_SHIFT`) a 1-px line at a shallow angle
#: could not be straightened.
STAIR_REACH = 0.45
THIN_STAIR_REACH = 0.35
#: Colour distance (0..255 RGBA units) below which two neighbours are too alike for
#: their mixing ratio to be trusted; the shift fades out towards zero contrast.
FULL_CONTRAST = 48.0


def face_colors(graph: BoundaryGraph, rgba: np.ndarray, palette: np.ndarray) -> np.ndarray:
    """Premultiplied RGBA (0..255) of every face: its palette colour, opaque; for
    left-out faces the median of the left-out pixels (transparent, or the removed
    background colour; `rgba` is the decoded input); NaN for the outside. O(pixels)
    once, O(faces) after."""
    labels = graph.face_label
    colors = np.full((len(labels), 4), np.nan)
    painted = labels >= 0
    colors[painted, :3] = palette[labels[painted]]
    colors[painted, 3] = 255.0
    void = labels == -1
    if void.any():
        colors[void] = _left_out_colour(rgba, _left_out_pixels(graph, void))
    return colors


def _left_out_pixels(graph: BoundaryGraph, void: np.ndarray) -> np.ndarray:
    """The (H, W) mask of the pixels of the `void` faces, laid out from the row runs
    inside the padding ring (each run's flag repeated along it; the ring's runs start
    in its first or last column and are left out, so the mask comes out unpadded and
    contiguous) rather than looked up pixel by pixel in the face map. O(pixels), one
    pass."""
    length = np.diff(np.append(graph.run_start, graph.faces.size))
    column = graph.run_start % (graph.width + 2)
    inside = (column != 0) & (column != graph.width + 1)
    mask: np.ndarray = np.repeat(void.take(graph.run_face[inside]), length[inside])
    return mask.reshape(graph.height, graph.width)


def _left_out_colour(rgba: np.ndarray, left_out: np.ndarray) -> np.ndarray:
    """Median premultiplied RGBA of the left-out pixels (mask `left_out` over `rgba`,
    uint8 straight alpha). When more than half are fully transparent (the usual case)
    every premultiplied channel is mostly zeros, so the median is 0, found from the
    alpha channel alone (two counts over the masks, nothing gathered; the alpha test
    reads every pixel as one contiguous word, three times faster than comparing the
    strided alpha channel). O(pixels)."""
    words = np.ascontiguousarray(rgba).view(np.uint32).reshape(left_out.shape)
    clear = np.count_nonzero(_transparent(words) & left_out)
    if 2 * clear > np.count_nonzero(left_out):
        return np.zeros(4)
    median: np.ndarray = np.median(premultiply(rgba[left_out]), axis=0)
    return median


def _transparent(words: np.ndarray) -> np.ndarray:
    """Whether each RGBA pixel, read as one 32-bit word, has alpha 0: its alpha byte is
    the word's top byte on a little-endian machine, its bottom one otherwise. O(n)."""
    if sys.byteorder == "little":
        return words < (1 << 24)
    low: np.ndarray = (words & 0xFF) == 0
    return low


def premultiply(rgba: np.ndarray) -> np.ndarray:
    """(..., 4) uint8 straight alpha to float32 premultiplied RGBA, 0..255. Used on the
    pixels gathered where they are needed, not on the whole image. O(pixels given)."""
    out = rgba.astype(np.float32)
    out[..., :3] *= out[..., 3:4] / 255.0
    return out


class CrackSides(NamedTuple):
    """What lies on either side of every crack, read once and shared by `crack_shifts`
    and `thin_slack`: the faces of the pixels left and right of it, of the pixels one
    step further out on each side, and the flat index of the left and right pixels in
    the (unpadded) image. Where a pixel lies in the padding ring its face is the
    outside, and its image index and its far face are clamped stand-ins: no stage reads
    them there (an outside crack has no shift, and the outside is never painted)."""

    left: np.ndarray
    right: np.ndarray
    far_left: np.ndarray
    far_right: np.ndarray
    left_pixel: np.ndarray
    right_pixel: np.ndarray


def crack_sides(graph: BoundaryGraph) -> CrackSides:
    """The faces and pixels around every crack (`CrackSides`), as flat indices from the
    crack's tail corner plus a per-direction offset: eight gathers from the face map
    and a few whole-array steps. O(cracks)."""
    h, w = graph.height, graph.width
    wide = w + 2
    d = graph.crack_dir
    x = graph.crack_x.astype(np.int64)
    y = graph.crack_y.astype(np.int64)
    padded = y * wide + x
    left = padded + (_LEFT_DROW * wide + _LEFT_DCOL).take(d)
    right = padded + (_RIGHT_DROW * wide + _RIGHT_DCOL).take(d)
    # One more step along each side's outward normal.
    outward = (DY - DX * wide).take(d)
    last = (h + 2) * wide - 1
    faces = graph.faces.ravel()
    image = y * w + x
    return CrackSides(
        left=faces.take(left),
        right=faces.take(right),
        far_left=faces.take(np.clip(left + outward, 0, last)),
        far_right=faces.take(np.clip(right - outward, 0, last)),
        left_pixel=np.clip(image + ((_LEFT_DROW - 1) * w + _LEFT_DCOL - 1).take(d), 0, h * w - 1),
        right_pixel=np.clip(
            image + ((_RIGHT_DROW - 1) * w + _RIGHT_DCOL - 1).take(d), 0, h * w - 1
        ),
    )


def crack_shifts(
    graph: BoundaryGraph,
    rgba: np.ndarray,
    colors: np.ndarray,
    sides: CrackSides | None = None,
) -> np.ndarray:
    """Signed shift of every crack towards its right side, in pixels, from the decoded
    input `rgba` and the faces' premultiplied colours (`sides`: `crack_sides(graph)`,
    when already read). Vectorised over all cracks, channels first so that every step
    is one pass over contiguous rows: O(cracks).

    A pixel that is only one pixel thick across the crack (its opposite crack is a
    boundary too) shares its coverage with that other crack, so each side takes half,
    and neither moves in by more than `THIN_SHIFT`, so the stroke keeps `MIN_STROKE`."""
    if sides is None:
        sides = crack_sides(graph)
    lf, rf = sides.left, sides.right
    # Everything that depends on the two faces alone is worked out once per edge (an
    # edge separates the same two faces, left and right, along its whole length) and
    # repeated along its cracks: the same numbers, element for element.
    pair = _edge_pairs(graph, colors)
    counts = np.diff(graph.edge_start)
    b = np.repeat(pair.b, counts, axis=1)
    diff = np.repeat(pair.diff, counts, axis=1)
    den = np.repeat(pair.den, counts)
    # Pixels outside the image have no colour (NaN face colour): such cracks are not
    # usable, so any in-image pixel may stand in for them (`CrackSides`).
    flat = np.ascontiguousarray(rgba).view(np.uint32).ravel()
    left_px = _premultiplied_channels(flat.take(sides.left_pixel))
    right_px = _premultiplied_channels(flat.take(sides.right_pixel))
    cover_left = _dot(left_px - b, diff) / den
    cover_right = _dot(right_px - b, diff) / den
    cover_left = np.clip(cover_left, 0.0, 1.0)
    cover_right = np.clip(cover_right, 0.0, 1.0)
    # The pixel beyond the left pixel, one step further along the left normal.
    thin_l = sides.far_left != lf
    thin_r = sides.far_right != rf
    weight_l = np.where(thin_l, 0.5, 1.0)
    weight_r = np.where(thin_r, 0.5, 1.0)
    # A one-pixel stroke narrows from both sides; it keeps at least `MIN_STROKE` of its
    # width, so a faint hairline or a letter's stem drawn thinner than a pixel still shows.
    into_left = (1.0 - cover_left) * weight_l
    into_right = cover_right * weight_r
    into_left = np.where(thin_l, np.minimum(into_left, THIN_SHIFT), into_left)
    into_right = np.where(thin_r, np.minimum(into_right, THIN_SHIFT), into_right)
    shift = into_right - into_left
    shift *= np.repeat(pair.contrast, counts)
    shift += np.repeat(pair.lean, counts)
    shift[np.repeat(pair.outside, counts)] = 0.0
    clipped: np.ndarray = np.clip(shift, -MAX_SHIFT, MAX_SHIFT)
    return clipped


class _EdgePairs(NamedTuple):
    """Per edge, what `crack_shifts` reads of its two faces: the right face's colour `b`
    and the colour difference `diff` (both (4, edges), zero where unusable), the squared
    difference `den` (1 where unusable), the contrast weight, the lean against a
    left-out face, and whether the edge borders the outside."""

    b: np.ndarray
    diff: np.ndarray
    den: np.ndarray
    contrast: np.ndarray
    lean: np.ndarray
    outside: np.ndarray


def _edge_pairs(graph: BoundaryGraph, colors: np.ndarray) -> _EdgePairs:
    """`_EdgePairs` of every edge, from the faces' premultiplied colours. O(edges)."""
    channels = np.ascontiguousarray(colors.T)
    a = channels.take(graph.edge_left, axis=1)
    b = channels.take(graph.edge_right, axis=1)
    diff = a - b
    den = _dot(diff, diff)
    usable = np.isfinite(den) & (den > 1e-6)
    den = np.where(usable, den, 1.0)
    contrast = np.minimum(1.0, np.sqrt(den) / FULL_CONTRAST)
    # Against a left-out face the painted side leans out a little: fitting smooths
    # outlines by up to its tolerance, and an outline cutting into an opaque pixel
    # shows there as a see-through notch, while one lying a little out only softens.
    label_l = graph.face_label.take(graph.edge_left)
    label_r = graph.face_label.take(graph.edge_right)
    void_l = label_l == -1
    void_r = label_r == -1
    return _EdgePairs(
        b=np.where(usable, b, 0.0),
        diff=np.where(usable, diff, 0.0),
        den=den,
        contrast=np.where(usable, contrast, 0.0),
        lean=np.where(void_r & ~void_l, VOID_LEAN, 0.0)
        - np.where(void_l & ~void_r, VOID_LEAN, 0.0),
        outside=(label_l == OUTSIDE) | (label_r == OUTSIDE),
    )


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-column dot products of two (4, n) arrays, summed in the pairs NumPy's
    `einsum("ij,ij->i")` sums a row of four in ((0 + 2) + (1 + 3)), so the shifts
    stay bit for bit what they were when the colours were rows. O(n)."""
    p = a * b
    total: np.ndarray = (p[0] + p[2]) + (p[1] + p[3])
    return total


def _premultiplied_channels(pixels: np.ndarray) -> np.ndarray:
    """Packed RGBA pixels (uint32 views of four uint8) to (4, n) float32 premultiplied
    channels, 0..255 (`premultiply`, channels first). O(n)."""
    # Transposed as bytes, then widened: a strided cast of the transpose costs 5x more.
    out = np.ascontiguousarray(pixels.view(np.uint8).reshape(-1, 4).T).astype(np.float32)
    out[:3] *= out[3] / 255.0
    return out


def thin_slack(graph: BoundaryGraph, sides: CrackSides | None = None) -> np.ndarray:
    """Fitting-tolerance multiplier per edge: `THIN_SLACK` for an edge along a stroke one
    pixel thick (most of its cracks have such a pixel on one side), else 1. Fitted at the
    full tolerance, both sides of a hairline or a letter's stem may move in by nearly half
    a pixel each and the stroke breaks; at this tolerance it keeps its width (`sides`:
    `crack_sides(graph)`, when already read). O(cracks)."""
    if sides is None:
        sides = crack_sides(graph)
    lf, rf = sides.left, sides.right
    painted = graph.face_label >= 0
    thin = ((sides.far_left != lf) & painted.take(lf)) | (
        (sides.far_right != rf) & painted.take(rf)
    )
    if graph.edge_count == 0:
        return np.ones(0)
    # Every edge has a crack at least, so no segment of the sum is empty.
    count = np.add.reduceat(thin.view(np.int8), graph.edge_start[:-1], dtype=np.int64)
    share = count / np.maximum(np.diff(graph.edge_start), 1)
    out: np.ndarray = np.where(share > 0.5, THIN_SLACK, 1.0)
    return out


def stair_reach(
    graph: BoundaryGraph, shift: np.ndarray, colors: np.ndarray, thin: np.ndarray
) -> np.ndarray:
    """Per edge, how far its data points may move when its staircase is smoothed: 0 for
    an edge placed from anti-aliasing (some crack shifted by a part of a pixel),
    `STAIR_REACH` for a hard edge between clearly different colours (its pixels hold no
    mix of the two, so the true outline is anywhere within half a pixel of its cracks),
    and `THIN_STAIR_REACH` for a hard edge along a one-pixel stroke (`thin`:
    `thin_slack`). Edges on the image border stay as they are. O(cracks) from
    `crack_shifts`'s shifts.

    A crack shifted by the whole `MAX_SHIFT` is hard too: its pixel is wholly the other
    face's colour, a bridge pixel the segmentation gave a stroke at a diagonal step
    (`detail.bridge_corners`), and it holds no mix either. An aliased 1-px line at a
    shallow angle has one at every step; read as anti-aliasing, they kept the whole
    line a staircase (188 segments)."""
    if graph.edge_count == 0:
        return np.zeros(0)
    pair = _edge_pairs(graph, colors)
    counts = np.diff(graph.edge_start)
    off = np.abs(shift - np.repeat(pair.lean, counts))
    mixed = (off > HARD_SHIFT) & (off < MAX_SHIFT - HARD_SHIFT)
    count = np.add.reduceat(mixed.view(np.int8), graph.edge_start[:-1], dtype=np.int64)
    hard = (count == 0) & (pair.contrast >= 1.0) & ~pair.outside
    out: np.ndarray = np.where(hard, np.where(thin < 1.0, THIN_STAIR_REACH, STAIR_REACH), 0.0)
    return out


def crack_points(graph: BoundaryGraph, shift: np.ndarray) -> np.ndarray:
    """Data points: crack midpoints moved by their shift along the right normal. O(cracks)."""
    d = graph.crack_dir
    x = graph.crack_x + 0.5 * DX[d] - shift * DY[d]
    y = graph.crack_y + 0.5 * DY[d] + shift * DX[d]
    return np.stack([x, y], axis=1)


def junction_points(graph: BoundaryGraph, points: np.ndarray) -> np.ndarray:
    """Sub-pixel junction positions: the point nearest (least squares) to the lines
    fitted through the first few data points of every edge meeting there. Junctions
    on the image border stay on it; a light pull towards the crack corner keeps the
    problem well posed where the lines are near parallel. Vectorised over edge ends:
    O(edges × JUNCTION_REACH)."""
    jx, jy = graph.junction_x, graph.junction_y
    count = len(jx)
    if count == 0:
        return np.zeros((0, 2))
    open_edges = np.nonzero(~graph.edge_closed)[0]
    s = graph.edge_start[:-1][open_edges]
    t = graph.edge_start[1:][open_edges]
    length = t - s
    reach = JUNCTION_REACH
    step = np.arange(reach + 1)
    # Points 1..reach from each end (point 0's pixel mixes three faces), or what the
    # edge has.
    skip = (length >= 3).astype(np.int64)
    n_pts = np.minimum(length - skip, reach)
    use = step[None, :] < n_pts[:, None]
    ends = []
    for first, sign, junction in (
        (s + skip, 1, graph.edge_j0[open_edges]),
        (t - 1 - skip, -1, graph.edge_j1[open_edges]),
    ):
        idx = np.clip(first[:, None] + sign * step[None, :], s[:, None], t[:, None] - 1)
        ends.append((idx, junction))
    idx = np.concatenate([e[0] for e in ends])
    junction = np.concatenate([e[1] for e in ends])
    use = np.concatenate([use, use])
    cnt = use.sum(axis=1).astype(np.float64)
    px = np.where(use, points[idx, 0], 0.0)
    py = np.where(use, points[idx, 1], 0.0)
    cx = px.sum(axis=1) / cnt
    cy = py.sum(axis=1) / cnt
    dx = np.where(use, px - cx[:, None], 0.0)
    dy = np.where(use, py - cy[:, None], 0.0)
    theta = 0.5 * np.arctan2(
        2 * (dx * dy).sum(axis=1), (dx * dx).sum(axis=1) - (dy * dy).sum(axis=1)
    )
    ux, uy = np.cos(theta), np.sin(theta)
    single = cnt < 2
    d = graph.crack_dir[idx[:, 0]]
    ux = np.where(single, DX[d], ux)
    uy = np.where(single, DY[d], uy)
    nx, ny = -uy, ux
    off = nx * cx + ny * cy
    m = np.zeros((count, 3))
    r = np.zeros((count, 2))
    np.add.at(m, junction, np.stack([nx * nx, nx * ny, ny * ny], axis=1))
    np.add.at(r, junction, np.stack([nx * off, ny * off], axis=1))
    on_x = (jx == 0) | (jx == graph.width)
    on_y = (jy == 0) | (jy == graph.height)
    m[:, 0] += np.where(on_x, BORDER_WEIGHT, PULL)
    m[:, 2] += np.where(on_y, BORDER_WEIGHT, PULL)
    r[:, 0] += np.where(on_x, BORDER_WEIGHT, PULL) * jx
    r[:, 1] += np.where(on_y, BORDER_WEIGHT, PULL) * jy
    det = m[:, 0] * m[:, 2] - m[:, 1] ** 2
    x = (m[:, 2] * r[:, 0] - m[:, 1] * r[:, 1]) / det
    y = (m[:, 0] * r[:, 1] - m[:, 1] * r[:, 0]) / det
    # A junction on the border slides along it as far as the edge meeting it says
    # (up to a pixel at shallow angles), but only half-way to the next one there.
    reach_x = np.where(on_y, _border_room(jx, jy, on_y), JUNCTION_SHIFT)
    reach_y = np.where(on_x, _border_room(jy, jx, on_x), JUNCTION_SHIFT)
    x = np.clip(x, jx - reach_x, jx + reach_x)
    y = np.clip(y, jy - reach_y, jy + reach_y)
    x = np.where(on_x, jx, np.clip(x, 0.0, graph.width))
    y = np.where(on_y, jy, np.clip(y, 0.0, graph.height))
    return np.stack([x, y], axis=1)


def _border_room(along: np.ndarray, across: np.ndarray, on: np.ndarray) -> np.ndarray:
    """For junctions on a border line (`across` fixed), how far each may move `along`
    it: just under half the gap to its nearest neighbour on that line, at most
    `BORDER_SLIDE`. O(junctions log junctions)."""
    room = np.full(len(along), JUNCTION_SHIFT)
    idx = np.nonzero(on)[0]
    if len(idx) == 0:
        return room
    order = idx[np.lexsort((along[idx], across[idx]))]
    a, c = along[order], across[order]
    gap = np.full(len(order), np.inf)
    step = np.where(c[1:] == c[:-1], a[1:] - a[:-1], np.inf)
    gap[1:] = np.minimum(gap[1:], step)
    gap[:-1] = np.minimum(gap[:-1], step)
    room[order] = np.minimum(BORDER_SLIDE, 0.45 * gap)
    return room
