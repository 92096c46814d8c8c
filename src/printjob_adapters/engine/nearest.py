"""Nearest and fixed-radius neighbour queries over colour clouds, in whole-array NumPy.

The palette stages ask three things of a few thousand colours (histogram bins, palette
entries, k-means centres) in 3-D colour spaces: the nearest entry to each of many
colours, the pairs of entries closer than a radius, and the entries within a radius of
given colours. `scipy.spatial.cKDTree` answers them, but importing `scipy.spatial` loads
`scipy.special`, `scipy.linalg` and more (0.05-0.2 s), paid by every `printjob trace`
process. `PointSet` answers the same queries, with the same results, in the subset of
`cKDTree`'s interface the engine uses:

- `query` (nearest entry): a screen by matrix product, |q|^2 - 2 q.p + |p|^2 (BLAS),
  then the winner's distance computed exactly, as a difference; the few rows where
  another entry comes within the screen's rounding error of the winner are decided
  exactly over all entries. O(N K) in blocks of bounded memory.
- `query_pairs` (fixed radius r): a grid of cubes of side r, the points sorted by cube;
  each occupied cube is paired with itself and the 13 neighbours ahead of it, and the
  candidate pairs kept whose exact distance is at most r. O(N log N) plus the
  candidates, about 3.2 times the pairs.
- `query_ball_point` (fixed radius, given colours): the same grid, each query looking at
  the 27 cubes around its own by binary search; one colour alone is a pass over the
  points. O(Q log N) plus the candidates.
- Both radius queries measure every distance instead when there are at most
  `SMALL_WORK` of them (the few dozen bins and candidates of a flat logo): the same
  pairs, found with a few NumPy calls rather than the grid's sorting and searching.

The whole-array searches are for the sizes of flat art (a few thousand histogram bins,
palettes of tens of colours): there they cost less than importing `scipy.spatial`. Past
`NEAREST_WORK` distances or `RADIUS_POINTS` points (photos: hundreds of thousands of
colours against hundreds of centres) the same queries go to a `cKDTree`, imported then,
whose answers are the same.

Distances are sums of squared differences taken axis by axis in order, as `cKDTree`
takes them, so a colour exactly on a radius is in or out the same way.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

#: Above this many (queries x points) distances, or this many points for radius queries,
#: the whole-array search costs more than importing `scipy.spatial` and walking its k-d
#: tree (photos: hundreds of thousands of colours against hundreds of centres); below
#: them, as for every flat logo, SciPy is not loaded at all.
NEAREST_WORK = 1 << 16
RADIUS_POINTS = 4096
#: Up to this many distances (points x points, or queries x points), a radius query
#: measures them all: for the few dozen histogram bins and candidates of a flat logo the
#: grid's sorting and searching cost more than the distances. The same pairs, each
#: distance computed with the same operations.
SMALL_WORK = 1 << 14

#: Up to this many (occupied cube x neighbour offset) lookups, `_Grid.pairs` handles
#: every offset at once (a dozen NumPy calls, not a dozen per offset); past it (thousands
#: of cubes), offset by offset, whose sorted searches and arrays stay in cache. The same
#: pairs in the same order either way.
BATCH_CUBES = 1 << 13

#: Elements (queries x entries, or candidate pairs) handled per block: bounds memory to
#: a few tens of MB whatever the number of queries.
BLOCK = 1 << 21

_CUBES = np.stack(np.meshgrid([-1, 0, 1], [-1, 0, 1], [-1, 0, 1], indexing="ij"), axis=-1).reshape(
    -1, 3
)


def _squared(a: FloatArray, b: FloatArray) -> FloatArray:
    """Exact squared distances of paired rows, axis by axis in order."""
    d = a[..., 0] - b[..., 0]
    out: FloatArray = d * d
    for axis in range(1, a.shape[-1]):
        d = a[..., axis] - b[..., axis]
        out += d * d
    return out


class PointSet:
    """A fixed set of points (N x D) answering nearest and radius queries."""

    def __init__(self, points: npt.ArrayLike) -> None:
        self.points: FloatArray = np.ascontiguousarray(points, dtype=np.float64)
        if self.points.ndim != 2:
            raise ValueError("points must be an (N, D) array")
        self._norms: FloatArray = (self.points * self.points).sum(axis=1)
        self._grids: dict[float, _Grid] = {}
        self._kd: Any = None

    # -- nearest --

    def query(self, x: npt.ArrayLike, workers: int = 1) -> tuple[FloatArray, Int64Array]:
        """Each row's nearest point: its distance and index (the first of equals).
        `workers` is accepted for `cKDTree`'s sake; the product runs in BLAS's threads."""
        q = np.ascontiguousarray(x, dtype=np.float64)
        n = len(q)
        if n * len(self.points) > NEAREST_WORK:
            d, i = self._tree().query(q, workers=workers)
            return d, i.astype(np.int64)
        dist = np.empty(n)
        idx = np.empty(n, dtype=np.int64)
        k = len(self.points)
        if k == 0:
            dist.fill(np.inf)
            idx.fill(k)
            return dist, idx
        step = max(1, BLOCK // k)
        for s in range(0, n, step):
            block = q[s : s + step]
            dist[s : s + step], idx[s : s + step] = self._nearest_block(block)
        return dist, idx

    def _nearest_block(self, q: FloatArray) -> tuple[FloatArray, Int64Array]:
        p = self.points
        qn = (q * q).sum(axis=1)
        screen = q @ p.T
        screen *= -2.0
        screen += qn[:, None]
        screen += self._norms[None, :]
        best = np.argmin(screen, axis=1)
        rows = np.arange(len(q))
        low = screen[rows, best]
        # The screen's rounding error is a few ulps of the norms involved; any entry
        # within twice that of the winner may truly be nearer, and is measured exactly.
        slack = 1e-12 * (qn + self._norms.max() + 1.0)
        close = (screen <= (low + slack)[:, None]).sum(axis=1) > 1
        exact = _squared(q, p[best])
        if close.any():
            doubt = np.flatnonzero(close)
            full = _squared(q[doubt][:, None, :], p[None, :, :])
            pick = np.argmin(full, axis=1)
            best[doubt] = pick
            exact[doubt] = full[np.arange(len(doubt)), pick]
        return np.sqrt(exact), best.astype(np.int64)

    # -- fixed radius --

    def query_pairs(self, r: float, output_type: str = "ndarray") -> Int64Array:
        """The pairs (i, j), i < j, of points at most `r` apart, as an (M, 2) array."""
        if output_type != "ndarray":
            raise ValueError("only output_type='ndarray' is supported")
        n = len(self.points)
        if n > RADIUS_POINTS:
            pairs: Int64Array = self._tree().query_pairs(r, output_type="ndarray")
            return pairs.astype(np.int64)
        if n * n <= SMALL_WORK:
            # Every pair measured: cheaper than sorting a few dozen points into cubes.
            near = _squared(self.points[:, None, :], self.points[None, :, :]) <= r * r
            first, second = np.nonzero(np.triu(near, 1))
            return np.stack([first, second], axis=1).astype(np.int64)
        return self._grid(r).pairs(r)

    def query_ball_point(
        self, x: npt.ArrayLike, r: float, return_sorted: bool | None = None
    ) -> list[Int64Array] | Int64Array:
        """The indices of the points within `r` of `x`: one sorted array for one point,
        a list of arrays (one per row, sorted) for an (M, D) array of them."""
        q = np.asarray(x, dtype=np.float64)
        single = q.ndim == 1
        q2 = q[None, :] if single else q
        if single:
            # One point (a density probe): a pass over the points beats building a grid
            # for a radius that may never come again.
            inside: Int64Array = np.flatnonzero(_squared(self.points, q2) <= r * r)
            return inside
        if len(q2) == 0:
            return []
        if len(self.points) > RADIUS_POINTS and len(q2) > 1:
            near = self._tree().query_ball_point(q2, r, return_sorted=True)
            return [np.asarray(hits, dtype=np.int64) for hits in near]
        rows, hits = self._within(q2, r)
        cuts = np.searchsorted(rows, np.arange(1, len(q2)))
        per_row = np.split(hits, cuts)
        return per_row[0] if single else per_row

    def ball_pairs(self, x: npt.ArrayLike, r: float) -> tuple[Int64Array, Int64Array]:
        """`query_ball_point` of an (M, D) array of points, flattened: (query row, point
        index) for every point within `r` of a row, rows ascending and each row's points
        in the order `query_ball_point` lists them, without a list of per-row arrays."""
        q = np.asarray(x, dtype=np.float64)
        if len(q) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        if len(self.points) > RADIUS_POINTS and len(q) > 1:
            near = self._tree().query_ball_point(q, r, return_sorted=True)
            lengths = np.fromiter(map(len, near), dtype=np.int64, count=len(near))
            rows = np.repeat(np.arange(len(q), dtype=np.int64), lengths)
            hits = np.fromiter(itertools.chain.from_iterable(near), np.int64, int(lengths.sum()))
            return rows, hits
        return self._within(q, r)

    def _within(self, q: FloatArray, r: float) -> tuple[Int64Array, Int64Array]:
        """(query row, point index) of every point within `r` of a row, rows ascending."""
        if len(q) * len(self.points) <= SMALL_WORK:
            # Every (row, point) distance, each row's points in index order: cheaper than
            # a grid for a few dozen of each.
            inside = _squared(q[:, None, :], self.points[None, :, :]) <= r * r
            row, hit = np.nonzero(inside)
            return row.astype(np.int64), hit.astype(np.int64)
        return self._grid(r).within(q, r)

    def _tree(self) -> Any:
        """The k-d tree of the points, for sets too large for the whole-array search."""
        if self._kd is None:
            from scipy.spatial import cKDTree  # only here: 0.05-0.2 s to import

            self._kd = cKDTree(self.points)
        return self._kd

    def _grid(self, r: float) -> _Grid:
        grid = self._grids.get(r)
        if grid is None:
            grid = self._grids[r] = _Grid(self.points, r)
        return grid


class _Grid:
    """The points sorted by the cube of side `r` holding them."""

    def __init__(self, points: FloatArray, r: float) -> None:
        self.points = points
        self.side = float(r) if r > 0 else 1.0
        cell = (
            np.floor(points / self.side).astype(np.int64)
            if len(points)
            else np.zeros((0, points.shape[1]), np.int64)
        )
        self.low = cell.min(axis=0) - 1 if len(points) else np.zeros(points.shape[1], np.int64)
        span = (cell.max(axis=0) + 2 - self.low + 1) if len(points) else np.ones_like(self.low)
        self.span = span
        keys = self._keys(cell)
        self.order = np.argsort(keys, kind="stable")
        self.keys = keys[self.order]

    def _keys(self, cell: Int64Array) -> Int64Array:
        c = cell - self.low
        key = c[..., 0].copy()
        for axis in range(1, c.shape[-1]):
            key = key * self.span[axis] + c[..., axis]
        return key

    def within(self, q: FloatArray, r: float) -> tuple[Int64Array, Int64Array]:
        """(query row, point index) for every point within `r` of a query row, by row
        (indices within a row in no set order). Cost: O(Q log N) plus the candidates."""
        if len(q) == 0 or len(self.points) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        cell = np.floor(q / self.side).astype(np.int64)
        limit = r * r
        rows_out: list[Int64Array] = []
        hits_out: list[Int64Array] = []
        dims = q.shape[1]
        cubes = _CUBES if dims == 3 else _cubes(dims)
        step = max(1, BLOCK // (len(cubes) * 8))
        for s in range(0, len(q), step):
            around = cell[s : s + step, None, :] + cubes[None, :, :]
            inside = np.all((around >= self.low) & (around < self.low + self.span), axis=-1)
            keys = np.where(inside, self._keys(around), -1)
            lo = np.searchsorted(self.keys, keys, side="left")
            hi = np.searchsorted(self.keys, keys, side="right")
            count = np.where(inside, hi - lo, 0).ravel()
            total = int(count.sum())
            if total == 0:
                continue
            row = np.repeat(np.arange(s, s + len(around)).repeat(len(cubes)), count)
            first = np.repeat(lo.ravel() - (np.cumsum(count) - count), count)
            pos = first + np.arange(total)
            idx = self.order[pos]
            near = _squared(q[row], self.points[idx]) <= limit
            # Rows come out in ascending order already (queries are expanded in order).
            rows_out.append(row[near])
            hits_out.append(idx[near])
        if not rows_out:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(rows_out), np.concatenate(hits_out)

    def pairs(self, r: float) -> Int64Array:
        """The pairs (i, j), i < j, of the grid's points at most `r` apart. Cube by cube
        rather than point by point: each occupied cube is paired with itself and with the
        13 of its neighbours that lie ahead of it, so every pair of cubes is looked at
        once and every candidate pair of points once. Up to `BATCH_CUBES` the 13 neighbour
        offsets are searched and their candidates measured at once. The pairs come out
        offset by offset, then each cube's own, either way. Cost: O(C log C) for C
        occupied cubes plus the candidates, about 3.2 times the pairs found."""
        keys, start, size = np.unique(self.keys, return_index=True, return_counts=True)
        shape = tuple(int(v) for v in self.span)
        cell = np.stack(np.unravel_index(keys, shape), axis=1).astype(np.int64)
        ahead = _AHEAD if cell.shape[1] == 3 else _ahead(cell.shape[1])
        chunks: list[Int64Array] = []
        if len(keys) * len(ahead) <= BATCH_CUBES:
            # (offset, cube) in offset-major order: each offset's cubes in key order.
            other = (cell[None, :, :] + ahead[:, None, :]).reshape(-1, cell.shape[1])
            a, b = self._neighbours(keys, other, shape)
            a %= max(len(keys), 1)
            chunks.append(self._candidate_pairs(start[a], size[a], start[b], size[b], r))
        else:
            for offset in ahead:
                a, b = self._neighbours(keys, cell + offset, shape)
                chunks.append(self._candidate_pairs(start[a], size[a], start[b], size[b], r))
        # Within a cube: each unordered pair once.
        chunks.append(self._candidate_pairs(start, size, start, size, r, same=True))
        return np.concatenate(chunks)

    def _neighbours(
        self, keys: Int64Array, other: Int64Array, shape: tuple[int, ...]
    ) -> tuple[Int64Array, Int64Array]:
        """For cubes `other` (rows of cube coordinates), the positions of those inside the
        grid and occupied, and the occupied cubes' indices in `keys`, in row order."""
        inside = np.all((other >= 0) & (other < self.span), axis=1)
        a = np.flatnonzero(inside)
        key = np.ravel_multi_index(tuple(other[a].T), shape)
        j = np.searchsorted(keys, key)
        found = j < len(keys)
        found[found] = keys[j[found]] == key[found]
        return a[found], j[found]

    def _candidate_pairs(
        self,
        start_a: Int64Array,
        size_a: Int64Array,
        start_b: Int64Array,
        size_b: Int64Array,
        r: float,
        same: bool = False,
    ) -> Int64Array:
        """Every point of cube a[k] against every point of cube b[k], kept within `r`,
        as (smaller index, larger index), in the order of k. With `same` (a is b) each
        pair once."""
        per = size_a * size_b
        total = int(per.sum())
        if total == 0:
            return np.zeros((0, 2), np.int64)
        which = np.repeat(np.arange(len(per)), per)
        local = np.arange(total) - np.repeat(np.cumsum(per) - per, per)
        ia = local // size_b[which]
        ib = local - ia * size_b[which]
        if same:
            keep = ia < ib
            which, ia, ib = which[keep], ia[keep], ib[keep]
        i = self.order[start_a[which] + ia]
        j = self.order[start_b[which] + ib]
        near = _squared(self.points[i], self.points[j]) <= r * r
        i, j = i[near], j[near]
        return np.stack([np.minimum(i, j), np.maximum(i, j)], axis=1)


def _ahead(dims: int) -> Int64Array:
    """The neighbouring cube offsets lexicographically after zero: half of them."""
    cubes = _cubes(dims)
    first = np.argmax(cubes != 0, axis=1)
    lead = cubes[np.arange(len(cubes)), first]
    out: Int64Array = cubes[lead > 0]
    return out


def _cubes(dims: int) -> Int64Array:
    axes = np.meshgrid(*([[-1, 0, 1]] * dims), indexing="ij")
    out: Int64Array = np.stack(axes, axis=-1).reshape(-1, dims)
    return out


class Incidence:
    """A 0/1 (rows x columns) matrix from (row, column) hits, duplicates counted once, in
    compressed rows (`indptr`, `indices` sorted): which bins lie near which colour. Its
    product with a vector sums each row's entries in column order, as SciPy's CSR product
    does, so the sums are the same to the bit. Cost: O(H log H) to build for H hits, O(H)
    per product."""

    def __init__(self, rows: npt.ArrayLike, cols: npt.ArrayLike, shape: tuple[int, int]) -> None:
        r = np.asarray(rows, dtype=np.int64)
        c = np.asarray(cols, dtype=np.int64)
        self.shape = shape
        # Sorted and deduplicated by hand: NumPy 2.3+ answers a plain `np.unique` of
        # integers with a hash table, many times slower than a sort here.
        key: Int64Array = np.sort(r * shape[1] + c)
        if len(key) > 1:
            key = key[np.concatenate(([True], key[1:] != key[:-1]))]
        self.row: Int64Array = key // max(shape[1], 1)
        self.indices: Int64Array = key - self.row * shape[1]
        self.indptr: Int64Array = np.zeros(shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.row, minlength=shape[0]), out=self.indptr[1:])

    def __matmul__(self, vector: npt.ArrayLike) -> FloatArray:
        v = np.asarray(vector, dtype=np.float64)
        out: FloatArray = np.asarray(
            np.bincount(self.row, v[self.indices], minlength=self.shape[0]), dtype=np.float64
        )
        return out


_AHEAD = _ahead(3)
