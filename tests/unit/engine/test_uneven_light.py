"""An unevenly lit scan of a printed page gives clean, legible ink on paper."""

from __future__ import annotations

import numpy as np
from PIL import Image

from printjob_adapters.engine import illumination, quantise

from .colour_support import png_bytes, render, rgba, run, svg_of
from .hard_synthetic import WORDS, small_text
from .ocr import read_words, upscale


def _unevenly_lit_page(seed: int = 0) -> tuple[Image.Image, tuple[str, ...]]:
    """Words in 28-px DejaVu (10-pt type scanned at 200 dpi), lit from the top right: the
    paper at the bottom left is darker than the ink's anti-aliased edges at the top right.
    Plus scanner noise."""
    drawn = small_text(words=WORDS[:12], pixel_size=28, per_line=4)
    rgb = np.asarray(drawn.image, dtype=np.float64)
    h, w = rgb.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w]
    light = 0.45 + 0.55 * (xs / (w - 1) * 0.5 + (1 - ys / (h - 1)) * 0.5)
    lit = rgb * light[..., None] + np.random.default_rng(seed).normal(0, 4.0, rgb.shape)
    return Image.fromarray(np.clip(np.rint(lit), 0, 255).astype(np.uint8)), drawn.words


def test_uneven_light_is_divided_out_into_ink_on_paper() -> None:
    page, words = _unevenly_lit_page()
    seg = run(page)
    assert len(seg.palette) == 2, seg.palette.round()
    paper, ink = sorted(seg.palette.tolist(), key=sum, reverse=True)
    assert min(paper) > 200 and max(ink) < 90, seg.palette.round()
    # Legible: tesseract reads the words from the 4x render as it does from the drawn page.
    out = render(svg_of(png_bytes(page)), page.width, page.height)
    read = read_words(upscale(Image.fromarray(out)))
    assert len(set(words) & set(read)) >= len(words) - 1, (words, read)


def test_even_light_and_clean_art_are_left_alone() -> None:
    flat = np.full((120, 160, 4), 255, np.uint8)
    flat[30:90, 40:120, :3] = (200, 30, 40)
    assert _even_out(flat) is flat
    evenly = small_text(words=WORDS[:8], pixel_size=28).image
    noisy = np.asarray(evenly, np.float64) + np.random.default_rng(1).normal(0, 4.0, (1, 1, 3))
    arr = rgba(Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)))
    assert _even_out(arr) is arr
    page = rgba(_unevenly_lit_page()[0])
    assert _even_out(page) is not page


def _even_out(arr: np.ndarray) -> np.ndarray:
    return illumination.even_out(arr, quantise.pixel_maps(arr))[0]


def test_the_block_test_turns_away_only_what_the_per_pixel_light_would() -> None:
    # Dark skies, evenly and unevenly lit paper, at sizes whose blocks do and do not fit the
    # image: whenever the blocks alone say even or dark, the light at every pixel says so.
    rng = np.random.default_rng(7)
    turned_away = 0
    for case in range(40):
        h, w = (int(v) for v in rng.integers(30, 260, size=2))
        ys, xs = np.mgrid[0:h, 0:w]
        level = rng.uniform(20.0, 250.0)
        fall = rng.uniform(0.0, 0.3) * (xs / w + ys / h)
        lum = level * (1.0 - fall) + rng.normal(0.0, rng.uniform(1.0, 12.0), (h, w))
        arr = np.full((h, w, 4), 255, np.uint8)
        arr[..., :3] = np.clip(lum, 0, 255).astype(np.uint8)[..., None]
        paper, _ = illumination._paper_blocks(arr)
        light = illumination.paper_light(arr)
        if illumination._surely_even_or_dark(paper):
            turned_away += 1
            even = float(light.min()) >= illumination.EVEN_LIGHT * float(light.max())
            assert even or float(light.max()) < illumination.PAGE_PAPER, case
    assert 5 <= turned_away <= 35, turned_away  # both outcomes were tried
