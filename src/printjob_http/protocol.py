"""uvicorn's httptools protocol with a bound on the request head (request line + headers).

httptools has no limit of its own: a client could send megabytes of headers (or a header
that never ends) and the server would buffer all of it. Here the bytes a connection sends
before its request's headers are complete are counted, and once they pass `MAX_HEAD_BYTES`
the server answers 400 `invalid_parameter` (a Problem) and closes the connection without
reading further. The bound (32 KiB) is well above any real request of this API: the
longest legitimate header is a 43-character key.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from printjob_adapters.settings import DOCS_ERRORS_PATH
from printjob_core.errors import InvalidParameter
from printjob_http.answers import PROBLEM_JSON, encode_headers, problem_body, problem_headers
from printjob_http.request_ids import new_request_id
from printjob_http.shell import request_base

#: Request line plus headers, in bytes, above which a request is refused unread.
MAX_HEAD_BYTES = 32 * 1024


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


def bounded_protocol(docs_url: str | None) -> type[HttpToolsProtocol]:
    """An `HttpToolsProtocol` class that refuses request heads over `MAX_HEAD_BYTES`.

    `docs_url` None: the Problem's `type` leads to `/docs/errors` at the address the
    request came to (its `Host` if that arrived before the refusal, else the socket), as
    the shell's answers do.
    """
    configured = None if docs_url is None else head_too_large_answer(docs_url)

    class BoundedHttpToolsProtocol(HttpToolsProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._in_head = True
            self._head_bytes = 0
            #: Raw bytes received while the current head is unfinished (an upper bound).
            self._pending = 0
            self._too_large = False

        def _count(self, size: int) -> None:
            self._head_bytes += size
            if self._head_bytes > MAX_HEAD_BYTES:
                self._too_large = True
                raise _HeadTooLarge  # httptools stops parsing; uvicorn calls send_400_response

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_head = True
            self._head_bytes = 0
            self._pending = 0

        def on_url(self, url: bytes) -> None:
            self._count(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count(len(name) + len(value) + 4)
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._pending = 0
            super().on_headers_complete()

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
            super().data_received(data)
            if not self._in_head or self.parser is None or self.transport.is_closing():
                return
            # httptools buffers a header that has not ended yet: count the raw bytes too.
            self._pending += len(data)
            if self._pending > MAX_HEAD_BYTES:
                self._too_large = True
                self.send_400_response("")

    return BoundedHttpToolsProtocol


__all__ = ["MAX_HEAD_BYTES", "bounded_protocol", "head_too_large_answer"]
