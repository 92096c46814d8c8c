"""The file writers: one `VectorArt` placed on a canvas becomes SVG, PDF, EPS or PNG bytes.

Every writer replays the same art in layer order with the even-odd fill rule, and gives
the same bytes for the same art and placement. Each writer's module is imported when its
format is first asked for, so a program writing SVG never loads reportlab or skia
(together ~0.3 s and ~40 MB).
"""

from __future__ import annotations

from collections.abc import Callable

from printjob_adapters.engine.bounds import check_file
from printjob_adapters.engine.canvas import Placement
from printjob_adapters.engine.options import OutputFormat
from printjob_adapters.engine.vector import VectorArt
from printjob_adapters.engine.writers.ticking import TICK_SEGMENTS, no_tick

__all__ = ["TICK_SEGMENTS", "no_tick", "write"]


def write(
    art: VectorArt,
    placement: Placement,
    fmt: OutputFormat | str,
    tick: Callable[[], None] | None = None,
) -> bytes:
    """The art placed on the canvas as a file in `fmt`, refused (`bounds.TooMuchDetail`)
    when larger than `bounds.MAX_FILE_BYTES`. `tick` (progress and cancel) is called
    between layers and every `TICK_SEGMENTS` segments. O(segments); a PNG O(canvas)."""
    fmt = OutputFormat(fmt)
    data = _write(art, placement, fmt, tick or no_tick)
    check_file(data, fmt.value.upper())
    return data


def _write(
    art: VectorArt, placement: Placement, fmt: OutputFormat, tick: Callable[[], None]
) -> bytes:
    if fmt is OutputFormat.SVG:
        from printjob_adapters.engine.writers.svg import write_svg

        return write_svg(art, placement, tick)
    if fmt is OutputFormat.PDF:
        from printjob_adapters.engine.writers.pdf import write_pdf

        return write_pdf(art, placement, tick)
    if fmt is OutputFormat.EPS:
        from printjob_adapters.engine.writers.eps import write_eps

        return write_eps(art, placement, tick)
    from printjob_adapters.engine.writers.png import write_png

    return write_png(art, placement, tick)
