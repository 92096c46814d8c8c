"""1-px outlines drawn between two pixels, and faint dots on transparency (issue 12, item 1).

A UI's checkbox or a button's border is a 1-px grey outline drawn at a half-pixel offset:
no pixel has the outline's colour, each of the two it straddles is half of it, the same
mixture that anti-aliased text leaves as its fringe. A map pin's centre dot may be drawn
at 25 % opacity on transparency, under the half opacity below which pixels are left out.
Each test traces a synthetic image through the whole engine and judges the resvg render.
"""

from __future__ import annotations

import io

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from printjob_adapters.engine.options import TraceOptions
from printjob_adapters.engine.pipeline import trace
from tests.unit.engine import ocr

resvg_py = pytest.importorskip("resvg_py")

RGB = tuple[int, int, int]
SCALE = 4
PAPER: RGB = (247, 247, 249)
#: Outline colours: light grey (a checkbox), blue, red, green. A mid grey split over two
#: pixels is also a faint stroke of the dark text ink, and is traced as one (see
#: docs/engine.md, "Detail, faster, and the last thin things").
OUTLINES: tuple[RGB, ...] = ((135, 135, 140), (40, 90, 200), (200, 40, 40), (30, 140, 60))


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _render_rgba(svg: bytes, width: int) -> npt.NDArray[np.uint8]:
    png = resvg_py.svg_to_bytes(svg_string=svg.decode(), width=width * SCALE, dpi=300)
    return np.asarray(Image.open(io.BytesIO(bytes(png))).convert("RGBA"))


FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _outlined_squares(sides: tuple[int, ...]) -> tuple[Image.Image, list[tuple[int, int, int]]]:
    """Rows of squares (one row per side, px) in the `OUTLINES` colours with 1-px
    outlines whose centre lines lie on pixel borders (each side straddles two pixels), on
    `PAPER`, each row followed by a line of dark 12-px text (a dialog's checkboxes and
    their labels); drawn at 4x, box-reduced. The text's anti-aliasing holds many pixels
    of the grey the light outline's pixels show, so that grey is found as a colour and
    judged a tint. Returns the image and each square's (x, y, side) at 1x (the centre
    line's corner)."""
    columns = len(OUTLINES)
    big = Image.new("RGB", (SCALE * (24 * columns + 300), SCALE * 24 * len(sides)), PAPER)
    draw = ImageDraw.Draw(big)
    font = ImageFont.truetype(FONT, 12 * SCALE)
    squares = []
    half = SCALE // 2
    for row, side in enumerate(sides):
        y = 6 + 24 * row
        for column, colour in enumerate(OUTLINES):
            x = 6 + 24 * column
            # A 1-px line centred on the pixel border: from x - 0.5 to x + 0.5.
            box = (
                x * SCALE - half,
                y * SCALE - half,
                (x + side) * SCALE + half - 1,
                (y + side) * SCALE + half - 1,
            )
            draw.rectangle(box, outline=colour, width=SCALE)
            squares.append((x, y, side))
        label = "Vectorise artwork before printing, remove background"
        draw.text(
            ((8 + 24 * columns) * SCALE, (y - 1) * SCALE), label, fill=(34, 34, 34), font=font
        )
    small = big.resize((big.width // SCALE, big.height // SCALE), Image.Resampling.BOX)
    return small, squares


@pytest.mark.parametrize("sides", [(8, 10, 12)])
def test_outlines_between_two_pixels_stay_continuous_in_their_colour(
    sides: tuple[int, ...],
) -> None:
    image, squares = _outlined_squares(sides)
    source = np.asarray(image).astype(np.float64)
    render = _render_rgba(trace(_png(image), TraceOptions()).data, image.width)
    rgb = np.asarray(ocr.over_white(Image.fromarray(render))).astype(np.float64)
    paper = np.array(PAPER, np.float64)
    for index, (x, y, side) in enumerate(squares):
        colour = OUTLINES[index % len(OUTLINES)]
        # The input's own colour of the outline: the darkest of the two straddled pixels,
        # per side, along the middle of each side.
        for horizontal, at in ((True, y), (True, y + side), (False, x), (False, x + side)):
            lo, hi = (x + 1, x + side - 1) if horizontal else (y + 1, y + side - 1)
            if horizontal:
                band_in = source[at - 1 : at + 1, lo:hi]
                band_out = rgb[(at - 2) * SCALE : (at + 2) * SCALE, lo * SCALE : hi * SCALE]
            else:
                band_in = source[lo:hi, at - 1 : at + 1].transpose(1, 0, 2)
                band_out = rgb[lo * SCALE : hi * SCALE, (at - 2) * SCALE : (at + 2) * SCALE]
                band_out = band_out.transpose(1, 0, 2)
            apparent = band_in.reshape(-1, 3).mean(axis=0)
            # Along the side, at every 4x position, the rendered pixel across it that is
            # farthest from the paper (the line's core) is within 40 (sRGB) of the
            # input's apparent outline colour: continuous, in its colour, neither dropped
            # into the paper nor darkened into the text's ink.
            from_paper = ((band_out - paper) ** 2).sum(axis=-1)
            core = np.take_along_axis(band_out, from_paper.argmax(axis=0)[None, :, None], axis=0)[0]
            off = np.sqrt(((core - apparent) ** 2).sum(axis=-1))
            assert (off <= 40.0).all(), (colour, side, horizontal, float(off.max()))
            # ... and no wider than the two pixels it straddles, within half a pixel.
            far_from_paper = np.sqrt(((band_out - paper) ** 2).sum(axis=-1)) > 0.5 * np.sqrt(
                ((apparent - paper) ** 2).sum()
            )
            width = far_from_paper.sum(axis=0) / SCALE
            assert np.median(width) <= 2.5, (colour, side, horizontal, float(np.median(width)))


def _pin_with_dots(dot_alpha: int, shadow: bool) -> Image.Image:
    """A 1-px ring on transparency (at half opacity, as an icon exported at 50 %) with a
    2x2 and a 3x3 dot inside at `dot_alpha`, and optionally a small soft shadow (a
    blurred disc, under the opacity at which a hairline's ridge is recovered) outside
    it."""
    image = Image.new("RGBA", (64, 48), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.ellipse((4, 4, 40, 40), outline=(20, 20, 24, 160), width=1)
    draw.rectangle((15, 21, 16, 22), fill=(20, 20, 24, dot_alpha))
    draw.rectangle((26, 20, 28, 22), fill=(20, 20, 24, dot_alpha))
    if shadow:
        blob = Image.new("RGBA", image.size, (0, 0, 0, 0))
        ImageDraw.Draw(blob).ellipse((48, 18, 56, 26), fill=(0, 0, 0, 76))
        blob = blob.filter(ImageFilter.GaussianBlur(2.0))
        image = Image.alpha_composite(blob, image)
    return image


@pytest.mark.parametrize("dot_alpha", [52, 64, 90])
def test_faint_dot_on_transparency_is_kept_in_its_colour(dot_alpha: int) -> None:
    image = _pin_with_dots(dot_alpha, shadow=False)
    render = _render_rgba(trace(_png(image), TraceOptions()).data, image.width)
    for x0, y0, size in ((15, 21, 2), (26, 20, 3)):
        cut = render[y0 * SCALE : (y0 + size) * SCALE, x0 * SCALE : (x0 + size) * SCALE]
        # Drawn (opaque in the file, as all art is) in the ink's colour, over at least a
        # pixel's area of the dot.
        inked = (cut[..., 3] >= 128) & (cut[..., :3].astype(int).max(axis=-1) <= 80)
        assert inked.sum() >= SCALE * SCALE, (dot_alpha, size, int(inked.sum()))


def test_soft_shadow_and_haze_on_transparency_stay_out() -> None:
    image = _pin_with_dots(64, shadow=True)
    render = _render_rgba(trace(_png(image), TraceOptions()).data, image.width)
    shadow = render[14 * SCALE : 30 * SCALE, 44 * SCALE : 60 * SCALE]
    assert int((shadow[..., 3] >= 128).sum()) == 0
    # The faint dots are still there beside it.
    assert int((render[21 * SCALE : 23 * SCALE, 15 * SCALE : 17 * SCALE, 3] >= 128).sum()) > 0
