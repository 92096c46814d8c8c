"""Deterministic synthetic images of the hard kinds, each with the truth it was drawn from.

Shared by the engine's tests (one file per kind) and by ``bench/hard_images.py``: a test
asserts against the truth returned here (where the lines are, which words were drawn, the
grid's cell size, ...) instead of against another tracer's output. Every generator is a pure
function of its arguments (a seed where there is noise), so a failing test draws the same
image again.
"""

from __future__ import annotations

from collections.abc import Sequence
from io import BytesIO
from pathlib import Path

import attrs
import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw, ImageFont

RGB = tuple[int, int, int]
BoolMask = npt.NDArray[np.bool_]

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
DEJAVU_SANS = FONT_DIR / "DejaVuSans.ttf"
DEJAVU_SANS_BOLD = FONT_DIR / "DejaVuSans-Bold.ttf"

WHITE: RGB = (255, 255, 255)
BLACK: RGB = (0, 0, 0)
# Saturated and dark colours a line or dot must keep (never turned into the paper's white).
LINE_COLOURS: tuple[RGB, ...] = (
    (0, 0, 0),
    (220, 30, 30),
    (20, 90, 220),
    (0, 140, 60),
    (150, 40, 170),
)
# Short common words tesseract's English model knows: a miss means the letters were lost.
WORDS: tuple[str, ...] = (
    "print",
    "order",
    "cancel",
    "save",
    "file",
    "paper",
    "colour",
    "width",
    "height",
    "label",
    "size",
    "copy",
    "black",
    "green",
    "settings",
    "export",
)


@attrs.frozen
class Line:
    """An axis-aligned stroke: ``width`` pixels across, from ``start`` to ``end`` inclusive."""

    start: tuple[int, int]
    end: tuple[int, int]
    colour: RGB
    width: int

    @property
    def horizontal(self) -> bool:
        return self.start[1] == self.end[1]

    def mask(self, size: tuple[int, int]) -> BoolMask:
        """The stroke's pixels in an image of ``size`` (width, height)."""
        out = np.zeros((size[1], size[0]), bool)
        (x0, y0), (x1, y1) = self.start, self.end
        if self.horizontal:
            out[y0 : y0 + self.width, x0 : x1 + 1] = True
        else:
            out[y0 : y1 + 1, x0 : x0 + self.width] = True
        return out


@attrs.frozen
class Dot:
    """A square dot ``size`` pixels across whose centre is at ``centre`` (pixel coordinates)."""

    centre: tuple[float, float]
    colour: RGB
    size: int


@attrs.frozen
class LinesAndDots:
    image: Image.Image
    lines: tuple[Line, ...]
    dots: tuple[Dot, ...]
    background: RGB | None  # None: transparent


@attrs.frozen
class SmallText:
    image: Image.Image
    words: tuple[str, ...]
    pixel_size: int
    ink: RGB
    paper: RGB


@attrs.frozen
class PixelGrid:
    """Pixel art: ``cells`` (rows x cols palette indices) drawn ``cell`` pixels per side."""

    image: Image.Image
    cell: int
    cells: npt.NDArray[np.int_]
    palette: tuple[RGB, ...]
    jpeg_quality: int | None


@attrs.frozen
class LinearGradient:
    """From ``start_colour`` at the left edge to ``end_colour`` at the right, rotated by
    ``angle_degrees`` (counter-clockwise, about the image centre)."""

    image: Image.Image
    start_colour: RGB
    end_colour: RGB
    angle_degrees: float


@attrs.frozen
class RadialGradient:
    """``inner_colour`` at ``centre``, blending to ``outer_colour`` at ``radius`` and beyond."""

    image: Image.Image
    centre: tuple[float, float]
    radius: float
    inner_colour: RGB
    outer_colour: RGB


@attrs.frozen
class Stamp:
    """A two-tone print: ``ink`` where ``ink_mask`` is set, ``paper`` elsewhere, then speckle,
    ink texture and uneven light on top (the truth has exactly these two colours)."""

    image: Image.Image
    ink: RGB
    paper: RGB
    ink_mask: BoolMask


@attrs.frozen
class WhiteInArtwork:
    """Artwork on a white background with white parts that touch that background.

    ``artwork_mask`` is the whole design (coloured and white parts); ``white_part_mask`` the
    white parts of the design, which background removal must keep.
    """

    image: Image.Image
    artwork_mask: BoolMask
    white_part_mask: BoolMask
    colour: RGB


def font(pixel_size: int, *, bold: bool = False) -> ImageFont.FreeTypeFont:
    """DejaVu Sans (from the Debian fonts-dejavu package) at ``pixel_size`` pixels."""
    return ImageFont.truetype(str(DEJAVU_SANS_BOLD if bold else DEJAVU_SANS), pixel_size)


def jpeg(image: Image.Image, quality: int) -> Image.Image:
    """``image`` after a JPEG round trip (4:2:0 chroma, as cameras and browsers save)."""
    buffer = BytesIO()
    image.convert("RGB").save(buffer, "JPEG", quality=quality)
    buffer.seek(0)
    with Image.open(buffer) as decoded:
        return decoded.convert("RGB")


def lines_and_dots(
    *,
    size: tuple[int, int] = (160, 120),
    colours: Sequence[RGB] = LINE_COLOURS,
    widths: Sequence[int] = (1, 2),
    dot_sizes: Sequence[int] = (2, 3),
    transparent: bool = False,
) -> LinesAndDots:
    """Horizontal and vertical strokes of each width and square dots, one set per colour.

    Strokes are 1 or 2 px wide and far apart (at least 6 px), so each one is a stroke of its
    own rather than part of a filled area; dots sit between them.
    """
    width, height = size
    background = None if transparent else WHITE
    mode = "RGBA" if transparent else "RGB"
    fill = (0, 0, 0, 0) if transparent else WHITE
    image = Image.new(mode, size, fill)
    pixels = np.array(image)
    lines: list[Line] = []
    dots: list[Dot] = []
    row, column = 6, 6
    for index, colour in enumerate(colours):
        stroke = widths[index % len(widths)]
        horizontal = Line((8, row), (width - 9, row), colour, stroke)
        vertical = Line((column, height // 2 + 4), (column, height - 9), colour, stroke)
        for line in (horizontal, vertical):
            paint = (*colour, 255) if transparent else colour
            pixels[line.mask(size)] = paint
            lines.append(line)
        dot_size = dot_sizes[index % len(dot_sizes)]
        dot_x = width // 2 + 10 + index * 12
        dot_y = height // 2 + 14
        paint = (*colour, 255) if transparent else colour
        pixels[dot_y : dot_y + dot_size, dot_x : dot_x + dot_size] = paint
        centre = (dot_x + (dot_size - 1) / 2, dot_y + (dot_size - 1) / 2)
        dots.append(Dot(centre, colour, dot_size))
        row += 10
        column += 10
    return LinesAndDots(Image.fromarray(pixels, mode), tuple(lines), tuple(dots), background)


def small_text(
    *,
    words: Sequence[str] = WORDS[:8],
    pixel_size: int = 8,
    ink: RGB = BLACK,
    paper: RGB = WHITE,
    per_line: int = 4,
    bold: bool = False,
) -> SmallText:
    """``words`` in DejaVu Sans at ``pixel_size`` px, anti-aliased as a screen draws them."""
    image = typeset(font(pixel_size, bold=bold), pixel_size, ink, paper, words, per_line)
    return SmallText(image, tuple(words), pixel_size, ink, paper)


def typeset(
    face: ImageFont.FreeTypeFont,
    pixel_size: int,
    ink: RGB,
    paper: RGB,
    words: Sequence[str] = WORDS,
    per_line: int = 4,
) -> Image.Image:
    """``words`` in ``face``, ``per_line`` to a line two ``pixel_size`` apart, with a margin
    of two ``pixel_size`` all round: how every small-text test and bench lays out its type."""
    lines = ["   ".join(words[i : i + per_line]) for i in range(0, len(words), per_line)]
    line_height = margin = pixel_size * 2
    text_width = max(int(face.getlength(line)) for line in lines)
    image = Image.new(
        "RGB", (text_width + 2 * margin, line_height * len(lines) + 2 * margin), paper
    )
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((margin, margin + number * line_height), line, fill=ink, font=face)
    return image


def pixel_grid(
    *,
    cell: int = 8,
    grid: tuple[int, int] = (12, 12),
    palette: Sequence[RGB] = ((20, 20, 30), (240, 240, 235), (200, 50, 40), (60, 150, 70)),
    jpeg_quality: int | None = 70,
    seed: int = 0,
) -> PixelGrid:
    """A sprite of random cells in blocks (so there are shapes, not only checkerboard noise),
    upscaled ``cell`` x nearest, then saved as JPEG at ``jpeg_quality`` (None: lossless)."""
    rng = np.random.default_rng(seed)
    rows, cols = grid
    coarse = rng.integers(0, len(palette), size=((rows + 1) // 2, (cols + 1) // 2))
    cells = np.repeat(np.repeat(coarse, 2, axis=0), 2, axis=1)[:rows, :cols]
    flips = rng.random((rows, cols)) < 0.25
    cells = np.where(flips, rng.integers(0, len(palette), size=(rows, cols)), cells)
    colours = np.array(palette, np.uint8)[cells]
    sprite = np.repeat(np.repeat(colours, cell, axis=0), cell, axis=1)
    image = Image.fromarray(sprite, "RGB")
    if jpeg_quality is not None:
        image = jpeg(image, jpeg_quality)
    return PixelGrid(image, cell, cells, tuple(palette), jpeg_quality)


def _blend(t: npt.NDArray[np.float64], start: RGB, end: RGB) -> Image.Image:
    a = np.array(start, np.float64)
    b = np.array(end, np.float64)
    rgb = a + (b - a) * np.clip(t, 0.0, 1.0)[..., None]
    return Image.fromarray(np.round(rgb).astype(np.uint8), "RGB")


def linear_gradient(
    *,
    size: tuple[int, int] = (240, 160),
    start_colour: RGB = (30, 80, 200),
    end_colour: RGB = (240, 200, 60),
    angle_degrees: float = 0.0,
) -> LinearGradient:
    """A smooth linear blend, no dithering: every step is at most one level per channel."""
    width, height = size
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    theta = np.deg2rad(angle_degrees)
    dx, dy = np.cos(theta), -np.sin(theta)
    along = (xs - (width - 1) / 2) * dx + (ys - (height - 1) / 2) * dy
    half_span = abs(dx) * (width - 1) / 2 + abs(dy) * (height - 1) / 2
    t = (along + half_span) / (2 * half_span)
    return LinearGradient(
        _blend(t, start_colour, end_colour), start_colour, end_colour, angle_degrees
    )


def radial_gradient(
    *,
    size: tuple[int, int] = (200, 200),
    centre: tuple[float, float] | None = None,
    radius: float | None = None,
    inner_colour: RGB = (255, 240, 200),
    outer_colour: RGB = (150, 30, 60),
) -> RadialGradient:
    width, height = size
    middle = centre if centre is not None else ((width - 1) / 2, (height - 1) / 2)
    reach = radius if radius is not None else min(width, height) / 2
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    t = np.hypot(xs - middle[0], ys - middle[1]) / reach
    return RadialGradient(
        _blend(t, inner_colour, outer_colour), middle, reach, inner_colour, outer_colour
    )


def stamp(
    *,
    size: tuple[int, int] = (260, 180),
    ink: RGB = (190, 30, 40),
    paper: RGB = (246, 238, 220),
    text: str = "PAID",
    seed: int = 0,
) -> Stamp:
    """A rubber stamp (double ring and bold letters) with ink speckle, paper grain, gaps in
    the ink and light falling off towards one corner, as a phone photo of a stamp looks."""
    rng = np.random.default_rng(seed)
    width, height = size
    mask_image = Image.new("L", size, 0)
    draw = ImageDraw.Draw(mask_image)
    draw.rounded_rectangle((8, 8, width - 9, height - 9), radius=22, outline=255, width=7)
    draw.rounded_rectangle((20, 20, width - 21, height - 21), radius=14, outline=255, width=3)
    face = font(int(height * 0.36), bold=True)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=face)
    origin = ((width - (right - left)) / 2 - left, (height - (bottom - top)) / 2 - top)
    draw.text(origin, text, fill=255, font=face)
    ink_mask = np.array(mask_image) > 127

    ink_rgb = np.array(ink, np.float64)
    paper_rgb = np.array(paper, np.float64)
    # Gaps where the stamp did not touch (ink missing) and specks of ink on the paper.
    gaps = ink_mask & (rng.random(ink_mask.shape) < 0.06)
    specks = ~ink_mask & (rng.random(ink_mask.shape) < 0.004)
    shown = (ink_mask & ~gaps) | specks
    rgb = np.where(shown[..., None], ink_rgb, paper_rgb)
    # Ink density varies and the paper has grain.
    rgb = rgb + rng.normal(0.0, 9.0, size=rgb.shape)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    light = 1.0 - 0.18 * (xs / width) * (ys / height)
    rgb = rgb * light[..., None]
    image = Image.fromarray(np.clip(np.round(rgb), 0, 255).astype(np.uint8), "RGB")
    return Stamp(image, ink, paper, ink_mask)


def white_in_artwork(
    *,
    size: tuple[int, int] = (200, 220),
    colour: RGB = (240, 110, 20),
    stripes: int = 3,
) -> WhiteInArtwork:
    """A traffic cone on white: an orange triangle crossed by white stripes that run out to
    its sides (so they touch the white background), standing on an orange base."""
    width, height = size
    cone = Image.new("L", size, 0)
    draw = ImageDraw.Draw(cone)
    apex = (width / 2, 14.0)
    base_y = height - 40.0
    draw.polygon([apex, (width * 0.18, base_y), (width * 0.82, base_y)], fill=255)
    draw.rectangle((int(width * 0.08), int(base_y), int(width * 0.92), int(base_y) + 18), fill=255)
    artwork_mask = np.array(cone) > 127
    white_part_mask = np.zeros_like(artwork_mask)
    band = (base_y - apex[1]) / (2 * stripes + 1)
    for index in range(stripes):
        y0 = int(apex[1] + band * (2 * index + 1.5))
        y1 = int(y0 + band * 0.6)
        white_part_mask[y0:y1, :] = True
    white_part_mask &= artwork_mask
    pixels = np.full((height, width, 3), 255, np.uint8)
    pixels[artwork_mask & ~white_part_mask] = colour
    return WhiteInArtwork(Image.fromarray(pixels, "RGB"), artwork_mask, white_part_mask, colour)
