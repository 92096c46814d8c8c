"""Label clean-up: merge speckles (noise, stray anti-aliasing) into their best neighbour.

A component is a speckle only when it is small *and* its pixels do not really have its
colour: their mean colour is off the palette colour, or it is a mixture of the colours
around it. A 1-px stroke, a 3x3 dot or small text in a true palette colour is kept whatever
its size; in noisy input (JPEG, scans, photos) components of up to `NOISY_SPECKLE` pixels
are never trusted on their own.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import ndimage, sparse
from scipy.sparse import csgraph

from printjob_adapters.engine.colour import srgb_to_lab
from printjob_adapters.engine.quantise import RINGING_REACH, segment_residual

IntArray = npt.NDArray[np.int32]

#: Components up to this many pixels are examined as possible speckles.
SPECKLE_MAX = 12
#: Up to this many colours, components are labelled colour by colour.
PER_COLOUR_BOXES = 4
#: Noise level (`PixelMaps.noise`) above which the tiniest components are always merged.
NOISY = 4.0
#: In noisy input (JPEG, scans, photos), components this small are never trusted on their own.
NOISY_SPECKLE = 4


def components(labels: IntArray) -> tuple[IntArray, int]:
    """4-connected components of equal labels; id 0 holds all -1 pixels.

    Few colours (up to `PER_COLOUR_BOXES`): `ndimage.label` per colour inside its bounding
    box, O(sum of box areas). More: one `ndimage.label` over a doubled grid whose odd cells
    link two neighbours exactly when their labels agree (as `boundaries.label_faces`),
    O(4 N) whatever the palette size.
    """
    k = int(labels.max()) + 1
    if k > PER_COLOUR_BOXES:
        return _components_grid(labels)
    comp = np.zeros(labels.shape, dtype=np.int32)
    next_id = 1
    for value, box in enumerate(ndimage.find_objects(labels + 1)):
        if box is None:
            continue
        mask = labels[box] == value
        lab, n = ndimage.label(mask)
        view = comp[box]
        view[mask] = lab[mask] + (next_id - 1)
        next_id += n
    return comp, next_id


def _components_grid(labels: IntArray) -> tuple[IntArray, int]:
    h, w = labels.shape
    inside = labels >= 0
    grid = np.zeros((2 * h - 1, 2 * w - 1), dtype=bool)
    grid[::2, ::2] = inside
    grid[::2, 1::2] = (labels[:, 1:] == labels[:, :-1]) & inside[:, 1:]
    grid[1::2, ::2] = (labels[1:, :] == labels[:-1, :]) & inside[1:, :]
    ids, count = ndimage.label(grid)
    return ids[::2, ::2].astype(np.int32), int(count) + 1


def _components_graph(labels: IntArray) -> tuple[IntArray, int]:
    h, w = labels.shape
    idx = np.arange(h * w, dtype=np.int64).reshape(h, w)
    right = (labels[:, :-1] == labels[:, 1:]) & (labels[:, :-1] >= 0)
    down = (labels[:-1, :] == labels[1:, :]) & (labels[:-1, :] >= 0)
    src = np.concatenate([idx[:, :-1][right], idx[:-1, :][down]])
    dst = np.concatenate([idx[:, 1:][right], idx[1:, :][down]])
    graph = sparse.coo_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(h * w,) * 2)
    n, comp = csgraph.connected_components(graph, directed=False)
    comp = comp.reshape(h, w).astype(np.int32) + 1
    comp[labels < 0] = 0
    return comp, int(n) + 1


def _neighbour_pairs(
    labels: IntArray, comp: IntArray, small: npt.NDArray[np.bool_]
) -> npt.NDArray[np.int64]:
    """Distinct (component, neighbouring label) pairs for the small components. Cost: O(N)."""
    out = []
    for a, b in (
        (np.s_[:, :-1], np.s_[:, 1:]),
        (np.s_[:, 1:], np.s_[:, :-1]),
        (np.s_[:-1, :], np.s_[1:, :]),
        (np.s_[1:, :], np.s_[:-1, :]),
    ):
        ca, lb, la = comp[a], labels[b], labels[a]
        m = small[ca] & (lb >= 0) & (lb != la)
        out.append(np.stack([ca[m], lb[m]], axis=1))
    pairs = np.concatenate(out).astype(np.int64)
    if len(pairs) == 0:
        return pairs.reshape(0, 2)
    span = int(pairs[:, 1].max()) + 1
    key = np.unique(pairs[:, 0] * span + pairs[:, 1])
    return np.stack([key // span, key % span], axis=1)


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
    """Clean-up step: merge speckle components into the neighbour nearest their colour.

    With `keep_every_colour` (an exact count was asked for) each colour keeps at least its
    largest component. Cost per pass: one connected-components run and a few bincounts, O(N).
    """
    labels = labels.copy()
    flat_rgb = rgb.reshape(-1, 3)
    for _ in range(passes):
        comp, n = components(labels)
        cflat = comp.ravel()
        size = np.bincount(cflat, minlength=n)
        comp_label = np.full(n, -1, dtype=np.int32)
        comp_label[cflat] = labels.ravel()
        small = (size <= SPECKLE_MAX) & (comp_label >= 0)
        if not small.any():
            break
        pairs = _neighbour_pairs(labels, comp, small)
        if len(pairs) == 0:
            break
        sel = np.flatnonzero(small[cflat])
        sums = np.stack(
            [np.bincount(cflat[sel], flat_rgb[sel, c], minlength=n) for c in range(3)], axis=1
        )
        mean = sums / np.maximum(size, 1)[:, None]
        c_ids, nb = pairs[:, 0], pairs[:, 1]
        # Best neighbour: nearest in sRGB, the same rule that assigns anti-aliased pixels.
        d_nb = ((mean[c_ids] - palette[nb]) ** 2).sum(axis=1)
        order = np.lexsort((d_nb, c_ids))
        first = np.ones(len(order), dtype=bool)
        first[1:] = c_ids[order][1:] != c_ids[order][:-1]
        best = order[first]
        cid, target = c_ids[best], nb[best]
        # Second-nearest neighbour colour, for the "mixture of its surroundings" test.
        second_ok = np.zeros(len(order), dtype=bool)
        second_ok[:-1] = first[1:] == 0
        second_ok &= first
        second = np.full(len(cid), -1)
        pos = np.flatnonzero(first)
        has2 = second_ok[pos]
        second[has2] = nb[order[pos[has2] + 1]]

        m = mean[cid]
        own = palette[comp_label[cid]]
        d_own = np.linalg.norm(srgb_to_lab(m) - srgb_to_lab(own), axis=1)
        off_colour = d_own > point_tol
        res, t = segment_residual(m, palette[target], palette[np.maximum(second, 0)], split)
        mixture = (second >= 0) & (res < mix_tol) & (t > 0.05) & (t < 0.95)
        lone = (size[cid] <= NOISY_SPECKLE) & (noise >= NOISY)
        # Within mixing reach of the colour around it: a ringing or noise blotch, not a feature.
        faint = np.linalg.norm(m - palette[target], axis=1) <= RINGING_REACH * mix_tol
        merge = off_colour | mixture | lone | faint
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
        remap = comp_label.copy()
        remap[cid[merge]] = target[merge]
        labels = remap[comp]
    return labels


#: Photo-like input (noise at least this, see `PixelMaps.noise`) gets the speck filter.
PHOTO_NOISE = 8.0
#: ... as does input with at least this many small components per 1000 pixels.
BUSY_SMALL = 2.0
#: Components smaller than this (pixels) are specks in photo-like input.
SPECK_AREA = 32
#: Mode-filter passes for photo-like input.
SMOOTH_PASSES = 2
#: Images with fewer pixels than this never get the speck filter.
SPECK_MIN_PIXELS = 64 * 64
#: Merge rounds of the speck filter (a speck merged into a speck grows each round).
SPECK_PASSES = 4


def photo_like(labels: IntArray, noise: float) -> bool:
    """Whether the label map looks like a photo or scan rather than flat art: noisy input,
    or many small components (flat art has a few thin strokes and dots, a photo
    thousands of specks). Images under `SPECK_MIN_PIXELS` are never photo-like: every
    pixel of a thumbnail or an icon matters. Cost: one connected-components run, O(N)."""
    if labels.size < SPECK_MIN_PIXELS:
        return False
    if noise >= PHOTO_NOISE:
        return True
    comp, n = components(labels)
    size = np.bincount(comp.ravel(), minlength=n)
    size[0] = 0
    small = int(((size > 0) & (size < SPECK_AREA)).sum())
    return small * 1000 >= BUSY_SMALL * labels.size


def _component_pairs(comp: IntArray, small: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """Distinct (small component, 4-neighbouring component) pairs. Cost: O(N)."""
    out = []
    for a, b in (
        (np.s_[:, :-1], np.s_[:, 1:]),
        (np.s_[:, 1:], np.s_[:, :-1]),
        (np.s_[:-1, :], np.s_[1:, :]),
        (np.s_[1:, :], np.s_[:-1, :]),
    ):
        ca, cb = comp[a], comp[b]
        m = small[ca] & (cb > 0) & (cb != ca)
        out.append(np.stack([ca[m], cb[m]], axis=1))
    pairs = np.concatenate(out).astype(np.int64)
    if len(pairs) == 0:
        return pairs.reshape(0, 2)
    span = int(comp.max()) + 1
    key = np.unique(pairs[:, 0] * span + pairs[:, 1])
    return np.stack([key // span, key % span], axis=1)


def merge_specks(
    labels: IntArray,
    rgb: npt.NDArray[np.uint8],
    palette: npt.NDArray[np.floating[Any]],
    max_size: int = SPECK_AREA,
    passes: int = SPECK_PASSES,
    keep_every_colour: bool = False,
) -> IntArray:
    """Speck filter for photo-like input (what vtracer's filter_speckle does): every
    component under `max_size` pixels joins the neighbouring component whose colour is
    nearest its mean colour, whatever its own colour. Only applied to photo-like input
    (`photo_like`), so flat art keeps its thin strokes, dots and small text. A speck
    only joins a neighbour that is big, or bigger than itself (ties by id), so two
    neighbouring specks never swap colours. With `keep_every_colour` (an exact count
    was asked for) each colour's largest component stays. Cost per pass: one
    connected-components run and a few bincounts, O(N).
    """
    labels = labels.copy()
    flat_rgb = rgb.reshape(-1, 3)
    for _ in range(passes):
        comp, n = components(labels)
        cflat = comp.ravel()
        size = np.bincount(cflat, minlength=n)
        comp_label = np.full(n, -1, dtype=np.int32)
        comp_label[cflat] = labels.ravel()
        small = (size < max_size) & (comp_label >= 0)
        small[0] = False
        if keep_every_colour:
            # An exact colour count was asked for: each colour's largest component stays.
            ids = np.flatnonzero(comp_label >= 0)
            order = ids[np.lexsort((-size[ids], comp_label[ids]))]
            head = np.ones(len(order), dtype=bool)
            head[1:] = comp_label[order][1:] != comp_label[order][:-1]
            small[order[head]] = False
        if not small.any():
            break
        pairs = _component_pairs(comp, small)
        if len(pairs) == 0:
            break
        c, g = pairs[:, 0], pairs[:, 1]
        ok = (comp_label[g] >= 0) & (
            ~small[g] | (size[g] > size[c]) | ((size[g] == size[c]) & (g < c))
        )
        c, g = c[ok], g[ok]
        if len(c) == 0:
            break
        sel = np.flatnonzero(small[cflat])
        sums = np.stack(
            [np.bincount(cflat[sel], flat_rgb[sel, ch], minlength=n) for ch in range(3)], axis=1
        )
        mean = sums / np.maximum(size, 1)[:, None]
        off = mean[c] - palette[comp_label[g]]
        d = (off * off).sum(axis=1)
        order = np.lexsort((g, d, c))
        first = np.ones(len(order), dtype=bool)
        first[1:] = c[order][1:] != c[order][:-1]
        best = order[first]
        remap = comp_label.copy()
        remap[c[best]] = comp_label[g[best]]
        labels = remap[comp]
    return labels


def _box3(mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint8]:
    """Set pixels in each pixel's 3x3 window (truncated at the border), as uint8. O(N)."""
    m = mask.view(np.uint8)
    row = m.copy()
    row[:, 1:] += m[:, :-1]
    row[:, :-1] += m[:, 1:]
    out = row.copy()
    out[1:] += row[:-1]
    out[:-1] += row[1:]
    return out


def majority_smooth(
    labels: IntArray, passes: int = SMOOTH_PASSES, keep_every_colour: bool = False
) -> IntArray:
    """Mode filter for photo-like input: a pixel takes the label most common in its 3x3
    window when that label outnumbers its own, so the ragged boundaries between the
    near-equal colours of a photo's quantised gradients straighten out (far fewer
    corners and segments to trace). With `keep_every_colour` a colour it would wipe
    out entirely keeps its pixels. Only for photo-like input (`photo_like`): it would
    thin 1-px strokes. Cost: O(N K) uint8 window sums for K labels."""
    out = labels
    for _ in range(passes):
        out = _majority(out)
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


def _majority(labels: IntArray) -> IntArray:
    """One mode-filter pass (see `majority_smooth`)."""
    k = int(labels.max()) + 1
    if k <= 1:
        return labels
    best = np.zeros(labels.shape, dtype=np.uint8)
    winner = labels.copy()
    own = np.zeros(labels.shape, dtype=np.uint8)
    for value in range(-1, k):
        hit = labels == value
        if not hit.any():
            continue
        count = _box3(hit)
        better = count > best
        best[better] = count[better]
        winner[better] = value
        own[hit] = count[hit]
    return np.where(best > own, winner, labels).astype(np.int32)
