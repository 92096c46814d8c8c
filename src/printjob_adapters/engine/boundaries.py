"""Step 1 of tracing: the planar boundary graph of a label map.

Pixels are grouped into faces (4-connected runs of one label; the area outside the image
is one more face). The boundary between faces runs along pixel cracks. Crack corners
where three or more cracks meet (or the four image corners) are junctions; the cracks
between two junctions form one boundary edge, which separates exactly two faces along
its whole length. A boundary with no junction at all (an island) is one closed edge.

Every edge is later fitted once and replayed (forward or reversed) by both faces it
separates, so neighbouring outlines share their geometry exactly.

Crack directions: 0 = +x, 1 = +y, 2 = -x, 3 = -y (y points down). Each crack is oriented
so that its face with the smaller id lies on its left; along an edge that orientation
is consistent, which is what lets successor links order the cracks.
"""

from __future__ import annotations

from typing import NamedTuple

import attrs
import numpy as np

from printjob_adapters.engine import graphs

#: Label given to the padding ring around the image ("outside").
OUTSIDE = -2

#: Unit step of each crack direction, and the (row, col) offsets of the pixels on its
#: left and right, relative to the crack's tail corner, in padded pixel coordinates.
DX = np.array([1, 0, -1, 0], dtype=np.int32)
DY = np.array([0, 1, 0, -1], dtype=np.int32)
_LEFT_DROW = np.array([0, 1, 1, 0], dtype=np.int32)
_LEFT_DCOL = np.array([1, 1, 0, 0], dtype=np.int32)
_RIGHT_DROW = np.array([1, 1, 0, 0], dtype=np.int32)
_RIGHT_DCOL = np.array([1, 0, 0, 1], dtype=np.int32)


@attrs.frozen(eq=False)
class BoundaryGraph:
    """Faces, junctions and boundary edges of a label map (all arrays NumPy)."""

    width: int
    height: int
    #: Face id of every padded pixel, shape (H + 2, W + 2); face 0 is the outside.
    faces: np.ndarray
    #: Label of every face (`OUTSIDE` for face 0, -1 for left-out faces).
    face_label: np.ndarray
    #: Pixel count of every face.
    face_area: np.ndarray
    #: Cracks in edge order: tail corner (x, y) and direction code.
    crack_x: np.ndarray
    crack_y: np.ndarray
    crack_dir: np.ndarray
    #: Edge e owns cracks edge_start[e]:edge_start[e + 1].
    edge_start: np.ndarray
    edge_left: np.ndarray
    edge_right: np.ndarray
    #: Whether the edge is a closed loop (no junction on it).
    edge_closed: np.ndarray
    #: Junction id of each open edge's first and last corner (-1 when closed).
    edge_j0: np.ndarray
    edge_j1: np.ndarray
    #: Junction corners (x, y).
    junction_x: np.ndarray
    junction_y: np.ndarray
    #: The row runs of the padded face map (`Runs`): flat starts and their faces.
    run_start: np.ndarray
    run_face: np.ndarray

    @property
    def edge_count(self) -> int:
        return len(self.edge_left)

    def left_pixels(self) -> tuple[np.ndarray, np.ndarray]:
        """Padded (row, col) of the pixel left of every crack."""
        return self.crack_y + _LEFT_DROW[self.crack_dir], self.crack_x + _LEFT_DCOL[self.crack_dir]

    def right_pixels(self) -> tuple[np.ndarray, np.ndarray]:
        """Padded (row, col) of the pixel right of every crack."""
        d = self.crack_dir
        return self.crack_y + _RIGHT_DROW[d], self.crack_x + _RIGHT_DCOL[d]


class Faces(NamedTuple):
    """`label_faces`' result: the face id of every padded pixel, and per face its label
    and pixel count."""

    faces: np.ndarray
    label: np.ndarray
    area: np.ndarray


class Runs(NamedTuple):
    """The row runs of a padded label map of `height` x `width`: every run's flat start
    (ascending; every row starts a new run, so the runs tile the map row by row) and its
    label."""

    start: np.ndarray
    label: np.ndarray
    width: int
    height: int

    def end(self) -> np.ndarray:
        """Flat end (exclusive) of every run: the next run's start."""
        return np.append(self.start[1:], self.width * self.height)


def row_runs(padded: np.ndarray) -> Runs:
    """The runs of equal labels along every row: one comparison of each pixel with the
    one before it in raster order (a row's first pixel always starts a run) and one
    `flatnonzero`. O(pixels)."""
    h, w = padded.shape
    flat = np.ascontiguousarray(padded).ravel()
    starts = np.empty(h * w, dtype=bool)
    np.not_equal(flat[1:], flat[:-1], out=starts[1:])
    starts[::w] = True
    start = np.flatnonzero(starts)
    return Runs(start=start, label=flat[start], width=w, height=h)


def padded_row_runs(labels: np.ndarray) -> Runs:
    """The row runs of `labels` inside a ring of `OUTSIDE` (`row_runs` of the padded map),
    without laying the padded map out: the labels' own runs, moved one row and one column
    in, with the ring's runs placed around them (the first and last rows are one run
    each; every other row starts and ends with a one-pixel run). O(pixels) for the
    labels' runs, O(runs + rows) after."""
    h, w = labels.shape
    wide = w + 2
    inner = row_runs(np.asarray(labels, dtype=np.int32))
    count = len(inner.start)
    row = inner.start // w
    rows = np.arange(h)
    first = np.searchsorted(inner.start, rows * w)
    start = np.empty(count + 2 * h + 2, dtype=inner.start.dtype)
    label = np.empty(count + 2 * h + 2, dtype=np.int32)
    # Before a row's runs: the top row, two ring runs per earlier row, its left ring run.
    at = np.arange(count) + 2 * row + 2
    start[at] = inner.start + 2 * row + wide + 1
    label[at] = inner.label
    left = first + 2 * rows + 1
    right = np.append(first[1:], count) + 2 * rows + 2
    start[left] = (rows + 1) * wide
    start[right] = (rows + 1) * wide + w + 1
    label[left] = OUTSIDE
    label[right] = OUTSIDE
    start[0], start[-1] = 0, (h + 1) * wide
    label[0] = label[-1] = OUTSIDE
    return Runs(start=start, label=label, width=wide, height=h + 2)


def run_overlaps(
    runs: Runs,
    end: np.ndarray,
    rows_apart: int,
    reach: int,
    first: int = 0,
    stop: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (i, j) of runs, i in first:stop (default all), j in the row `rows_apart`
    below i's, whose columns come within `reach` of each other (0: they share a column),
    in ascending order of i, then j (`end` is `runs.end()`). Each run's partners are a
    range found by two binary searches: O(runs log runs + pairs), no pixel looked at."""
    w = runs.width
    start = runs.start
    row = start[first:stop] // w
    upper = first + np.flatnonzero(row < runs.height - rows_apart)
    row = start[upper] // w
    base = (row + rows_apart) * w
    col = start[upper] - row * w
    col_end = end[upper] - row * w
    # Partners end right of the window's left side and start left of its right side.
    lo = np.searchsorted(end, base + np.maximum(col - reach, 0), side="right")
    hi = np.searchsorted(start, base + np.minimum(col_end - 1 + reach, w - 1), side="right")
    count = hi - lo
    offset = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    return np.repeat(upper, count), np.repeat(lo, count) + offset


def adjacent_overlaps(runs: Runs) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`run_overlaps(runs, end, 1, 0)` with the columns each pair shares: the pairs (i, j)
    of runs in neighbouring rows sharing a column, in ascending order of i then j, and
    the flat start (in i's row) and length of their shared columns.

    Within two neighbouring rows the starts of both rows' runs cut the row into pieces,
    each lying under one run and over one: every non-empty piece is one overlapping pair,
    and going along the pieces both runs only move on. All rows at once: the starts of
    the runs above, and those of the runs below moved up one row, are two ascending
    lists; one stable merge (`argsort` of their concatenation, which finds the two sorted
    halves and merges them in one linear pass) puts them in order, and each piece's two
    runs are counts of the starts of each list so far. O(runs); no binary search."""
    w, h = runs.width, runs.height
    start = runs.start
    above = int(np.searchsorted(start, (h - 1) * w))
    below = int(np.searchsorted(start, w))
    keys = np.concatenate([start[:above], start[below:] - w])
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    # Equal starts put the run above first (stable), so at every piece both counts
    # include every start up to its first column; the starts from below so far are the
    # rest of the piece's place in the merged list.
    counted = np.cumsum(order < above)
    upper = counted - 1
    lower = np.arange(below, below + len(keys)) - counted
    length = np.empty_like(keys)
    np.subtract(keys[1:], keys[:-1], out=length[:-1])
    length[-1:] = (h - 1) * w - keys[-1:]
    pieces = np.flatnonzero(length)
    return upper[pieces], lower[pieces], keys[pieces], length[pieces]


class _FaceRuns(NamedTuple):
    """The faces (`Faces`) and, per row run, its face; with the runs and, for the pairs
    of vertically overlapping runs of different labels, the flat start (in the upper
    row) and length of the columns they share: the horizontal boundary cracks."""

    faces: Faces
    runs: Runs
    run_face: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    shared_start: np.ndarray
    shared_length: np.ndarray


def label_faces(padded: np.ndarray) -> Faces:
    """Faces = 4-connected components of equal labels, for all labels in one pass,
    numbered in raster order of their first pixel (see `_face_runs`). O(pixels + runs
    log runs)."""
    return _face_runs(padded).faces


def _face_runs(padded: np.ndarray) -> _FaceRuns:
    """`label_faces` with the runs it is built from (`_faces_of_runs`)."""
    return _faces_of_runs(row_runs(padded))


def _faces_of_runs(runs: Runs) -> _FaceRuns:
    """`label_faces` of the padded label map whose row runs are `runs`.

    Each row splits into runs of one label (`row_runs`); runs of equal labels sharing a
    column across two rows (`adjacent_overlaps`) are linked, and the connected components of
    that run graph (`graphs.connected_components`) are the faces. A face's label is its
    first run's and its area the sum of its runs' lengths; the face map is every run's
    face repeated along it. One pass to find the runs and one to lay out the face map:
    O(pixels + runs log runs).
    """
    h, w = runs.height, runs.width
    end = runs.end()
    count = len(runs.start)
    upper, lower, shared_start, shared_length = adjacent_overlaps(runs)
    same = runs.label[upper] == runs.label[lower]
    face_count, component = graphs.connected_components(count, upper[same], lower[same])
    # Number faces by their first run (hence first pixel): the outside ring, which
    # holds pixel (0, 0), becomes face 0.
    first_run = np.full(face_count, count, dtype=np.int64)
    np.minimum.at(first_run, component, np.arange(count))
    order = np.argsort(first_run)
    rank = np.empty(face_count, dtype=np.int32)
    rank[order] = np.arange(face_count, dtype=np.int32)
    face_of_run = rank[component]
    length = end - runs.start
    faces = Faces(
        faces=np.repeat(face_of_run, length).reshape(h, w),
        label=runs.label[first_run[order]],
        area=np.bincount(face_of_run, weights=length, minlength=face_count).astype(np.int64),
    )
    apart = ~same
    return _FaceRuns(
        faces,
        runs,
        face_of_run,
        upper[apart],
        lower[apart],
        shared_start[apart],
        shared_length[apart],
    )


def build_boundary_graph(labels: np.ndarray) -> BoundaryGraph:
    """Step 1: faces, boundary cracks, junctions and the edges between junctions.

    The cracks are read from the row runs (`_face_runs`): a vertical crack at every run
    start but a row's first, a horizontal one at every column two overlapping runs of
    different labels share; both come out in raster order, oriented by comparing the
    two runs' faces. A crack corner's degree (junction or not) is read from the four
    pixels around it, for the corners at the cracks' ends only; every crack whose head
    is not a junction has exactly one successor (the crack leaving from there, found by
    sorting the tails); loops (no junction) are cut open at their smallest crack
    (`_loop_cuts`), and walking those links from every first crack (`_walk`) lays the
    edges out contiguously, by first crack. O(pixels) for the runs and the face map,
    O(runs log runs + cracks log cracks) for the rest.
    """
    h, w = labels.shape
    found = _faces_of_runs(padded_row_runs(labels))
    faces, face_label, face_area = found.faces
    face_area[0] = 0
    width = w + 2
    start, run_face = found.runs.start, found.run_face

    # Horizontal cracks at corner row y (0..h) between padded rows y and y + 1, columns
    # x + 1 for x in 0..w-1: the columns shared by two runs of different labels.
    upper, lower, span = found.upper, found.lower, found.shared_length
    pair = np.repeat(np.arange(len(upper)), span)
    flat = np.arange(len(pair)) - np.repeat(np.cumsum(span) - span, span) + found.shared_start[pair]
    hy = flat // width
    hx = flat - hy * width - 1
    # Vertical cracks at corner column x between padded columns x and x + 1, rows y + 1:
    # a run starting at padded column x + 1 (not a row's first).
    start_row, start_col = np.divmod(start, width)
    inner = np.flatnonzero(start_col)
    vy = start_row[inner] - 1
    vx = start_col[inner] - 1

    # Orient: smaller face id on the left. For +x the left pixel is above; for +y it is
    # the right-hand pixel.
    h_pos = run_face[upper[pair]] < run_face[lower[pair]]
    v_pos = run_face[inner] < run_face[inner - 1]
    cx = np.concatenate([np.where(h_pos, hx, hx + 1), vx]).astype(np.int32)
    cy = np.concatenate([hy, np.where(v_pos, vy, vy + 1)]).astype(np.int32)
    cd = np.concatenate([np.where(h_pos, 0, 2), np.where(v_pos, 1, 3)]).astype(np.int32)
    n = len(cx)
    stride = w + 1
    tail = cy * stride + cx
    head = tail + (DY * stride + DX).take(cd)
    # Faces differ across a crack exactly where labels do (a face is a 4-connected
    # component of one label), so the face map answers for the padded label map.
    at_junction = _junction(faces, cx, cy, cd)
    tail_junction, head_junction = at_junction[:n], at_junction[n:]

    # A corner that is no junction has one crack arriving and one leaving (two cracks
    # between the same two faces, oriented alike): the leaving one is the successor.
    # Those corners, as the tails of the leaving cracks and as the heads of the
    # arriving ones, are the same set, each once, so in ascending order the two lists
    # pair up place by place (the stable sort merges the horizontal and vertical
    # cracks' runs, already in raster order, in one pass).
    through = np.flatnonzero(~tail_junction)
    by_tail = through[np.argsort(tail[through], kind="stable")]
    going = np.flatnonzero(~head_junction)
    by_head = going[np.argsort(head[going], kind="stable")]
    succ = np.full(n, -1, dtype=np.int64)
    pred = np.full(n, -1, dtype=np.int64)
    succ[by_head] = by_tail
    pred[by_tail] = by_head
    # The two faces of every crack, as one number per unordered pair.
    face_a = np.concatenate([run_face[upper[pair]], run_face[inner]]).astype(np.int64)
    face_b = np.concatenate([run_face[lower[pair]], run_face[inner - 1]]).astype(np.int64)
    pair_key = np.minimum(face_a, face_b) * len(face_label) + np.maximum(face_a, face_b)
    pred[_loop_cuts(pair_key, tail_junction)] = -1
    order = _walk(succ, pred)
    starts_mask = pred[order] < 0
    edge_start = np.concatenate([np.nonzero(starts_mask)[0], [n]]).astype(np.int64)

    cx, cy, cd = cx[order], cy[order], cd[order]
    # The edges' first and last cracks, by their index before the walk.
    first_crack = order[edge_start[:-1]]
    last_crack = order[edge_start[1:] - 1]
    first = edge_start[:-1]
    closed = ~tail_junction[first_crack]

    # Junctions are numbered in corner order (every crack is on some edge).
    jverts = sorted_unique(np.concatenate([tail[tail_junction], head[head_junction]]))
    j0 = np.where(closed, -1, np.searchsorted(jverts, tail[first_crack]))
    j1 = np.where(closed, -1, np.searchsorted(jverts, head[last_crack]))

    lr = cy[first] + _LEFT_DROW[cd[first]], cx[first] + _LEFT_DCOL[cd[first]]
    rr = cy[first] + _RIGHT_DROW[cd[first]], cx[first] + _RIGHT_DCOL[cd[first]]
    return BoundaryGraph(
        width=w,
        height=h,
        faces=faces,
        face_label=face_label,
        face_area=face_area,
        crack_x=cx,
        crack_y=cy,
        crack_dir=cd,
        edge_start=edge_start,
        edge_left=faces[lr],
        edge_right=faces[rr],
        edge_closed=closed,
        edge_j0=j0,
        edge_j1=j1,
        junction_x=(jverts % stride).astype(np.float64),
        junction_y=(jverts // stride).astype(np.float64),
        run_start=start,
        run_face=run_face,
    )


def _junction(padded: np.ndarray, x: np.ndarray, y: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Whether each end of every crack (tail corner (x, y), direction `d`) is a junction:
    three or four of the cracks around the corner are boundaries (the label changes
    between those of its four pixels), or it is a corner of the image. The tails' then
    the heads' answers, as one array. Every corner is read by the flat index of its
    top-left pixel (one index array for the four gathers, made once). O(cracks)."""
    h, w = padded.shape[0] - 2, padded.shape[1] - 2
    wide = w + 2
    flat = padded.ravel()
    tail = y.astype(np.int64) * wide + x
    top = np.concatenate([tail, tail + (DY * wide + DX).take(d)])
    top_left, top_right = flat.take(top), flat.take(top + 1)
    below = top + wide
    bottom_left, bottom_right = flat.take(below), flat.take(below + 1)
    degree = (
        (top_left != top_right).view(np.int8)
        + (bottom_left != bottom_right).view(np.int8)
        + (top_left != bottom_left).view(np.int8)
        + (top_right != bottom_right).view(np.int8)
    )
    # The image's corners: the top-left pixel at the padded map's (0, 0), (0, w), (h, 0)
    # or (h, w).
    image_corner = (top == 0) | (top == w) | (top == h * wide) | (top == h * wide + w)
    junction: np.ndarray = (degree > 2) | image_corner
    return junction


def _loop_cuts(pair_key: np.ndarray, tail_junction: np.ndarray) -> np.ndarray:
    """The crack at which every closed loop (an edge without junction) is cut open: its
    smallest crack id. A loop is a closed curve with one face inside and one outside,
    each connected, so those two faces meet nowhere else: the cracks of a pair of faces
    (`pair_key`) are one loop when none of them starts at a junction, and on open edges
    otherwise. Pairs with a junction are few (one per edge end), so each crack is looked
    up among them (binary search), and the loops' cracks are grouped by pair.
    O(cracks log edges + loop cracks log loop cracks)."""
    joined = sorted_unique(pair_key[tail_junction])
    candidates = np.flatnonzero(~tail_junction)
    keys = pair_key[candidates]
    if len(joined):
        at = np.minimum(np.searchsorted(joined, keys), len(joined) - 1)
        candidates = candidates[joined[at] != keys]
    # Cracks ascend, so a pair's first occurrence is its smallest crack.
    _, first = np.unique(pair_key[candidates], return_index=True)
    cuts: np.ndarray = candidates[first]
    return cuts


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """`np.unique(values)` by a sort and one comparison of neighbours: NumPy's own goes
    through a hash table first, three times slower on a few thousand integers.
    O(n log n)."""
    ordered = np.sort(values)
    keep = np.empty(len(ordered), dtype=bool)
    keep[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    unique: np.ndarray = ordered[keep]
    return unique


def _walk(succ: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """The cracks reachable from first cracks (no predecessor), chain after chain in
    ascending order of first crack (`graphs.walk_chains`, pointer doubling): O(cracks
    log longest chain)."""
    n = len(succ)
    child = np.where(succ >= 0, succ, 0)
    has_child = (succ >= 0) & (pred[child] == np.arange(n))
    firsts = np.nonzero(pred < 0)[0]
    m = len(firsts)
    if m == 0:
        return np.zeros(0, dtype=np.int32)
    return graphs.walk_chains(child, has_child, firsts)
