"""`stacking._trim_fringes`' two candidate passes, whole-array, against the one-candidate-
at-a-time walks they replace: the same faces left out and moved, on random face sets,
near pairs, paint orders and near shades."""

from __future__ import annotations

import types

import numpy as np
import pytest

from printjob_adapters.engine.stacking import _left_out, _pair_codes, _slide_under, _sorted_codes


def _near(rng: np.random.Generator, faces: int) -> tuple[np.ndarray, np.ndarray]:
    """Random unordered near pairs of distinct faces, both ways, sorted by the first face
    as `_trim_fringes` passes them, and each face's range in them."""
    pairs = rng.integers(0, faces, (int(rng.integers(0, 4 * faces)), 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    codes = np.unique(np.minimum(pairs[:, 0], pairs[:, 1]) * faces + np.maximum(*pairs.T))
    pairs = np.stack([codes // faces, codes % faces], axis=1)
    pairs = np.concatenate([pairs, pairs[:, ::-1]]).reshape(-1, 2)
    sorted_pairs = pairs[np.argsort(pairs[:, 0], kind="stable")]
    return sorted_pairs, np.searchsorted(sorted_pairs[:, 0], np.arange(faces + 1))


def _left_out_walk(
    members: np.ndarray,
    below: np.ndarray,
    member: np.ndarray,
    candidates: np.ndarray,
    sorted_pairs: np.ndarray,
    bounds: np.ndarray,
) -> np.ndarray:
    """The walk `_left_out` replaces: one candidate at a time, ascending."""
    member = member.copy()
    earlier = members[below]
    out = np.zeros(len(candidates), dtype=bool)
    for i, g in enumerate(candidates.tolist()):
        near = sorted_pairs[bounds[g] : bounds[g + 1], 1]
        near = near[member[near]]
        if earlier[:, np.concatenate([[g], near])].all(axis=1).any():
            member[g] = False
            out[i] = True
    return out


def _slide_under_walk(
    labels: np.ndarray,
    order: np.ndarray,
    idx: int,
    members: np.ndarray,
    sorted_pairs: np.ndarray,
    bounds: np.ndarray,
    near_shade: np.ndarray,
    fringed: np.ndarray,
) -> None:
    """The walk `_slide_under` replaces: every candidate in turn, ascending."""
    member = members[order[idx]]
    below = order[:idx]
    for g in np.nonzero(fringed & member)[0].tolist():
        shades = below[near_shade[below, labels[g]] & members[below, g]]
        if len(shades) == 0:
            continue
        near = sorted_pairs[bounds[g] : bounds[g + 1], 1]
        members[int(shades[-1]), near[member[near]]] = True
        member[g] = False


@pytest.mark.parametrize("seed", range(4))
def test_left_out_is_the_walk(seed: int) -> None:
    rng = np.random.default_rng(seed)
    left = 0
    for _ in range(400):
        faces, layers = int(rng.integers(2, 60)), int(rng.integers(2, 6))
        members = rng.random((layers, faces)) < rng.uniform(0.3, 0.95)
        sorted_pairs, bounds = _near(rng, faces)
        below = rng.permutation(layers - 1)[: int(rng.integers(1, layers))]
        member = members[layers - 1].copy()
        candidates = np.nonzero(member & (rng.random(faces) < 0.6))[0]
        if len(candidates) == 0:
            continue
        expected = _left_out_walk(members, below, member, candidates, sorted_pairs, bounds)
        got = _left_out(members, below, member, candidates, sorted_pairs, bounds)
        np.testing.assert_array_equal(got, expected)
        left += int(expected.sum())
    assert left > 100  # the cases leave faces out, some only after a near one


@pytest.mark.parametrize("seed", range(4))
def test_slide_under_is_the_walk(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    moved = 0
    for _ in range(400):
        faces, layers = int(rng.integers(2, 60)), int(rng.integers(2, 7))
        labels = rng.integers(0, layers, faces)
        members = rng.random((layers, faces)) < rng.uniform(0.1, 0.9)
        members[labels, np.arange(faces)] = True
        sorted_pairs, bounds = _near(rng, faces)
        near_shade = rng.random((layers, layers)) < 0.4
        near_shade |= near_shade.T
        order = rng.permutation(layers)
        idx = int(rng.integers(1, layers))
        fringed = rng.random(faces) < 0.7
        expected = members.copy()
        _slide_under_walk(labels, order, idx, expected, sorted_pairs, bounds, near_shade, fringed)
        got = members.copy()
        graph = types.SimpleNamespace(face_label=labels)
        _slide_under(graph, order, idx, got, sorted_pairs, bounds, near_shade, fringed)  # type: ignore[arg-type]
        np.testing.assert_array_equal(got, expected)
        moved += int((expected != members).sum())
    assert moved > 1000


@pytest.mark.parametrize("faces", [300, 40_000, 50_000])
def test_near_pair_codes_sorted_as_unique_gives_them(faces: int) -> None:
    # 32-bit sorting while every code fits (faces² < 2³¹), 64-bit past it.
    rng = np.random.default_rng(faces)
    fa, fb = rng.integers(0, faces, (2, 20_000))
    codes = _pair_codes(fa, fb, faces)
    codes = np.concatenate([codes, codes[:5000], [faces * faces - 1]])
    got = _sorted_codes(codes, faces)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.unique(codes))
