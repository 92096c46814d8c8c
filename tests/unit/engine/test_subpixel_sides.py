"""The sub-pixel stages reading each crack's sides once, channels first, give what the
per-stage lookups in the face map gave: the same shifts and slack, bit for bit; and the
decoder's pixel copy gives what `np.array(image)` gave."""

from __future__ import annotations

import io

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from PIL import Image

from printjob_adapters.engine import subpixel
from printjob_adapters.engine.boundaries import DX, DY, OUTSIDE, BoundaryGraph, build_boundary_graph
from printjob_adapters.engine.decode import _to_rgba


def looked_up_shifts(graph: BoundaryGraph, rgba: np.ndarray, colors: np.ndarray) -> np.ndarray:
    """`subpixel.crack_shifts` as the engine computed it: every side looked up by (row,
    column) in the face map and the image, colours as rows."""
    faces = graph.faces
    h, w = graph.height, graph.width
    d = graph.crack_dir
    lr, lc = graph.left_pixels()
    rr, rc = graph.right_pixels()
    lf = faces[lr, lc]
    rf = faces[rr, rc]
    a = colors[lf]
    b = colors[rf]
    diff = a - b
    den = np.einsum("ij,ij->i", diff, diff)
    usable = np.isfinite(den) & (den > 1e-6)
    den = np.where(usable, den, 1.0)
    diff = np.where(usable[:, None], diff, 0.0)
    b = np.where(usable[:, None], b, 0.0)
    left_px = subpixel.premultiply(rgba[np.clip(lr - 1, 0, h - 1), np.clip(lc - 1, 0, w - 1)])
    right_px = subpixel.premultiply(rgba[np.clip(rr - 1, 0, h - 1), np.clip(rc - 1, 0, w - 1)])
    cover_left = np.clip(np.einsum("ij,ij->i", left_px - b, diff) / den, 0.0, 1.0)
    cover_right = np.clip(np.einsum("ij,ij->i", right_px - b, diff) / den, 0.0, 1.0)
    far_l = faces[np.clip(lr - DX[d], 0, h + 1), np.clip(lc + DY[d], 0, w + 1)]
    far_r = faces[np.clip(rr + DX[d], 0, h + 1), np.clip(rc - DY[d], 0, w + 1)]
    thin_l = far_l != lf
    thin_r = far_r != rf
    into_left = (1.0 - cover_left) * np.where(thin_l, 0.5, 1.0)
    into_right = cover_right * np.where(thin_r, 0.5, 1.0)
    into_left = np.where(thin_l, np.minimum(into_left, subpixel.THIN_SHIFT), into_left)
    into_right = np.where(thin_r, np.minimum(into_right, subpixel.THIN_SHIFT), into_right)
    shift = into_right - into_left
    contrast = np.minimum(1.0, np.sqrt(den) / subpixel.FULL_CONTRAST)
    shift *= np.where(usable, contrast, 0.0)
    void_l = graph.face_label[lf] == -1
    void_r = graph.face_label[rf] == -1
    lean = subpixel.VOID_LEAN
    shift += np.where(void_r & ~void_l, lean, 0.0) - np.where(void_l & ~void_r, lean, 0.0)
    outside = (graph.face_label[lf] == OUTSIDE) | (graph.face_label[rf] == OUTSIDE)
    shift[outside] = 0.0
    clipped: np.ndarray = np.clip(shift, -subpixel.MAX_SHIFT, subpixel.MAX_SHIFT)
    return clipped


def looked_up_slack(graph: BoundaryGraph) -> np.ndarray:
    """`subpixel.thin_slack` as the engine computed it (lookups and a weighted count)."""
    faces = graph.faces
    h, w = graph.height, graph.width
    d = graph.crack_dir
    lr, lc = graph.left_pixels()
    rr, rc = graph.right_pixels()
    lf = faces[lr, lc]
    rf = faces[rr, rc]
    far_l = faces[np.clip(lr - DX[d], 0, h + 1), np.clip(lc + DY[d], 0, w + 1)]
    far_r = faces[np.clip(rr + DX[d], 0, h + 1), np.clip(rc - DY[d], 0, w + 1)]
    painted = graph.face_label >= 0
    thin = ((far_l != lf) & painted[lf]) | ((far_r != rf) & painted[rf])
    edge = np.repeat(np.arange(graph.edge_count), np.diff(graph.edge_start))
    share = np.bincount(edge, thin, minlength=graph.edge_count) / np.maximum(
        np.diff(graph.edge_start), 1
    )
    out: np.ndarray = np.where(share > 0.5, subpixel.THIN_SLACK, 1.0)
    return out


label_maps = st.one_of(
    arrays(
        np.int32, st.tuples(st.integers(1, 12), st.integers(1, 12)), elements=st.integers(-1, 3)
    ),
    st.tuples(
        arrays(
            np.int32, st.tuples(st.integers(1, 6), st.integers(1, 6)), elements=st.integers(-1, 2)
        ),
        st.integers(1, 5),
        st.integers(1, 5),
    ).map(lambda t: np.kron(t[0], np.ones((t[1], t[2]), dtype=np.int32))),
)


@settings(max_examples=150, deadline=None)
@given(label_maps, st.integers(0, 2**32 - 1), st.booleans())
def test_shifts_and_slack_from_the_sides_are_the_looked_up_ones(
    labels: np.ndarray, seed: int, clear: bool
) -> None:
    rng = np.random.default_rng(seed)
    graph = build_boundary_graph(labels)
    rgba = rng.integers(0, 256, (*labels.shape, 4)).astype(np.uint8)
    if clear:
        rgba[..., 3][labels == -1] = 0
    palette = rng.integers(0, 256, (4, 3)).astype(np.float64)
    colors = subpixel.face_colors(graph, rgba, palette)
    sides = subpixel.crack_sides(graph)
    expected = looked_up_shifts(graph, rgba, colors)
    assert np.array_equal(subpixel.crack_shifts(graph, rgba, colors, sides), expected)
    assert np.array_equal(subpixel.crack_shifts(graph, rgba, colors), expected)
    assert np.array_equal(subpixel.thin_slack(graph, sides), looked_up_slack(graph))


@settings(max_examples=100, deadline=None)
@given(label_maps, st.integers(0, 2**32 - 1), st.floats(0.0, 1.0))
def test_the_left_out_colour_is_read_from_the_runs(
    labels: np.ndarray, seed: int, transparent: float
) -> None:
    rng = np.random.default_rng(seed)
    graph = build_boundary_graph(labels)
    rgba = rng.integers(0, 256, (*labels.shape, 4)).astype(np.uint8)
    rgba[..., 3][rng.random(labels.shape) < transparent] = 0
    colors = subpixel.face_colors(graph, rgba, np.zeros((4, 3)))
    void = graph.face_label == -1
    if void.any():
        left_out = labels == -1
        expected = np.median(subpixel.premultiply(rgba[left_out]), axis=0)
        if 2 * np.count_nonzero(rgba[..., 3][left_out] == 0) > np.count_nonzero(left_out):
            expected = np.zeros(4)
        assert np.array_equal(colors[void], np.broadcast_to(expected, (int(void.sum()), 4)))


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["RGBA", "RGB", "LA", "L", "P"]),
    st.integers(1, 70),
    st.integers(1, 70),
    st.integers(0, 2**32 - 1),
)
def test_decoded_pixels_are_the_images_array(mode: str, width: int, height: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    source = Image.fromarray(rng.integers(0, 256, (height, width, 4)).astype(np.uint8), "RGBA")
    image = source.convert(mode) if mode != "P" else source.convert("RGB").quantize(16)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    with Image.open(io.BytesIO(buffer.getvalue())) as reread:
        expected = np.array(reread.convert("RGBA"), dtype=np.uint8)
    with Image.open(io.BytesIO(buffer.getvalue())) as opened:
        opened.load()
        got = _to_rgba(opened)
    assert got.flags.writeable
    assert np.array_equal(got, expected)
