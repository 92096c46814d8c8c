"""Segmentation: one RGBA image -> a label map over a palette of flat colours.

The stage runs, in order (each step's cost is stated where it is implemented):
1. `quantise.pixel_maps`: opacity (alpha >= 128 is artwork, alpha < 128 is left out), full
   opacity (only alpha 255 pixels measure colours, so semi-transparent edges cannot pollute
   the palette), flatness (region interiors) and the noise level of near-flat areas.
2. `quantise.distinct_colours` (once, shared by steps 2, 3 and 5) and
   `quantise.find_palette`: the flat colours, from a flat/edge colour histogram.
3. `quantise.assign`: a label per pixel, unmixing anti-aliased edge pixels; then
   `detail.recover_strokes`: strokes thinner than a pixel (8-px text, faint hairlines) put
   back, and anti-aliasing tints resolved into the colours they mix.
4. `detail.detail_mask`: strokes, letters and dots, judged by shape and contrast, which
   the clean-up below never merges, smooths or counts as specks; then
   `cleanup.clean_speckles`: noise components merged into their best neighbour (the
   components are labelled once and joined as they merge; `photo_like` reuses them); for
   photo-like input (`cleanup.photo_like`: noisy, or thousands of tiny components) also a
   3x3 mode filter (`cleanup.majority_smooth`) and every speck under
   `cleanup.SPECK_AREA` pixels merged into its best neighbour (`cleanup.merge_specks`,
   as vtracer's filter_speckle does). Flat art never gets these, so its 1-px strokes,
   dots and small text stay. Smooth shaded art (a gradient, whose band palette
   `quantise.find_palette` reports) skips the speck filters too: its bands are read from
   the lightly smoothed image instead (`shading.band_labels`), one connected ring or strip
   each. Last, `detail.bridge_corners` makes the diagonal steps of
   strokes solid, so a diagonal hairline traces as one shape, not dashes.
5. `_estimate_colours`: each colour re-measured as the mean of its region interiors.
6. `background.remove_background` (background=remove only).
7. `_compact`: unused colours dropped, colours equal after rounding merged, so every
   palette index is used and K is the number of colours in the file.

Every step reads the decoded RGBA array directly (the colour steps take its first three
channels), so the image is never copied to RGB.

Deterministic: no random sampling anywhere; ties break by histogram order.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from printjob_adapters.engine import (
    cleanup,
    colour_count,
    detail,
    illumination,
    own_inks,
    quantise,
    shading,
)
from printjob_adapters.engine.background import remove_background
from printjob_adapters.engine.bounds import check_specks, over_speck_cap
from printjob_adapters.engine.options import Background
from printjob_adapters.engine.progress import Checkpoint

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]

#: Largest `colors` a caller may ask for.
MAX_COLORS = 1000


@attrs.frozen(eq=False)
class Segmentation:
    """The quantised image the tracer consumes.

    `labels` is int32 (H, W): an index into `palette`, or -1 for pixels left out (alpha < 128
    in the input, or the removed background). `palette` is float64 (K, 3) sRGB 0..255, each
    colour measured from its region interiors; every index 0..K-1 labels at least one pixel and
    the colours stay distinct after rounding to integers, so K is the file's colour count.
    `background_removed` is True when background=remove left a background out (the border's
    majority colour, or a transparent border already present in the input).
    `background_color` is the sRGB colour that was removed, or None.
    """

    labels: IntArray
    palette: FloatArray
    background_removed: bool
    background_color: FloatArray | None = None


def segment(
    rgba: npt.NDArray[np.uint8],
    colors: int | None,
    background: Background,
    checkpoint: Checkpoint,
    row_changes: npt.NDArray[np.int64] | None = None,
) -> Segmentation:
    """Quantise `rgba` (uint8 (H, W, 4), straight alpha) to flat colours and label its pixels.

    `colors` is the exact number of colours (1..1000; fewer when the artwork has fewer), or
    None for the fewest colours that keep the image faithful: the artwork's flat colours, or
    for photos, scans and gradients the fewest of 4, 8, 16 or `quantise.AUTO_CAP` (32) whose
    mean error is at most `quantise.FIDELITY` (CIELAB ΔE). `row_changes`, the pixels of
    `rgba` that differ from the one before them in their row when the caller found them
    (`pixel_grid.RowChanges`), spares the colour runs a pass of their own.
    """
    if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
        raise ValueError("segment expects a uint8 (H, W, 4) RGBA array")
    if colors is not None and not 1 <= colors <= MAX_COLORS:
        raise ValueError(f"colors must be between 1 and {MAX_COLORS}")
    checkpoint(0.0)
    # The colour steps read the first three channels of RGB or RGBA alike (`pixel_rows`):
    # no RGB copy of the image.
    rgb = np.ascontiguousarray(rgba)
    maps = quantise.pixel_maps(rgba)
    colours = quantise.distinct_colours(rgb, maps, row_changes)
    checkpoint(0.15)
    # A page under uneven light: traced with its light divided out (else unchanged). Its
    # page test reads the colours found above, and finds the evened page's own.
    evened, maps, colours = illumination.even_out(rgb, maps, colours)
    rgb = rgba = evened
    tol = quantise.tolerances(maps)
    checkpoint(0.2)
    # Smooth shaded art tells how many flat colours lead its band colours.
    flat_colours: list[int] = []
    inks: list[npt.NDArray[np.floating[Any]]] = []
    lines: list[own_inks.Found] = []
    sources: list[bool] = []
    palette = quantise.find_palette(
        rgb,
        maps,
        colors,
        colours,
        tick=lambda: checkpoint(0.2),
        on_bands=flat_colours.append,
        tol=tol,
        on_inks=inks.append,
        on_lines=lines.append,
        on_sources=lambda: sources.append(True),
    ).astype(np.float64)
    checkpoint(0.45)
    # The opaque pixels that are not flat: read by the edge unmixing and the strokes alike.
    edge = np.logical_not(maps.flat)
    edge &= maps.opaque
    # A large field of faint sources (`on_sources`) is a photo: nearest colours, no unmixing.
    labels = quantise.assign(rgb, maps, palette, tol, colours, edge, photo=bool(sources))
    # Flat interiors are measured on fully opaque pixels only; art that is never fully
    # opaque (a hairline icon at 87 % alpha) has none and counts as clean, not as a photo.
    solid = int(np.count_nonzero(maps.solid))
    flat_share = np.count_nonzero(maps.flat) / solid if solid else 1.0
    recovered = detail.recover_strokes(
        labels,
        rgb,
        palette,
        edge,
        maps.flat,
        maps.noise,
        tol.mix,
        tol.split,
        tol.rgb,
        flat_share,
        colours,
        own_inks.marks(palette, inks),
    )
    labels, palette = recovered.labels, recovered.palette
    if lines:
        # Greys drawn only as 1-px lines of their own: their lines' pixels, no others.
        labels, palette = own_inks.with_lines(labels, palette, lines[0], colors)
    checkpoint(0.65)
    # A photo's dense palette: its clean-up keeps colours that are visibly apart.
    # (A large field of faint sources is a photo whose colours are apart on purpose.)
    near = (
        colour_count.near_equal(palette, photo=bool(sources))
        if maps.noise >= cleanup.PHOTO_NOISE
        else None
    )
    if near is not None and over_speck_cap(labels):
        # A noisy photo's lone pixels join their surroundings before they are counted.
        labels = cleanup.join_lone_pixels(labels, rgb, palette)
    check_specks(labels)  # before cleaning, whose cost grows with the specks
    # Labelled once for the detail mask and the speck clean-up, which read the same map.
    first_comps = cleanup.label_components(labels)
    texture = cleanup.texture(near, flat_share)
    # One decision for both speck steps, on the map they start from.
    one_pass = cleanup.specks_in_one_pass(labels.size, first_comps.count, near, texture)
    keep = detail.detail_mask(
        labels, rgb, palette, maps.noise, tol.mix, tol.split, first_comps, flat_share
    )
    comps = cleanup.clean_speckles(
        labels,
        rgb,
        palette,
        tol.point,
        tol.mix,
        maps.noise,
        split=tol.split,
        keep_every_colour=colors is not None,
        keep=keep,
        tick=lambda: checkpoint(0.65),
        comps=first_comps,
        near=near,
        texture=texture,
        one_pass=one_pass,
    )
    checkpoint(0.7)
    if comps is not first_comps or labels.dtype != np.int32:
        labels = comps.labels()
    # else nothing merged: the components still partition `labels` itself.
    # The colours still in use, known from the components unless the speck filter runs.
    in_use = np.zeros(len(palette), dtype=bool)
    in_use[comps.label[comps.label >= 0]] = True
    used: npt.NDArray[np.bool_] | None = in_use
    if flat_colours:
        # A smooth gradient: its steep clean ramps look noisy to the speck filters, which
        # would merge its narrow bands; each band is read from the smoothed image instead.
        bands = shading.band_labels(
            labels, rgb, palette, flat_colours[0], tick=lambda: checkpoint(0.7)
        )
        # Specks along the artwork's edges (its anti-aliasing) and of the rounding of slow
        # gradients still join a neighbour; narrow bands of steep parts stay.
        labels, palette = bands.labels, bands.palette
        labels = cleanup.merge_specks(
            labels,
            rgb,
            palette,
            keep=bands.steep if keep is None else keep | bands.steep,
            tick=lambda: checkpoint(0.75),
        )
        used = None
    elif cleanup.photo_like(labels, maps.noise, comps, keep):
        exact = colors is not None
        if comps is not first_comps:
            # The speck clean-up merged: the map the strokes are judged on has changed.
            keep = detail.detail_mask(
                labels, rgb, palette, maps.noise, tol.mix, tol.split, comps, flat_share
            )
        # else the same map, colours and components as the first mask's: the same mask.
        labels = cleanup.majority_smooth(
            labels, keep_every_colour=exact, keep=keep, tick=lambda: checkpoint(0.7), near=near
        )
        checkpoint(0.75)
        labels = cleanup.merge_specks(
            labels,
            rgb,
            palette,
            max_size=cleanup.speck_area(labels.size, near is not None, sources=bool(sources)),
            keep_every_colour=exact,
            keep=keep,
            tick=lambda: checkpoint(0.75),
            near=near,
            texture=texture,
            one_pass=one_pass,
        )
        used = None
    # Bridging gives a pixel the colour of the stroke beside it, a colour already in use,
    # so `used` still holds.
    # The map is this function's own (made by the steps above), so it is bridged in place.
    labels = detail.bridge_corners(labels, rgb, palette, keep, in_place=True)
    checkpoint(0.85)
    palette = _estimate_colours(labels, rgb, maps, palette, tol, colours, photo=near is not None)
    checkpoint(0.9)
    labels, palette = _compact(labels, palette, used)
    removed, removed_colour = False, None
    if background is Background.REMOVE:
        result = remove_background(labels, rgba)
        removed = result.removed
        if result.colour is not None:
            removed_colour = result.colour
        labels, palette = _compact(result.labels, palette)
    checkpoint(1.0)
    return Segmentation(
        labels=labels,
        palette=palette,
        background_removed=removed,
        background_color=removed_colour,
    )


#: `_estimate_colours` finds the distinct (label, colour) pairs of the runs with a table
#: of every pair (`quantise.dense_unique`) when there are at most this many pairs a run
#: (fewer runs sort faster than the table fills) and at most `DENSE_PAIRS` in all (its
#: tables then hold at most 80 MB, about what sorting 5 million runs takes).
DENSE_PAIRS_PER_RUN = 16
DENSE_PAIRS = 1 << 24


def _estimate_colours(
    labels: IntArray,
    rgb: npt.NDArray[np.uint8],
    maps: quantise.PixelMaps,
    palette: FloatArray,
    tol: quantise.Tolerances,
    colours: quantise.Colours | None = None,
    photo: bool = False,
) -> FloatArray:
    """Step 5: each colour = mean of its flat, fully opaque pixels that really have it.

    Interiors give the artwork's colour without anti-aliasing or edge ringing; pixels further
    than the noise tolerance from the colour (another artwork colour merged into this one when
    fewer colours were asked for) are left out. Colours with no such pixels keep their
    estimate. Counted per (label, distinct colour) pair, so the distance test runs once per
    pair, not per pixel, and the pairs run by run (`quantise.runs_of`). A `photo` (a dense
    palette, `colour_count.near_equal`) measures every fully opaque pixel of a colour, edges
    too: its edges are texture, not anti-aliasing, and the speckles merged into a region are
    part of what the colour must stand for (the stained tissue sample: ΔE2000 at 1x 3.84 →
    3.73). Cost: O(N) for a few whole-array steps plus O(runs + pairs).
    """
    k = len(palette)
    if k == 0:
        return palette
    if colours is None:
        colours = quantise.distinct_colours(rgb, maps)
    u = len(colours.keys)
    pixel_colour = colours.per_pixel(labels.shape, maps.opaque)
    # Each pixel's (label, colour) pair, counted run by run in raster order: a region's
    # interior is one long run of one pair.
    # The narrowest type that holds every pair: flat art's few hundred pairs fit 16 bits,
    # which halves the bytes each whole-map step below reads and writes.
    kind = np.int16 if k * u < 1 << 15 else np.int32 if k * u < 1 << 31 else np.int64
    pair: npt.NDArray[np.signedinteger[Any]] = labels.astype(kind)
    pair *= u
    pair += pixel_colour
    # Pixels off the measured set are -1 and dropped with every negative run below. The
    # set is the flat pixels (fully opaque by construction: `pixel_maps` marks flat only
    # where the whole window is, so `flat` needs no AND with `solid`), or every fully
    # opaque one for a photo; either way each pixel has a colour (never -1), so a pixel
    # whose label is -1 has the pair -u + colour, negative too, and needs no test of its
    # own. The non-negative runs, their values and lengths, are those of a map with -1 at
    # every such pixel.
    np.copyto(pair, -1, where=np.logical_not(maps.solid if photo else maps.flat))
    run_pair, run_length = quantise.runs_of(pair)
    taken = run_pair >= 0
    run_pair, run_length = run_pair[taken], run_length[taken]
    if k * u <= 1 << 22:
        counts = np.bincount(run_pair, run_length, minlength=k * u).astype(np.int64)
        code = np.flatnonzero(counts)
        counts = counts[code]
    elif k * u <= min(DENSE_PAIRS_PER_RUN * len(run_pair), DENSE_PAIRS):
        # A photo's millions of runs over a span of a few times as many pairs (Grace
        # Hopper at 3 MP: 2.5 million runs, 12 million pairs): a table of the span costs
        # less than sorting the runs (0.10 s → 0.03 s), and gives the same.
        found, run_code = quantise.dense_unique(run_pair, k * u)
        code = found.astype(run_pair.dtype)
        counts = np.bincount(run_code, run_length, minlength=len(code)).astype(np.int64)
    else:
        code, run_code = np.unique(run_pair, return_inverse=True)
        counts = np.bincount(run_code, run_length, minlength=len(code)).astype(np.int64)
    lab, col = code // u, code % u
    rgb_pair = colours.rgb[col].astype(np.float64)
    off = rgb_pair - palette[lab]
    near = (off * off).sum(axis=1) <= tol.rgb**2
    lab, counts, rgb_pair = lab[near], counts[near], rgb_pair[near]
    n = np.bincount(lab, counts, minlength=k)
    sums = np.stack([np.bincount(lab, counts * rgb_pair[:, c], minlength=k) for c in range(3)], 1)
    out = palette.copy()
    seen = n > 0
    out[seen] = sums[seen] / n[seen, None]
    return out


def _compact(
    labels: IntArray, palette: FloatArray, used: npt.NDArray[np.bool_] | None = None
) -> tuple[IntArray, FloatArray]:
    """Step 7: drop unused colours and merge colours equal after rounding. `used` (per
    colour) when the caller knows it, else counted. The map is rewritten only when a
    colour goes or merges. Cost: O(N), O(K) when nothing changes and `used` is given."""
    k = len(palette)
    if k == 0:
        return labels, palette
    if used is None:
        used = np.bincount(labels[labels >= 0], minlength=k) > 0
    rounded = np.rint(palette).astype(np.int64)
    key = (rounded[:, 0] << 16) | (rounded[:, 1] << 8) | rounded[:, 2]
    key = np.where(used, key, -1 - np.arange(k))
    order = np.flatnonzero(used)
    _, first, inverse = np.unique(key[order], return_index=True, return_inverse=True)
    # Keep the original order of first appearance so palette order stays meaningful.
    rank = np.argsort(np.argsort(first))
    if len(order) == k and (rank[inverse] == np.arange(k)).all():
        return labels, palette
    remap = np.full(k + 1, -1, dtype=np.int32)
    remap[order] = rank[inverse]
    new_palette = palette[order[np.sort(first)]]
    return remap[labels].astype(np.int32), new_palette.astype(np.float64)
