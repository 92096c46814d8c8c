"""Graph stages over edge lists in whole-array NumPy: connected components, chain order.

The engine needs two things of a graph: which nodes hang together (faces from runs,
components from joined runs, loops of cracks) and the order of the nodes along chains
(cracks edge by edge). `scipy.sparse.csgraph` does both in C, but importing it loads
`scipy.sparse` and `scipy.sparse.linalg` (about 0.2 s), which every `printjob trace`
process would pay before tracing a single pixel; these functions give the same answers
with NumPy alone.

Stages, each with its cost for V nodes and E edges:

- `connected_components`: hook-and-compress label propagation (each root hooks to the
  smallest root it shares an edge with; pointer jumping flattens the trees; edges are
  contracted onto the roots). Every round merges each root that has a neighbour, so the
  roots with edges at least halve: O(log V) rounds of O(E + V) array passes,
  O((E + V) log V) in all, and typically three or four rounds.
- `walk_chains`: the order of a forest of chains (every node at most one child) from
  their heads in ascending order, by pointer doubling: O(V log L) for chains of at most
  L nodes, then one scatter by (head, depth): O(V).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int32]

#: Share of the nodes under which pointer jumping follows the moving nodes alone.
_FEW_MOVING = 0.125


def connected_components(
    count: int, src: npt.ArrayLike, dst: npt.ArrayLike
) -> tuple[int, IntArray]:
    """The components of the undirected graph on nodes 0..count-1 with edges src[i]-dst[i]
    (duplicates and self-loops allowed): their number, and each node's component.

    Components are numbered by their smallest node, so the component of node 0 is 0:
    the numbering of `scipy.sparse.csgraph.connected_components` (undirected, or
    directed with weak connection). Cost: O((E + V) log V), see the module's docstring.
    """
    # Node numbers fit 32 bits for any image the engine accepts: half the memory.
    kind: type[np.integer[Any]] = np.int32 if count < 2**31 else np.int64
    parent: npt.NDArray[np.integer[Any]] = np.arange(count, dtype=kind)
    u = np.asarray(src).ravel().astype(kind, copy=False)
    v = np.asarray(dst).ravel().astype(kind, copy=False)
    while len(u):
        # `parent` is flat here: every node points at its tree's root.
        u = parent[u]
        v = parent[v]
        apart = u != v
        u, v = u[apart], v[apart]
        if not len(u):
            break
        low = np.minimum(u, v)
        high = np.maximum(u, v)
        # Each root with a smaller neighbouring root hooks to the smallest one; hooking
        # only downwards cannot close a cycle, and a tree's root stays its smallest node.
        np.minimum.at(parent, high, low)
        u, v = low, high
        _flatten(parent)
    roots = parent == np.arange(count, dtype=kind)
    number = np.cumsum(roots, dtype=np.int32) - 1
    labels: IntArray = number[parent]
    return int(roots.sum()), labels


def _flatten(parent: npt.NDArray[np.integer[Any]]) -> None:
    """Point every node straight at its root (pointer jumping), in place. While many
    nodes still move, every node jumps twice between counts (gathers over the whole
    array); once few do (under `_FEW_MOVING` of them), only those are followed further.
    O(V log depth)."""
    grand = parent[parent]
    moving = grand != parent
    while True:
        count = int(np.count_nonzero(moving))
        if count == 0:
            return
        if count < _FEW_MOVING * len(parent):
            break
        # Two jumps between counts (the grandparent's grandparent): a count costs as
        # much as a jump, and a jump past the root changes nothing.
        np.take(grand, grand, out=parent)
        grand = parent[parent]
        moving = grand != parent
    few = np.flatnonzero(moving)
    while len(few):
        parent[few] = parent[parent[few]]
        few = few[parent[parent[few]] != parent[few]]


def walk_chains(child: npt.ArrayLike, has_child: npt.ArrayLike, heads: npt.ArrayLike) -> IntArray:
    """The nodes reachable from `heads` along child links, chain after chain in ascending
    order of head, each chain from its head on: a depth-first order of a forest in which
    every node has at most one child (`child[v]`, where `has_child[v]`) and at most one
    parent. Nodes on cycles (no head above them) are not reached. The order of
    `scipy.sparse.csgraph.depth_first_order` from a root whose children are the heads,
    ascending. Cost: O(V log L) for chains of at most L nodes."""
    child = np.asarray(child, dtype=np.int64)
    has_child = np.asarray(has_child, dtype=bool)
    heads = np.unique(np.asarray(heads, dtype=np.int64))
    n = len(child)
    if len(heads) == 0:
        return np.zeros(0, dtype=np.int32)
    # Up links: each node's parent, a node without one points at itself.
    up = np.arange(n, dtype=np.int64)
    parents = np.flatnonzero(has_child)
    up[child[parents]] = parents
    # Depths in 32 bits (a chain is shorter than 2^31 nodes): half the bytes to gather.
    depth = (up != np.arange(n)).astype(np.int32)
    # Doubling: after round k a node points 2^k steps up, or at its top. A chain of L
    # nodes settles in log2(L) rounds; nodes on a cycle never settle and are dropped when
    # no chain can be longer (V nodes), so the rounds stop at log2(V) + 1. Every round
    # steps all nodes (a settled one adds its top's depth, 0, and stays): two gathers
    # over the whole array cost less than gathering and scattering the unsettled ones.
    # Whether all have settled is asked every second round: a comparison costs as much
    # as a round, and a round past the end changes nothing.
    for _ in range(0, int(n).bit_length() + 1, 2):
        depth += depth.take(up)
        up = up.take(up)
        above = up.take(up)
        if np.array_equal(above, up):
            break
        depth += depth.take(up)
        up = above
    top = up
    is_head = np.zeros(n, dtype=bool)
    is_head[heads] = True
    # Still climbing: on a cycle, or below one.
    reached = is_head[top] & (top[top] == top)
    nodes = np.flatnonzero(reached)
    sizes = np.bincount(top[nodes], minlength=n)[heads]
    start = np.zeros(n, dtype=np.int64)
    start[heads] = np.cumsum(sizes) - sizes
    order = np.empty(len(nodes), dtype=np.int32)
    order[start[top[nodes]] + depth[nodes]] = nodes
    return order
