"""Label clean-up: merge speckles (noise, stray anti-aliasing) into their best neighbour.

A component is a speckle only when it is small *and* its pixels do not really have its
colour: their mean colour is off the palette colour, or it is a mixture of the colours
around it. A 1-px stroke, a 3x3 dot or small text in a true palette colour is kept whatever
its size; in noisy input (JPEG, scans, photos) components of up to `NOISY_SPECKLE` pixels
are never trusted on their own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from printjob_adapters.engine import bounds, colour_count, graphs
from printjob_adapters.engine.colour import ciede2000, srgb_to_lab
from printjob_adapters.engine.quantise import (
    RINGING_REACH,
    pixel_rows,
    segment_residual,
    sorted_unique,
)

IntArray = npt.NDArray[np.int32]
Int64Array = npt.NDArray[np.int64]

#: Components up to this many pixels are examined as possible speckles.
SPECKLE_MAX = 12
#: Up to this many colours, components are numbered colour by colour (see `components`).
PER_COLOUR_ORDER = 4
#: Noise level (`PixelMaps.noise`) above which the tiniest components are always merged.
NOISY = 4.0
#: In noisy input (JPEG, scans, photos), components this small are never trusted on their own.
NOISY_SPECKLE = 4


@attrs.frozen(eq=False)
class Components:
    """The 4-connected components of equal labels of a label map, numbered as `components`.

    `base` (H, W) holds each pixel's id as first labelled; `to_id` maps those ids to the
    current ones, so merging components (`_merge`) never rewrites the whole map; maps are
    made from the runs of `base` (`spread`). Id 0 holds every -1 pixel. `label`, `size`
    and `first` (raster index of the first pixel; -1 for id 0) are per current id.
    """

    base: IntArray
    to_id: IntArray
    label: IntArray
    size: Int64Array
    first: Int64Array
    run_base: IntArray  # (R,) the base id of each run of `base` in raster order
    run_length: Int64Array  # (R,) and its length

    @property
    def count(self) -> int:
        """Number of ids, id 0 included."""
        return len(self.label)

    def spread(self, per_id: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """A per-id value as an (H, W) map, filled run by run: O(R) look-ups and one
        fill, much cheaper than indexing by `base` pixel by pixel."""
        values = per_id[self.to_id[self.run_base]]
        return np.repeat(values, self.run_length).reshape(self.base.shape)

    def ids(self) -> IntArray:
        """The (H, W) map of current ids. O(N)."""
        return self.spread(np.arange(self.count, dtype=np.int32))

    def labels(self) -> IntArray:
        """The label map the components partition. O(N)."""
        return self.spread(self.label)


def components(labels: IntArray) -> tuple[IntArray, int]:
    """4-connected components of equal labels; id 0 holds all -1 pixels.

    Returns the (H, W) id map and the number of ids. Ids follow `_numbering`. Cost: see
    `label_components`.
    """
    comps = label_components(labels)
    return comps.ids(), comps.count


def label_components(labels: IntArray) -> Components:
    """4-connected components of equal labels, found run by run.

    Each row is cut into runs of equal labels; runs in neighbouring rows join when they
    overlap with the same label. Such an overlap begins where a run begins in one of the
    two rows, so only those columns are compared. The joined runs are grouped by
    `graphs.connected_components` over the R runs. Cost: a handful of whole-image compares
    and one `np.repeat`, O(N), plus O(R log R) for R runs (R << N for flat art); about a
    quarter of labelling a doubled grid or each colour with `ndimage.label`.
    """
    h, w = labels.shape
    flat = labels.ravel()
    n = flat.size
    start = np.empty(n, dtype=bool)
    np.not_equal(flat[1:], flat[:-1], out=start[1:])
    start[::w] = True  # the first pixel of every row, the image's first included
    heads = np.flatnonzero(start)
    lengths = np.diff(np.append(heads, n))
    run_label = flat[heads]
    # Vertical joins, compared only where a run starts in the upper or the lower row: at
    # those columns only, not along the whole image.
    if 16 * len(heads) < n:
        # Few runs (flat art): those columns from the run heads, sorted, not a whole-image
        # mask and a search through it, and the labels gathered there.
        probe = sorted_unique(np.concatenate((heads[heads < n - w], heads[heads >= w] - w)))
        upper_label = flat[probe]
        joins = upper_label == flat[probe + w]
        joins &= upper_label >= 0
        pos = probe[joins]
    else:
        # Runs start almost everywhere (photos): contiguous compares beat gathers.
        mask = start[:-w] | start[w:]
        mask &= flat[:-w] == flat[w:]
        pos = np.flatnonzero(mask)
        pos = pos[flat[pos] >= 0]
    runs = len(heads)
    if len(pos) > n // 16:
        # Many joins (photos): each pixel's run number at once beats a search per join.
        run_of = np.cumsum(start, dtype=np.int64)
        upper = run_of[pos] - 1
        lower = run_of[pos + w] - 1
    else:
        upper = np.searchsorted(heads, pos, side="right") - 1
        lower = np.searchsorted(heads, pos + w, side="right") - 1
    groups, group = graphs.connected_components(runs, upper, lower)
    # Runs are in raster order, so a group's first run holds its first pixel.
    first = np.full(groups, n, dtype=np.int64)
    np.minimum.at(first, group, heads)
    glabel = np.empty(groups, dtype=np.int32)
    glabel[group] = run_label
    gsize = np.bincount(group, lengths, minlength=groups).astype(np.int64)
    new_id = _numbering(glabel, first)
    run_base = new_id[group]
    base = np.repeat(run_base, lengths).reshape(h, w)
    identity = np.arange(int(new_id.max(initial=0)) + 1, dtype=np.int32)
    return _per_id(base, identity, new_id, glabel, gsize, first, (run_base, lengths))


def _numbering(label: IntArray, first: Int64Array) -> IntArray:
    """Ids for groups of pixels with these labels and first pixels: 0 for label -1, then
    1, 2, ... in the order `components` has always numbered them (and tie-breaks in
    `merge_specks` follow): colour by colour, each in raster order of the first pixel, when
    the map has at most `PER_COLOUR_ORDER` colours, else in raster order. O(n log n)."""
    out = np.zeros(len(label), dtype=np.int32)
    inside = np.flatnonzero(label >= 0)
    if len(inside) == 0:
        return out
    k = int(label[inside].max()) + 1
    if k > PER_COLOUR_ORDER:
        order = inside[np.argsort(first[inside], kind="stable")]
    else:
        order = inside[np.lexsort((first[inside], label[inside]))]
    out[order] = np.arange(1, len(order) + 1, dtype=np.int32)
    return out


def _per_id(
    base: IntArray,
    to_id: IntArray,
    new_id: IntArray,
    glabel: IntArray,
    gsize: Int64Array,
    gfirst: Int64Array,
    runs: tuple[IntArray, Int64Array],
) -> Components:
    """`Components` from per-group facts, each group's id (`new_id`; 0 for -1) and the
    runs of `base` (base id, length). O(n)."""
    count = int(new_id.max(initial=0)) + 1
    label = np.full(count, -1, dtype=np.int32)
    label[new_id] = np.where(new_id > 0, glabel, -1)
    first = np.full(count, -1, dtype=np.int64)
    inside = new_id > 0
    first[new_id[inside]] = gfirst[inside]
    size = np.bincount(new_id, gsize, minlength=count).astype(np.int64)
    return Components(
        base=base,
        to_id=to_id,
        label=label,
        size=size,
        first=first,
        run_base=runs[0],
        run_length=runs[1],
    )


@attrs.frozen(eq=False)
class _Pixels:
    """Listed pixels (raster order): flat index, base id, base ids of the 4 neighbours."""

    at: Int64Array  # (S,)
    base: IntArray  # (S,)
    neighbours: IntArray  # (S, 4) left, right, up, down; -1 off the image

    def subset(self, keep: npt.NDArray[np.bool_]) -> _Pixels:
        return _Pixels(at=self.at[keep], base=self.base[keep], neighbours=self.neighbours[keep])


def _pixels_of(comps: Components, wanted: npt.NDArray[np.bool_]) -> _Pixels:
    """The pixels of the `wanted` components (per current id) with their neighbours' base
    ids. Cost: O(N) for the look-up, O(S) for the S pixels listed."""
    h, w = comps.base.shape
    base = comps.base.ravel()
    at = np.flatnonzero(comps.spread(wanted))
    x = at % w
    neighbours = np.empty((len(at), 4), dtype=np.int32)
    # Every neighbour gathered with clipped indices and those off the image set to -1
    # after: no list of each direction's pixels inside the image is made.
    off = (x == 0, x == w - 1, at < w, at >= h * w - w)
    for j, step in enumerate((-1, 1, -w, w)):
        neighbours[:, j] = base.take(at + step, mode="clip")
        np.copyto(neighbours[:, j], -1, where=off[j])
    return _Pixels(at=at, base=base[at], neighbours=neighbours)


def _neighbour_ids(comps: Components, pixels: _Pixels) -> IntArray:
    """Current ids of the listed pixels' 4 neighbours, -1 off the image. O(S)."""
    # -1 (off the image) indexes the last id: a valid look-up, reset to -1 at once.
    out: IntArray = comps.to_id[pixels.neighbours]
    out[pixels.neighbours < 0] = -1
    return out


def _current_ids(comps: Components, pixels: _Pixels) -> tuple[IntArray, IntArray]:
    """The listed pixels' current ids (S,) and their 4 neighbours' (S, 4), -1 off the
    image: read once per pass of a speck filter, by its pairs and by its `_merge`. O(S)."""
    return comps.to_id[pixels.base], _neighbour_ids(comps, pixels)


def _merge(
    comps: Components,
    new_label: IntArray,
    pixels: _Pixels,
    current: tuple[IntArray, IntArray] | None = None,
) -> Components:
    """The components after some changed label (`new_label`, per current id): each joins
    the neighbouring components that now share its label. Only the listed `pixels` are
    looked at, which must include every pixel of a changed component (they are speckles);
    `current` their `_current_ids` when the caller has them. Groups come from `graphs`
    over the components, and the pixel map is kept (`to_id` changes). Same partition and
    numbering as labelling the new map afresh. Cost: O(S + n log n) for S listed pixels
    and n components, instead of O(N).
    """
    moved = new_label != comps.label
    cur, q = _current_ids(comps, pixels) if current is None else current
    # Masks over every listed pixel, not a list of the moved ones: in a photo's speck
    # filter nearly all of them move. -1 (off the image) indexes the last id: a valid
    # look-up, masked out.
    join = new_label[q] == new_label[cur][:, None]
    join &= q != cur[:, None]
    join &= q >= 0
    join &= moved[cur][:, None]
    src = np.broadcast_to(cur[:, None], join.shape)[join]
    n = comps.count
    groups, group = graphs.connected_components(n, src, q[join])
    gfirst = np.full(groups, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(gfirst, group, comps.first)
    glabel = np.empty(groups, dtype=np.int32)
    glabel[group] = new_label
    gsize = np.bincount(group, comps.size, minlength=groups).astype(np.int64)
    new_id = _numbering(glabel, gfirst)
    to_id = new_id[group][comps.to_id]
    runs = (comps.run_base, comps.run_length)
    return _per_id(comps.base, to_id, new_id, glabel, gsize, gfirst, runs)


def _components_graph(labels: IntArray) -> tuple[IntArray, int]:
    """Reference labelling for the tests: pixels as graph nodes, O(N) edges."""
    h, w = labels.shape
    idx = np.arange(h * w, dtype=np.int64).reshape(h, w)
    right = (labels[:, :-1] == labels[:, 1:]) & (labels[:, :-1] >= 0)
    down = (labels[:-1, :] == labels[1:, :]) & (labels[:-1, :] >= 0)
    src = np.concatenate([idx[:, :-1][right], idx[:-1, :][down]])
    dst = np.concatenate([idx[:, 1:][right], idx[1:, :][down]])
    n, comp = graphs.connected_components(h * w, src, dst)
    comp = comp.reshape(h, w).astype(np.int32) + 1
    comp[labels < 0] = 0
    return comp, int(n) + 1


def _neighbour_pairs(
    comps: Components, current: tuple[IntArray, IntArray], small: npt.NDArray[np.bool_]
) -> Int64Array:
    """The distinct (small component, neighbouring label) pairs of the listed pixels
    whose `_current_ids` are `current`, sorted. Cost: O(S) for the S listed pixels."""
    cur, q = current
    lq = comps.label[q]
    np.copyto(lq, -1, where=q < 0)
    m = lq != comps.label[cur][:, None]
    m &= lq >= 0
    m &= small[cur][:, None]
    span = int(comps.label.max(initial=-1)) + 1
    space = comps.count * span
    if space <= min(_PAIR_TABLE, 16 * q.size):
        # Marked in a table with every pixel's four keys, those not wanted in one spare
        # slot: no list of the wanted ones is made (in a photo they are most of them).
        # The keys fit 32 bits (the table is at most `_PAIR_TABLE`).
        key = (cur.astype(np.int32) * np.int32(span))[:, None] + lq.astype(np.int32)
        np.copyto(key, space, where=~m)
        seen = np.zeros(space + 1, dtype=bool)
        seen[key] = True
        found = np.flatnonzero(seen[:space])
    else:
        ca = np.broadcast_to(cur[:, None], m.shape)[m].astype(np.int64)
        found = _distinct_keys(ca * span + lq[m], space)
    return np.stack([found // span, found % span], axis=1)


#: Largest table of (component, label) keys `_neighbour_pairs` marks (bytes), when it is
#: also at most 16 slots per key; past it only the wanted keys are listed.
_PAIR_TABLE = 1 << 26


def _distinct_keys(keys: Int64Array, space: int) -> Int64Array:
    """The distinct values of `keys` (all in [0, space)), sorted: marked in a bitmap when
    the space is moderate, O(len + space) with no sort, else `sorted_unique`."""
    if space > 1 << 26 or space > 64 * len(keys):
        return sorted_unique(keys)
    seen = np.zeros(space, dtype=bool)
    seen[keys] = True
    return np.flatnonzero(seen)


def _two_nearest(
    group: Int64Array, d: npt.NDArray[np.float64], second: bool = True
) -> tuple[Int64Array, Int64Array]:
    """For rows sorted by `group`: each group's row with the smallest `d` and, when
    `second`, its row with the next smallest (-1 for a group of one row); ties go to the
    earlier row. The first two rows of each group after a stable sort by `d`, without
    sorting: two `np.minimum.reduceat` passes, O(P) for P rows.
    """
    change = np.empty(len(group), dtype=bool)
    change[:1] = True
    np.not_equal(group[1:], group[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    gid = np.cumsum(change) - 1
    best = _first_minimum(d, starts, gid)
    if not second:
        return best, np.zeros(0, dtype=np.int64)
    rest = d.copy()
    rest[best] = np.inf
    after = _first_minimum(rest, starts, gid)
    single = np.diff(np.append(starts, len(d))) == 1
    return best, np.where(single, -1, after)


def _first_minimum(d: npt.NDArray[np.float64], starts: Int64Array, gid: Int64Array) -> Int64Array:
    """The first row of each group holding the group's minimum of `d`. O(P)."""
    low = np.minimum.reduceat(d, starts)
    at = np.flatnonzero(d == low[gid])
    head = np.empty(len(at), dtype=bool)
    head[:1] = True
    np.not_equal(gid[at][1:], gid[at][:-1], out=head[1:])
    out: Int64Array = at[head]
    return out


def remove_speckles(
    labels: IntArray,
    rgb: npt.NDArray[np.uint8],
    palette: npt.NDArray[np.floating[Any]],
    point_tol: float,
    mix_tol: float,
    noise: float,
    split: float = 0.0,
    passes: int = 2,
    keep_every_colour: bool = False,
) -> IntArray:
    """`clean_speckles` for a caller that wants the label map. Cost: as it, plus O(N)."""
    comps = clean_speckles(
        labels, rgb, palette, point_tol, mix_tol, noise, split, passes, keep_every_colour
    )
    return comps.labels()


def clean_speckles(
    labels: IntArray,
    rgb: npt.NDArray[np.uint8],
    palette: npt.NDArray[np.floating[Any]],
    point_tol: float,
    mix_tol: float,
    noise: float,
    split: float = 0.0,
    passes: int = 2,
    keep_every_colour: bool = False,
    keep: npt.NDArray[np.bool_] | None = None,
    tick: Callable[[], None] | None = None,
    comps: Components | None = None,
    near: npt.NDArray[np.bool_] | None = None,
    texture: bool = False,
    one_pass: bool = False,
) -> Components:
    """Clean-up step: merge speckle components into the neighbour nearest their colour.

    Returns the components of the cleaned map (its labels are `.labels()`), so that
    `photo_like` need not label it again. With `keep_every_colour` (an exact count was
    asked for) each colour keeps at least its largest component. Components holding a
    pixel of `keep` (strokes and dots, `detail.detail_mask`) are never merged. Cost: one
    `label_components`, O(N); then per pass O(S) for the S pixels of small components
    (their list is made once and only shrinks) and O(n log n) for n components: merged
    components are joined to their neighbours (`_merge`) rather than the map relabelled.
    `comps` are the components of `labels` when the caller has them (labelled once for
    `detail.detail_mask` and this step). Given a photo's dense palette (`near`, from
    `colour_count.near_equal`), a speckle of more than `SPECK_TINY` pixels only merges
    into a neighbour within `SPECK_REACH` of its mean colour, as in `merge_specks`: a
    catch light or a crease is the photo's own, and merging it is an error of the full
    difference (flat art and stamps, without the table, are cleaned as before). In a
    photo of `texture` a speckle also stays when merging it would cost more than
    `TEXTURE_BUDGET` (see `may_merge`). With `one_pass` (the caller's
    `specks_in_one_pass`, decided once on the first map) nothing merges here: every
    speck this step would look at is under the speck filter's area, which decides it.
    """
    if comps is None:
        comps = label_components(labels)
    if one_pass:
        return comps
    flat_rgb = pixel_rows(rgb)
    palette_lab = srgb_to_lab(palette)
    kept_base = _kept_base(comps, keep)
    pixels: _Pixels | None = None
    for _ in range(passes):
        if tick is not None:
            tick()  # a cancel check per pass: seconds each on 3 MP of 2 x 2 blocks
        n, size, comp_label = comps.count, comps.size, comps.label
        small = (size <= SPECKLE_MAX) & (comp_label >= 0)
        small[comps.to_id[kept_base]] = False
        if not small.any():
            break
        if pixels is None:
            pixels = _pixels_of(comps, small)
        else:
            # Components only grow, so the small ones are among those listed before.
            pixels = pixels.subset(small[comps.to_id[pixels.base]])
        current = _current_ids(comps, pixels)
        cur = current[0]
        pairs = _neighbour_pairs(comps, current, small)
        if len(pairs) == 0:
            break
        sums = np.stack(
            [np.bincount(cur, flat_rgb[pixels.at, c], minlength=n) for c in range(3)], axis=1
        )
        mean = sums / np.maximum(size, 1)[:, None]
        c_ids, nb = pairs[:, 0], pairs[:, 1]
        # Best neighbour: nearest in sRGB, the same rule that assigns anti-aliased pixels.
        # Also the second-nearest neighbour colour, for the "mixture of its surroundings" test.
        d_nb = ((mean[c_ids] - palette[nb]) ** 2).sum(axis=1)
        best, second_row = _two_nearest(c_ids, d_nb)
        cid, target = c_ids[best], nb[best]
        second = np.where(second_row >= 0, nb[second_row], -1)

        m = mean[cid]
        lone = (size[cid] <= NOISY_SPECKLE) & (noise >= NOISY)
        # Within mixing reach of the colour around it: a ringing or noise blotch, not a feature.
        faint = np.linalg.norm(m - palette[target], axis=1) <= RINGING_REACH * mix_tol
        merge = lone | faint
        # The colour and mixture tests only for speckles not merged already (most of a
        # photo's are): they are the costly ones.
        rest = np.flatnonzero(~merge)
        own_lab = palette_lab[comp_label[cid[rest]]]
        d_own = np.linalg.norm(srgb_to_lab(m[rest]) - own_lab, axis=1)
        merge[rest] = d_own > point_tol
        rest = rest[~merge[rest] & (second[rest] >= 0)]
        res, t = segment_residual(m[rest], palette[target[rest]], palette[second[rest]], split)
        merge[rest] = (res < mix_tol) & (t > 0.05) & (t < 0.95)
        if near is not None:
            # Only the specks still merging and over `SPECK_TINY` pixels are measured:
            # `may_merge` lets the tiny ones through whatever their colour (a photo's
            # noise is mostly those, and its colour differences cost most of this pass).
            weigh = np.flatnonzero(merge & (size[cid] > SPECK_TINY))
            apart = ciede2000(srgb_to_lab(m[weigh]), palette_lab[target[weigh]])
            merge[weigh] = may_merge(apart, size[cid[weigh]], texture)
        if keep_every_colour:
            # An exact colour count was asked for: a colour never vanishes entirely; its
            # largest speckle stays.
            k = len(palette)
            merged_px = np.bincount(comp_label[cid[merge]], size[cid[merge]], minlength=k)
            total_px = np.bincount(comp_label[comp_label >= 0], size[comp_label >= 0], minlength=k)
            gone = (merged_px >= total_px) & (total_px > 0)
            if gone.any():
                cand = np.flatnonzero(merge & gone[comp_label[cid]])
                order = cand[np.lexsort((-size[cid[cand]], comp_label[cid[cand]]))]
                lab_sorted = comp_label[cid[order]]
                first = np.ones(len(order), dtype=bool)
                first[1:] = lab_sorted[1:] != lab_sorted[:-1]
                merge[order[first]] = False
        if not merge.any():
            break
        new_label = comp_label.copy()
        new_label[cid[merge]] = target[merge]
        comps = _merge(comps, new_label, pixels, current)
    return comps


#: Photo-like input (noise at least this, see `PixelMaps.noise`) gets the speck filter.
PHOTO_NOISE = colour_count.PHOTO_NOISE
#: ... as does input with at least this many small components per 1000 pixels.
BUSY_SMALL = 2.0
#: Components smaller than this (pixels) are specks in photo-like input.
SPECK_AREA = 32
#: A photo larger than this (pixels) has its specks measured at its size: the speck
#: filter's area grows in proportion (`speck_area`), so a 3 MP photo is cleaned as the
#: same photo at 1 MP would be, rather than keeping specks a print at the same size would
#: never show. Every image of both corpora and the own set is smaller.
SPECK_SCALE_PIXELS = 1_000_000
#: Mode-filter passes for photo-like input.
SMOOTH_PASSES = 2
#: Labels summed between two cancel checks in the mode filter (about ten whole-image byte
#: operations each: at 3 MP some 20 ms, so a check every ~0.3 s).
LABELS_PER_CHECK = 16
#: Over this many labels present, a mode-filter pass compares the nine window pixels with
#: each other (`_majority_by_window`, a cost that does not grow with the colours) instead
#: of summing each label's window (`_majority`): the same result, cheaper for a photo's
#: dozens of colours.
WINDOW_LABELS = 12
#: Images with fewer pixels than this never get the speck filter.
SPECK_MIN_PIXELS = 64 * 64
#: Merge rounds of the speck filter (a speck merged into a speck grows each round).
SPECK_PASSES = 4
#: A speck of a photo whose mean colour is further than this (CIEDE2000) from every
#: neighbour is detail (a pupil, a catch light, a dark crease), not noise, and stays: twice
#: `colour_count.NEAR_EQUAL`, as a speck's mean carries its own noise and anti-aliasing.
SPECK_REACH = 2.0 * colour_count.NEAR_EQUAL
#: Specks of at most this many pixels merge whatever their colour: one or two pixels are
#: too few to tell detail from noise, and trace as a path each.
SPECK_TINY = 2
#: A photo is texture when under this share of its fully opaque pixels is flat
#: (`quantise.PixelMaps.flat`): a stained tissue sample 0.10, every other photo of both
#: sets and scikit-image's samples 0.35 to 0.93. There nearly every speck is the picture
#: (a cell, a fibre), not a quantisation speck on smooth shading.
TEXTURE_FLAT = 0.18
#: In texture, a speck merges only when the error it adds, its pixels times the CIEDE2000
#: from its mean colour to the neighbour's, is at most this: a 4-pixel speck within
#: `SPECK_REACH`, an 8-pixel one within 5, a 20-pixel one within 2. The stained tissue
#: sample at 1x: ΔE2000 3.73 → 3.11 (vtracer's default 3.20), 76,000 → 130,000 segments.
TEXTURE_BUDGET = 40.0


def specks_in_one_pass(
    pixels: int, components: int, near: npt.NDArray[np.bool_] | None, texture: bool
) -> bool:
    """Whether a photo's specks are all decided by the speck filter (`merge_specks`), not
    first by `clean_speckles`: a photo of a dense palette (`near`) over
    `SPECK_SCALE_PIXELS`, not `texture`, whose map has at least `ONE_PASS_COMPONENTS`
    components (`components`) a pixel. Its speck filter's area (`speck_area`, 96 pixels
    at 3 MP) covers every speckle `clean_speckles` looks at (`SPECKLE_MAX`), under the
    photo rule `clean_speckles` applies too (a speck joins the neighbour nearest its
    colour when within `SPECK_REACH`, or when of `SPECK_TINY` pixels), so a first
    clean-up of its hundreds of thousands of specks (the Hubble deep field at 3 MP:
    554,000 components, 1.1 s of 6.4) and the detail mask judged again after it buy
    little: ΔE2000 at 1x 2.70 → 2.71. What differs is the neighbour a speck joins (the
    one nearest its colour among the larger ones, not among all) and the mode filter
    seeing the specks before they merge. A photo of fewer specks keeps the two steps,
    which cost it little and leave it fewer segments (the astronaut at 3 MP: 266,000
    segments, 278,000 in one pass). Decided once, on the first label map
    (`segmentation.segment`), and passed to both steps. O(1)."""
    return (
        near is not None
        and not texture
        and pixels > SPECK_SCALE_PIXELS
        and components >= ONE_PASS_COMPONENTS * pixels
    )


#: The components a pixel of a photo's map from which its specks are decided in one
#: pass (`specks_in_one_pass`): the Hubble deep field at 3 MP has 0.18 at its first
#: labelling and 0.07 after its mode filter (at its speck filter); Grace Hopper, the
#: astronaut and the stained tissue sample 0.017-0.032 and under 0.01.
ONE_PASS_COMPONENTS = 0.05


#: A photo whose specks are decided in one pass (`specks_in_one_pass`) gets this many
#: mode-filter passes (`majority_smooth`) after its speck filter: the specks it merged
#: leave ragged boundaries between near-equal colours, which the pass straightens (the
#: Hubble deep field at 3 MP: 322,000 → 281,000 segments, ΔE2000 at 1x 2.707 → 2.71).
AFTER_SPECKS_PASSES = 1


def speck_area(pixels: int, photo: bool, sources: bool = False) -> int:
    """The speck filter's area (`SPECK_AREA`) for an image of `pixels`: in proportion to
    the pixels over `SPECK_SCALE_PIXELS` for a `photo` (a dense palette), else as it is.
    A field of faint `sources` (`quantise.find_palette`'s `on_sources`) keeps it as it is
    at any size: its faint stars and the halos of its galaxies are specks of a few dozen
    pixels at 3 MP, which the scaled area (96) merged into the sky (the Hubble deep field
    at 3 MP: ΔE2000 at 1x 2.57 at 96 pixels, 2.52 at 48, 2.46 at 32; vtracer's default
    2.49). O(1)."""
    if not photo or sources or pixels <= SPECK_SCALE_PIXELS:
        return SPECK_AREA
    return round(SPECK_AREA * pixels / SPECK_SCALE_PIXELS)


def texture(near: npt.NDArray[np.bool_] | None, flat_share: float) -> bool:
    """Whether a photo (a dense palette, `near`) is texture (`TEXTURE_FLAT`). O(1)."""
    return near is not None and flat_share < TEXTURE_FLAT


def may_merge(
    apart: npt.NDArray[np.floating[Any]], size: npt.NDArray[np.integer[Any]], texture: bool
) -> npt.NDArray[np.bool_]:
    """Which specks of a photo's dense palette may merge, given the CIEDE2000 from each
    speck's mean colour to the neighbour it would join (`apart`) and its pixels (`size`):
    those within `SPECK_REACH`, and in `texture` only while the error added is within
    `TEXTURE_BUDGET`; specks of `SPECK_TINY` pixels or fewer always. O(n)."""
    ok = apart <= SPECK_REACH
    if texture:
        ok &= apart * size <= TEXTURE_BUDGET
    out: npt.NDArray[np.bool_] = ok | (size <= SPECK_TINY)
    return out


def photo_like(
    labels: IntArray,
    noise: float,
    comps: Components | None = None,
    keep: npt.NDArray[np.bool_] | None = None,
) -> bool:
    """Whether the label map looks like a photo or scan rather than flat art: noisy input,
    or many small components (flat art has a few thin strokes and dots, a photo
    thousands of specks). Images under `SPECK_MIN_PIXELS` are never photo-like: every
    pixel of a thumbnail or an icon matters. `comps` are the map's components when the
    caller has them (`clean_speckles`). Components holding a pixel of `keep` (strokes,
    letters and dots, `detail.detail_mask`) are art, not specks, and are not counted.
    Cost: O(n), or one `label_components`, O(N); O(N) more with `keep`."""
    if labels.size < SPECK_MIN_PIXELS:
        return False
    if noise >= PHOTO_NOISE:
        return True
    if comps is None:
        comps = label_components(labels)
    counted = comps.label >= 0
    counted[comps.to_id[_kept_base(comps, keep)]] = False
    size = comps.size[counted]
    small = int(((size > 0) & (size < SPECK_AREA)).sum())
    return small * 1000 >= BUSY_SMALL * labels.size


def _component_pairs(
    comps: Components, current: tuple[IntArray, IntArray], small: npt.NDArray[np.bool_]
) -> Int64Array:
    """The distinct (small component, 4-neighbouring component) pairs of the listed
    pixels whose `_current_ids` are `current`, sorted. Cost: O(S) for the S listed
    pixels."""
    cur, q = current
    m = small[cur][:, None] & (q > 0) & (q != cur[:, None])
    ca = np.broadcast_to(cur[:, None], m.shape)[m].astype(np.int64)
    if len(ca) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    span = comps.count
    key = sorted_unique(ca * span + q[m])
    return np.stack([key // span, key % span], axis=1)


def merge_specks(
    labels: IntArray,
    rgb: npt.NDArray[np.uint8],
    palette: npt.NDArray[np.floating[Any]],
    max_size: int = SPECK_AREA,
    passes: int = SPECK_PASSES,
    keep_every_colour: bool = False,
    keep: npt.NDArray[np.bool_] | None = None,
    tick: Callable[[], None] | None = None,
    near: npt.NDArray[np.bool_] | None = None,
    texture: bool = False,
    one_pass: bool = False,
) -> IntArray:
    """Speck filter for photo-like input (what vtracer's filter_speckle does): every
    component under `max_size` pixels joins the neighbouring component whose colour is
    nearest its mean colour. Given a photo's dense palette (`near`, from
    `colour_count.near_equal`) a speck of more than `SPECK_TINY` pixels whose mean colour
    is over `SPECK_REACH` from that neighbour's stays: it is detail of its own (an eye,
    a crease), not a quantisation speck; with a few distinct colours every speck joins,
    whatever its colour; in a photo of `texture` a speck also stays when merging it would
    cost more than `TEXTURE_BUDGET` (`may_merge`). Only applied to photo-like input
    (`photo_like`), so flat art keeps its thin strokes, dots and small text. A speck only
    joins a neighbour that is big, or bigger than itself (ties by id), so two neighbouring
    specks never swap colours. With `keep_every_colour` (an exact count was asked for)
    each colour's largest component stays, and components holding a pixel of `keep`
    (strokes and dots, `detail.detail_mask`) stay. Cost: one `label_components`, O(N);
    then per pass O(S) for the S pixels of components under `max_size` (listed once; the
    list only shrinks) and O(n log n) for n components (`_merge`). With `one_pass` (the
    caller's `specks_in_one_pass`: this filter decides every speck) it ends with
    `AFTER_SPECKS_PASSES` mode-filter passes.
    """
    comps = label_components(labels)
    flat_rgb = pixel_rows(rgb)
    kept_base = _kept_base(comps, keep)
    palette_lab = srgb_to_lab(np.asarray(palette, dtype=np.float64)) if near is not None else None
    pixels: _Pixels | None = None
    for _ in range(passes):
        if tick is not None:
            tick()  # a cancel check per pass
        n, size, comp_label = comps.count, comps.size, comps.label
        under = (size < max_size) & (comp_label >= 0)
        small = under.copy()
        small[comps.to_id[kept_base]] = False
        if keep_every_colour:
            # An exact colour count was asked for: each colour's largest component stays.
            ids = np.flatnonzero(comp_label >= 0)
            order = ids[np.lexsort((-size[ids], comp_label[ids]))]
            head = np.ones(len(order), dtype=bool)
            head[1:] = comp_label[order][1:] != comp_label[order][:-1]
            small[order[head]] = False
        if not small.any():
            break
        # Listed: every component under `max_size`, also a colour's protected largest one,
        # which a later pass may free. Components only grow, so the list only shrinks.
        if pixels is None:
            pixels = _pixels_of(comps, under)
        else:
            pixels = pixels.subset(under[comps.to_id[pixels.base]])
        current = _current_ids(comps, pixels)
        cur = current[0]
        pairs = _component_pairs(comps, current, small)
        if len(pairs) == 0:
            break
        c, g = pairs[:, 0], pairs[:, 1]
        ok = (comp_label[g] >= 0) & (
            ~small[g] | (size[g] > size[c]) | ((size[g] == size[c]) & (g < c))
        )
        c, g = c[ok], g[ok]
        if len(c) == 0:
            break
        sums = np.stack(
            [np.bincount(cur, flat_rgb[pixels.at, ch], minlength=n) for ch in range(3)], axis=1
        )
        mean = sums / np.maximum(size, 1)[:, None]
        off = mean[c] - palette[comp_label[g]]
        d = (off * off).sum(axis=1)
        # Pairs are sorted by (c, g), so ties in d go to the smaller id g.
        best, _ = _two_nearest(c, d, second=False)
        if palette_lab is not None:
            # Specks of `SPECK_TINY` pixels merge whatever their colour: only the larger
            # ones are measured.
            ok = size[c[best]] <= SPECK_TINY
            judged = best[~ok]
            apart = ciede2000(srgb_to_lab(mean[c[judged]]), palette_lab[comp_label[g[judged]]])
            ok[~ok] = may_merge(apart, size[c[judged]], texture)
            best = best[ok]
        new_label = comp_label.copy()
        new_label[c[best]] = comp_label[g[best]]
        comps = _merge(comps, new_label, pixels, current)
    out = comps.labels()
    if one_pass:
        out = majority_smooth(
            out, AFTER_SPECKS_PASSES, keep_every_colour=keep_every_colour, keep=keep, near=near
        )
    return out


def join_lone_pixels(
    labels: IntArray, rgb: npt.NDArray[np.uint8], palette: npt.NDArray[np.floating[Any]]
) -> IntArray:
    """A photo's lone pixels (no 4-neighbour of their label: sensor noise on a dark sky,
    JPEG speckle) joined to the 4-neighbour whose colour is nearest their own, among the
    neighbours that are not lone themselves, in one whole-image pass; a pixel all of whose
    neighbours are lone stays. What the speck filters do later to one-pixel specks
    (`SPECK_TINY`: they merge whatever their colour), done before the specks are counted
    against `bounds.MAX_SPECK_PIXELS`, so a noisy photo is cleaned rather than refused.
    Noise that is nothing but lone pixels (random noise, a 1-px checkerboard) has few
    neighbours that are not lone, keeps its specks and is still refused. Cost: O(N) with
    a few int32 and float32 temporaries the size of the image."""
    height, width = labels.shape
    paired = bounds.paired_pixels(labels)
    ys, xs = np.nonzero(~paired & (labels >= 0))
    if len(ys) == 0:
        return labels
    own = rgb[ys, xs, :3].astype(np.float32)
    lab32 = np.asarray(palette, dtype=np.float32)
    best_label = np.full(len(ys), -1, dtype=np.int32)
    best_d = np.full(len(ys), np.inf, dtype=np.float32)
    for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        ny, nx = ys + dy, xs + dx
        inside = (ny >= 0) & (ny < height) & (nx >= 0) & (nx < width)
        ny, nx = np.where(inside, ny, ys), np.where(inside, nx, xs)
        other = labels[ny, nx]
        usable = inside & paired[ny, nx] & (other >= 0)
        off = lab32[np.maximum(other, 0)] - own
        d = np.where(usable, (off * off).sum(axis=1), np.inf).astype(np.float32)
        better = d < best_d
        best_d = np.where(better, d, best_d)
        best_label = np.where(better, other, best_label)
    moved = best_label >= 0
    out = labels.copy()
    out[ys[moved], xs[moved]] = best_label[moved]
    return out


def _kept_base(comps: Components, keep: npt.NDArray[np.bool_] | None) -> Int64Array:
    """The base ids (see `Components`) of the components holding a pixel of `keep`;
    their current ids are `comps.to_id[...]` of these after any merge. O(N)."""
    if keep is None:
        return np.zeros(0, dtype=np.int64)
    out: Int64Array = sorted_unique(comps.base[keep]).astype(np.int64)
    return out


def _box3(
    mask: npt.NDArray[np.bool_],
    row: npt.NDArray[np.uint8] | None = None,
    out: npt.NDArray[np.uint8] | None = None,
) -> npt.NDArray[np.uint8]:
    """Set pixels in each pixel's 3x3 window (truncated at the border), as uint8. `row` and
    `out` are scratch and result arrays of the mask's shape to reuse. O(N)."""
    m = mask.view(np.uint8)
    row = np.empty_like(m) if row is None else row
    out = np.empty_like(m) if out is None else out
    np.add(m[:, 1:], m[:, :-1], out=row[:, 1:])
    row[:, 0] = m[:, 0]
    row[:, :-1] += m[:, 1:]
    np.add(row[1:], row[:-1], out=out[1:])
    out[0] = row[0]
    out[:-1] += row[1:]
    return out


def majority_smooth(
    labels: IntArray,
    passes: int = SMOOTH_PASSES,
    keep_every_colour: bool = False,
    keep: npt.NDArray[np.bool_] | None = None,
    tick: Callable[[], None] | None = None,
    near: npt.NDArray[np.bool_] | None = None,
) -> IntArray:
    """Mode filter for photo-like input: a pixel takes the label most common in its 3x3
    window when that label outnumbers its own, so the ragged boundaries between the
    near-equal colours of a photo's quantised gradients straighten out (far fewer
    corners and segments to trace). Given a photo's dense palette (`near`, from
    `colour_count.near_equal`), a pixel only ever takes a near-equal colour: the border
    between colours visibly apart (a face's contour, an eye's rim) is the photo's own,
    and moving it by a pixel is an error of the full difference. With `keep_every_colour`
    a colour it would wipe out entirely keeps its pixels, and pixels of `keep` (strokes and dots,
    `detail.detail_mask`) keep theirs: the filter would thin 1-px strokes away. Only for
    photo-like input (`photo_like`). `tick`, a cancel check, is called every
    `LABELS_PER_CHECK` labels. Cost: O(N K) uint8 window sums for K labels."""
    out = labels
    for _ in range(passes):
        smoothed = _majority(out, tick)
        if near is not None:
            smoothed = np.where(near[out, smoothed], smoothed, out).astype(np.int32)
        out = smoothed
        if keep is not None:
            out = np.where(keep, labels, out).astype(np.int32)
    if keep_every_colour:
        # An exact colour count was asked for: a colour the filter wiped out comes back.
        # Putting one colour back may wipe out another that survived only there; repeat.
        k = int(labels.max()) + 1
        before = np.bincount(labels[labels >= 0], minlength=k) > 0
        for _ in range(8):
            after = np.bincount(out[out >= 0], minlength=k) > 0
            lost = np.flatnonzero(before & ~after)
            if len(lost) == 0:
                return out
            out = np.where(np.isin(labels, lost), labels, out).astype(np.int32)
        return labels
    return out


def _majority(labels: IntArray, tick: Callable[[], None] | None = None) -> IntArray:
    """One mode-filter pass (see `majority_smooth`). Ties go to the smaller label. Labels
    are compared as int8 (int16 for over 126 colours), the window sums use two reused
    uint8 arrays, and the running winner is updated with masked copies rather than
    boolean indexing. Cost: about ten whole-image byte operations per label present."""
    k = int(labels.max()) + 1
    if k <= 1:
        return labels
    present = np.flatnonzero(np.bincount(labels.ravel() + 1, minlength=k + 1)) - 1
    if len(present) > WINDOW_LABELS:
        return _majority_by_window(labels, tick)
    narrow = labels.astype(np.int8 if k < 127 else np.int16)
    best = np.zeros(labels.shape, dtype=np.uint8)
    winner = narrow.copy()
    own = np.zeros(labels.shape, dtype=np.uint8)
    row = np.empty(labels.shape, dtype=np.uint8)
    count = np.empty(labels.shape, dtype=np.uint8)
    hit = np.empty(labels.shape, dtype=bool)
    better = np.empty(labels.shape, dtype=bool)
    for done, value in enumerate(present):
        if tick is not None and done % LABELS_PER_CHECK == 0:
            tick()
        np.equal(narrow, value, out=hit)
        _box3(hit, row, count)
        np.greater(count, best, out=better)
        np.copyto(winner, value, where=better)
        np.maximum(best, count, out=best)
        np.copyto(own, count, where=hit)
    return np.where(best > own, winner, labels).astype(np.int32)


def _majority_by_window(labels: IntArray, tick: Callable[[], None] | None = None) -> IntArray:
    """One mode-filter pass as `_majority` makes it (the window's most common label when it
    outnumbers the pixel's own, ties to the smaller label, the window truncated at the
    border), counted per window position. Outside the image is a label no pixel has,
    counted for none.

    1. Settled: a pixel whose label holds at least `SETTLED` of its nine window pixels
       keeps it (no other label can outnumber it): eight whole-image compares of the
       centre with its neighbours. Most of a smoothed photo is settled (Grace Hopper at
       3 MP: 93 % of its pixels, in the first pass).
    2. The rest, in blocks of `WINDOW_BLOCK`, have their nine window labels gathered and
       each compared with the other eight (`_window_winner`). When over half the image
       is unsettled (2 x 2 blocks of random colours), the nine labels are compared over
       the whole image instead (`_window_winner` on whole-image views), which costs less
       than gathering.
    Cost: O(8 N) byte compares plus O(81 M) for the M unsettled pixels; temporaries of a
    few bytes a pixel."""
    height, width = labels.shape
    kind = np.int8 if int(labels.max(initial=0)) < np.iinfo(np.int8).max else np.int16
    padded = np.full((height + 2, width + 2), _OUTSIDE, dtype=kind)
    padded[1:-1, 1:-1] = labels
    views = [padded[dy : dy + height, dx : dx + width] for dy in range(3) for dx in range(3)]
    own = np.ones(labels.shape, dtype=np.uint8)
    hit = np.empty(labels.shape, dtype=bool)
    for j, view in enumerate(views):
        if j != _CENTRE:
            np.equal(view, views[_CENTRE], out=hit)
            own += hit.view(np.uint8)
    unsettled = np.flatnonzero(own < SETTLED)
    del own, hit
    out = labels.astype(np.int32, copy=True)
    if 2 * len(unsettled) > labels.size:
        winner, change = _window_winner(views, tick)
        np.copyto(out, winner, where=change)
        return out
    flat_out = out.reshape(-1)
    flat_padded = padded.reshape(-1)
    steps = np.array([dy * (width + 2) + dx for dy in range(3) for dx in range(3)])
    for start in range(0, len(unsettled), WINDOW_BLOCK):
        if tick is not None:
            tick()
        at = unsettled[start : start + WINDOW_BLOCK]
        # The pixel's place in the padded map is its window's top-left corner.
        corner = at + 2 * (at // width)
        window = [flat_padded[corner + step] for step in steps]
        winner, change = _window_winner(window, None)
        flat_out[at[change]] = winner[change]
    return out


#: A label holding this many of a pixel's nine window pixels cannot be outnumbered.
SETTLED = 5
#: Unsettled pixels handled at once by `_majority_by_window`: bounds its gathered windows
#: to a few MB whatever the image.
WINDOW_BLOCK = 1 << 18
_OUTSIDE = -2
_CENTRE = 4


def _window_winner(
    views: list[npt.NDArray[Any]], tick: Callable[[], None] | None
) -> tuple[npt.NDArray[Any], npt.NDArray[np.bool_]]:
    """The mode filter's choice for pixels given their nine window labels (`views`, in
    raster order of the window; `_OUTSIDE` off the image): the most common label (of two
    as common, the smaller) and whether it outnumbers the centre's own. Each of the nine
    labels is compared with the other eight: 81 compares and byte adds per pixel, whatever
    the number of colours. O(81 M) for M pixels."""
    shape = views[0].shape
    best_count = np.zeros(shape, dtype=np.uint8)
    winner = np.empty(shape, dtype=views[0].dtype)
    count = np.empty(shape, dtype=np.uint8)
    hit = np.empty(shape, dtype=bool)
    better = np.empty(shape, dtype=bool)
    own = np.empty(shape, dtype=np.uint8)
    for j, view in enumerate(views):
        if tick is not None and j % 3 == 0:
            tick()
        count.fill(0)
        for other in views:
            np.equal(view, other, out=hit)
            count += hit.view(np.uint8)
        np.copyto(count, 0, where=view == _OUTSIDE)
        if j == _CENTRE:
            own[...] = count
        # The most common label; of two as common, the smaller.
        np.greater(count, best_count, out=better)
        better |= (count == best_count) & (view < winner) & (count > 0)
        np.copyto(winner, view, where=better)
        np.maximum(best_count, count, out=best_count)
    change: npt.NDArray[np.bool_] = best_count > own
    return winner, change
