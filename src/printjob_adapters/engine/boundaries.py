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
is consistent, which is what lets whole-array pointer work order the cracks.
"""

from __future__ import annotations

import attrs
import numpy as np
from scipy import ndimage

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


def label_faces(padded: np.ndarray) -> tuple[np.ndarray, int]:
    """Faces = 4-connected components of equal labels, for all labels in one pass.

    Works on a doubled grid whose odd cells link two pixels exactly when their labels
    agree, so a single binary labelling separates every label at once. O(pixels).
    """
    h, w = padded.shape
    grid = np.zeros((2 * h - 1, 2 * w - 1), dtype=bool)
    grid[::2, ::2] = True
    grid[::2, 1::2] = padded[:, 1:] == padded[:, :-1]
    grid[1::2, ::2] = padded[1:, :] == padded[:-1, :]
    ids, count = ndimage.label(grid)
    faces = ids[::2, ::2].astype(np.int32)
    # The padding ring is connected and touches pixel (0, 0), so its component is found
    # first and gets id 1; shift so that the outside is face 0.
    faces -= 1
    return faces, int(count)


def build_boundary_graph(labels: np.ndarray) -> BoundaryGraph:
    """Step 1: faces, boundary cracks, junctions and the edges between junctions.

    Crack extraction and orientation are whole-array comparisons. Every crack whose head
    is not a junction has exactly one successor; list ranking by pointer doubling over
    those links gives each crack its edge's first crack and its place along the edge,
    and one sort lays the edges out contiguously. Loops (no junction) are cut open at
    their smallest crack. O(pixels + cracks × log(longest edge)).
    """
    h, w = labels.shape
    padded = np.full((h + 2, w + 2), OUTSIDE, dtype=np.int32)
    padded[1:-1, 1:-1] = labels
    faces, face_count = label_faces(padded)
    face_label = np.empty(face_count, dtype=np.int32)
    face_label[faces.ravel()] = padded.ravel()
    face_area = np.bincount(faces.ravel(), minlength=face_count).astype(np.int64)
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
    has_pred = np.zeros(n, dtype=bool)
    has_pred[succ[succ >= 0]] = True

    pred = np.full(n, -1, dtype=np.int64)
    pred[succ[succ >= 0]] = idx[succ >= 0]
    root, rank = _rank(pred)
    # Closed loops have no first crack: cut each open at its smallest crack id and rank
    # its cracks again.
    in_loop = pred[root] >= 0
    if in_loop.any():
        loop_firsts = _loop_minima(succ, in_loop)
        pred[loop_firsts] = -1
        root, rank = _rank(pred)
    order = np.lexsort((rank, root))
    starts_mask = pred[order] < 0
    edge_start = np.concatenate([np.nonzero(starts_mask)[0], [n]]).astype(np.int64)

    cx, cy, cd = cx[order], cy[order], cd[order]
    tail, head = tail[order], head[order]
    first = edge_start[:-1]
    last = edge_start[1:] - 1
    closed = ~junction[tail[first]]

    jids = np.full((h + 1) * stride, -1, dtype=np.int64)
    jverts = np.nonzero(junction)[0]
    jids[jverts] = np.arange(len(jverts))
    j0 = np.where(closed, -1, jids[tail[first]])
    j1 = np.where(closed, -1, jids[head[last]])

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


def _rank(pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """List ranking by pointer doubling: every crack's first crack and its distance from
    it. Only cracks not yet resolved take part in each round, so chains cost
    O(cracks × log(longest chain)) gathers; loop cracks never resolve and come back with
    a first crack that still has a predecessor."""
    n = len(pred)
    idx = np.arange(n, dtype=np.int64)
    is_first = pred < 0
    root = np.where(is_first, idx, pred)
    rank = (~is_first).astype(np.int64)
    active = idx[~is_first]
    active = active[~is_first[root[active]]]
    rounds = int(np.ceil(np.log2(n + 1))) + 1
    for _ in range(rounds):
        if len(active) == 0:
            break
        up = root[active]
        up_root = root[up]
        up_rank = rank[up]
        rank[active] += up_rank
        root[active] = up_root
        active = active[~is_first[up_root]]
    return root, rank


def _loop_minima(succ: np.ndarray, in_loop: np.ndarray) -> np.ndarray:
    """Smallest crack id of every closed loop, by pointer doubling restricted to the
    loop cracks. O(loop cracks × log(longest loop))."""
    members = np.nonzero(in_loop)[0]
    jump = succ[members]
    low = members.copy()
    pos = np.full(len(succ), -1, dtype=np.int64)
    pos[members] = np.arange(len(members))
    jump_pos = pos[jump]
    span = 1
    while span < len(members):
        low = np.minimum(low, low[jump_pos])
        jump_pos = jump_pos[jump_pos]
        span *= 2
    return np.unique(low)
