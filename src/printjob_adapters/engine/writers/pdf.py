"""The PDF writer: one page, one even-odd filled path per layer, drawn with reportlab.

The page is `canvas px * 72 / dpi` points. Paths are written in canvas pixels rounded to
1/100 px under one transform that maps pixels (y down) to points (y up). `invariant=1`
keeps reportlab from writing the time or a random document id, so the same art gives the
same bytes. The page content is deflated without reportlab's default ASCII85 layer (a
quarter larger, and only useful for 7-bit channels): `rl_config.useA85` is reportlab's own
switch for that, and printjob is its only user in the process.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from reportlab import rl_config
from reportlab.pdfgen.canvas import FILL_EVEN_ODD, Canvas

from printjob_adapters.engine.canvas import Placement
from printjob_adapters.engine.vector import VectorArt
from printjob_adapters.engine.writers.svg import QUANTUM, segments
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
    for layer in art.layers:
        path = pdf.beginPath()
        drawn = False
        tick()
        for n, (op, pts) in enumerate(segments(layer, placement), 1):
            if n % TICK_SEGMENTS == 0:
                tick()
            xy = [v / QUANTUM for point in pts for v in point]
            if op == "moveTo":
                path.moveTo(*xy)
            elif op == "lineTo":
                path.lineTo(*xy)
            elif op == "curveTo":
                path.curveTo(*xy)
            else:
                path.close()
            drawn = True
        if drawn:
            pdf.setFillColorRGB(*(v / 255 for v in layer.color))
            pdf.drawPath(path, stroke=0, fill=1, fillMode=FILL_EVEN_ODD)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()
