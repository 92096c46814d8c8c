"""An explicit colour count keeps the colours that matter most to the eye."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter

from printjob_adapters.engine.colour import delta_e2000_srgb

from .colour_support import run
from .hard_synthetic import DEJAVU_SANS_BOLD, font, stamp

BLACK = (0, 0, 0)
YELLOW = (250, 204, 21)


def _sign(quality: int | None) -> Image.Image:
    """Black words on a yellow sign with a white surround (more white than black)."""
    image = Image.new("RGB", (320, 200), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((20, 20, 300, 180), radius=16, fill=YELLOW)
    face = font(22, bold=True)
    draw.text((40, 60), "CAUTION WET", font=face, fill=BLACK)
    draw.text((40, 100), "FLOOR AHEAD", font=face, fill=BLACK)
    if quality is None:
        return image
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=quality)
    return Image.open(buffer).convert("RGB")


def _near(palette: np.ndarray, colour: tuple[int, int, int], within: float) -> bool:
    return bool(delta_e2000_srgb(palette, np.array(colour, float)).min() < within)


@pytest.mark.parametrize("quality", [None, 85, 60])
def test_two_colours_of_a_black_and_yellow_sign_are_black_and_yellow(
    quality: int | None,
) -> None:
    seg = run(_sign(quality), colors=2)
    assert len(seg.palette) == 2
    # JPEG's chroma blur tints thin black strokes (about ΔE 6 at quality 60): still black ink.
    assert _near(seg.palette, BLACK, 8) and _near(seg.palette, YELLOW, 4), seg.palette.round()


def test_the_automatic_count_keeps_text_ink_in_a_jpeg() -> None:
    seg = run(_sign(75))
    assert _near(seg.palette, BLACK, 8) and _near(seg.palette, YELLOW, 4)


def test_two_colours_of_a_red_stamp_keep_the_ink_red() -> None:
    drawn = stamp(ink=(200, 20, 40), seed=7)
    seg = run(drawn.image, colors=2)
    assert _near(seg.palette, drawn.ink, 5), seg.palette.round()


def test_a_dark_outline_outlives_a_second_shade_of_the_background() -> None:
    big = Image.new("RGB", (640, 480), (255, 255, 255))
    draw = ImageDraw.Draw(big)
    draw.rectangle((0, 300, 640, 480), fill=(236, 236, 236))  # a second shade of white
    draw.ellipse((80, 60, 560, 420), fill=(60, 130, 220), outline=(10, 10, 10), width=10)
    seg = run(big.resize((160, 120), Image.Resampling.LANCZOS), colors=3)
    assert _near(seg.palette, (10, 10, 10), 5), seg.palette.round()
    assert _near(seg.palette, (60, 130, 220), 3) and _near(seg.palette, (255, 255, 255), 3)


def test_anti_aliasing_tints_are_never_colours() -> None:
    image = Image.new("RGB", (240, 80), (255, 255, 255))
    ImageDraw.Draw(image).text((8, 20), "tint test", font=font(30), fill=(200, 0, 0))
    for colors in (None, 2):
        seg = run(image, colors)
        truth = np.array([(255, 255, 255), (200, 0, 0)], float)
        de = delta_e2000_srgb(seg.palette[:, None, :], truth[None, :, :])
        assert len(seg.palette) == 2 and de.min(axis=1).max() < 2, seg.palette.round()


RAINBOW = [
    (230, 60, 60),
    (245, 160, 40),
    (240, 220, 60),
    (80, 190, 90),
    (70, 140, 230),
    (150, 90, 200),
]


def test_a_small_rainbow_keeps_its_colours() -> None:
    """A small emoji's rainbow horn, blown up 4x (blurry): each stripe keeps its hue."""
    small = Image.new("RGB", (64, 64), (240, 240, 240))
    draw = ImageDraw.Draw(small)
    for i, colour in enumerate(RAINBOW):
        draw.line((8 + 3 * i, 40, 20 + 3 * i, 10), fill=colour, width=3)
    draw.ellipse((30, 30, 60, 60), fill=(230, 80, 150))
    big = small.resize((256, 256), Image.Resampling.BICUBIC).filter(ImageFilter.GaussianBlur(1))
    seg = run(big)
    missing = [c for c in RAINBOW if not _near(seg.palette, c, 8)]
    assert not missing, (missing, seg.palette.round())


def test_dejavu_is_there() -> None:
    assert DEJAVU_SANS_BOLD.exists()
