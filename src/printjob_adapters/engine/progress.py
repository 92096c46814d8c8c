"""Progress reporting and cooperative cancellation for the engine's stages.

Each stage receives a `Checkpoint` and calls it with its own fraction done (0..1) between
units of work. The checkpoint maps that onto the job's phase and percentage, and raises
`ConversionCancelled` as soon as the job was canceled, so a canceled job stops within one
unit of work instead of running to the end.
"""

from __future__ import annotations

from printjob_core.errors import ConversionCancelled
from printjob_core.model import Phase
from printjob_core.ports import CancelCheck, ProgressCallback


def _no_progress(phase: Phase, percent: int) -> None:
    return None


def _never_cancelled() -> bool:
    return False


class Checkpoint:
    """Reports `phase` progress between `start` and `end` percent and checks for cancel."""

    def __init__(
        self,
        phase: Phase = Phase.ANALYSING,
        start: int = 0,
        end: int = 100,
        progress: ProgressCallback | None = None,
        cancelled: CancelCheck | None = None,
    ) -> None:
        self.phase = phase
        self.start = start
        self.end = end
        self._progress = progress or _no_progress
        self._cancelled = cancelled or _never_cancelled
        self._last = -1

    def __call__(self, fraction: float = 0.0) -> None:
        if self._cancelled():
            raise ConversionCancelled("the job was canceled")
        fraction = min(max(fraction, 0.0), 1.0)
        percent = self.start + int((self.end - self.start) * fraction)
        if percent > self._last:
            self._last = percent
            self._progress(self.phase, percent)

    def child(self, phase: Phase, start: int, end: int) -> Checkpoint:
        """A checkpoint for a later stage, sharing the same callbacks."""
        return Checkpoint(phase, start, end, self._progress, self._cancelled)


#: A checkpoint that reports nothing and is never canceled, for library use and tests.
def silent() -> Checkpoint:
    return Checkpoint()
