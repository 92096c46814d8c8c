"""The process's budget for receiving large bodies: turns, and a rate over all of them."""

from __future__ import annotations

import asyncio
import time

import pytest

from printjob_core.errors import ServerBusy
from printjob_http.spooling import ReceiveBudget


def test_pieces_past_the_rate_wait_for_it() -> None:
    budget = ReceiveBudget(at_once=2, bytes_per_second=1_000_000, wait_seconds=5)

    async def take() -> float:
        started = time.monotonic()
        # 0.4 s worth of bytes, in four bodies' pieces at once, after a burst of 0.1 s.
        await asyncio.gather(*(budget.taken(100_000) for _ in range(4)))
        return time.monotonic() - started

    assert asyncio.run(take()) >= 0.3 - 0.01


def test_a_piece_that_gets_no_turn_in_time_is_refused_busy() -> None:
    budget = ReceiveBudget(at_once=1, bytes_per_second=1_000_000, wait_seconds=0.05)

    async def race() -> list[BaseException | None]:
        # The first holds the one turn for 0.5 s (500 kB at 1 MB/s); the second waits.
        results = await asyncio.gather(
            budget.taken(500_000), budget.taken(1), return_exceptions=True
        )
        return [r if isinstance(r, BaseException) else None for r in results]

    first, second = asyncio.run(race())
    assert first is None
    assert isinstance(second, ServerBusy)
    assert second.status == 503 and second.code == "server_busy"
    assert second.retry_after is not None and second.retry_after > 0


def test_small_pieces_within_the_burst_do_not_wait() -> None:
    budget = ReceiveBudget(at_once=1, bytes_per_second=1_000_000, wait_seconds=1)

    async def take() -> float:
        started = time.monotonic()
        await budget.taken(50_000)  # within the tenth of a second of burst
        return time.monotonic() - started

    assert asyncio.run(take()) < 0.05


@pytest.mark.parametrize("at_once", [1, 3])
def test_turns_are_given_back(at_once: int) -> None:
    budget = ReceiveBudget(at_once=at_once, bytes_per_second=1e9, wait_seconds=0.5)

    async def many() -> None:
        for _ in range(20):
            await asyncio.gather(*(budget.taken(10) for _ in range(at_once + 2)))

    asyncio.run(many())
