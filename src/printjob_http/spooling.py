"""Receiving an upload without holding it: the body is written to a nameless file beside
the blobs as it arrives, its multipart delimiters found on the way
(`multipart.DelimiterScan`), then split where they are from a memory map of that file.

Shared by the API's submit (`printjob_http.routes`) and the website's converter
(`printjob_http.website.forms`), so both bound an upload's memory the same way: one
buffer while it arrives; the image part then a view of the map, never a copy. When the
last byte has come nothing is left to search, so a refusal costs the image check alone.

Receiving a large body is the most a request makes a process do, byte for byte. So past
`LARGE_BODY_BYTES`, each piece of a body waits for one of the process's
`LARGE_BODIES_AT_ONCE` turns, and in it while all large bodies together are over
`LARGE_BODY_BYTES_PER_SECOND`: a body that is not taken waits with its bytes in the
kernel (uvicorn stops reading a connection once a little of its body is buffered), so
small requests keep their latency. A turn is held for one piece, not for the body: a
client that sends slowly holds none while the server waits for its bytes. A piece that
waits `LARGE_BODY_WAIT_SECONDS` for a turn is answered 503 `server_busy` with
`Retry-After` (the submission still counts).
"""

from __future__ import annotations

import asyncio
import contextlib
import mmap
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast

from litestar import Request

from printjob_core.errors import ServerBusy
from printjob_core.limits import Policy
from printjob_core.services import body_too_large, declared_length_refusal
from printjob_http import multipart
from printjob_http.shell import in_thread

#: Bytes of an upload kept in memory before they are written to its spool file.
SPOOL_BUFFER_BYTES = 1024 * 1024
#: A body past this size is a large one: it takes a turn (below) for the rest of it.
LARGE_BODY_BYTES = 1024 * 1024
#: Pieces of large bodies one process takes at once; the others wait in the kernel.
LARGE_BODIES_AT_ONCE = 2
#: Bytes per second of large bodies one process takes in, all of them together.
LARGE_BODY_BYTES_PER_SECOND = 32 * 1024 * 1024
#: Seconds a piece of a large body waits for a turn before the request is answered 503.
LARGE_BODY_WAIT_SECONDS = 30.0
#: What that 503 tells the client to wait before sending it again.
LARGE_BODY_RETRY_AFTER = 5


class ClientDisconnected(Exception):
    """The client went away in the middle of its upload: nothing to answer, nothing stored."""


class ReceiveBudget:
    """This process's turns and rate for taking in large bodies (see the module)."""

    def __init__(
        self,
        at_once: int = LARGE_BODIES_AT_ONCE,
        bytes_per_second: float = LARGE_BODY_BYTES_PER_SECOND,
        wait_seconds: float = LARGE_BODY_WAIT_SECONDS,
    ) -> None:
        self.at_once = at_once
        self.bytes_per_second = bytes_per_second
        self.wait_seconds = wait_seconds
        self._turns: asyncio.Semaphore | None = None
        #: When the bytes taken so far are paid for (monotonic seconds): a token bucket
        #: kept as one instant, with a burst of a tenth of a second.
        self._paid_until = 0.0

    async def taken(self, size: int) -> None:
        """`size` more bytes of a large body were taken: wait for a turn (`ServerBusy`
        after `wait_seconds`), and in it while this process is over the rate."""
        if self._turns is None:  # made on the loop that uses it
            self._turns = asyncio.Semaphore(self.at_once)
        try:
            await asyncio.wait_for(self._turns.acquire(), self.wait_seconds)
        except TimeoutError:
            raise ServerBusy(
                "The server is receiving as many large uploads as it takes at once; send "
                "it again in a few seconds (with the same Idempotency-Key).",
                retry_after=LARGE_BODY_RETRY_AFTER,
            ) from None
        try:
            now = time.monotonic()
            self._paid_until = max(self._paid_until, now - 0.1) + size / self.bytes_per_second
            if self._paid_until > now:
                await asyncio.sleep(self._paid_until - now)
        finally:
            self._turns.release()


#: The budget of this process (one event loop serves it).
RECEIVING = ReceiveBudget()


def spool_file(spool_dir: Path | None) -> BinaryIO:
    """A nameless 0600 file in `spool_dir` (Linux `O_TMPFILE`; None: the system's temporary
    directory): it holds an upload while it arrives, and nothing is left behind whatever
    happens to the process."""
    return tempfile.TemporaryFile(dir=spool_dir)


def _take(spool: BinaryIO, scan: multipart.DelimiterScan, pieces: list[bytes]) -> None:
    """Spool `pieces` and look for delimiters in them (in a thread: a disk that stalls
    must not stall other clients, and the search is the body's one pass)."""
    spool.writelines(pieces)
    for piece in pieces:
        scan.feed(piece)


async def read_body(
    request: Request[Any, Any, Any],
    policy: Policy,
    spool: BinaryIO,
    boundary: bytes,
    budget: ReceiveBudget = RECEIVING,
) -> multipart.DelimiterScan:
    """The request body written to `spool` as it arrives (memory: one buffer, never the
    body), with its delimiters found; the scan knows its size. Refused unread (the
    `ProblemError` raised) when its declared or actual size is over the limit, or when a
    large body waits too long for its turn; `ClientDisconnected` when the client leaves
    part way."""
    refusal = declared_length_refusal(request.headers.get("content-length"), policy)
    if refusal is not None:
        raise refusal
    scan = multipart.DelimiterScan(boundary)
    limit = policy.max_upload_bytes
    pending: list[bytes] = []
    pending_size = size = 0
    # The ASGI messages themselves: Litestar's stream() reports a disconnect as a 500.
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnected
        chunk = cast(bytes, message.get("body", b""))
        size += len(chunk)
        if size > limit:
            raise body_too_large(policy)
        pending.append(chunk)
        pending_size += len(chunk)
        more = message.get("more_body", False)
        if pending_size >= SPOOL_BUFFER_BYTES or not more:
            await in_thread(_take, spool, scan, pending)
            pending, pending_size = [], 0
        if not more:
            await in_thread(scan.finish)
            return scan
        if size > LARGE_BODY_BYTES:
            # Not asking for the next piece is what makes the client wait: uvicorn stops
            # reading its connection once a little is buffered.
            await budget.taken(len(chunk))


@contextlib.contextmanager
def spooled_form(spool: BinaryIO, scan: multipart.DelimiterScan) -> Iterator[multipart.Form]:
    """The multipart form of a spooled body, split where `scan` found its delimiters; the
    image part is a view of the spool file's map, valid inside the `with` only. Blocking:
    use it in a thread."""
    spool.flush()
    if scan.size == 0:
        yield multipart.split(b"", scan)
        return
    mapped = mmap.mmap(spool.fileno(), scan.size, access=mmap.ACCESS_READ)
    try:
        form = multipart.split(mapped, scan)
        try:
            yield form
        finally:
            # A view still held elsewhere (by a refusal's traceback, say) keeps the map
            # open until it is freed; the spool file's pages are the kernel's cache either
            # way, and what is being raised must not become a BufferError.
            if isinstance(form.image, memoryview):
                with contextlib.suppress(BufferError):
                    form.image.release()
    finally:
        with contextlib.suppress(BufferError):
            mapped.close()


__all__ = [
    "LARGE_BODIES_AT_ONCE",
    "LARGE_BODY_BYTES",
    "LARGE_BODY_BYTES_PER_SECOND",
    "RECEIVING",
    "SPOOL_BUFFER_BYTES",
    "ClientDisconnected",
    "ReceiveBudget",
    "read_body",
    "spool_file",
    "spooled_form",
]
