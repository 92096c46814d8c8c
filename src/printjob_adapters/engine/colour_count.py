"""The automatic colour count: as many colours as the content needs, and no more.

`quantise.greedy_palette` finds an artwork's flat colours. That is the whole answer for flat
art, but three other kinds of content need something else:

- **Texture** (a rubber stamp's speckled ink, a two-tone scan's paper grain): the pixels are
  mixtures of two colours, ink and paper, at every proportion, and the ink is so speckled
  that it has hardly a flat pixel. `two_tone` recognises it (every pixel lies on the line
  between two colours, and the tones between them are never flat: a photo's mid-tones form
  smooth areas, a texture's do not) and returns its two end colours: the ink as printed, not a
  washed-out mean of ink and paper.
- **Shaded art** (a flat logo on a gradient, shading): clean input whose flat areas are not
  all within sight of a flat colour. Its flat colours are kept exactly; band colours are
  added between them until neighbouring bands are closer than `BAND_STEP` (`grow_palette`),
  up to `SHADED_MAX` (64) colours.
- **Photos** (noisy and not two-tone): colours are added until the mean CIEDE2000 error of
  the pixels is at most `PHOTO_FIDELITY`, up to `AUTO_MAX` (256).

Which kind an image is follows from `off_palette_share`: flat pixels visibly off every
flat colour are shading, texture or photo content; flat art has none. A gradient so steep
that it has hardly a flat pixel is found by its straight ramps instead (`ramp_share`, on
a sample of rows and columns). Every other step works on the colour histogram
(`quantise.Histogram`, at most 2^18 bins, a few thousand for most images), never pixel by
pixel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from printjob_adapters.engine.colour import ciede2000, lab_to_srgb, srgb_to_lab
from printjob_adapters.engine.nearest import PointSet

FloatArray = npt.NDArray[np.floating[Any]]

#: CIEDE2000 at which a flat pixel is visibly another colour than its palette colour.
VISIBLE = 3.0
#: Share of the pixels that may be flat yet visibly off every flat colour in flat art.
SHADED_SHARE = 0.03
#: Most CIEDE2000 between neighbouring bands of a gradient (about one just-noticeable step).
BAND_STEP = 2.5
#: CIEDE2000 from a flat pixel to its band colour within which neighbouring bands stay
#: under `BAND_STEP`: under half of it, as band colours are measured from whole 6-bit
#: histogram bins and re-measured from their pixels afterwards.
BAND_REACH = 0.4 * BAND_STEP
#: Share of the flat pixels that may still be further than `BAND_REACH` from every colour.
BAND_LEFT = 0.0002
#: Mean CIEDE2000 of a photo's pixels to their colours at which its palette is faithful.
PHOTO_FIDELITY = 2.7
#: The automatic count never goes beyond this (photos).
AUTO_MAX = 256
#: Nor beyond this for the first palette of clean shaded art: 64 bands of `BAND_STEP` span
#: any one gradient along a line (a CIEDE2000 of 160 is more than black to white). The
#: bands are placed again by `shading.band_labels`, which lets a gradient in two
#: directions (a plane of colours) have up to `AUTO_MAX` (`shading.CLEAN_MAX_COLOURS`).
SHADED_MAX = 64
#: Below this noise level (`quantise.PixelMaps.noise`) the input is a clean render: its
#: flat colours are exact and kept as they are.
CLEAN_NOISE = 4.0
#: A two-tone image: at least this share of its pixels is a mixture of the two colours...
TWO_TONE_EXPLAINED = 0.95
#: ...and at most this share of its mid-tones (a quarter to three quarters of the way from
#: one colour to the other) is flat. Photos' mid-tones are smooth areas (0.15 to 0.6 on
#: greyscale photos); a stamp's or scan's are speckle and edges (about 0.002).
TWO_TONE_FLAT_MIDTONES = 0.05
#: ...and its colour cloud is thin: across the line between the two colours (second
#: principal axis) at most this share of its length (first axis). Noise makes it 0.03 to
#: 0.1 thick; a noisy two-axis gradient is 0.8.
TWO_TONE_THINNESS = 0.2
#: ...and round across it: noise scatters ink and paper alike in every direction, so the
#: cloud's second axis is at most this many times its third (standard deviations; 1.0 to
#: 1.3 on speckled stamps). A photo whose colours run mostly along one line (a stained
#: tissue sample: brown and blue on white) is still wide along a second colour axis (7).
TWO_TONE_ROUND = 2.5
#: Variance (sRGB units squared) below which the cloud counts as round across the line
#: whatever its shape: a clean or greyscale two-tone image has no width there at all.
TWO_TONE_FLAT_ACROSS = 4.0
#: Each end colour of a two-tone image is the mean of this outermost share of its side:
#: the solid ink, not ink thinned by speckle and anti-aliasing.
END_SHARE = 0.25
#: In ink on paper, a pixel with at least this share of ink (along the line from paper to
#: ink) is ink: speckled, thinned or partly lifted ink is still where the ink is.
INK_SHARE = 0.3
#: Below this roughness (`roughness`, 8-bit luma levels) shaded content is smooth: a
#: rendered gradient or shading, not a photo. A steep clean gradient changes by several
#: levels per pixel but hardly bends (0 to 1); sensor noise and JPEG blocks bend it by 2 or
#: more.
SMOOTH_ROUGHNESS = 1.5
#: A photo's palette grows by this share of its colours per round: doubling overshoots or
#: undershoots `PHOTO_FIDELITY` by a factor of two (24 colours at 3.9, 48 at 3.6, 96 at 3.4
#: on `mpl-grace-hopper`).
PHOTO_GROWTH = 0.5
#: A photo's noise (`quantise.PixelMaps.noise`) is at least this (9 to 16 on the photos of
#: both sets; a gradient background 1 to 6): only there does the clean-up keep colours
#: visibly apart (`near_equal`).
PHOTO_NOISE = 8.0
#: CIEDE2000 within which two colours of a photo's palette are near-equal: neighbouring
#: colours of a grown palette lie 3 to 5 apart (`PHOTO_FIDELITY` is 3). A palette is a
#: photo's (dense, `near_equal`) when most of its colours have such a neighbour.
NEAR_EQUAL = 5.0
#: Lloyd iterations after each growth step.
_ITERATIONS = 4


def palette_error(hist_lab: FloatArray, palette: FloatArray) -> FloatArray:
    """CIEDE2000 from each histogram colour (CIELAB) to its nearest palette colour (sRGB).
    Cost: O(B log K) for B bins and K colours."""
    pal_lab = srgb_to_lab(palette)
    _, idx = PointSet(pal_lab).query(hist_lab)
    return ciede2000(hist_lab, pal_lab[idx])


def off_palette_share(
    hist_rgb: FloatArray,
    hist_lab: FloatArray,
    flat: FloatArray,
    total: float,
    palette: FloatArray,
    noise_rgb: float,
) -> float:
    """Share of all pixels that are flat yet visibly (`VISIBLE`) off every palette colour
    and further from it in sRGB than the image's noise (`noise_rgb`: JPEG noise on a dark
    colour is a large CIEDE2000 but still that colour): shading, texture or photo content.
    Flat art has almost none (anti-aliased edges are not flat): 0.3 % at most on both
    corpora and JPEG'd logos, against 4 to 37 % on photos and gradients. Cost: two
    nearest-colour look-ups, O(B log K) for B bins and K colours."""
    if len(palette) == 0 or total <= 0:
        return 1.0
    pal_lab = srgb_to_lab(palette)
    _, idx = PointSet(pal_lab).query(hist_lab)
    rgb_dist, _ = PointSet(palette).query(hist_rgb)
    de = ciede2000(hist_lab, pal_lab[idx])
    off = (de > VISIBLE) & (rgb_dist > noise_rgb)
    return float(flat[off].sum() / total)


#: Seeds placed between two cancel checks in `grow_palette` (one O(B) pass each: at 3 MP
#: of noise some 7 ms).
SEEDS_PER_CHECK = 64


def grow_palette(
    hist_lab: FloatArray,
    weight: FloatArray,
    seeds: FloatArray,
    fixed: int,
    faithful: Callable[[FloatArray], bool],
    cap: int = AUTO_MAX,
    tick: Callable[[], None] | None = None,
    growth: float = 1.0,
    dense: bool = False,
    served: float = 0.0,
) -> FloatArray:
    """Add colours to `seeds` (sRGB; the first `fixed` never move) until `faithful(errors)`
    holds for the CIEDE2000 error of every histogram bin, or `cap` colours. `tick`, a
    cancel check, is called every `SEEDS_PER_CHECK` seeds and every Lloyd iteration.

    Each round adds `growth` times the count (doubling it by default): new colours go
    where the weighted error is largest (farthest-point seeding, so two new colours never
    land side by side), then a few
    weighted Lloyd iterations in CIELAB move the free colours. With `dense` (a photo) the
    palette must also be dense (`near_equal`): a photo's smooth shading drawn in colours
    visibly apart shows false contours however small the mean error. Cost: O(log cap)
    rounds of O(iterations * B log K) for B bins, plus O(K B) for the seeding and O(K^2)
    for the density test.
    """
    centres = srgb_to_lab(seeds) if len(seeds) else hist_lab[[int(np.argmax(weight))]]
    centres = np.array(centres, dtype=np.float64)
    fixed = min(fixed, len(centres))
    while True:
        _, idx = PointSet(centres).query(hist_lab)
        error = ciede2000(hist_lab, centres[idx])
        if len(centres) >= cap:
            break
        if faithful(error) and (not dense or _dense_lab(centres)):
            break
        add = min(max(int(growth * len(centres)), 4), cap - len(centres))
        # Farthest-point seeding on the weighted squared error, Euclidean in CIELAB as the
        # Lloyd steps measure it.
        dist = np.linalg.norm(hist_lab - centres[idx], axis=1)
        if served > 0:
            # Bins within `served` of a colour are drawn well enough: new colours go where
            # the error is visible, not to the many bins of one noisy flat colour.
            dist = np.maximum(dist - served, 0.0)
        picks: list[int] = []
        for seeded in range(add):
            if tick is not None and seeded % SEEDS_PER_CHECK == 0:
                tick()
            score = weight * dist * dist
            pick = int(np.argmax(score))
            if score[pick] <= 0:
                break
            picks.append(pick)
            near_pick = np.linalg.norm(hist_lab - hist_lab[pick], axis=1)
            if served > 0:
                near_pick = np.maximum(near_pick - served, 0.0)
            np.minimum(dist, near_pick, out=dist)
        if not picks:
            break
        centres = np.vstack([centres, hist_lab[picks]])
        for _ in range(_ITERATIONS):
            if tick is not None:
                tick()
            _, idx = PointSet(centres).query(hist_lab)
            mass = np.bincount(idx, weight, minlength=len(centres))
            moved = np.stack(
                [
                    np.bincount(idx, weight * hist_lab[:, c], minlength=len(centres))
                    for c in range(3)
                ],
                axis=1,
            )
            free = mass > 0
            free[:fixed] = False
            centres[free] = moved[free] / mass[free, None]
    out: FloatArray = lab_to_srgb(centres)
    if fixed:
        out[:fixed] = seeds[:fixed]  # exactly, not through a CIELAB round trip
    return out


def band_faithful(flat: FloatArray) -> Callable[[FloatArray], bool]:
    """Shaded art is faithful when almost every flat pixel is within `BAND_REACH` of a
    colour, so neighbouring bands are at most `BAND_STEP` apart."""
    total = float(flat.sum())

    def done(error: FloatArray) -> bool:
        return total <= 0 or float(flat[error > BAND_REACH].sum()) <= BAND_LEFT * total

    return done


def photo_faithful(weight: FloatArray) -> Callable[[FloatArray], bool]:
    """A photo is faithful when its pixels' mean CIEDE2000 is at most `PHOTO_FIDELITY`."""
    total = float(weight.sum())

    def done(error: FloatArray) -> bool:
        return total <= 0 or float((error * weight).sum()) <= PHOTO_FIDELITY * total

    return done


def two_tone(
    rgb: FloatArray, flat: FloatArray, edge: FloatArray, mix: float, found: FloatArray
) -> FloatArray | None:
    """The two colours of a two-tone texture (stamp, scan), most pixels first, or None.

    Along the main axis of the colour cloud (sRGB, where ink and paper mix), the pixels are
    split in two (Otsu); each end colour is the mean of the outermost `END_SHARE` of its side, so
    speckle and anti-aliasing tints never pull the ink towards the paper. The image is
    two-tone when nearly every pixel lies within `mix` of the line between the two ends
    (twice `mix`: speckle is not an exact mixture), the cloud is as wide in one direction
    across the line as in the other (noise, `TWO_TONE_ROUND`), and its mid-tones are hardly
    ever flat.
    Cost: O(B log B) for B histogram bins.
    """
    weight = flat + edge
    total = float(weight.sum())
    if total <= 0 or len(rgb) < 2:
        return None
    mean = (rgb * weight[:, None]).sum(axis=0) / total
    off = rgb - mean
    cov = (off * weight[:, None]).T @ off / total
    spread, axes = np.linalg.eigh(cov)
    if spread[1] > (TWO_TONE_THINNESS**2) * spread[2]:
        return None  # a colour plane (photo, 2-D gradient), not one line of mixtures
    if spread[1] > max(TWO_TONE_ROUND**2 * max(float(spread[0]), 0.0), TWO_TONE_FLAT_ACROSS):
        return None  # colours spread along a second axis too: a photo's hues, not noise
    axis = axes[:, -1]
    t = off @ axis
    order = np.argsort(t, kind="stable")
    ts, ws = t[order], weight[order]
    cum_w = np.cumsum(ws)[:-1]
    cum_t = np.cumsum(ws * ts)[:-1]
    rest = total - cum_w
    valid = (cum_w > 0) & (rest > 0)
    if not valid.any():
        return None
    low_mean = cum_t / np.where(valid, cum_w, 1.0)
    high_mean = (float((ws * ts).sum()) - cum_t) / np.where(valid, rest, 1.0)
    between = np.where(valid, cum_w * rest * (low_mean - high_mean) ** 2, -1.0)
    cut = ts[int(np.argmax(between))]
    ends = []
    for side, low_side in ((t <= cut, True), (t > cut, False)):
        ts_side, ws_side = t[side], weight[side]
        if ws_side.sum() <= 0:
            return None
        by_t = np.argsort(ts_side, kind="stable")
        cum = np.cumsum(ws_side[by_t])
        share = END_SHARE if low_side else 1.0 - END_SHARE
        bound = ts_side[by_t][int(np.searchsorted(cum, share * cum[-1]))]
        outer = ts_side <= bound if low_side else ts_side >= bound
        ends.append((rgb[side][outer] * ws_side[outer, None]).sum(axis=0) / ws_side[outer].sum())
    low, high = ends
    direction = high - low
    span = float(direction @ direction)
    if span <= 0:
        return None
    pos = (rgb - low) @ direction / span
    residual = np.linalg.norm(rgb - low - np.clip(pos, 0.0, 1.0)[:, None] * direction, axis=1)
    if float(weight[residual <= 2.0 * mix].sum()) < TWO_TONE_EXPLAINED * total:
        return None
    if len(found):
        along = np.clip((found - low) @ direction / span, 0.0, 1.0)
        apart = np.linalg.norm(found - low - along[:, None] * direction, axis=1)
        if float(apart.max()) > mix:
            return None
    mid = (pos > 0.25) & (pos < 0.75)
    mid_weight = float(weight[mid].sum())
    if mid_weight > 0 and float(flat[mid].sum()) > TWO_TONE_FLAT_MIDTONES * mid_weight:
        return None
    first = float(weight[pos < 0.5].sum()) >= float(weight[pos >= 0.5].sum())
    pair: FloatArray = np.stack([low, high] if first else [high, low])
    return pair


def ink_or_paper(
    rgb: FloatArray, count: npt.NDArray[Any], palette: FloatArray
) -> npt.NDArray[np.int32]:
    """Label colours (sRGB rows, with their pixel counts) as one of a two-colour palette
    by their position on the line between the two: the colour covering fewer pixels is the
    ink and takes every colour with at least `INK_SHARE` of it, so speckle inside the ink
    (a mixture of ink and paper, nearer the paper in CIELAB) never punches holes in it.
    Cost: O(U) for U colours."""
    first, second = palette[0], palette[1]
    direction = second - first
    span = float(direction @ direction)
    if span <= 0:
        return np.zeros(len(rgb), dtype=np.int32)
    pos = (rgb - first) @ direction / span
    second_is_ink = float(count[pos >= 0.5].sum()) <= float(count[pos < 0.5].sum())
    ink: npt.NDArray[np.bool_] = pos >= INK_SHARE if second_is_ink else pos > 1.0 - INK_SHARE
    return ink.astype(np.int32)


def roughness(rgba: npt.NDArray[np.uint8], step: int = 4) -> float:
    """How much the image bends from pixel to pixel: the 75th percentile of the absolute
    second difference of luma along every `step`-th row, over opaque pixels. A gradient,
    however steep, is straight (0 to 1 levels); noise and texture are not. Cost: O(N / step).
    """
    rows = rgba[::step]
    if rows.shape[1] < 3:
        return 0.0
    luma = rows[..., :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    bend = np.abs(luma[:, :-2] - 2.0 * luma[:, 1:-1] + luma[:, 2:])
    if rows.shape[-1] < 4:
        values = bend.ravel()
    else:
        solid = rows[..., 3] == 255
        values = bend[solid[:, :-2] & solid[:, 1:-1] & solid[:, 2:]]
    return float(np.percentile(values, 75)) if len(values) else 0.0


#: A ramp is this many pixels in a row (along a row or a column) each of which changes from
#: the last by a straight step (`ramp_share`): a gradient, not an edge.
RAMP_RUN = 8
#: Most 8-bit levels by which a straight step of a ramp may change a channel: a steep
#: gradient (2.5 CIEDE2000 per pixel) moves by under 10; an edge, however anti-aliased or
#: upscaled (a hard edge 8x bilinear: 32 a pixel), by more.
RAMP_MOST = 12
#: Smooth art is shaded when at least this share of its sampled pixels lie on ramps, three
#: times the most of any flat art in the corpus and hard sets (an upscaled emoji's shading,
#: 2 %); a steep gradient over a fifth of a canvas has 18 %.
RAMP_SHARE = 0.06
#: Under JPEG noise, the share of smoothed ramps (`jpeg_ramps`) that makes steep shaded
#: art: steep gradients score 16 % and more (a 60-px radial over a 240-px canvas, the
#: least), while a photo upscaled to 3 MP, smooth after the upscale, reaches 6.4 % (the
#: benchmark's cat) and photos at 512 px 8 %: those take the photo path, not bands.
JPEG_RAMP_SHARE = 0.12
#: Every `RAMP_SAMPLE`-th row and column is read for ramps.
RAMP_SAMPLE = 4


def ramp_share(rgba: npt.NDArray[np.uint8], step: int = RAMP_SAMPLE) -> float:
    """Share of the sampled pixels (every `step`-th row and column, opaque) that lie on a
    straight ramp: `RAMP_RUN` pixels in a row each changing from the last by 1 to
    `RAMP_MOST` levels, the change itself changing by at most one level in any channel.

    A steep gradient has hardly a flat pixel, and its pixels are mixtures of its end
    colours, so `off_palette_share` sees none of it; its steps, though, are the rounding of
    one slope (consecutive differences of a rounded straight line differ by at most one
    level). No edge of flat art is such a run: an anti-aliased edge changes by tens of
    levels within a pixel or two, and a blurred one whose change changed by at most a
    level a pixel would take 32 pixels from black to white: a gradient itself. Noise (JPEG,
    scans, photos) bends every few pixels. Cost: O(N / step)."""
    if rgba.shape[0] < RAMP_RUN or rgba.shape[1] < RAMP_RUN:
        return 0.0
    lines = (rgba[::step], rgba[:, ::step].swapaxes(0, 1))
    sampled = sum(int(line.shape[0]) * int(line.shape[1]) for line in lines)
    # Every pixel of a ramp differs from a neighbour along its line: images with too few
    # such pixels (flat art, mostly flat colour) are answered from one compare a pixel.
    if 2 * sum(_changed(line) for line in lines) < RAMP_SHARE * sampled:
        return 0.0
    found = sum(int(np.count_nonzero(_on_ramps(line))) for line in lines)
    return found / sampled


def smooth_ramps(rgba: npt.NDArray[np.uint8]) -> bool:
    """Whether the image is smooth (`roughness`) and steep gradients cover enough of it
    (`ramp_share`) to be shaded art, however few flat pixels it has, or, saved as JPEG,
    whether its lightly smoothed lines are (`jpeg_ramps`). Cost: O(N / 4)."""
    if ramp_share(rgba) >= RAMP_SHARE and roughness(rgba) < SMOOTH_ROUGHNESS:
        return True
    return jpeg_ramps(rgba)


#: A ramp under JPEG noise is this many pixels of a smoothed line (`jpeg_ramps`): twice
#: `RAMP_RUN`, as smoothing makes short straight runs of whatever it averages (an upscaled
#: emoji's shading: 1.2 % of the sampled pixels at 16, 2.0 % at 8).
SMOOTHED_RAMP_RUN = 16
#: Most 8-bit levels by which a smoothed ramp's change may change from one pixel to the
#: next: its JPEG noise averaged out (the 60-px radial gradient at quality 75: 17 % of the
#: sampled pixels on ramps, as many as its PNG).
SMOOTHED_BEND = 1
#: Fewest levels a pixel by which a smoothed ramp changes (its fastest channel): a steep
#: gradient. A gentle one has flat pixels and is found by `off_palette_share`.
SMOOTHED_LEAST = 1
#: The smoothing along each sampled line of `jpeg_ramps`: binomial, sigma 1.2 px, in
#: integers (its taps sum to 64). JPEG's 8-pixel blocks leave steps of 1 to 2 levels on a
#: ramp, which it averages out; a logo's edge still changes by tens of levels a pixel.
_LINE_KERNEL = (1, 6, 15, 20, 15, 6, 1)
#: Every `SMOOTHED_SAMPLE`-th row and column is read for smoothed ramps: a gradient's ramps
#: run across many lines, and every fourth finds the same shares (within a point) at twice
#: the cost.
SMOOTHED_SAMPLE = 8
_LINE_SCALE = sum(_LINE_KERNEL)
_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def jpeg_ramps(rgba: npt.NDArray[np.uint8]) -> bool:
    """Whether a steep gradient saved as JPEG covers enough of the image to be shaded art
    (`jpeg_ramp_share` at least `JPEG_RAMP_SHARE`) and its smoothed rows are smooth
    (`roughness`'s measure under `SMOOTH_ROUGHNESS`: a photo's smoothed rows still bend).
    Cost: `jpeg_ramp_share`, and once shaded O(N / 8) for the rows' bends."""
    if jpeg_ramp_share(rgba) < JPEG_RAMP_SHARE:
        return False
    bends = _smooth_row_bends(*_smoothed_line(rgba[::SMOOTHED_SAMPLE]))
    return bool(len(bends)) and float(np.percentile(bends, 75)) < SMOOTH_ROUGHNESS


def jpeg_ramp_share(rgba: npt.NDArray[np.uint8], step: int = SMOOTHED_SAMPLE) -> float:
    """Share of the sampled pixels (every `step`-th row and column, each smoothed along
    itself, `_smoothed_line`) on straight ramps of `SMOOTHED_RAMP_RUN` pixels; 0 when too
    few pixels change or move for it to reach `RAMP_SHARE`.

    JPEG's block noise bends a rounded ramp every few pixels (the 60-px radial gradient:
    3 % on `ramp_share`'s ramps against 19 % as PNG), but it averages out over a few
    pixels, while a smoothed anti-aliased edge still changes by tens of levels within two
    pixels and a blurred edge still bends by more than a level a pixel unless it spans 32
    pixels (a gradient itself). Flat art, JPEG'd or not, upscaled pixel art, stamps and
    scans: at most 1.4 % in the corpus, the hard set and the own set; photos up to 8 %.
    Cost: O(N / step) times the kernel's 7 taps, after the same one compare a pixel as
    `ramp_share` for mostly flat images (0.05 ms at 512 px); JPEG'd flat art, with too
    few steep steps for any ramp, stops before the runs are sought (0.7 ms at 512 px)."""
    if min(rgba.shape[:2]) < SMOOTHED_RAMP_RUN + len(_LINE_KERNEL):
        return 0.0
    lines = (rgba[::step], rgba[:, ::step].swapaxes(0, 1))
    sampled = sum(int(line.shape[0]) * int(line.shape[1]) for line in lines)
    if 2 * sum(_changed(line) for line in lines) < RAMP_SHARE * sampled:
        return 0.0
    smoothed = [_smoothed_line(line) for line in lines]
    steps = [_moving_steps(planes, solid) for planes, solid in smoothed]
    # A ramp of n pixels has n - 1 moving steps: too few of them, and no share is reached.
    moving = sum(int(np.count_nonzero(moves)) for _, moves in steps)
    if moving * SMOOTHED_RAMP_RUN < RAMP_SHARE * sampled * (SMOOTHED_RAMP_RUN - 1):
        return 0.0
    found = 0
    for (changes, moves), (planes, _) in zip(steps, smoothed, strict=True):
        on = _runs(_straight(changes, moves), SMOOTHED_RAMP_RUN, planes[0].shape)
        found += int(np.count_nonzero(on))
    return found / sampled


Planes = list[npt.NDArray[np.int16]]


def _smoothed_line(lines: npt.NDArray[np.uint8]) -> tuple[Planes, npt.NDArray[np.bool_]]:
    """`lines` (L, W, C) smoothed along themselves with `_LINE_KERNEL`, as three (L, W - 6)
    int16 channel planes in 64ths of a level, and whether every pixel each one averages is
    opaque. The kernel is binomial (1 6 15 20 15 6 1 are the sixth row of Pascal's
    triangle), so it is six sums of neighbouring pairs: the same integers as the seven
    weighted taps, in six additions instead of thirteen operations a channel.
    Cost: O(L W) times 6, in 16-bit integers (at most 64 x 255)."""
    taps = len(_LINE_KERNEL)
    width = lines.shape[1] - taps + 1
    planes: Planes = []
    for channel in range(3):
        total = lines[..., channel].astype(np.int16)
        for _ in range(taps - 1):
            total = total[:, 1:] + total[:, :-1]
        planes.append(total)
    solid = np.ones((lines.shape[0], width), dtype=bool)
    if lines.shape[-1] == 4:
        opaque = lines[..., 3] == 255
        if not opaque.all():
            for shift in range(taps):
                solid &= opaque[:, shift : shift + width]
    return planes, solid


def _moving_steps(
    planes: Planes, solid: npt.NDArray[np.bool_]
) -> tuple[Planes, npt.NDArray[np.bool_]]:
    """The changes from each pixel of smoothed lines (`_smoothed_line`) to the next, per
    channel, and which steps move as a steep ramp does: by at least `SMOOTHED_LEAST` levels
    in some channel, at most `RAMP_MOST` in every one, between opaque pixels. Cost: O(L W).
    """
    changes = [np.diff(plane, axis=1) for plane in planes]
    moving = solid[:, 1:] & solid[:, :-1]
    fast = np.zeros_like(moving)
    for change in changes:
        size = np.abs(change)
        moving &= size <= RAMP_MOST * _LINE_SCALE
        fast |= size >= SMOOTHED_LEAST * _LINE_SCALE
    moving &= fast
    return changes, moving


def _straight(changes: Planes, moving: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Which pairs of consecutive moving steps change by at most `SMOOTHED_BEND` levels in
    every channel. Cost: O(L W)."""
    straight = moving[:, 1:] & moving[:, :-1]
    for change in changes:
        straight &= np.abs(np.diff(change, axis=1)) <= SMOOTHED_BEND * _LINE_SCALE
    return straight


def _smooth_row_bends(planes: Planes, solid: npt.NDArray[np.bool_]) -> npt.NDArray[np.float32]:
    """The absolute second differences of luma (levels) along smoothed rows, where
    opaque: the values of which `roughness` takes a percentile. Cost: O(L W)."""
    luma = sum(
        (
            plane.astype(np.float32) * (weight / _LINE_SCALE)
            for plane, weight in zip(planes, _LUMA, strict=True)
        ),
        np.zeros(planes[0].shape, dtype=np.float32),
    )
    bend: npt.NDArray[np.float32] = np.abs(luma[:, :-2] - 2.0 * luma[:, 1:-1] + luma[:, 2:])
    return bend[solid[:, :-2] & solid[:, 1:-1] & solid[:, 2:]]


def _changed(lines: npt.NDArray[np.uint8]) -> int:
    """How many pixels of `lines` (L, W, C) differ from the next along their line: one
    compare of 32-bit words for RGBA, whose bytes are a pixel. Cost: O(L W)."""
    if lines.shape[-1] == 4 and lines.strides[-1] == 1:
        packed = lines.view(np.uint32)[..., 0]
        return int(np.count_nonzero(packed[:, 1:] != packed[:, :-1]))
    return int(np.count_nonzero((lines[:, 1:] != lines[:, :-1]).any(axis=-1)))


def _on_ramps(lines: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_]:
    """Which pixels of `lines` (L, W, C) lie on a ramp (`ramp_share`). Cost: O(L W C)."""
    moving = np.ones((lines.shape[0], lines.shape[1] - 1), dtype=bool)
    still = np.ones_like(moving)
    straight = np.ones((lines.shape[0], lines.shape[1] - 2), dtype=bool)
    for channel in range(min(lines.shape[-1], 3)):
        plane = lines[..., channel].astype(np.int16)
        change = plane[:, 1:] - plane[:, :-1]
        size = np.abs(change)
        moving &= size <= RAMP_MOST
        still &= size == 0
        straight &= np.abs(change[:, 1:] - change[:, :-1]) <= 1
    moving &= ~still
    if lines.shape[-1] == 4:
        solid = lines[..., 3] == 255
        moving &= solid[:, 1:] & solid[:, :-1]
    straight &= moving[:, 1:] & moving[:, :-1]
    return _runs(straight, RAMP_RUN, lines.shape[:2])


def _runs(
    straight: npt.NDArray[np.bool_], run: int, shape: tuple[int, ...]
) -> npt.NDArray[np.bool_]:
    """The pixels (`shape`: lines by pixels) covered by `run - 2` straight steps in a row:
    a ramp starting at step i covers pixels i to i + run - 1. The window's AND (where a
    ramp starts) and the ramp's spread (the pixels it covers) are each built by doubling:
    a window of n is two overlapping windows of n // 2 or more. Cost: O(L W log run)."""
    width = straight.shape[1] - (run - 2) + 1
    on = np.zeros(shape, dtype=bool)
    if width <= 0:
        return on
    start = _window_all(straight, run - 2)
    spread = _window_any(start, run)
    on[:, : spread.shape[1]] = spread
    return on


def _window_all(flags: npt.NDArray[np.bool_], size: int) -> npt.NDArray[np.bool_]:
    """For each start i along the lines, whether `flags[:, i : i + size]` are all set (the
    last `size - 1` starts dropped). O(L W log size)."""
    span, out = 1, flags
    while 2 * span <= size:
        out = out[:, span:] & out[:, :-span]
        span *= 2
    if span < size:
        # Two windows of `span` overlapping in the middle cover `size`.
        out = out[:, size - span :] & out[:, : out.shape[1] - (size - span)]
    return out


def _window_any(flags: npt.NDArray[np.bool_], size: int) -> npt.NDArray[np.bool_]:
    """`flags` spread forwards over `size` pixels: pixel j is set when any of
    `flags[:, j - size + 1 : j + 1]` is, for j up to `flags.shape[1] + size - 1`.
    O(L W log size)."""
    lines = flags.shape[0]
    span = 1
    out = flags
    while 2 * span <= size:
        grown = np.zeros((lines, out.shape[1] + span), dtype=bool)
        grown[:, : out.shape[1]] = out
        grown[:, span:] |= out
        out, span = grown, 2 * span
    if span < size:
        rest = size - span
        grown = np.zeros((lines, out.shape[1] + rest), dtype=bool)
        grown[:, : out.shape[1]] = out
        grown[:, rest:] |= out
        out = grown
    return out


def _nearest_apart(lab: FloatArray) -> FloatArray:
    """CIEDE2000 from each colour (CIELAB rows) to its nearest other colour, as a (K, K)
    table with an infinite diagonal. Cost: O(K^2)."""
    k = len(lab)
    de = ciede2000(np.repeat(lab, k, axis=0), np.tile(lab, (k, 1))).reshape(k, k)
    np.fill_diagonal(de, np.inf)
    return de


def _dense_lab(lab: FloatArray) -> bool:
    """Whether a palette (CIELAB) is dense as `near_equal` decides. Cost: O(K^2)."""
    return len(lab) >= 3 and float(np.median(_nearest_apart(lab).min(axis=1))) <= NEAR_EQUAL


def near_equal(palette: FloatArray, photo: bool = False) -> npt.NDArray[np.bool_] | None:
    """Which pairs of colours are near-equal (`NEAR_EQUAL`), as a (K, K) table, when the
    palette is dense (a photo's grown palette: most colours have a near-equal neighbour)
    or known to be a `photo`'s (a large field of faint sources, whose colours are placed
    apart on purpose: `quantise.SOURCES_SERVED`); None for a palette of a few distinct
    colours (flat art, a stamp, a scan), whose every speck is noise or texture and whose
    edges are anti-aliasing between its colours. Cost: O(K^2) for K colours (K <= 256)."""
    if len(palette) < 3:
        return None
    de = _nearest_apart(srgb_to_lab(np.asarray(palette, dtype=np.float64)))
    if not photo and float(np.median(de.min(axis=1))) > NEAR_EQUAL:
        return None
    near: npt.NDArray[np.bool_] = de <= NEAR_EQUAL
    np.fill_diagonal(near, True)
    return near
