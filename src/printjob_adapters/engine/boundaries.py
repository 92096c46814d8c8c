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


def label_faces(padded: np.ndarray) -> Faces:
    """Faces = 4-connected components of equal labels, for all labels in one pass,
    numbered in raster order of their first pixel.

    Each row splits into runs of one label; runs of equal labels touching across two
    rows are linked (one link per stretch of contact), and the connected components of
    that run graph (`graphs.connected_components`) are the faces. A face's label is its
    first run's and its area the sum of its runs' lengths. Runs are far fewer than
    pixels, so this costs a few whole-array passes: O(pixels + runs).
    """
    h, w = padded.shape
    starts = np.ones((h, w), dtype=bool)
    np.not_equal(padded[:, 1:], padded[:, :-1], out=starts[:, 1:])
    # Runs are numbered in raster order; every row starts a new one.
    run = np.cumsum(starts, dtype=np.int32).reshape(h, w) - 1
    run_start = np.flatnonzero(starts)
    count = len(run_start)
    same = padded[1:] == padded[:-1]
    first = same.copy()
    first[:, 1:] &= starts[:-1, 1:] | starts[1:, 1:] | ~same[:, :-1]
    r, c = np.nonzero(first)
    face_count, component = graphs.connected_components(count, run[r, c], run[r + 1, c])
    # Number faces by their first run (hence first pixel): the outside ring, which
    # holds pixel (0, 0), becomes face 0.
    first_run = np.full(face_count, count, dtype=np.int64)
    np.minimum.at(first_run, component, np.arange(count))
    order = np.argsort(first_run)
    rank = np.empty(face_count, dtype=np.int32)
    rank[order] = np.arange(face_count, dtype=np.int32)
    face_of_run = rank[component]
    length = np.diff(np.append(run_start, h * w))
    return Faces(
        faces=face_of_run[run],
        label=padded.ravel()[run_start[first_run[order]]],
        area=np.bincount(face_of_run, weights=length, minlength=face_count).astype(np.int64),
    )


def build_boundary_graph(labels: np.ndarray) -> BoundaryGraph:
    """Step 1: faces, boundary cracks, junctions and the edges between junctions.

    Crack extraction and orientation are whole-array comparisons. Every crack whose head
    is not a junction has exactly one successor; walking those links from every first
    crack (`_chain_order`, one traversal in C) lays the edges out contiguously, by first
    crack. Loops (no junction) are cut open at their smallest crack. O(pixels + cracks).
    """
    h, w = labels.shape
    padded = np.full((h + 2, w + 2), OUTSIDE, dtype=np.int32)
    padded[1:-1, 1:-1] = labels
    faces, face_label, face_area = label_faces(padded)
    face_area[0] = 0

    # Horizontal cracks at corner row y (0..h) between padded rows y and y + 1, columns
    # x + 1 for x in 0..w-1; vertical cracks at corner column x between padded columns
    # x and x + 1, rows y + 1.
    above = faces[0 : h + 1, 1 : w + 1]
    below = faces[1 : h + 2, 1 : w + 1]
    hy, hx = np.nonzero(above != below)
    left = faces[1 : h + 1, 0 : w + 1]
    right = faces[1 : h + 1, 1 : w + 2]
    vy, vx = np.nonzero(left != right)

    # Orient: smaller face id on the left. For +x the left pixel is above; for +y it is
    # the right-hand pixel.
    h_pos = above[hy, hx] < below[hy, hx]
    v_pos = right[vy, vx] < left[vy, vx]
    hdir = np.where(h_pos, 0, 2).astype(np.int32)
    vdir = np.where(v_pos, 1, 3).astype(np.int32)
    htx = np.where(h_pos, hx, hx + 1).astype(np.int32)
    hty = hy.astype(np.int32)
    vtx = vx.astype(np.int32)
    vty = np.where(v_pos, vy, vy + 1).astype(np.int32)
    cx = np.concatenate([htx, vtx])
    cy = np.concatenate([hty, vty])
    cd = np.concatenate([hdir, vdir])
    n = len(cx)
    stride = w + 1
    tail = cy * stride + cx
    head = (cy + DY[cd]) * stride + (cx + DX[cd])

    degree = np.bincount(tail, minlength=(h + 1) * stride) + np.bincount(
        head, minlength=(h + 1) * stride
    )
    junction = degree != 2
    for corner in (0, w, h * stride, h * stride + w):
        junction[corner] = True
    junction &= degree > 0

    idx = np.arange(n, dtype=np.int64)
    out_at = np.full((h + 1) * stride, -1, dtype=np.int64)
    through = ~junction[tail]
    out_at[tail[through]] = idx[through]
    succ = np.where(junction[head], -1, out_at[head])

    pred = np.full(n, -1, dtype=np.int64)
    pred[succ[succ >= 0]] = idx[succ >= 0]
    order, pred = _chain_order(succ, pred)
    starts_mask = pred[order] < 0
    edge_start = np.concatenate([np.nonzero(starts_mask)[0], [n]]).astype(np.int64)

    cx, cy, cd = cx[order], cy[order], cd[order]
    tail, head = tail[order], head[order]
    first = edge_start[:-1]
    last = edge_start[1:] - 1
    closed = ~junction[tail[first]]

    # Junctions are numbered in corner order.
    jverts = np.nonzero(junction)[0]
    j0 = np.where(closed, -1, np.searchsorted(jverts, tail[first]))
    j1 = np.where(closed, -1, np.searchsorted(jverts, head[last]))

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
    )


def _chain_order(succ: np.ndarray, pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cracks laid out edge by edge: edges by their first crack id, each edge's cracks
    in order along it. Closed loops have no first crack: each is cut open at its
    smallest crack id (found per loop by connected components). Returns the order and
    the predecessors with the cuts made. Cost: O(cracks log cracks)."""
    n = len(succ)
    order = _walk(succ, pred)
    if len(order) < n:
        seen = np.zeros(n, dtype=bool)
        seen[order] = True
        loop = np.nonzero(~seen)[0]
        _, component = graphs.connected_components(n, loop, succ[loop])
        smallest = np.full(n, n, dtype=np.int64)
        np.minimum.at(smallest, component[loop], loop)
        pred = pred.copy()
        pred[np.unique(smallest[component[loop]])] = -1
        order = _walk(succ, pred)
    return order, pred


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
