"""Thin things in their own colour (issue 12, item 5).

"Strokes down to 1 px and dots down to 2 px survive in their own colour, continuous, their
width within half a pixel." A mid-grey 1-px outline beside dark text is the same pixels as
a faint stroke of the text's ink, and its grey may lie nearer the text's anti-aliasing
tint than any colour of the palette; a light separator rule is fainter than any detail's
contrast floor when short; a dot drawn at 25 % on transparency is drawn opaque by rule, and
its sub-pixel edges must not then read its alpha as a partial cover. Each test traces a
synthetic image through the whole engine and judges the resvg render at 4x.
"""

from __future__ import annotations

import io
import re

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image, ImageDraw, ImageFont

from printjob_adapters.engine.colour import ciede2000, srgb_to_lab
from printjob_adapters.engine.options import TraceOptions
from printjob_adapters.engine.pipeline import trace
from tests.unit.engine import ocr

resvg_py = pytest.importorskip("resvg_py")

RGB = tuple[int, int, int]
SCALE = 4
WHITE: RGB = (255, 255, 255)
INK: RGB = (34, 34, 34)
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
#: Light, mid and dark grey, and two colours.
OUTLINES: tuple[RGB, ...] = (
    (200, 200, 200),
    (160, 160, 160),
    (128, 128, 128),
    (96, 96, 96),
    (60, 60, 60),
    (40, 90, 200),
    (200, 40, 40),
)
SIDES = (8, 10, 12)
#: Largest ΔE2000 of the traced line's core from the input's own (apparent) colour.
OWN_COLOUR = 5.0


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _render(image: Image.Image) -> npt.NDArray[np.float64]:
    svg = trace(_png(image), TraceOptions()).data.decode()
    png = resvg_py.svg_to_bytes(svg_string=svg, width=image.width * SCALE, dpi=300)
    shown = ocr.over_white(Image.open(io.BytesIO(bytes(png))).convert("RGBA"))
    return np.asarray(shown.convert("RGB")).astype(np.float64)


def _delta_e(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    found = ciede2000(srgb_to_lab(a.reshape(-1, 3)), srgb_to_lab(b.reshape(-1, 3)))
    return np.asarray(found, dtype=np.float64)


def _squares_beside_text(colour: RGB, between: bool) -> Image.Image:
    """Squares of `SIDES` px with a 1-px outline in `colour` on white, each followed by a
    line of dark 12-px text (a dialog's boxes and labels), drawn at 4x and box-reduced.
    `between`: the outline's centre line on pixel borders (each side straddles two
    pixels, each showing half of it); else on pixel centres (one pixel in its colour)."""
    big = Image.new("RGB", (SCALE * 330, SCALE * 24 * len(SIDES)), WHITE)
    draw = ImageDraw.Draw(big)
    font = ImageFont.truetype(FONT, 12 * SCALE)
    half = SCALE // 2 if between else 0
    for row, side in enumerate(SIDES):
        y, x = 6 + 24 * row, 6
        far = SCALE - 1 + half if not between else half - 1
        box = (
            x * SCALE - half,
            y * SCALE - half,
            (x + side) * SCALE + far,
            (y + side) * SCALE + far,
        )
        draw.rectangle(box, outline=colour, width=SCALE)
        label = "Vectorise artwork before printing, remove background"
        draw.text((30 * SCALE, (y - 1) * SCALE), label, fill=INK, font=font)
    return big.resize((big.width // SCALE, big.height // SCALE), Image.Resampling.BOX)


def _core(render: npt.NDArray[np.float64], rows: slice, columns: slice) -> npt.NDArray[np.float64]:
    """Along a horizontal band of the 4x render, at every position, the pixel across the
    band farthest from white: the line's core (white where the line is broken)."""
    band = render[rows, columns]
    from_white = ((band - 255.0) ** 2).sum(axis=-1)
    core: npt.NDArray[np.float64] = np.take_along_axis(
        band, from_white.argmax(axis=0)[None, :, None], axis=0
    )[0]
    return core


@pytest.mark.parametrize("between", [False, True], ids=["on-pixels", "between-pixels"])
@pytest.mark.parametrize("colour", OUTLINES, ids=[str(c) for c in OUTLINES])
def test_outlines_beside_text_keep_their_own_colour(colour: RGB, between: bool) -> None:
    image = _squares_beside_text(colour, between)
    source = np.asarray(image).astype(np.float64)
    render = _render(image)
    for row, side in enumerate(SIDES):
        y, x = 6 + 24 * row, 6
        # Top and bottom sides, away from the corners: the input's apparent colour is the
        # mean of the pixels the line covers (the darker of the two rows it straddles).
        for at in (y, y + side):
            lo, hi = x + 2, x + side - 1
            rows_in = source[at - 1 : at + 1, lo:hi] if between else source[at : at + 1, lo:hi]
            darkest = rows_in.sum(axis=(1, 2)).argmin()
            apparent = rows_in[darkest].mean(axis=0)
            core = _core(
                render, slice((at - 2) * SCALE, (at + 2) * SCALE), slice(lo * SCALE, hi * SCALE)
            )
            off = _delta_e(core, np.broadcast_to(apparent, core.shape))
            # Continuous (every 4x position), in its own colour: neither dropped into the
            # paper nor darkened into the text's ink.
            assert float(off.max()) <= OWN_COLOUR, (colour, between, side, float(off.max()))


def test_text_alone_gains_no_colour() -> None:
    # The same dialog without its boxes: the text's anti-aliasing is no line of its own.
    big = Image.new("RGB", (SCALE * 330, SCALE * 72), WHITE)
    draw = ImageDraw.Draw(big)
    font = ImageFont.truetype(FONT, 12 * SCALE)
    for row in range(3):
        label = "Vectorise artwork before printing, remove background"
        draw.text((30 * SCALE, (5 + 24 * row) * SCALE), label, fill=INK, font=font)
    image = big.resize((big.width // SCALE, big.height // SCALE), Image.Resampling.BOX)
    svg = trace(_png(image), TraceOptions()).data.decode()
    fills = set(re.findall(r'fill="(#[0-9a-f]{6})"', svg))
    assert len(fills) <= 2, fills


def test_light_separator_rule_survives() -> None:
    # A UI's 1-px separator in a light grey barely off the page (ΔE about 6), under a
    # dark heading and over a few lines of text.
    paper, rule = (246, 247, 249), (200, 204, 210)
    big = Image.new("RGB", (SCALE * 240, SCALE * 80), paper)
    draw = ImageDraw.Draw(big)
    font = ImageFont.truetype(FONT, 12 * SCALE)
    draw.text((10 * SCALE, 4 * SCALE), "Print settings", fill=INK, font=font)
    draw.rectangle((6 * SCALE, 24 * SCALE, 230 * SCALE - 1, 25 * SCALE - 1), fill=rule)
    for row in range(3):
        draw.text(
            (10 * SCALE, (32 + 14 * row) * SCALE), "Colour and paper size", fill=INK, font=font
        )
    image = big.resize((big.width // SCALE, big.height // SCALE), Image.Resampling.BOX)
    render = _render(image)
    core = _core(render, slice(23 * SCALE, 27 * SCALE), slice(8 * SCALE, 228 * SCALE))
    off = _delta_e(core, np.broadcast_to(np.array(rule, np.float64), core.shape))
    assert float(off.max()) <= OWN_COLOUR, float(off.max())
    # One pixel wide, within half a pixel.
    band = render[22 * SCALE : 28 * SCALE, 8 * SCALE : 228 * SCALE]
    drawn = _delta_e(band, np.broadcast_to(np.array(rule, np.float64), band.shape)) <= OWN_COLOUR
    width = drawn.reshape(band.shape[:2]).sum(axis=0) / SCALE
    assert abs(float(np.median(width)) - 1.0) <= 0.5, float(np.median(width))


@pytest.mark.parametrize("alpha", [52, 64, 90])
def test_faint_dots_keep_their_width(alpha: int) -> None:
    # A 1-px ring at 63 % (an icon exported at that opacity) with a 2x2 and a 3x3 dot
    # inside at `alpha`: drawn opaque by rule, each keeps its drawn size.
    image = Image.new("RGBA", (64, 48), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.ellipse((4, 4, 40, 40), outline=(20, 20, 24, 160), width=1)
    draw.rectangle((15, 21, 16, 22), fill=(20, 20, 24, alpha))
    draw.rectangle((26, 20, 28, 22), fill=(20, 20, 24, alpha))
    svg = trace(_png(image), TraceOptions()).data.decode()
    png = resvg_py.svg_to_bytes(svg_string=svg, width=image.width * SCALE, dpi=300)
    shown = np.asarray(Image.open(io.BytesIO(bytes(png))).convert("RGBA"))[..., 3] >= 128
    for x0, y0, size in ((15, 21, 2), (26, 20, 3)):
        cut = shown[
            (y0 - 2) * SCALE : (y0 + size + 2) * SCALE, (x0 - 2) * SCALE : (x0 + size + 2) * SCALE
        ]
        ys, xs = np.nonzero(cut)
        assert len(xs) > 0, (alpha, size)
        across = (xs.max() - xs.min() + 1) / SCALE
        down = (ys.max() - ys.min() + 1) / SCALE
        assert abs(across - size) <= 0.5 and abs(down - size) <= 0.5, (alpha, size, across, down)
