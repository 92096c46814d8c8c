"""Background detection and removal (background=remove).

What is removed (docs/api.md states the same for clients):
- Transparent input: when at least half of the image border is transparent (label -1), the
  transparency *is* the background. Nothing opaque is removed but specks (below), and removal
  counts as done (`removed` is True) because the output leaves a background out, as asked.
- Otherwise the background is the border's colour: a smooth surface (a flat colour, or a
  linear or gently curved gradient) fitted to the border pixels, that at least half of the
  border matches within a tolerance taken from the border's own noise. With no such surface
  (flags, photos, full-bleed art) nothing is removed.
- Of the pixels that match the surface, only those that *surround the design* go: connected
  to the image border, outside the design's silhouette (`silhouette.design_silhouette`: the
  design closed over narrow gaps, its holes filled, and the bands between stacked parts of
  one outline bridged), and not embraced by the design (a region cut off from the main
  background that touches the image border along less than `EMBRACED_SHARE` of its outline,
  such as a white shirt running off the bottom edge, stays). So an enclosed white (the
  counter of an "O", a highlight in a face), the white stripes of a cone and a white shirt
  all stay: parts of the design are never cut away or holed.
- Specks: components of the design under `speck_area` pixels, farther than `SPECK_GAP`
  radii from the rest of the design and outside its silhouette (a scan's paper specks, JPEG
  noise on the border colour), are removed with the background, unless they are a
  noticeable share of the design (halftone dots, confetti).
- When removal would leave nothing (a single-colour image, or nothing opaque at all),
  nothing is removed and `removed` is False. `removed` is True exactly when the output
  leaves a background out.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from printjob_adapters.engine.silhouette import (
    border_contacts,
    design_silhouette,
    distance_to,
    label_components,
)

IntArray = npt.NDArray[np.int32]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

#: Fraction of the border a colour (or transparency) must cover to be the background.
BORDER_MAJORITY = 0.5
#: Colour tolerance (sRGB units, Euclidean) of "the background's colour": three times the
#: border's median deviation from its fitted surface, kept within these bounds. The lower
#: bound absorbs JPEG noise on a flat colour; the upper one keeps a light tint of the design
#: (a pale grey on white is ~40 units away) out of the background.
TOLERANCE_BOUNDS = (8.0, 20.0)
#: Largest change (sRGB units, Euclidean) of a background gradient along the border; a
#: steeper one is kept, and the result says so (`removed` False).
GRADIENT_RANGE = 96.0
#: Refits that follow a gradient inwards (each from the background found so far), and the
#: pixels of that background each samples.
REFITS = 2
REFIT_SAMPLE = 20000
#: A refit that adds fewer matching pixels than this share of the image is not followed.
REFIT_GROWTH = 0.001
#: A simpler background surface is preferred while it fits this share of the border pixels
#: the best surface fits (a flat colour over a quadratic that bends to the design).
SIMPLER_SHARE = 0.9
#: Pixels quantised to a colour of the background's own (the label most of the border has)
#: join it up to this many tolerances away: the ringing of a JPEG around the design, which
#: would otherwise stay as a light fringe.
FRINGE_REACH = 2.5
#: Depth (pixels) of the fringe of the background's own label taken with it (`_fringe`).
FRINGE_WIDTH = 2
#: A region of the background's colour cut off from the main background is embraced by the
#: design (kept) when the image border makes up less than this share of its outline.
EMBRACED_SHARE = 0.45
#: A speck further than this many closing radii (`silhouette.closing_radius`) from the
#: design's silhouette is removed: the dot of an "i" is nearer, dust on the paper further.
SPECK_GAP = 2
#: A speck within this many colour tolerances of the background is removed wherever it is
#: on the background (paper grain, JPEG noise), not only far from the design.
PALE_REACH = 4.0
#: A pale speck may be this many times larger than a speck (the brightest spot of a radial
#: gradient that the background surface does not quite reach).
PALE_SPECK = 8
#: Specks are removed only while they add up to at most this share of the design.
SPECK_SHARE = 0.05


@attrs.frozen(eq=False)
class Removal:
    """Outcome of background removal: the label map with the background set to -1, whether
    anything was really removed, the palette index most of the removed pixels had (None
    when transparency was the background or nothing was removed) and the mean sRGB colour of
    the removed opaque pixels (None likewise)."""

    labels: IntArray
    removed: bool
    index: int | None = None
    colour: FloatArray | None = None


def border_pixels(labels: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The values along the image's outermost ring (each pixel once), clockwise from the
    top-left corner for 2-D input, per pixel for 3-D input."""
    if labels.shape[0] <= 2 or labels.shape[1] <= 2:
        return labels.reshape(-1, *labels.shape[2:])
    return np.concatenate([labels[0], labels[1:-1, -1], labels[-1, ::-1], labels[-2:0:-1, 0]])


def border_coordinates(height: int, width: int) -> tuple[IntArray, IntArray]:
    """Row and column of every `border_pixels` entry, in the same order."""
    ys, xs = np.indices((height, width), dtype=np.int32)
    return border_pixels(ys), border_pixels(xs)


def remove_background(labels: IntArray, rgba: npt.NDArray[np.uint8] | None = None) -> Removal:
    """Background step: leave out what surrounds the design (the module docstring says
    exactly what). `rgba` is the decoded image (uint8 (H, W, 4)); without it, colours are
    compared by label only (the background is the border's majority label).

    Cost: O(N) array passes (one colour distance per pixel, a few chamfer distance
    transforms, a few component labellings), plus O(K²) convex hulls over the K <= 12
    largest design parts for the stripe bridging.
    """
    ring = border_pixels(labels)
    if (ring < 0).mean() >= BORDER_MAJORITY:
        return _transparent_background(labels)
    found = _label_background(labels, ring) if rgba is None else _colour_background(labels, rgba)
    if found is None:
        return Removal(labels=labels, removed=False)
    matches, own, pale, tolerance = found
    background = _surrounding(labels, matches, own)
    for _ in range(REFITS if rgba is not None and background.any() else 0):
        assert rgba is not None
        followed = _follow_gradient(labels, rgba, background, own, matches, tolerance)
        if followed is None:
            break
        background, matches, pale = followed
    if background.any():
        background |= _specks(labels >= 0, background, pale)
    return _result(labels, rgba, background)


def _transparent_background(labels: IntArray) -> Removal:
    """The input's transparency is the background; only specks on it go as well."""
    void = labels < 0
    opaque = ~void
    if not opaque.any():
        return Removal(labels=labels, removed=False)
    specks = _specks(opaque, void)
    if specks.any():
        labels = np.where(specks, -1, labels).astype(np.int32)
    return Removal(labels=labels, removed=bool(void.any()))


def _label_background(
    labels: IntArray, ring: IntArray
) -> tuple[BoolArray, BoolArray, BoolArray | None, float] | None:
    """Pixels of the border's majority label, twice (they are the background's own colour
    too; no pale pixels: colours are not known), or None when no label holds half the border."""
    counts = np.bincount(ring[ring >= 0])
    index = int(np.argmax(counts))
    if counts[index] < BORDER_MAJORITY * len(ring):
        return None
    matches: BoolArray = labels == index
    return matches, matches, None, 0.0


def _colour_background(
    labels: IntArray, rgba: npt.NDArray[np.uint8]
) -> tuple[BoolArray, BoolArray, BoolArray, float] | None:
    """Pixels whose colour lies within tolerance of the background surface fitted to the
    border (see `fit_surface`), the pixels of the background's own colours
    (`_own_colours`), the pale pixels (within `PALE_REACH` tolerances: paper grain and
    JPEG noise a little too far from the background's colour to match it) and the
    tolerance; None when at least half the border fits no smooth surface. Pixels of those
    colours join within `FRINGE_REACH` tolerances.
    Cost: O(N) (one float32 distance per pixel, two bincounts)."""
    h, w = labels.shape
    ys, xs = border_coordinates(h, w)
    ring_labels = border_pixels(labels)
    opaque = ring_labels >= 0
    colours = rgba[ys[opaque], xs[opaque], :3].astype(np.float64)
    fit = fit_surface(ys[opaque], xs[opaque], colours, h, w)
    if fit is None:
        return None
    coefficients, tolerance, inliers = fit
    if inliers.sum() < BORDER_MAJORITY * len(ring_labels):
        return None
    distance = _distance_to_surface(rgba, coefficients)
    matches: BoolArray = distance <= tolerance
    majority = int(np.bincount(ring_labels[opaque][inliers]).argmax())
    own = _own_colours(labels, matches, majority)
    matches |= own & (distance <= FRINGE_REACH * tolerance)
    matches &= labels >= 0
    return matches, own, distance <= PALE_REACH * tolerance, tolerance


def _own_colours(labels: IntArray, matches: BoolArray, majority: int) -> BoolArray:
    """Pixels of the background's own colours: the label most of the border has, and every
    label most of whose pixels match the background's surface. A smooth gradient is
    quantised into many close bands, and the ringing of a JPEG around the design takes
    whichever band is near; all of them are the background's, not only the border's
    majority band. Cost: O(N), two bincounts."""
    valid = labels >= 0
    count = int(labels.max()) + 1 if valid.any() else 1
    total = np.bincount(labels[valid], minlength=count)
    matched = np.bincount(labels[valid & matches], minlength=count)
    mostly = 2 * matched > total
    mostly[majority] = True
    own: BoolArray = valid & mostly[np.where(valid, labels, 0)]
    return own


def _follow_gradient(
    labels: IntArray,
    rgba: npt.NDArray[np.uint8],
    background: BoolArray,
    own: BoolArray,
    matches: BoolArray,
    first_tolerance: float,
) -> tuple[BoolArray, BoolArray, BoolArray] | None:
    """The background once more (with the pixels matching it and the pale ones), from a
    surface fitted to the background found so far rather than to the border alone: a radial
    gradient whose centre hides behind the design is flat along the border but lighter near
    the design. None when the refitted surface is not gentle or matches fewer than
    `REFIT_GROWTH` of the image's pixels more than `matches` did (a flat background: nothing
    to follow). Cost: O(N) for the distances, and when the match grows about that of the
    first pass again."""
    ys, xs = np.nonzero(background)
    step = max(1, len(ys) // REFIT_SAMPLE)
    ys, xs = ys[::step], xs[::step]
    colours = rgba[ys, xs, :3].astype(np.float64)
    h, w = labels.shape
    basis = _basis(ys, xs, h, w)
    coefficients: FloatArray = np.asarray(
        np.linalg.lstsq(basis, colours, rcond=None)[0], dtype=np.float64
    )
    if not _gentle(_basis(*border_coordinates(h, w), h, w), coefficients):
        return None
    coefficients, tolerance, _ = _with_tolerance(basis, coefficients, colours)
    # Never looser than the border's own tolerance: a refit follows the gradient, it does
    # not widen the background's colour into the design's light tints.
    tolerance = min(tolerance, first_tolerance)
    distance = _distance_to_surface(rgba, coefficients)
    refitted = (distance <= tolerance) | (own & (distance <= FRINGE_REACH * tolerance))
    refitted = (refitted & (labels >= 0)) | matches
    if (refitted & ~matches).sum() < REFIT_GROWTH * refitted.size:
        return None
    grown = background | _surrounding(labels, refitted, own)
    if grown.sum() <= background.sum():
        return None
    return grown, refitted, distance <= PALE_REACH * tolerance


def _basis(ys: npt.NDArray[Any], xs: npt.NDArray[Any], h: int, w: int) -> FloatArray:
    """Quadratic surface terms (1, x, y, xy, x², y²) over coordinates scaled to -1..1."""
    x = (2.0 * xs / max(w - 1, 1)) - 1.0
    y = (2.0 * ys / max(h - 1, 1)) - 1.0
    return np.stack([np.ones_like(x), x, y, x * y, x * x, y * y], axis=-1)


def fit_surface(
    ys: IntArray, xs: IntArray, colours: FloatArray, h: int, w: int
) -> tuple[FloatArray, float, BoolArray] | None:
    """A smooth colour surface through the border pixels (rows `ys`, columns `xs`, sRGB
    `colours`): a flat colour (their median), a plane or a quadratic in x and y per channel
    that changes by at most `GRADIENT_RANGE` along the border; the simplest that fits
    within `SIMPLER_SHARE` as many border pixels as the best. Returns its coefficients
    (6, 3) over `_basis`, its tolerance and which border pixels fit it; None for an empty
    border or when no surface is gentle enough. The plane and the quadratic are fitted by
    trimmed least squares, from the pixels that fitted the flat colour and then, three
    rounds, from the 60% nearest the last fit, so a design touching up to 40% of the border
    does not bend them. Cost: O(border)."""
    if len(colours) == 0:
        return None
    basis = _basis(ys, xs, h, w)
    flat = np.zeros((6, 3))
    flat[0] = np.median(colours, axis=0)
    fits = [_with_tolerance(basis, flat, colours)]
    for terms in (3, 6):
        keep = fits[0][2] if fits[0][2].sum() >= 2 * terms else np.ones(len(colours), bool)
        coefficients = flat
        for _ in range(3):
            coefficients = np.zeros((6, 3))
            coefficients[:terms] = np.linalg.lstsq(basis[keep, :terms], colours[keep], rcond=None)[
                0
            ]
            residual = _residual(basis, coefficients, colours)
            keep = residual <= np.quantile(residual, 0.6)
        fits.append(_with_tolerance(basis, coefficients, colours))
    fits = [fit for fit in fits if _gentle(basis, fit[0])]
    if not fits:
        return None
    most = max(int(fit[2].sum()) for fit in fits)
    return next(fit for fit in fits if fit[2].sum() >= SIMPLER_SHARE * most)


def _gentle(basis: FloatArray, coefficients: FloatArray) -> bool:
    """Whether the surface changes by at most `GRADIENT_RANGE` along the border: a
    background gradient, not a smooth surface bent through the bands of a flag."""
    values = basis @ coefficients
    return bool(np.hypot.reduce(np.ptp(values, axis=0)) <= GRADIENT_RANGE)


def _with_tolerance(
    basis: FloatArray, coefficients: FloatArray, colours: FloatArray
) -> tuple[FloatArray, float, BoolArray]:
    """The fit, its tolerance (3x the median deviation of its nearest 60% of pixels, within
    `TOLERANCE_BOUNDS`) and the pixels within it."""
    residual = _residual(basis, coefficients, colours)
    near = residual <= np.quantile(residual, 0.6)
    low, high = TOLERANCE_BOUNDS
    tolerance = float(np.clip(3.0 * np.median(residual[near]), low, high))
    return coefficients, tolerance, residual <= tolerance


def _residual(basis: FloatArray, coefficients: FloatArray, colours: FloatArray) -> FloatArray:
    distance: FloatArray = np.sqrt(((basis @ coefficients - colours) ** 2).sum(axis=1))
    return distance


def _distance_to_surface(rgba: npt.NDArray[np.uint8], coefficients: FloatArray) -> Any:
    """Per-pixel Euclidean sRGB distance to the fitted surface (float32, (H, W))."""
    h, w = rgba.shape[:2]
    x = np.linspace(-1.0, 1.0, w, dtype=np.float32) if w > 1 else np.full(1, -1.0, np.float32)
    y = np.linspace(-1.0, 1.0, h, dtype=np.float32) if h > 1 else np.full(1, -1.0, np.float32)
    c = coefficients.astype(np.float32)
    total = np.zeros((h, w), dtype=np.float32)
    for channel in range(3):
        k = c[:, channel]
        surface = (k[0] + k[1] * x[None, :] + k[2] * y[:, None]) + (
            k[3] * y[:, None] * x[None, :] + k[4] * (x * x)[None, :] + k[5] * (y * y)[:, None]
        )
        off = rgba[..., channel].astype(np.float32) - surface
        total += off * off
    return np.sqrt(total)


def _surrounding(labels: IntArray, matches: BoolArray, own: BoolArray) -> BoolArray:
    """Of the background-coloured pixels `matches`, those that surround the design: outside
    its silhouette and connected to the image border, the main background (the region with
    the most border contact) and every other region not embraced by the design; then the
    fringe (`_fringe`)."""
    design = (labels >= 0) & ~matches
    if not design.any():
        return np.zeros_like(matches)
    silhouette = design_silhouette(design)
    outside = matches & ~silhouette
    regions, count = label_components(outside)
    if count == 0:
        return np.zeros_like(matches)
    border, other = border_contacts(regions, count)
    touching = border > 0
    if not touching.any():
        return np.zeros_like(matches)
    share = border / np.maximum(border + other, 1)
    keep = touching & (share >= EMBRACED_SHARE)
    keep[int(np.argmax(border))] = True
    keep[0] = False
    surrounding: BoolArray = keep[regions]
    enclosed = silhouette & ~design
    return surrounding | _fringe(surrounding, own & ~enclosed)


def _fringe(background: BoolArray, own: BoolArray) -> BoolArray:
    """Pixels quantised to the background's own colour (`own`) within `FRINGE_WIDTH` pixels
    of the removed background: the outermost anti-aliased or JPEG-ringing pixels of the
    design's edge that the palette gave the background's colour, which would otherwise stay
    as a light outline. Cost: O(N · FRINGE_WIDTH)."""
    near = background.copy()
    for _ in range(FRINGE_WIDTH):
        grown = near.copy()
        grown[1:] |= near[:-1]
        grown[:-1] |= near[1:]
        grown[:, 1:] |= near[:, :-1]
        grown[:, :-1] |= near[:, 1:]
        near = grown & (own | background)
    return near


def speck_area(shape: tuple[int, ...]) -> int:
    """Largest speck in pixels: 12 on a small image, growing with the image (1 in 20000)."""
    return max(12, int(shape[0]) * int(shape[1]) // 20000)


def _specks(opaque: BoolArray, left_out: BoolArray, pale: BoolArray | None = None) -> BoolArray:
    """Small design components inside `left_out` that are far from the rest of the design,
    or (when `pale` is given) mostly pale, near the background's colour, and up to
    `PALE_SPECK` times larger (see the module docstring); nothing when they would be more
    than `SPECK_SHARE` of the design or there is no larger design to be far from.
    Cost: O(N), a few chamfer distance transforms."""
    design = opaque & ~left_out
    parts, count = label_components(design, diagonal=True)
    if count < 2:
        return np.zeros_like(design)
    area = np.bincount(parts.ravel(), minlength=count + 1)
    area[0] = 0
    small = area <= speck_area(design.shape)
    small[0] = False
    if small[1:].all():
        return np.zeros_like(design)
    tiny = small[parts]
    if tiny.sum() > SPECK_SHARE * design.sum():
        return np.zeros_like(design)
    large = design & ~tiny
    shield = design_silhouette(large, bridges=False)
    reach = SPECK_GAP * _radius_of(large)
    close = distance_to(shield) <= reach
    far_parts = np.bincount(parts[tiny & ~close], minlength=count + 1) > 0
    near_parts = np.bincount(parts[tiny & close], minlength=count + 1) > 0
    specks = small & far_parts & ~near_parts
    if pale is not None:
        pale_count = np.bincount(parts[pale & design], minlength=count + 1)
        specks |= (area <= PALE_SPECK * speck_area(design.shape)) & (2 * pale_count > area)
    specks[0] = False
    result: BoolArray = specks[parts]
    return result


def _radius_of(design: BoolArray) -> int:
    from printjob_adapters.engine.silhouette import closing_radius

    return closing_radius(design)


def _result(labels: IntArray, rgba: npt.NDArray[np.uint8] | None, background: BoolArray) -> Removal:
    """The removal, unless it would leave no design at all (then nothing is removed)."""
    gone = background & (labels >= 0)
    if not gone.any() or not ((labels >= 0) & ~gone).any():
        return Removal(labels=labels, removed=False)
    index = int(np.bincount(labels[gone]).argmax())
    colour = None
    if rgba is not None:
        colour = rgba[gone][:, :3].astype(np.float64).mean(axis=0)
    out = np.where(gone, -1, labels).astype(np.int32)
    return Removal(labels=out, removed=True, index=index, colour=colour)
