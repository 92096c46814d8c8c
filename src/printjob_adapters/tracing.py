"""The engine behind the job service: the core's `Engine` and `ImageProbe` ports.

The one place where the core and the engine (`printjob_adapters.engine`, a library that
knows nothing of jobs) meet. Everything here is a mapping:

- `JobOptions` -> `TraceOptions`, the core's `Policy` -> the engine's `ImageLimits`;
- the engine's stages -> the job's phases (`decode`, `segment` -> analysing,
  `vectorise` -> building, `write` -> finishing; the percent passes through unchanged);
- the engine's errors -> the core's: `Cancelled` -> `ConversionCancelled`, any other
  `EngineError` -> `ConversionFailed` with the same detail, whose `__cause__` is the
  original exception; in the probe, `UnsupportedImage` and `ImageTooLarge` -> the core's
  errors of those names, naming the `image` field;
- `TraceResult` -> `ConversionOutput`.

`trace_file` and the helpers of `printjob trace` live here too: they validate options with
the API's own parser, so the library and the command refuse exactly what the API refuses.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import attrs

from printjob_adapters import engine
from printjob_core.errors import (
    ConversionCancelled,
    ConversionFailed,
    ImageTooLarge,
    InvalidParameter,
    UnsupportedImage,
)
from printjob_core.image_rules import check_image
from printjob_core.limits import Policy
from printjob_core.model import (
    Background,
    ConversionOutput,
    JobOptions,
    OutputFormat,
    Phase,
    Size,
)
from printjob_core.options import IMAGE_FIELD, parse_options
from printjob_core.ports import CancelCheck, ImageBytes, ImageInfo, ProgressCallback

#: Output formats by file name suffix, for `trace_file` without a `format`.
FORMATS_BY_SUFFIX = {f".{fmt.value}": fmt for fmt in OutputFormat}

_PHASES = {
    engine.Stage.DECODE: Phase.ANALYSING,
    engine.Stage.SEGMENT: Phase.ANALYSING,
    engine.Stage.VECTORISE: Phase.BUILDING,
    engine.Stage.WRITE: Phase.FINISHING,
}


def trace_options(options: JobOptions) -> engine.TraceOptions:
    """The engine's options for a job's (already validated) options."""
    size = None if options.size is None else engine.Size(options.size.width, options.size.height)
    return engine.TraceOptions(
        format=engine.OutputFormat(options.format.value),
        size=size,
        colors=options.colors,
        background=engine.Background(options.background.value),
        dpi=options.dpi,
    )


def image_limits(policy: Policy) -> engine.ImageLimits:
    """The engine's image limits under the core's policy."""
    return engine.ImageLimits(
        max_pixels=policy.max_upload_pixels,
        min_side=policy.min_side,
        max_aspect_ratio=policy.max_aspect_ratio,
    )


_LIMITS = image_limits(Policy())


def convert(
    data: bytes,
    options: JobOptions,
    progress: ProgressCallback | None = None,
    cancelled: CancelCheck | None = None,
) -> ConversionOutput:
    """Turn one uploaded image into one print file (the engine under the core's names).

    Raises `ConversionFailed` (with a detail fit for the client) when no file can be made,
    including for an image that cannot be decoded, and `ConversionCancelled` as soon as
    `cancelled()` turns true between two units of work.
    """
    report = None if progress is None else _phase_reporter(progress)
    try:
        result = engine.trace(data, trace_options(options), report, cancelled, _LIMITS)
    except engine.Cancelled as exc:
        raise ConversionCancelled("the job was canceled") from exc
    except engine.TracingFailed as exc:
        raise ConversionFailed(exc.detail) from (exc.__cause__ or exc)
    except engine.EngineError as exc:
        raise ConversionFailed(exc.detail) from exc
    return ConversionOutput(
        data=result.data,
        width=result.width,
        height=result.height,
        colors=result.colors,
        background_removed=result.background_removed,
    )


def _phase_reporter(progress: ProgressCallback) -> engine.ProgressCallback:
    def report(stage: engine.Stage, percent: int) -> None:
        progress(_PHASES[stage], percent)

    return report


@attrs.frozen
class TracingEngine:
    """The core's `Engine` port: `convert` of this module."""

    def convert(
        self,
        image: bytes,
        options: JobOptions,
        progress: ProgressCallback,
        cancelled: CancelCheck,
    ) -> ConversionOutput:
        return convert(image, options, progress, cancelled)


class PillowImageProbe:
    """The core's `ImageProbe` port: format and size from the header, nothing decoded."""

    def probe(self, data: ImageBytes) -> ImageInfo:
        try:
            header = engine.probe(data)
        except engine.ImageTooLarge as exc:
            raise ImageTooLarge(exc.detail, param=IMAGE_FIELD) from exc
        except engine.UnsupportedImage as exc:
            raise UnsupportedImage(exc.detail, param=IMAGE_FIELD) from exc
        return ImageInfo(format=header.format, width=header.width, height=header.height)


def check_upload(data: bytes, policy: Policy | None = None) -> None:
    """The API's image rules, from the header: the refusal a submission would get
    (`UnsupportedImage` or `ImageTooLarge`)."""
    check_image(PillowImageProbe().probe(data), policy or Policy())


def options_from_fields(fields: Mapping[str, str]) -> JobOptions:
    """The job options the API would accept for these form fields (or `InvalidParameter`)."""
    return parse_options(fields)


def trace_file(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    format: OutputFormat | str | None = None,
    size: str | tuple[int, int] | Size | None = None,
    dpi: int | None = None,
    colors: int | None = None,
    background: Background | str = "keep",
) -> ConversionOutput:
    """Convert the image file `src` into the print file `dst`, under the API's rules.

    Options follow the API's rules exactly (`format` is guessed from `dst`'s suffix when
    not given; `size` is `"WxH"`, `(W, H)` or `None` for original). Raises
    `InvalidParameter` for a bad option, `ConversionFailed` when the image cannot be
    converted, and `OSError` when a file cannot be read or written. `dst` is replaced
    atomically: it is never left half-written.
    """
    if format is None:
        format = guess_format(dst)
    fields = {"format": str(format), "background": str(background)}
    if size is not None:
        fields["size"] = f"{size[0]}x{size[1]}" if isinstance(size, tuple) else str(size)
    if dpi is not None:
        fields["dpi"] = str(dpi)
    if colors is not None:
        fields["colors"] = str(colors)
    options = options_from_fields(fields)
    output = convert(Path(src).read_bytes(), options)
    write_atomically(Path(dst), output.data)
    return output


def guess_format(dst: str | os.PathLike[str]) -> str:
    """The output format named by `dst`'s suffix (`.svg`, `.pdf`, `.eps`, `.png`)."""
    suffix = Path(dst).suffix.lower()
    if suffix not in FORMATS_BY_SUFFIX:
        raise InvalidParameter(
            f"cannot tell the format from the file name {os.fspath(dst)!r}; "
            "name it .svg, .pdf, .eps or .png, or give the format",
            param="format",
        )
    return FORMATS_BY_SUFFIX[suffix].value


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same directory."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
