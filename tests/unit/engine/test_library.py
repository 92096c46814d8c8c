"""The engine as a library of its own: its interface, and the adapter that maps it onto the
job service's options, phases and errors."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from PIL import Image, ImageDraw

from printjob_adapters import tracing
from printjob_adapters.engine import (
    Background,
    Cancelled,
    ImageLimits,
    ImageTooLarge,
    OutputFormat,
    Size,
    Stage,
    TraceOptions,
    UnsupportedImage,
    trace,
)
from printjob_core.limits import Policy
from printjob_core.model import Background as JobBackground
from printjob_core.model import JobOptions, Phase
from printjob_core.model import OutputFormat as JobFormat
from printjob_core.model import Size as JobSize


def logo() -> bytes:
    image = Image.new("RGB", (120, 80), "white")
    ImageDraw.Draw(image).ellipse((20, 10, 80, 70), fill=(200, 20, 20))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def test_trace_reports_its_stages_in_order_rising_to_100() -> None:
    seen: list[tuple[Stage, int]] = []
    result = trace(logo(), TraceOptions(), lambda stage, percent: seen.append((stage, percent)))

    assert result.data.startswith(b"<?xml") and (result.width, result.height) == (120, 80)
    stages = [stage for stage, _ in seen]
    assert stages == sorted(stages, key=list(Stage).index)
    assert set(stages) == set(Stage)
    percents = [percent for _, percent in seen]
    assert percents == sorted(percents) and percents[0] == 0 and percents[-1] == 100


def test_trace_raises_the_engines_own_errors() -> None:
    with pytest.raises(UnsupportedImage, match="not an openable PNG"):
        trace(b"hello", TraceOptions())
    with pytest.raises(ImageTooLarge, match="at most 5,000 pixels"):
        trace(logo(), TraceOptions(), limits=ImageLimits(max_pixels=5000))
    with pytest.raises(Cancelled):
        trace(logo(), TraceOptions(), cancelled=lambda: True)


def test_trace_options_take_strings() -> None:
    options = TraceOptions(format="pdf", background="remove")  # type: ignore[arg-type]
    assert options.format is OutputFormat.PDF and options.background is Background.REMOVE
    assert options.effective_dpi == 300


def test_the_engine_alone_loads_nothing_else_of_printjob() -> None:
    code = (
        "import sys\n"
        "from printjob_adapters.engine import TraceOptions, trace\n"
        f"trace({logo()!r}, TraceOptions(format='png'))\n"
        "print(sorted(m for m in sys.modules if m.startswith('printjob')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = eval(out.stdout)
    assert loaded and all(
        m == "printjob_adapters" or m.startswith("printjob_adapters.engine") for m in loaded
    )


def test_the_adapter_maps_every_job_option() -> None:
    options = JobOptions(
        format=JobFormat.EPS,
        size=JobSize(800, 600),
        colors=5,
        background=JobBackground.REMOVE,
        dpi=150,
    )
    assert tracing.trace_options(options) == TraceOptions(
        format=OutputFormat.EPS,
        size=Size(800, 600),
        colors=5,
        background=Background.REMOVE,
        dpi=150,
    )
    assert tracing.trace_options(JobOptions(format=JobFormat.PNG)) == TraceOptions(
        format=OutputFormat.PNG
    )
    policy = Policy()
    assert tracing.image_limits(policy) == ImageLimits(
        policy.max_upload_pixels, policy.min_side, policy.max_aspect_ratio
    )


def test_the_adapter_maps_stages_to_phases() -> None:
    seen: list[tuple[Phase, int]] = []
    tracing.convert(logo(), JobOptions(format=JobFormat.SVG), lambda p, n: seen.append((p, n)))
    assert {p for p, _ in seen} == {Phase.ANALYSING, Phase.BUILDING, Phase.FINISHING}
    assert all(n <= 40 for p, n in seen if p is Phase.ANALYSING)
