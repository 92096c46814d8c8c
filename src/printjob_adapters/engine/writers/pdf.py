"""The PDF writer: one page, one even-odd filled path per layer, drawn with reportlab.

The page is `canvas px * 72 / dpi` points. Paths are written in canvas pixels rounded to
1/100 px under one transform that maps pixels (y down) to points (y up). `invariant=1`
keeps reportlab from writing the time or a random document id, so the same art gives the
same bytes. The page content is deflated without reportlab's default ASCII85 layer (a
quarter larger, and only useful for 7-bit channels): `rl_config.useA85` is reportlab's own
switch for that, and printjob is its only user in the process. The path operators are
written whole-array in reportlab's own number format (`_path_code`) and handed to it as
one `PDFPathObject`.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np
from reportlab import rl_config
from reportlab.lib.rl_accel import fp_str
from reportlab.pdfgen.canvas import FILL_EVEN_ODD, Canvas
from reportlab.pdfgen.pathobject import PDFPathObject

from printjob_adapters.engine.canvas import Placement
from printjob_adapters.engine.vector import OP_POINTS, VectorArt
from printjob_adapters.engine.writers.svg import (
    QUANTUM,
    Drawn,
    command_text,
    layers_drawn,
    tick_chunks,
)
from printjob_adapters.engine.writers.ticking import TICK_SEGMENTS, no_tick

rl_config.useA85 = 0


def write_pdf(
    art: VectorArt, placement: Placement, tick: Callable[[], None] | None = None
) -> bytes:
    """The art placed on the canvas as a one-page PDF; `tick` is called before every
    layer and every `TICK_SEGMENTS` segments."""
    tick = tick or no_tick
    width = round(placement.width_pt, 4)
    height = round(placement.height_pt, 4)
    buffer = io.BytesIO()
    pdf = Canvas(buffer, pagesize=(width, height), pageCompression=1, invariant=1)
    pdf.setCreator("printjob")
    pdf.setTitle("printjob trace")
    k = placement.points_per_pixel
    pdf.transform(k, 0, 0, -k, 0, height)
    for layer, commands in layers_drawn(art.layers, placement):
        tick()
        if len(commands.ops):
            path = PDFPathObject(code=["n", _path_code(commands, tick)])
            pdf.setFillColorRGB(*(v / 255 for v in layer.color))
            pdf.drawPath(path, stroke=0, fill=1, fillMode=FILL_EVEN_ODD)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


#: Path operators by op code (`n` starts a path, `h` closes a subpath).
_OPERATORS = b"mlch"
#: Coordinates from this size on (|x| of 100 000 px and more) are printed by reportlab
#: with fewer than 2 decimals, rounded as floats; they take its own formatting.
_PLAIN_LIMIT = 100_000 * QUANTUM


def _path_code(commands: Drawn, tick: Callable[[], None]) -> str:
    """The path's operators as reportlab's `PDFPathObject` writes them (`fp_str` of
    the coordinates in canvas pixels: at most two decimals, "-0.5" and ".5"), built
    whole-array (`svg.command_text`), a chunk of `TICK_SEGMENTS` commands at a time.
    O(characters)."""
    if len(commands.points) and np.abs(commands.points).max() >= _PLAIN_LIMIT:
        return _path_code_by_command(commands, tick)
    space = ord(" ")
    text = "".join(
        command_text(part, _OPERATORS, space, space, negative_zero=True)
        for part in tick_chunks(commands, TICK_SEGMENTS, tick)
    )
    return text[:-1]


def _path_code_by_command(commands: Drawn, tick: Callable[[], None]) -> str:
    """`_path_code` for coordinates beyond `_PLAIN_LIMIT`, one command at a time with
    reportlab's own number formatting. O(commands)."""
    code = []
    for part in tick_chunks(commands, TICK_SEGMENTS, tick):
        for op, pts in zip(part.ops.tolist(), part.points.tolist(), strict=True):
            xy = [v / QUANTUM for point in pts[: OP_POINTS[op]] for v in point]
            letter = chr(_OPERATORS[op])
            code.append(f"{fp_str(*xy)} {letter}" if xy else letter)
    return " ".join(code)
