"""Spooled uploads: the image a view of the spool file's map, and the process's budget
for receiving large bodies (turns, and a rate over all of them)."""

from __future__ import annotations

import asyncio
import time
from typing import BinaryIO

import pytest

from printjob_core.errors import ServerBusy
from printjob_http.multipart import DelimiterScan
from printjob_http.spooling import ReceiveBudget, spool_file, spooled_form


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


def spooled(body: bytes, boundary: bytes) -> tuple[BinaryIO, DelimiterScan]:
    spool = spool_file(None)
    scan = DelimiterScan(boundary)
    for start in range(0, len(body), 1000):
        spool.write(body[start : start + 1000])
        scan.feed(body[start : start + 1000])
    scan.finish()
    return spool, scan


IMAGE = bytes(range(256)) * 100
BODY = (
    b'--b\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\n'
    + IMAGE
    + b'\r\n--b\r\nContent-Disposition: form-data; name="format"\r\n\r\nsvg\r\n--b--\r\n'
)


def test_the_spooled_image_is_a_view_of_the_spool_file_inside_the_with_only() -> None:
    spool, scan = spooled(BODY, b"b")
    with spool, spooled_form(spool, scan) as form:
        assert isinstance(form.image, memoryview) and form.image == IMAGE
        assert form.fields == [("format", "svg")]
        image = form.image
    with pytest.raises(ValueError):
        bytes(image)  # released with the map


def test_a_view_still_held_does_not_turn_a_refusal_into_a_buffer_error() -> None:
    spool, scan = spooled(BODY, b"b")
    kept: list[memoryview] = []
    # What the body raised comes out, not a BufferError.
    with spool, pytest.raises(LookupError), spooled_form(spool, scan) as form:
        assert form.image is not None
        kept.append(memoryview(form.image)[:10])  # as a traceback's frame might
        raise LookupError
    assert bytes(kept[0]) == IMAGE[:10]  # the map lives on while it is held
