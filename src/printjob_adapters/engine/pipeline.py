"""The whole conversion: image bytes and options in, a print file and its facts out.

Stages and the progress each one reports (design decision 14):

    decode      analysing   0..10
    segment     analysing  10..40
    vectorise   building   40..85
    place+write finishing  85..100

`convert` is the engine behind the job runner (`TracingEngine`), `printjob trace` and the
library entry point `trace_file`; all three make the same file from the same options.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from printjob_adapters.engine.canvas import place
from printjob_adapters.engine.decode import decode
from printjob_adapters.engine.progress import Checkpoint
from printjob_adapters.writers import write
from printjob_core.errors import ConversionCancelled, ConversionFailed, ProblemError
from printjob_core.model import (
    Background,
    ConversionOutput,
    JobOptions,
    OutputFormat,
    Phase,
    Size,
)
from printjob_core.ports import CancelCheck, ProgressCallback

if TYPE_CHECKING:
    from printjob_adapters.engine.vector import VectorArt

#: Output formats by file name suffix, for `trace_file` without a `format`.
FORMATS_BY_SUFFIX = {f".{fmt.value}": fmt for fmt in OutputFormat}


def convert(
    data: bytes,
    options: JobOptions,
    progress: ProgressCallback | None = None,
    cancelled: CancelCheck | None = None,
) -> ConversionOutput:
    """Turn one uploaded image into one print file.

    Raises `ConversionFailed` (with a detail fit for the client) when no file can be made,
    including for an image that cannot be decoded, and `ConversionCancelled` as soon as
    `cancelled()` turns true between two units of work.
    """
    checkpoint = Checkpoint(Phase.ANALYSING, 0, 10, progress, cancelled)
    checkpoint(0.0)
    try:
        rgba = decode(data)
    except ProblemError as exc:
        raise ConversionFailed(exc.detail) from exc
    except Exception as exc:
        raise ConversionFailed("The image could not be decoded.") from exc
    checkpoint(1.0)

    segmentation = _stage(
        "Analysing the colours",
        _segment,
        rgba,
        options.colors,
        options.background,
        checkpoint.child(Phase.ANALYSING, 10, 40),
    )
    art: VectorArt = _stage(
        "Tracing the outlines",
        _vectorise,
        rgba,
        segmentation,
        checkpoint.child(Phase.BUILDING, 40, 85),
    )

    finishing = checkpoint.child(Phase.FINISHING, 85, 100)
    finishing(0.0)
    placement = _stage("Placing the design", place, art.width, art.height, options)
    file = _stage(f"Writing the {options.format.value} file", write, art, placement, options.format)
    finishing(1.0)
    return ConversionOutput(
        data=file,
        width=placement.canvas_width,
        height=placement.canvas_height,
        colors=art.colors,
        background_removed=art.background_removed,
    )


@attrs.frozen
class TracingEngine:
    """The core's `Engine` port: the quantise-and-trace pipeline of this module."""

    def convert(
        self,
        image: bytes,
        options: JobOptions,
        progress: ProgressCallback,
        cancelled: CancelCheck,
    ) -> ConversionOutput:
        return convert(image, options, progress, cancelled)


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
    """Convert the image file `src` into the print file `dst`; the library entry point.

    Options follow the API's rules exactly (`format` is guessed from `dst`'s suffix when
    not given; `size` is `"WxH"`, `(W, H)` or `None` for original). Raises
    `InvalidParameter` for a bad option, `ConversionFailed` when the image cannot be
    converted, and `OSError` when a file cannot be read or written. `dst` is replaced
    atomically: it is never left half-written.
    """
    from printjob_adapters.engine.trace_command import options_from_fields

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
    from printjob_core.errors import InvalidParameter

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


def _segment(
    rgba: np.ndarray, colors: int | None, background: Background, checkpoint: Checkpoint
) -> Any:
    from printjob_adapters.engine.segmentation import segment

    return segment(rgba, colors, background, checkpoint)


def _vectorise(rgba: np.ndarray, segmentation: Any, checkpoint: Checkpoint) -> VectorArt:
    from printjob_adapters.engine.vectorise import vectorise

    return vectorise(rgba, segmentation, checkpoint)


def _stage(what: str, function: Any, *args: Any) -> Any:
    """Run one stage; anything but a cancel or an explained failure becomes a failure.

    The detail names the stage and the kind of error, not its message (which may hold
    internals); the original exception stays attached as `__cause__` for the logs.
    """
    try:
        return function(*args)
    except (ConversionCancelled, ConversionFailed):
        raise
    except MemoryError as exc:
        raise ConversionFailed(f"{what} ran out of memory; try a smaller size.") from exc
    except Exception as exc:
        raise ConversionFailed(f"{what} failed unexpectedly ({type(exc).__name__}).") from exc
