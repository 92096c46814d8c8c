"""Per-gradient banding table: colours, steps between bands, path segments, file size.

Each synthetic gradient (linear, radial, steep, JPEG'd, two-axis) is segmented and traced
in automatic mode and measured as docs/engine.md's gradient sections measure it:

- "largest": the largest CIEDE2000 between the fills of two 4-neighbouring regions;
- "over": the largest amount by which such a step exceeds the bound the tests hold
  (`tests/unit/engine/test_steep_gradients._steps_against_own_change`: the larger of
  `colour_count.BAND_STEP` and two bands' reach at the input's own change, plus 1.0),
  measured against the gradient as drawn (before JPEG); negative when every step is within;
- path segments as the tests count them, and the SVG's size in bytes;
- CPU seconds of the segmentation (one run: indicative only on a loaded machine).

`--json FILE` writes the rows for a later `--compare FILE` (before -> after in one table).
Run it against another tree with `PYTHONPATH=<tree>/src`.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(1, str(ROOT))

from tests.unit.engine.hard_synthetic import (  # noqa: E402
    jpeg,
    linear_gradient,
    radial_gradient,
)
from tests.unit.engine.test_jpeg_gradients import (  # noqa: E402
    _linear_navy,
    _radial_navy,
    _radial_red,
)
from tests.unit.engine.test_steep_gradients import _steps_against_own_change  # noqa: E402

from printjob_adapters.engine.options import Background, TraceOptions  # noqa: E402
from printjob_adapters.engine.pipeline import trace  # noqa: E402
from printjob_adapters.engine.progress import silent  # noqa: E402
from printjob_adapters.engine.segmentation import segment  # noqa: E402

Drawn = Callable[[], Image.Image]


def two_axis_soft(width: int, height: int) -> Image.Image:
    """Blue-grey to straw across, 75 % to 100 % light down (each channel scaled)."""
    y, x = np.mgrid[:height, :width].astype(np.float64)
    x /= max(width - 1, 1)
    y /= max(height - 1, 1)
    left, right = np.array([90.0, 110.0, 150.0]), np.array([235.0, 215.0, 140.0])
    across = left + (right - left) * x[..., None]
    rgb = across * (0.75 + 0.25 * y[..., None])
    return Image.fromarray(np.round(rgb).astype(np.uint8), "RGB")


def four_corners(size: int) -> Image.Image:
    """A bilinear blend of four corner colours: red, yellow, blue and white."""
    y, x = np.mgrid[:size, :size].astype(np.float64) / max(size - 1, 1)
    corners = [np.array(c, np.float64) for c in ((220, 40, 40), (250, 220, 60))]
    bottom = [np.array(c, np.float64) for c in ((40, 70, 200), (250, 250, 250))]
    top = corners[0] + (corners[1] - corners[0]) * x[..., None]
    low = bottom[0] + (bottom[1] - bottom[0]) * x[..., None]
    rgb = top + (low - top) * y[..., None]
    return Image.fromarray(np.round(rgb).astype(np.uint8), "RGB")


def abuse_two_axis(size: int) -> Image.Image:
    """`bench/abuse.py`'s `twoaxis` at a smaller size: blue to yellow across, dark to light
    down."""
    y, x = np.mgrid[:size, :size].astype(np.float32) / max(size - 1, 1)
    left, right = np.array([30.0, 80.0, 200.0]), np.array([240.0, 200.0, 60.0])
    across = left + (right - left) * x[..., None]
    rgb = np.round(across * (0.35 + 0.65 * y[..., None])).astype(np.uint8)
    return Image.fromarray(rgb, "RGB")


def _radial_wine() -> Image.Image:
    return radial_gradient(size=(200, 200)).image


def _radial_green() -> Image.Image:
    return radial_gradient(
        size=(96, 96), inner_colour=(255, 250, 220), outer_colour=(30, 90, 60)
    ).image


def _linear_yellow() -> Image.Image:
    return linear_gradient(
        size=(64, 64), start_colour=(255, 240, 0), end_colour=(120, 0, 160)
    ).image


CASES: dict[str, tuple[Drawn, int | None]] = {}
for _name, _drawn in (
    ("radial white-navy 60px r, 240px", _radial_navy),
    ("radial white-red 30px r, 64px", _radial_red),
    ("linear white-navy, 120px", _linear_navy),
    ("linear yellow-purple, 64px", _linear_yellow),
    ("radial cream-green, 96px", _radial_green),
    ("radial cream-wine, 200px", _radial_wine),
):
    for _quality in (None, 75, 90):
        _label = "PNG" if _quality is None else f"q{_quality}"
        CASES[f"{_name}, {_label}"] = (_drawn, _quality)
for _label, _quality in (("PNG", None), ("q75", 75), ("q90", 90)):
    CASES[f"two-axis soft, 128px, {_label}"] = (lambda: two_axis_soft(128, 128), _quality)
    CASES[f"two-axis soft, 240x160, {_label}"] = (lambda: two_axis_soft(240, 160), _quality)
    CASES[f"four corners, 160px, {_label}"] = (lambda: four_corners(160), _quality)
CASES["two-axis blue-yellow dark-light, 256px, PNG"] = (lambda: abuse_two_axis(256), None)
CASES["two-axis blue-yellow dark-light, 512px, PNG"] = (lambda: abuse_two_axis(512), None)


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _segments(svg: str) -> int:
    import re

    total = 0
    for d in re.findall(r'\sd="([^"]*)"', svg):
        total += len(re.findall(r"[LlHhVvCcSsQqTtAaZz]", d))
    return total


def measure(name: str) -> dict[str, float]:
    drawn, quality = CASES[name]
    clean = drawn()
    image = jpeg(clean, quality) if quality is not None else clean
    pixels = np.asarray(image.convert("RGBA")).copy()
    started = time.process_time()
    seg = segment(pixels, None, Background.KEEP, silent())
    seconds = time.process_time() - started
    over = _steps_against_own_change(clean, seg)
    from printjob_adapters.engine.colour import ciede2000, srgb_to_lab

    palette = srgb_to_lab(seg.palette)
    labels = seg.labels
    largest = 0.0
    for a, b in ((labels[:, 1:], labels[:, :-1]), (labels[1:], labels[:-1])):
        differ = (a != b) & (a >= 0) & (b >= 0)
        if differ.any():
            largest = max(largest, float(ciede2000(palette[a[differ]], palette[b[differ]]).max()))
    svg = trace(_png(image), TraceOptions(colors=None)).data
    return {
        "colours": float(len(seg.palette)),
        "largest": largest,
        "over": float(over.max()) if len(over) else -99.0,
        "segments": float(_segments(svg.decode())),
        "bytes": float(len(svg)),
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated substrings of case names")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--compare", type=Path, help="rows of an earlier run: before -> after")
    args = parser.parse_args()
    wanted = [w for w in args.only.split(",") if w]
    names = [n for n in CASES if not wanted or any(w in n for w in wanted)]
    before = json.loads(args.compare.read_text()) if args.compare else {}
    rows: dict[str, dict[str, float]] = {}
    print("| Gradient | Colours | Largest step | Over the bound | Path segments | SVG bytes |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name in names:
        row = measure(name)
        rows[name] = row
        old = before.get(name)

        def cell(key: str, fmt: str, row: dict[str, float] = row, old: object = old) -> str:
            now = format(row[key], fmt)
            return f"{format(old[key], fmt)} → {now}" if isinstance(old, dict) else now

        print(
            f"| {name} | {cell('colours', '.0f')} | {cell('largest', '.2f')} | "
            f"{cell('over', '+.2f')} | {cell('segments', ',.0f')} | {cell('bytes', ',.0f')} |",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
