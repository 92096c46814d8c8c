"""`X-Request-Id`: one id per request, echoed on every answer and kept in the logs.

A client's (or a proxy's) id is taken when it is well-formed, a bounded token, so it
cannot forge a log line or grow the log; anything else is replaced by a new id. The id
goes into the ASGI scope (`REQUEST_ID`) for the access log and for the job a submission
makes, so a worker's lines about that job carry it too.
"""

from __future__ import annotations

import os
import re
from typing import Any

#: Where the request's id is kept in the ASGI scope.
REQUEST_ID = "printjob.request_id"
HEADER = b"x-request-id"
#: A well-formed id: a bounded token (the OpenAPI description states it too).
WELL_FORMED = "[A-Za-z0-9._:-]{1,128}"
_WELL_FORMED = re.compile(WELL_FORMED.encode("ascii"))


def new_request_id() -> str:
    """`req_` and 24 hex digits (96 random bits)."""
    return "req_" + os.urandom(12).hex()


def request_id_of(scope: Any) -> str:
    """The request's `X-Request-Id` when well-formed, else a new one."""
    for name, value in scope["headers"]:
        if name == HEADER:
            if _WELL_FORMED.fullmatch(value):
                return str(value.decode("ascii"))
            break
    return new_request_id()


def echoing(send: Any, request_id: str) -> Any:
    """`send` that adds `X-Request-Id` to the answer's headers."""
    header = (HEADER, request_id.encode("ascii"))

    async def send_echoing(message: Any) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", ()), header]
        await send(message)

    return send_echoing


__all__ = ["HEADER", "REQUEST_ID", "WELL_FORMED", "echoing", "new_request_id", "request_id_of"]
