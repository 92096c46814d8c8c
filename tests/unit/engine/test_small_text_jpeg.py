"""JPEG'd small type as print shops send it: black at q60, bold at q90, two colours at q75,
red on white and red on cream (issue 12, item 1).

Read back as `test_small_text` reads (tesseract on the 4x render against the 4x bicubic
input, `ocr.words_recall`); mostly `test_small_text.OTHER_WORDS`, not the table's words
(`bench/small_text_table.py`), so the fixes do not hang on one text. The levels are those
reached now less a word; each case's figure on the code before is in its comment.
"""

from __future__ import annotations

import numpy as np
import pytest

from printjob_adapters.engine import small_text
from printjob_adapters.engine.options import TraceOptions
from printjob_adapters.engine.pipeline import trace
from tests.unit.engine import hard_synthetic
from tests.unit.engine.test_small_text import (
    OTHER_WORDS,
    PAIRS,
    RGB,
    _inks_off_paper,
    _png,
    _recall_with,
    _text,
    _typeset,
)

pytest.importorskip("resvg_py")

RED_ON_WHITE: tuple[RGB, RGB] = ((200, 20, 30), (255, 255, 255))


def test_a_measured_ink_takes_the_colour_it_lies_short_of() -> None:
    # White paper, a grey 141 (JPEG's mixture) and black: a letter measured at grey 110
    # is a mixture of the white with both (every grey is); its strokes are thin black,
    # not a grey past the palette's grey. Both lie on the line exactly, and the tie went
    # to the grey (the lower index): a third of JPEG'd black type at q60 printed grey.
    palette = np.array([[255.0, 255.0, 255.0], [141.0, 141.0, 141.0], [0.0, 0.0, 0.0]])
    component = np.zeros((6, 6), dtype=np.int32)
    component[1:5, 2:4] = 1
    letters = small_text.Letters(
        component=component,
        ink=np.array([-1], dtype=np.int32),
        paper=np.array([0], dtype=np.int32),
        ink_colour=np.array([[110.0, 110.0, 110.0]]),
        measured_coverage=True,
        fits=True,
    )
    chosen = small_text._ink_in_palette(letters, palette)
    assert chosen is not None
    assert chosen.ink.tolist() == [2]
    # A letter measured darker than every colour but one still takes the nearest.
    lighter = small_text.Letters(
        component=component,
        ink=np.array([-1], dtype=np.int32),
        paper=np.array([0], dtype=np.int32),
        ink_colour=np.array([[150.0, 150.0, 150.0]]),
        measured_coverage=True,
        fits=True,
    )
    chosen = small_text._ink_in_palette(lighter, palette[:2])
    assert chosen is not None
    assert chosen.ink.tolist() == [1]


def test_jpeg_q60_black_type_prints_in_one_ink() -> None:
    # Black 8-px Sans at q60 segments into white, a grey 141 and black. Letters mostly of
    # the grey voted for it ("der" of "order", "file") and measured letters tied to it,
    # so words printed half grey: 3 colours, 0.50. Letters whose strongest pixels lie
    # past their tint take the ink those pixels are a mixture of (`_beyond_their_tint`):
    # 2 colours, 0.88.
    ink, paper = PAIRS["dark-on-light"]
    image = hard_synthetic.jpeg(_text("sans", 8, ink, paper), 60)
    result = trace(_png(image), TraceOptions())
    assert result.colors == 2
    recall = _recall_with(image, TraceOptions())
    assert recall >= 0.75, f"sans 8 px black q60: {recall:.2f}"


@pytest.mark.parametrize("pair", ["dark-on-light", "light-on-dark"])
def test_jpeg_q90_bold_type_keeps_its_counters(pair: str) -> None:
    # The 8-px bold "o" is 4 x 5 pixels; at q90 its 1-px counter (grey 227 to 239) is
    # labelled with the ink, and the letter was a solid block drawn as a blob by the
    # ordinary tracer ("north" read "nerth"): 0.88 and 0.81. Its counter opens it
    # (`_open_counters`): 0.94 or more.
    ink, paper = PAIRS[pair]
    image = hard_synthetic.jpeg(_typeset("bold", 8, ink, paper, OTHER_WORDS), 90)
    recall = _recall_with(image, TraceOptions())
    assert recall >= 0.93, f"bold 8 px {pair} q90: {recall:.2f}"


def test_jpeg_q75_black_type_in_two_colours_is_no_blob() -> None:
    # With colors=2 JPEG'd black type gets a grey 133 that labels the anti-aliasing
    # between stems too: words had a 5x5 square of candidates (thick) and were drawn as
    # blobs, 0.50. Only the darker half of a stroke counts (`_darker_half`): 0.81.
    ink, paper = PAIRS["dark-on-light"]
    image = hard_synthetic.jpeg(_typeset("sans", 8, ink, paper, OTHER_WORDS), 75)
    result = trace(_png(image), TraceOptions(colors=2))
    assert result.colors == 2
    recall = _recall_with(image, TraceOptions(colors=2))
    assert recall >= 0.69, f"sans 8 px black q75 colors=2: {recall:.2f}"


def test_jpeg_q75_red_type_on_cream_prints_in_one_ink() -> None:
    # At q75 red on cream segments into the cream and two pinks; the lighter pink labels
    # the gaps between stems, words were thick and drawn by the ordinary tracer in both
    # pinks: two inks. One ink now, read as before (0.75).
    ink, paper = PAIRS["red-on-cream"]
    image = hard_synthetic.jpeg(_typeset("sans", 8, ink, paper, OTHER_WORDS), 75)
    result = trace(_png(image), TraceOptions())
    assert _inks_off_paper(result.data.decode(), paper) == 1
    recall = _recall_with(image, TraceOptions())
    assert recall >= 0.69, f"sans 8 px red on cream q75: {recall:.2f}"


@pytest.mark.parametrize(("font", "least"), [("mono", 0.56), ("bold", 0.75)])
def test_jpeg_q90_red_type_on_white_prints_in_one_ink(font: str, least: float) -> None:
    # Red on white at q90 segments into 14 to 16 colours, pink tints of the white around
    # each word under half of the pixels off the white (0.48), so its ringing was never
    # left out: letters in seven and six inks, words as blobs, 0.38 and 0.44. On a page
    # whose words already stand in lines the ringing is looked for: one ink, 0.69, 0.88.
    ink, paper = RED_ON_WHITE
    image = hard_synthetic.jpeg(_typeset(font, 8, ink, paper, OTHER_WORDS), 90)
    result = trace(_png(image), TraceOptions())
    assert _inks_off_paper(result.data.decode(), paper) == 1
    recall = _recall_with(image, TraceOptions())
    assert recall >= least, f"{font} 8 px red on white q90: {recall:.2f}"
