"""No hairline where two bands of a gradient meet: the layer under a band border is a
near shade of the bands, never a far colour peeking out between them (rendered with
resvg at 3x, as a print shop would zoom in)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import resvg_py
from PIL import Image, ImageDraw

from printjob_adapters.engine import TraceOptions, trace

from .hard_synthetic import linear_gradient, radial_gradient

#: Render scale, and the largest step (0..255, any channel) a pixel may stand out from
#: every pixel two to three render pixels around it where those all lie within
#: `SMOOTH` of each other (inside a gradient, away from the shapes' real edges).
ZOOM = 3
BOUND = 4
SMOOTH = 24


def _render(svg: bytes, width: int) -> np.ndarray:
    png = bytes(resvg_py.svg_to_bytes(svg_string=svg.decode(), width=width, dpi=96))
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(np.int16)


def _hairline_pixels(render: np.ndarray) -> np.ndarray:
    """Pixels lighter or darker than every pixel of the ring two to three pixels
    around them by more than `BOUND`, where that ring is smooth."""
    h, w, _ = render.shape
    reach = 3
    padded = np.pad(render, ((reach, reach), (reach, reach), (0, 0)), mode="edge")
    low = np.full(render.shape, 999, dtype=np.int16)
    high = np.full(render.shape, -999, dtype=np.int16)
    for dy in range(-reach, reach + 1):
        for dx in range(-reach, reach + 1):
            if max(abs(dy), abs(dx)) < 2:
                continue
            ring = padded[reach + dy : reach + dy + h, reach + dx : reach + dx + w]
            low = np.minimum(low, ring)
            high = np.maximum(high, ring)
    smooth = np.all((high - low) <= SMOOTH, axis=2)
    out: np.ndarray = np.any((render < low - BOUND) | (render > high + BOUND), axis=2) & smooth
    out[:reach] = out[-reach:] = False
    out[:, :reach] = out[:, -reach:] = False
    return out


def _radial_with_shapes() -> Image.Image:
    image = radial_gradient(
        size=(240, 200),
        centre=(150, 70),
        radius=260,
        inner_colour=(240, 250, 230),
        outer_colour=(40, 110, 120),
    ).image.convert("RGB")
    draw = ImageDraw.Draw(image)
    draw.ellipse((40, 50, 120, 130), fill=(250, 250, 250), outline=(30, 30, 40), width=3)
    draw.rectangle((150, 120, 210, 170), fill=(200, 60, 40))
    return image


def _linear_with_triangle() -> Image.Image:
    image = linear_gradient(
        size=(240, 180), start_colour=(250, 220, 200), end_colour=(90, 40, 120), angle_degrees=30
    ).image.convert("RGB")
    draw = ImageDraw.Draw(image)
    draw.polygon([(60, 30), (180, 50), (120, 150)], fill=(255, 255, 255), outline=(20, 20, 20))
    return image


def _plain_radial() -> Image.Image:
    return radial_gradient(
        size=(240, 200), inner_colour=(255, 250, 240), outer_colour=(120, 40, 30)
    ).image.convert("RGB")


@pytest.mark.parametrize(
    "make", [_radial_with_shapes, _linear_with_triangle, _plain_radial], ids=lambda f: f.__name__
)
def test_band_borders_show_no_hairline_at_3x(make: object) -> None:
    assert callable(make)
    image = make()
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    svg = trace(buffer.getvalue(), TraceOptions()).data
    render = _render(svg, ZOOM * image.size[0])
    hairline = _hairline_pixels(render)
    where = list(zip(*np.nonzero(hairline), strict=True))[:5]
    assert not hairline.any(), f"{int(hairline.sum())} hairline pixels, e.g. at {where}"
