"""The access log: one line per HTTP request, written in batches.

    2026-11-22T03:20:02.430Z 127.0.0.1:38688 "GET /v1/account HTTP/1.1" 200 312 0.41ms \
        request_id=req_6ee0948cbfcb8100f0580d1c

Time (RFC 3339, UTC, the request's end), client address and port, request line, status,
body bytes sent, the time the app took, and the request's `X-Request-Id` (as echoed; see
`printjob_http.request_ids`). With `PRINTJOB_LOG_FORMAT=json` the same fields as one JSON
object per line. Never a header's value other than the checked request id: no key ever
reaches the log; nor does a website invite's token, which is in its path (`SECRET_PATHS`).

Why not uvicorn's access log: it builds a `logging` record per request and writes it at
once, which cost a third of a poll's CPU time and, blocking on the log file from the
event loop, most of its tail latency. Here a line is one f-string appended to a buffer;
the buffer is written when it holds 64 KiB or half a second after its first line, and at
shutdown. A process killed outright loses at most the last half second of lines.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from typing import Any

from litestar.types import ASGIApp, Receive, Send

from printjob_http.gate import ROUTE_NAME
from printjob_http.request_ids import REQUEST_ID

#: Methods counted by name; any other is counted as "other" (labels stay few).
_METHODS = frozenset({"GET", "POST", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"})
Observe = Callable[[str, str, int, float], None]

#: Paths that carry a secret in their last part (the website's one-time invite links):
#: logged with that part replaced.
SECRET_PATHS = ("/invite/",)
REDACTED = "[redacted]"

#: Seconds a line may wait in the buffer.
FLUSH_SECONDS = 0.5
#: Bytes (roughly: characters) that make the buffer be written at once.
FLUSH_SIZE = 64 * 1024


def _without_secrets(path: str) -> str:
    for prefix in SECRET_PATHS:
        if path.startswith(prefix):
            return prefix + REDACTED
    return path


class AccessLog:
    """An ASGI wrapper that logs every HTTP request of `app` to file descriptor `fd`."""

    def __init__(
        self,
        app: ASGIApp,
        fd: int = 2,
        *,
        json_lines: bool = False,
        observe: Observe | None = None,
    ) -> None:
        self.app = app
        self.fd = fd
        self.json_lines = json_lines
        #: Counts each request (route, method, status, seconds) for the metrics.
        self.observe = observe
        self._lines: list[str] = []
        self._size = 0
        self._timer: asyncio.TimerHandle | None = None
        self._second = -1
        self._stamp = ""

    async def __call__(self, scope: Any, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0
        sent = 0

        async def noting_send(message: Any) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, noting_send)
        finally:
            self._add(scope, status, sent, time.perf_counter() - started)

    def _add(self, scope: Any, status: int, sent: int, seconds: float) -> None:
        client = scope.get("client")
        peer = f"{client[0]}:{client[1]}" if client else "-"
        raw = scope.get("raw_path") or scope["path"].encode()
        target = _without_secrets(raw.decode("latin-1"))
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        if not target.isprintable():
            # A forged line break in a path must not forge a log line.
            target = target.encode("unicode_escape").decode("ascii")
        if self.observe is not None:
            method = scope["method"]
            self.observe(
                scope.get(ROUTE_NAME, "unmatched"),
                method if method in _METHODS else "other",
                status,
                seconds,
            )
        request_id = scope.get(REQUEST_ID, "-")
        if self.json_lines:
            line = self._json_line(scope, peer, target, status, sent, seconds, request_id)
        else:
            line = (
                f'{self._now()} {peer} "{scope["method"]} {target[:2000]} '
                f'HTTP/{scope.get("http_version", "1.1")}" {status or "-"} {sent} '
                f"{seconds * 1000:.2f}ms request_id={request_id}\n"
            )
        self._lines.append(line)
        self._size += len(line)
        if self._size >= FLUSH_SIZE:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(FLUSH_SECONDS, self.flush)

    def _json_line(
        self, scope: Any, peer: str, target: str, status: int, sent: int, seconds: float, rid: str
    ) -> str:
        entry = {
            "time": self._now(),
            "level": "INFO",
            "logger": "printjob.access",
            "pid": os.getpid(),
            "client": peer,
            "method": scope["method"],
            "target": target[:2000],
            "http_version": scope.get("http_version", "1.1"),
            "status": status or None,
            "bytes": sent,
            "ms": round(seconds * 1000, 2),
            "request_id": rid,
        }
        return json.dumps(entry, ensure_ascii=False) + "\n"

    def _now(self) -> str:
        """The time as `2026-11-22T03:20:02.430Z`; the date part is formatted once a second."""
        now = time.time()
        second = int(now)
        if second != self._second:
            self._second = second
            self._stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self._stamp}.{int((now - second) * 1000):03d}Z"

    def flush(self) -> None:
        """Write the buffered lines now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._lines:
            return
        data = "".join(self._lines).encode("utf-8", "replace")
        self._lines.clear()
        self._size = 0
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view) :]
        except OSError:
            pass  # the log went away (a closed pipe): serving goes on without it


__all__ = ["FLUSH_SECONDS", "FLUSH_SIZE", "AccessLog"]
