"""The access log: one line per request, batched, never a header."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from printjob_http.access_log import FLUSH_SECONDS, FLUSH_SIZE, AccessLog
from printjob_http.request_ids import REQUEST_ID

LINE = re.compile(
    r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (\S+) "(\S+) (\S+) HTTP/1\.1" (\d{3}|-) (\d+) '
    r"\d+\.\d\dms request_id=(\S+)"
)


def scope(path: str = "/v1/account", query: bytes = b"", **extra: Any) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode("latin-1"),
        "query_string": query,
        "http_version": "1.1",
        "client": ("192.0.2.5", 4711),
        REQUEST_ID: "req_1",
        "headers": [(b"authorization", b"Bearer pjk1_secretsecretsecretsecretsecretsecr")],
        **extra,
    }


async def answering(status: int, body: bytes) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": body})

    return app


async def noop_send(message: Any) -> None:
    return None


def read(path: Path) -> list[str]:
    return path.read_text().splitlines()


@pytest.fixture
def log(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A log file and a descriptor appending to it."""
    path = tmp_path / "access.log"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    yield path, fd
    os.close(fd)


def test_a_line_per_request_written_after_a_short_wait(log: tuple[Path, int]) -> None:
    log_path, fd = log

    async def run() -> None:
        logged = AccessLog(await answering(200, b"x" * 17), fd)
        await logged(scope(query=b"a=1"), None, noop_send)
        await logged(scope("/v1/jobs/job_1"), None, noop_send)
        assert read(log_path) == []  # buffered
        await asyncio.sleep(FLUSH_SECONDS + 0.2)
        lines = read(log_path)
        assert len(lines) == 2
        first = LINE.fullmatch(lines[0])
        assert first is not None
        assert first.groups() == (
            "192.0.2.5:4711",
            "GET",
            "/v1/account?a=1",
            "200",
            "17",
            "req_1",
        )
        assert "/v1/jobs/job_1" in lines[1]
        assert "pjk1_" not in log_path.read_text()

    asyncio.run(run())


def test_a_full_buffer_is_written_at_once_and_flush_writes_the_rest(
    log: tuple[Path, int],
) -> None:
    log_path, fd = log

    async def run() -> None:
        logged = AccessLog(await answering(404, b""), fd)
        requests = FLUSH_SIZE // 60 + 10
        for _ in range(requests):
            await logged(scope(), None, noop_send)
        written = len(read(log_path))
        assert 0 < written < requests
        logged.flush()
        assert len(read(log_path)) == requests

    asyncio.run(run())


def test_an_invite_token_in_a_path_is_never_logged(log: tuple[Path, int]) -> None:
    log_path, fd = log
    token = "inv_" + "s3cr3t" * 6

    async def run() -> None:
        logged = AccessLog(await answering(200, b"page"), fd)
        await logged(scope(f"/invite/{token}"), None, noop_send)
        logged.flush()

    asyncio.run(run())
    lines = read(log_path)
    assert len(lines) == 1 and '"GET /invite/[redacted] HTTP/1.1" 200' in lines[0]
    assert token not in log_path.read_text()


def test_a_forged_line_break_stays_on_its_line(log: tuple[Path, int]) -> None:
    log_path, fd = log

    async def run() -> None:
        logged = AccessLog(await answering(404, b""), fd)
        await logged(scope("/v1/x\n2026 fake line"), None, noop_send)
        logged.flush()

    asyncio.run(run())
    lines = read(log_path)
    assert len(lines) == 1 and "\\n2026 fake line" in lines[0]


def test_a_request_the_app_failed_is_still_logged(log: tuple[Path, int]) -> None:
    log_path, fd = log

    async def broken(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("boom")

    async def run() -> None:
        logged = AccessLog(broken, fd)
        with pytest.raises(RuntimeError):
            await logged(scope(), None, noop_send)
        logged.flush()

    asyncio.run(run())
    match = LINE.fullmatch(read(log_path)[0])
    assert match is not None and match.group(4) == "-"


def test_json_lines_carry_the_same_fields_and_never_a_header(log: tuple[Path, int]) -> None:
    log_path, fd = log

    async def run() -> None:
        logged = AccessLog(await answering(200, b"hello"), fd, json_lines=True)
        await logged(scope(query=b"a=1"), None, noop_send)
        logged.flush()

    asyncio.run(run())
    (line,) = read(log_path)
    entry = json.loads(line)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["time"])
    assert (entry["client"], entry["method"], entry["target"]) == (
        "192.0.2.5:4711",
        "GET",
        "/v1/account?a=1",
    )
    assert (entry["status"], entry["bytes"], entry["request_id"]) == (200, 5, "req_1")
    assert "pjk1_" not in log_path.read_text()
