"""Receiving an upload without holding it: the body is written to a nameless file beside
the blobs as it arrives, then parsed from a memory map of that file.

Shared by the API's submit (`printjob_http.routes`) and the website's converter
(`printjob_http.website.forms`), so both bound an upload's memory the same way: one
buffer while it arrives, and the image part as the only copy once it is parsed.
"""

from __future__ import annotations

import mmap
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, cast

from litestar import Request

from printjob_core.limits import Policy
from printjob_core.services import body_too_large, declared_length_refusal
from printjob_http import multipart
from printjob_http.shell import in_thread

#: Bytes of an upload kept in memory before they are written to its spool file.
SPOOL_BUFFER_BYTES = 1024 * 1024


class ClientDisconnected(Exception):
    """The client went away in the middle of its upload: nothing to answer, nothing stored."""


def spool_file(spool_dir: Path | None) -> BinaryIO:
    """A nameless 0600 file in `spool_dir` (Linux `O_TMPFILE`; None: the system's temporary
    directory): it holds an upload while it arrives, and nothing is left behind whatever
    happens to the process."""
    return tempfile.TemporaryFile(dir=spool_dir)


async def read_body(request: Request[Any, Any, Any], policy: Policy, spool: BinaryIO) -> int:
    """The request body written to `spool` as it arrives (memory: one buffer, never the
    body); its size. Refused unread (the `ProblemError` raised) when its declared or actual
    size is over the limit; `ClientDisconnected` when the client leaves part way."""
    refusal = declared_length_refusal(request.headers.get("content-length"), policy)
    if refusal is not None:
        raise refusal
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
            # Written off the event loop (a disk that stalls must not stall other clients),
            # piece by piece: nothing is copied on the loop.
            await in_thread(spool.writelines, pending)
            pending, pending_size = [], 0
        if not more:
            return size


def parse_spooled(content_type: str | None, spool: BinaryIO, size: int) -> multipart.Form:
    """The multipart form of a spooled body of `size` bytes, parsed from a memory map (the
    parts are the only copies made). Blocking: call it in a thread."""
    spool.flush()
    boundary = multipart.boundary_of(content_type)
    if size == 0:
        return multipart.parse(b"", boundary)
    with mmap.mmap(spool.fileno(), size, access=mmap.ACCESS_READ) as body:
        return multipart.parse(body, boundary)


__all__ = ["SPOOL_BUFFER_BYTES", "ClientDisconnected", "parse_spooled", "read_body", "spool_file"]
