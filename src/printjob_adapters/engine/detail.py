"""Small detail: which pixels of a label map are strokes, hairlines, letters and dots.

The clean-up steps (`cleanup.clean_speckles`, and for photo-like input
`cleanup.majority_smooth` and `cleanup.merge_specks`) merge small components into their
neighbours. Judged by area alone, a 1-px diagonal line (a chain of one-pixel 4-connected
components), a letter of 8-px text or a 2-px dot looks exactly like noise, and the mode
filter thins every 1-px stroke away. `detail_mask` decides by shape and contrast instead:

- a *stroke* is a group of same-coloured pixels, joined also across corners (8-connected,
  as a diagonal line is), that is thin (at most a third of its pixels have all four
  neighbours in its colour, so strokes up to about 2 px wide) and extends at least
  `STROKE_MIN` pixels (`NOISY_STROKE_MIN` in noisy input);
- a *dot* is a small group (at most `DOT_MAX` pixels) holding a solid 2x2 block, or a
  smaller one inside a stroke (a letter's counter) or within `BESIDE` pixels of a stroke
  of its colour (the dot of an i), only in clean input (noise under `cleanup.NOISY`): in
  noisy input a dot of a few pixels cannot be told from speckle, and a lone pixel on an
  area is a speck anywhere;

and either is kept only when it stands out: its colour is at least `CONTRAST` (CIELAB
ΔE76; `NOISY_CONTRAST`, `NOISE_CONTRAST` times the noise level or `TEXTURED_CONTRAST` in
noisy, photo-like input) from the colour around it, its pixels really have its colour
(their mean covers at least `TRUE_COLOUR` of the way from the surrounding colour to its
own), and it is no anti-aliasing fringe (its colour is not a mixture of the two colours
around it, nor are most of its pixels mixtures of the colours on either side of them: a
fringe along a boundary is thin and long too, and must still go). JPEG noise, ink speckle
and fringes fail one of these tests and are cleaned as before.

Two more steps keep what the mask protects drawable: `recover_strokes` (before clean-up)
puts strokes thinner than a pixel back into the map, and `bridge_corners` (after it) makes
a stroke's diagonal steps solid so that it traces as one shape, not dashes.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from printjob_adapters.engine import graphs, own_inks
from printjob_adapters.engine.cleanup import NOISY, Components, label_components
from printjob_adapters.engine.colour import srgb_to_lab
from printjob_adapters.engine.quantise import Colours, count_runs, pixel_rows, segment_residual

IntArray = npt.NDArray[np.int32]
BoolArray = npt.NDArray[np.bool_]

#: Shortest extent (bounding-box side, pixels) of a stroke in clean input: the height of
#: an 8-px letter's stem is more, a speck of anti-aliasing less.
STROKE_MIN = 4
#: ... and in noisy input (JPEG, scans), where specks and ink texture form short chains.
NOISY_STROKE_MIN = 7
#: Dots are examined up to this many pixels; larger groups are never merged as specks
#: anyway.
DOT_MAX = 64
#: Least CIELAB distance between a detail's colour and the colour around it for a long
#: rule (at least `LONG_RULE` pixels) in clean input: a light grey rule on white is a
#: line too ...
CONTRAST = 10.0
LONG_RULE = 16
#: ... and for any other detail, and in noisy input, where noise blotches reach further.
NOISY_CONTRAST = 25.0
#: Largest component `_corner_pieces` examines (`cleanup.SPECKLE_MAX`).
PIECE_MAX = 12
#: How far (share of the distance between the two colours around it) a detail's colour
#: may lie off the line between them and still be a shading step between them.
BETWEEN = 0.35
#: Least mean coverage of a detail's own colour over its pixels (0.5 would drop the
#: strokes and counters `recover_strokes` put back, which are faint by nature).
TRUE_COLOUR = 0.3
#: In noisy input the least distance is also this many times the noise level.
NOISE_CONTRAST = 3.0
#: Input with less than this share of its artwork in flat interiors is a photo or texture.
TEXTURED = 0.5
#: ... where a stroke must stand out this far (CIELAB) from its surroundings: a dark
#: contour against skin, not one shade of a gradient against the next.
TEXTURED_CONTRAST = 60.0


def detail_mask(
    labels: IntArray,
    rgb: npt.NDArray[np.uint8],
    palette: npt.NDArray[np.floating[Any]],
    noise: float,
    mix_tol: float,
    split: float = 0.0,
    comps: Components | None = None,
    flat_share: float = 1.0,
) -> BoolArray:
    """The (H, W) mask of pixels that belong to strokes and dots (see the module text),
    which the clean-up steps must leave in their colour. `rgb` is the decoded image (its
    first three channels are read), `palette` the label colours (sRGB 0..255), `noise`
    and `mix_tol` as in `quantise.Tolerances`; `comps` the map's components when known;
    `flat_share` the share of the artwork in flat region interiors (`PixelMaps.flat`):
    under `TEXTURED` the input is a photo or texture (whose noise level, measured on flat
    areas, says nothing), and only strokes of `TEXTURED_CONTRAST` count.

    Cost: O(N) whole-array compares and bincounts, plus O(R log R) over the R runs of
    the map (component labelling, corner joins through `graphs`) and a sort of the
    candidate groups' boundary pixels.
    """
    h, w = labels.shape
    if labels.size == 0 or len(palette) == 0:
        return np.zeros((h, w), dtype=bool)
    if comps is None:
        comps = label_components(labels)
    # Pixels with a 4-neighbour of another label: few in flat art, and the only places
    # where components of one label can touch at a corner.
    boundary = np.flatnonzero(boundary_mask(labels))
    group, groups = corner_groups(comps, labels, boundary)
    comp_label = comps.label
    glabel = np.full(groups, -1, dtype=np.int32)
    glabel[group] = comp_label
    gsize = np.bincount(group, comps.size, minlength=groups)
    # Each pixel's group read where needed from the ids it was first labelled with (two
    # look-ups), not laid out as a whole (H, W) map: the tests below read a few thousand
    # pixels of it.
    group_of = _GroupOf(comps.base.ravel(), group.take(comps.to_id))

    # Interior pixels per group, as its size less its boundary pixels (few in flat art).
    ginterior = gsize - np.bincount(group_of(boundary), minlength=groups)
    extent = _extent(comps, group, groups, w)
    textured = flat_share < TEXTURED
    noisy = noise >= NOISY or textured
    stroke = (ginterior * 3 <= gsize) & (extent >= (NOISY_STROKE_MIN if noisy else STROKE_MIN))
    dot = np.zeros(groups, dtype=bool)
    if not noisy:
        # Clean input: a small group holding a solid 2x2 block is a dot; a smaller one
        # counts only inside a stroke (a letter's counter, the gap of an e), never on an
        # area, where it is a speck.
        small = gsize <= DOT_MAX
        small_at = _pixels_where(comps, (small & (glabel >= 0))[group])
        small_group = group_of(small_at)
        dot[small_group[_block_corners(labels, small_at)]] = True
        host, _ = _surrounding_labels(labels, small_group, small_at, groups, group_of)
        dot |= (host >= 0) & stroke[np.maximum(host, 0)]
        looked_at = small_at[~dot[small_group]]
        dot |= _beside_stroke(labels, group_of, looked_at, stroke, groups)
        dot &= small
    candidate = (stroke | dot) & (glabel >= 0)
    if not candidate.any():
        return np.zeros((h, w), dtype=bool)

    at = _pixels_where(comps, candidate[group])
    at_group = group_of(at)
    first, second = _surrounding_labels(labels, at_group, at, groups)
    cand = np.flatnonzero(candidate & (first != -2))
    own = glabel[cand]
    around = first[cand]
    pal = np.asarray(palette, dtype=np.float64)
    lab = srgb_to_lab(pal)
    opaque_around = around >= 0
    contrast = np.full(len(cand), np.inf)
    contrast[opaque_around] = np.linalg.norm(
        lab[own[opaque_around]] - lab[around[opaque_around]], axis=1
    )
    # Faint detail counts only as a long rule (a separator) or as many pixels as two (a
    # small square's 1-px outline: 32); short faint pieces are the shading steps of soft
    # art.
    long_rule = (extent[cand] >= LONG_RULE) | (gsize[cand] >= 2 * LONG_RULE)
    floor = np.where(long_rule & ~noisy, CONTRAST, NOISY_CONTRAST)
    least = np.maximum(floor, max(NOISE_CONTRAST * noise, TEXTURED_CONTRAST if textured else 0.0))
    ok = contrast >= least

    # The pixel tests below matter only for the candidates still standing, so only their
    # pixels are gathered (in a photo most candidates fail the contrast test). A group's
    # pixels keep their order, so its sums are the same.
    at, pg = _pixels_of_groups(at, at_group, cand[ok], groups)
    # Its pixels have its colour: their mean is nearer its colour than the surrounding one.
    rows_u8 = pixel_rows(rgb)
    px = _gather(rows_u8, at)
    mean = (
        np.stack([np.bincount(pg, px[:, c], minlength=groups) for c in range(3)], axis=1)
        / np.maximum(gsize, 1)[:, None]
    )
    test = np.flatnonzero(ok & opaque_around)
    towards = pal[own[test]] - pal[around[test]]
    t = ((mean[cand[test]] - pal[around[test]]) * towards).sum(axis=1) / np.maximum(
        (towards * towards).sum(axis=1), 1e-9
    )
    # Strokes, counters and dots may be faint (`recover_strokes` puts them back so).
    ok[test] = t >= TRUE_COLOUR

    # Not a fringe: its colour is no mixture of the two colours around it.
    other = second[cand]
    test = np.flatnonzero(ok & opaque_around & (other >= 0))
    res, tm = segment_residual(pal[own[test]], pal[around[test]], pal[other[test]], split)
    ok[test] = ~((res < mix_tol) & (tm > 0.05) & (tm < 0.95))
    # Not a shading step: a hairline or an outline stands out from both sides (darker,
    # lighter or another hue than either), while a band of a soft gradient lies between
    # the colours on its two sides (CIELAB, loosely: shading is no exact mixture).
    test = np.flatnonzero(ok & opaque_around & (other >= 0))
    o, a, b = lab[own[test]], lab[around[test]], lab[other[test]]
    span = b - a
    length2 = np.maximum((span * span).sum(axis=1), 1e-9)
    along = ((o - a) * span).sum(axis=1) / length2
    off = np.linalg.norm(o - a - along[:, None] * span, axis=1)
    between = (along > 0.05) & (along < 0.95) & (off <= BETWEEN * np.sqrt(length2))
    ok[test] = ~between

    # Not a fringe pixel by pixel: most of its pixels are no mixture of the two different
    # colours on either side of them (a tint between an outline and the background is).
    still = np.zeros(groups, dtype=bool)
    still[cand[ok]] = True
    rows = np.flatnonzero(still[pg])
    fringe = _fringe_pixels(labels, px[rows], pal, at[rows], mix_tol, split)
    fringe_share = np.bincount(pg[rows[fringe]], minlength=groups) / np.maximum(gsize, 1)
    ok &= fringe_share[cand] < 0.5

    kept = np.zeros(groups, dtype=bool)
    kept[cand[ok]] = True
    # Candidate groups are of one label (>= 0), so their pixels are all artwork.
    kept_ids = kept[group]
    if not noisy:
        kept_ids |= _corner_pieces(labels, comps, gsize[group], rows_u8, pal, mix_tol, split)
    keep: BoolArray = comps.spread(kept_ids)
    return keep


def _corner_pieces(
    labels: IntArray,
    comps: Components,
    group_size: npt.NDArray[np.int64],
    rows_u8: npt.NDArray[np.uint8],
    pal: npt.NDArray[np.float64],
    mix_tol: float,
    split: float,
) -> BoolArray:
    """Clean input: small components (up to `PIECE_MAX` pixels) joined at a corner to
    more of their colour, such as the paper in the gap of an e that meets the page at a
    corner. Merged as specks they would close the gap; they stay when they stand out
    (`NOISY_CONTRAST` from the colour around them: not a step of soft shading), their
    pixels have their colour (`TRUE_COLOUR`) and are mostly no fringe. `group_size` is each
    component's 8-connected group size. Per component id: whether it stays (the caller
    spreads it over the map once with the rest). O(S log S) for their S pixels."""
    n = comps.count
    piece = (comps.size <= PIECE_MAX) & (group_size > comps.size) & (comps.label >= 0)
    if not piece.any():
        return np.zeros(n, dtype=bool)
    at = _pixels_where(comps, piece)
    pid = comps.to_id[comps.base.ravel()[at]]
    around, _ = _surrounding_labels(labels, pid, at, n)
    px = _gather(rows_u8, at)
    mean = (
        np.stack([np.bincount(pid, px[:, c], minlength=n) for c in range(3)], axis=1)
        / np.maximum(comps.size, 1)[:, None]
    )
    cand = np.flatnonzero(piece & (around >= 0))
    own, bg = pal[comps.label[cand]], pal[around[cand]]
    towards = own - bg
    t = ((mean[cand] - bg) * towards).sum(axis=1) / np.maximum((towards**2).sum(axis=1), 1e-9)
    fringe = _fringe_pixels(labels, px, pal, at, mix_tol, split)
    share = np.bincount(pid[fringe], minlength=n) / np.maximum(comps.size, 1)
    contrast = np.linalg.norm(srgb_to_lab(own) - srgb_to_lab(bg), axis=1)
    good = np.zeros(n, dtype=bool)
    good[cand[(t >= TRUE_COLOUR) & (share[cand] < 0.5) & (contrast >= NOISY_CONTRAST)]] = True
    return good


#: A colour with at most this share of its pixels in flat interiors is drawn nowhere as
#: an area: a candidate tint.
TINT_FLAT_SHARE = 0.02
#: ... and with under this share of its pixels really its colour, a tint.
TINT_EXACT_SHARE = 0.5
#: Up to this many candidate tints, `_tints` finds their pixels by one compare of the
#: map per colour rather than a look-up per pixel.
RARE_BY_COMPARE = 4


def _tints(
    labels: IntArray,
    flat: BoolArray,
    rows_u8: npt.NDArray[np.uint8],
    pal: npt.NDArray[np.float64],
    tolerances: tuple[float, float, float],
) -> IntArray:
    """Per palette colour: the two colours it is an anti-aliasing tint of, or -1s. A tint
    is a mixture of two other palette colours that (almost) never fills a flat interior
    and whose pixels mostly are not its colour (within the `rgb` tolerance) but spread
    along the mixture: the grey of anti-aliased black text on white, found as a colour of
    its own because there is so much of it. A grey rule drawn in one exact grey is no
    tint. `tolerances` are (mix, split, rgb) as in `quantise.Tolerances`; `rows_u8` the
    image's pixel rows (`quantise.pixel_rows`). (K, 2) int.

    Cost: one O(N) count of the labels (`quantise.count_runs`, run by run); the colours
    drawn nowhere as an area (a few, with few pixels) then have their pixels' exactness
    measured, O(P) for their P pixels, and their mixtures tried, O(K²) each.
    """
    mix_tol, split, rgb_tol = tolerances
    k = len(pal)
    out = np.full((k, 2), -1, dtype=np.int32)
    flat_labels = labels.ravel()
    # One count of (label, flat) pairs: the label doubled, plus one in flat interiors
    # (the left-out pixels, -1, come to -2 and -1, counted two bins down); in 16 bits
    # when the keys fit (a palette of under 16 000 colours): half the bytes to write and
    # compare, the same counts.
    narrow = 2 * (k + 1) <= np.iinfo(np.int16).max
    key = flat_labels.astype(np.int16) if narrow else flat_labels.copy()
    key <<= 1
    key |= flat.ravel()
    pairs = count_runs(key, 2 * (k + 1), shift=2).reshape(k + 1, 2)[1:]
    total = pairs.sum(axis=1)
    inside = pairs[:, 1]
    rare = (inside <= TINT_FLAT_SHARE * np.maximum(total, 1)) & (total > 0)
    if not rare.any():
        return out
    rare_colours = np.flatnonzero(rare)
    if len(rare_colours) <= RARE_BY_COMPARE:
        # A few such colours: one compare of the map each beats a look-up per pixel.
        at = np.concatenate([np.flatnonzero(flat_labels == c) for c in rare_colours.tolist()])
    else:
        at = np.flatnonzero(rare[np.maximum(flat_labels, 0)] & (flat_labels >= 0))
    own_label = flat_labels.take(at)
    off = _gather(rows_u8, at) - pal.take(own_label, axis=0)
    exact = (off * off).sum(axis=1) <= rgb_tol * rgb_tol
    own = np.bincount(own_label[exact], minlength=k)
    rare &= own < TINT_EXACT_SHARE * total
    for c in np.flatnonzero(rare):
        others = np.flatnonzero(np.arange(k) != c)
        if len(others) < 2:
            continue
        a, b = np.triu_indices(len(others), 1)
        res, t = segment_residual(
            np.broadcast_to(pal[c], (len(a), 3)), pal[others[a]], pal[others[b]], split
        )
        res = np.where((t > 0.05) & (t < 0.95), res, np.inf)
        best = int(np.argmin(res))
        if res[best] < mix_tol:
            out[c] = others[a[best]], others[b[best]]
    return out


#: A tint pixel whose coverage (of the far end of its mixture) differs from both its
#: neighbours' along its row or column by more than this, rising one way and
#: falling the other, lies on a ramp between the ends: anti-aliasing.
RAMP_STEP = 0.1
#: How far (times the `rgb` tolerance) a pixel drawn in a tint may be from it: the
#: rounded corner of an outline is a little lighter or darker than its sides.
DRAWN_TOL = 2.0


NO_PIXELS: npt.NDArray[np.intp] = np.zeros(0, dtype=np.intp)


def _resolve_tints(
    labels: IntArray,
    rows_u8: npt.NDArray[np.uint8],
    pal: npt.NDArray[np.float64],
    pairs: IntArray,
    rgb_tol: float = 6.0,
) -> tuple[IntArray, npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """Each pixel of a tint (`_tints`) to the end of its mixture it is nearer to (coverage
    at least a half: the far end), unless it is drawn in the tint: its colour is the
    tint's (within `rgb_tol`) and it lies on no ramp between the ends (`_on_ramp`). A
    light-grey outline drawn at a half-pixel offset (a checkbox, a button's border) is two
    pixels of one grey with the paper on one side and itself or a third colour on the
    other; the same grey in the fringe of dark text always sits between the paper and the
    ink. A tint pixel on a line drawn in one colour (`_drawn_lines`) stays too, whatever
    its distance to the tint. Returns the new map, the lines' pixels (flat indices) and
    the palette: a new one where a tint takes its lines' colour, else `pal` itself (never
    changed). O(N) to find them, O(T log T) for their T pixels."""
    out = np.array(labels, dtype=np.int32, order="C")  # a new, contiguous map
    if not (pairs[:, 0] >= 0).any():
        return out, NO_PIXELS, pal
    flat = out.reshape(-1)
    # 1-D `take`s: the same values as indexing, at a fraction of its cost.
    tint_pixels = np.flatnonzero(np.ascontiguousarray(pairs[:, 0]).take(np.maximum(flat, 0)) >= 0)
    tint_pixels = tint_pixels[flat.take(tint_pixels) >= 0]
    if len(tint_pixels) == 0:
        return out, NO_PIXELS, pal
    own = flat.take(tint_pixels)
    ends = pairs.take(own, axis=0)
    a, b = pal.take(ends[:, 0], axis=0), pal.take(ends[:, 1], axis=0)
    towards = b - a
    norm = np.maximum((towards * towards).sum(axis=1), 1e-9)
    px = _gather(rows_u8, tint_pixels)
    t = ((px - a) * towards).sum(axis=1) / norm
    off = px - pal.take(own, axis=0)
    drawn = (off * off).sum(axis=1) <= (DRAWN_TOL * rgb_tol) ** 2
    # Off the ramps: pixels of a line's colour, not of a fringe's.
    level = ~_on_ramp(labels.shape, rows_u8, tint_pixels, t, a, towards, norm)
    drawn &= level
    lines = _drawn_lines(labels.shape[1], tint_pixels, px, level, rgb_tol)
    drawn |= lines
    if lines.any():
        # The tint's colour is the fringe's; what is left of it is the lines, whose own
        # colour it takes (the interiors that measure other colours later are none here),
        # in a palette of its own: the caller's is read by others.
        count = np.bincount(own[lines], minlength=len(pal))
        line_tints = np.flatnonzero(count)
        pal = pal.copy()
        for c in range(3):
            total = np.bincount(own[lines], px[lines, c], minlength=len(pal))
            pal[line_tints, c] = total[line_tints] / count[line_tints]
    joined = _joints(labels.shape, tint_pixels, own, drawn) if drawn.any() else None
    resolved = ~drawn
    flat[tint_pixels[resolved]] = np.where(t >= 0.5, ends[:, 1], ends[:, 0])[resolved]
    if joined is not None:
        join = joined >= 0
        flat[tint_pixels[join]] = joined[join]
    if lines.any():
        # A line's corners (darker: they hold two sides) join it as a drawn outline's do,
        # and are as little a stroke of ink as the line itself.
        lines |= _joints(labels.shape, tint_pixels, own, lines) >= 0
    return out, tint_pixels[lines], pal


#: Least pixels of a line drawn in one colour among a tint's pixels (`_drawn_lines`): an
#: 8-px square's 1-px outline has 32; a letter's faint stem of 12-px text about 9.
LINE_MIN = 24


def _drawn_lines(
    width: int,
    at: npt.NDArray[np.intp],
    px: npt.NDArray[np.float64],
    level: BoolArray,
    rgb_tol: float,
) -> BoolArray:
    """For the tint pixels `at` (flat indices, sorted; RGB `px`; `level`: on no ramp):
    whether each lies on a line drawn in one colour of its own, which the tint's
    mixture happens to pass through: a mid-grey 1-px outline is also a faint stroke
    of dark text's ink, and its grey may be nearer the text's fringe colour than to
    any palette colour. Such a line is a chain of pixels, 8-connected, each within
    `rgb_tol` of the next, at least `LINE_MIN` of them level (the pixels beside a
    darker corner, where two sides cross, lie on a ramp towards it and still belong):
    the fringe of text lies on ramps, and its level pixels (a faint stem) make short
    chains. O(T log T) for the T tint pixels."""
    if np.count_nonzero(level) < LINE_MIN:
        return np.zeros(len(at), dtype=bool)
    src, dst = [], []
    for step in (1, width - 1, width, width + 1):
        linked = np.flatnonzero(_sorted_member(at, at + step))
        other = np.searchsorted(at, at.take(linked) + step)
        gap = px.take(linked, axis=0) - px.take(other, axis=0)
        alike = (gap * gap).sum(axis=1) <= rgb_tol * rgb_tol
        src.append(linked[alike])
        dst.append(other[alike])
    count, group = graphs.connected_components(len(at), np.concatenate(src), np.concatenate(dst))
    found: BoolArray = np.bincount(group, level, minlength=count).take(group) >= LINE_MIN
    return found


def _joints(
    shape: tuple[int, ...], at: npt.NDArray[np.intp], own: IntArray, drawn: BoolArray
) -> IntArray:
    """For the tint pixels `at` (flat indices; labels `own`) not `drawn`: the label of a
    drawn tint pixel among their four neighbours when at least two are drawn, else -1; in
    two rounds. Where the two sides of an outline meet, the corner pixel holds both and
    is darker than the tint (another tint, or none), and the pixels beside it lie on a
    ramp towards it; they join the outline so that it stays one piece. O(T) for the T
    tint pixels."""
    h, w = shape[0], shape[1]
    joined = np.full(len(at), -1, dtype=np.int32)
    y, x = np.divmod(at, w)
    size = h * w + 2 * w + 2  # padded by a row and a pixel each side: no bounds checks
    for _ in range(2):
        taken = drawn | (joined >= 0)
        mark = np.zeros(size, dtype=np.int32)  # the drawn pixels' label + 1
        mark[at[taken] + w + 1] = np.where(joined >= 0, joined, own)[taken] + 1
        count = np.zeros(len(at), dtype=np.int32)
        label = np.zeros(len(at), dtype=np.int32)
        for step, inside in ((1, x < w - 1), (-1, x > 0), (w, y < h - 1), (-w, y > 0)):
            seen = np.where(inside, mark[at + w + 1 + step], 0)
            count += seen > 0
            np.maximum(label, seen, out=label)
        grown = ~taken & (count >= 2)
        if not grown.any():
            break
        joined[grown] = label[grown] - 1
    return joined


def _on_ramp(
    shape: tuple[int, ...],
    rows_u8: npt.NDArray[np.uint8],
    at: npt.NDArray[np.intp],
    t: npt.NDArray[np.float64],
    start: npt.NDArray[np.float64],
    towards: npt.NDArray[np.float64],
    norm: npt.NDArray[np.float64],
) -> BoolArray:
    """For the pixels `at` (flat indices, coverage `t` along `start` + t `towards`):
    whether along its row or its column the coverage rises by more than `RAMP_STEP` on
    one side of the pixel and falls by as much on the other (pixels on the image's border
    count as on a ramp). Not along the diagonals: where two sides of an outline meet, the
    corner pixel holds both and is darker, and the pixels beside it would seem to lie on
    a ramp towards it. O(len(at)), its gathers by `take` (`_gather`)."""
    h, w = shape[0], shape[1]
    y, x = np.divmod(at, w)
    ramp: BoolArray = (y == 0) | (y == h - 1) | (x == 0) | (x == w - 1)
    inner = np.flatnonzero(~ramp)
    p, tp = at[inner], t[inner]
    s, d, n = start[inner], towards[inner], norm[inner]
    for step in (1, w):
        before = ((_gather(rows_u8, p - step) - s) * d).sum(axis=1) / n
        after = ((_gather(rows_u8, p + step) - s) * d).sum(axis=1) / n
        rising = (before < tp - RAMP_STEP) & (after > tp + RAMP_STEP)
        falling = (before > tp + RAMP_STEP) & (after < tp - RAMP_STEP)
        ramp[inner] |= rising | falling
    return ramp


def _recover_on_transparency(
    labels: IntArray, rgba: npt.NDArray[np.uint8], pal: npt.NDArray[np.float64]
) -> None:
    """In place: a hairline on transparency whose pixels are mostly under half covered is
    left out with the transparent background (alpha under 128). A left-out pixel whose
    alpha is at least `RIDGE_COVERAGE`, a ridge across a row, column or diagonal (as in
    `recover_strokes`) and has no neighbour more opaque by over `SOLID_STEP` takes the
    palette colour nearest its own. A soft edge or a shadow
    fades monotonically and has no ridge. Small faint dots come back first
    (`_faint_dots`). `labels` is C-contiguous (a new map of `recover_strokes`). O(N)
    compares of the alpha bytes plus O(P K) for the P pixels taken."""
    h, w = labels.shape
    if h < 3 or w < 3 or len(pal) == 0:
        return
    if labels.min(initial=0) >= 0:
        return  # every pixel is artwork: nothing left out to recover
    if not labels.flags.c_contiguous:
        raise ValueError("the label map must be C-contiguous: it is changed in place")
    alpha_u8 = rgba[..., 3]
    # The left-out pixels at least `DOT_ALPHA` opaque, off the border, in raster order:
    # alpha in [floor, 128), read as little-endian 32-bit words with alpha in the top
    # byte (as `quantise.opacity`), by two compares into masks of bytes: a wrapping
    # subtraction would first write a fresh word per pixel (1 MB at 512 px), whose
    # first touch costs more than the compare it spares.
    # `quantise.assign` leaves out exactly the pixels under 128 and no step before this
    # one leaves out any other, so these are all such pixels (checked against the map).
    floor = int(np.ceil(DOT_ALPHA * 255.0))
    words = np.ascontiguousarray(rgba).view("<u4")[..., 0]
    faint = np.less(words, np.uint32(128 << 24))
    faint &= np.greater_equal(words, np.uint32(floor << 24))
    found = np.flatnonzero(faint)
    del faint
    y, x = np.divmod(found, w)
    at = found[(y > 0) & (y < h - 1) & (x > 0) & (x < w - 1)]
    if len(at) == 0:
        return  # nothing left out that could be recovered
    flat_labels = labels.reshape(-1)
    at = at[flat_labels[at] < 0]
    _faint_dots(flat_labels, rgba, pal, at, w)
    # alpha / 255 >= RIDGE_COVERAGE, in bytes; then the same coverages as floats.
    least = int(np.ceil(RIDGE_COVERAGE * 255.0))
    alpha_flat = alpha_u8.reshape(-1)
    at = at[(alpha_flat[at] >= least) & (flat_labels[at] < 0)]
    if len(at) == 0:
        return

    def alpha(where: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        out: npt.NDArray[np.float64] = alpha_flat[where].astype(np.float64) / 255.0
        return out

    mine = alpha(at)
    ridge = np.zeros(len(at), dtype=bool)
    beside_solid = np.zeros(len(at), dtype=bool)
    for step in (1, w, w + 1, w - 1):
        before = alpha(at - step)
        after = alpha(at + step)
        ridge |= (mine > before + RIDGE_STEP) & (mine >= after - RIDGE_STEP)
        beside_solid |= np.maximum(before, after) > mine + SOLID_STEP
    # Beside a much more opaque pixel it is the soft edge (or a resize's ringing) of a
    # shape, not a hairline of its own.
    ridge &= ~beside_solid
    at = at[ridge]
    if len(at) == 0:
        return
    colour = pixel_rows(rgba)[at, :3].astype(np.float64)
    distance = ((colour[:, None, :] - pal[None, :, :]) ** 2).sum(axis=2)
    flat_labels[at] = np.argmin(distance, axis=1).astype(np.int32)


#: Least opacity of a faint dot on transparency (`_faint_dots`): a design's 25 % dot is
#: kept, the faintest haze is not.
DOT_ALPHA = 0.15
#: Largest spread of a faint dot's opacity, as a share of its most opaque pixel: a dot
#: is drawn at one opacity, a small soft shadow fades out from its middle.
DOT_ALPHA_SPREAD = 0.3


def _sorted_member(at: npt.NDArray[np.intp], query: npt.NDArray[np.intp]) -> BoolArray:
    """Whether each of `query` is among the sorted `at`. O(Q log len(at))."""
    if len(at) == 0:
        return np.zeros(len(query), dtype=bool)
    where = np.minimum(np.searchsorted(at, query), len(at) - 1)
    found: BoolArray = at[where] == query
    return found


def _groups8(at: npt.NDArray[np.intp], w: int) -> tuple[int, IntArray]:
    """The 8-connected groups of the pixels `at` (flat indices, sorted; `w` the width;
    pixels on the border may join across it, which a dot's test does not mind): their
    number and each pixel's group. O(C log C)."""
    src, dst = [], []
    for step in (1, w, w + 1, w - 1):
        linked = _sorted_member(at, at + step)
        src.append(np.flatnonzero(linked))
        dst.append(np.searchsorted(at, at[linked] + step))
    return graphs.connected_components(len(at), np.concatenate(src), np.concatenate(dst))


def _faint_dots(
    flat_labels: IntArray,
    rgba: npt.NDArray[np.uint8],
    pal: npt.NDArray[np.float64],
    at: npt.NDArray[np.intp],
    w: int,
) -> None:
    """In place: a small dot drawn semi-transparent on transparency (a map pin's 25 %
    centre dot) is left out with the background (alpha under 128). A group of left-out
    pixels, 8-connected, each at least `DOT_ALPHA` opaque, that holds a solid 2x2 block,
    has at most `DOT_MAX` pixels, touches no pixel of 128 or more (so it is no shape's
    soft edge and no shadow under one) and is drawn at one opacity (spread at most
    `DOT_ALPHA_SPREAD` of its most opaque pixel: no soft blob) takes the palette colour
    nearest its own, as the rest of the art does whatever its opacity. `at`: those
    left-out pixels off the border (flat indices, sorted; `w` the width). Without a 2x2
    block among them there is no dot and nothing more is done. O(C log C) for the C
    pixels `at`."""
    block = _sorted_member(at, at + 1) & _sorted_member(at, at + w)
    block[block] = _sorted_member(at, at[block] + w + 1)
    if not block.any():
        return
    alpha_flat = rgba[..., 3].reshape(-1)
    steps = (1, w, w + 1, w - 1)
    near_solid = np.zeros(len(at), dtype=bool)
    for step in steps + tuple(-s for s in steps):
        near_solid |= alpha_flat[at + step] >= 128
    count, group = _groups8(at, w)
    size = np.bincount(group, minlength=count)
    has_block = np.zeros(count, dtype=bool)
    has_block[group[block]] = True
    touches = np.zeros(count, dtype=bool)
    touches[group[near_solid]] = True
    a = alpha_flat[at].astype(np.int64)
    top = np.zeros(count, dtype=np.int64)
    np.maximum.at(top, group, a)
    low = np.full(count, 255, dtype=np.int64)
    np.minimum.at(low, group, a)
    dot = has_block & ~touches & (size <= DOT_MAX) & (top - low <= DOT_ALPHA_SPREAD * top)
    taken = at[dot[group]]
    if len(taken) == 0:
        return
    colour = pixel_rows(rgba)[taken, :3].astype(np.float64)
    distance = ((colour[:, None, :] - pal[None, :, :]) ** 2).sum(axis=2)
    flat_labels[taken] = np.argmin(distance, axis=1).astype(np.int32)


def _fringe_pixels(
    labels: IntArray,
    px: npt.NDArray[np.float64],
    pal: npt.NDArray[np.float64],
    at: npt.NDArray[np.intp],
    mix_tol: float,
    split: float,
) -> BoolArray:
    """For the pixels `at` (flat indices, in order; `px` their RGB): whether, along a row,
    a column or a diagonal, the neighbours on either side have two different labels,
    neither the pixel's own, and the pixel's colour is a mixture of theirs.
    O(len(at))."""
    h, w = labels.shape
    flat = labels.ravel()
    y, x = np.divmod(at, w)
    out = np.zeros(len(at), dtype=bool)
    own = flat.take(at)
    # Both neighbours on the image: off the first and last column across, off the first
    # and last row down, off both along the diagonals.
    across = (x > 0) & (x < w - 1)
    down = (y > 0) & (y < h - 1)
    diagonal = across & down
    for step, inside in ((1, across), (w, down), (w + 1, diagonal), (w - 1, diagonal)):
        rows = np.flatnonzero(inside & ~out)
        centre = at.take(rows)
        a = flat.take(centre - step)
        b = flat.take(centre + step)
        mine = own.take(rows)
        pick = (a != b) & (a >= 0) & (b >= 0) & (a != mine) & (b != mine)
        rows, a, b = rows[pick], a[pick], b[pick]
        res, t = segment_residual(
            px.take(rows, axis=0), pal.take(a, axis=0), pal.take(b, axis=0), split
        )
        out[rows[(res < mix_tol) & (t > 0.05) & (t < 0.95)]] = True
    return out


@attrs.frozen
class _GroupOf:
    """Each pixel's group (8-connected same-label components, `corner_groups`) looked up
    from the component id the pixel was first labelled with (`Components.base`): two
    gathers per pixel asked for, instead of a whole (H, W) map of groups laid out."""

    base: IntArray  # (N,) each pixel's first id
    group_of_base: IntArray  # (first ids,) the group of each

    def __call__(self, at: npt.NDArray[np.intp]) -> IntArray:
        found: IntArray = self.group_of_base.take(self.base.take(at))
        return found


def _pixels_of_groups(
    at: npt.NDArray[np.intp], pg: IntArray, wanted: npt.NDArray[np.intp], groups: int
) -> tuple[npt.NDArray[np.intp], IntArray]:
    """The pixels `at` (flat indices) whose group (`pg`, one per pixel) is among `wanted`,
    in their order, and those groups. O(len(at))."""
    live = np.zeros(groups, dtype=bool)
    live[wanted] = True
    rows = live[pg]
    return at[rows], pg[rows]


def _pixels_where(comps: Components, wanted: BoolArray) -> npt.NDArray[np.intp]:
    """Flat indices, in raster order, of the pixels of the `wanted` components (per
    current id), expanded from the runs of the map: no whole-image look-up. O(R + S) for
    R runs and the S pixels listed."""
    lengths = comps.run_length
    chosen = wanted[comps.to_id[comps.run_base]]
    heads = np.cumsum(lengths) - lengths
    starts, counts = heads[chosen], lengths[chosen]
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.intp)
    offsets = np.cumsum(counts) - counts
    out: npt.NDArray[np.intp] = (np.repeat(starts - offsets, counts) + np.arange(total)).astype(
        np.intp
    )
    return out


def corner_groups(
    comps: Components, labels: IntArray, boundary: npt.NDArray[np.intp]
) -> tuple[IntArray, int]:
    """Each component's group when same-label components touching at a corner are joined
    (8-connectivity). Two diagonal pixels of one label in different components have both
    pixels beside them in other labels (else they would be 4-connected), so the upper one
    is a `boundary` pixel (flat indices of the pixels with a 4-neighbour of another
    label): only those are looked at. O(B) for B boundary pixels plus `graphs` over the
    joins: every boundary pixel's label and id are gathered once, each diagonal's in full
    (clipped to the image; a pixel whose diagonal is off it is masked out after), and one
    mask per diagonal picks the few joins: a photo's boundary is half its pixels, and
    picking the half with one label beside it first cost more than gathering all (Grace
    Hopper at 3 MP: 75 → 35 ms a call)."""
    h, w = labels.shape
    flat = labels.ravel()
    base = comps.base.ravel()
    # `take`: the same values as indexing, at a fraction of its cost.
    own = flat.take(boundary)
    own_id = comps.to_id.take(base.take(boundary))
    x = boundary % w if w else boundary
    kept = (boundary < (h - 1) * w) & (own >= 0)
    pairs = []
    for step, inside in ((w + 1, x < w - 1), (w - 1, x > 0)):
        lower = boundary + step
        lower_id = comps.to_id.take(base.take(lower, mode="clip"))
        join = own_id != lower_id
        join &= inside
        join &= kept
        join &= own == flat.take(lower, mode="clip")
        pairs.append((own_id[join], lower_id[join]))
    src = np.concatenate([p[0] for p in pairs])
    dst = np.concatenate([p[1] for p in pairs])
    n = comps.count
    groups, group = graphs.connected_components(n, src, dst)
    return group.astype(np.int32), int(groups)


def boundary_mask(labels: IntArray) -> BoolArray:
    """Pixels with a 4-neighbour of another label (off the image counts as the same, so
    a stroke along the border is still thin): the complement of the region interiors.
    Two compares of neighbouring rows and columns, each marking both its pixels, on the
    flat map (contiguous runs of memory instead of one short run per row; a row's last
    pixel and the next row's first compared across are then no neighbours). O(N)."""
    h, w = labels.shape
    if labels.size == 0:
        return np.zeros((h, w), dtype=bool)
    flat = labels.reshape(-1)
    out = np.empty(flat.size, dtype=bool)
    across = flat[1:] != flat[:-1]
    across[w - 1 :: w] = False
    out[:-1] = across
    out[-1] = False
    out[1:] |= across
    down = flat[w:] != flat[:-w]
    out[:-w] |= down
    out[w:] |= down
    mask: BoolArray = out.reshape(h, w)
    return mask


#: How near (pixels, Chebyshev) a small group must come to a stroke of its colour to be
#: part of the same mark (the dot of an i or j, a colon beside a letter).
BESIDE = 2


def _beside_stroke(
    labels: IntArray,
    group_of: _GroupOf,
    looked_at: npt.NDArray[np.intp],
    stroke: BoolArray,
    groups: int,
) -> BoolArray:
    """Per group: whether a pixel `looked_at` (flat indices) of it lies within `BESIDE`
    of a pixel of a stroke group of the same label. O(S × (2 BESIDE + 1)²) for the S
    pixels looked at, every window position at once."""
    h, w = labels.shape
    out = np.zeros(groups, dtype=bool)
    ys, xs = np.divmod(looked_at, w)
    if len(ys) == 0:
        return out
    flat_labels = labels.ravel()
    own, own_group = flat_labels.take(looked_at), group_of(looked_at)
    # The window's rows and columns, clamped to the image: (rows, columns, pixels).
    reach = np.arange(-BESIDE, BESIDE + 1)
    row_starts = np.clip(ys[None, :] + reach[:, None], 0, h - 1) * w
    columns = np.clip(xs[None, :] + reach[:, None], 0, w - 1)
    at = (row_starts[:, None, :] + columns[None, :, :]).reshape(-1, len(ys))
    g = group_of(at.ravel()).reshape(at.shape)
    near = (flat_labels.take(at) == own) & stroke.take(g) & (g != own_group)
    found = near.any(axis=0)
    out[own_group[found]] = True
    return out


def _block_corners(labels: IntArray, at: npt.NDArray[np.intp]) -> BoolArray:
    """For the pixels `at` (flat indices): whether the 2x2 block with this top-left pixel
    is one label (>= 0). O(len(at))."""
    h, w = labels.shape
    flat = labels.ravel()
    y, x = np.divmod(at, w)
    ok = (y < h - 1) & (x < w - 1)
    corner = at[ok]
    a = flat[corner]
    same = (a == flat[corner + w]) & (a == flat[corner + 1]) & (a == flat[corner + w + 1])
    out = np.zeros(len(at), dtype=bool)
    out[ok] = same & (a >= 0)
    return out


def _extent(comps: Components, group: IntArray, groups: int, width: int) -> IntArray:
    """Each group's longer bounding-box side, from the runs of the map. O(R)."""
    lengths = comps.run_length
    heads = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    rows, col0 = np.divmod(heads, width)
    col1 = col0 + lengths - 1
    g = group[comps.to_id[comps.run_base]]
    big = np.iinfo(np.int64).max
    top = np.full(groups, big, dtype=np.int64)
    bottom = np.full(groups, -1, dtype=np.int64)
    left = np.full(groups, big, dtype=np.int64)
    right = np.full(groups, -1, dtype=np.int64)
    np.minimum.at(top, g, rows)
    np.maximum.at(bottom, g, rows)
    np.minimum.at(left, g, col0)
    np.maximum.at(right, g, col1)
    out: IntArray = np.maximum(bottom - top, right - left).astype(np.int32) + 1
    return out


def _surrounding_labels(
    labels: IntArray,
    at_group: IntArray,
    at: npt.NDArray[np.intp],
    groups: int,
    values: _GroupOf | None = None,
) -> tuple[IntArray, IntArray]:
    """For every group: the label most often 4-adjacent to its pixels (-1 transparent,
    -2 none) and the next one (-2 none); with `values` (ids >= -1 per pixel, such as
    the groups) those ids of the neighbours of another label instead. Only the pixels
    `at` (flat indices: the candidate groups' pixels) are looked at; `at_group` holds
    their groups. Cost: O(S) gathers for their S pixels; then, for labels, one count of
    the (group, label) pairs in a table (`_two_most_frequent`) when it is small enough,
    else O(S log S), a sort of the pairs."""
    h, w = labels.shape
    flat = labels.ravel()
    own = flat.take(at)
    steps = (1, -1, w, -w)
    # The four neighbours' labels in one (4, S) array, gathered with clipped indices; a
    # neighbour off the image (clipped, or a row's first pixel read across the border)
    # reads the pixel's own label, which is never counted: no list of each direction's
    # pixels inside the image is made.
    nb_labels = np.empty((4, len(at)), dtype=flat.dtype)
    x = at % w
    edges = (x == w - 1, x == 0, at >= h * w - w, at < w)
    for j, step in enumerate(steps):
        flat.take(at + step, mode="clip", out=nb_labels[j])
        np.copyto(nb_labels[j], own, where=edges[j])
    first = np.full(groups, -2, dtype=np.int32)
    second = np.full(groups, -2, dtype=np.int32)
    if values is None:
        span = max(int(nb_labels.max(initial=-1)), int(own.max(initial=-1))) + 2
        if groups * span <= min(DENSE_PAIRS, DENSE_PAIRS_PER_KEY * nb_labels.size):
            key = nb_labels.astype(np.int64)
            key += 1
            key += at_group.astype(np.int64)[None, :] * span
            table = np.bincount(key.ravel(), minlength=groups * span).reshape(groups, span)
            # The pixels' own label: their neighbours of that label and those off the
            # image were counted there, and it is no surrounding label.
            table[at_group, own + 1] = 0
            return _two_most_frequent(table, first, second)
    differ = nb_labels != own
    g = np.broadcast_to(at_group, differ.shape)[differ].astype(np.int64)
    if values is None:
        nb_label = nb_labels[differ].astype(np.int64)
    else:
        nb = at[None, :] + np.array(steps, dtype=np.int64)[:, None]
        nb_label = values(nb[differ]).astype(np.int64)
    nb_label += 1
    if len(g) == 0:
        return first, second
    span = int(nb_label.max()) + 1
    code, count = np.unique(g * span + nb_label, return_counts=True)
    cg, cl = code // span, code % span - 1
    order = np.lexsort((-count, cg))
    cg, cl = cg[order], cl[order]
    head = np.ones(len(cg), dtype=bool)
    head[1:] = cg[1:] != cg[:-1]
    first[cg[head]] = cl[head]
    nxt = np.flatnonzero(~head[1:] & head[:-1]) + 1 if len(cg) > 1 else np.zeros(0, np.int64)
    second[cg[nxt]] = cl[nxt]
    return first, second


#: `_surrounding_labels` counts its (group, label) pairs in a table of every pair when it
#: holds at most this many entries (8 bytes each: 64 MB at most; a 3 MP photo's 390,000
#: groups by 18 labels take 56 MB) ...
DENSE_PAIRS = 1 << 23
#: ... and at most this many per neighbour looked at (else the table is mostly empty and
#: the sort of the pairs is cheaper).
DENSE_PAIRS_PER_KEY = 2


def _two_most_frequent(
    table: npt.NDArray[np.intp], first: IntArray, second: IntArray
) -> tuple[IntArray, IntArray]:
    """`_surrounding_labels`' answer from its (groups, labels + 1) table of counts (column
    0 for -1), changed in place: per row the most frequent label and the next, ties to
    the lower label (the order the sort of the pairs gives); `first` and `second` keep
    their -2 where a row has none. O(groups x labels)."""
    rows = np.arange(len(table))
    best = np.argmax(table, axis=1)
    has = table[rows, best] > 0
    first[has] = best[has] - 1
    table[rows, best] = 0
    best = np.argmax(table, axis=1)
    has = table[rows, best] > 0
    second[has] = best[has] - 1
    return first, second


#: Least CIELAB distance between a faint stroke's colour and its background.
RIDGE_CONTRAST = 25.0
#: Least coverage (share of the pixel) of a faint stroke's ridge pixel in clean input.
RIDGE_COVERAGE = 0.3
#: ... rising by this much per unit of noise level, so that JPEG ringing never qualifies.
RIDGE_NOISE_STEP = 0.025
#: Least rise of coverage over the previous pixel for a ridge: along a stroke coverage
#: is flat, and rounding must not make every pixel of it a ridge across.
RIDGE_STEP = 0.02
#: A left-out pixel beside one more opaque than itself by this much is a shape's soft
#: edge, not a faint hairline (`_recover_on_transparency`).
SOLID_STEP = 0.5
#: Above this noise level (`cleanup.PHOTO_NOISE`, photos and scans) no strokes are recovered.
RIDGE_MAX_NOISE = 8.0


@attrs.frozen(eq=False)
class Recovered:
    """The label map with faint strokes back in it (`recover_strokes`), and the palette
    that goes with it: the one given, or a new one where a tint took the colour of the
    lines drawn in it."""

    labels: IntArray
    palette: npt.NDArray[np.float64]


def recover_strokes(
    labels: IntArray,
    rgb: npt.NDArray[np.uint8],
    palette: npt.NDArray[np.floating[Any]],
    edge: BoolArray,
    flat: BoolArray,
    noise: float,
    mix_tol: float,
    split: float = 0.0,
    rgb_tol: float = 6.0,
    flat_share: float = 1.0,
    colours: Colours | None = None,
    inks: BoolArray | None = None,
) -> Recovered:
    """Faint strokes back into the label map. A stroke thinner than a pixel (8-px text, a
    hairline at a fractional position) covers no pixel by half, so nearest-colour
    assignment gives its pixels to the background, or to an in-between tint (`_tints`),
    and the letter is gone. Across each of four directions (row, column, two diagonals) a
    pixel has a background B: the label of its neighbour before, or else after it, when
    that is another label and no tint (and the pixel is not exactly its own colour, within
    `rgb_tol`, unless that colour is a tint: a grey rule drawn in an artwork colour stays
    grey), else its own label. It takes colour F instead when its colour is a mixture of B
    and F (F at least `RIDGE_CONTRAST` from B) with F's coverage at least `RIDGE_COVERAGE`, and
    that coverage is a ridge: above the previous pixel's and at least the next one's (the
    strict side breaks ties, so an even stroke spread over two pixels becomes one pixel
    wide, not two). The soft side of an ordinary edge rises towards the full colour, so it
    is no ridge and stays as it was; a letter's counter is a ridge of the paper between two
    stems and comes back the same way. Only `edge` pixels (not region interiors) are
    examined, and none in photos and scans (noise at least `RIDGE_MAX_NOISE`, or under
    `TEXTURED` of the artwork in flat interiors, see `detail_mask`). The other pixels of a
    tint go to the nearer end of its mixture (`_resolve_tints`), so the tint, which is
    no colour of the artwork, leaves the file (in clean input only: noise under
    `cleanup.NOISY`). On transparency, faint hairline pixels left out with the background
    come back the same way (`_recover_on_transparency`). `colours`
    (`quantise.distinct_colours` of `rgb`), when given, lets each edge pixel's distance to
    its own colour be looked up in a table per distinct colour (`_own_distance`). A tint
    whose pixels left in it are lines drawn in a colour of their own (`_drawn_lines`)
    takes that colour (the flat interiors that measure the other colours later are none
    on a 1-px line). `inks` marks the palette colours found drawn in strokes of their own
    (`own_inks`): mixtures of two others, yet never tints. Returns the map and the palette
    (`Recovered`); neither `labels` nor `palette` is changed. Cost: O(E K) for E edge
    pixels and K colours.
    """
    pal = np.asarray(palette, dtype=np.float64)
    if noise >= RIDGE_MAX_NOISE or flat_share < TEXTURED or len(palette) == 0:
        return Recovered(labels, pal)
    h, w = labels.shape
    rows_u8 = pixel_rows(rgb)
    if len(pal) == 1:
        out = np.array(labels, dtype=np.int32, order="C")
        if rgb.shape[-1] == 4:
            _recover_on_transparency(out, rgb, pal)
        return Recovered(out, pal)
    lab = srgb_to_lab(pal)
    far = np.linalg.norm(lab[:, None, :] - lab[None, :, :], axis=2) >= RIDGE_CONTRAST
    # The edge pixels that are artwork: the labels read at the edge pixels alone.
    at = np.flatnonzero(edge)
    at = at[labels.reshape(-1).take(at) >= 0]
    y, x = np.divmod(at, w)
    inner = (y > 0) & (y < h - 1) & (x > 0) & (x < w - 1)
    at = at[inner]
    pairs = _tints(labels, flat, rows_u8, pal, (mix_tol, split, rgb_tol))
    if inks is not None:
        pairs[inks[: len(pairs)]] = -1  # drawn in strokes of their own: no tints
    if noise >= NOISY:
        # In JPEG'd art a thin band of a lighter shade along an edge may be the artwork's
        # own highlight, and a per-pixel split of noisy edge pixels would serrate the edge.
        pairs[:] = -1
    tint = pairs[:, 0] >= 0
    out, lines, pal = _resolve_tints(labels, rows_u8, pal, pairs, rgb_tol)
    far_ends: list[tuple[int, int]] = []
    if inks is not None and inks.any():
        far_ends = _resolve_ink_fringes(out, rows_u8, pal, inks, (mix_tol, split))
    if rgb.shape[-1] == 4:
        _recover_on_transparency(out, rgb, pal)
    if len(at) == 0:
        return Recovered(out, pal)
    flat_labels = labels.ravel()
    own = flat_labels.take(at)
    # A pixel exactly its own colour (not a tint) is no mixture with any coverage: only
    # the others are examined, which keeps the cost to the anti-aliased pixels.
    inexact = (_own_distance(rows_u8, pal, at, own, colours) > rgb_tol * rgb_tol) | tint.take(own)
    # A line drawn in a colour of its own (`_resolve_tints`) is no faint stroke of ink.
    if len(lines):
        inexact &= ~_sorted_member(lines, at)
    at, own = at[inexact], own[inexact]
    px = _gather(rows_u8, at)
    if len(at) == 0:
        return Recovered(out, pal)
    least = RIDGE_COVERAGE + RIDGE_NOISE_STEP * noise
    steps = (1, w, w + 1, w - 1)
    if len(at) * len(steps) <= RIDGE_BATCH:
        batches = [tuple(range(len(steps)))]
    else:
        batches = [(order,) for order in range(len(steps))]
    found = [
        _ridges(
            flat_labels,
            rows_u8,
            pal,
            at,
            px,
            own,
            tuple(steps[order] for order in orders),
            orders,
            (far, tint),
            least,
            mix_tol,
            split,
        )
        for orders in batches
    ]
    row = np.concatenate([f[0] for f in found])
    colour = np.concatenate([f[1] for f in found])
    res = np.concatenate([f[2] for f in found])
    rank = np.concatenate([f[3] for f in found])
    for ink, far in far_ends:
        # Beside an ink of its own a pixel is that ink's anti-aliasing: read as a faint
        # stroke of the ink's far end (greys' mixtures tie), it would take the ink's
        # letters with it. Its counters (ridges of the paper) still come back.
        kept = ~(_beside(out, np.arange(len(pal)) == ink, at).take(row) & (colour == far))
        row, colour, res, rank = row[kept], colour[kept], res[kept], rank[kept]
    if len(row) == 0:
        return Recovered(out, pal)
    # Per pixel the mixture with the least residual; equal residuals go to the first
    # direction, then the first colour (the order the directions and colours are tried).
    pick = np.lexsort((colour, rank, res, row))
    row, colour = row[pick], colour[pick]
    head = np.ones(len(row), dtype=bool)
    head[1:] = row[1:] != row[:-1]
    out.reshape(-1)[at[row[head]]] = colour[head]
    return Recovered(out, pal)


def _resolve_ink_fringes(
    labels: IntArray,
    rows_u8: npt.NDArray[np.uint8],
    pal: npt.NDArray[np.float64],
    inks: BoolArray,
    tolerances: tuple[float, float],
) -> list[tuple[int, int]]:
    """In place: the pixels given an ink of its own (`own_inks`) by the nearest colour that
    are another colour's anti-aliasing. An ink lies between two palette colours, its paper
    and a far end (#555 text between white and a #333 outline); the fringe and the thin
    stems of the far end's strokes pass through the ink's colour too. The ink's pixels in
    a piece of artwork (4-connected, off the paper) holding a pixel past the ink towards
    the far end (by `own_inks.PAST` of coverage, the measure that found the ink) are
    such, and go to the nearer end of the mixture, as a tint's pixel does
    (`_resolve_tints`); the ink's own strokes are pieces of their own. Of the mixtures
    that hold the ink, the one whose paper (the end with more pixels) is commonest.
    `labels` is C-contiguous. Returns each ink's (index, far end).
    O(K^2) per ink for its ends, O(N) for its pieces."""
    mix_tol, split = tolerances
    far_ends: list[tuple[int, int]] = []
    flat = labels.reshape(-1)
    counts = np.bincount(flat[flat >= 0], minlength=len(pal))
    for c in np.flatnonzero(inks[: len(pal)]).tolist():
        others = np.flatnonzero(np.arange(len(pal)) != c)
        if len(others) < 2:
            continue
        first, second = np.triu_indices(len(others), 1)
        res, t = segment_residual(
            np.broadcast_to(pal[c], (len(first), 3)), pal[others[first]], pal[others[second]], split
        )
        res = np.where((t > 0.05) & (t < 0.95), res, np.inf)  # between its ends, no overshoot
        # Of the mixtures that hold it (greys: many), the one with the commonest paper.
        paper_size = np.maximum(counts[others[first]], counts[others[second]])
        held = res < mix_tol
        if not held.any():
            continue
        pick = int(np.argmax(np.where(held, paper_size, -1)))
        ends = int(others[first[pick]]), int(others[second[pick]])
        paper, far = ends if counts[ends[0]] >= counts[ends[1]] else ends[::-1]
        far_ends.append((c, far))
        pieces = label_components(np.where(labels == paper, 0, 1).astype(np.int32))
        piece = pieces.to_id[pieces.base.reshape(-1)]
        # Coverage of the far end, read from the pixels' colours (not their labels, which
        # the unmixing of edges may have given the far end on the ink's own strokes).
        a, b = pal[paper], pal[far]
        towards = b - a
        norm = max(float(towards @ towards), 1e-9)
        level = float((pal[c] - a) @ towards) / norm
        art = np.flatnonzero(flat != paper)
        darker = art[((_gather(rows_u8, art) - a) @ towards) / norm > level + own_inks.PAST]
        holds_far = np.zeros(pieces.count, dtype=bool)
        holds_far[piece[darker]] = True
        at = np.flatnonzero((flat == c) & holds_far[piece])
        if len(at) == 0:
            continue
        t = ((_gather(rows_u8, at) - a) @ towards) / norm
        flat[at] = np.where(t >= 0.5, far, paper).astype(flat.dtype)
    return far_ends


def _beside(labels: IntArray, colours: BoolArray, at: npt.NDArray[np.intp]) -> BoolArray:
    """Whether each pixel `at` (flat indices, none on the image's border) is of one of
    `colours` (a mask over the palette) or has an 8-neighbour that is. O(len(at)): nine
    look-ups a pixel."""
    w = labels.shape[1]
    flat = labels.reshape(-1)
    marked = np.append(colours, False)  # -1, left out, reads the appended False
    found = np.zeros(len(at), dtype=bool)
    for step in (0, 1, -1, w, -w, w + 1, w - 1, -w + 1, -w - 1):
        found |= marked[flat.take(at + step)]
    return found


#: Pixels times palette colours screened at once by `_ridges` (a bound on its scratch
#: memory when thousands of colours are asked for).
RIDGE_CHUNK = 1 << 16
#: Pixels times directions up to which `_ridges` screens all four directions in one pass
#: (fewer NumPy calls); past it one direction at a time keeps its arrays in cache.
RIDGE_BATCH = 1 << 14
#: Slack of the screen in `_ridges`, in coverage: far above the rounding of its
#: differently ordered sums, so the screen never drops a pair the exact test would take.
SCREEN_SLACK = 1e-6


#: Largest table of distinct colours times palette colours `_own_distance` builds.
OWN_TABLE = 1 << 18


def _own_distance(
    rows_u8: npt.NDArray[np.uint8],
    pal: npt.NDArray[np.float64],
    at: npt.NDArray[np.intp],
    own: IntArray,
    colours: Colours | None,
) -> npt.NDArray[np.float64]:
    """The squared sRGB distance of each pixel `at` to its own palette colour `own`. Flat
    art has far fewer distinct colours than edge pixels, so when `colours` is given and
    its (U, K) table has no more entries than there are pixels (and at most
    `OWN_TABLE`), the distances are computed per distinct colour and looked up: the same float64
    differences, squared and summed over the channels in the same order, so the same
    values. Cost: O(E) look-ups plus O(U K), or O(E) per pixel."""
    table_size = len(colours.keys) * len(pal) if colours is not None else OWN_TABLE + 1
    if colours is not None and table_size <= min(len(at), OWN_TABLE):
        diff = colours.rgb.astype(np.float64)[:, None, :] - pal[None, :, :]
        table = (diff * diff).sum(axis=2)
        found: npt.NDArray[np.float64] = table[colours.of_pixels(rows_u8, at), own]
        return found
    off = _gather(rows_u8, at) - pal.take(own, axis=0)
    per_pixel: npt.NDArray[np.float64] = (off * off).sum(axis=1)
    return per_pixel


def _gather(rows_u8: npt.NDArray[np.uint8], at: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
    """The RGB of the pixels `at` (flat indices) as float64: the rows are gathered first,
    so the image is never converted as a whole. O(len(at))."""
    # `take` along the rows: several times faster than fancy indexing of a 2-D array.
    out: npt.NDArray[np.float64] = rows_u8.take(at, axis=0)[:, :3].astype(np.float64)
    return out


def _ridges(
    flat_labels: IntArray,
    rows_u8: npt.NDArray[np.uint8],
    pal: npt.NDArray[np.float64],
    at: npt.NDArray[np.intp],
    px: npt.NDArray[np.float64],
    own: IntArray,
    steps: tuple[int, ...],
    orders: tuple[int, ...],
    colour_pairs: tuple[BoolArray, BoolArray],
    least: float,
    mix_tol: float,
    split: float,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.float64], IntArray]:
    """`recover_strokes` along each direction of `steps` (in flat indices; `orders` their
    indices among the four): for the pixels `at` (RGB `px`) with labels `own`, every
    (pixel, colour F) whose colour is a mixture of its background B and F with a coverage
    ridge (`colour_pairs`: which colours are far enough apart, which are tints). Returns
    the rows into `at`, F, the residual and the direction's index per find, direction by
    direction.

    The directions given and all colours at once: the three coverages (the pixel's and
    its two neighbours') of every colour are dot products with the palette, one
    (D E, 3) x (3, K) product each for D directions, screened with `SCREEN_SLACK`; only
    the pairs left get the exact tests, one direction at a time (the same sums as one
    colour at a time, the residual by `segment_residual`). Cost: O(E K) multiply-adds
    for E pixels and K colours, in chunks of `RIDGE_CHUNK`; O(P) for the P pairs
    screened in (a few per stroke pixel).
    """
    far, tint = colour_pairs
    k, e = len(pal), len(at)
    directions = len(steps)
    # Row i * e + j: pixel j seen along direction i.
    offset = np.repeat(np.asarray(steps, dtype=np.intp), e)
    at_all = np.tile(at, directions)
    own_all = np.tile(own, directions)
    px_all = np.tile(px, (directions, 1))
    # Gathers by `take` (1-D and along the rows of 2-D tables): the same values as
    # indexing, at a fraction of its cost on small tables.
    before, after = flat_labels.take(at_all - offset), flat_labels.take(at_all + offset)
    usable_before = (before >= 0) & (before != own_all) & ~tint.take(before)
    usable_after = (after >= 0) & (after != own_all) & ~tint.take(after)
    bg = np.where(usable_before, before, np.where(usable_after, after, own_all))
    px_before = _gather(rows_u8, at_all - offset)
    px_after = _gather(rows_u8, at_all + offset)
    towards_all = pal[None, :, :] - pal[:, None, :]  # [b, f]: f - b
    inv_norm = 1.0 / np.maximum((towards_all * towards_all).sum(axis=2), 1e-9)
    allowed = far & ~tint[:, None] & ~tint[None, :]
    rows_found: list[npt.NDArray[np.intp]] = []
    colours_found: list[npt.NDArray[np.intp]] = []
    # A contiguous right operand keeps the (n, 3) x (3, K) products on BLAS (several times
    # faster than a strided one).
    pal_t = np.ascontiguousarray(pal.T)
    chunk = max(1, RIDGE_CHUNK // k)
    for s in range(0, len(at_all), chunk):
        b = bg[s : s + chunk]
        # Row i's own background in a flat (n, K) array: x . (pal[f] - pal[b]) for every f
        # is one product with the palette less its column b.
        at_b = np.arange(0, len(b) * k, k) + b
        inv = inv_norm.take(b, axis=0)
        maybe = allowed.take(b, axis=0)
        pixel = px_all[s : s + chunk]
        # The pixel's coverage t of f, and its rise over the neighbours' coverages (t less
        # theirs: the differences of the colours carried along the same line).
        screens = (
            (pixel - pal.take(b, axis=0), least - SCREEN_SLACK, False),
            (pixel - px_before[s : s + chunk], RIDGE_STEP - SCREEN_SLACK, True),
            (pixel - px_after[s : s + chunk], -(RIDGE_STEP + SCREEN_SLACK), False),
        )
        for difference, floor, strict in screens:
            dot = difference @ pal_t
            dot -= dot.reshape(-1).take(at_b)[:, None]
            dot *= inv
            maybe &= (dot > floor) if strict else (dot >= floor)
        r, f = np.divmod(np.flatnonzero(maybe), k)
        keep = own_all.take(s + r) != f
        rows_found.append(r[keep] + s)
        colours_found.append(f[keep])
    found = np.concatenate(rows_found)
    f = np.concatenate(colours_found)
    # The exact tests, on every direction's pairs at once: each is computed per pair from
    # that pair's own values, so the answers are those of one direction at a time, and
    # the pairs stay in direction order (row i * e + j is direction i).
    rows = found % e if directions > 1 else found
    b = bg.take(found)
    start, end = pal.take(b, axis=0), pal.take(f, axis=0)
    pixel = px.take(rows, axis=0)
    res, _ = segment_residual(pixel, start, end, split)
    towards = end - start
    norm = np.maximum((towards * towards).sum(axis=1), 1e-9)
    t = ((pixel - start) * towards).sum(axis=1) / norm
    t_before = ((px_before.take(found, axis=0) - start) * towards).sum(axis=1) / norm
    t_after = ((px_after.take(found, axis=0) - start) * towards).sum(axis=1) / norm
    good = (res < mix_tol) & (t >= least)
    good &= (t > t_before + RIDGE_STEP) & (t >= t_after - RIDGE_STEP)
    order = np.asarray(orders, dtype=np.int32)[found[good] // e]
    return rows[good], f[good], res[good], order


def bridge_corners(
    labels: IntArray,
    rgb: npt.NDArray[np.uint8],
    palette: npt.NDArray[np.floating[Any]],
    keep: BoolArray,
    *,
    in_place: bool = False,
) -> IntArray:
    """Diagonal steps of strokes made solid. Two pixels of a stroke (`keep`) that touch
    only at a corner trace as two shapes meeting in a point: a diagonal hairline or a thin
    ring prints as dashes. Where a 2x2 block holds the stroke's colour on one diagonal
    only, the off-diagonal pixel nearer that colour in the input joins the stroke; the
    sub-pixel step (`subpixel.crack_shifts`) then pulls its outline back towards the true
    edge, so the joint is as wide as the stroke, not a full pixel. Where both diagonals
    are strokes (two lines crossing) nothing changes. Returns a new map, or `labels`
    itself when nothing changes.

    Only the 2x2 blocks whose diagonal pixels are both strokes can change, so those
    blocks are listed once from `keep` (one O(N) scan of the mask) and each pass tests
    them alone, in the order a scan of the whole map would meet them (rows down; along a
    row left to right for the falling diagonal, right to left for the rising one), so a
    pixel claimed by two blocks ends as it always did. With `in_place` (a caller that
    owns `labels`, C-contiguous int32, and reads it no more) the blocks are made solid in
    `labels` itself, which is returned: a copy of the whole map (1 MB at 512 px, fresh
    memory) for a handful of changed pixels is spared. Cost: O(N) for the scan, then
    O(S) per pass for the S stroke pixels, in two passes (a block's change may complete
    its neighbour)."""
    h, w = labels.shape
    if h < 2 or w < 2:
        return labels
    keep_flat = keep.ravel()
    kept_at = np.flatnonzero(keep_flat)
    y, x = np.divmod(kept_at, w)
    falling = kept_at[(y < h - 1) & (x < w - 1)]
    falling = falling[keep_flat[falling + w + 1]]
    rising_ok = (y < h - 1) & (x > 0)
    rising = kept_at[rising_ok]
    order = np.lexsort((-x[rising_ok], y[rising_ok]))
    rising = rising[order]
    rising = rising[keep_flat[rising + w - 1]]
    if len(falling) == 0 and len(rising) == 0:
        return labels
    owned = in_place and labels.dtype == np.int32 and labels.flags.c_contiguous
    out = labels if owned else np.array(labels, dtype=np.int32, order="C")  # a new map
    flat = out.reshape(-1)
    pal = np.asarray(palette, dtype=np.float64)
    rows_u8 = pixel_rows(rgb)
    changed_any = False
    for _ in range(2):
        changed = False
        # Blocks by their corner p on the diagonal: p and p + w + side are the stroke,
        # p + side and p + w the two off-diagonal pixels.
        for corners, side in ((falling, 1), (rising, -1)):
            a, d = flat[corners], flat[corners + w + side]
            b, c = flat[corners + side], flat[corners + w]
            joint = (a == d) & (a >= 0) & (b != a) & (c != a)
            joint &= ~((b == c) & keep_flat[corners + side] & keep_flat[corners + w])
            at = corners[joint]
            if len(at) == 0:
                continue
            own = a[joint]
            colour = pal[own]
            off_b = rows_u8[at + side, :3].astype(np.float64) - colour
            off_c = rows_u8[at + w, :3].astype(np.float64) - colour
            take_b = (off_b * off_b).sum(axis=1) <= (off_c * off_c).sum(axis=1)
            flat[np.where(take_b, at + side, at + w)] = own
            changed = True
        if not changed:
            break
        changed_any = True
    return out if changed_any else labels


def _alpha_below(rgba: npt.NDArray[np.uint8], level: int) -> BoolArray:
    """Whether each pixel's alpha is under `level` (1 to 255). A whole C-ordered RGBA image
    on a little-endian machine is compared as one 32-bit word a pixel (alpha its top
    byte): a contiguous compare at half the cost of the strided alpha plane's. O(N)."""
    if rgba.ndim == 3 and rgba.shape[2] == 4 and rgba.flags.c_contiguous and np.little_endian:
        words = rgba.view(np.uint32)[..., 0]
        below: BoolArray = words < np.uint32(level << 24)
        return below
    strided: BoolArray = rgba[..., 3] < level
    return strided


def drawn_opaque(rgba: npt.NDArray[np.uint8], labels: IntArray) -> npt.NDArray[np.uint8]:
    """The pixels the tracer reads for sub-pixel placement: `rgba` with every pixel
    painted by rule while under half opaque as a dot (`_faint_dots`: labelled artwork at
    alpha under 128) made opaque in its own colour. The sub-pixel
    step reads alpha as coverage, so a 2x2 dot drawn at 25 % would move each of its
    sides in by half a pixel and print as a 1x1 square; drawn opaque by rule, it is
    covered by rule too, and keeps its drawn width. Returns `rgba` itself when no pixel
    is so painted (on opaque input: nothing left out, and one O(N) test of the map).
    Cost: O(N) compares, plus a copy of the image when a pixel changes."""
    if labels.size == 0 or labels.min(initial=0) >= 0:
        return rgba  # nothing left out: every pixel is either opaque art or a hole
    faint = _alpha_below(rgba, 128)
    faint &= labels >= 0
    if not faint.any():
        return rgba
    # Only dots (`_faint_dots`: a group of at most `DOT_MAX` pixels holding a 2x2 block).
    # A recovered hairline's pixels have the rest of its coverage beside them, which the
    # sub-pixel step already reads.
    w = faint.shape[1]
    at = np.flatnonzero(faint)
    block = _sorted_member(at, at + 1) & _sorted_member(at, at + w)
    block[block] = _sorted_member(at, at[block] + w + 1)
    if not block.any():
        return rgba
    count, group = _groups8(at, w)
    small = np.bincount(group, minlength=count) <= DOT_MAX
    has_block = np.zeros(count, dtype=bool)
    has_block[group[block]] = True
    dot = at[(small & has_block)[group]]
    if len(dot) == 0:
        return rgba
    out = np.array(rgba, dtype=np.uint8, order="C")
    out.reshape(-1, 4)[dot, 3] = 255
    return out
