"""The official client (`printjob_client`) against the real server, and its retries against a
small real HTTP server on loopback that answers as scripted."""

from __future__ import annotations

import asyncio
import http.server
import io
import json
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from printjob_client import (
    AsyncClient,
    Client,
    IdempotencyKeyReused,
    InsufficientCredits,
    InvalidParameter,
    Job,
    JobNotCancelable,
    NotFound,
    PrintjobError,
    ResultNotReady,
    RetryPolicy,
    ServerBusy,
    TooManyActiveJobs,
    Unauthenticated,
    error_class,
)
from tests.contract.support import Client as HttpClient
from tests.contract.support import ServerProcess, png

# -- against the real server --


def api(account: HttpClient, **kwargs: Any) -> Client:
    return Client(account.key, account.server.base_url, **kwargs)


def test_convert_writes_the_file_and_reports_monotonic_progress(
    client: HttpClient, tmp_path: Path
) -> None:
    seen: list[Job] = []
    target = tmp_path / "logo.svg"
    source = tmp_path / "logo.png"
    source.write_bytes(png(96, 64))
    with api(client) as pj:
        job = pj.convert(source, target, format="svg", colors=2, on_progress=seen.append)

    assert job.succeeded and job.credits_charged == 1 and not job.replayed
    assert job.result is not None and job.result.format == "svg"
    assert (job.result.width, job.result.height) == (96, 64)
    assert job.result.bytes == target.stat().st_size
    assert ET.parse(target).getroot().tag.endswith("svg")
    assert job.options.format == "svg" and job.options.colors == 2
    assert job.finished_at is not None and job.finished_at >= job.created_at

    progress = [j.progress for j in seen]
    assert seen[0].status == "queued" and seen[-1].status == "succeeded"
    assert all(p is not None for p in progress)
    assert progress == sorted(progress) and progress[-1] == 100  # type: ignore[type-var]
    assert [j.id for j in seen] == [job.id] * len(seen)
    assert client.account_view()["credits_balance"] == 9


def test_async_convert_png_from_a_file_object(client: HttpClient, tmp_path: Path) -> None:
    async def run() -> tuple[Job, Job]:
        async with AsyncClient(client.key, client.server.base_url) as pj:
            first, second = await asyncio.gather(
                pj.convert(
                    io.BytesIO(png(64, 48)),
                    tmp_path / "a.png",
                    format="png",
                    size=(120, 90),
                    dpi=150,
                ),
                pj.convert(png(40, 40), tmp_path / "b.pdf", format="pdf", background="remove"),
            )
            return first, second

    first, second = asyncio.run(run())
    with Image.open(tmp_path / "a.png") as image:
        assert image.format == "PNG" and image.size == (120, 90)
        assert round(image.info["dpi"][0]) == 150
    assert first.options.size == "120x90" and first.options.dpi == 150
    assert (tmp_path / "b.pdf").read_bytes().startswith(b"%PDF")
    assert second.result is not None and second.result.format == "pdf"


def test_same_idempotency_key_returns_the_same_job_and_holds_one_credit(
    client: HttpClient, tmp_path: Path
) -> None:
    image = png()
    with api(client) as pj:
        first = pj.submit(image, format="svg", idempotency_key="order-17.logo:v1")
        again = pj.submit(image, format="svg", idempotency_key="order-17.logo:v1")
        assert again.id == first.id
        assert not first.replayed and again.replayed
        assert first.retry_after is not None and first.retry_after >= 1

        with pytest.raises(IdempotencyKeyReused) as reused:
            pj.submit(png(), format="svg", idempotency_key="order-17.logo:v1")
        assert reused.value.code == "idempotency_key_reused" and reused.value.status == 422

        done = pj.wait(first.id)  # by id: read at once, then at the server's pace
        assert done.succeeded
        out = io.BytesIO()
        pj.download(done, out)
        assert out.getvalue() == pj.download_bytes(done.id)
        assert ET.fromstring(out.getvalue()).tag.endswith("svg")
        view = pj.account()
    assert (view.credits_balance, view.credits_held) == (9, 0)


def test_each_submit_call_makes_its_own_key(client: HttpClient) -> None:
    image = png()
    with api(client) as pj:
        one = pj.submit(image, format="svg")
        two = pj.submit(image, format="svg")
        assert one.id != two.id and not two.replayed
        view = pj.account()
    assert view.credits_held + (10 - view.credits_balance) == 2  # held or already charged


def test_cancel_and_its_errors(idle_client: HttpClient, client: HttpClient) -> None:
    with api(idle_client) as pj:  # no workers: the job stays queued
        job = pj.submit(png(), format="eps")
        assert pj.account().credits_held == 1
        canceled = pj.cancel(job)
        assert canceled.status == "canceled" and canceled.progress is None
        assert pj.cancel(job.id).status == "canceled"  # again: unchanged
        assert pj.wait(job).status == "canceled"
        with pytest.raises(ResultNotReady) as not_ready:
            pj.download_bytes(job)
        assert not_ready.value.status == 409
        view = pj.account()
        assert (view.credits_held, view.credits_balance, view.active_jobs) == (0, 10, 0)
        with pytest.raises(NotFound):
            pj.get_job("job_" + "0" * 32)

    with api(client) as pj:
        done = pj.wait(pj.submit(png(), format="svg"))
        with pytest.raises(JobNotCancelable) as refused:
            pj.cancel(done)
        assert refused.value.code == "job_not_cancelable"


def test_account_is_typed(client: HttpClient) -> None:
    with api(client) as pj:
        account = pj.account()
    raw = client.account_view()
    assert account.credits_balance == raw["credits_balance"] == 10
    assert account.credits_available == 10 and account.active_jobs == 0
    assert account.active_jobs_max == account.limits.active_jobs == 3
    assert account.limits.job_cost == 1
    assert account.limits.submissions_per_minute == raw["limits"]["submissions_per_minute"]


def test_errors_are_typed_by_code(server: ServerProcess, client: HttpClient) -> None:
    with (
        Client("pjk1_" + "x" * 38, server.base_url) as wrong,
        pytest.raises(Unauthenticated) as unauthenticated,
    ):
        wrong.account()
    assert unauthenticated.value.code == "unauthenticated"
    assert unauthenticated.value.status == 401
    assert "bearer" in unauthenticated.value.headers["www-authenticate"].lower()

    with api(client) as pj:
        with pytest.raises(InvalidParameter) as invalid:
            pj.submit(png(), format="bmp")
        assert invalid.value.param == "format" and invalid.value.code == "invalid_parameter"
        assert invalid.value.detail and str(invalid.value) == invalid.value.detail
        with pytest.raises(InvalidParameter) as no_size:
            pj.submit(png(), format="svg", dpi=300)
        assert no_size.value.param == "dpi"

    with server.account(credits=0) as broke, api(broke) as pj:
        with pytest.raises(InsufficientCredits) as insufficient:
            pj.submit(png(), format="svg")
        assert insufficient.value.code == "insufficient_credits"
        assert insufficient.value.status == 402
        assert isinstance(insufficient.value, PrintjobError)


def test_models_ignore_fields_they_do_not_know(client: HttpClient) -> None:
    with api(client) as pj:
        job = pj.wait(pj.submit(png(), format="svg"))
    raw = json.loads(json.dumps(job.raw))
    raw["priority"] = "high"
    raw["options"]["dither"] = True
    raw["result"]["checksum"] = "sha256:..."
    newer = Job.from_dict(raw)
    assert newer == job
    assert newer.raw["priority"] == "high"


# -- retries, against a scripted HTTP server on loopback --


def job_body(status: str = "queued") -> dict[str, Any]:
    return {
        "id": "job_" + "a" * 32,
        "status": status,
        "phase": "queued",
        "progress": 0,
        "created_at": "2026-11-24T01:02:03.456Z",
        "finished_at": None,
        "options": {"format": "svg", "size": "original", "colors": None, "background": "keep"},
        "credits_charged": 0,
        "result": None,
        "error": None,
        "a_field_from_the_future": {"x": 1},
    }


def problem(status: int, code: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": f"https://docs.example/errors#error-{code}",
        "title": code.replace("_", " "),
        "status": status,
        "detail": f"scripted {code}",
        "code": code,
        **extra,
    }


@dataclass
class Answer:
    status: int = 202
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False  # close the connection without answering


@dataclass
class Script:
    answers: list[Answer]
    seen: list[dict[str, str]] = field(default_factory=list)

    def next(self) -> Answer:
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


@pytest.fixture
def scripted() -> Iterator[tuple[str, Script]]:
    script = Script([Answer()])

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            script.seen.append({k.lower(): v for k, v in self.headers.items()})
            answer = script.next()
            if answer.drop:
                self.close_connection = True
                return
            payload = json.dumps(answer.body if answer.body is not None else job_body()).encode()
            self.send_response(answer.status)
            kind = "application/json" if answer.status < 400 else "application/problem+json"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", script
    finally:
        httpd.shutdown()
        httpd.server_close()


FAST = RetryPolicy(max_retries=3, initial_delay=0.01, max_delay=0.05)


def test_submit_resends_with_the_same_key_after_a_503(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    script.answers[:] = [
        Answer(503, problem(503, "server_busy"), {"Retry-After": "1"}),
        Answer(202, job_body(), {"Retry-After": "5"}),
    ]
    with Client("pjk1_test", url) as pj:
        job = pj.submit(png(), format="svg")
    assert job.status == "queued" and job.retry_after == 5
    assert [s["authorization"] for s in script.seen] == ["Bearer pjk1_test"] * 2
    keys = [s["idempotency-key"] for s in script.seen]
    assert len(keys) == 2 and keys[0] == keys[1]
    assert script.seen[0]["user-agent"].startswith("printjob-client/")


def test_submit_resends_with_the_same_key_after_a_lost_connection(
    scripted: tuple[str, Script],
) -> None:
    url, script = scripted
    script.answers[:] = [Answer(drop=True), Answer(drop=True), Answer(202, job_body())]
    with Client("pjk1_test", url, retry=FAST) as pj:
        job = pj.submit(b"not even an image", format="svg", idempotency_key="mine-1")
    assert job.id == "job_" + "a" * 32
    assert [s["idempotency-key"] for s in script.seen] == ["mine-1"] * 3


def test_retries_are_bounded(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    script.answers[:] = [Answer(503, problem(503, "server_busy"), {"Retry-After": "1"})]
    with Client("pjk1_test", url, max_retries=2) as pj, pytest.raises(ServerBusy) as busy:
        pj.submit(png(), format="svg")
    assert busy.value.retry_after == 1 and busy.value.status == 503
    assert len(script.seen) == 3  # the request and two resends
    assert len({s["idempotency-key"] for s in script.seen}) == 1


def test_too_many_active_jobs_and_other_4xx_are_not_retried(
    scripted: tuple[str, Script],
) -> None:
    url, script = scripted
    script.answers[:] = [
        Answer(429, problem(429, "too_many_active_jobs"), {"Retry-After": "5"}),
        Answer(400, problem(400, "invalid_parameter", param="size")),
        Answer(418, problem(418, "a_code_from_the_future")),
    ]
    with Client("pjk1_test", url, retry=FAST) as pj:
        with pytest.raises(TooManyActiveJobs) as busy:
            pj.submit(png(), format="svg")
        assert busy.value.retry_after == 5
        with pytest.raises(InvalidParameter) as invalid:
            pj.submit(png(), format="svg", size="0x0")
        assert invalid.value.param == "size"
        with pytest.raises(PrintjobError) as unknown:
            pj.account()
    assert type(unknown.value) is PrintjobError and unknown.value.code == "a_code_from_the_future"
    assert error_class("a_code_from_the_future") is PrintjobError
    assert len(script.seen) == 3


def test_reads_retry_rate_limits_and_server_errors(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    running = job_body("running") | {"phase": "building", "progress": 40}
    done = job_body("succeeded") | {"phase": "finishing", "progress": 100, "credits_charged": 1}
    script.answers[:] = [
        Answer(429, problem(429, "rate_limited"), {"Retry-After": "1"}),
        Answer(200, running, {"Retry-After": "1"}),
        Answer(500, problem(500, "internal_error")),
        Answer(200, done),
    ]
    seen: list[int | None] = []
    with Client("pjk1_test", url, retry=FAST) as pj:
        job = pj.wait("job_" + "a" * 32, lambda j: seen.append(j.progress))
    assert job.succeeded and seen == [40, 100]
    assert len(script.seen) == 4


def test_async_client_resends_with_the_same_key(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    script.answers[:] = [
        Answer(drop=True),
        Answer(503, problem(503, "server_busy"), {"Retry-After": "1"}),
        Answer(202, job_body(), {"Idempotent-Replayed": "true"}),
    ]

    async def run() -> Job:
        async with AsyncClient("pjk1_test", url, retry=FAST) as pj:
            return await pj.submit(png(), format="svg", colors=3)

    job = asyncio.run(run())
    assert job.replayed
    assert len(script.seen) == 3 and len({s["idempotency-key"] for s in script.seen}) == 1


def test_retry_after_in_seconds_or_as_an_http_date() -> None:
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from printjob_client.errors import parse_retry_after

    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after("5") == 5 and parse_retry_after(" 1 ") == 1
    assert 25 < (parse_retry_after(soon) or 0) <= 30
    assert parse_retry_after("soon") is None and parse_retry_after("-1") is None
