"""Outline greys that stay distinct (issue 12, items 2 and 3).

"Flat art keeps its exact colours"; "an explicit colors=N keeps the N colours that matter
most to the eye: dark outlines and text ink are never dropped for anti-aliasing tints". Greys
lie on one line: #555 text beside a #333 outline on white is, pixel for pixel, a mixture
of #333 and white, and was drawn in the outline's grey. Each image here is drawn at 4x
and box-reduced (anti-aliased), and segmented with automatic colours and with `colors=N`
(N the true count): every grey that covers strokes of its own keeps its colour and its
pixels; a single ink's anti-aliasing and a faint hairline gain no colour.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image, ImageDraw, ImageFont

from printjob_adapters.engine import own_inks, segmentation
from printjob_adapters.engine.colour import ciede2000, srgb_to_lab
from printjob_adapters.engine.options import Background
from printjob_adapters.engine.progress import silent

RGB = tuple[int, int, int]
SCALE = 4
WHITE: RGB = (255, 255, 255)
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
#: Largest ΔE2000 of the palette colour from the grey it stands for.
SAME = 1.5
#: Least share of a grey's exact pixels labelled with its colour.
LABELLED = 0.9


def _reduced(big: Image.Image) -> npt.NDArray[np.uint8]:
    small = big.resize((big.width // SCALE, big.height // SCALE), Image.Resampling.BOX)
    return np.asarray(small.convert("RGBA")).copy()


def _card(outline: RGB, text: RGB, paper: RGB = WHITE, shadow: RGB | None = None) -> Image.Image:
    """A rounded card with a 3-px outline and a bold title in `outline`, three lines of
    14-px text in `text`, and a drop shadow in `shadow` (a print order's summary)."""
    big = Image.new("RGB", (SCALE * 320, SCALE * 200), paper)
    draw = ImageDraw.Draw(big)
    if shadow is not None:
        draw.rounded_rectangle(
            (24 * SCALE, 24 * SCALE, 300 * SCALE, 184 * SCALE), 12 * SCALE, shadow
        )
    draw.rounded_rectangle(
        (16 * SCALE, 16 * SCALE, 292 * SCALE, 176 * SCALE),
        radius=12 * SCALE,
        fill=paper,
        outline=outline,
        width=3 * SCALE,
    )
    draw.text(
        (32 * SCALE, 30 * SCALE),
        "Order summary",
        fill=outline,
        font=ImageFont.truetype(BOLD, 20 * SCALE),
    )
    font = ImageFont.truetype(FONT, 14 * SCALE)
    for i, line in enumerate(
        ("Business cards, 500 pcs", "Matte finish, 350 gsm", "Delivery in 3 days")
    ):
        draw.text((32 * SCALE, (66 + 24 * i) * SCALE), line, fill=text, font=font)
    return big


def _panels(greys: tuple[RGB, ...]) -> Image.Image:
    """One panel per grey: a 2-px box, a 2-px slanted line and a word of 13-px text."""
    big = Image.new("RGB", (SCALE * 300, SCALE * 160), WHITE)
    draw = ImageDraw.Draw(big)
    font = ImageFont.truetype(FONT, 13 * SCALE)
    for i, grey in enumerate(greys):
        x = 12 + 96 * i
        draw.rectangle(
            (x * SCALE, 12 * SCALE, (x + 84) * SCALE, 60 * SCALE), outline=grey, width=2 * SCALE
        )
        draw.line(
            (x * SCALE, 72 * SCALE, (x + 84) * SCALE, 100 * SCALE), fill=grey, width=2 * SCALE
        )
        draw.text((x * SCALE, 112 * SCALE), "Proof ok", fill=grey, font=font)
    return big


def _grey(level: int) -> RGB:
    return (level, level, level)


CASES: dict[str, tuple[Image.Image, tuple[RGB, ...]]] = {
    "333 outline, 555 text": (_card(_grey(0x33), _grey(0x55)), (_grey(0x33), _grey(0x55))),
    "black outline, 555 text": (_card(_grey(0), _grey(0x55)), (_grey(0), _grey(0x55))),
    "black outline, 444 shadow": (
        _card(_grey(0), _grey(0), shadow=_grey(0x44)),
        (_grey(0), _grey(0x44)),
    ),
    "333 and 666 on cream": (
        _card(_grey(0x33), _grey(0x66), paper=(250, 244, 228)),
        (_grey(0x33), _grey(0x66)),
    ),
    "222, 555 and 888": (
        _panels((_grey(0x22), _grey(0x55), _grey(0x88))),
        (_grey(0x22), _grey(0x55), _grey(0x88)),
    ),
    "black, 2a and 55": (
        _panels((_grey(0), _grey(0x2A), _grey(0x55))),
        (_grey(0), _grey(0x2A), _grey(0x55)),
    ),
}


def _delta_e(palette: npt.NDArray[np.float64], colour: RGB) -> npt.NDArray[np.float64]:
    lab = srgb_to_lab(np.asarray(palette, dtype=np.float64))
    target = srgb_to_lab(np.array([colour], dtype=np.float64))
    return np.asarray(ciede2000(lab, np.broadcast_to(target, lab.shape)), dtype=np.float64)


@pytest.mark.parametrize("exact", [False, True], ids=["automatic", "colors=N"])
@pytest.mark.parametrize("name", list(CASES))
def test_greys_with_strokes_of_their_own_stay_distinct(name: str, exact: bool) -> None:
    image, greys = CASES[name]
    rgba = _reduced(image)
    colors = len(greys) + 1 if exact else None
    seg = segmentation.segment(rgba, colors, Background.KEEP, silent())
    # The greys and the paper, no more.
    assert len(seg.palette) == len(greys) + 1, seg.palette
    for grey in greys:
        off = _delta_e(seg.palette, grey)
        index = int(np.argmin(off))
        assert off[index] <= SAME, (grey, seg.palette)
        # Its own pixels carry its colour, not another grey's.
        own = (np.abs(rgba[..., :3].astype(int) - np.array(grey)) <= 2).all(axis=2)
        share = float((seg.labels[own] == index).mean())
        assert share >= LABELLED, (grey, share)


def test_one_ink_gains_no_colour() -> None:
    # Dark text and a 3-px outline in one grey: its anti-aliasing (exact tints along the
    # outline's straight sides among them) is no ink of its own.
    rgba = _reduced(_card(_grey(0x33), _grey(0x33)))
    seg = segmentation.segment(rgba, None, Background.KEEP, silent())
    assert len(seg.palette) == 2, seg.palette


def test_a_faint_hairline_and_a_line_between_pixels_are_no_inks() -> None:
    # A black 1-px hairline at 60 % (one straight run of one grey) and a 1-px black
    # outline drawn between two pixels on two sides (its darker share, 3/4, runs straight)
    # beside black text: strokes of the ink, not greys of their own.
    big = Image.new("RGB", (SCALE * 200, SCALE * 80), WHITE)
    draw = ImageDraw.Draw(big)
    draw.rectangle(
        (8 * SCALE, 8 * SCALE, 60 * SCALE + 2, 60 * SCALE + 2), outline=(0, 0, 0), width=SCALE
    )
    draw.text(
        (70 * SCALE, 20 * SCALE), "Proof", fill=(0, 0, 0), font=ImageFont.truetype(FONT, 14 * SCALE)
    )
    rgba = _reduced(big)
    rgba[70, 10:190, :3] = 102  # the hairline
    found = own_inks.find(
        rgba, _colours(rgba), np.array([WHITE, (0, 0, 0)], dtype=np.float64), 6.0, 8.0
    )
    assert len(found.inks) == 0, found.inks
    assert len(found.lines) == 0, found.lines


def _colours(rgba: npt.NDArray[np.uint8]) -> own_inks.Colours:
    from printjob_adapters.engine import quantise

    return quantise.distinct_colours(rgba, quantise.pixel_maps(rgba))


# A grey drawn only as 1-px outlines (a dialog's checkboxes and its text field's border):
# every side of such a box is a 1-px line, and it appears nowhere else.
PANEL: RGB = (246, 246, 248)
HEADER: RGB = (52, 58, 70)
BORDER: RGB = (90, 90, 100)
FIELD_BORDER: RGB = (170, 170, 180)


def _dialog(scale: int, grid: bool = False) -> npt.NDArray[np.uint8]:
    """A settings dialog: a dark title bar, three 12-px checkboxes with 1-px borders in
    `BORDER` and 11-px labels, a white text field with a 1-px border in `FIELD_BORDER`
    (or, with `grid`, a table of 1-px rules in `BORDER` instead of the checkboxes). Drawn
    at `scale` and box-reduced: at 1 as a screen draws it (text anti-aliased, the boxes
    not), at 4 with every edge anti-aliased (the 1-px lines on whole pixels)."""
    s = scale
    big = Image.new("RGB", (260 * s, 160 * s), PANEL)
    draw = ImageDraw.Draw(big)
    draw.rectangle((0, 0, 260 * s - 1, 24 * s - 1), fill=HEADER)
    font = ImageFont.truetype(FONT, 11 * s)
    if grid:
        for i in range(5):
            y = (40 + 20 * i) * s
            draw.rectangle((16 * s, y, 136 * s - 1, y + s - 1), fill=BORDER)
        for i in range(4):
            x = (16 + 40 * i) * s
            draw.rectangle((x, 40 * s, x + s - 1, 120 * s), fill=BORDER)
        draw.text((22 * s, 44 * s), "Paper", fill=(40, 40, 48), font=font)
    else:
        for i, label in enumerate(("Print both sides", "Collate pages", "Black and white")):
            x, y = 16 * s, (40 + 24 * i) * s
            draw.rectangle((x, y, x + 12 * s - 1, y + 12 * s - 1), outline=BORDER, width=s)
            draw.text((x + 18 * s, y - s), label, fill=(40, 40, 48), font=font)
    draw.rectangle(
        (150 * s, 40 * s, 240 * s - 1, 60 * s - 1),
        fill=WHITE,
        outline=FIELD_BORDER,
        width=s,
    )
    draw.text((156 * s, 44 * s), "Letter", fill=(20, 20, 24), font=font)
    small = big.resize((260, 160), Image.Resampling.BOX) if s > 1 else big
    return np.asarray(small.convert("RGBA")).copy()


@pytest.mark.parametrize("exact", [False, True], ids=["automatic", "colors=N"])
@pytest.mark.parametrize(
    ("scale", "grid"), [(1, False), (4, False), (1, True)], ids=["aliased", "anti-aliased", "rules"]
)
def test_greys_drawn_only_as_1px_lines_keep_their_colour(
    scale: int, grid: bool, exact: bool
) -> None:
    rgba = _dialog(scale, grid)
    seg = segmentation.segment(rgba, 6 if exact else None, Background.KEEP, silent())
    for grey in (BORDER, FIELD_BORDER):
        off = _delta_e(seg.palette, grey)
        index = int(np.argmin(off))
        assert off[index] <= SAME, (grey, seg.palette)
        own = (rgba[..., :3] == np.array(grey)).all(axis=2)
        share = float((seg.labels[own] == index).mean())
        assert share >= LABELLED, (grey, share)
    # The labels' anti-aliasing stays the text's: no letter takes a border's grey.
    text = (np.abs(rgba[:, :, :3].astype(int) - 40) <= 12).all(axis=2)
    border = int(np.argmin(_delta_e(seg.palette, BORDER)))
    assert float((seg.labels[text] == border).mean()) <= 0.02


def test_an_edge_fading_between_two_colours_is_no_ink() -> None:
    # Filled squares whose edges lie half a pixel off the grid, on white and on each
    # other, beside text: each edge is a 1-px line of one exact mixture, running both
    # ways, between the two colours on either side of it.
    big = Image.new("RGB", (SCALE * 220, SCALE * 120), WHITE)
    draw = ImageDraw.Draw(big)
    half = SCALE // 2
    draw.rectangle(
        (10 * SCALE + half, 10 * SCALE + half, 70 * SCALE + half, 70 * SCALE + half), (0, 0, 0)
    )
    draw.rectangle((90 * SCALE, 10 * SCALE, 160 * SCALE, 80 * SCALE), (30, 90, 200))
    draw.rectangle(
        (110 * SCALE + half, 30 * SCALE + half, 140 * SCALE + half, 60 * SCALE + half),
        (220, 40, 40),
    )
    draw.text(
        (10 * SCALE, 90 * SCALE),
        "Proof ok",
        fill=(0, 0, 0),
        font=ImageFont.truetype(FONT, 14 * SCALE),
    )
    rgba = _reduced(big)
    seg = segmentation.segment(rgba, None, Background.KEEP, silent())
    assert len(seg.palette) == 4, seg.palette
