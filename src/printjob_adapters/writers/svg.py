"""The SVG writer: one `<g>` per layer, compact path data, physical size in points.

The root element states the physical size in points (`pt`, 1/72 inch, the unit of the PDF
and EPS writers too) and a `viewBox` in canvas pixels, so `width = canvas px * 72 / dpi`.
Every group states `fill-rule="evenodd"` (SVG's default is nonzero). Coordinates are canvas
pixels rounded to 1/100 px; each segment is written absolute or relative, whichever is
shorter. The output depends only on its input: the same art gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from printjob_adapters.engine.canvas import Placement
from printjob_adapters.engine.vector import Layer, VectorArt

#: Coordinates are written in units of 1 / QUANTUM canvas pixels.
QUANTUM = 100

_SVG_NS = "http://www.w3.org/2000/svg"


def write_svg(art: VectorArt, placement: Placement) -> bytes:
    """The art placed on the canvas as a standalone SVG document (UTF-8)."""
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        f'<svg xmlns="{_SVG_NS}" width="{decimal(placement.width_pt)}pt" '
        f'height="{decimal(placement.height_pt)}pt" '
        f'viewBox="0 0 {placement.canvas_width} {placement.canvas_height}">\n',
    ]
    for layer in art.layers:
        data = path_data(layer, placement)
        if data:
            parts.append(f'<g fill="{layer.hex}" fill-rule="evenodd"><path d="{data}"/></g>\n')
    parts.append("</svg>\n")
    return "".join(parts).encode("utf-8")


def decimal(value: float, places: int = 4) -> str:
    """`value` rounded to `places` decimals, without trailing zeros."""
    text = f"{value:.{places}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def number(q: int) -> str:
    """A quantised coordinate as the shortest SVG number (`.5`, `-1.25`, `12`)."""
    if q == 0:
        return "0"
    sign = "-" if q < 0 else ""
    whole, frac = divmod(abs(q), QUANTUM)
    if frac == 0:
        return f"{sign}{whole}"
    digits = f"{frac:02d}".rstrip("0")
    return f"{sign}{whole or ''}.{digits}"


def quantised_points(layer: Layer, placement: Placement) -> np.ndarray:
    """Every point of the layer's commands, in order, as integer 1/QUANTUM canvas pixels."""
    flat = [point for _, points in layer.commands for point in points]
    if not flat:
        return np.zeros((0, 2), dtype=np.int64)
    xy = np.asarray(flat, dtype=np.float64)
    xy *= placement.scale
    xy += (placement.offset_x, placement.offset_y)
    return np.rint(xy * QUANTUM).astype(np.int64)


def segments(layer: Layer, placement: Placement) -> Iterator[tuple[str, list[tuple[int, int]]]]:
    """The layer's commands with quantised canvas points, minus what draws nothing.

    Drops zero-length lines and a line back to the contour's start right before its close
    (the close draws it), so every writer gets the same, smallest outline.
    """
    xy = quantised_points(layer, placement).tolist()
    commands = layer.commands
    i = 0
    current = start = (0, 0)
    for index, (op, points) in enumerate(commands):
        pts = [tuple(p) for p in xy[i : i + len(points)]]
        i += len(points)
        if op == "moveTo":
            current = start = pts[0]
            yield op, pts
        elif op == "lineTo":
            end = pts[0]
            closes_next = index + 1 < len(commands) and commands[index + 1][0] == "closePath"
            if end == current or (closes_next and end == start):
                continue
            current = end
            yield op, pts
        elif op == "curveTo":
            current = pts[2]
            yield op, pts
        elif op == "closePath":
            current = start
            yield op, pts
        else:
            raise ValueError(f"unknown outline command {op!r}")


def _joined(numbers: list[str], previous: str | None) -> str:
    """Numbers written one after another with only the separators SVG needs."""
    out = []
    for text in numbers:
        if previous is not None and not (
            text.startswith("-") or (text.startswith(".") and "." in previous)
        ):
            out.append(" ")
        out.append(text)
        previous = text
    return "".join(out)


class _PathWriter:
    """Builds compact path data: shortest of absolute and relative, repeated letters dropped."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.letter: str | None = None
        self.last_number: str | None = None
        self.current = (0, 0)
        self.start = (0, 0)

    def _candidate(self, letter: str, values: list[int]) -> tuple[str, str]:
        numbers = [number(v) for v in values]
        if letter == self.letter and letter not in "Mm":
            return _joined(numbers, self.last_number), numbers[-1]
        return letter + _joined(numbers, None), numbers[-1]

    def _emit(self, options: list[tuple[str, list[int]]]) -> None:
        best = min(
            ((*self._candidate(letter, values), letter) for letter, values in options),
            key=lambda item: len(item[0]),
        )
        text, last, letter = best
        self.parts.append(text)
        self.letter, self.last_number = letter, last

    def move(self, p: tuple[int, int]) -> None:
        cx, cy = self.current
        self._emit([("M", [p[0], p[1]]), ("m", [p[0] - cx, p[1] - cy])])
        self.current = self.start = p

    def line(self, p: tuple[int, int]) -> None:
        cx, cy = self.current
        x, y = p
        if y == cy:
            self._emit([("H", [x]), ("h", [x - cx])])
        elif x == cx:
            self._emit([("V", [y]), ("v", [y - cy])])
        else:
            self._emit([("L", [x, y]), ("l", [x - cx, y - cy])])
        self.current = p

    def curve(self, p1: tuple[int, int], p2: tuple[int, int], p: tuple[int, int]) -> None:
        cx, cy = self.current
        absolute = [*p1, *p2, *p]
        relative = [v - (cx if k % 2 == 0 else cy) for k, v in enumerate(absolute)]
        self._emit([("C", absolute), ("c", relative)])
        self.current = p

    def close(self) -> None:
        self.parts.append("z")
        self.letter, self.last_number = "z", None
        self.current = self.start

    def text(self) -> str:
        return "".join(self.parts)


def path_data(layer: Layer, placement: Placement) -> str:
    """The layer's outlines as compact SVG path data in canvas pixels."""
    pen = _PathWriter()
    for op, pts in segments(layer, placement):
        if op == "moveTo":
            pen.move(pts[0])
        elif op == "lineTo":
            pen.line(pts[0])
        elif op == "curveTo":
            pen.curve(pts[0], pts[1], pts[2])
        else:
            pen.close()
    return pen.text()
