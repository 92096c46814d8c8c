"""`X-Request-Id` in process: taken when well-formed, made otherwise, echoed by the gate on
every answer, and named on the log lines written while the request is served."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

import pytest

from printjob_adapters.logging_setup import JsonFormatter, TextFormatter, log_context
from printjob_http.gate import Gate
from printjob_http.request_ids import REQUEST_ID, request_id_of

MADE = re.compile(r"req_[0-9a-f]{24}")


def scope(path: str, *headers: tuple[bytes, bytes], method: str = "GET") -> dict[str, Any]:
    return {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": list(headers),
    }


@pytest.mark.parametrize(
    ("sent", "taken"),
    [
        (b"abc", True),
        (b"lb-1:a.b_c", True),
        (b"x" * 128, True),
        (b"x" * 129, False),
        (b"has space", False),
        (b"", False),
        (b"line\nbreak", False),
        ("ünï".encode(), False),
    ],
)
def test_a_well_formed_id_is_taken_any_other_replaced(sent: bytes, taken: bool) -> None:
    rid = request_id_of(scope("/", (b"x-request-id", sent)))
    if taken:
        assert rid == sent.decode()
    else:
        assert MADE.fullmatch(rid)


def test_made_ids_differ() -> None:
    assert len({request_id_of(scope("/")) for _ in range(50)}) == 50


def run_gate(request: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """One request through a gate whose app logs a line; the messages sent and the lines."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(TextFormatter().format(record))

    async def app(scope: Any, receive: Any, send: Any) -> None:
        logging.getLogger("printjob.test").warning("inside the app")
        await send({"type": "http.response.start", "status": 200, "headers": [(b"a", b"b")]})
        await send({"type": "http.response.body", "body": b"{}"})

    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    handler = Keep()
    logger = logging.getLogger("printjob.test")
    logger.addHandler(handler)
    try:
        asyncio.run(Gate(app, {}, lambda scope: "https://docs.example/errors")(request, None, send))
    finally:
        logger.removeHandler(handler)
    return sent, lines


def test_the_gate_echoes_the_id_and_the_log_lines_name_it() -> None:
    request = scope("/v1/account", (b"x-request-id", b"edge-77"))
    sent, lines = run_gate(request)
    assert request[REQUEST_ID] == "edge-77"
    assert (b"x-request-id", b"edge-77") in sent[0]["headers"]
    assert (b"a", b"b") in sent[0]["headers"]
    assert len(lines) == 1 and lines[0].endswith("inside the app request_id=edge-77")


def test_the_gates_own_refusals_carry_a_made_id() -> None:
    sent, _ = run_gate(scope("/nowhere"))
    assert sent[0]["status"] == 404
    (rid,) = [v for k, v in sent[0]["headers"] if k == b"x-request-id"]
    assert MADE.fullmatch(rid.decode())


def test_formats_one_timestamp_and_json_lines_with_the_context() -> None:
    record = logging.LogRecord("printjob.runner", logging.INFO, __file__, 1, "job %s", ("j",), None)
    record.created = 1795000200.5
    with log_context(job_id="job_1", account_id="acct_1", request_id=None):
        text = TextFormatter().format(record)
        entry = json.loads(JsonFormatter().format(record))
    assert text.startswith("2026-11-18T")
    assert re.match(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.500Z INFO printjob\.runner\[\d+\] job j", text
    )
    assert text.endswith(" job_id=job_1 account_id=acct_1")
    assert entry["time"] == text.split(" ")[0]
    assert (entry["message"], entry["job_id"], entry["account_id"]) == ("job j", "job_1", "acct_1")
    assert "request_id" not in entry
    forged = logging.LogRecord("x", logging.INFO, __file__, 1, "a\n2026 fake", None, None)
    assert "\n" not in TextFormatter().format(forged)
