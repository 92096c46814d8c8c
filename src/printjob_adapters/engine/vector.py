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
The same commands as arrays (`Outline`: one op code per command, all points in order)
are what the tracer builds and the writers read, so large outlines never pass through
per-command Python objects on their way to a file.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal, Protocol

import attrs
import numpy as np

Point = tuple[float, float]
Command = (
    tuple[Literal["moveTo"], tuple[Point]]
    | tuple[Literal["lineTo"], tuple[Point]]
    | tuple[Literal["curveTo"], tuple[Point, Point, Point]]
    | tuple[Literal["closePath"], tuple[()]]
)
RGB = tuple[int, int, int]


class Pen(Protocol):
    """What `Layer.replay` draws into: a fontTools-style pen (hence the camelCase names)."""

    def moveTo(self, pt: Point) -> None: ...
    def lineTo(self, pt: Point) -> None: ...
    def curveTo(self, *points: Point) -> None: ...
    def closePath(self) -> None: ...


#: Op codes of `Outline.ops`, in the order of `OP_NAMES`.
MOVE, LINE, CURVE, CLOSE = 0, 1, 2, 3
OP_NAMES = ("moveTo", "lineTo", "curveTo", "closePath")
#: Points each op code takes.
OP_POINTS = np.array([1, 1, 3, 0], dtype=np.int64)
_OP_CODES = {name: code for code, name in enumerate(OP_NAMES)}


@attrs.frozen(eq=False)
class Outline:
    """Outline commands as arrays: `ops` (n,) int8 op codes and `points` (p, 2) float64,
    every command's points in order (`OP_POINTS[op]` each)."""

    ops: np.ndarray
    points: np.ndarray

    @staticmethod
    def from_commands(commands: Sequence[Command]) -> Outline:
        """The arrays of RecordingPen-style commands. O(commands)."""
        try:
            ops = np.array([_OP_CODES[op] for op, _ in commands], dtype=np.int8)
        except KeyError as exc:
            raise ValueError(f"unknown outline command {exc.args[0]!r}") from None
        flat = [point for _, points in commands for point in points]
        points = np.array(flat, dtype=np.float64).reshape(-1, 2)
        return Outline(ops=ops, points=points)

    def commands(self) -> tuple[Command, ...]:
        """The RecordingPen-style commands (Python floats). O(commands), one plain loop:
        the points become tuples in one `zip` of the two coordinate lists."""
        xy = list(zip(self.points[:, 0].tolist(), self.points[:, 1].tolist(), strict=True))
        out: list[Command] = []
        append = out.append
        i = 0
        for op in self.ops.tolist():
            if op == CURVE:
                append(("curveTo", (xy[i], xy[i + 1], xy[i + 2])))
                i += 3
            elif op == LINE:
                append(("lineTo", (xy[i],)))
                i += 1
            elif op == MOVE:
                append(("moveTo", (xy[i],)))
                i += 1
            else:
                append(("closePath", ()))
        return tuple(out)


@attrs.frozen(eq=False)
class Layer:
    """One flat colour and its filled outlines (even-odd): RecordingPen-style `commands`,
    an `outline` holding the same commands as arrays, or both (see `as_outline`).

    Given only the outline (as the tracer gives it), the commands are built on first
    reading and kept: the file writers read the arrays, so a 3 MP photo's 300,000
    segments are never turned into Python tuples on their way to an SVG, PDF or EPS.
    Two layers are equal when their colours and commands are."""

    color: RGB
    _commands: tuple[Command, ...] | None = attrs.field(default=None, alias="commands")
    outline: Outline | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        if self._commands is None and self.outline is None:
            raise ValueError("a layer needs its commands or its outline")

    @property
    def commands(self) -> tuple[Command, ...]:
        """The RecordingPen-style commands (built from `outline` on first reading)."""
        if self._commands is None:
            assert self.outline is not None
            # Frozen to its users; this fills the one lazily computed slot once.
            object.__setattr__(self, "_commands", self.outline.commands())
        assert self._commands is not None
        return self._commands

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layer):
            return NotImplemented
        return self.color == other.color and self.commands == other.commands

    def __hash__(self) -> int:
        return hash((self.color, self.commands))

    def is_empty(self) -> bool:
        """Whether the layer draws nothing (no commands), read from the op codes when it
        has them: no command tuples are built to find out."""
        if self.outline is not None:
            return len(self.outline.ops) == 0
        return not self.commands

    def as_outline(self) -> Outline:
        """The commands as arrays (built from `commands` when not given)."""
        return self.outline if self.outline is not None else Outline.from_commands(self.commands)

    @property
    def hex(self) -> str:
        return "#{:02x}{:02x}{:02x}".format(*self.color)

    def segment_count(self) -> int:
        """Drawing segments (lines and curves, closing lines included): every command
        but a moveTo, counted from the op codes when the layer has them."""
        if self.outline is not None:
            return int(np.count_nonzero(self.outline.ops != MOVE))
        return sum(1 for op, _ in self.commands if op in ("lineTo", "curveTo", "closePath"))

    def replay(self, pen: Pen) -> None:
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
