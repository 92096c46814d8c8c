"""Progress reporting and cooperative cancellation for the engine's stages.

A caller may pass `progress(stage, percent)`, told the overall percent (rising, 0..100)
and the stage that reached it, and `cancelled()`, asked between units of work. Each stage
receives a `Checkpoint` and calls it with its own fraction done (0..1); the checkpoint
maps that onto the stage's share of the percent and raises `Cancelled` as soon as the
caller asks to stop, so a cancel takes effect within one unit of work.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from printjob_adapters.engine.errors import Cancelled


class Stage(enum.StrEnum):
    """The engine's stages, in the order a conversion passes them."""

    DECODE = "decode"
    SEGMENT = "segment"
    VECTORISE = "vectorise"
    WRITE = "write"


#: Told the stage and the overall percent done as work advances.
ProgressCallback = Callable[[Stage, int], None]
#: Asked between units of work: true stops the conversion with `Cancelled`.
CancelCheck = Callable[[], bool]


def _no_progress(stage: Stage, percent: int) -> None:
    return None


def _never_cancelled() -> bool:
    return False


class Checkpoint:
    """Reports `stage` progress between `start` and `end` percent and checks for cancel."""

    def __init__(
        self,
        stage: Stage = Stage.SEGMENT,
        start: int = 0,
        end: int = 100,
        progress: ProgressCallback | None = None,
        cancelled: CancelCheck | None = None,
    ) -> None:
        self.stage = stage
        self.start = start
        self.end = end
        self._progress = progress or _no_progress
        self._cancelled = cancelled or _never_cancelled
        self._last = -1

    def __call__(self, fraction: float = 0.0) -> None:
        if self._cancelled():
            raise Cancelled("the caller cancelled the conversion")
        fraction = min(max(fraction, 0.0), 1.0)
        percent = self.start + int((self.end - self.start) * fraction)
        if percent > self._last:
            self._last = percent
            self._progress(self.stage, percent)

    def child(self, stage: Stage, start: int, end: int) -> Checkpoint:
        """A checkpoint for a later stage, sharing the same callbacks."""
        return Checkpoint(stage, start, end, self._progress, self._cancelled)


def silent() -> Checkpoint:
    """A checkpoint that reports nothing and is never cancelled, for library use and tests."""
    return Checkpoint()
