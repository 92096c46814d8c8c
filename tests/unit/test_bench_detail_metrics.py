"""The benchmark's detail recall and OCR word recall count what they say they count."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import metrics as m
from tests.unit.engine import hard_synthetic as synthetic


def _edges(rgb: np.ndarray) -> np.ndarray:
    return m.detail_edges(m.to_lab(rgb))


def _hairlines(shift: int = 0) -> np.ndarray:
    drawn = np.array(synthetic.lines_and_dots().image)
    return np.roll(drawn, (shift, shift), axis=(0, 1))


def test_detail_recall_keeps_every_edge_of_the_input_itself() -> None:
    edges = _edges(_hairlines())
    assert edges.sum() > 100
    assert m.detail_recall(edges, edges) == 1.0


def test_detail_recall_forgives_one_pixel_but_not_five() -> None:
    edges = _edges(_hairlines())
    assert m.detail_recall(edges, _edges(_hairlines(shift=1))) == pytest.approx(1.0, abs=0.02)
    far = m.detail_recall(edges, _edges(_hairlines(shift=5)))
    assert far is not None and far < 0.2


def test_detail_recall_of_a_blank_render_is_zero_and_of_a_blank_input_undefined() -> None:
    edges = _edges(_hairlines())
    blank = np.zeros_like(edges)
    assert m.detail_recall(edges, blank) == 0.0
    assert m.detail_recall(blank, edges) is None


def test_ocr_recall_counts_the_reference_words_read_again() -> None:
    drawn = synthetic.small_text(pixel_size=10)
    rgb = np.array(drawn.image)
    reference = m.ocr_words(m.upscale_bicubic(rgb, 4))
    assert len(reference) >= 6
    assert m.ocr_recall(reference, m.ocr_words(m.upscale_bicubic(rgb, 4))) == 1.0
    assert m.ocr_recall(reference, m.ocr_words(np.full_like(rgb, 255))) == 0.0
    assert m.ocr_recall(frozenset(), reference) is None
