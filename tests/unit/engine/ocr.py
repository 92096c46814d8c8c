"""Word reading with the tesseract CLI, shared by the engine's tests and its benchmark.

Small text is judged the way a reader judges it: by whether the words can still be read.
The tests and ``bench/metrics.py`` both need the same reading and the same normalisation,
so that a word counted as kept in a test is counted the same way in the benchmark.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from PIL import Image

# Sparse text: screenshots and labels are scattered words, not a page of paragraphs.
DEFAULT_PAGE_SEGMENTATION = 11
_WORD_CHARS = re.compile(r"[^0-9a-z]+")


class TesseractMissing(RuntimeError):
    """The tesseract binary is not installed, so words cannot be read at all."""


def tesseract_available() -> bool:
    return shutil.which("tesseract") is not None


def over_white(image: Image.Image) -> Image.Image:
    """The image as a reader sees it printed on white paper."""
    if image.mode in ("RGBA", "LA", "P", "PA"):
        rgba = image.convert("RGBA")
        paper = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(paper, rgba).convert("RGB")
    return image.convert("RGB")


def upscale(image: Image.Image, factor: int = 4, *, smooth: bool = True) -> Image.Image:
    """``factor`` times larger: bicubic as a viewer zooms, or nearest to keep pixels square."""
    resample = Image.Resampling.BICUBIC if smooth else Image.Resampling.NEAREST
    return image.resize((image.width * factor, image.height * factor), resample)


def normalise_word(raw: str) -> str:
    """Lower case, letters and digits only: OCR punctuation noise is not a lost word."""
    return _WORD_CHARS.sub("", raw.lower())


def read_words(
    image: Image.Image, *, page_segmentation: int = DEFAULT_PAGE_SEGMENTATION
) -> frozenset[str]:
    """The normalised words tesseract reads in ``image`` (flattened over white).

    Single characters are dropped: tesseract reads stray strokes as ``l`` or ``i`` and a
    one-letter word carries no evidence of legibility.
    """
    binary = shutil.which("tesseract")
    if binary is None:
        raise TesseractMissing("tesseract is not on PATH (make system-deps installs it)")
    with tempfile.TemporaryDirectory(prefix="printjob-ocr-") as tmp:
        source = Path(tmp) / "page.png"
        over_white(image).save(source)
        completed = subprocess.run(
            [binary, str(source), "stdout", "-l", "eng", "--psm", str(page_segmentation)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
            env={**os.environ, "OMP_THREAD_LIMIT": "1"},
        )
    words = (normalise_word(token) for token in completed.stdout.split())
    return frozenset(word for word in words if len(word) >= 2)


def word_recall(reference: frozenset[str], candidate: frozenset[str]) -> float:
    """Share of the reference's words also read in the candidate (1.0 when there is none)."""
    if not reference:
        return 1.0
    return len(reference & candidate) / len(reference)


def words_recall(reference: Image.Image, candidate: Image.Image, factor: int = 4) -> float:
    """Word recall of ``candidate`` against ``reference``, both read at ``factor`` x.

    The reference is upscaled bicubic (as a viewer zooms); the candidate is taken as given
    when it is already that large (a render at ``factor`` x), else upscaled the same way.
    """
    target = (reference.width * factor, reference.height * factor)
    wanted = read_words(upscale(over_white(reference), factor))
    shown = over_white(candidate)
    if shown.size != target:
        shown = shown.resize(target, Image.Resampling.BICUBIC)
    return word_recall(wanted, read_words(shown))
