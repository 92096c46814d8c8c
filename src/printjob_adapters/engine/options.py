"""What the engine is asked to make: `TraceOptions`, a frozen value, and its small enums.

The engine validates nothing here that a caller's own parser already checked (the job
service parses form fields with its own rules and maps them onto these); `TraceOptions`
only states what one conversion makes. `ImageLimits` are the sizes `decode` refuses,
stated here so that a caller with other limits can pass its own.
"""

from __future__ import annotations

import enum

import attrs

#: The print canvas of a `png` at size original: 15 x 18 in at 300 dpi (design decision 11).
PRINT_CANVAS = (4500, 5400)
#: The resolution a file states when none is asked for.
DEFAULT_DPI = 300


class OutputFormat(enum.StrEnum):
    """The four files the writers make."""

    SVG = "svg"
    PDF = "pdf"
    EPS = "eps"
    PNG = "png"


class Background(enum.StrEnum):
    """Whether the background colour is drawn or left out."""

    KEEP = "keep"
    REMOVE = "remove"


@attrs.frozen
class Size:
    """An exact canvas in pixels; `None` in `TraceOptions` means the input's own size."""

    width: int
    height: int


@attrs.frozen
class TraceOptions:
    """One conversion: the file format, the canvas (`size`, `None` for original), the dpi
    the file states (`None` for 300), the number of flat colours (`None` for automatic)
    and whether the background is drawn. `format` and `background` also take their
    values as strings (`"pdf"`, `"remove"`)."""

    format: OutputFormat = attrs.field(default=OutputFormat.SVG, converter=OutputFormat)
    size: Size | None = None
    colors: int | None = None
    background: Background = attrs.field(default=Background.KEEP, converter=Background)
    dpi: int | None = None

    @property
    def effective_dpi(self) -> int:
        return self.dpi if self.dpi is not None else DEFAULT_DPI


@attrs.frozen
class ImageLimits:
    """Images `decode` refuses before decoding a pixel: more than `max_pixels`, a side
    under `min_side`, or a long side over `max_aspect_ratio` times the short one. The
    defaults are the job service's (3 megapixels, 16 px, 20:1)."""

    max_pixels: int = 3_000_000
    min_side: int = 16
    max_aspect_ratio: int = 20


#: The limits `decode` and `trace` apply unless given others.
DEFAULT_LIMITS = ImageLimits()
