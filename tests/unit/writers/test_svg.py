"""The SVG writer: a valid document with physical size, fill rule and compact path data."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from printjob_adapters.engine.canvas import fit
from printjob_adapters.engine.vector import Layer, VectorArt
from printjob_adapters.engine.writers.svg import number, path_data, segments, write_svg
from tests.unit.writers.test_writers import BLUE, RED, circle, layer, rect, ring_and_circle

NS = "{http://www.w3.org/2000/svg}"


def parse(art: VectorArt, width: int, height: int, dpi: int) -> ET.Element:
    return ET.fromstring(write_svg(art, fit(art.width, art.height, width, height, dpi)))


def test_root_states_physical_size_in_points_and_canvas_viewbox() -> None:
    root = parse(ring_and_circle(), 4500, 5400, 300)

    assert root.tag == f"{NS}svg"
    assert root.get("width") == "1080pt"  # 4500 px at 300 dpi = 15 in = 1080 pt
    assert root.get("height") == "1296pt"
    assert root.get("viewBox") == "0 0 4500 5400"


def test_odd_sizes_keep_their_fraction() -> None:
    root = parse(ring_and_circle(), 1000, 333, 600)
    assert root.get("width") == "120pt"
    assert root.get("height") == "39.96pt"


def test_one_group_per_layer_in_order_with_colour_and_even_odd() -> None:
    root = parse(ring_and_circle(), 200, 100, 300)
    groups = root.findall(f"{NS}g")

    assert [g.get("fill") for g in groups] == ["#ffffff", "#00a000", "#0000ff"]
    assert {g.get("fill-rule") for g in groups} == {"evenodd"}
    assert all(len(g.findall(f"{NS}path")) == 1 for g in groups)


def test_layers_without_outlines_are_left_out() -> None:
    art = VectorArt(100, 50, (Layer(RED, ()), layer(BLUE, rect(0, 0, 10, 10))))
    root = parse(art, 100, 50, 300)
    assert [g.get("fill") for g in root.findall(f"{NS}g")] == ["#0000ff"]


def test_path_data_is_compact() -> None:
    placement = fit(100, 50, 100, 50, 300)
    square = layer(RED, rect(10, 10, 40, 40), rect(60.5, 10, 90.25, 40))
    # H and V for straight lines, the closing line left to z, the second move relative.
    assert path_data(square, placement) == "M10 10H40V40H10zm50.5 0H90.25V40H60.5z"


def test_curves_use_relative_coordinates_when_shorter() -> None:
    data = path_data(layer(RED, circle(1000, 1000, 10)), fit(2000, 2000, 2000, 2000, 300))
    assert data.startswith("M1010 1000c")
    assert "  " not in data and ", " not in data
    assert len(data) < 110


def test_coordinates_are_rounded_to_hundredths() -> None:
    placement = fit(3, 3, 1000, 1000, 300)  # scale 333.33...
    data = path_data(layer(RED, rect(0, 0, 1, 1)), placement)
    assert data == "M0 0H333.33V333.33H0z"


def test_same_point_twice_draws_no_zero_length_line() -> None:
    commands = [*rect(0, 0, 10, 10)]
    commands.insert(2, ("lineTo", ((10, 0),)))
    data = path_data(layer(RED, commands), fit(10, 10, 10, 10, 300))
    assert data == "M0 0H10V10H0z"


def test_numbers() -> None:
    assert [number(q) for q in (0, 50, -50, 100, -125, 12345, 1, -7)] == [
        "0", ".5", "-.5", "1", "-1.25", "123.45", ".01", "-.07"
    ]  # fmt: skip


_TOKEN = re.compile(r"[MmLlHhVvCcZz]|-?(?:\d+\.?\d*|\.\d+)")


def _absolute_points(data: str) -> list[tuple[float, float]]:
    """Every end point of a path, resolved to absolute coordinates (a tiny path parser)."""
    tokens = _TOKEN.findall(data)
    points, x, y, sx, sy, letter, i = [], 0.0, 0.0, 0.0, 0.0, "", 0
    arity = {"m": 2, "l": 2, "h": 1, "v": 1, "c": 6, "z": 0}
    while i < len(tokens):
        if tokens[i].isalpha():
            letter = tokens[i]
            i += 1
            if letter in "zZ":
                x, y = sx, sy
                continue
        values = [float(t) for t in tokens[i : i + arity[letter.lower()]]]
        i += arity[letter.lower()]
        rel = letter.islower()
        if letter in "Hh":
            x = x + values[0] if rel else values[0]
        elif letter in "Vv":
            y = y + values[0] if rel else values[0]
        else:
            ex, ey = values[-2:]
            x, y = (x + ex, y + ey) if rel else (ex, ey)
        if letter in "Mm":
            sx, sy = x, y
        points.append((_q(x), _q(y)))
    return points


def _q(value: float) -> float:
    """Rounded to 1/100 as the writer rounds (half to even on the scaled value)."""
    return float(np.rint(value * 100) / 100)


coordinate = st.floats(min_value=-50, max_value=150, allow_nan=False).map(lambda v: round(v, 3))


@given(st.lists(st.tuples(coordinate, coordinate), min_size=3, max_size=12))
def test_compact_path_data_keeps_every_point(points: list[tuple[float, float]]) -> None:
    commands = [("moveTo", (points[0],))]
    commands += [("lineTo", (p,)) for p in points[1:]]
    commands.append(("closePath", ()))
    data = path_data(layer(RED, commands), fit(100, 100, 100, 100, 300))

    drawn = _absolute_points(data)
    expected = [(_q(x), _q(y)) for x, y in points]
    # Every distinct vertex appears, in order (repeats and the closing line may be dropped).
    dedup = [p for i, p in enumerate(expected) if i == 0 or p != expected[i - 1]]
    if len(dedup) > 1 and dedup[-1] == dedup[0]:
        dedup.pop()
    assert drawn[: len(dedup)] == dedup


class OneByOne:
    """Reference for `path_data`: the writer going segment by segment, picking the
    shorter of absolute and relative (absolute on a tie) given what it wrote last."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.letter: str | None = None
        self.last: str | None = None
        self.current = self.start = (0, 0)

    def joined(self, numbers: list[str], previous: str | None) -> str:
        out = []
        for text in numbers:
            if previous is not None and not (
                text.startswith("-") or (text.startswith(".") and "." in previous)
            ):
                out.append(" ")
            out.append(text)
            previous = text
        return "".join(out)

    def emit(self, options: list[tuple[str, list[int]]]) -> None:
        texts = []
        for letter, values in options:
            numbers = [number(v) for v in values]
            if letter == self.letter and letter not in "Mm":
                text = self.joined(numbers, self.last)
            else:
                text = letter + self.joined(numbers, None)
            texts.append((text, numbers[-1], letter))
        text, self.last, self.letter = min(texts, key=lambda item: len(item[0]))
        self.parts.append(text)

    def write(self, layer: Layer, placement) -> str:
        for op, pts in segments(layer, placement):
            cx, cy = self.current
            if op == "moveTo":
                (x, y) = pts[0]
                self.emit([("M", [x, y]), ("m", [x - cx, y - cy])])
                self.current = self.start = (x, y)
            elif op == "lineTo":
                (x, y) = pts[0]
                if y == cy:
                    self.emit([("H", [x]), ("h", [x - cx])])
                elif x == cx:
                    self.emit([("V", [y]), ("v", [y - cy])])
                else:
                    self.emit([("L", [x, y]), ("l", [x - cx, y - cy])])
                self.current = (x, y)
            elif op == "curveTo":
                absolute = [v for p in pts for v in p]
                relative = [v - (cx if k % 2 == 0 else cy) for k, v in enumerate(absolute)]
                self.emit([("C", absolute), ("c", relative)])
                self.current = pts[2]
            else:
                self.parts.append("z")
                self.letter, self.last = "z", None
                self.current = self.start
        return "".join(self.parts)


# Coordinates that often repeat, sit on whole or half pixels, or cross zero.
value = st.one_of(
    st.sampled_from([0.0, 0.5, 1.0, 10.0, -0.25, 0.01, 0.1, 99.99, 100.0]),
    st.floats(min_value=-60, max_value=160, allow_nan=False).map(lambda v: round(v, 2)),
    st.floats(min_value=-60, max_value=160, allow_nan=False),
)
point = st.tuples(value, value)
segment_command = st.one_of(
    st.tuples(st.just("lineTo"), st.tuples(point)),
    st.tuples(st.just("curveTo"), st.tuples(point, point, point)),
)
contour = st.tuples(point, st.lists(segment_command, max_size=8), st.booleans())


@given(st.lists(contour, min_size=1, max_size=3), st.sampled_from([(100, 300), (1000, 72)]))
def test_bulk_path_data_matches_writing_segment_by_segment(contours, size):
    commands = []
    for start, body, back_to_start in contours:
        commands.append(("moveTo", (start,)))
        commands += body
        if back_to_start:
            commands.append(("lineTo", (start,)))
        commands.append(("closePath", ()))
    placement = fit(100, 100, size[0], size[0], size[1])
    art_layer = layer(RED, commands)
    assert path_data(art_layer, placement) == OneByOne().write(art_layer, placement)
