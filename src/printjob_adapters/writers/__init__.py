"""The file writers: one `VectorArt` placed on a canvas becomes SVG, PDF, EPS or PNG bytes.

Every writer replays the same art in layer order with the even-odd fill rule, and gives
the same bytes for the same art and placement. Each writer's module is imported on first
use, so a program writing SVG never loads reportlab or skia.
"""

from __future__ import annotations

from importlib import import_module

from printjob_adapters.engine.canvas import Placement
from printjob_adapters.engine.vector import VectorArt
from printjob_core.model import OutputFormat

__all__ = ["write"]


def write(art: VectorArt, placement: Placement, fmt: OutputFormat | str) -> bytes:
    """The art placed on the canvas as a file in `fmt`."""
    fmt = OutputFormat(fmt)
    module = import_module(f"printjob_adapters.writers.{fmt.value}")
    writer = getattr(module, f"write_{fmt.value}")
    data: bytes = writer(art, placement)
    return data
