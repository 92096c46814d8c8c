"""Pixel art: a pixel grid found in the image, and the image traced on it.

Pixel art blown up (a sprite drawn 12x, nearest) is a grid of square cells of one colour
each. Traced as an ordinary image, JPEG noise makes its cells blotchy and the curve fitter
rounds every cell corner; traced on its grid, each cell is one colour and every edge a
straight, axis-aligned line with its corners on the grid.

`detect_grid` finds the cell size and the grid's phase from where the image changes:
the colour differences between neighbouring columns (and rows), summed over the whole
image, fall on grid lines only, so folding that profile modulo the right cell size puts
almost all of it in one phase. Divisors of the cell fold as well, multiples do not, so the
largest cell that folds nearly as well as the best is taken, and accepted only when every
cell of it really is one colour (`_uniform`), which JPEG noise (q55 to q85) passes and a
logo or a photo, whose edges cross cells, does not.

`trace_grid` then takes each cell's colour (the mean of its inner pixels: JPEG rings
along cell edges), segments that small image with the ordinary colour steps
(`segmentation.segment`), and emits each layer's outline as polygons along cell edges,
mapped back to image pixels; layers are stacked as in `stacking`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import numpy.typing as npt

from printjob_adapters.engine.boundaries import DX, DY, BoundaryGraph, build_boundary_graph
from printjob_adapters.engine.curves import FittedEdges
from printjob_adapters.engine.stacking import layer_outline, outline_edges, stack_layers
from printjob_adapters.engine.vector import Layer, VectorArt

if TYPE_CHECKING:
    from printjob_adapters.engine.options import Background
    from printjob_adapters.engine.progress import Checkpoint

#: Smallest and largest cell (input pixels per art pixel) looked for.
MIN_CELL = 3
MAX_CELL = 64
#: Most cells (art pixels) a sprite has: a larger grid is an image in its own right and
#: is traced as one (the polygons are built edge by edge).
MAX_CELLS = 256 * 256
#: Fewest cells across and down an image must have to be pixel art.
MIN_CELLS = 4
#: Least share of the image's change that must fall on the grid lines.
ON_GRID = 0.6
#: A larger cell is taken over the best-folding one when it folds at least this well.
NEAR_BEST = 0.8
#: Pixels per side each cell is drawn with for the colour steps (`trace_grid`), at most
#: the cell: enough interior for the colour steps to weigh a lone cell as an area.
BLOCK = 8
#: Largest ratio of the cells' colour spread to that of cells shifted by half a cell.
ALIGNED_SPREAD = 0.5
#: A cell's spread over this (sRGB, summed over channels) means an edge cuts it: JPEG
#: q55 noise in 5-px cells stays under 50, half a cell of another colour is far over.
CUT_SPREAD = 80.0
#: Share of cells allowed to be cut (a stray mark).
CUT_CELLS = 0.01
#: Grid lines carrying change needed along each axis, so a few aligned rectangles are not
#: mistaken for a grid.
MIN_LINES = 3


@attrs.frozen
class Grid:
    """Square cells of `cell` pixels; grid lines at x = `x0` + k·cell and y = `y0` + k·cell
    (0 <= x0, y0 < cell); cells cut by the image border are partial."""

    cell: int
    x0: int
    y0: int


@attrs.frozen(eq=False)
class RowChanges:
    """Where each row of an RGBA image changes: the raster index of every pixel whose four
    bytes differ from those of the pixel before it in its row, ascending (int64). Found
    by `detect_grid`'s change profiles; `quantise.distinct_colours` reads its colour runs
    from them instead of comparing every pixel again (a colour run starts only at such a
    pixel or at a row's first). Valid for that image only."""

    after: npt.NDArray[np.int64]


def detect_grid(rgba: npt.NDArray[np.uint8]) -> Grid | None:
    """The pixel grid of `rgba` (uint8 (H, W, 4)), or None for anything but pixel art
    (`detect_grid_and_changes`)."""
    return detect_grid_and_changes(rgba)[0]


def detect_grid_and_changes(
    rgba: npt.NDArray[np.uint8],
) -> tuple[Grid | None, RowChanges | None]:
    """The pixel grid of `rgba` (uint8 (H, W, 4)), or None for anything but pixel art;
    and the image's `RowChanges` when the profiles found them on the way (the few pixels
    that differ of flat art, `_sparse_change`), else None.

    Cost: the change profiles (`change_profiles`), O(N) over bytes; the folds
    O((W + H) × MAX_CELL); then, only when the change folds onto a grid (pixel art, or
    rarely art of aligned rectangles), a float copy of the image and the check of each
    candidate (rarely more than two), O(N) bincounts. An image whose change does not
    fold (every logo, photo and scan in the corpora: under half its change on any grid)
    costs the profiles and folds alone.
    """
    h, w = rgba.shape[:2]
    top = min(MAX_CELL, w // MIN_CELLS, h // MIN_CELLS)
    if top < MIN_CELL:
        return None, None
    # A sprite has at most `MAX_CELLS` art pixels; at the smallest cell a larger image
    # holds more than that, and only larger cells are looked for.
    least = max(MIN_CELL, int(np.ceil(np.sqrt(h * w / MAX_CELLS))))
    if least > top:
        return None, None
    across, down, changes = _profiles_and_changes(rgba)
    total = across.sum() + down.sum()
    if total <= 0:
        return None, changes
    cells = np.arange(least, top + 1)
    fold_x, fold_y = _folds((across, down), cells, top)
    phases = np.stack([np.argmax(fold_x, axis=1), np.argmax(fold_y, axis=1)], axis=1)
    share = (fold_x.max(axis=1) + fold_y.max(axis=1)) / total
    best = share.max()
    if best < ON_GRID:
        return None, changes
    px: npt.NDArray[np.float32] | None = None
    for i in np.flatnonzero(share >= max(ON_GRID, NEAR_BEST * best))[::-1]:
        grid = Grid(int(cells[i]), int(phases[i, 0]), int(phases[i, 1]))
        if not _enough_lines(grid, across, down):
            continue
        if px is None:
            px = _premultiplied(rgba)
        if _uniform(px, grid):
            return grid, changes
    return None, changes


def _folds(
    profiles: tuple[npt.NDArray[np.float64], ...], cells: npt.NDArray[np.int64], top: int
) -> list[npt.NDArray[np.float64]]:
    """The change of each profile (the grid line after pixel i - 1 at index i - 1) folded
    onto each cell size (`cells` consecutive, as `detect_grid` asks): row i holds, per
    phase p < cells[i], the change on the lines at p + k cells[i]; phases past the cell
    are -1, so a row's argmax and max are those of its fold. All cells in one weighted
    bincount, which adds each row's values in the order a bincount per cell would: the
    same sums. The phase of every (cell, line) is computed
    once per profile length and cell range (`_fold_index`, kept for the next image of
    that size). O(len(cells) × len(profile)) per profile."""
    m = len(cells)
    past = np.arange(top)[None, :] >= cells[:, None]
    out: list[npt.NDArray[np.float64]] = []
    for profile in profiles:
        index = _fold_index(len(profile), int(cells[0]), m, top)
        weights = np.broadcast_to(profile, (m, len(profile))).ravel()
        folds = np.asarray(np.bincount(index, weights, minlength=m * top), dtype=np.float64)
        folds = folds.reshape(m, top)
        folds[past] = -1.0
        out.append(folds)
    return out


@functools.lru_cache(maxsize=4)
def _fold_index(length: int, least: int, m: int, top: int) -> npt.NDArray[np.int64]:
    """The bincount index of `_folds` for a profile of `length` lines and the cells
    `least` .. `least` + m - 1: (cell i, line j) goes to i * top + (j + 1) % cell. It
    depends on the image's size alone, so images of one size (every 512-px upload) share
    it rather than recompute it (an integer modulo per (cell, line), most of the folds'
    cost). Read only. O(m × length) once per size."""
    cells = np.arange(least, least + m)
    lines = np.arange(1, length + 1)
    index = lines[None, :] % cells[:, None]
    index += (np.arange(m) * top)[:, None]
    flat = index.ravel()
    flat.flags.writeable = False
    return flat


#: Above this share of neighbouring pixel pairs that differ (photos, noise, busy art), the
#: change profiles of an image with transparency are summed over whole arrays; below it,
#: at the differing pairs alone (measured: the two cost the same near a quarter).
SPARSE_CHANGE = 0.25
#: The same for an opaque image, whose whole-array sums are over bytes and cheaper.
SPARSE_CHANGE_OPAQUE = 0.05


def change_profiles(
    rgba: npt.NDArray[np.uint8],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The change profiles alone (`_profiles_and_changes`)."""
    across, down, _ = _profiles_and_changes(rgba)
    return across, down


def _profiles_and_changes(
    rgba: npt.NDArray[np.uint8],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], RowChanges | None]:
    """The premultiplied RGBA change between neighbouring columns (W - 1,) and rows
    (H - 1,), summed over the image and the four channels: the profiles `detect_grid`
    folds. Computed in integers (no float copy of the image): on an opaque image the
    bytes themselves; else the colour channels times alpha (exact in uint16) and alpha's
    own bytes, the sums brought to one scale and divided by 255 at the end. A non-grid
    image is rejected on these profiles alone, so this is the whole cost for most inputs.

    Two pixels whose four bytes are equal have no change, premultiplied or not, so the
    pairs that differ are found first by one compare of 32-bit words per direction. Flat
    art differs at a few per cent of its pairs: their change is summed there alone
    (`_sparse_change`, the same integers); photos and noise, which differ almost
    everywhere, are summed over whole arrays (`_change_sums`).
    Cost: O(N): two compares of words, then O(D) for the D differing pairs, or six
    passes over the bytes (with transparency, six over the colour channels in uint16
    words and six over the alpha bytes). On the sparse path the pixels that differ from
    the one before them in their row are listed anyway, and are handed on
    (`RowChanges`); else None.
    """
    h, w, c = rgba.shape
    rows = np.ascontiguousarray(rgba)
    words = rows.view("<u4")[..., 0]
    opaque = words.size == 0 or int(words.min()) >= 0xFF000000
    differ_across = words[:, 1:] != words[:, :-1]
    differ_down = words[1:] != words[:-1]
    differing = np.count_nonzero(differ_across) + np.count_nonzero(differ_down)
    changes: RowChanges | None = None
    if differing <= (SPARSE_CHANGE_OPAQUE if opaque else SPARSE_CHANGE) * h * w:
        across, down, after = _sparse_change(
            rows.reshape(h * w, c), differ_across, differ_down, opaque
        )
        changes = RowChanges(after=after)
    elif opaque:
        flat_rows = rows.reshape(h, w * c)
        across = _change_sums(flat_rows, c, np.uint8)
        down = _change_sums(flat_rows, 0, np.uint8)
    else:
        alpha = np.ascontiguousarray(rgba[..., 3])
        colour = np.multiply(rgba[..., :3], alpha[..., None], dtype=np.uint16).reshape(h, w * 3)
        across = _change_sums(colour, 3, np.uint16) + 255 * _change_sums(alpha, 1, np.uint8)
        down = _change_sums(colour, 0, np.uint16) + 255 * _change_sums(alpha, 0, np.uint8)
    if opaque:
        return across.astype(np.float64), down.astype(np.float64), changes
    across_premultiplied: npt.NDArray[np.float64] = across / 255.0
    return across_premultiplied, down / 255.0, changes


def _sparse_change(
    pixels: npt.NDArray[np.uint8],
    differ_across: npt.NDArray[np.bool_],
    differ_down: npt.NDArray[np.bool_],
    opaque: bool,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The integer change profiles across (W - 1,) and down (H - 1,), as `_change_sums`
    sums them (the bytes' |difference| on an opaque image, else 255 times the
    premultiplied one), from the pixel pairs that differ: `differ_across` marks pair
    (y, x) of pixels y * W + x and the one after it, `differ_down` that and the one
    below. Both directions in one pass: the pairs' pixels gathered as float64 (every
    value, difference and sum here is an integer under 2^53, so exact), each pair's
    channels summed by one matrix product, and the pairs counted into one bincount, the
    columns first and the rows after them. Also returns the raster index of the second
    pixel of every pair across (the pixels that differ from the one before them in their
    row), ascending. O(D) for the D differing pairs."""
    h, w = differ_down.shape[0] + 1, differ_down.shape[1]
    at_across = np.flatnonzero(differ_across)
    ys, xs = np.divmod(at_across, max(w - 1, 1))
    at_down = np.flatnonzero(differ_down)
    first = np.concatenate((ys * w + xs, at_down))
    second = np.concatenate((first[: len(at_across)] + 1, at_down + w))
    # Gathered as 32-bit words (one index per pixel, not per byte), then split into bytes.
    words = pixels.view("<u4")[:, 0]
    word_a, word_b = words[first], words[second]
    a = word_a.view(np.uint8).reshape(-1, 4).astype(np.float64)
    b = word_b.view(np.uint8).reshape(-1, 4).astype(np.float64)
    if opaque:
        np.subtract(a, b, out=a)
        np.abs(a, out=a)
        change = a @ np.ones(a.shape[1])
    else:
        # Whole rows times their alpha (contiguous, unlike a column slice); the alpha
        # column, squared by it, is left out of the sum and counted as 255 |alpha change|.
        alpha_a = (word_a >> 24).astype(np.float64)
        alpha_b = (word_b >> 24).astype(np.float64)
        a *= alpha_a[:, None]
        b *= alpha_b[:, None]
        np.subtract(a, b, out=a)
        np.abs(a, out=a)
        change = a @ np.array([1.0, 1.0, 1.0, 0.0])
        np.subtract(alpha_a, alpha_b, out=alpha_a)
        np.abs(alpha_a, out=alpha_a)
        alpha_a *= 255.0
        change += alpha_a
    where = np.concatenate((xs, at_down // w + (w - 1)))
    sums = np.bincount(where, change, minlength=(w - 1) + (h - 1)).astype(np.int64)
    return sums[: w - 1], sums[w - 1 :], second[: len(at_across)]


def _change_sums(
    rows: npt.NDArray[np.unsignedinteger[Any]], shift: int, kind: type[np.unsignedinteger[Any]]
) -> npt.NDArray[np.int64]:
    """|difference| summed: between values `shift` apart along each row, summed down the
    columns and over the `shift` channels of a pixel (W - 1,), or with `shift` 0 between
    neighbouring rows, summed along each row (H - 1,). Unsigned sums are the cheapest;
    32 bits hold any column or row of an image within the decode limits, 64 bits are
    taken beyond that. O(N)."""
    h, n = rows.shape
    top = int(np.iinfo(kind).max) * max(h, n)
    total = np.uint32 if top < 1 << 32 else np.uint64
    if shift:
        step = np.maximum(rows[:, shift:], rows[:, :-shift])
        step -= np.minimum(rows[:, shift:], rows[:, :-shift])
        per_value = step.sum(axis=0, dtype=total)
        out: npt.NDArray[np.int64] = per_value.reshape(-1, shift).sum(axis=1, dtype=np.int64)
        return out
    step = np.maximum(rows[1:], rows[:-1])
    step -= np.minimum(rows[1:], rows[:-1])
    out = step.sum(axis=1, dtype=total).astype(np.int64)
    return out


def _premultiplied(rgba: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    out = rgba.astype(np.float32)
    out[..., :3] *= out[..., 3:4] / 255.0
    return out


def _enough_lines(
    grid: Grid, across: npt.NDArray[np.float64], down: npt.NDArray[np.float64]
) -> bool:
    """Whether at least `MIN_LINES` grid lines along each axis carry real change."""
    for profile, phase in ((across, grid.x0), (down, grid.y0)):
        on = profile[(np.arange(1, len(profile) + 1) % grid.cell) == phase]
        if len(on) == 0 or np.count_nonzero(on > 0.05 * on.max()) < MIN_LINES:
            return False
    return True


def _edges(length: int, cell: int, phase: int) -> npt.NDArray[np.int64]:
    """Cell boundaries along one axis: 0, the grid lines inside the image, `length`."""
    inner = np.arange(phase if phase > 0 else cell, length, cell)
    return np.concatenate([[0], inner, [length]]).astype(np.int64)


def _cell_index(length: int, edges: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The cell each pixel along the axis falls in."""
    out: npt.NDArray[np.int64] = np.searchsorted(edges, np.arange(length), side="right") - 1
    return out


def _inner(length: int, edges: npt.NDArray[np.int64], cell: int) -> npt.NDArray[np.bool_]:
    """Pixels not on a cell's outer ring (JPEG rings there), when cells are 4 or more."""
    keep = np.ones(length, dtype=bool)
    if cell >= 4:
        index = np.arange(length)
        cut = edges[1:-1]
        keep[np.isin(index, cut)] = False
        keep[np.isin(index, cut - 1)] = False
    return keep


def _cell_medians(
    values: npt.NDArray[np.float32], grid: Grid
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Each cell's colour ((rows, cols, C)): the mean of its inner pixels (JPEG rings on
    the outer ring, which is left out; partial cells with no inner pixel use all theirs),
    and each pixel's cell row and column. Bincounts, O(N)."""
    h, w, channels = values.shape
    ex = _edges(w, grid.cell, grid.x0)
    ey = _edges(h, grid.cell, grid.y0)
    col = _cell_index(w, ex)
    row = _cell_index(h, ey)
    rows, cols = len(ey) - 1, len(ex) - 1
    inner = _inner(h, ey, grid.cell)[:, None] & _inner(w, ex, grid.cell)[None, :]
    cell_id = row[:, None] * cols + col[None, :]
    n = rows * cols
    has_inner = np.bincount(cell_id[inner], minlength=n) > 0
    use = inner | ~has_inner[cell_id]
    ids = cell_id[use]
    counts = np.maximum(np.bincount(ids, minlength=n), 1)
    out = np.stack(
        [np.bincount(ids, values[..., ch][use], minlength=n) / counts for ch in range(channels)],
        axis=1,
    ).astype(np.float32)
    return out.reshape(rows, cols, channels), row, col


def _spread(px: npt.NDArray[np.float32], grid: Grid) -> npt.NDArray[np.float64]:
    """Per cell, the mean deviation (sRGB, summed over channels) of its inner pixels from
    their mean. O(N)."""
    medians, row, col = _cell_medians(px, grid)
    h, w = px.shape[:2]
    ex = _edges(w, grid.cell, grid.x0)
    ey = _edges(h, grid.cell, grid.y0)
    inner = _inner(h, ey, grid.cell)[:, None] & _inner(w, ex, grid.cell)[None, :]
    deviation = np.abs(px - medians[row[:, None], col[None, :]]).sum(axis=2)
    cols = medians.shape[1]
    cell_id = (row[:, None] * cols + col[None, :])[inner]
    n = medians.shape[0] * cols
    counts = np.bincount(cell_id, minlength=n)
    sums = np.bincount(cell_id, deviation[inner], minlength=n).astype(np.float64)
    spread: npt.NDArray[np.float64] = sums[counts > 0] / counts[counts > 0]
    return spread


def _uniform(px: npt.NDArray[np.float32], grid: Grid) -> bool:
    """Whether the cells are one colour each: their spread (`_spread`) is at most
    `ALIGNED_SPREAD` of the spread of the same cells shifted by half a cell, which
    straddle every edge of real pixel art. JPEG noise raises both alike; an image whose
    edges do not follow the grid straddles them either way. And no more than `CUT_CELLS`
    of the cells may be cut by an edge (spread over `CUT_SPREAD`): a circle drawn over
    grid-aligned rectangles is no pixel art."""
    half = grid.cell // 2
    shifted = Grid(grid.cell, (grid.x0 + half) % grid.cell, (grid.y0 + half) % grid.cell)
    aligned = _spread(px, grid)
    if np.count_nonzero(aligned > CUT_SPREAD) > CUT_CELLS * len(aligned):
        return False
    return float(aligned.mean()) <= ALIGNED_SPREAD * float(_spread(px, shifted).mean())


def trace_grid(
    rgba: npt.NDArray[np.uint8],
    grid: Grid,
    colors: int | None,
    background: Background,
    checkpoint: Checkpoint,
) -> VectorArt:
    """Trace pixel art on its grid: one colour per cell, polygons along cell edges.

    Cost: the cell colours, O(N); the colour steps on the cell image drawn in blocks (no
    more pixels than the input); outlines O(cells), at most `MAX_CELLS`."""
    from printjob_adapters.engine.segmentation import segment

    h, w = rgba.shape[:2]
    medians, _, _ = _cell_medians(rgba.astype(np.float32), grid)
    small = np.clip(np.rint(medians), 0, 255).astype(np.uint8)
    # Each cell drawn as a flat block of `BLOCK` pixels, so the colour steps see flat
    # areas (they judge colours by region interiors), then read back one per cell.
    # No more pixels than the input: at most the cell itself.
    block = min(BLOCK, grid.cell)
    blocks = np.repeat(np.repeat(small, block, axis=0), block, axis=1)
    segmentation = segment(blocks, colors, background, checkpoint)
    # Read at the block centres: a block's corner pixel may be a neighbour's diagonal
    # joint (`detail.bridge_corners`).
    middle = block // 2
    labels = np.ascontiguousarray(segmentation.labels[middle::block, middle::block], np.int32)
    palette = np.asarray(segmentation.palette, dtype=np.float64).reshape(-1, 3)
    removed = bool(segmentation.background_removed)
    if len(palette) == 0:
        return VectorArt(w, h, (), removed)
    graph = build_boundary_graph(labels)
    stacking = stack_layers(graph, len(palette))
    needed = outline_edges(graph, stacking.members)
    fitted = polygon_edges(
        graph, needed, _edges(w, grid.cell, grid.x0), _edges(h, grid.cell, grid.y0)
    )
    layers = []
    for k in stacking.order.tolist():
        red, green, blue = (int(v) for v in np.clip(np.rint(palette[k]), 0, 255))
        outline = layer_outline(graph, stacking.members[k], fitted)
        layers.append(Layer(color=(red, green, blue), commands=outline.commands(), outline=outline))
    checkpoint(1.0)
    return VectorArt(width=w, height=h, layers=tuple(layers), background_removed=removed)


def polygon_edges(
    graph: BoundaryGraph,
    edges: npt.NDArray[np.int64],
    xs: npt.NDArray[np.int64],
    ys: npt.NDArray[np.int64],
) -> FittedEdges:
    """The boundary edges of a cell map as straight lines through their turning corners,
    each cell corner (i, j) placed at (xs[i], ys[j]) in image pixels. No curve, no
    sub-pixel shift: pixel art's edges lie on its grid. O(cracks of these edges)."""
    edges = np.asarray(edges, dtype=np.int64)
    starts: list[npt.NDArray[np.float64]] = []
    segments: list[npt.NDArray[np.float64]] = []
    offsets = [0]
    for e in edges.tolist():
        a, b = int(graph.edge_start[e]), int(graph.edge_start[e + 1])
        cx, cy = graph.crack_x[a:b], graph.crack_y[a:b]
        d = graph.crack_dir[a:b]
        # Corners where the direction turns, then the edge's last corner.
        turn = np.flatnonzero(d[1:] != d[:-1]) + 1
        end_x = int(cx[-1] + DX[d[-1]])
        end_y = int(cy[-1] + DY[d[-1]])
        px = np.append(cx[turn], end_x)
        py = np.append(cy[turn], end_y)
        start = np.array([xs[cx[0]], ys[cy[0]]], dtype=np.float64)
        points = np.stack([xs[px], ys[py]], axis=1).astype(np.float64)
        starts.append(start)
        segments.append(np.repeat(points[:, None, :], 3, axis=1))
        offsets.append(offsets[-1] + len(points))
    if segments:
        seg = np.concatenate(segments)
        start_arr = np.stack(starts)
    else:
        seg = np.zeros((0, 3, 2))
        start_arr = np.zeros((0, 2))
    return FittedEdges(
        ids=edges,
        start=start_arr,
        segments=seg,
        is_line=np.ones(len(seg), dtype=bool),
        offsets=np.asarray(offsets, dtype=np.int64),
    )
