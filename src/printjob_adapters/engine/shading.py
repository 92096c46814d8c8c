"""Bands of a smooth gradient: each pixel's band read from a lightly smoothed image.

Shaded smooth art (`colour_count`: a gradient background, a shaded shape) gets a palette of
its flat colours, kept exactly, and band colours between them (`quantise._band_palette`).
Assigned pixel by pixel, a band on a steep part of the gradient is a ring one or two pixels
wide whose edge follows the 8-bit rounding of the input: it falls into many 4-connected
pieces, which the clean-up of noisy-looking input (a steep clean ramp spreads as much as
noise over 5 pixels) merges into the next band, a visible step of two bands.

Here the bands are made again (`band_labels`), in four named stages:

1. `_smoothed`: the image smoothed over its opaque pixels (normalised convolution with a
   5-tap binomial kernel, sigma 1 px). Smoothing a ramp keeps its value (the kernel is
   symmetric) and takes out the rounding; where it moves a channel by at most `LINEAR`
   levels the image is locally linear (a gradient, however steep, or a flat area), else it
   is an edge or the artwork's anti-aliasing. Under JPEG noise the limit is the noise's
   own (`NOISY_LINEAR`, `_linear_limit`). O(N).
2. `cover`: band colours placed evenly in CIEDE2000 over the smoothed colours of the
   areas labelled from them (for clean input its bends too, `BENT`; for noisy input the
   linear areas) (farthest-point picks, unweighted, from the flat colours, kept exactly),
   every colour within `REACH` of one, and further apart where the gradient is steep
   (`STEEP` times its own change per pixel, `_slope`), so a band is at least about two
   pixels wide and one connected ring or strip. At most `MAX_COLOURS` (64) for a gradient
   along one line; a gradient in two directions (a plane of colours: a blend across and a
   shading down) needs its bands across the plane, as many as the plane's area asks, up
   to `CLEAN_MAX_COLOURS` (256) when that many hold it within reach (under JPEG noise
   only when `_two_dimensional` says so).
   O((K + F) U) for K picks, F flat colours and U grid cells of the sampled pixels (at
   most `PLACING`). A plane wider still (four saturated corners blended: over a thousand
   discs of `REACH`) is banded as a lattice of cells along the image's two axes instead
   (`_plane_cells`), each cut where the colour has moved by `PLANE_STEP`: neighbouring
   cells within the bound at a few hundred to about 1,500 colours. O(N + D log F) for D
   distinct smoothed colours.
3. Labelling: linear pixels and the gradient's bends (`BENT`: a radial gradient's centre,
   a ramp's foot) take the colour nearest to their smoothed colour (once per distinct
   smoothed colour); edge pixels keep their flat colour, or from an old band the nearest
   new one. O(N log N) for the sort of the smoothed colours' keys plus O(D K) for D
   distinct smoothed colours.
4. `_steep`: where bands are narrow, which the speck filter that follows
   (`cleanup.merge_specks`, in `segmentation`) leaves as they are. O(N).

Memory: the smoothed image is three float32 planes and every other full-size array a plane
of its own (a 3 MP gradient: about 140 MB at the most, the blur reusing one scratch plane).

Where the input itself changes by more than about 1.25 CIEDE2000 per pixel, no banding of
rings two pixels wide keeps neighbouring bands under `colour_count.BAND_STEP`: the step
is bounded by the input's own (docs/engine.md, "Gradients without banding").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from printjob_adapters.engine import colour_count
from printjob_adapters.engine.colour import ciede2000, lab_to_srgb, srgb_to_lab
from printjob_adapters.engine.nearest import PointSet

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.floating[Any]]
Float32Array = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]

#: CIEDE2000 within which every smoothed colour of the gradient lies of a colour: bands end
#: `REACH` to twice `REACH` apart, under `colour_count.BAND_STEP` (2.5) with room for the
#: re-measuring of each colour from its pixels (`segmentation._estimate_colours`).
REACH = 1.0
#: CIELAB grid on which the smoothed colours are counted once each for `cover`: a fraction
#: of `REACH`, and a few thousand distinct colours for a full-page gradient.
GRID = 0.5
#: Most pixels that place band colours (`cover`, `_slope`); larger images place them from a
#: grid of pixels (a 512-px image from every second pixel of every second row).
PLACING = 65_536
#: Most colours, flat and band together (`colour_count.SHADED_MAX`), under JPEG noise:
#: there more colours would cover the noise that one smoothing leaves, not the gradient
#: (a JPEG'd radial gradient at quality 75: 121 colours, twice the segments, steps no
#: closer).
MAX_COLOURS = colour_count.SHADED_MAX
#: Most colours, flat and band together, of a gradient that needs more than `MAX_COLOURS`
#: to keep every colour within reach and fewer than this (`colour_count.AUTO_MAX`). A
#: gradient along one line needs far fewer (a line of 160 CIEDE2000, black to white,
#: about 80 bands); a gradient in two directions needs its bands across a plane of colour,
#: whose count grows with the plane's area (a soft two-axis blend of 45 by 20 CIEDE2000:
#: about 230), and at `MAX_COLOURS` stepped by up to 2.4 more than the bound. A plane
#: wider still (four saturated corners blended) steps visibly even at 256 (4 to 7 over
#: the bound, 11 to 13 at 64) and keeps `MAX_COLOURS` (`HELD`): a quarter of the paths.
CLEAN_MAX_COLOURS = colour_count.AUTO_MAX
#: A gradient keeps more than `MAX_COLOURS` only if they bring every colour within this
#: many times its reach (`cover`). Measured at `CLEAN_MAX_COLOURS`: soft two-axis blends,
#: clean or JPEG'd, 1.0 to 1.44, and every step within the bound; wider planes (four
#: saturated corners, blue to yellow across and dark to light down) 2.1 to 2.8, and steps
#: 4 to 7 over it.
HELD = 1.5
#: Most 8-bit levels by which smoothing may move a channel of a locally linear pixel: the
#: rounding of a ramp moves it by under half a level, a radial ramp's bend by under one;
#: an edge or its anti-aliasing by tens.
LINEAR = 1.0
#: Most levels by which smoothing may move a pixel labelled from the smoothed image: a
#: bend of the gradient (the centre of a radial one, 2.7 levels at 1.3 CIEDE2000 per pixel;
#: the foot of a ramp on a flat area) is part of it, and an edge pixel of its own colour
#: left there steps by up to 10. The artwork's edges, dots and lines move by more (a dot or
#: line of 5 levels' contrast, barely visible, by about 3).
BENT = 3.0
#: Under JPEG noise smoothing moves every pixel of a ramp by about its noise (a steep
#: radial gradient at quality 75: a median of 1 level, 49 % of its pixels within `LINEAR`):
#: there a pixel is linear within this many times the median move of the pixels that follow
#: the gradient. A clean gradient's median is its rounding, under half a level, so `LINEAR`
#: stands.
NOISY_LINEAR = 2.0
#: Under JPEG noise a bend of the gradient (not linear, yet followed: `BENT`) places a band
#: colour only where its smoothed colour is further than this from every other: a part of
#: the gradient no linear pixel reaches (a steep radial gradient's tip, white to red at 3.4
#: CIEDE2000 a pixel at quality 90: its white centre stepped by 10.2 to the nearest band),
#: not the noise around a ramp that one smoothing leaves (at `REACH` it added a fifth to
#: twice the segments of JPEG'd radial gradients).
BENT_REACH = colour_count.BAND_STEP
#: A gradient's colour changes two ways (`_two_dimensional`) where its changes across and
#: down are at least this many degrees apart in CIELAB...
PLANE_ANGLE = 30.0
#: ...at at least this share of the sampled pixels.
PLANE_SHARE = 0.5
#: Where the gradient is steep, bands are at least this many times its own CIEDE2000 per
#: pixel apart: a ring across a diagonal stays 4-connected (at least about two pixels
#: wide), so a band is one shape, not a piece per staircase step. Measured: 1.0 left
#: rings of a white-to-navy radial gradient (1.1 per pixel) in pieces (2,951 path
#: segments), 1.25 joins them (1,048), 1.5 steps by up to 3.4.
STEEP = 1.25
#: The smoothing kernel (binomial, sigma 1 px): wide enough to average the input's 8-bit
#: rounding over a band's edge, narrow enough to keep a ring two pixels wide in its place.
#: A pixel whose smoothed image changes by at least this many 8-bit levels in a channel
#: to a neighbour is on a steep part of the gradient, where a band is a ring or strip a
#: few pixels wide: its small pieces are bands, not specks, and the speck filter leaves
#: them. Elsewhere (a slow gradient, a flat area) a band is wide and a small piece of it
#: is a speck of the rounding (a 3 MP radial gradient: 8,230 pieces, 66 after).
STEEP_LEVELS = 2.0
#: CIEDE2000 by which a plane's colour may move across one cell of its lattice
#: (`_plane_cells`): neighbouring cells end about this far apart, under
#: `colour_count.BAND_STEP` with room for the re-measuring of each cell from its pixels.
PLANE_STEP = 2.0
#: CIEDE2000 within which a flat colour's pixels hold it exactly (`_plane_cells`): the
#: smoothed colour of a flat area's inside is its colour, of a plane's stripe only at its
#: middle.
FLAT_EXACT = 0.25
#: Fewest pixels a lattice's cell holds on average (`_plane_cells`): four corners blended
#: over 160 px (about 0.5 CIEDE2000 a pixel each way) gets cells of 22 pixels (16.5 under
#: JPEG noise); red across and green down over 160 by 120 px, of 10.5, over 1,800 colours
#: for 19,200 pixels, keeps the first `MAX_COLOURS` picks.
PLANE_CELL = 12
#: Places across the plane at which a cut is measured (`_profile`), each the mean of a
#: block of rows or columns.
PROFILE_SAMPLES = 32
#: Positions measured at once against a cell's start (`_cuts`): wider than most cells.
CUT_WINDOW = 32
KERNEL = np.array([1.0, 4.0, 6.0, 4.0, 1.0], dtype=np.float32) / 16.0


@attrs.frozen(eq=False)
class Bands:
    """Labels and palette of smooth shaded art (`band_labels`), and where its bands are
    narrow (`steep`: locally linear and steep, `STEEP_LEVELS`), which the speck filter
    must leave as they are."""

    labels: IntArray
    palette: npt.NDArray[np.float64]
    steep: BoolArray


def band_labels(
    labels: IntArray,
    rgb: npt.NDArray[np.uint8],
    palette: FloatArray,
    fixed: int,
    tick: Callable[[], None] | None = None,
) -> Bands:
    """New band colours for `palette` (its first `fixed` colours, the flat ones, kept) and
    the labels that go with them. Where the image is locally linear (`linear`: a gradient,
    however steep, or a flat area) each pixel takes the colour nearest to the smoothed
    image; elsewhere (edges, the artwork's anti-aliasing) a pixel keeps its flat colour, or
    from a band colour takes the colour nearest to its own. Left-out pixels (-1) stay.
    `tick`, a cancel check, is called between the passes (each at most a few tenths of a
    second of CPU at 3 MP). Cost: O(N + (K + F) B) for N pixels, B relabelled pixels, K
    band and F flat colours."""
    check = tick or _no_check
    opaque = labels >= 0
    if fixed > len(palette) or fixed >= MAX_COLOURS or not opaque.any():
        return Bands(labels, palette.astype(np.float64), np.zeros(labels.shape, dtype=bool))
    smooth, moved = _smoothed(rgb, opaque, check)
    # Labelled from the smoothed image: the linear pixels and the bends of the gradient
    # (a radial gradient's centre, a ramp's foot), which smoothing moves a little more.
    follows = moved <= BENT
    stride = max(1, int(np.ceil(np.sqrt(labels.size / PLACING))))
    limit = _linear_limit(moved[::stride, ::stride], follows[::stride, ::stride])
    linear = moved <= limit
    del moved
    check()
    # The smoothed colours, once each at a quarter of a level: a gradient has a few thousand to a
    # few hundred thousand, not one per pixel.
    key = _keys(smooth)[follows]
    check()
    distinct = _distinct(key)
    check()
    lab = srgb_to_lab(_from_keys(distinct))
    check()
    index = np.full(labels.shape, -1, dtype=np.int32)
    index[follows] = np.searchsorted(distinct, key)
    del key
    check()
    flat_lab = srgb_to_lab(palette[:fixed])
    # Placed by the inside of the areas labelled from the smoothed image (not by tints
    # that ring along the artwork), on a grid of pixels `stride` apart at most `PLACING`
    # of them. Clean input places by its bends too: a steep radial gradient's centre is
    # not linear over a few pixels, and with no band placed there two colours far apart
    # met in it (white to red at 3.4 CIEDE2000 a pixel: 20.4). Under noise, by the inside
    # of the linear pixels, whose limit the noise has widened, and by its bends only at
    # `BENT_REACH`: noisy bends would otherwise spread the colours to cover into a cloud
    # and add bands for the noise.
    inside = _inside(follows)
    noisy = limit > LINEAR
    if noisy:
        inside = _inside(linear) | (inside & ~linear)
    placing = np.zeros(labels.shape, dtype=bool)
    placing[::stride, ::stride] = True
    placing &= inside
    placing[-1] = placing[:, -1] = False  # its neighbours right and down measure its slope
    reach = np.maximum(REACH, STEEP * _slope(lab, index, placing))
    if noisy:
        bent = ~linear[placing]
        reach[bent] = np.maximum(reach[bent], BENT_REACH)
    # The cover stops once every colour is within reach: only a gradient that needs more
    # than `MAX_COLOURS` gets more, and keeps them only if `CLEAN_MAX_COLOURS` hold it
    # within `HELD` times its reach. A plane wider than that is banded visibly either way,
    # and keeps the `MAX_COLOURS` first picks (the same) and a quarter of the paths. Under
    # noise only a gradient whose colour changes two ways gets more: along one line they
    # would go to the noise.
    most = MAX_COLOURS - fixed
    if not noisy or _two_dimensional(lab, index, stride):
        most = CLEAN_MAX_COLOURS - fixed
    check()
    picks, left = cover(lab[index[placing]], reach, flat_lab, most, check)
    narrow: BoolArray | None = None
    if left > HELD:
        # A plane too wide for a cover of discs: a lattice of cells in its own two axes.
        narrow = linear & _steep(smooth, check)
        del smooth  # the cells read `lab[index]`
        cells = _plane_cells(labels, palette, fixed, lab, index, follows, check)
        if cells is not None:
            # The cells are the plane's bands: the speck filter leaves every one of them.
            return Bands(cells.labels, cells.palette, cells.steep | narrow)
        # Too steep for cells of a few pixels: the first picks, banded visibly.
        picks = picks[: MAX_COLOURS - fixed]
    centres = np.vstack([flat_lab, picks])
    check()
    _, nearest = PointSet(centres).query(lab)
    check()
    out = labels.copy()
    out[follows] = nearest[index[follows]]
    # Elsewhere a band colour (an edge pixel unmixed to the gradient) becomes the nearest
    # new colour, so the unmixing's choice stands.
    _, renamed = PointSet(centres).query(srgb_to_lab(palette))
    renamed[:fixed] = np.arange(fixed)
    rest = opaque & ~follows
    out[rest] = renamed[labels[rest]]
    new_palette = np.vstack([palette[:fixed], lab_to_srgb(centres[fixed:])])
    check()
    if narrow is None:
        narrow = linear & _steep(smooth, check)
    return Bands(out, new_palette.astype(np.float64), narrow)


def _no_check() -> None:
    return None


def _plane_cells(
    labels: IntArray,
    palette: FloatArray,
    fixed: int,
    lab: FloatArray,
    index: IntArray,
    follows: BoolArray,
    check: Callable[[], None] = _no_check,
) -> Bands | None:
    """Bands of a plane of colour (a gradient in two directions too wide for `cover`): a
    lattice of cells along the image's two axes, cut where the colour has moved by
    `PLANE_STEP` from the cell's first column (row) in any sampled row (column), each cell
    one colour, the mean of its smoothed colours. A plane of colour is a smooth function of
    position, so such a lattice is a lattice in the plane's own two parameters: its cells
    need as many colours as the plane is wide in steps, not a disc of `REACH` each (four
    saturated corners blended at 160 px: about 60 by 60 CIEDE2000, over 1,000 discs, and
    64 picks stepped by 15). Pixels of the gradient within `REACH` of a flat colour keep
    the nearest flat colour; edge pixels of an old band colour take their cell's colour.
    `steep` marks the cells' pixels, which the speck filter must leave (a cell of a steep
    plane is a few pixels wide). None when the cells would hold fewer than `PLANE_CELL`
    pixels on average: a colour field that steep (a colour a few pixels) is not a plane
    that flat bands can draw. `lab[index]` is the smoothed image in CIELAB where
    `follows`. Cost: O(N + D log F) for N pixels, D distinct smoothed colours and F flat
    colours."""
    height, width = labels.shape
    opaque = labels >= 0
    flat_lab = srgb_to_lab(palette[:fixed])
    # Each distinct smoothed colour's nearest flat colour in CIELAB, as the labelling finds
    # it, measured in CIEDE2000: one measure per colour, not one per flat colour.
    nearest_flat = np.zeros(len(lab), dtype=np.int32)
    flat_off = np.full(len(lab), np.inf)
    if fixed:
        _, nearest = PointSet(flat_lab).query(lab)
        flat_off = ciede2000(lab, flat_lab[nearest])
        nearest_flat = nearest.astype(np.int32)
        del nearest
    check()
    at = np.where(follows, index, 0)
    # A flat colour of the artwork (a shape on the plane) holds most of its pixels'
    # smoothed colours exactly; one the plane merely passes through (8-bit rounding
    # repeats a colour along its level lines) holds a stripe across the plane, whose
    # pixels spread over its reach: those take cells, else the cells they cross would be
    # cut in two and coloured by the mean of both parts.
    was_flat = follows & (labels >= 0) & (labels < fixed)
    exact = was_flat & (flat_off <= FLAT_EXACT)[at]
    exact &= nearest_flat[at] == labels
    held = np.bincount(labels[was_flat], minlength=fixed)
    artwork = 2 * np.bincount(labels[exact], minlength=fixed) >= np.maximum(held, 1)
    del was_flat, exact
    # The plane: the gradient's pixels away from every flat colour of the artwork, and the
    # edge pixels an old band colour was given (the artwork's anti-aliasing against it).
    inner = follows & ((flat_off > REACH) | ~artwork[nearest_flat])[at]
    out = labels.copy()
    flat_part = follows & ~inner
    out[flat_part] = nearest_flat[at[flat_part]]
    del flat_part
    edge = opaque & ~follows & (labels >= fixed)
    plane = inner | edge
    if not plane.any():
        return Bands(out, np.asarray(palette[:fixed], dtype=np.float64), plane)
    check()
    # The plane's smoothed colours as one float32 map a channel, zero elsewhere: the cuts'
    # profiles and the cells' sums are sums over blocks of it (`np.add.reduceat`), with
    # no list of the plane's pixels.
    lab32 = lab.astype(np.float32)
    weight_map = inner.astype(np.float32)

    column_blocks = _blocks(height)
    row_blocks = _blocks(width)
    # Each channel gathered once for both profiles (one float32 plane at a time).
    down: list[Float32Array] = []
    across_sums: list[Float32Array] = []
    for c in range(3):
        value = _channel(lab32, at, weight_map, c)
        down.append(np.add.reduceat(value, column_blocks, axis=0))
        across_sums.append(np.add.reduceat(value, row_blocks, axis=1))
    del value
    columns = _cuts(
        _profile(down, np.add.reduceat(weight_map, column_blocks, axis=0)).swapaxes(0, 1)
    )
    rows = _cuts(_profile(across_sums, np.add.reduceat(weight_map, row_blocks, axis=1)))
    del down, across_sums
    check()
    if np.count_nonzero(inner) < PLANE_CELL * len(rows) * len(columns):
        return None
    # Each cell's colour: the mean of its smoothed colours, or where it holds only edge
    # pixels (a sliver beside the artwork), of their old band colours.
    weight = _cell_sums(weight_map, rows, columns).astype(np.float64).ravel()
    sums = np.stack(
        [_cell_sums(_channel(lab32, at, weight_map, c), rows, columns) for c in range(3)], axis=-1
    ).astype(np.float64)
    sums = sums.reshape(-1, 3)
    del weight_map, at
    column_of = (np.searchsorted(columns, np.arange(width), side="right") - 1).astype(np.int32)
    row_of = (np.searchsorted(rows, np.arange(height), side="right") - 1).astype(np.int32)
    count = len(rows) * len(columns)
    cell = row_of[:, None] * np.int32(len(columns)) + column_of[None, :]
    bare = weight == 0
    if bare.any():
        edge_cell = cell[edge]
        edge_lab = srgb_to_lab(np.asarray(palette, dtype=np.float64))[labels[edge]]
        fill = bare[edge_cell]
        weight += np.bincount(edge_cell[fill], minlength=count)
        for c in range(3):
            sums[:, c] += np.bincount(edge_cell[fill], edge_lab[fill, c], minlength=count)
    used = weight > 0
    renumbered = (np.cumsum(used) - 1 + fixed).astype(np.int32)
    out[plane] = renumbered[cell[plane]]
    colours = lab_to_srgb(sums[used] / weight[used, None])
    check()
    new_palette = np.vstack([np.asarray(palette[:fixed], dtype=np.float64), colours])
    return Bands(out, new_palette, plane)


def _channel(lab32: Float32Array, at: IntArray, weight: Float32Array, c: int) -> Float32Array:
    """Channel `c` of the smoothed colours `lab32[at]`, times `weight` (1 on the plane, 0
    elsewhere). Cost: O(N), one float32 plane."""
    value: Float32Array = lab32[at, c]
    value *= weight
    return value


def _blocks(breadth: int) -> npt.NDArray[np.intp]:
    """Where the blocks of rows (columns) start across which a cut is measured: at most
    `PROFILE_SAMPLES` of them. Cost: O(PROFILE_SAMPLES)."""
    block = max(1, -(-breadth // PROFILE_SAMPLES))
    return np.arange(0, breadth, block)


def _profile(sums: list[Float32Array], count: Float32Array) -> FloatArray:
    """The plane's mean colour (CIELAB) in each block (`_blocks`) at each position along
    the axis the cut runs on, from the channels' sums and the pixel counts over the
    blocks: the mean over a block of rows (columns) each, so that JPEG's noise, which
    smoothing leaves a level or so of, does not cut cells; NaN where a block holds none of
    the plane. Cost: O(B L) for B blocks and L positions."""
    stacked = np.stack(sums, axis=-1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean: FloatArray = stacked / count[..., None]
    return mean


def _cell_sums(
    value: Float32Array, rows: npt.NDArray[np.intp], columns: npt.NDArray[np.intp]
) -> Float32Array:
    """`value` summed over each cell of the lattice (rows by columns). Cost: O(N)."""
    out: Float32Array = np.add.reduceat(np.add.reduceat(value, rows, axis=0), columns, axis=1)
    return out


def _cuts(profile: FloatArray) -> npt.NDArray[np.intp]:
    """Where the lattice's cells start along the first axis of `profile` (positions,
    samples across, CIELAB; NaN where a sample is not of the plane): a cell runs on while
    every sample stays within `PLANE_STEP` CIEDE2000 of the cell's first position's, so
    neighbouring cells are about `PLANE_STEP` apart wherever the plane is. Each position is
    measured once against its cell's start, a window of `CUT_WINDOW` at a time.
    Cost: O(L M) for L positions and M samples."""
    length = len(profile)
    empty = np.asarray(np.isnan(profile[..., 0]).all(axis=1), dtype=bool)
    starts = [0]
    start, ahead = 0, 1
    while ahead < length:
        if empty[start]:
            # Nothing of the plane here (the artwork across it): measure from the next.
            start, ahead = ahead, ahead + 1
            continue
        stop = min(length, ahead + CUT_WINDOW)
        off = ciede2000(profile[start][None], profile[ahead:stop])
        # NaN (a sample off the plane at either end) never cuts.
        far = np.flatnonzero(np.nan_to_num(off, nan=0.0).max(axis=1) > PLANE_STEP)
        if not len(far):
            ahead = stop
            continue
        start = ahead + int(far[0])
        starts.append(start)
        ahead = start + 1
    return np.array(starts, dtype=np.intp)


def _linear_limit(moved: Float32Array, follows: BoolArray) -> float:
    """Most levels by which smoothing moves a locally linear pixel: `LINEAR`, or under JPEG
    noise `NOISY_LINEAR` times the median move of the pixels that follow the gradient
    (`BENT`, the most) and move at all, whose noise smoothing takes out. Cost: O(P) for the
    P pixels given."""
    # Flat areas, JPEG'd or not, do not move at all: the ramps tell the noise.
    followed = moved[follows & (moved > 0)]
    if not len(followed):
        return LINEAR
    return min(BENT, max(LINEAR, NOISY_LINEAR * float(np.median(followed))))


def _two_dimensional(lab: FloatArray, index: npt.NDArray[np.int32], stride: int) -> bool:
    """Whether the gradient's colour changes two ways: across and down (over an eighth of
    the image, where JPEG's noise that one smoothing leaves is small beside the change)
    the smoothed colour moves in directions at least `PLANE_ANGLE` apart at most sampled
    pixels (`PLANE_SHARE`). Along one line (linear, radial or conic: every change runs
    along the same colour curve) the two changes are parallel; a soft two-axis blend
    measures 0.8 to 1.0 of its pixels so, JPEG'd radial gradients 0 to 0.15. `lab[index]`
    is the smoothed image in CIELAB (-1: not followed). Cost: O(P) for P pixels a grid of
    `stride` apart."""
    height, width = index.shape
    step = max(4, min(height, width) // 8)
    here = index[: height - step : stride, : width - step : stride]
    across = index[: height - step : stride, step::stride][:, : here.shape[1]]
    down = index[step::stride, : width - step : stride][: here.shape[0]]
    sampled = here.size
    valid = (here >= 0) & (across >= 0) & (down >= 0)
    if not sampled or not valid.any():
        return False
    origin = lab[here[valid]]
    u = lab[across[valid]] - origin
    v = lab[down[valid]] - origin
    length_u = np.linalg.norm(u, axis=1)
    length_v = np.linalg.norm(v, axis=1)
    moving = (length_u >= 1.0) & (length_v >= 1.0)
    if np.count_nonzero(moving) < PLANE_SHARE * sampled:
        return False  # one way the colour hardly changes (a linear gradient)
    sine = np.linalg.norm(np.cross(u[moving], v[moving]), axis=1)
    sine /= length_u[moving] * length_v[moving]
    return bool(np.count_nonzero(sine >= np.sin(np.radians(PLANE_ANGLE))) >= PLANE_SHARE * sampled)


def _steep(smooth: Float32Array, check: Callable[[], None] = _no_check) -> BoolArray:
    """Where the smoothed image (channel planes, `_smoothed`) changes by at least
    `STEEP_LEVELS` in a channel from a pixel to the next (right or down, either side).
    Cost: O(N), one plane at a time."""
    steep = np.zeros(smooth.shape[1:], dtype=bool)
    for plane in smooth:
        for axis in (0, 1):
            change = np.abs(np.diff(plane, axis=axis)) >= STEEP_LEVELS
            ahead = [slice(None), slice(None)]
            behind = [slice(None), slice(None)]
            ahead[axis], behind[axis] = slice(1, None), slice(None, -1)
            steep[tuple(ahead)] |= change
            steep[tuple(behind)] |= change
        check()
    return steep


def _inside(mask: BoolArray) -> BoolArray:
    """`mask` without the pixels next to (8-neighbours of) one outside it. Cost: O(N)."""
    inner = mask.copy()
    inner[1:] &= mask[:-1]
    inner[:-1] &= mask[1:]
    out = inner.copy()
    out[:, 1:] &= inner[:, :-1]
    out[:, :-1] &= inner[:, 1:]
    return out


def _smoothed(
    rgb: npt.NDArray[np.uint8], opaque: BoolArray, check: Callable[[], None] = _no_check
) -> tuple[Float32Array, Float32Array]:
    """The image smoothed over opaque pixels (normalised convolution with `KERNEL`), as
    three channel planes (3, H, W), and by how many levels smoothing moves each pixel's
    furthest channel (infinite where it is transparent): a symmetric kernel keeps a ramp's
    value (`LINEAR`), moves a bend of it a little (`BENT`) and an edge by tens.
    Cost: O(N), one float32 plane at a time (a 3 MP image: 12 MB a plane)."""
    everything = bool(opaque.all())
    weight = opaque.astype(np.float32)
    if everything:
        # The kernel's taps are binary fractions: the blur of ones is exactly the product
        # of its row and column profiles (1 inside, less within two pixels of a side).
        rows = np.ones((opaque.shape[0], 1), dtype=np.float32)
        columns = np.ones((1, opaque.shape[1]), dtype=np.float32)
        spread = _blur_axis(rows, 0, np.empty_like(rows)) * _blur_axis(
            columns, 1, np.empty_like(columns)
        )
    else:
        spread = _blur(weight)
    smooth = np.empty((3, *opaque.shape), dtype=np.float32)
    moved = np.zeros(opaque.shape, dtype=np.float32)
    counted = spread > 0
    for channel in range(3):
        raw = rgb[..., channel].astype(np.float32)
        plane = _blur(raw if everything else raw * weight)
        np.divide(plane, spread, out=plane, where=counted)
        smooth[channel] = plane
        np.subtract(plane, raw, out=raw)
        np.maximum(moved, np.abs(raw, out=raw), out=moved)
        check()
    moved[~opaque | ~counted] = np.inf
    return smooth, moved


def _slope(lab: FloatArray, index: npt.NDArray[np.int32], where: BoolArray) -> FloatArray:
    """CIEDE2000 per pixel at each pixel of `where` (whose 4-neighbours right and down are
    linear: `_inside`), across its level line: the root of the squares of its steps to the
    next pixel right and down. `lab[index]` is the smoothed image in CIELAB.
    Cost: O(P) for the P pixels of `where`."""
    ys, xs = np.nonzero(where)
    here = lab[index[ys, xs]]
    across = ciede2000(here, lab[index[ys, xs + 1]])
    down = ciede2000(here, lab[index[ys + 1, xs]])
    slope: FloatArray = np.hypot(across, down)
    return slope


def _keys(smooth: Float32Array) -> npt.NDArray[np.int32]:
    """The smoothed colours (channel planes, `_smoothed`) as one integer a pixel, at a
    quarter of a level (finer than the smoothing's own rounding). Cost: O(N)."""
    key = np.zeros(smooth.shape[1:], dtype=np.int32)
    scaled = np.empty(smooth.shape[1:], dtype=np.float32)
    for shift, plane in zip((20, 10, 0), smooth, strict=True):
        np.multiply(plane, 4.0, out=scaled)
        np.rint(scaled, out=scaled)
        key |= scaled.astype(np.int32) << shift
    return key


def _distinct(keys: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """The distinct values of `keys`, sorted: one sort (a hash of a two-axis gradient's
    half a million distinct colours costs three times as much). Cost: O(N log N)."""
    ordered = np.sort(keys)
    first = np.ones(len(ordered), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    distinct: npt.NDArray[np.int32] = ordered[first]
    return distinct


def _from_keys(keys: npt.NDArray[np.int32]) -> npt.NDArray[np.float64]:
    """The sRGB colours (K, 3) of `_keys`. Cost: O(K)."""
    keys = keys.astype(np.int64)
    half = np.stack([keys >> 20, (keys >> 10) & 1023, keys & 1023], axis=1)
    colours: npt.NDArray[np.float64] = half.astype(np.float64) / 4.0
    return colours


def cover(
    lab: FloatArray,
    reach: FloatArray,
    given: FloatArray,
    most: int,
    check: Callable[[], None] = _no_check,
) -> tuple[FloatArray, float]:
    """Band colours (CIELAB) such that every colour of `lab` is within `REACH` CIEDE2000 of
    one of them or of the `given` colours: farthest-point picks over the distinct colours
    on a grid of `GRID` CIELAB units, unweighted, so that a steep part of a gradient (few
    pixels per unit of colour) gets its bands as close together as a slow part. On a ramp
    the picks end `REACH` to twice `REACH` apart. At most `most` colours; with them, the
    largest distance of a colour to the nearest pick or given colour in units of its reach
    (at most 1 when every colour is within reach).
    Cost: O((K + G) U) for K colours picked, G given and U grid colours."""
    # One integer per grid cell (L* 0..100, a* and b* within +-512 grid units).
    grid = np.rint(lab / GRID).astype(np.int64) + np.array([0, 512, 512])
    cells, inverse, counts = np.unique(
        (grid[:, 0] << 20) | (grid[:, 1] << 10) | grid[:, 2],
        return_inverse=True,
        return_counts=True,
    )
    points = np.stack([cells >> 20, (cells >> 10) & 1023, cells & 1023], axis=1) - [0, 512, 512]
    points = points.astype(np.float64) * GRID
    cell_reach = np.full(len(points), np.inf)
    np.minimum.at(cell_reach, inverse.ravel(), reach)
    dist = np.full(len(points), np.inf)
    for colour in given:
        np.minimum(dist, ciede2000(points, np.broadcast_to(colour, points.shape)), out=dist)
    if not len(given):
        dist[int(np.argmax(counts))] = np.inf  # the commonest colour first
    picks: list[FloatArray] = []
    # Only cells not yet within reach can be picked: the others leave the search, so each
    # pick measures fewer cells than the last.
    open_cells = np.flatnonzero(dist > cell_reach)
    while len(picks) < most and len(open_cells):
        pick = int(open_cells[np.argmax(dist[open_cells] / cell_reach[open_cells])])
        picks.append(points[pick])
        there = points[open_cells]
        near = np.minimum(
            dist[open_cells], ciede2000(there, np.broadcast_to(points[pick], there.shape))
        )
        dist[open_cells] = near
        open_cells = open_cells[near > cell_reach[open_cells]]
        check()
    left = float((dist[open_cells] / cell_reach[open_cells]).max()) if len(open_cells) else 1.0
    return np.array(picks).reshape(-1, 3), left


def _blur(plane: Float32Array) -> Float32Array:
    """`plane` (H, W) convolved with `KERNEL` along both image axes, zero outside.
    Cost: O(N), with one scratch plane."""
    scratch = np.empty(plane.shape, dtype=np.float32)
    return _blur_axis(_blur_axis(plane, 0, scratch), 1, scratch)


def _blur_axis(plane: Float32Array, axis: int, scratch: Float32Array) -> Float32Array:
    out: Float32Array = plane * KERNEL[len(KERNEL) // 2]
    for shift in range(1, len(KERNEL) // 2 + 1):
        tap = KERNEL[len(KERNEL) // 2 + shift]
        ahead = [slice(None)] * plane.ndim
        behind = [slice(None)] * plane.ndim
        ahead[axis], behind[axis] = slice(shift, None), slice(None, -shift)
        for there, here in ((tuple(ahead), tuple(behind)), (tuple(behind), tuple(ahead))):
            product = scratch[there]
            np.multiply(plane[here], tap, out=product)
            out[there] += product
    return out
