"""The one vector representation every writer replays.

A `VectorArt` is a stack of flat-colour layers in design units (one unit = one input
pixel, y pointing down, origin at the top-left corner of the input). Layers are painted
in order, bottom first, with ordinary "over" compositing and the even-odd fill rule.

The tracer guarantees the stacking property: wherever two layers meet, the layer painted
first extends underneath the later one, so painting the layers in order leaves no
background showing through along a shared edge at any zoom (no seams), and the visible
edge is the later layer's exactly-fitted outline.

Outline commands follow fontTools' RecordingPen value format, so any fontTools pen can
replay them: ("moveTo", ((x, y),)), ("lineTo", ((x, y),)),
("curveTo", ((x1, y1), (x2, y2), (x, y))), ("closePath", ()). Every contour is closed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import attrs

Point = tuple[float, float]
Command = (
    tuple[Literal["moveTo"], tuple[Point]]
    | tuple[Literal["lineTo"], tuple[Point]]
    | tuple[Literal["curveTo"], tuple[Point, Point, Point]]
    | tuple[Literal["closePath"], tuple[()]]
)
RGB = tuple[int, int, int]


@attrs.frozen
class Layer:
    """One flat colour and its filled outlines (even-odd)."""

    color: RGB
    commands: tuple[Command, ...]

    @property
    def hex(self) -> str:
        return "#{:02x}{:02x}{:02x}".format(*self.color)

    def segment_count(self) -> int:
        """Drawing segments (lines and curves, closing lines included)."""
        return sum(1 for op, _ in self.commands if op in ("lineTo", "curveTo", "closePath"))

    def replay(self, pen: Any) -> None:
        """Draw this layer's outlines into a fontTools-style pen."""
        for op, points in self.commands:
            getattr(pen, op)(*points)


@attrs.frozen
class VectorArt:
    """A traced image: its size in design units and its colour layers, bottom first."""

    width: int
    height: int
    layers: tuple[Layer, ...]
    #: Whether the background colour was left out (contract 2.3 `background_removed`).
    background_removed: bool = False

    @property
    def colors(self) -> int:
        """Distinct fill colours in the file (design decision 12)."""
        return len({layer.color for layer in self.layers})

    def segment_count(self) -> int:
        return sum(layer.segment_count() for layer in self.layers)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self.layers)
