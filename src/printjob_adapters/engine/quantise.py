"""Quantisation: find the artwork's flat colours and give every pixel one of them.

The palette is fitted to a colour histogram in which every pixel is marked *flat* (its 5x5
neighbourhood hardly varies: a region interior) or *edge* (anti-aliased boundaries, ringing,
texture). Candidates are the modes of that histogram. Colours are then picked greedily by how
many pixels they explain: a flat pixel is explained by a colour within the point tolerance
(CIELAB or sRGB, scaled to the measured noise), an edge pixel also by a mixture
a*C1 + (1-a)*C2 of two chosen colours (straight in sRGB, because renderers blend anti-aliased
edges in sRGB; luma and chroma may mix differently, as JPEG blurs chroma). So edge mixtures
never become colours, and a candidate that is only noise around a chosen colour (one
continuous cloud of flat pixels, no valley between) or only edge ringing is rejected. The
automatic count stops once what is left unexplained is smaller than `Tolerances.min_area`.

When fewer colours are asked for than the artwork has, `reduce_palette` keeps the artwork's
own colours that best stand for the rest (k-medoids). Photos, scans and gradients, which no
small set of flat colours explains, get weighted k-means on the histogram instead.

Pixels are then assigned (`assign`): nearest palette colour in CIELAB, and then an edge pixel
that is a mixture of the two nearest interior colours around it takes the nearer of those
two (coverage a >= 0.5), never a third colour lying between them in colour space.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from printjob_adapters.engine import colour_count, faint_sources, own_inks, palette_choice
from printjob_adapters.engine.colour import lab_to_srgb, srgb_to_lab
from printjob_adapters.engine.nearest import RADIUS_POINTS, Incidence, PointSet

FloatArray = npt.NDArray[np.floating[Any]]
IntArray = npt.NDArray[np.int32]
BoolArray = npt.NDArray[np.bool_]

#: Automatic mode never returns more colours than this (photos, gradients, scans).
AUTO_CAP = 32
#: Most colours picked one by one; beyond this, k-means on the histogram takes over.
GREEDY_MAX = 64
#: Farthest-bin seeds picked between two cancel checks in `refine_palette` (each is one
#: O(B) pass over the histogram: at 3 MP of noise about 7 ms, so a check every ~0.5 s).
SEEDS_PER_CHECK = 64
#: Fraction of pixels left unexplained below which the palette is "the artwork's colours".
UNEXPLAINED = 0.02
#: A flat (interior) pixel counts this many times as much as an edge pixel as colour evidence.
FLAT_EVIDENCE = 3.0
#: Ringing/noise reach around a flat colour, as a multiple of the mixture tolerance.
RINGING_REACH = 2.0
#: sRGB distance within which a candidate may be noise around an already chosen colour.
VALLEY_RANGE = 16.0
#: Mean CIELAB error at which an automatic photo/gradient palette is faithful enough.
FIDELITY = 5.0
#: Below this share of near-flat pixels (5x5 spread up to 16), an image is noisy all over.
NEAR_FLAT_SHARE = 0.25
#: ...among at least this many pixels (a thumbnail's few pixels are all edge).
NOISY_ALL_OVER_MIN = 64 * 64
#: The grain such an image is given at most.
MAX_NOISE = 40.0
#: A photo over this many pixels (as `cleanup.SPECK_SCALE_PIXELS`: print size, not
#: screen size) grows its palette to at most `LARGE_PHOTO_COLOURS`.
LARGE_PHOTO_PIXELS = 1_000_000
#: A photo's segments grow with its colours and its pixels: at 3 MP the busiest photo of
#: `bench/photo_scale.py` (the stereo motorcycle) passes `bounds.MAX_SEGMENTS` at 64
#: colours (87 unbounded), and was traced a second time in fewer (`pipeline.trace`);
#: grown to 48 it is traced once. Photos that need fewer colours are not touched.
LARGE_PHOTO_COLOURS = 48
#: ...and a field of faint sources (`faint_sources`) to at most this many: its sky is one
#: colour and its segments are all in its sources, so its palette grew unbounded at 3 MP
#: (the Hubble deep field: 131 colours, past the segment cap, then traced again in 5 and
#: its galaxies lost); 16 is what the same field gets at 512 px.
#: Its colours are seeded only where a colour bin is further than `SOURCES_SERVED` from
#: every colour, so they go to the sources rather than to the sky's noise, which the speck
#: filter flattens whatever colours it has (`_photo_palette`): the Hubble deep field at
#: 3 MP in 32 colours so placed, 184,000 segments at ΔE2000 2.57 (16 placed on the sky:
#: 281,000 at 2.71).
LARGE_SOURCES_COLOURS = 32
#: A large field of faint sources seeds its new colours only where a colour bin is further
#: than this (CIELAB, `colour_count.VISIBLE`) from every colour: nearer, the bin is drawn
#: about as well as the sky's noise lets any colour draw it.
SOURCES_SERVED = colour_count.VISIBLE
_BITS = 6  # histogram resolution per channel; bin means keep the exact colours
_SHIFT = 8 - _BITS


@attrs.frozen(eq=False)
class PixelMaps:
    """Per-pixel facts the stages share (all (H, W))."""

    opaque: BoolArray  # counted as artwork (alpha >= 128)
    solid: BoolArray  # fully opaque: trusted for colour estimates
    flat: BoolArray  # fully opaque region interior: its 5x5 neighbourhood varies little
    noise: float  # 5x5 sRGB range of near-flat areas, 90th percentile (0 for clean PNG art)
    grain: float = 0.0  # median 5x5 sRGB range where hardly any area is near-flat, else 0


@attrs.frozen(eq=False)
class Tolerances:
    """Distances deciding when a colour or a mixture explains a pixel."""

    point: float  # CIELAB units: a pixel within this of a colour *is* that colour
    rgb: float  # sRGB units: the same, so channel noise (JPEG, scans) never splits a colour
    mix: float  # sRGB units: off-segment distance still counted as a two-colour mixture
    split: float  # how far luma and chroma mixing may differ (JPEG chroma blur); 0 if clean
    min_area: float  # pixels a new colour must explain to be worth adding


def pixel_maps(rgba: npt.NDArray[np.uint8]) -> PixelMaps:
    """Step 1: opacity and flatness masks. Cost: one separable 5x5 range pass, O(N), in
    bands of rows that stay in cache (`_spread5`).

    5x5 rather than 3x3 so the ringing lobes a Lanczos resize or JPEG leaves beside an edge
    count as edge pixels (mixtures), not as flat colour.
    """
    opaque, solid = _opacity(rgba)
    everywhere = bool(solid.all())
    # Transparent pixels carry meaningless colour; their neighbours are not interiors: the
    # pixels whose whole 5x5 window is fully opaque, found by the same pass as the spread
    # (the window's least alpha is 255).
    solid_interior = solid if everywhere else np.empty(solid.shape, dtype=bool)
    # Off the interiors the spread reads 255, which no count below reads and no flatness
    # threshold reaches, so it needs no mask of its own.
    spread = _spread5(rgba, None if everywhere else solid_interior, saturate_outside=True)
    interior_spread = spread.ravel()
    total = interior_spread.size if everywhere else int(np.count_nonzero(solid_interior))
    # Noise: how much near-flat areas still vary. Clean art is exactly flat (0); JPEG blocks,
    # scans and photos are not. Spreads above 16 are edges and texture, not noise.
    counts = _low_counts(interior_spread, 17)
    noise = _percentile90(counts)
    # Hardly any near-flat area (a phone photo of a print, heavy grain): noise all over,
    # whose typical spread, not the few calm pixels, says how far its colours scatter.
    grain = 0.0
    if total >= NOISY_ALL_OVER_MIN and counts.sum() < NEAR_FLAT_SHARE * total:
        values = spread.ravel() if everywhere else spread[solid_interior]
        grain = min(float(np.median(values)), MAX_NOISE)
    # The spreads are integers: compared with the whole part of the float threshold (the
    # same pixels), in uint8 rather than converted to float64 for the compare.
    flat = spread <= np.uint8(int(min(max(12.0, 2.5 * noise), 24.0)))
    return PixelMaps(opaque=opaque, solid=solid, flat=flat, noise=noise, grain=grain)


def _percentile90(counts: npt.NDArray[np.int64]) -> float:
    """`np.percentile(values, 90)` (linear interpolation) of small non-negative integers
    given as their counts; 0 when there are none. O(len(counts))."""
    n = int(counts.sum())
    if n == 0:
        return 0.0
    pos = 0.9 * (n - 1)
    below = int(np.floor(pos))
    cum = np.cumsum(counts)
    lower = int(np.searchsorted(cum, below, side="right"))
    upper = int(np.searchsorted(cum, min(below + 1, n - 1), side="right"))
    return float(lower + (pos - below) * (upper - lower))


def _opacity(rgba: npt.NDArray[np.uint8]) -> tuple[BoolArray, BoolArray]:
    """(alpha >= 128, alpha == 255) of a uint8 (H, W, C) image (C = 3: all opaque). A
    contiguous RGBA image is read as little-endian 32-bit words, alpha in the top byte,
    which is cheaper than a strided pass over the alpha bytes; the same masks. O(N)."""
    if rgba.shape[2] != 4:
        full = np.ones(rgba.shape[:2], dtype=bool)
        return full, full.copy()
    if not rgba.flags.c_contiguous:
        alpha = rgba[..., 3]
        return alpha >= 128, alpha == 255
    words = rgba.view("<u4")[..., 0]
    opaque: BoolArray = words >= np.uint32(0x80000000)
    solid: BoolArray = words >= np.uint32(0xFF000000)
    return opaque, solid


def _low_counts(values: npt.NDArray[np.uint8], below: int) -> npt.NDArray[np.int64]:
    """`np.bincount(values, minlength=256)[:below]` for uint8 `values`: the zeros counted
    by one compare, only the other low values gathered and counted (flat art is mostly 0,
    so this skips a full-size integer copy). O(N)."""
    zeros = int(np.count_nonzero(values == 0))
    # 1 <= v < below as one compare: v - 1 wraps 0 round to 255 in uint8.
    low = values[(values - np.uint8(1)) < np.uint8(below - 1)]
    counts = np.bincount(low, minlength=below).astype(np.int64)
    counts[0] = zeros
    return counts


#: Rows of the image `_spread5` works on at once: about 128 KB of RGBA bytes per band, so
#: its scratch rows stay in cache and are reused rather than freshly mapped per call.
SPREAD_BAND_BYTES = 1 << 17


def _spread5(
    img: npt.NDArray[np.uint8],
    solid_interior: BoolArray | None = None,
    saturate_outside: bool = False,
) -> npt.NDArray[np.uint8]:
    """The largest over the first three channels of max minus min over each pixel's 5x5
    window (truncated at the image border), uint8 (H, W), of a uint8 (H, W, C) image.
    Given `solid_interior` ((H, W) bool, C = 4), also fills it with whether the window's
    least alpha is 255 (the window's minimum of the fourth channel, which the pass
    computes anyway); with `saturate_outside` the spread is 255 wherever that is not so.

    Separable, in bands of rows (each band read with the two rows either side): each row
    is one run of W * C bytes, so a horizontal shift by d pixels is a shift by d * C
    bytes. A window of five is built by doubling (pairs, then fours, then one more
    pixel), three uint8 max and three min operations per direction on slices of scratch
    buffers allocated once, O(N); the border pixels' truncated windows come from the
    same pairs and fours, and the rows above and below the image repeat its first and
    last row, which adds nothing to a window already holding them. Identical to the
    largest of `ndimage.maximum_filter(ch, 5) - ndimage.minimum_filter(ch, 5)` over the
    colour channels (whose default "reflect" border repeats pixels already inside the
    window).
    """
    h, w, c = img.shape
    if h < 5 or w < 5:
        # Repeated border pixels change no truncated window; the doubling needs five.
        grown = np.pad(img, ((0, max(0, 5 - h)), (0, max(0, 5 - w)), (0, 0)), mode="edge")
        grown_interior = None if solid_interior is None else np.empty(grown.shape[:2], bool)
        out_grown = _spread5(grown, grown_interior, saturate_outside)
        if solid_interior is not None and grown_interior is not None:
            solid_interior[...] = grown_interior[:h, :w]
        return out_grown[:h, :w]
    wc = w * c
    rows = np.ascontiguousarray(img).reshape(h, wc)
    out = np.empty((h, w), dtype=np.uint8)
    band = max(1, min(h, SPREAD_BAND_BYTES // max(wc, 1)))
    hi_buf = np.empty((band + 4, wc), dtype=np.uint8)
    lo_buf = np.empty_like(hi_buf)
    pairs = np.empty((band + 4, wc - c), dtype=np.uint8)
    fours = np.empty((band + 4, wc - 3 * c), dtype=np.uint8)
    v_pairs = np.empty((band + 3, wc), dtype=np.uint8)
    v_fours = np.empty((band + 1, wc), dtype=np.uint8)
    ranges_buf = np.empty((band, wc), dtype=np.uint8)
    lo_out = np.empty_like(ranges_buf)
    for r0 in range(0, h, band):
        r1 = min(h, r0 + band)
        n = r1 - r0
        a, b = max(0, r0 - 2), min(h, r1 + 2)
        # Slot j of the band's buffers holds image row r0 - 2 + j (clamped into the image).
        top = a - (r0 - 2)
        src = rows[a:b]
        for reduce, buf in ((np.maximum, hi_buf), (np.minimum, lo_buf)):
            dst = buf[top : top + b - a]
            m2, m4 = pairs[: b - a], fours[: b - a]
            reduce(src[:, :-c], src[:, c:], out=m2)
            reduce(m2[:, : -2 * c], m2[:, 2 * c :], out=m4)
            reduce(m4[:, :-c], src[:, 4 * c :], out=dst[:, 2 * c : wc - 2 * c])
            reduce(m2[:, :c], src[:, 2 * c : 3 * c], out=dst[:, :c])
            dst[:, c : 2 * c] = m4[:, :c]
            dst[:, wc - 2 * c : wc - c] = m4[:, wc - 4 * c :]
            reduce(m2[:, wc - 3 * c : wc - 2 * c], src[:, wc - c :], out=dst[:, wc - c :])
            buf[:top] = buf[top]
            bottom = top + b - a
            buf[bottom : n + 4] = buf[bottom - 1]
        for reduce, buf, res in ((np.maximum, hi_buf, ranges_buf), (np.minimum, lo_buf, lo_out)):
            v2, v4 = v_pairs[: n + 3], v_fours[: n + 1]
            reduce(buf[: n + 3], buf[1 : n + 4], out=v2)
            reduce(v2[: n + 1], v2[2 : n + 3], out=v4)
            reduce(v4[:n], buf[4 : n + 4], out=res[:n])
        rng = ranges_buf[:n]
        if solid_interior is not None:
            # The least alpha is 255: each pixel's four bytes read as one little-endian
            # word, alpha in its top byte (one contiguous compare, not a strided one).
            np.greater_equal(
                lo_out[:n].view("<u4"), np.uint32(0xFF000000), out=solid_interior[r0:r1]
            )
        np.subtract(rng, lo_out[:n], out=rng)
        _largest_of_three(rng, c, v_pairs.reshape(-1)[: n * wc], out[r0:r1])
        if solid_interior is not None and saturate_outside:
            # 1 - 1 = 0 on an interior, 0 - 1 = 255 elsewhere: ORed in, 255 off interiors.
            outside = lo_out[:n].reshape(-1)[: n * w].reshape(n, w)
            np.subtract(solid_interior[r0:r1].view(np.uint8), np.uint8(1), out=outside)
            np.bitwise_or(out[r0:r1], outside, out=out[r0:r1])
    return out


def _largest_of_three(
    rows: npt.NDArray[np.uint8],
    c: int,
    scratch: npt.NDArray[np.uint8],
    out: npt.NDArray[np.uint8],
) -> None:
    """Into `out` ((n, W)): the largest of the first three channels of each pixel of
    `rows` ((n, W c) bytes, c >= 3). Two maxima of the byte stream with itself shifted by
    one and by two bytes (contiguous, vectorised) leave each pixel's answer at its first
    byte, copied out with one strided pass; a maximum of strided channel views is not
    vectorised and costs about twice as much. `scratch` holds n W c bytes. O(n W c)."""
    stream = rows.reshape(-1)
    size = len(stream)
    np.maximum(stream[:-1], stream[1:], out=scratch[: size - 1])
    np.maximum(scratch[: size - 2], stream[2:], out=scratch[: size - 2])
    out[...] = scratch.reshape(out.shape[0], -1, c)[..., 0]


def tolerances(maps: PixelMaps) -> Tolerances:
    """Step 2: tolerances scaled to the measured noise (clean PNG vs JPEG vs scan)."""
    n = int(np.count_nonzero(maps.opaque))
    return Tolerances(
        point=max(2.0, 0.6 * maps.noise),
        rgb=max(6.0, 1.5 * maps.noise),
        mix=max(8.0, 1.5 * maps.noise),
        split=0.0 if maps.noise < 2.0 else 0.5,
        # Small images: a colour needs 12 px or 0.04 % of the image, but at most 1 %.
        min_area=min(max(12.0, 4e-4 * n), max(1.0, 0.01 * n)),
    )


@attrs.frozen(eq=False)
class Histogram:
    """Opaque pixels binned by colour; each bin keeps its mean colour and flat/edge counts."""

    rgb: FloatArray  # (B, 3) mean sRGB of the bin
    lab: FloatArray  # (B, 3) its CIELAB
    flat: FloatArray  # (B,) flat pixels
    edge: FloatArray  # (B,) other opaque pixels


@attrs.frozen(eq=False)
class Colours:
    """The distinct colours of the opaque pixels, shared by the steps that work per colour
    rather than per pixel (flat art has a few hundred distinct colours in 10^5-10^6 pixels).

    The per-pixel facts cover the whole raster, -1 for the pixels left out (alpha < 128),
    so a map per pixel is one fill of the runs, never a masked scatter into a fresh map,
    and a pixel's colour is one look-up, never a search by its key.
    """

    keys: IntArray  # (U,) sorted 24-bit keys (r << 16 | g << 8 | b)
    rgb: npt.NDArray[np.int64]  # (U, 3) the colours
    # (N,) each pixel's colour in raster order, -1 where not opaque: int16 under 2^15
    # colours (flat art's few hundred; half the fresh memory of int32), else int32.
    inverse: npt.NDArray[np.signedinteger[Any]]
    count: npt.NDArray[np.int64]  # (U,) opaque pixels of each colour
    flat: npt.NDArray[np.int64]  # (U,) flat pixels of each colour
    everything: bool  # every pixel is opaque (no -1 in `inverse`)
    run_colour: IntArray  # (R,) the colour of each run of equal values in `inverse`, or -1
    run_length: npt.NDArray[np.int64]  # (R,) and its length

    def spread(self, values: npt.NDArray[Any], fill: Any = 0) -> npt.NDArray[Any]:
        """A per-colour value for each pixel (raster order, (N,)), `fill` where not
        opaque, repeated run by run: O(R) look-ups and one fill, much cheaper than
        indexing by `inverse` pixel by pixel."""
        if not self.everything:
            # Index -1 (a run left out) reads the appended `fill`.
            values = np.append(values, np.asarray(fill, dtype=values.dtype))
        return np.repeat(values[self.run_colour], self.run_length)

    def of_pixels(
        self, rows: npt.NDArray[np.uint8], at: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64]:
        """The colour index of the opaque pixels `at` (flat indices into the image's pixel
        rows, `pixel_rows`, of the image these colours were found in). O(len(at))."""
        found: npt.NDArray[np.int64] = self.inverse[at].astype(np.int64)
        return found

    def per_pixel(
        self, shape: tuple[int, int], opaque: BoolArray
    ) -> npt.NDArray[np.signedinteger[Any]]:
        """Each pixel's colour index as an (H, W) map, -1 where not opaque (the type of
        `inverse`). O(1): a view."""
        return self.inverse.reshape(shape)


def distinct_colours(
    rgb: npt.NDArray[np.uint8],
    maps: PixelMaps,
    row_changes: npt.NDArray[np.int64] | None = None,
) -> Colours:
    """Step 2b: the distinct colours of the opaque pixels with their pixel and flat counts.
    The pixels left out take the key -1, which sorts before every colour and is dropped
    after the runs are found, so the colours keep the indices of the opaque pixels' sorted
    keys. `row_changes`, when the caller has them for this very image
    (`pixel_grid.RowChanges`), lists the pixels whose four bytes differ from the pixel
    before them in their row: the runs are then found from those alone
    (`_colour_runs_at`), with no key per pixel. Cost: O(N) plus a sort of the colour runs
    (see `_colour_runs`); the counts are summed per run, not per pixel."""
    everything = bool(maps.opaque.all())
    if row_changes is not None and rgb.shape[-1] == 4 and rgb.flags.c_contiguous:
        runs = _colour_runs_at(rgb, row_changes)
    else:
        keys = colour_keys(rgb).reshape(-1)  # a fresh array: marked in place below
        if not everything:
            np.copyto(keys, -1, where=~maps.opaque.reshape(-1))
        runs = _colour_runs(keys)
        del keys
    index, uniq = runs.index, runs.uniq
    taken: npt.NDArray[np.bool_] | slice = slice(None)
    if not everything:
        index -= 1
        uniq = uniq[1:]
        taken = index >= 0
    u = len(uniq)
    count = np.bincount(index[taken], runs.lengths[taken], minlength=u).astype(np.int64)
    if len(runs.heads):
        flat_px = maps.flat.reshape(-1).view(np.uint8)
        # Summed in 32 bits (a run is at most the image, far under 2^31 pixels within the
        # decode limits): `reduceat` converts the whole mask to its sum type first, and
        # 4 bytes a pixel is half the fresh memory of 8.
        flat_runs = np.add.reduceat(flat_px, runs.heads, dtype=np.int32).astype(np.int64)
    else:
        flat_runs = np.zeros(0, dtype=np.int64)
    flat = np.bincount(index[taken], flat_runs[taken], minlength=u).astype(np.int64)
    ucol = np.stack([(uniq >> 16) & 255, (uniq >> 8) & 255, uniq & 255], axis=1).astype(np.int64)
    # The per-pixel map in the narrowest type that holds every index and -1.
    narrow: npt.NDArray[np.signedinteger[Any]] = index.astype(np.int16) if u < 1 << 15 else index
    inv: npt.NDArray[np.signedinteger[Any]] = np.repeat(narrow, runs.lengths)
    return Colours(
        keys=uniq,
        rgb=ucol,
        inverse=inv,
        count=count,
        flat=flat,
        everything=everything,
        run_colour=index,
        run_length=runs.lengths,
    )


def colour_histogram(
    rgb: npt.NDArray[np.uint8], maps: PixelMaps, colours: Colours | None = None
) -> Histogram:
    """Step 3: the weighted colour cloud the palette is fitted to. Cost: O(U log U) over the
    U distinct colours (plus `distinct_colours` when not given): the used bins are found
    by sorting the colours' bin keys, not by counting into all 2^18 bins."""
    if colours is None:
        colours = distinct_colours(rgb, maps)
    q = colours.rgb >> _SHIFT
    key = (q[:, 0] << (2 * _BITS)) | (q[:, 1] << _BITS) | q[:, 2]
    _, inv = np.unique(key, return_inverse=True)
    bins = int(inv.max(initial=-1)) + 1
    total = np.bincount(inv, colours.count, minlength=bins).astype(np.float64)
    flat = np.bincount(inv, colours.flat, minlength=bins).astype(np.float64)
    mean = (
        np.stack(
            [np.bincount(inv, colours.rgb[:, c] * colours.count, minlength=bins) for c in range(3)],
            axis=1,
        )
        / total[:, None]
    )
    return Histogram(rgb=mean, lab=srgb_to_lab(mean), flat=flat, edge=total - flat)


#: How far past either end a mixture may overshoot (Lanczos and JPEG ringing), as a fraction.
OVERSHOOT = 0.25
#: RGB -> YCbCr (JPEG), linear, so mixtures stay straight lines in it.
_YCC = np.array([[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]])


def segment_residual(
    px: FloatArray, c1: FloatArray, c2: FloatArray, split: float = 0.0
) -> tuple[FloatArray, FloatArray]:
    """How far each pixel is from being a mixture of c1 and c2, and its position t (0 at c1).

    A mixture is c1 + a*(c2 - c1) in sRGB, and may overshoot past either end by `OVERSHOOT`
    (Lanczos and JPEG ringing). With `split` > 0, luma and chroma may mix by amounts up to
    `split` apart: JPEG subsamples and blurs chroma, so its edges are sharp in luma but smeared
    in colour. Clean renders get `split` = 0, an exact mixture, so that a dark colour near the
    segment between two others is not mistaken for their mixture. Distances are in YCbCr
    units (sRGB scale). `t` is the luma amount, or the chroma one when both colours have
    nearly the same luma.
    """
    p = (px - c1) @ _YCC.T
    d = (c2 - c1) @ _YCC.T
    lo, hi = -OVERSHOOT, 1.0 + OVERSHOOT
    dy = d[..., 0]
    dc = d[..., 1:]
    dc2 = (dc * dc).sum(axis=-1)
    luma_led = np.abs(dy) >= 0.25 * np.sqrt(dc2)
    joint = np.clip((p * d).sum(axis=-1) / np.maximum(dy * dy + dc2, 1e-9), lo, hi)
    if split > 0:
        ty = np.clip(p[..., 0] * dy / np.maximum(dy * dy, 1e-9), lo, hi)
        tc = np.clip((p[..., 1:] * dc).sum(axis=-1) / np.maximum(dc2, 1e-9), lo, hi)
        # The led component sets t; the other may differ from it by at most `split`.
        t = np.where(luma_led, ty, tc)
        ty = np.where(luma_led, ty, np.clip(ty, t - split, t + split))
        tc = np.where(luma_led, np.clip(tc, t - split, t + split), tc)
    else:
        t = ty = tc = joint
    ry = p[..., 0] - ty * dy
    rc = p[..., 1:] - tc[..., None] * dc
    res = np.sqrt(ry * ry + (rc * rc).sum(axis=-1))
    return res, t


def _candidates(hist: Histogram, tol: Tolerances, limit: int, tree: Any = None) -> FloatArray:
    """Colour candidates: bins that are local peaks of the flat-pixel density. `tree` is a
    `PointSet` of `hist.lab` when the caller has one. Cost: O(B log B)."""
    if tree is None:
        tree = PointSet(hist.lab)
    if (
        RADIUS_POINTS < len(hist.lab) <= DENSE_BINS
        and hist.flat.sum() + hist.edge.sum() > LARGE_PHOTO_PIXELS
    ):
        # A photo at print size: most of its tens of thousands of bins are ruled out by a
        # grid neighbour (smaller clouds are sparse enough for the pair query).
        return _dense_candidates(hist, tol, limit, tree)
    w = hist.flat + 0.25 * hist.edge
    # A candidate is a bin holding more weight than every bin within `point` of it: the modes
    # of the colour cloud. Unsmoothed, so two close flat colours stay two peaks.
    pairs = tree.query_pairs(tol.point, output_type="ndarray")
    neighbour_max = np.zeros_like(w)
    if len(pairs):
        np.maximum.at(neighbour_max, pairs[:, 0], w[pairs[:, 1]])
        np.maximum.at(neighbour_max, pairs[:, 1], w[pairs[:, 0]])
    peak = w >= neighbour_max
    idx = np.flatnonzero(peak & (w > 0))
    idx = idx[np.argsort(-w[idx], kind="stable")][:limit]
    # The peak bin's own mean colour: a neighbourhood mean would blend close colours.
    out: FloatArray = hist.rgb[idx]
    return out


#: The bin cells (as (dr, dg, db) steps of the histogram grid) whose bins may rule a bin
#: out as a peak before the exact test: the 26 cells around it.
_CELL_STEPS = np.array(
    [(dr, dg, db) for dr in (-1, 0, 1) for dg in (-1, 0, 1) for db in (-1, 0, 1) if dr or dg or db]
)
#: Up to this many bins (a quarter of the histogram's cells) `_dense_candidates` finds the
#: peaks: a photo's cloud is dense in a few places (the nine 3 MP photos of
#: `bench/photo_scale.py`: 6 900 to 40 500 bins, one in 12 or fewer left for the exact
#: test). Past it the colours fill the cube evenly (uniform noise: 262 000 bins, one in
#: seven left) and the pair query costs less (0.25 s against 0.37).
DENSE_BINS = 1 << 16
#: A neighbour rules a bin out only when it is this much inside the radius (relative, on
#: squared distances): a pair on the radius itself is left to the exact test.
_INSIDE = 1.0 - 1e-9


def _dense_candidates(hist: Histogram, tol: Tolerances, limit: int, tree: Any) -> FloatArray:
    """`_candidates` for a histogram of thousands of bins (photos, scans at print size), the
    same peaks in the same order without pairing every bin with every bin near it: a
    photo's dense cloud holds millions of such pairs (Grace Hopper at 3 MP: 40 000 bins,
    two thirds of a second).

    1. Ruled out: a bin with a heavier bin in one of the 26 grid cells around its own,
       within the radius (measured exactly, with a relative margin of `_INSIDE` so that
       no rounding can rule out a bin the pair query would keep). It is no peak.
    2. The rest (a few thousand: the peaks, and light bins alone in sparse parts of the
       cloud) get the exact test, a ball query each against every bin, as the pair
       query would have measured them.
    Cost: O(26 B) gathers plus the ball queries of the bins left."""
    w = hist.flat + 0.25 * hist.edge
    lab = hist.lab
    size = 1 << _BITS
    # Every colour of a bin lies in its cell, so their mean does too.
    cell = np.floor(hist.rgb / (1 << _SHIFT)).astype(np.int64)
    np.clip(cell, 0, size - 1, out=cell)
    key = (cell[:, 0] * size + cell[:, 1]) * size + cell[:, 2]
    table = np.full(size**3, -1, dtype=np.int32)
    table[key] = np.arange(len(key), dtype=np.int32)
    # The bins still open (a bin of no weight is never a candidate): each step looks
    # only at these, so the later steps gather from a fraction of the bins.
    left = np.flatnonzero(w > 0)
    reach = tol.point * tol.point * _INSIDE
    for step in _CELL_STEPS:
        around = cell[left] + step
        inside = ((around >= 0) & (around < size)).all(axis=1)
        other = np.full(len(left), -1, dtype=np.int32)
        other[inside] = table[
            (around[inside, 0] * size + around[inside, 1]) * size + around[inside, 2]
        ]
        rows = np.flatnonzero(other >= 0)
        heavier = w[other[rows]] > w[left[rows]]
        rows = rows[heavier]
        off = lab[left[rows]] - lab[other[rows]]
        close = (off * off).sum(axis=1) <= reach
        if close.any():
            keep = np.ones(len(left), dtype=bool)
            keep[rows[close]] = False
            left = left[keep]
    row, hit = tree.ball_pairs(lab[left], tol.point)
    neighbour_max = np.zeros(len(left))
    np.maximum.at(neighbour_max, row, w[hit])
    idx = left[w[left] >= neighbour_max]
    idx = idx[np.argsort(-w[idx], kind="stable")][:limit]
    out: FloatArray = hist.rgb[idx]
    return out


def _within(
    hist: Histogram,
    cols: FloatArray,
    cols_lab: FloatArray,
    tol: Tolerances,
    trees: tuple[Any, Any] | None = None,
) -> Any:
    """Sparse (colours x bins) matrix: bin within `tol` of the colour (CIELAB or sRGB).

    `trees` are `PointSet`s of `hist.lab` and `hist.rgb` when the caller has them. The ball
    queries come flat (`PointSet.ball_pairs`), with no list of arrays per colour. Cost:
    O(C log B + hits).
    """
    if trees is None:
        trees = (PointSet(hist.lab), PointSet(hist.rgb))
    rows: list[npt.NDArray[np.int64]] = []
    hits: list[npt.NDArray[np.int64]] = []
    for tree, pts, radius in ((trees[0], cols_lab, tol.point), (trees[1], cols, tol.rgb)):
        row, hit = tree.ball_pairs(pts, radius)
        rows.append(row)
        hits.append(hit)
    r = np.concatenate(rows)
    c = np.concatenate(hits)
    return Incidence(r, c, (len(cols), len(hist.rgb)))  # a bin in both balls counts once


def _judge(
    hist: Histogram,
    tree: Any,
    colour: FloatArray,
    chosen: FloatArray,
    hits: npt.NDArray[np.int64],
    gain: float,
    tol: Tolerances,
) -> str:
    """Whether a candidate is a "colour", JPEG/scan "noise" of a chosen colour, or "ringing".

    Noise: the flat pixels form one continuous cloud from a chosen colour to the candidate
    (no valley in between), as a noisy flat area does; two distinct flat colours, however
    close, have almost no flat pixels between them. Ringing: a candidate seen almost only on
    edges whose pixels are spread out rather than one exact colour (a pure thin stroke is
    exact; ringing and chroma bleeding are not). Cost: a few ball queries.
    """

    def density(point: FloatArray, radius: float) -> float:
        return float(hist.flat[tree.query_ball_point(point, radius)].sum())

    reach = max(VALLEY_RANGE, 2.0 * tol.rgb)
    # Only chosen colours roughly within reach are measured exactly (most are far).
    off = chosen - colour
    close = (off * off).sum(axis=1) <= (reach * (1 + 1e-9)) ** 2
    for other in chosen[close]:
        d = float(np.linalg.norm(colour - other))
        if d > reach:
            continue
        r = max(3.0, d / 6.0)
        own = density(colour, r)
        if own == 0:
            return "noise"  # edge-only and this close to a colour: a ringing satellite
        ends = min(density(other, r), own)
        path = min(density(other + s * (colour - other), r) for s in (0.25, 0.5, 0.75))
        if ends > 0 and path >= 0.5 * ends:
            return "noise"
    if FLAT_EVIDENCE * hist.flat[hits].sum() < 0.5 * gain:
        exact = hist.flat + hist.edge
        core = float(exact[tree.query_ball_point(colour, 2.0)].sum())
        if core < 0.5 * gain and _may_ring(colour, chosen, tol):
            return "ringing"
    return "colour"


def _may_ring(colour: FloatArray, chosen: FloatArray, tol: Tolerances) -> bool:
    """Whether an edge-only candidate can be ringing of the chosen colours: within ringing
    reach of one of them, or the overshoot of a mixture of two. Thin strokes and small
    text in noisy input (JPEG, scans) are edge-only too, but their ink lies far from both
    (black text on yellow is no overshoot of yellow and white). Cost: O(K^2)."""
    if len(chosen) == 0:
        return True
    off = chosen - colour
    if float(np.sqrt((off * off).sum(axis=1)).min()) <= 2.0 * RINGING_REACH * tol.mix:
        return True
    if len(chosen) < 2:
        return False
    first, second = np.triu_indices(len(chosen), 1)
    res, _ = segment_residual(colour[None, :], chosen[first], chosen[second], tol.split)
    return bool((res < tol.mix).any())


def greedy_palette(hist: Histogram, tol: Tolerances, cap: int) -> tuple[FloatArray, bool]:
    """Step 4: pick colours by explained area until the rest is noise or `cap` is reached.

    Returns the palette (sRGB, most important first) and whether it stopped because the image
    was explained (False means it hit `cap` with significant area left: photo, gradient).
    Cost: O(C * B) for the coverage matrix plus O(K * U * K) for the mixture updates.
    """
    # Both trees are built once and shared by the candidate, coverage and noise tests.
    lab_tree = PointSet(hist.lab)
    flat_tree = PointSet(hist.rgb)
    cands = _candidates(hist, tol, limit=max(4 * cap, 256), tree=lab_tree)
    cand_lab = srgb_to_lab(cands)
    cover = _within(hist, cands, cand_lab, tol, (lab_tree, flat_tree))
    bin_ycc = hist.rgb @ _YCC.T
    cand_ycc = cands @ _YCC.T
    # Flat pixels are strong evidence of a colour; edge pixels only count when no mixture
    # explains them.
    flat_w = FLAT_EVIDENCE * hist.flat
    flat_open = hist.flat > 0
    edge_open = hist.edge > 0
    chosen: list[int] = []
    available = np.ones(len(cands), dtype=bool)
    while len(chosen) < cap and available.any():
        gain = cover @ (np.where(flat_open, flat_w, 0.0) + np.where(edge_open, hist.edge, 0.0))
        gain[~available] = -1.0
        best = int(np.argmax(gain)) if len(gain) else -1
        if best < 0 or (chosen and gain[best] < tol.min_area) or gain[best] <= 0:
            break
        available[best] = False
        hits = cover.indices[cover.indptr[best] : cover.indptr[best + 1]]
        verdict = _judge(hist, flat_tree, cands[best], cands[chosen], hits, gain[best], tol)
        if verdict == "noise":
            flat_open[hits] = False
            edge_open[hits] = False
            continue
        if verdict == "ringing":
            edge_open[hits] = False
            continue
        chosen.append(best)
        flat_open[hits] = False
        edge_open[hits] = False
        # Edge pixels between the new colour and any earlier one are mixtures, not colours.
        todo = np.flatnonzero(edge_open)
        if todo.size and len(chosen) > 1:
            near = _near_segments(bin_ycc[todo], cand_ycc[best], cand_ycc[chosen[:-1]], tol.mix)
            todo = todo[near]
        if todo.size and len(chosen) > 1:
            px = hist.rgb[todo][:, None, :]
            res, _ = segment_residual(
                px, cands[best][None, None, :], cands[chosen[:-1]][None], tol.split
            )
            edge_open[todo[(res < tol.mix).any(axis=1)]] = False
    left = float(hist.flat[flat_open].sum() + hist.edge[edge_open].sum())
    weight = hist.flat + hist.edge
    return cands[chosen], left < max(tol.min_area, UNEXPLAINED * weight.sum())


def _near_segments(
    px_ycc: FloatArray, c1_ycc: FloatArray, others_ycc: FloatArray, reach: float
) -> BoolArray:
    """Which colours (YCbCr rows) may lie within `reach` of a mixture of `c1` and one of
    `others`, as `segment_residual` measures it: a cheap bound that lets the exact test
    skip the rest. Every mixture it accepts, split or not, has its luma and chroma amounts
    in [-OVERSHOOT, 1 + OVERSHOOT], so it lies in the box those amounts span along each
    YCbCr axis, and the residual is at least the distance to that box. The margin covers
    rounding (these YCbCr values are computed once, not per pair). Cost: O(M K).
    """
    p = px_ycc - c1_ycc
    d = others_ycc - c1_ycc
    lo = np.minimum(-OVERSHOOT * d, (1.0 + OVERSHOOT) * d)
    hi = np.maximum(-OVERSHOOT * d, (1.0 + OVERSHOOT) * d)
    gap = np.zeros((len(p), len(d)))
    for c in range(3):
        below = lo[None, :, c] - p[:, None, c]
        above = p[:, None, c] - hi[None, :, c]
        out = np.maximum(np.maximum(below, above), 0.0)
        gap += out * out
    near: BoolArray = np.any(gap < (reach + 1e-6) ** 2, axis=1)
    return near


def _no_tick() -> None:
    return None


def refine_palette(
    hist: Histogram,
    palette: FloatArray,
    k: int,
    iterations: int = 8,
    tick: Callable[[], None] = _no_tick,
) -> FloatArray:
    """Step 5 (count not explained by flat colours): weighted k-means on the histogram.

    Starts from the greedy palette, topped up to `k` by farthest-bin seeding; edge bins weigh
    a quarter so anti-aliasing does not pull centres. `tick` is called between units of
    work (every `SEEDS_PER_CHECK` seeds and every iteration): a cancel check, since
    `colors=1000` on noise seeds about 940 colours over a million bins.
    Cost: O(K * B) for the seeding plus O(iterations * B log K).
    """
    w = hist.flat + 0.25 * hist.edge
    centres = srgb_to_lab(palette) if len(palette) else hist.lab[[int(np.argmax(w))]]
    want = min(k, len(hist.lab))
    if len(centres) < want:
        d, _ = PointSet(centres).query(hist.lab)
        extra = []
        for seeded in range(want - len(centres)):
            if seeded % SEEDS_PER_CHECK == SEEDS_PER_CHECK - 1:
                tick()
            pick = int(np.argmax(w * d * d))
            extra.append(pick)
            np.minimum(d, np.linalg.norm(hist.lab - hist.lab[pick], axis=1), out=d)
        centres = np.vstack([centres, hist.lab[extra]])
    for _ in range(iterations):
        tick()
        _, lab_idx = PointSet(centres).query(hist.lab)
        mass = np.bincount(lab_idx, w, minlength=len(centres))
        for c in range(3):
            s = np.bincount(lab_idx, w * hist.lab[:, c], minlength=len(centres))
            centres[:, c] = np.where(mass > 0, s / np.maximum(mass, 1e-12), centres[:, c])
    return lab_to_srgb(centres)


def find_palette(
    rgb: npt.NDArray[np.uint8],
    maps: PixelMaps,
    colors: int | None,
    colours: Colours | None = None,
    tick: Callable[[], None] = _no_tick,
    on_bands: Callable[[int], None] | None = None,
    tol: Tolerances | None = None,
    on_inks: Callable[[FloatArray], None] | None = None,
    on_lines: Callable[[own_inks.Found], None] | None = None,
    on_sources: Callable[[], None] | None = None,
) -> FloatArray:
    """Steps 3-5: the palette for `colors` (exact when given, fewest faithful when None).
    `tick` is a cancel check, called between units of the k-means (`refine_palette`).
    `on_bands` hears, for smooth shaded art, how many flat colours lead the palette before
    its band colours (`shading`). `on_inks` hears the colours added as inks of their own
    (`own_inks`), which are no anti-aliasing tints; `on_lines` the greys drawn only as
    1-px lines of their own, which stay out of the palette returned (only their lines'
    pixels take them); `on_sources` hears that a large field of faint sources
    (`_photo_palette`) was given its colours, a photo's whether dense or not. `tol`,
    `tolerances(maps)` when the caller has it."""
    if tol is None:
        tol = tolerances(maps)
    hist = colour_histogram(rgb, maps, colours)
    if len(hist.rgb) == 0:
        return np.zeros((0, 3))
    palette, explained = greedy_palette(hist, tol, min(max(colors or 0, AUTO_CAP), GREEDY_MAX))
    total = float(hist.flat.sum() + hist.edge.sum())
    off = colour_count.off_palette_share(hist.rgb, hist.lab, hist.flat, total, palette, tol.rgb)
    shaded = off >= colour_count.SHADED_SHARE
    ramps = False
    if colors is None and not shaded:
        # A steep gradient has hardly a flat pixel for `off` to see.
        shaded = ramps = colour_count.smooth_ramps(rgb)
    if max(maps.noise, maps.grain) >= colour_count.CLEAN_NOISE:
        # Speckled ink on paper: its two colours, whether counted or asked for (the paper's
        # grain and uneven light may have passed for flat colours of their own).
        mix = max(tol.mix, 1.5 * maps.grain)
        pair = colour_count.two_tone(hist.rgb, hist.flat, hist.edge, mix, palette)
        if pair is not None:
            return pair[: max(colors or 2, 1)]
    if explained and colors is None and not shaded and _faint_sources(rgb, maps, colours, palette):
        # A dark field of many faint sources: each is a mixture of the flat colours, as a
        # logo's anti-aliasing is, but a patch of its own away from every edge (a photo).
        if on_sources is not None and _large(hist):
            on_sources()
        return _photo_palette(hist, palette, tick, sources=True)
    if explained and (colors is not None or not shaded):
        if colours is not None and maps.noise < colour_count.CLEAN_NOISE:
            # Clean flat art: strokes drawn in a colour between two of the palette's.
            found = own_inks.find(rgb, colours, palette, tol.rgb, tol.mix)
            inks = found.inks
            if len(found.lines) and on_lines is not None:
                on_lines(found)
            if len(inks):
                palette = np.vstack([palette, inks])
                if on_inks is not None:
                    on_inks(inks)
        if colors is None or len(palette) <= colors:
            return palette
        return reduce_palette(hist, palette, colors)
    if colors is not None:
        return refine_palette(hist, palette[:colors], colors, tick=tick)
    if shaded:
        # A gradient is smooth, under JPEG noise too (`colour_count.jpeg_ramps`).
        if (
            ramps
            or colour_count.roughness(rgb) < colour_count.SMOOTH_ROUGHNESS
            or colour_count.jpeg_ramps(rgb)
        ):
            if on_bands is not None:
                on_bands(len(palette))
            return _band_palette(hist, palette, tick)
        return _photo_palette(hist, palette, tick)
    # Unexplained edges but no shading: the fewest of 4, 8, 16, 32 colours that render it
    # faithfully.
    w = hist.flat + hist.edge
    for k in (4, 8, 16, AUTO_CAP):
        refined = refine_palette(hist, palette[:k], k, tick=tick)
        _, d = nearest(hist.lab, srgb_to_lab(refined))
        if float((d * w).sum() / w.sum()) <= FIDELITY:
            break
    return refined


def _faint_sources(
    rgb: npt.NDArray[np.uint8], maps: PixelMaps, colours: Colours | None, palette: FloatArray
) -> bool:
    """Whether noisy input that the flat `palette` explains is a field of many faint
    sources (`faint_sources`). Clean renders and mildly noisy JPEGs (noise under
    `colour_count.PHOTO_NOISE`) are flat art without asking. Cost: `faint_sources.many`,
    plus `distinct_colours` when not given."""
    if maps.noise < colour_count.PHOTO_NOISE:
        return False
    colours = colours if colours is not None else distinct_colours(rgb, maps)
    shape = maps.opaque.shape
    return faint_sources.many(
        shape,
        maps.opaque,
        colours.per_pixel(shape, maps.opaque),
        srgb_to_lab(colours.rgb.astype(np.float64)),
        palette,
    )


def _band_palette(
    hist: Histogram, palette: FloatArray, tick: Callable[[], None] = _no_tick
) -> FloatArray:
    """Smooth shading (a gradient, shaded art): the flat colours stay exactly and band
    colours are added until every flat pixel is within `colour_count.BAND_REACH` of a
    colour. Only flat pixels place them: edge pixels of clean art are anti-aliasing between
    two colours, and a colour placed on them would eat thin outlines.
    Cost: `colour_count.grow_palette`."""
    return colour_count.grow_palette(
        hist.lab,
        hist.flat,
        palette,
        len(palette),
        colour_count.band_faithful(hist.flat),
        max(colour_count.SHADED_MAX, len(palette)),
        tick,
    )


def _photo_palette(
    hist: Histogram,
    palette: FloatArray,
    tick: Callable[[], None] = _no_tick,
    sources: bool = False,
) -> FloatArray:
    """Automatic colours for a photo (`colour_count`): its colours all move, as many as its
    fidelity needs. A field of faint `sources` (`faint_sources`) is mostly flat sky that
    one colour serves, so its mean error over all pixels is met while every source is
    still drawn in sky, star and one galaxy colour: its colours are placed on, and its
    fidelity measured on, the pixels that are not flat (the sources; the Hubble deep
    field: 7 colours at ΔE2000 2.48 and its blue and orange galaxies pink-white, 16 colours
    at 2.38 with their hues). A photo at print size (over `LARGE_PHOTO_PIXELS`) stops at
    `LARGE_PHOTO_COLOURS` (a field of sources at `LARGE_SOURCES_COLOURS`), so its segments
    stay within the cap in one trace. A large field of sources seeds its new colours only
    where the error is visible (`SOURCES_SERVED`): else its capped colours go to the
    noise of its sky (the Hubble deep field at 3 MP: 10 of 16 colours within ΔE 2 of
    black, its galaxies' cores and rings drawn in one pale grey-blue and two browns).
    Such a palette is not dense, but it is a photo's (`segmentation.segment` is told by
    `find_palette`'s `on_sources`). Cost: `colour_count.grow_palette`."""
    if sources:
        weight = hist.flat + hist.edge
        photo = colour_count.photo_faithful(hist.edge)
    else:
        weight = hist.flat + 0.25 * hist.edge
        photo = colour_count.photo_faithful(hist.flat + hist.edge)
    large = _large(hist)
    cap = LARGE_SOURCES_COLOURS if sources else LARGE_PHOTO_COLOURS
    return colour_count.grow_palette(
        hist.lab,
        weight,
        palette,
        0,
        photo,
        cap=cap if large else colour_count.AUTO_MAX,
        tick=tick,
        growth=colour_count.PHOTO_GROWTH,
        dense=True,
        served=SOURCES_SERVED if sources and large else 0.0,
    )


def _large(hist: Histogram) -> bool:
    """Whether the histogram's image is a photo at print size (`LARGE_PHOTO_PIXELS`).
    O(B)."""
    return float(hist.flat.sum() + hist.edge.sum()) > LARGE_PHOTO_PIXELS


def reduce_palette(hist: Histogram, palette: FloatArray, k: int) -> FloatArray:
    """Step 5 (flat art, fewer colours asked for): keep the `k` artwork colours that matter
    most to the eye (`palette_choice`), so merged colours become one of the artwork's own
    colours rather than a muddy average, and dark outlines and text ink stay. Cost: O(B log
    K) plus O(K^2 k) for K found colours."""
    return palette_choice.keep_most_visible(hist.lab, hist.flat, hist.edge, palette, k)


def nearest(
    lab: FloatArray, palette_lab: FloatArray, chunk: int = 1 << 18
) -> tuple[IntArray, FloatArray]:
    """Nearest palette colour for each CIELAB row, and its distance. Cost: O(N K) or O(N log K)."""
    if len(palette_lab) > 24:
        d, found = PointSet(palette_lab).query(lab, workers=2)
        return found.astype(np.int32), d
    idx = np.empty(len(lab), dtype=np.int32)
    dist = np.empty(len(lab))
    for s in range(0, len(lab), chunk):
        block = lab[s : s + chunk]
        d2 = ((block[:, None, :] - palette_lab[None, :, :]) ** 2).sum(axis=-1)
        i = np.argmin(d2, axis=1)
        idx[s : s + chunk] = i
        dist[s : s + chunk] = np.sqrt(d2[np.arange(len(i)), i])
    return idx, dist


#: Offsets (dy, dx) searched for region interiors around an edge pixel: rings 1..3.
_OFFSETS = [
    (dy * r, dx * r) for r in (1, 2, 3) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx
]
_CHUNK = 1 << 17
#: Largest table of distances per distinct colour `_unmix_edges` makes whenever it has
#: fewer rows than the pixels (float32 entries, 16 MB) ...
SMALL_TABLE_ENTRIES = 1 << 22
#: ... and when it has at most half as many rows (64 MB): a 3 MP photo of 48 colours has
#: about 200,000 distinct colours at its 600,000 edge pixels near interiors, and a table
#: of them (9.5 million entries) costs less than the distances of every such pixel
#: (0.37 -> 0.28 s).
TABLE_ENTRIES = 1 << 24
#: Up to this many colours, edge unmixing looks distances up in a table of every palette
#: colour per pixel or distinct colour (K + 1 floats) instead of computing the 24
#: candidates' distances from gathered palette rows: cheaper, and the same float32 values.
TABLE_COLOURS = 64
#: Up to this many colours, `_nearest_may_differ` first picks the edge pixels whose label
#: may change (most keep theirs), from bitmasks of the interior colours around them.
MASK_COLOURS = 16


def colour_keys(rgb: npt.NDArray[np.uint8]) -> IntArray:
    """24-bit key per pixel (r << 16 | g << 8 | b) of a uint8 (..., 3) or (..., 4) image."""
    if rgb.shape[-1] == 4 and rgb.flags.c_contiguous:
        # Each RGBA pixel read as one big-endian 32-bit word: the key is its top 24 bits.
        # Two whole-array operations instead of three casts, two shifts and two ORs.
        # The shift leaves 24 bits, so the words read as int32 unchanged (no copy).
        words: IntArray = (rgb.view(">u4")[..., 0] >> 8).view(np.int32)
        return words
    key = rgb[..., 0].astype(np.int32) << 16
    key |= rgb[..., 1].astype(np.int32) << 8
    key |= rgb[..., 2]
    return key


@attrs.frozen(eq=False)
class _Runs:
    """Runs of equal keys: where each starts, its length, and its key's index in `uniq`."""

    heads: npt.NDArray[np.int64]
    lengths: npt.NDArray[np.int64]
    index: IntArray
    uniq: IntArray


def _colour_runs(keys: IntArray) -> _Runs:
    """Runs of equal keys and the sorted distinct keys.

    Runs of equal keys (flat art is mostly long runs along each row) are collapsed first,
    so only the run heads are sorted. Cost: O(N) plus O(R log R) for R runs (R << N for
    flat art, R ~ N for photos).
    """
    n = len(keys)
    change = np.empty(n, dtype=bool)
    change[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=change[1:])
    heads = np.flatnonzero(change)
    uniq, index = _unique_keys(keys[heads])
    lengths = np.diff(np.append(heads, n))
    return _Runs(heads=heads, lengths=lengths, index=index, uniq=uniq)


def _colour_runs_at(rgba: npt.NDArray[np.uint8], row_changes: npt.NDArray[np.int64]) -> _Runs:
    """`_colour_runs` of the keys of a contiguous RGBA image (-1 where alpha < 128), from
    the pixels whose four bytes differ from the pixel before them in their row
    (`row_changes`, ascending). Two neighbours whose keys differ differ in their bytes:
    in colour when both are opaque, in alpha (either side of 128) when one is. So a run
    starts only at a listed pixel or at a row's first, and does where its key differs
    from the key before it: those keys are read from the two pixels' words alone.
    Cost: O(C) for the C candidates (the listed pixels and the row starts) plus the sort
    of `_colour_runs`, no whole-image pass."""
    h, w = rgba.shape[:2]
    n = h * w
    starts = np.arange(0, n, max(w, 1), dtype=np.int64)
    # The row starts slotted in among the listed pixels, keeping the order.
    cand = np.insert(row_changes, np.searchsorted(row_changes, starts), starts)
    # Big-endian words: the key is the top 24 bits, alpha the low byte (-1 below 128).
    words = rgba.reshape(-1, 4).view(">u4")[:, 0]
    here = words.take(cand)
    before = words.take(np.maximum(cand - 1, 0))
    key_here = np.where((here & 0xFF) >= 128, (here >> 8).astype(np.int32), np.int32(-1))
    key_before = np.where((before & 0xFF) >= 128, (before >> 8).astype(np.int32), np.int32(-1))
    head = key_here != key_before
    head[:1] = True  # the image's first pixel (always a candidate) starts the first run
    heads = cand[head]
    uniq, index = _unique_keys(key_here[head])
    lengths = np.diff(np.append(heads, n))
    return _Runs(heads=heads, lengths=lengths, index=index, uniq=uniq)


#: Past this many run keys (a photo of over 1 MP: a 512-px image has at most 262,144
#: pixels, so flat art never comes here) the distinct keys are found in a table of every
#: 24-bit key (`dense_unique`) instead of by sorting: Grace Hopper at 3 MP (2.5 million
#: runs, 259,000 colours) `distinct_colours` 0.17 s → 0.11 s.
TABLE_KEYS = 1 << 20


def _unique_keys(keys: IntArray) -> tuple[IntArray, IntArray]:
    """`np.unique(keys, return_inverse=True)` of colour keys (24-bit, or -1 for a pixel
    left out), both as int32: up to `TABLE_KEYS` keys by sorting, O(K log K), past it by
    `dense_unique` over key + 1, O(K + 2^24)."""
    if len(keys) <= TABLE_KEYS:
        uniq, inverse = np.unique(keys, return_inverse=True)
        return uniq.astype(np.int32), inverse.astype(np.int32)
    slots, index = dense_unique(keys + np.int32(1), (1 << 24) + 1)
    slots -= 1
    return slots.astype(np.int32), index


def dense_unique(
    values: npt.NDArray[np.integer[Any]], span: int
) -> tuple[npt.NDArray[np.intp], IntArray]:
    """`np.unique(values, return_inverse=True)` of integers in [0, span), the inverse as
    int32, without sorting: each value marks its slot in a table of `span`, the marked
    slots in order are the distinct values, and a second table gives each its rank.
    O(K + span) for K values and span x 5 bytes of tables while it runs: cheaper than the
    sort's O(K log K) when the span is at most a small multiple of K (a photo's millions
    of runs), dearer for a few values in a wide span."""
    marked = np.zeros(span, dtype=np.bool_)
    marked[values] = True
    distinct = np.flatnonzero(marked)
    del marked
    rank = np.empty(span, dtype=np.int32)
    rank[distinct] = np.arange(len(distinct), dtype=np.int32)
    inverse: IntArray = rank.take(values)
    return distinct, inverse


def sorted_unique(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """`np.unique(values)` by sorting. NumPy 2.3+ answers a plain `np.unique` of integers
    with a hash table, which on keys like `id * span + label` is 50 times slower than a
    sort (about 100 times for int32). Cost: O(n log n)."""
    ordered = np.sort(values, axis=None)
    keep = np.empty(len(ordered), dtype=bool)
    keep[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    out: npt.NDArray[Any] = ordered[keep]
    return out


def runs_of(
    values: npt.NDArray[np.integer[Any]],
) -> tuple[npt.NDArray[np.integer[Any]], npt.NDArray[np.int64]]:
    """The runs of equal values of `values` (flattened): each run's value and length, in
    order. One whole-array compare, O(N), plus O(R) for the R runs."""
    flat = values.reshape(-1)
    if len(flat) == 0:
        return flat[:0], np.zeros(0, dtype=np.int64)
    return _runs_from(flat, np.flatnonzero(flat[1:] != flat[:-1]))


def _runs_from(
    flat: npt.NDArray[np.integer[Any]], changes: npt.NDArray[np.intp]
) -> tuple[npt.NDArray[np.integer[Any]], npt.NDArray[np.int64]]:
    """Each run's value and length of the non-empty `flat`, given `changes`, the steps i
    where `flat[i + 1] != flat[i]` (a fresh array: shifted in place). O(R)."""
    changes += 1
    starts = np.concatenate((np.zeros(1, dtype=changes.dtype), changes))
    lengths = np.diff(starts, append=len(flat)).astype(np.int64)
    return flat.take(starts), lengths


def count_runs(
    values: npt.NDArray[np.integer[Any]], minlength: int = 0, shift: int = 0
) -> npt.NDArray[np.int64]:
    """`np.bincount(values + shift, minlength=minlength)` for integers of at least `-shift`
    in an order with long runs of equal values (a label map in raster order). bincount
    adds one to a counter per value, and along a run each add waits for the one before;
    here each run is counted once, by its length: one compare of neighbours both finds
    the runs and tells noise (values that change at over a quarter of the steps, counted
    directly), O(N), plus O(R) for the R runs; no shifted copy of `values`. The same
    counts, int64.
    """
    flat = values.reshape(-1)
    if len(flat) == 0:
        return np.zeros(minlength, dtype=np.int64)
    changes = np.flatnonzero(flat[1:] != flat[:-1])
    if 4 * len(changes) > len(flat):
        direct = flat.astype(np.int64) + shift if shift else flat
        return np.bincount(direct, minlength=minlength).astype(np.int64)
    run_value, run_length = _runs_from(flat, changes)
    shifted = run_value.astype(np.int64) + shift if shift else run_value
    return np.bincount(shifted, run_length, minlength=minlength).astype(np.int64)


def pixel_rows(img: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """The (N, C) rows of an (H, W, C) image, a view when it is contiguous. The colour
    steps take RGB or RGBA alike and read the first three channels, so the decoded RGBA
    image is never copied to RGB."""
    return img.reshape(-1, img.shape[-1])


def _dilate(mask: BoolArray, radius: int) -> BoolArray:
    """Whether any pixel of the (2 radius + 1)^2 window around each pixel is set (the same
    as `ndimage.maximum_filter(mask, 2 radius + 1)`). Separable ORs of shifted views, O(N r).
    """
    row = mask.copy()
    for d in range(1, radius + 1):
        row[:, d:] |= mask[:, :-d]
        row[:, :-d] |= mask[:, d:]
    out = row.copy()
    for d in range(1, radius + 1):
        out[d:] |= row[:-d]
        out[:-d] |= row[d:]
    return out


def assign(
    rgb: npt.NDArray[np.uint8],
    maps: PixelMaps,
    palette: FloatArray,
    tol: Tolerances,
    colours: Colours | None = None,
    edge: BoolArray | None = None,
    photo: bool = False,
) -> IntArray:
    """Step 6: label every opaque pixel with a palette index; -1 elsewhere.

    Nearest colour in CIELAB per distinct input colour, then edge unmixing: an edge pixel
    that is a mixture of the two nearest interior colours around it takes the nearer one
    (coverage a >= 0.5), even when a third palette colour lies between them. Two colours
    in noisy input are ink and paper instead (`colour_count.ink_or_paper`). `edge`, the
    opaque pixels that are not flat, when the caller has it (read only; else found here).
    A photo's palette (dense, `colour_count.near_equal`, or said to be a `photo`'s) is not
    unmixed: its edges are texture. Cost: O(N + U K) for U distinct colours, plus
    O(E * (24 + K)) for E edge pixels near interiors.
    """
    h, w = maps.opaque.shape
    if len(palette) == 0:
        return np.full((h, w), -1, dtype=np.int32)
    if colours is None:
        colours = distinct_colours(rgb, maps)
    if len(palette) == 2 and max(maps.noise, maps.grain) >= colour_count.CLEAN_NOISE:
        # Ink on paper (a scan, a stamp, a noisy two-colour image): where the ink is.
        uidx = colour_count.ink_or_paper(colours.rgb.astype(np.float64), colours.count, palette)
        if colours.everything:
            return colours.spread(uidx).reshape(h, w)
        return colours.spread(uidx.astype(np.int32), -1).reshape(h, w)
    uidx, udist = nearest(srgb_to_lab(colours.rgb.astype(np.float64)), srgb_to_lab(palette))
    upure = udist <= tol.point
    if colours.everything:
        labels = colours.spread(uidx).reshape(h, w)
    else:
        labels = colours.spread(uidx.astype(np.int32), -1).reshape(h, w)

    noise = max(maps.noise, maps.grain)
    if (noise >= colour_count.CLEAN_NOISE and len(palette) > TABLE_COLOURS) or (
        noise >= colour_count.PHOTO_NOISE
        and colour_count.near_equal(palette, photo=photo) is not None
    ):
        # A photo's many near-equal colours (`colour_count`): its edges are texture, not
        # anti-aliasing between flat colours, and the nearest colour is the faithful one.
        return labels
    if edge is None:
        # Written in place over a fresh mask (no temporaries).
        edge = np.logical_not(maps.flat)
        edge &= maps.opaque
    if len(palette) <= MASK_COLOURS:
        # The reliable interiors are the flat pixels whose colour is pure: each distinct
        # colour's bit (its label's, or none when impure) spread run by run, ANDed with
        # `flat` in `_interior_bits`; no map of pure pixels and no per-pixel shift.
        bit = np.uint8 if len(palette) <= 8 else np.uint16
        one_hot = np.where(upure, np.left_shift(1, uidx), 0).astype(bit)
        pure_bits = colours.spread(one_hot, 0).reshape(h, w)
        _unmix_edges(labels, rgb, edge, maps.flat, palette, tol, colours, pure_bits)
        return labels
    pure = colours.spread(upure, False).reshape(h, w)
    pure &= maps.flat
    _unmix_edges(labels, rgb, edge, pure, palette, tol, colours)
    return labels


def _unmix_edges(
    labels: IntArray,
    rgb: npt.NDArray[np.uint8],
    edge: BoolArray,
    reliable: BoolArray,
    palette: FloatArray,
    tol: Tolerances,
    colours: Colours,
    pure_bits: npt.NDArray[np.unsignedinteger[Any]] | None = None,
) -> None:
    """Step 6b, in place: an edge pixel that is a mixture of the two nearest interior colours
    around it (`_OFFSETS`), or ringing beside one interior, takes the nearest of them.

    Only pixels within 3 px of a `reliable` interior are looked at. Their candidates are
    gathered as int8 (int16 for over 126 colours) from a padded interior map in which `k`
    (one past the palette) means "no interior there", so no sign tests are needed. For up
    to `TABLE_COLOURS` colours the distances come from a table per distinct colour
    (`colours`; flat art has far fewer distinct colours than edge pixels), or per pixel
    when there are more (photos). Only pixels whose nearest
    interior colour differs from their label can change, so the second-nearest colour, the
    mixture test and the ringing test run on those alone. `pure_bits` (up to
    `MASK_COLOURS` colours), when given, is each pixel's label bit where its colour is pure
    (0 elsewhere), and `reliable` then the flat mask it is ANDed with. Cost: O(N) for the masks,
    O(24 E + min(U, E) K) for E edge pixels near interiors, O(24 C) for the C of them whose
    label may change.
    """
    h, w = labels.shape
    k = len(palette)
    if k < 2:
        return  # one colour: the nearest interior colour is always the label already
    none = k
    pad = 3
    stride = w + 2 * pad
    if k <= MASK_COLOURS:
        bits, around = _interior_bits(labels, reliable, k, pure_bits)
        # Pixels with no interior among their candidates have nothing to take.
        near_interior = np.not_equal(around, 0)
        near_interior &= edge
        at = np.flatnonzero(near_interior)
        # The candidates read from the bitmask image: a bit's index is the colour, no bit
        # is `none`; the same int8 values the padded map below holds.
        decoded = np.full(1 << k, none, dtype=np.int8)
        decoded[1 << np.arange(k)] = np.arange(k)
        colour_of_bit: npt.NDArray[np.int8] | None = decoded
        rel_flat = bits.ravel()
    else:
        colour_of_bit = None
        rel = np.full((h + 2 * pad, stride), none, dtype=np.int8 if k < 127 else np.int16)
        np.copyto(rel[pad:-pad, pad:-pad], labels, where=reliable, casting="unsafe")
        rel_flat = rel.ravel()
        at = np.flatnonzero(edge & _dilate(reliable, 3))
    shifts = np.array([dy * stride + dx for dy, dx in _OFFSETS], dtype=np.int64)
    flat_labels = labels.reshape(-1)
    flat_rgb = pixel_rows(rgb)
    pal32 = palette.astype(np.float32)
    # One more row for "no interior"; its distance is set to infinity below.
    pal32_none = np.vstack([pal32, np.zeros((1, 3), dtype=np.float32)])
    palette_none = np.vstack([palette, np.zeros((1, 3))])
    # Per distinct colour when that is the smaller table and it stays moderate: up to 16
    # MB whenever it is smaller, up to `TABLE_ENTRIES` when it has at most half the rows
    # (a large table's fresh memory costs about what its arithmetic saves otherwise).
    u = len(colours.keys)
    entries = u * (k + 1)
    by_colour = (
        k <= TABLE_COLOURS
        and u <= len(at)
        and (entries <= SMALL_TABLE_ENTRIES or (2 * u <= len(at) and entries <= TABLE_ENTRIES))
    )
    table = _squared_distances(colours.rgb.astype(np.float32), pal32) if by_colour else None
    if k <= MASK_COLOURS:
        at = at[_nearest_may_differ(around, labels, at, flat_rgb, colours, pal32, table)]
    for s in range(0, len(at), _CHUNK):
        p = at[s : s + _CHUNK]
        y = p // w
        cand = rel_flat[(p + (y * 2 * pad + pad * stride + pad))[:, None] + shifts[None, :]]
        if colour_of_bit is not None:
            cand = colour_of_bit[cand]
        if table is not None:
            # Distances to every palette colour per distinct colour, looked up per
            # candidate; the column `none` holds infinity.
            colour = colours.of_pixels(flat_rgb, p)
            cd = table.ravel()[cand + (colour * (k + 1))[:, None]]
        elif k <= TABLE_COLOURS:
            # The same per pixel: many distinct colours (photos).
            by_pixel = _squared_distances(flat_rgb[p, :3].astype(np.float32), pal32)
            row = np.arange(0, len(p) * (k + 1), k + 1, dtype=np.int64)
            cd = by_pixel.ravel()[cand + row[:, None]]
        else:
            col = flat_rgb[p, :3].astype(np.float32)
            diff = col[:, None, :] - pal32_none[cand]
            cd = np.einsum("ijk,ijk->ij", diff, diff)
            cd[cand == none] = np.inf
        first = np.argmin(cd, axis=1)
        b1 = np.take_along_axis(cand, first[:, None], axis=1)[:, 0]
        here = flat_labels[p]
        # Taking b1 changes nothing where it is the label already.
        act = np.flatnonzero((b1 != none) & (b1 != here))
        if len(act) == 0:
            continue
        cand, cd, b1, here = cand[act], cd[act], b1[act], here[act]
        col = flat_rgb[p[act], :3].astype(np.float32)
        rows = np.arange(len(act))
        d1 = np.sqrt(cd[rows, first[act]])
        cd[cand == b1[:, None]] = np.inf
        second = np.argmin(cd, axis=1)
        b2 = cand[rows, second]
        has_pair = np.isfinite(cd[rows, second])
        res, _ = segment_residual(col.astype(np.float64), palette[b1], palette_none[b2], tol.split)
        mixed = has_pair & (res < tol.mix)
        # Ringing or noise beside one interior: its nearest colour is absent from the
        # interiors around it and the pixel is within ringing reach of that interior's colour
        # (a resampling filter overshoots by up to ~6 % of a 255-level edge, ~15 levels).
        absent = ~(cand == here[:, None]).any(axis=1)
        ringing = absent & (d1 <= RINGING_REACH * tol.mix)
        take = mixed | ringing
        flat_labels[p[act[take]]] = b1[take]


def _interior_bits(
    labels: IntArray,
    reliable: BoolArray,
    k: int,
    label_bits: npt.NDArray[np.unsignedinteger[Any]] | None = None,
) -> tuple[npt.NDArray[np.unsignedinteger[Any]], npt.NDArray[np.unsignedinteger[Any]]]:
    """Step 6b (up to `MASK_COLOURS` colours): for every edge pixel, a bitmask of the
    interior colours among its 24 candidates (`_OFFSETS`: the pixels 1, 2 and 3 steps away
    along the rows, columns and both diagonals).

    Returns the padded one-bit-per-colour image of the `reliable` interiors (3 pixels of
    zeros around the image and one more row below, in which flat index
    (y + 3) (W + 6) + x + 3 is pixel (y, x)) and the (H, W) masks. Each of the four lines is
    a window of seven pixels, ORed by doubling on the flat padded image (pairs, fours,
    sevens: three ORs of contiguous bytes), then the four lines together. The windows hold
    the pixel itself too, which adds nothing at an edge pixel (never an interior) and is
    not read elsewhere. `label_bits`, when given, is each pixel's bit (1 << label, or 0),
    of the width this function uses, in place of the one made from `labels`. Cost: 16 O(N)
    ORs of 1 or 2 bytes per pixel."""
    h, w = labels.shape
    bit = np.uint8 if k <= 8 else np.uint16
    pad = 3
    stride = w + 2 * pad
    bits = np.zeros((h + 2 * pad + 1, stride), dtype=bit)
    inner = bits[pad : pad + h, pad:-pad]
    # Shifted in the narrow type, then zeroed off the interiors (a masked, casting shift
    # costs three times as much); a label of -1 is never an interior.
    if label_bits is None:
        np.left_shift(bit(1), labels.astype(bit), out=inner)
    else:
        inner[...] = label_bits
    np.multiply(inner, reliable, out=inner)
    flat = bits.ravel()
    n = len(flat)
    pairs = np.empty(n, dtype=bit)
    fours = np.empty(n, dtype=bit)
    around = np.empty((h, w), dtype=bit)
    for line, step in enumerate((1, stride, stride + 1, stride - 1)):
        np.bitwise_or(flat[: n - step], flat[step:], out=pairs[: n - step])
        np.bitwise_or(pairs[: n - 3 * step], pairs[2 * step : n - step], out=fours[: n - 3 * step])
        sevens = pairs[: n - 6 * step]
        np.bitwise_or(fours[: n - 6 * step], fours[3 * step : n - 3 * step], out=sevens)
        # The window of seven starting 3 steps before each pixel.
        start = pad * stride + pad - 3 * step
        centred = sevens[start : start + h * stride].reshape(h, stride)[:, :w]
        if line == 0:
            around[...] = centred
        else:
            np.bitwise_or(around, centred, out=around)
    return bits, around


def _nearest_may_differ(
    around: npt.NDArray[np.unsignedinteger[Any]],
    labels: IntArray,
    at: npt.NDArray[np.int64],
    flat_rgb: npt.NDArray[np.uint8],
    colours: Colours,
    pal32: FloatArray,
    table: FloatArray | None,
) -> BoolArray:
    """Step 6b's filter (up to `MASK_COLOURS` colours): which edge pixels `at` may have a
    nearest interior colour other than their label, so that only those gather their 24
    candidates. `around` holds each pixel's interior colours as a bitmask
    (`_interior_bits`); the nearest colour in the mask is found colour by colour with the
    same float32 distances (`table`, or per pixel). A pixel whose nearest colour ties with
    another is kept too: the exact pass breaks ties by position. Cost: O(E K) for E edge
    pixels and K colours.
    """
    k = len(pal32)
    bit = around.dtype.type
    present = around.ravel()[at]
    here = labels.ravel()[at]
    if table is not None and len(table) << k <= MAY_DIFFER_TABLE:
        # Per (distinct colour, interior mask) pair, the loop below's answer, looked up.
        if len(table) << k < SEEN_MASKS_FROM:
            nearest_label, tie = _nearest_in_masks(table[:, :k])
            pair = colours.of_pixels(flat_rgb, at) << k
            pair += present
        else:
            # Only the masks some edge pixel has (a dozen or so of the 2^K) are tabled.
            seen = np.flatnonzero(np.bincount(present, minlength=1 << k))
            column = np.zeros(1 << k, dtype=np.int64)
            column[seen] = np.arange(len(seen))
            nearest_label, tie = _nearest_in_masks(table[:, :k], seen)
            pair = colours.of_pixels(flat_rgb, at) * len(seen)
            pair += column[present]
        found = nearest_label[pair]
        out_table: BoolArray = ((found != k) & (found != here)) | tie[pair]
        return out_table
    best = np.full(len(at), np.inf, dtype=np.float32)
    nearest_label = np.full(len(at), k, dtype=np.int16)
    tie = np.zeros(len(at), dtype=bool)
    if table is not None:
        columns = np.ascontiguousarray(table[:, :k].T)
        colour = colours.of_pixels(flat_rgb, at)
    else:
        col = flat_rgb[at, :3].astype(np.float32).T
    for j in range(k):
        has = (present & bit(1 << j)) != 0
        if table is not None:
            d = columns[j][colour]
        else:
            # As `_squared_distances` sums them, so the values are identical.
            t = col[0] - pal32[j, 0]
            d = t * t
            t = col[1] - pal32[j, 1]
            d = d + t * t
            t = col[2] - pal32[j, 2]
            d = d + t * t
        closer = has & (d < best)
        tie = (tie | (has & (d == best))) & ~closer
        np.copyto(best, d, where=closer)
        np.copyto(nearest_label, j, where=closer)
    out: BoolArray = ((nearest_label != k) & (nearest_label != here)) | tie
    return out


#: Largest (distinct colours x interior masks) table `_nearest_may_differ` builds.
MAY_DIFFER_TABLE = 1 << 16
#: From this many (distinct colours x interior masks) entries, the table holds only the
#: masks the edge pixels have: below it, finding those costs more than it saves.
SEEN_MASKS_FROM = 1 << 13


def _nearest_in_masks(
    distances: npt.NDArray[np.float32], masks: npt.NDArray[np.int64] | None = None
) -> tuple[npt.NDArray[np.int64], BoolArray]:
    """For every distinct colour (row of `distances`, its (U, K) float32 squared distances
    to the palette) and every mask of interior colours (`masks`, M of them; all of
    0 .. 2^K - 1 when not given): the first colour of the mask at the least distance (K for
    an empty mask), and whether another colour of the mask ties with it. Flattened,
    colour-major: entry u * M + the mask's position in `masks`. What
    `_nearest_may_differ`'s loop finds colour by colour: a strictly closer colour takes
    over, so the first at the minimum wins, and a tie stands only when a later colour of
    the mask reaches the same minimum. Cost: O(U M K)."""
    k = distances.shape[1]
    if masks is None:
        masks = np.arange(1 << k)
    has = ((masks[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)
    within = np.where(has[None, :, :], distances[:, None, :], np.float32(np.inf))
    first = np.argmin(within, axis=2)
    least = np.take_along_axis(within, first[..., None], axis=2)
    empty = ~has.any(axis=1)
    first[:, empty] = k
    tie = (within == least).sum(axis=2) >= 2
    tie[:, empty] = False
    return first.reshape(-1), tie.reshape(-1)


def _squared_distances(cols: FloatArray, pal32: FloatArray) -> FloatArray:
    """(M, K + 1) float32 squared sRGB distances from each colour to each palette colour,
    the last column infinity (for "no interior" in `_unmix_edges`). Summed channel by
    channel in place, `_CHUNK` rows at a time with one scratch array of that size (a
    photo's table per distinct colour, up to `TABLE_ENTRIES`, gets no second one as
    large). O(M K)."""
    k = len(pal32)
    out = np.empty((len(cols), k + 1), dtype=np.float32)
    out[:, k] = np.inf
    scratch = np.empty((min(len(cols), _CHUNK), k), dtype=np.float32)
    for start in range(0, len(cols), _CHUNK):
        block = cols[start : start + _CHUNK]
        acc = out[start : start + len(block), :k]
        term = scratch[: len(block)]
        for c in range(3):
            np.subtract(block[:, c, None], pal32[None, :, c], out=term)
            if c == 0:
                np.multiply(term, term, out=acc)
            else:
                np.multiply(term, term, out=term)
                np.add(acc, term, out=acc)
    return out
