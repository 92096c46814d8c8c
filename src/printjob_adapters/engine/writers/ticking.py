"""How often the writers report progress and look for a cancel: a writer that draws
segment by segment calls its `tick` every `TICK_SEGMENTS` segments (about 0.1 s of the
slowest writer's work), so a design near the segment cap never writes for seconds
without a check."""

from __future__ import annotations

#: Segments a writer draws between two ticks.
TICK_SEGMENTS = 16_384


def no_tick() -> None:
    """The tick of a writer nobody watches."""
