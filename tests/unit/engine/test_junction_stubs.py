"""Junction stubs in fewer segments (issue 12, item 7): a tiny open edge between big
faces, or around a stray anti-aliased pixel, is one chord between its junctions; a dot
the engine keeps does not lose its shape to chords; no layer walks a chord out and back
(a zero-area spike); and a four-colour junction shows no seam at 4x."""

from __future__ import annotations

import io

import numpy as np
import pytest
import resvg_py
from PIL import Image

from printjob_adapters.engine import curves
from printjob_adapters.engine.curves import EdgeData, EdgeFaces, fit_all
from printjob_adapters.engine.progress import silent
from printjob_adapters.engine.vector import CLOSE, LINE, MOVE, OP_POINTS, VectorArt
from printjob_adapters.engine.vectorise import vectorise
from tests.unit.engine.test_vectorise_support import (
    Seg,
    contours,
    paint,
    polygon_area,
    rasterise,
    rect,
)

WHITE = (255, 255, 255)
RED = (220, 30, 40)
BLUE = (20, 40, 200)
GREEN = (30, 170, 60)
YELLOW = (240, 200, 30)


def _stub(areas: list[int]) -> tuple[EdgeData, EdgeFaces]:
    """One open edge of two cracks with a turn (+x then +y) from junction (0, 0) to
    junction (1, 1), between faces 1 and 2 of these areas (face 0 is the outside)."""
    edge = EdgeData(
        points=np.array([(0.5, 0.0), (1.0, 0.5)]),
        dirs=np.array([0, 1]),
        corners=np.array([(0.0, 0.0), (1.0, 0.0)]),
        offsets=np.array([0, 2]),
        closed=np.array([False]),
        start=np.array([(0.0, 0.0)]),
        end=np.array([(1.0, 1.0)]),
        slack=np.ones(1),
    )
    return edge, EdgeFaces(left=np.array([1]), right=np.array([2]), area=np.array([0, *areas]))


@pytest.mark.parametrize("areas", [[500, 800], [900, 1], [2, 3000]])
def test_a_tiny_open_edge_between_big_faces_or_a_stray_pixel_is_one_chord(
    areas: list[int],
) -> None:
    edge, faces = _stub(areas)
    fitted = fit_all(np.array([7]), edge, 0.4, faces=faces)[7]
    assert fitted.is_line.tolist() == [True]
    assert fitted.start.tolist() == [0.0, 0.0]
    assert fitted.end.tolist() == [1.0, 1.0]


def test_without_faces_or_beside_a_dot_a_tiny_open_edge_keeps_its_crack_polygon() -> None:
    edge, faces = _stub([500, 4])
    for fitted in (
        fit_all(np.array([7]), edge, 0.4)[7],
        fit_all(np.array([7]), edge, 0.4, faces=faces)[7],
    ):
        # Start junction, the crack corner (1, 0), end junction: two lines.
        assert fitted.segments[:, 2].tolist() == [[1.0, 0.0], [1.0, 1.0]]


def _green_area(art: VectorArt) -> float:
    """The area (pixels) showing green when the layers are painted in order, counted at
    16x: every render pixel nearest green among the colours drawn, by sixteen squared."""
    scale = 16
    render = rasterise(art, scale)[..., :3].astype(int)
    colours = np.array([WHITE, RED, BLUE, GREEN])
    nearest = np.abs(render[..., None, :] - colours).sum(axis=3).argmin(axis=2)
    return float((nearest == 3).sum()) / scale**2


_DOT_SCENES = [
    # The dot's right side on a blue block, its bottom on a red one: its edge to the
    # white is an L of four cracks.
    ((22, 0, 40, 22), (0, 22, 22, 40)),
    # Blue and red each touch part of a side: stubs of one to three cracks.
    ((22, 0, 40, 21), (0, 22, 21, 40)),
    ((21, 0, 40, 21), (0, 22, 21, 40)),
    # Only a corner's worth of each.
    ((22, 21, 40, 40), (21, 22, 40, 40)),
]


def _dot_area(right: tuple[int, ...], below: tuple[int, ...]) -> float:
    # A 2 x 2 dot, the smallest the engine keeps, with its sides on two other colours.
    shapes = [(BLUE, rect(*right)), (RED, rect(*below)), (GREEN, rect(20, 20, 22, 22))]
    rgba, seg = paint(40, 40, WHITE, shapes)
    return _green_area(vectorise(rgba, seg, silent()))


def _no_chords(edges: EdgeData, sel: np.ndarray, *_: np.ndarray) -> np.ndarray:
    return np.zeros(len(sel), dtype=bool)


def _every_chord(
    edges: EdgeData, sel: np.ndarray, closed: np.ndarray, turns: np.ndarray, *_: np.ndarray
) -> np.ndarray:
    chord: np.ndarray = ~closed & (turns > 0)
    return chord


@pytest.mark.parametrize(("right", "below"), _DOT_SCENES)
def test_a_two_pixel_dot_at_a_junction_keeps_its_area(right, below, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Its tiny edges between the junctions are not cut short by chords: it shows as
    # much green as when every tiny edge is its crack polygon, within a quarter pixel.
    chosen = _dot_area(right, below)
    monkeypatch.setattr(curves, "_stub_chords", _no_chords)
    assert abs(chosen - _dot_area(right, below)) <= 0.25


def test_chords_everywhere_would_eat_into_the_dots(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The check above can fail: a chord for every tiny open edge costs the dots a pixel
    # and more.
    monkeypatch.setattr(curves, "_stub_chords", _no_chords)
    polygons = [_dot_area(*scene) for scene in _DOT_SCENES]
    monkeypatch.setattr(curves, "_stub_chords", _every_chord)
    everywhere = [_dot_area(*scene) for scene in _DOT_SCENES]
    assert max(p - e for p, e in zip(polygons, everywhere, strict=True)) > 1.0


def _stray_pixel() -> tuple[np.ndarray, Seg]:
    """A red staircase over white with one yellow pixel wedged into a step: the yellow
    pixel's two tiny edges run between the same two junctions, so both become the same
    chord, and the yellow layer alone (filling neither neighbour) walks both."""
    labels = np.zeros((24, 24), dtype=np.int32)
    for y in range(24):
        labels[y, : max(0, 20 - y)] = 1
    labels[8, 12] = 2
    palette = np.array([WHITE, RED, YELLOW], dtype=np.float64)
    rgba = np.zeros((24, 24, 4), dtype=np.uint8)
    rgba[..., :3] = palette[labels].astype(np.uint8)
    rgba[..., 3] = 255
    return rgba, Seg(labels=labels, palette=palette)


def _spikes(art: VectorArt) -> int:
    """Straight segments followed, in their contour, by the same segment walked back."""
    found = 0
    for layer in art.layers:
        assert layer.outline is not None
        ops, points = layer.outline.ops, layer.outline.points
        at = np.concatenate([[0], np.cumsum(OP_POINTS[ops])])
        start = np.zeros(2)
        segments: list[tuple[bool, np.ndarray, np.ndarray]] = []
        here = np.zeros(2)
        for k, op in enumerate(ops.tolist()):
            if op == MOVE:
                start = here = points[at[k]]
                segments = []
            elif op == CLOSE:
                if not np.array_equal(here, start):
                    segments.append((True, here, start))
                for i, (line, a, _) in enumerate(segments):
                    after, _, d = segments[(i + 1) % len(segments)]
                    if len(segments) > 1 and line and after and np.array_equal(a, d):
                        found += 1
            else:
                end = points[at[k + 1] - 1]
                segments.append((op == LINE, here, end))
                here = end
    return found


def test_a_stray_pixel_at_a_junction_leaves_no_zero_area_spike() -> None:
    rgba, seg = _stray_pixel()
    art = vectorise(rgba, seg, silent())
    assert _spikes(art) == 0
    # The pixel is gone (its stubs are chords), and every contour left is drawn.
    for layer in art.layers:
        assert all(polygon_area(c) > 0.01 for c in contours(layer.commands))


def test_spikes_are_found_where_the_stacking_would_leave_them(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The check above can fail: with the pixel's junctions left apart and without the
    # stacking's clean-up, the yellow layer walks the chord out and back.
    from printjob_adapters.engine import stacking

    monkeypatch.setattr(curves, "_collapse_fragments", lambda *args: None)
    rgba, seg = _stray_pixel()
    assert _spikes(vectorise(rgba, seg, silent())) == 0
    monkeypatch.setattr(stacking, "_without_spikes", lambda *args: None)
    assert _spikes(vectorise(rgba, seg, silent())) > 0


def test_a_stray_pixel_collapses_to_a_point(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Its junctions meet at one point, so its chords and the staircase's single cracks
    # beside it shrink to nothing: fewer segments, and no yellow drawn.
    rgba, seg = _stray_pixel()
    art = vectorise(rgba, seg, silent())
    monkeypatch.setattr(curves, "_collapse_fragments", lambda *args: None)
    apart = vectorise(rgba, seg, silent())
    assert art.segment_count() < apart.segment_count()
    assert YELLOW not in [layer.color for layer in art.layers if layer.commands]


def _svg(art: VectorArt) -> str:
    """The layers as a bare SVG in pixel units (no page behind them)."""
    paths = []
    for layer in art.layers:
        d = []
        for op, pts in layer.commands:
            if op == "closePath":
                d.append("Z")
            else:
                letter = {"moveTo": "M", "lineTo": "L", "curveTo": "C"}[op]
                d.append(letter + " ".join(f"{x:.4f} {y:.4f}" for x, y in pts))
        paths.append(f'<path fill="{layer.hex}" fill-rule="evenodd" d="{" ".join(d)}"/>')
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{art.width}" height="{art.height}" '
        f'viewBox="0 0 {art.width} {art.height}">{"".join(paths)}</svg>'
    )


def test_a_four_colour_junction_shows_no_seam_at_4x() -> None:
    # Four anti-aliased regions meeting off the pixel grid (stray pixels and stubs
    # around the junction): every layer draws them from the same fitted edges, so at 4x
    # the page is opaque everywhere and, a pixel away from the true borders, each
    # region shows its own colour.
    cx, cy = 20.4, 19.6

    def red(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return (x < cx) & (y < cy)

    def blue(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return (x >= cx) & (y < cy - 0.3 * (x - cx))

    def green(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return (x < cx + 0.5 * (y - cy)) & (y >= cy)

    rgba, seg = paint(40, 40, YELLOW, [(RED, red), (BLUE, blue), (GREEN, green)])
    art = vectorise(rgba, seg, silent())
    zoom = 4
    png = resvg_py.svg_to_bytes(svg_string=_svg(art), width=40 * zoom, dpi=96)
    pixels = np.asarray(Image.open(io.BytesIO(bytes(png))).convert("RGBA")).astype(int)
    assert pixels[..., 3].min() == 255
    # The truth at every render pixel's centre, and whether the centre lies a pixel
    # or more from every border (the same tests a pixel away in eight directions).
    grid = (np.arange(40 * zoom) + 0.5) / zoom
    x, y = np.meshgrid(grid, grid)
    regions = [red, blue, green]
    owner = np.select([r(x, y) for r in regions], [1, 2, 3], 0)
    truth = np.array([YELLOW, RED, BLUE, GREEN])[owner]
    inside = np.ones(owner.shape, dtype=bool)
    for dx, dy in [
        (1, 0),
        (-1, 0),
        (0, 1),
        (0, -1),
        (0.7, 0.7),
        (-0.7, 0.7),
        (0.7, -0.7),
        (-0.7, -0.7),
    ]:
        there = np.select([r(x + dx, y + dy) for r in regions], [1, 2, 3], 0)
        inside &= there == owner
    assert inside.sum() > 0.8 * inside.size
    off = np.abs(pixels[..., :3] - truth).max(axis=2)
    assert off[inside].max() <= 8


def test_chord_share_keeps_a_dot_within_a_quarter_pixel() -> None:
    # The rule's numbers: a 2 x 2 dot may give at most a quarter pixel to chords.
    assert curves.CHORD_SHARE * 4 <= 0.25
    assert curves.DOT_AREA == 4
