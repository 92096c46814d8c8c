"""The EPS writer: plain EPSF-3.0 PostScript, one even-odd filled path per layer.

Written by hand rather than with reportlab's renderPS: the file is smaller, fills are
certain (`eofill`; renderPS leaves paths unfilled unless told, design.md), and nothing in it
changes from run to run. The page is `canvas px * 72 / dpi` points; the bounding box is that
rounded outward, with the exact figure in `%%HiResBoundingBox`. Paths are written in canvas
pixels rounded to 1/100 px under one `concat` that maps pixels (y down) to points (y up).
Every operator used is PostScript Level 1. The path text is written whole-array
(`svg.command_text`), a chunk of `TICK_SEGMENTS` commands at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from printjob_adapters.engine.canvas import Placement
from printjob_adapters.engine.vector import VectorArt
from printjob_adapters.engine.writers.svg import command_text, decimal, layers_drawn, tick_chunks
from printjob_adapters.engine.writers.ticking import TICK_SEGMENTS, no_tick

#: Short names for the path operators, kept in a private dictionary so that a document
#: that places the EPS is not affected by them.
_PROLOG = """\
%%BeginProlog
/printjob_dict 8 dict def printjob_dict begin
/m {moveto} bind def /l {lineto} bind def /c {curveto} bind def /h {closepath} bind def
/f {eofill} bind def /rg {setrgbcolor} bind def
end
%%EndProlog
"""


def write_eps(
    art: VectorArt, placement: Placement, tick: Callable[[], None] | None = None
) -> bytes:
    """The art placed on the canvas as an encapsulated PostScript file (ASCII); `tick`
    is called before every layer and every `TICK_SEGMENTS` segments."""
    tick = tick or no_tick
    width, height = placement.width_pt, placement.height_pt
    k = decimal(placement.points_per_pixel, 8)
    lines = [
        "%!PS-Adobe-3.0 EPSF-3.0",
        f"%%BoundingBox: 0 0 {math.ceil(round(width, 6))} {math.ceil(round(height, 6))}",
        f"%%HiResBoundingBox: 0 0 {decimal(width, 4)} {decimal(height, 4)}",
        "%%Creator: printjob",
        "%%Title: printjob trace",
        "%%LanguageLevel: 1",
        "%%DocumentData: Clean7Bit",
        "%%Pages: 1",
        "%%EndComments",
        _PROLOG.rstrip("\n"),
        "%%Page: 1 1",
        "printjob_dict begin",
        "gsave",
        f"[{k} 0 0 -{k} 0 {decimal(height, 6)}] concat",
    ]
    for layer, commands in layers_drawn(art.layers, placement):
        tick()
        if len(commands.ops):
            r, g, b = (decimal(v / 255, 4) for v in layer.color)
            lines.append(f"{r} {g} {b} rg")
            body = "".join(
                command_text(part, _OPERATORS, _SPACE, _NEWLINE)
                for part in tick_chunks(commands, TICK_SEGMENTS, tick)
            )
            lines.append(body[:-1])
            lines.append("f")
    lines += ["grestore", "end", "showpage", "%%Trailer", "%%EOF", ""]
    return "\n".join(lines).encode("ascii")


#: The operators' short names (`_PROLOG`) by op code, and the separators: a command
#: per line, its numbers and operator apart by a space.
_OPERATORS = b"mlch"
_SPACE, _NEWLINE = ord(" "), ord("\n")
