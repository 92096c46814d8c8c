"""One log format for every process: the server, its workers, `printjob worker`.

Every line starts with its time in RFC 3339, UTC, with milliseconds
(`2026-11-24T05:10:00.123Z`), like the access log's. `PRINTJOB_LOG_FORMAT=json` writes
one JSON object per line instead (`time`, `level`, `logger`, `pid`, `message`, the
context fields, `exc_info`), for log shippers that should not parse text.

The context: while a worker runs a job, `log_context(job_id=..., account_id=...,
request_id=...)` adds those fields to every line it writes (text: `key=value` after the
message), so an operator can follow one request from the access log to the worker. Only
ids go into the context: never a key, password or token.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import sys
import time
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import IO

#: The fields of the job (or request) the current code works for.
_CONTEXT: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar(
    "printjob_log_context", default=MappingProxyType({})
)


def rfc3339(moment: float) -> str:
    """`moment` (seconds since the epoch) as `2026-11-24T05:10:00.123Z`."""
    second = int(moment)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
    return f"{stamp}.{int((moment - second) * 1000):03d}Z"


@contextlib.contextmanager
def log_context(**fields: str | None) -> Iterator[None]:
    """Add `fields` (those not None) to every line logged inside the block."""
    added = {name: value for name, value in fields.items() if value is not None}
    token = _CONTEXT.set({**_CONTEXT.get(), **added})
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def bind_request(request_id: str) -> contextvars.Token[Mapping[str, str]]:
    """Name `request_id` on every line logged while this request is served (the API's
    errors); `unbind` with the token when it is answered. Cheaper than `log_context`."""
    return _CONTEXT.set({"request_id": request_id})


def unbind(token: contextvars.Token[Mapping[str, str]]) -> None:
    _CONTEXT.reset(token)


def current_context() -> Mapping[str, str]:
    return _CONTEXT.get()


def _escaped(text: str) -> str:
    """A message on one line: a forged line break must not forge a log line."""
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


class TextFormatter(logging.Formatter):
    """`TIME LEVEL LOGGER[PID] MESSAGE key=value...`, then the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        line = (
            f"{rfc3339(record.created)} {record.levelname} {record.name}[{record.process}] "
            f"{_escaped(record.getMessage())}"
        )
        context = _CONTEXT.get()
        if context:
            line += "".join(f" {name}={_escaped(value)}" for name, value in context.items())
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line; the traceback goes into `exc_info` as text."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": rfc3339(record.created),
            "level": record.levelname,
            "logger": record.name,
            "pid": record.process,
            "message": record.getMessage(),
            **_CONTEXT.get(),
        }
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def formatter(log_format: str) -> logging.Formatter:
    """The formatter for `PRINTJOB_LOG_FORMAT` (`text` or `json`)."""
    return JsonFormatter() if log_format == "json" else TextFormatter()


def configure_logging(log_format: str = "text", stream: IO[str] | None = None) -> None:
    """Send INFO and above to stderr in `log_format`; the process's one handler.

    Called by every process's entry point (worker processes are spawned, so each
    configures its own). A handler someone else installed first (a test) is kept.
    """
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter(log_format))
    root.addHandler(handler)
    root.setLevel(logging.INFO)


__all__ = [
    "JsonFormatter",
    "TextFormatter",
    "bind_request",
    "configure_logging",
    "current_context",
    "formatter",
    "log_context",
    "rfc3339",
    "unbind",
]
