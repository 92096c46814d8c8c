"""Shared by the colour tests: trace an image, render it back, measure what the eye sees."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import numpy.typing as npt
import resvg_py
from PIL import Image

from printjob_adapters.engine.colour import ciede2000, srgb_to_lab
from printjob_adapters.engine.options import Background, TraceOptions
from printjob_adapters.engine.pipeline import trace
from printjob_adapters.engine.progress import silent
from printjob_adapters.engine.segmentation import Segmentation, segment


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def rgba(image: Image.Image) -> npt.NDArray[np.uint8]:
    return np.asarray(image.convert("RGBA")).copy()


def run(image: Image.Image, colors: int | None = None) -> Segmentation:
    return segment(rgba(image), colors, Background.KEEP, silent())


def svg_of(data: bytes, colors: int | None = None) -> str:
    return trace(data, TraceOptions(colors=colors)).data.decode()


def render(svg: str, width: int, height: int) -> npt.NDArray[np.uint8]:
    """resvg at `width` px over white, RGB, padded or cropped to `height` rows."""
    png = bytes(resvg_py.svg_to_bytes(svg_string=svg, width=width, dpi=300))
    image = Image.open(io.BytesIO(png)).convert("RGBA")
    white = Image.new("RGBA", image.size, (255, 255, 255, 255))
    rgb = np.asarray(Image.alpha_composite(white, image).convert("RGB"))
    out = np.full((height, width, 3), 255, np.uint8)
    rows = min(height, rgb.shape[0])
    out[:rows] = rgb[:rows, :width]
    return out


def mean_delta_e(a: npt.NDArray[np.uint8], b: npt.NDArray[np.uint8]) -> float:
    """Mean CIEDE2000 between two RGB images of one size."""
    lab_a = srgb_to_lab(a.reshape(-1, 3).astype(np.float64))
    lab_b = srgb_to_lab(b.reshape(-1, 3).astype(np.float64))
    return float(ciede2000(lab_a, lab_b).mean())


def path_segments(svg: str) -> int:
    """Drawing commands in every path's data (each letter after the first moveto and each
    implicit repeat counted once per letter: a lower bound of the benchmark's count)."""
    import re

    total = 0
    for d in re.findall(r'\sd="([^"]*)"', svg):
        total += len(re.findall(r"[LlHhVvCcSsQqTtAaZz]", d))
    return total


def neighbour_steps(seg: Segmentation) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """CIEDE2000 between the colours of every pair of 4-neighbouring labels, and the length
    of the border between them in pixel sides."""
    labels = seg.labels
    keys: list[npt.NDArray[np.int64]] = []
    k = len(seg.palette)
    for a, b in ((labels[:, 1:], labels[:, :-1]), (labels[1:], labels[:-1])):
        differ = (a != b) & (a >= 0) & (b >= 0)
        lo = np.minimum(a[differ], b[differ]).astype(np.int64)
        hi = np.maximum(a[differ], b[differ]).astype(np.int64)
        keys.append(lo * k + hi)
    pairs, border = np.unique(np.concatenate(keys), return_counts=True)
    first, second = pairs // k, pairs % k
    steps = ciede2000(srgb_to_lab(seg.palette[first]), srgb_to_lab(seg.palette[second]))
    return steps, border
