"""The whole conversion: image bytes and `TraceOptions` in, a print file and its facts out.

Stages and the overall progress each one reports (`progress.Stage`):

    decode      DECODE      0..10
    segment     SEGMENT    10..40
    vectorise   VECTORISE  40..85
    place+write WRITE      85..100

Every failure leaves as one of the engine's errors (`errors`): an image that cannot be
read as `UnsupportedImage` or `ImageTooLarge`, a stage that breaks as `TracingFailed`
naming the stage, a cancel as `Cancelled`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import attrs

from printjob_adapters.engine.bounds import TooManySegments
from printjob_adapters.engine.canvas import place
from printjob_adapters.engine.decode import RGBA, decode
from printjob_adapters.engine.errors import (
    Cancelled,
    ImageTooLarge,
    TracingFailed,
    UnsupportedImage,
)
from printjob_adapters.engine.options import (
    DEFAULT_LIMITS,
    Background,
    ImageLimits,
    TraceOptions,
)
from printjob_adapters.engine.progress import CancelCheck, Checkpoint, ProgressCallback, Stage
from printjob_adapters.engine.vector import VectorArt
from printjob_adapters.engine.writers import write

if TYPE_CHECKING:
    from printjob_adapters.engine.pixel_grid import Grid, RowChanges
    from printjob_adapters.engine.segmentation import Segmentation

_T = TypeVar("_T")


@attrs.frozen
class TraceResult:
    """One conversion's file and its facts: the canvas size in pixels, the number of fill
    colours in the file, and whether a background was left out."""

    data: bytes
    width: int
    height: int
    colors: int
    background_removed: bool


def trace(
    data: bytes,
    options: TraceOptions,
    progress: ProgressCallback | None = None,
    cancelled: CancelCheck | None = None,
    limits: ImageLimits = DEFAULT_LIMITS,
) -> TraceResult:
    """Turn one encoded image into one print file.

    Raises `UnsupportedImage` or `ImageTooLarge` for an image that cannot be read (or is
    outside `limits`), `TracingFailed` when a stage breaks, and `Cancelled` as soon as
    `cancelled()` turns true between two units of work.
    """
    checkpoint = Checkpoint(Stage.DECODE, 0, 10, progress, cancelled)
    checkpoint(0.0)
    try:
        rgba = decode(data, limits)
    except (UnsupportedImage, ImageTooLarge):
        raise
    except Exception as exc:
        raise UnsupportedImage("The image could not be decoded.") from exc
    checkpoint(1.0)

    grid, changes = _stage("Analysing the colours", lambda: _detect_grid(rgba))
    if grid is not None:
        art = _stage(
            "Tracing the pixel grid",
            lambda: _trace_grid(rgba, grid, options, checkpoint.child(Stage.SEGMENT, 10, 85)),
        )
    else:
        segmentation = _stage(
            "Analysing the colours",
            lambda: _segment(
                rgba,
                options.colors,
                options.background,
                checkpoint.child(Stage.SEGMENT, 10, 40),
                changes,
            ),
        )
        try:
            art = _stage(
                "Tracing the outlines",
                lambda: _vectorise(
                    rgba,
                    segmentation,
                    checkpoint.child(Stage.VECTORISE, 40, 85),
                    options.colors is None,
                ),
            )
        except TooManySegments:
            # A photo past the segment cap: traced again in fewer colours, not refused.
            fewer = _fewer_colours(segmentation) if options.colors is None else None
            if fewer is None:
                raise
            retry = checkpoint.child(Stage.VECTORISE, 84, 85)
            coarser = _stage(
                "Analysing the colours",
                lambda: _segment(rgba, fewer, options.background, retry, changes),
            )
            art = _stage(
                "Tracing the outlines", lambda: _vectorise(rgba, coarser, retry, automatic=True)
            )

    finishing = checkpoint.child(Stage.WRITE, 85, 100)
    finishing(0.0)
    placement = _stage("Placing the design", lambda: place(art.width, art.height, options))
    file = _stage(
        f"Writing the {options.format.value} file",
        lambda: write(art, placement, options.format, finishing),
    )
    finishing(1.0)
    return TraceResult(
        data=file,
        width=placement.canvas_width,
        height=placement.canvas_height,
        colors=art.colors,
        background_removed=art.background_removed,
    )


# The two tracing stages load scipy (~1 s and ~45 MB on first import); they are imported
# on first use so that a process that only probes or decodes headers never pays for them.


def _segment(
    rgba: RGBA,
    colors: int | None,
    background: Background,
    checkpoint: Checkpoint,
    changes: RowChanges | None = None,
) -> Segmentation:
    from printjob_adapters.engine.segmentation import segment

    # The grid detection's row changes spare the colour runs a pass over the image.
    row_changes = None if changes is None else changes.after
    return segment(rgba, colors, background, checkpoint, row_changes)


def _vectorise(
    rgba: RGBA, segmentation: Segmentation, checkpoint: Checkpoint, automatic: bool = False
) -> VectorArt:
    from printjob_adapters.engine.small_text import draw_over, overlay
    from printjob_adapters.engine.vectorise import vectorise

    # Letters of small type are traced from their coverage, zoomed, over the rest.
    text = overlay(rgba, segmentation, automatic=automatic)
    if text is None:
        return vectorise(rgba, segmentation, checkpoint)
    middle = (checkpoint.start + checkpoint.end) // 2
    art = vectorise(
        rgba, text.segmentation, checkpoint.child(checkpoint.stage, checkpoint.start, middle)
    )
    return draw_over(art, text, checkpoint.child(checkpoint.stage, middle, checkpoint.end))


def _fewer_colours(segmentation: Segmentation) -> int | None:
    """The colour count to trace a photo again with after it passed the segment cap
    (`palette_choice.fewer_for_segments`), or None to refuse it."""
    from printjob_adapters.engine.palette_choice import fewer_for_segments

    return fewer_for_segments(segmentation.palette)


def _detect_grid(rgba: RGBA) -> tuple[Grid | None, RowChanges | None]:
    from printjob_adapters.engine.pixel_grid import detect_grid_and_changes

    return detect_grid_and_changes(rgba)


def _trace_grid(rgba: RGBA, grid: Grid, options: TraceOptions, checkpoint: Checkpoint) -> VectorArt:
    from printjob_adapters.engine.pixel_grid import trace_grid

    return trace_grid(rgba, grid, options.colors, options.background, checkpoint)


def _stage(what: str, run: Callable[[], _T]) -> _T:
    """Run one stage; anything but a cancel or an explained failure becomes a failure.

    The detail names the stage and the kind of error, not its message (which may hold
    internals); the original exception stays attached as `__cause__` for the logs.
    """
    try:
        return run()
    except (Cancelled, TracingFailed):
        raise
    except MemoryError as exc:
        raise TracingFailed(f"{what} ran out of memory; try a smaller size.") from exc
    except Exception as exc:
        raise TracingFailed(f"{what} failed unexpectedly ({type(exc).__name__}).") from exc
