"""Two loose ends of the segmentation (issue 12).

`detail.recover_strokes` gives a tint the colour of the 1-px lines drawn in it; it used to
write that colour into the palette it was handed, an array its caller reads again. It now
returns the palette with the change, and leaves the caller's alone.

`shading.band_labels` (a gradient's bands) ran for over a second of CPU at 3 MP without a
cancel check; it now checks between its passes, so a cancel stops it there.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image, ImageDraw, ImageFont

from printjob_adapters.engine import detail, segmentation, shading
from printjob_adapters.engine.errors import Cancelled
from printjob_adapters.engine.options import Background, TraceOptions
from printjob_adapters.engine.pipeline import trace
from printjob_adapters.engine.progress import silent

SCALE = 4
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _outline_beside_text() -> npt.NDArray[np.uint8]:
    """A 1-px mid-grey square outline (sides of 21 px: rules, `own_inks.RULE`) beside a
    line of dark 12-px text on white (drawn at 4x and box-reduced): the grey's pixels are
    a tint of the text's ink, drawn as a line, so `recover_strokes` gives the tint the
    line's colour."""
    big = Image.new("RGB", (SCALE * 330, SCALE * 30), (255, 255, 255))
    draw = ImageDraw.Draw(big)
    draw.rectangle(
        (6 * SCALE, 4 * SCALE, 26 * SCALE + 3, 24 * SCALE + 3), outline=(128,) * 3, width=SCALE
    )
    font = ImageFont.truetype(FONT, 12 * SCALE)
    draw.text(
        (30 * SCALE, 5 * SCALE), "Vectorise artwork before printing", fill=(34,) * 3, font=font
    )
    small = big.resize((big.width // SCALE, big.height // SCALE), Image.Resampling.BOX)
    return np.asarray(small.convert("RGBA")).copy()


def test_recover_strokes_leaves_the_callers_palette_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    real = detail.recover_strokes
    seen: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], detail.Recovered]] = []

    def spy(
        labels: Any, rgb: Any, palette: npt.NDArray[np.float64], *args: Any
    ) -> detail.Recovered:
        before = palette.copy()
        recovered = real(labels, rgb, palette, *args)
        seen.append((before, palette, recovered))
        return recovered

    monkeypatch.setattr(detail, "recover_strokes", spy)
    segmentation.segment(_outline_beside_text(), None, Background.KEEP, silent())
    [(before, given, recovered)] = seen
    assert given.flags.writeable  # the segmentation's own palette: it could be written
    # The caller's palette is what it was...
    assert np.array_equal(given, before)
    # ...and the returned one holds the line's colour where the tint was.
    changed = np.flatnonzero((recovered.palette != before).any(axis=1))
    assert len(changed) == 1, changed
    grey = recovered.palette[changed[0]]
    assert np.abs(grey - 128.0).max() <= 12.0, grey
    assert recovered.palette is not given


# -- a cancel during the band labelling of a gradient --


def _two_axis_png(size: int) -> bytes:
    """A smooth gradient along both axes, blue to yellow across and dark to light down:
    labelled band by band from the smoothed image (`shading.band_labels`)."""
    y, x = np.mgrid[:size, :size].astype(np.float32) / (size - 1)
    left, right = np.array([30.0, 80.0, 200.0]), np.array([240.0, 200.0, 60.0])
    across = left + (right - left) * x[..., None]
    pixels = np.round(across * (0.35 + 0.65 * y[..., None])).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return buffer.getvalue()


def _cancel_in_band_labels(
    monkeypatch: pytest.MonkeyPatch, data: bytes, stop_at: int
) -> tuple[int, bool, bool]:
    """Traces `data`, cancelling at the `stop_at`-th cancel check made while
    `band_labels` runs (never, if 0). Returns how many checks it made, whether it
    returned, and whether the trace was cancelled."""
    real = shading.band_labels
    state = {"inside": False, "checks": 0, "returned": False}

    def spy(*args: Any, **kwargs: Any) -> shading.Bands:
        state["inside"] = True
        bands = real(*args, **kwargs)
        state["inside"], state["returned"] = False, True
        return bands

    def cancelled() -> bool:
        if state["inside"]:
            state["checks"] += 1
            return state["checks"] == stop_at
        return False

    monkeypatch.setattr(shading, "band_labels", spy)
    try:
        trace(data, TraceOptions(), cancelled=cancelled)
    except Cancelled:
        return int(state["checks"]), bool(state["returned"]), True
    return int(state["checks"]), bool(state["returned"]), False


def test_a_cancel_during_the_band_labelling_stops_the_trace_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _two_axis_png(160)
    checks, returned, stopped = _cancel_in_band_labels(monkeypatch, data, 0)
    assert returned and not stopped  # the gradient is labelled band by band
    # Checks between its passes: the smoothing per channel, the colours' keys, sort and
    # look-up, every band colour placed, the relabelling, the steep test per channel.
    assert checks >= 16, checks
    for stop_at in (1, checks // 2, checks):
        seen, returned, stopped = _cancel_in_band_labels(monkeypatch, data, stop_at)
        # Cancelled at that check, inside `band_labels`: it never returned.
        assert stopped and seen == stop_at and not returned, (stop_at, seen, returned)
