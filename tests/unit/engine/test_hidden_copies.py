"""Fewer hidden outline copies (`hidden_copies`): a layer fills more of the later faces
(a minimum cut) and the layers may be painted in another order, yet the art looks the
same: no seam at 4x, every shape in its own colour, and fewer path segments than the
stacking's own rule where a copy could go."""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import numpy as np
import pytest
import resvg_py
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from printjob_adapters.engine import TraceOptions, hidden_copies, trace
from printjob_adapters.engine import vectorise as vectorise_module
from printjob_adapters.engine.boundaries import build_boundary_graph
from printjob_adapters.engine.progress import silent
from printjob_adapters.engine.stacking import Stacking, stack_layers
from printjob_adapters.engine.subpixel import crack_points, junction_points
from printjob_adapters.engine.vectorise import fit_edges

WHITE = (255, 255, 255)
PAPER = (236, 240, 244)
BLACK = (20, 20, 24)
RED = (214, 48, 40)
BLUE = (30, 60, 190)
GOLD = (250, 190, 40)
GREEN = (20, 130, 70)
#: Drawn this many times larger, then shrunk: anti-aliased edges as an export has.
SUPER = 4
#: Render scale of the traced file.
ZOOM = 4
#: How far (0..255, any channel) a rendered pixel may lie outside the range of the
#: drawn truth within `SEAM_REACH` render pixels (an edge traced up to a pixel away at
#: 1x): a seam (paper or a far layer showing through between two shapes) stands out
#: by far more.
SEAM_BOUND = 24
SEAM_REACH = 4
#: How near (0..255, any channel) a shape's middle must render to its own colour.
COLOUR_BOUND = 12

Shape = tuple[str, tuple[int, int, int], tuple[float, float, float, float]]


def _picture(
    size: tuple[int, int], background: tuple[int, int, int], shapes: list[Shape], scale: int
) -> np.ndarray:
    """The shapes drawn `scale` times larger than `size`, anti-aliased (drawn `SUPER`
    times larger again and shrunk)."""
    w, h = size
    ink = SUPER * scale
    big = Image.new("RGB", (w * ink, h * ink), background)
    pen = ImageDraw.Draw(big)
    for kind, colour, (x0, y0, x1, y1) in shapes:
        box = (x0 * ink, y0 * ink, x1 * ink - 1, y1 * ink - 1)
        if kind == "disc":
            pen.ellipse(box, fill=colour)
        else:
            pen.rectangle(box, fill=colour)
    small = big.resize((w * scale, h * scale), Image.Resampling.BOX)
    return np.asarray(small).astype(np.int16)


def _draw(size: tuple[int, int], background: tuple[int, int, int], shapes: list[Shape]) -> bytes:
    out = io.BytesIO()
    Image.fromarray(_picture(size, background, shapes, 1).astype(np.uint8)).save(out, "PNG")
    return out.getvalue()


def _render(svg: bytes, width: int) -> np.ndarray:
    """The file at `ZOOM` times its pixel size, on white. Its size in points is set to
    the viewBox's in pixels first, so that the render's pixels line up with the drawn
    truth's (points at 96 dpi round a pixel or so off)."""
    text = re.sub(r'width="[^"]*" height="[^"]*"', _pixel_size, svg.decode(), count=1)
    png = bytes(resvg_py.svg_to_bytes(svg_string=text, width=width * ZOOM))
    rgba = np.asarray(Image.open(io.BytesIO(png)).convert("RGBA")).astype(np.int32)
    alpha = rgba[..., 3:4]
    on_white: np.ndarray = ((rgba[..., :3] * alpha + 255 * (255 - alpha)) // 255).astype(np.int16)
    return on_white


def _pixel_size(match: re.Match[str]) -> str:
    viewbox = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', match.string)
    if viewbox is None:
        return match.group(0)
    return f'width="{viewbox.group(1)}" height="{viewbox.group(2)}"'


def _seam_pixels(render: np.ndarray, truth: np.ndarray) -> int:
    """Render pixels lighter or darker (any channel, by more than `SEAM_BOUND`) than
    every pixel of the drawn truth at the same scale within `SEAM_REACH` of them: both
    sides of an edge and their mixtures lie in that range, paper or a far layer showing
    through between them does not."""
    # The file's size in points rounds to a render pixel or two short of the truth's.
    h, w = min(render.shape[0], truth.shape[0]), min(render.shape[1], truth.shape[1])
    render, truth = render[:h, :w], truth[:h, :w]
    reach = SEAM_REACH
    padded = np.pad(truth, ((reach, reach), (reach, reach), (0, 0)), mode="edge")
    low = np.full(truth.shape, 999, dtype=np.int16)
    high = np.full(truth.shape, -999, dtype=np.int16)
    for dy in range(-reach, reach + 1):
        for dx in range(-reach, reach + 1):
            near = padded[reach + dy : reach + dy + h, reach + dx : reach + dx + w]
            low = np.minimum(low, near)
            high = np.maximum(high, near)
    out = np.any((render < low - SEAM_BOUND) | (render > high + SEAM_BOUND), axis=2)
    return int(np.count_nonzero(out))


def _seams(data: bytes, size: tuple[int, int], shapes: list[Shape]) -> int:
    """`_seam_pixels` of the traced file against the shapes drawn at `ZOOM`."""
    result = trace(data, TraceOptions())
    return _seam_pixels(_render(result.data, result.width), _picture(size, WHITE, shapes, ZOOM))


def _segments(svg: bytes) -> int:
    """Drawing commands in the path data (closePath included, moveTo not)."""
    text = svg.decode()
    count = 0
    for chunk in text.split(' d="')[1:]:
        data = chunk.split('"', 1)[0]
        count += sum(data.count(c) for c in "LlHhVvCcSsQqTtAaZz")
    return count


def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stacking's own rule: no restacking after the fitting."""

    def keep(graph: object, stacking: Stacking, fitted: object) -> Stacking:
        return stacking

    monkeypatch.setattr(vectorise_module, "restack", keep)


def _belly() -> tuple[tuple[int, int], list[Shape]]:
    # The light belly has the larger area, so by area it is painted before the black
    # body around it and fills the body: the body's silhouette written twice.
    shapes: list[Shape] = [
        ("disc", BLACK, (20, 14, 140, 150)),
        ("disc", PAPER, (34, 34, 126, 146)),
        ("disc", GOLD, (70, 60, 90, 80)),
    ]
    return (160, 160), shapes


def _ringed_disc() -> tuple[tuple[int, int], list[Shape]]:
    # Red inside a thin black ring inside a white page: the page's layer fills the
    # ring (near it), and filling the red too takes the ring's inner edge off its
    # outline.
    shapes: list[Shape] = [
        ("disc", BLACK, (30, 30, 130, 130)),
        ("disc", RED, (36, 36, 124, 124)),
        ("rect", BLUE, (70, 70, 90, 90)),
    ]
    return (160, 160), shapes


def _stripes() -> tuple[tuple[int, int], list[Shape]]:
    # Edges off the pixel grid (so that it is not read as enlarged pixel art).
    shapes: list[Shape] = [
        ("rect", GREEN, (0, 40.5, 200, 80.25)),
        ("rect", GOLD, (0, 50.75, 200, 69.5)),
        ("rect", BLUE, (0, 100.25, 200, 119.75)),
        ("disc", RED, (80.5, 20.25, 119.25, 139.5)),
        ("disc", BLACK, (95.25, 70.5, 104.75, 89.25)),
    ]
    return (200, 160), shapes


#: The cases the stacking's own rule traces without a seam either.
SEAMLESS = ("belly", "ringed disc")

CASES: dict[str, Callable[[], tuple[tuple[int, int], list[Shape]]]] = {
    "belly": _belly,
    "ringed disc": _ringed_disc,
    "stripes": _stripes,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_seam_and_every_shape_in_its_colour(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    size, shapes = CASES[name]()
    data = _draw(size, WHITE, shapes)
    result = trace(data, TraceOptions())
    render = _render(result.data, result.width)
    seams = _seam_pixels(render, _picture(size, WHITE, shapes, ZOOM))
    if name in SEAMLESS:
        assert seams == 0
    else:
        # The stacking's own fringe trim already lets a thread of paper show where the
        # red disc crosses the green stripe: no more than that.
        _today(monkeypatch)
        assert seams <= _seams(data, size, shapes)
    for _, colour, (x0, y0, x1, y1) in shapes:
        # The middle of the shape's box: in the shape, unless a later shape covers it.
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        covering = [
            c
            for _, c, (a0, b0, a1, b1) in shapes
            if a0 <= cx - 2 and cx + 2 <= a1 and b0 <= cy - 2 and cy + 2 <= b1
        ]
        expected = covering[-1] if covering else colour
        pixel = render[int(cy * ZOOM), int(cx * ZOOM)]
        assert np.abs(pixel - np.array(expected)).max() <= COLOUR_BOUND


@pytest.mark.parametrize("name", sorted(CASES))
def test_fewer_segments_than_the_stacking_rule(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    size, shapes = CASES[name]()
    data = _draw(size, WHITE, shapes)
    ours = trace(data, TraceOptions())
    _today(monkeypatch)
    before = trace(data, TraceOptions())
    assert _segments(ours.data) < _segments(before.data)
    # The same picture: at 4x the two renders differ only in anti-aliased pixels.
    a, b = _render(ours.data, ours.width), _render(before.data, before.width)
    assert np.mean(np.abs(a - b) > 32) < 0.002


def _fitted_stacking(labels: np.ndarray) -> tuple[object, Stacking, object]:
    graph = build_boundary_graph(labels)
    points = crack_points(graph, np.zeros(len(graph.crack_x)))
    junctions = junction_points(graph, points)
    colors = int(labels.max()) + 1
    stacking = stack_layers(graph, colors)
    fitted = fit_edges(graph, points, junctions, np.arange(graph.edge_count), silent())
    return graph, stacking, fitted


def _outline_segments(graph: object, members: np.ndarray, fitted: object) -> int:
    counts = hidden_copies._segment_counts(graph, fitted)  # type: ignore[arg-type]
    left, right = graph.edge_left, graph.edge_right  # type: ignore[attr-defined]
    return int(((members[:, left] != members[:, right]) * counts).sum())


def test_the_cut_takes_a_ring_s_inner_edge_off_the_page() -> None:
    # Page 0, a ring 2 around a disc 1 (larger than the ring, so painted before it).
    labels = np.zeros((40, 40), dtype=np.int32)
    yy, xx = np.mgrid[:40, :40]
    r = np.hypot(yy - 19.5, xx - 19.5)
    labels[r < 15] = 2
    labels[r < 12] = 1
    graph, stacking, fitted = _fitted_stacking(labels)
    assert stacking.order.tolist() == [0, 1, 2]
    members = hidden_copies.fewer_copies(graph, stacking.order, stacking.members, fitted)  # type: ignore[arg-type]
    # Only faces are added, and the page's layer now fills the disc too.
    assert (members >= stacking.members).all()
    page_faces = members[0]
    assert page_faces[graph.face_label == 1].all()  # type: ignore[attr-defined]
    assert _outline_segments(graph, members, fitted) < _outline_segments(
        graph, stacking.members, fitted
    )


def test_the_cut_keeps_out_a_face_on_transparent_paper() -> None:
    # Left-out (transparent) corner: a later face bordering it stays out of the page's
    # layer, which would otherwise peek out along that border.
    labels = np.zeros((30, 30), dtype=np.int32)
    labels[5:25, 5:25] = 2
    labels[10:20, 10:20] = 1
    labels[10:20, 17:30] = 1
    labels[:, 27:] = -1
    graph, stacking, fitted = _fitted_stacking(labels)
    members = hidden_copies.fewer_copies(graph, stacking.order, stacking.members, fitted)  # type: ignore[arg-type]
    face_label = graph.face_label  # type: ignore[attr-defined]
    transparent = np.nonzero(face_label == -1)[0]
    left, right = graph.edge_left, graph.edge_right  # type: ignore[attr-defined]
    touching = set(left[np.isin(right, transparent)].tolist()) | set(
        right[np.isin(left, transparent)].tolist()
    )
    for k in stacking.order.tolist():
        for f in touching:
            if face_label[f] >= 0 and face_label[f] != k:
                assert members[k, f] == stacking.members[k, f]


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["disc", "rect"]),
            st.sampled_from([BLACK, RED, BLUE, GOLD, GREEN, PAPER]),
            st.integers(0, 60),
            st.integers(0, 60),
            st.integers(16, 70),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_stacked_shapes_show_no_seam(
    drawn: list[tuple[str, tuple[int, int, int], int, int, int]],
) -> None:
    shapes: list[Shape] = [
        (kind, colour, (x + 0.25, y + 0.5, min(x + size, 95) + 0.75, min(y + size, 95) + 0.25))
        for kind, colour, x, y, size in drawn
    ]
    data = _draw((96, 96), WHITE, shapes)
    ours = _seams(data, (96, 96), shapes)
    with pytest.MonkeyPatch.context() as patch:
        _today(patch)
        assert ours <= _seams(data, (96, 96), shapes)


def test_a_new_paint_order_opens_no_seam_the_old_one_closed() -> None:
    # Two black discs under a red square: painted black first, the fringe trims leave
    # the square out of the black layer (the paper under both fills it), and the paper
    # showed along the square's whole border; that order is not taken.
    drawn = [(BLACK, 0, 0, 16), (BLACK, 0, 0, 65)]
    shapes: list[Shape] = [
        ("disc", colour, (x + 0.25, y + 0.5, min(x + size, 95) + 0.75, min(y + size, 95) + 0.25))
        for colour, x, y, size in drawn
    ]
    shapes.append(("rect", RED, (3.25, 14.5, 60.75, 71.25)))
    data = _draw((96, 96), WHITE, shapes)
    ours = _seams(data, (96, 96), shapes)
    with pytest.MonkeyPatch.context() as patch:
        _today(patch)
        assert ours <= _seams(data, (96, 96), shapes)


def test_the_seam_check_sees_paper_between_two_shapes() -> None:
    # Two triangles drawn a third of a pixel apart along the diagonal: paper shows.
    size = (40, 40)
    truth = _picture(size, WHITE, [("rect", BLACK, (0, 0, 40, 40))], ZOOM)
    truth[np.triu_indices(40 * ZOOM, 1)] = RED
    gap = (
        b'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" viewBox="0 0 40 40">'
        b'<rect width="40" height="40" fill="#fff"/>'
        b'<path d="M0 0.3V40H39.7z" fill="#141418"/><path d="M0.3 0H40V39.7z" fill="#d63028"/>'
        b"</svg>"
    )
    # Abutting (no gap) still lets paper through the anti-aliased diagonal; with the
    # black under the red, as the stacking paints, nothing shows.
    abutting = gap.replace(b"0.3", b"0").replace(b"39.7", b"40")
    stacked = abutting.replace(b"M0 0V40H40z", b"M0 0H40V40H0z")
    assert _seam_pixels(_render(gap, 40), truth) > 0
    assert _seam_pixels(_render(abutting, 40), truth) > 0
    assert _seam_pixels(_render(stacked, 40), truth) == 0
