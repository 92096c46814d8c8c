"""The pipeline's own plumbing: stages in order, progress, cancel, errors, the entry points.

The segmentation and tracing stages are replaced by trivial ones here, so these tests
exercise decode -> stages -> place -> write without depending on the tracer.
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw

from printjob_adapters.engine import pipeline
from printjob_adapters.engine.errors import Cancelled
from printjob_adapters.engine.options import Background as TraceBackground
from printjob_adapters.engine.progress import Checkpoint
from printjob_adapters.engine.vector import Layer, VectorArt
from printjob_adapters.tracing import TracingEngine, convert, trace_file
from printjob_core.errors import ConversionCancelled, ConversionFailed, InvalidParameter
from printjob_core.model import Background, JobOptions, OutputFormat, Phase, Size
from printjob_http.trace_command import add_trace_arguments, run_trace

RED, BLUE = (255, 0, 0), (0, 0, 255)


def image_bytes(width: int = 64, height: int = 32, fmt: str = "PNG") -> bytes:
    image = Image.new("RGB", (width, height), RED)
    image.paste(BLUE, (width // 2, 0, width, height))
    buffer = io.BytesIO()
    image.save(buffer, fmt)
    return buffer.getvalue()


def _rect(x0: float, y0: float, x1: float, y1: float) -> tuple[Any, ...]:
    return (
        ("moveTo", ((x0, y0),)),
        ("lineTo", ((x1, y0),)),
        ("lineTo", ((x1, y1),)),
        ("lineTo", ((x0, y1),)),
        ("closePath", ()),
    )


class FakeStages:
    """Stand-ins for segment and vectorise: halves of the image, red then blue."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def segment(
        self,
        rgba: np.ndarray,
        colors: int | None,
        background: TraceBackground,
        cp: Checkpoint,
        changes: Any = None,
    ) -> dict[str, Any]:
        self.calls.append(("segment", (rgba.shape, colors, background)))
        for fraction in (0.0, 0.5, 1.0):
            cp(fraction)
        return {"shape": rgba.shape, "remove": background is TraceBackground.REMOVE}

    def vectorise(
        self,
        rgba: np.ndarray,
        segmentation: dict[str, Any],
        cp: Checkpoint,
        automatic: bool = False,
    ) -> VectorArt:
        self.calls.append(("vectorise", segmentation))
        height, width = segmentation["shape"][:2]
        for fraction in (0.0, 0.25, 0.75, 1.0):
            cp(fraction)
        layers = (
            Layer(RED, _rect(0, 0, width, height)),
            Layer(BLUE, _rect(width / 2, 0, width, height)),
        )
        removed = segmentation["remove"]
        return VectorArt(width, height, layers[1:] if removed else layers, removed)


@pytest.fixture
def stages(monkeypatch: pytest.MonkeyPatch) -> FakeStages:
    fake = FakeStages()
    monkeypatch.setattr(pipeline, "_segment", fake.segment)
    monkeypatch.setattr(pipeline, "_vectorise", fake.vectorise)
    return fake


# -- convert ---------------------------------------------------------------------------------


def test_convert_passes_the_options_to_the_stages(stages: FakeStages) -> None:
    options = JobOptions(format=OutputFormat.SVG, colors=4, background=Background.REMOVE)
    output = convert(image_bytes(), options)

    assert stages.calls[0] == ("segment", ((32, 64, 4), 4, TraceBackground.REMOVE))
    assert stages.calls[1][0] == "vectorise"
    assert output.data.startswith(b"<?xml")
    assert (output.width, output.height) == (64, 32)
    assert output.colors == 1
    assert output.background_removed is True


def test_result_size_is_the_canvas(stages: FakeStages) -> None:
    options = JobOptions(format=OutputFormat.PNG, size=Size(300, 200), dpi=100)
    output = convert(image_bytes(), options)

    image = Image.open(io.BytesIO(output.data))
    assert (output.width, output.height) == image.size == (300, 200)
    assert output.colors == 2 and output.background_removed is False


def test_progress_rises_through_the_phases_to_100(stages: FakeStages) -> None:
    seen: list[tuple[Phase, int]] = []
    convert(image_bytes(), JobOptions(format=OutputFormat.EPS), lambda p, n: seen.append((p, n)))

    phases = [phase for phase, _ in seen]
    percents = [percent for _, percent in seen]
    assert percents == sorted(percents)
    assert percents[0] == 0 and percents[-1] == 100
    order = [Phase.ANALYSING, Phase.BUILDING, Phase.FINISHING]
    assert sorted(set(phases), key=order.index) == order
    assert phases == sorted(phases, key=order.index)
    assert all(40 <= n <= 85 for p, n in seen if p is Phase.BUILDING)
    assert all(n >= 85 for p, n in seen if p is Phase.FINISHING)


@pytest.mark.parametrize("after", [0, 1, 3, 6, 9])
def test_cancel_stops_the_conversion(stages: FakeStages, after: int) -> None:
    asked = 0

    def cancelled() -> bool:
        nonlocal asked
        asked += 1
        return asked > after

    with pytest.raises(ConversionCancelled):
        convert(image_bytes(), JobOptions(format=OutputFormat.PDF), None, cancelled)


def test_a_failing_stage_becomes_conversion_failed(
    stages: FakeStages, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> VectorArt:
        raise KeyError("oops")

    monkeypatch.setattr(pipeline, "_vectorise", broken)
    with pytest.raises(
        ConversionFailed, match="Tracing the outlines failed unexpectedly"
    ) as caught:
        convert(image_bytes(), JobOptions(format=OutputFormat.SVG))
    assert isinstance(caught.value.__cause__, KeyError)


def test_a_cancel_inside_a_stage_is_not_a_failure(
    stages: FakeStages, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cancels(*args: Any) -> VectorArt:
        raise Cancelled("the job was canceled")

    monkeypatch.setattr(pipeline, "_segment", cancels)
    with pytest.raises(ConversionCancelled):
        convert(image_bytes(), JobOptions(format=OutputFormat.SVG))


def test_a_failing_writer_becomes_conversion_failed(
    stages: FakeStages, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> bytes:
        raise MemoryError

    monkeypatch.setattr(pipeline, "write", broken)
    with pytest.raises(ConversionFailed, match="Writing the png file ran out of memory"):
        convert(image_bytes(), JobOptions(format=OutputFormat.PNG))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not an image", "not an openable PNG"),
        (image_bytes(10, 10), "at least 16 pixels"),
        (image_bytes(2000, 1600), "at most 3,000,000 pixels"),
    ],
)
def test_an_image_that_cannot_be_decoded_fails_the_conversion(
    stages: FakeStages, data: bytes, message: str
) -> None:
    with pytest.raises(ConversionFailed, match=message):
        convert(data, JobOptions(format=OutputFormat.SVG))
    assert stages.calls == []


def test_tracing_engine_is_the_engine_port(stages: FakeStages) -> None:
    seen: list[int] = []
    output = TracingEngine().convert(
        image_bytes(),
        JobOptions(format=OutputFormat.SVG),
        lambda p, n: seen.append(n),
        lambda: False,
    )
    assert output.width == 64 and seen[-1] == 100


# -- trace_file ------------------------------------------------------------------------------


def test_trace_file_guesses_the_format_from_the_suffix(stages: FakeStages, tmp_path: Path) -> None:
    src = tmp_path / "logo.png"
    src.write_bytes(image_bytes())
    for suffix, magic in [
        (".svg", b"<?xml"),
        (".pdf", b"%PDF"),
        (".eps", b"%!PS"),
        (".PNG", b"\x89PNG"),
    ]:
        dst = tmp_path / f"out{suffix}"
        output = trace_file(src, dst, colors=4)
        assert dst.read_bytes() == output.data
        assert output.data.startswith(magic)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_trace_file_takes_the_api_options(stages: FakeStages, tmp_path: Path) -> None:
    src = tmp_path / "logo.png"
    src.write_bytes(image_bytes())
    output = trace_file(str(src), str(tmp_path / "x.bin"), format="png", size=(200, 100), dpi=72)
    assert (output.width, output.height) == (200, 100)
    output = trace_file(src, tmp_path / "y.svg", size="400X400", background="remove")
    assert output.background_removed and b'viewBox="0 0 400 400"' in output.data


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"colors": 0}, "colors"),
        ({"dpi": 300}, "dpi"),  # dpi needs an explicit size (design decision 1)
        ({"size": "big"}, "size"),
        ({"background": "erase"}, "background"),
        ({"format": "gif"}, "format"),
    ],
)
def test_trace_file_refuses_what_the_api_refuses(
    stages: FakeStages, tmp_path: Path, kwargs: dict[str, Any], param: str
) -> None:
    src = tmp_path / "logo.png"
    src.write_bytes(image_bytes())
    with pytest.raises(InvalidParameter) as caught:
        trace_file(src, tmp_path / "out.svg", **kwargs)
    assert caught.value.param == param
    assert not (tmp_path / "out.svg").exists()


def test_trace_file_needs_a_known_suffix_or_a_format(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameter, match="give the format") as caught:
        trace_file(tmp_path / "logo.png", tmp_path / "out.txt")
    assert caught.value.param == "format"


# -- printjob trace --------------------------------------------------------------------------


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="printjob trace")
    add_trace_arguments(parser)
    return run_trace(parser.parse_args(argv))


def test_trace_command_writes_the_file(
    stages: FakeStages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, dst = tmp_path / "in.png", tmp_path / "out.pdf"
    src.write_bytes(image_bytes())

    assert run([str(src), "-o", str(dst), "--size", "640x320", "--dpi", "72"]) == 0
    assert dst.read_bytes().startswith(b"%PDF")
    assert "640x320" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra",
    [["--colors", "0"], ["--colors", "five"], ["--dpi", "300"], ["--format", "tiff"],
     ["--size", "0x10"], ["--background", "nope"]],
)  # fmt: skip
def test_trace_command_bad_options_exit_2(
    stages: FakeStages, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    src = tmp_path / "in.png"
    src.write_bytes(image_bytes())
    assert run([str(src), "-o", str(tmp_path / "out.svg"), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("printjob trace: invalid --") and err.count("\n") == 1
    assert not (tmp_path / "out.svg").exists()


def test_trace_command_unknown_suffix_exits_2(tmp_path: Path) -> None:
    assert run([str(tmp_path / "in.png"), "-o", str(tmp_path / "out.txt")]) == 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        (b"hello", "not an openable PNG"),
        (image_bytes(400, 16), "20 times"),
    ],
)
def test_trace_command_unreadable_image_exits_1(
    stages: FakeStages,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: bytes | None,
    message: str,
) -> None:
    src = tmp_path / "in.png"
    if content is not None:
        src.write_bytes(content)
    assert run([str(src), "-o", str(tmp_path / "out.svg")]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "out.svg").exists()


# -- with the real segmentation and tracer ---------------------------------------------------


def logo_bytes() -> bytes:
    """A 200 x 150 logo on white: a red disc on the left, a blue square on the right."""
    image = Image.new("RGB", (200, 150), "white")
    draw = ImageDraw.Draw(image)
    draw.ellipse((20, 35, 100, 115), fill=RED)
    draw.rectangle((120, 35, 180, 115), fill=BLUE)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def rendered(output_data: bytes, fmt: OutputFormat, tmp_path: Path) -> np.ndarray:
    from printjob_adapters.engine.canvas import fit
    from tests.unit.writers.test_writers import render

    image_size = _canvas_size(output_data, fmt)
    return render(output_data, fmt, fit(*image_size, *image_size, 300), tmp_path)


def _canvas_size(data: bytes, fmt: OutputFormat) -> tuple[int, int]:
    if fmt is OutputFormat.PNG:
        return Image.open(io.BytesIO(data)).size
    return 200, 150


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_a_logo_converts_end_to_end(fmt: OutputFormat, tmp_path: Path) -> None:
    output = convert(logo_bytes(), JobOptions(format=fmt))
    pixels = rendered(output.data, fmt, tmp_path)

    assert output.colors == 3 and output.background_removed is False
    if fmt is OutputFormat.PNG:
        # 200 x 150 fitted to the 4500 x 5400 canvas: scale 22.5, a 1012.5 px margin above.
        assert (output.width, output.height) == (4500, 5400)
        scale, top = 22.5, 1012.5
    else:
        assert (output.width, output.height) == (200, 150)
        scale, top = 1.0, 0.0

    def at(x: float, y: float) -> np.ndarray:
        return pixels[round(top + y * scale), round(x * scale)].astype(int)

    assert np.abs(at(60, 75) - RED).max() <= 8
    assert np.abs(at(150, 75) - BLUE).max() <= 8
    assert np.abs(at(5, 5) - 255).max() <= 8


def test_background_removal_end_to_end() -> None:
    output = convert(
        logo_bytes(),
        JobOptions(format=OutputFormat.PNG, size=Size(400, 300), background=Background.REMOVE),
    )
    image = np.asarray(Image.open(io.BytesIO(output.data)))

    assert output.background_removed is True and output.colors == 2
    assert image[10, 10, 3] == 0  # the white ground is gone
    assert tuple(image[150, 120]) == (*RED, 255)
    assert tuple(image[150, 300]) == (*BLUE, 255)


def test_real_stages_report_monotonic_progress_and_honour_cancel() -> None:
    seen: list[tuple[Phase, int]] = []
    convert(logo_bytes(), JobOptions(format=OutputFormat.SVG), lambda p, n: seen.append((p, n)))
    percents = [n for _, n in seen]
    assert percents == sorted(percents) and percents[-1] == 100
    assert {p for p, _ in seen} == {Phase.ANALYSING, Phase.BUILDING, Phase.FINISHING}

    asked = 0

    def cancelled() -> bool:
        nonlocal asked
        asked += 1
        return asked > 4

    with pytest.raises(ConversionCancelled):
        convert(logo_bytes(), JobOptions(format=OutputFormat.SVG), None, cancelled)


@pytest.mark.parametrize("fmt", list(OutputFormat))
@pytest.mark.parametrize("background", list(Background))
def test_a_wholly_transparent_picture_gives_an_empty_file(
    fmt: OutputFormat, background: Background
) -> None:
    """Nothing to draw is not a failure: the file is empty, transparent, of the right size."""
    buffer = io.BytesIO()
    Image.new("RGBA", (64, 48), (10, 20, 30, 0)).save(buffer, "PNG")
    output = convert(buffer.getvalue(), JobOptions(format=fmt, background=background))
    assert output.colors == 0
    if fmt is OutputFormat.PNG:
        with Image.open(io.BytesIO(output.data)) as image:
            assert image.size == (4500, 5400)
            assert image.getextrema()[3] == (0, 0)  # every pixel transparent
    else:
        assert (output.width, output.height) == (64, 48)
    if fmt is OutputFormat.SVG:
        assert b'viewBox="0 0 64 48"' in output.data and b"<path" not in output.data
