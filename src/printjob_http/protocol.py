"""uvicorn's httptools protocol with bounds on what one connection may hold.

httptools has no limit of its own: a client could send megabytes of headers (or a header
that never ends) and the server would buffer all of it. Here the bytes a connection sends
before its request's headers are complete are counted, and once they pass `MAX_HEAD_BYTES`
the server answers 400 `invalid_parameter` (a Problem) and closes the connection without
reading further. The bound (32 KiB) is well above any real request of this API: the
longest legitimate header is a 43-character key.

uvicorn has no timeouts but the keep-alive one, which a single byte switches off. So a
connection is also closed (`ConnectionLimits`, set by the operator) when

* its request line and headers have not all arrived `head_seconds` after it opened, or
  after the first byte of a next request on a kept-alive connection (header trickling);
* its body brings fewer than `body_min_bytes` in a window of `body_window_seconds` (the
  first window counts too; a window in which the server itself paused reading does not);
  the upload handler then sees a disconnect and counts the submission all the same;
* the client has read nothing of an answer for `write_seconds` while the server waits to
  write more (an unread download);
* it is idle between requests for `keepalive_seconds`, or is the oldest idle one when
  more than `keepalive_max` are idle in this process.

Each is one timer per connection (`loop.call_later`), re-armed as the connection moves on:
no task, no polling, and nothing at all for a connection that is being served.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any

import attrs
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from printjob_adapters.settings import DOCS_ERRORS_PATH
from printjob_core.errors import InvalidParameter
from printjob_http.answers import PROBLEM_JSON, encode_headers, problem_body, problem_headers
from printjob_http.request_ids import new_request_id
from printjob_http.shell import request_base

#: Request line plus headers, in bytes, above which a request is refused unread.
MAX_HEAD_BYTES = 32 * 1024

log = logging.getLogger("printjob.http")


@attrs.frozen
class ConnectionLimits:
    """How long a connection may take over each part of a request (the operator's settings,
    `printjob_adapters.settings`; these defaults are theirs)."""

    #: Seconds for the request line and headers.
    head_seconds: float = 10.0
    #: A request body must bring at least `body_min_bytes` every `body_window_seconds`.
    body_window_seconds: float = 10.0
    body_min_bytes: int = 64 * 1024
    #: Seconds a kept-alive connection may stay idle between requests.
    keepalive_seconds: float = 5.0
    #: Idle kept-alive connections per process; beyond it the longest idle is closed.
    keepalive_max: int = 1000
    #: Seconds an answer may wait for a client that reads none of it.
    write_seconds: float = 30.0


class _HeadTooLarge(Exception):
    """Raised in a parser callback to stop reading a request head that is too large."""


def head_too_large_answer(docs_url: str) -> bytes:
    """The whole HTTP answer, as bytes: it is written before any ASGI app sees the request,
    with the same body and headers the shell's `problem_answer` gives."""
    error = InvalidParameter(
        f"The request line and headers are over {MAX_HEAD_BYTES // 1024} KiB, the most this "
        "server reads; send shorter headers."
    )
    body = problem_body(error, docs_url)
    headers = encode_headers(body, PROBLEM_JSON, problem_headers(error, {"Connection": "close"}))
    head = b"".join(name + b": " + value + b"\r\n" for name, value in headers)
    return STATUS_LINE[error.status] + head + b"\r\n" + body


def bounded_protocol(
    docs_url: str | None, limits: ConnectionLimits | None = None
) -> type[HttpToolsProtocol]:
    """An `HttpToolsProtocol` class that refuses request heads over `MAX_HEAD_BYTES` and
    closes connections past `limits` (see the module's docstring).

    `docs_url` None: the Problem's `type` leads to `/docs/errors` at the address the
    request came to (its `Host` if that arrived before the refusal, else the socket), as
    the shell's answers do.
    """
    configured = None if docs_url is None else head_too_large_answer(docs_url)
    bounds = limits or ConnectionLimits()
    #: This process's idle kept-alive connections, the longest idle first.
    idle: OrderedDict[BoundedHttpToolsProtocol, None] = OrderedDict()

    class BoundedHttpToolsProtocol(HttpToolsProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._in_head = True
            self._head_bytes = 0
            #: Raw bytes received while the current head is unfinished (an upper bound).
            self._pending = 0
            self._too_large = False
            #: The one timer of the part of the request now under way (head or body).
            self._deadline: asyncio.TimerHandle | None = None
            self._write_deadline: asyncio.TimerHandle | None = None
            self._body_bytes = 0
            self._body_bytes_checked = 0

        # -- the timers --

        def _arm(self, seconds: float, expired: Any) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _cut(self, why: str) -> None:
            self._disarm()
            if not self.transport.is_closing():
                client = f"{self.client[0]}:{self.client[1]}" if self.client else "-"
                log.info("connection from %s closed: %s", client, why)
                self.transport.abort()

        def _head_expired(self) -> None:
            self._deadline = None
            self._cut(f"request headers not complete in {bounds.head_seconds:g} s")

        def _body_window_ended(self) -> None:
            self._deadline = None
            arrived = self._body_bytes - self._body_bytes_checked
            self._body_bytes_checked = self._body_bytes
            if arrived < bounds.body_min_bytes and not self.flow.read_paused:
                self._cut(
                    f"request body too slow ({arrived} bytes in {bounds.body_window_seconds:g}"
                    f" s, at least {bounds.body_min_bytes} needed)"
                )
                return
            self._arm(bounds.body_window_seconds, self._body_window_ended)

        def _write_expired(self) -> None:
            self._write_deadline = None
            self._cut(f"the client read nothing of the answer for {bounds.write_seconds:g} s")

        def _forget_idle(self) -> None:
            idle.pop(self, None)

        # -- uvicorn's events --

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm(bounds.head_seconds, self._head_expired)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._forget_idle()
            if self._write_deadline is not None:
                self._write_deadline.cancel()
                self._write_deadline = None
            super().connection_lost(exc)

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._pending = 0
            self._body_bytes = self._body_bytes_checked = 0
            self._arm(bounds.body_window_seconds, self._body_window_ended)
            super().on_headers_complete()

        def on_body(self, body: bytes) -> None:
            self._body_bytes += len(body)
            super().on_body(body)

        def on_message_complete(self) -> None:
            self._disarm()
            super().on_message_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.timeout_keep_alive_task is None or self.transport.is_closing():
                return
            idle[self] = None
            while len(idle) > bounds.keepalive_max:
                oldest, _ = idle.popitem(last=False)
                oldest._cut(f"over {bounds.keepalive_max} idle kept-alive connections")

        def pause_writing(self) -> None:
            super().pause_writing()
            if self._write_deadline is None:
                self._write_deadline = self.loop.call_later(
                    bounds.write_seconds, self._write_expired
                )

        def resume_writing(self) -> None:
            if self._write_deadline is not None:
                self._write_deadline.cancel()
                self._write_deadline = None
            super().resume_writing()

        def _count(self, size: int) -> None:
            self._head_bytes += size
            if self._head_bytes > MAX_HEAD_BYTES:
                self._too_large = True
                raise _HeadTooLarge  # httptools stops parsing; uvicorn calls send_400_response

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._deadline is None:  # a kept-alive connection's next request: from now
                self._arm(bounds.head_seconds, self._head_expired)
            self._in_head = True
            self._head_bytes = 0
            self._pending = 0

        def on_url(self, url: bytes) -> None:
            self._count(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count(len(name) + len(value) + 4)
            super().on_header(name, value)

        def send_400_response(self, msg: str) -> None:
            if not self._too_large:
                super().send_400_response(msg)
                return
            # A head that was never read has no id of its own: a new one, like the gate's.
            request_id = new_request_id()
            self.logger.warning(
                "request head over %d bytes refused request_id=%s", MAX_HEAD_BYTES, request_id
            )
            answer = configured or head_too_large_answer(self._docs_url())
            echoed = b"\r\nx-request-id: " + request_id.encode() + b"\r\n\r\n"
            self.transport.write(answer.replace(b"\r\n\r\n", echoed, 1))
            self.transport.close()

        def _docs_url(self) -> str:
            scope = getattr(self, "scope", None) or {
                "headers": [],
                "server": self.server,
                "scheme": self.scheme,
            }
            return request_base(scope) + DOCS_ERRORS_PATH

        def data_received(self, data: bytes) -> None:
            self._forget_idle()
            super().data_received(data)
            if not self._in_head or self.parser is None or self.transport.is_closing():
                return
            # httptools buffers a header that has not ended yet: count the raw bytes too.
            self._pending += len(data)
            if self._pending > MAX_HEAD_BYTES:
                self._too_large = True
                self.send_400_response("")

    return BoundedHttpToolsProtocol


__all__ = ["MAX_HEAD_BYTES", "ConnectionLimits", "bounded_protocol", "head_too_large_answer"]
