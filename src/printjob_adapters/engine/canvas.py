"""Where the design goes on the output canvas (design decision 11).

- An explicit `WxH` is the exact canvas; the design is scaled to fit inside with its
  proportions kept and centred.
- A `png` with size `original` is the print canvas, 4500 x 5400 px, with the design fitted
  and centred the same way.
- An `svg`, `pdf` or `eps` with size `original` is the input's own pixel size.

Vector files state their physical size from the dpi (`options.effective_dpi`, 300 unless
sent): one canvas pixel is `72 / dpi` points.
"""

from __future__ import annotations

import attrs

from printjob_adapters.engine.options import PRINT_CANVAS, OutputFormat, TraceOptions

#: PostScript and PDF points per inch.
POINTS_PER_INCH = 72


@attrs.frozen
class Placement:
    """The output canvas and the design's place on it.

    A design point (x, y) lands on canvas pixel (x * scale + offset_x, y * scale + offset_y);
    y points down in both.
    """

    canvas_width: int
    canvas_height: int
    scale: float
    offset_x: float
    offset_y: float
    dpi: int

    @property
    def points_per_pixel(self) -> float:
        return POINTS_PER_INCH / self.dpi

    @property
    def width_pt(self) -> float:
        return self.canvas_width * self.points_per_pixel

    @property
    def height_pt(self) -> float:
        return self.canvas_height * self.points_per_pixel

    @property
    def width_in(self) -> float:
        return self.canvas_width / self.dpi

    @property
    def height_in(self) -> float:
        return self.canvas_height / self.dpi

    def to_canvas(self, x: float, y: float) -> tuple[float, float]:
        """A design point in canvas pixels."""
        return x * self.scale + self.offset_x, y * self.scale + self.offset_y


def fit(
    design_width: int, design_height: int, canvas_width: int, canvas_height: int, dpi: int
) -> Placement:
    """The design scaled to fit inside the canvas, proportions kept, centred."""
    if min(design_width, design_height, canvas_width, canvas_height) <= 0:
        raise ValueError("design and canvas sides must be positive")
    scale = min(canvas_width / design_width, canvas_height / design_height)
    return Placement(
        canvas_width=canvas_width,
        canvas_height=canvas_height,
        scale=scale,
        offset_x=(canvas_width - design_width * scale) / 2,
        offset_y=(canvas_height - design_height * scale) / 2,
        dpi=dpi,
    )


def place(design_width: int, design_height: int, options: TraceOptions) -> Placement:
    """The placement of a `design_width` x `design_height` px input under `options`."""
    dpi = options.effective_dpi
    if options.size is not None:
        canvas = (options.size.width, options.size.height)
    elif options.format is OutputFormat.PNG:
        canvas = PRINT_CANVAS
    else:
        canvas = (design_width, design_height)
    return fit(design_width, design_height, *canvas, dpi)
