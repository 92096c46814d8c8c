"""Every answer the shell writes itself: one writer for JSON, one for Problems.

An `Answer` is sent straight to ASGI with its headers as they are: Litestar's `Response`
builds header and cookie structures for every answer, a fifth of a poll's time. The
same object serves the gate, the route handlers and Litestar's exception handlers (it
offers the `to_asgi_response` they call), so a Problem looks the same whoever refused.
"""

from __future__ import annotations

from typing import Any

import msgspec

from printjob_adapters.metrics import recorder
from printjob_core.errors import ProblemError, Unauthenticated
from printjob_core.shapes import problem_for, to_json

JSON = "application/json"
PROBLEM_JSON = "application/problem+json"
#: Retry-After for a 429 or 503 whose error did not say (every one carries it, contract 4).
DEFAULT_RETRY_AFTER = 5

Headers = list[tuple[bytes, bytes]]


class Answer:
    """A complete answer: status, headers and body, written to ASGI in two messages."""

    __slots__ = ("body", "headers", "status")

    def __init__(
        self,
        body: bytes,
        status: int,
        media_type: str,
        headers: dict[str, str] | None = None,
        *,
        head: bool = False,
    ) -> None:
        self.status = status
        self.body = b"" if head else body
        self.headers = encode_headers(body, media_type, headers)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        start: Any = {"type": "http.response.start", "status": self.status, "headers": self.headers}
        await send(start)
        await send({"type": "http.response.body", "body": self.body, "more_body": False})

    def to_asgi_response(self, *args: Any, **kwargs: Any) -> Answer:
        """What Litestar's exception middleware asks a handler's answer for."""
        return self


def encode_headers(body: bytes, media_type: str, headers: dict[str, str] | None = None) -> Headers:
    """Content type and length of `body`, then `headers`, as raw lower-case header pairs."""
    raw = [(b"content-type", media_type.encode()), (b"content-length", str(len(body)).encode())]
    if headers:
        raw += [(k.lower().encode(), v.encode("latin-1")) for k, v in headers.items()]
    return raw


def json_answer(value: object, status: int = 200, headers: dict[str, str] | None = None) -> Answer:
    """`value` (already plain JSON data, see `printjob_core.shapes.to_json`) as JSON."""
    return Answer(msgspec.json.encode(value), status, JSON, headers)


def problem_body(error: ProblemError, docs_url: str) -> bytes:
    """The Problem document of contract 2.6 for `error`."""
    return msgspec.json.encode(to_json(problem_for(error, docs_url)))


def problem_headers(
    error: ProblemError, headers: dict[str, str] | None = None, realm: str = ""
) -> dict[str, str]:
    """The headers a Problem's status calls for: `WWW-Authenticate` on 401, `Retry-After`
    on every 429 and 503 (contract 4)."""
    out = dict(headers or {})
    if isinstance(error, Unauthenticated):
        challenge = f'Bearer realm="{realm}"'
        if error.key_sent:
            challenge += ', error="invalid_token"'
        out["WWW-Authenticate"] = challenge
    if error.status in (429, 503):
        out["Retry-After"] = str(max(1, error.retry_after or DEFAULT_RETRY_AFTER))
    return out


def problem_answer(
    error: ProblemError,
    docs_url: str,
    realm: str = "",
    headers: dict[str, str] | None = None,
    *,
    head: bool = False,
) -> Answer:
    """An `application/problem+json` answer with the headers its status calls for."""
    counting = recorder()
    if counting is not None:
        counting.refusals.labels(error.code).inc()
    return Answer(
        problem_body(error, docs_url),
        error.status,
        PROBLEM_JSON,
        problem_headers(error, headers, realm),
        head=head,
    )


__all__ = [
    "DEFAULT_RETRY_AFTER",
    "JSON",
    "PROBLEM_JSON",
    "Answer",
    "encode_headers",
    "json_answer",
    "problem_answer",
    "problem_body",
    "problem_headers",
]
