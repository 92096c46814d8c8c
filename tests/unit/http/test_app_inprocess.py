"""The whole app (gate and Litestar) in process, through `httpx.ASGITransport`, over the
core's fakes: what the shell adds to the services (status codes, headers, Problem shape,
refusal order), checked without a server. `tests/contract` checks the same over real HTTP.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import attrs
import httpx
import pytest

from printjob_core.fakes import (
    FakeBlobStore,
    FakeClock,
    FakeIds,
    FakeImageProbe,
    FakeRateLimiter,
    FakeStore,
    fake_image,
)
from printjob_core.limits import Policy
from printjob_core.model import ConversionOutput
from printjob_core.services import ApiService, JobProcessing, OperatorService, Ports
from printjob_http.app import create_app

T = TypeVar("T")
DOCS = "https://docs.example/errors"
REALM = "printjob-test"
PROBLEM_JSON = "application/problem+json"
MISSING = "job_" + "e" * 32


@attrs.frozen
class ShellSettings:
    base_url: str | None = "https://api.example"
    docs_url: str = DOCS
    service_name: str = REALM
    trusted_proxies: tuple[str, ...] = ()


class ImmediateNow:
    """Runs every read at once, as SQLite's immediate reads do when nothing is locked."""

    def attempt(self, read: Callable[[], T]) -> T:
        return read()


@attrs.define
class ShellStorage:
    """The storage abilities the shell asks for: none (PostgreSQL) or immediate reads."""

    immediate: ImmediateNow | None = None

    def immediate_reads(self) -> ImmediateNow | None:
        return self.immediate


@attrs.define
class Container:
    settings: ShellSettings
    storage: ShellStorage
    ports: Ports
    api: ApiService


@attrs.define
class App:
    """The app over fakes, with the services to arrange what a test needs."""

    client: httpx.AsyncClient
    loop: asyncio.AbstractEventLoop
    ports: Ports
    operator: OperatorService
    processing: JobProcessing
    clock: FakeClock

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.loop.run_until_complete(self.client.request(method, path, **kwargs))

    def key(self, credits: int = 10, active_jobs_max: int = 3) -> dict[str, str]:
        return self.account(credits, active_jobs_max)[1]

    def account(self, credits: int = 10, active_jobs_max: int = 3) -> tuple[str, dict[str, str]]:
        account = self.operator.create_account(credits, active_jobs_max)
        _, secret = self.operator.create_key(account.id)
        return account.id, {"Authorization": f"Bearer {secret}"}

    def submit(
        self,
        auth: dict[str, str],
        fields: dict[str, str] | None = None,
        image: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        return self.request(
            "POST",
            "/v1/jobs",
            headers={**auth, **(headers or {})},
            data={"format": "svg"} if fields is None else fields,
            files={"image": ("a.png", fake_image() if image is None else image, "image/png")},
        )


POLICY = Policy(submissions_per_minute=4, reads_per_minute=50, max_upload_bytes=4096)


@pytest.fixture(params=["thread", "immediate"])
def app(request: pytest.FixtureRequest) -> Iterator[App]:
    store, clock = FakeStore(), FakeClock()
    ports = Ports(
        uow=store.unit_of_work,
        reader=store.unit_of_work,
        clock=clock,
        ids=FakeIds(),
        blobs=FakeBlobStore(),
        limiter=FakeRateLimiter(),
        probe=FakeImageProbe(),
        policy=POLICY,
    )
    storage = ShellStorage(ImmediateNow() if request.param == "immediate" else None)
    gate = create_app(Container(ShellSettings(), storage, ports, ApiService(ports)))
    loop = asyncio.new_event_loop()
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=gate, client=("192.0.2.5", 4000)),
        base_url="http://testserver",
    )
    yield App(client, loop, ports, OperatorService(ports), JobProcessing(ports), clock)
    loop.run_until_complete(client.aclose())
    loop.close()


def assert_problem(
    response: httpx.Response, status: int, code: str, param: str | None = None
) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"] == PROBLEM_JSON
    body = response.json()
    assert body["type"] == f"{DOCS}#error-{code}"
    assert body["status"] == status and body["code"] == code
    assert isinstance(body["title"], str) and body["title"]
    assert isinstance(body["detail"], str) and body["detail"]
    assert body.get("param") == param
    if status in (429, 503):
        assert int(response.headers["retry-after"]) >= 1
    return body


def test_submit_poll_download(app: App) -> None:
    auth = app.key()
    submitted = app.submit(auth, headers={"Idempotency-Key": "one"})
    assert submitted.status_code == 202
    job = submitted.json()
    assert job["status"] == "queued" and job["credits_charged"] == 0
    assert submitted.headers["location"] == f"https://api.example/v1/jobs/{job['id']}"
    assert submitted.headers["retry-after"] == "5"
    assert "idempotent-replayed" not in submitted.headers

    replay = app.submit(auth, headers={"Idempotency-Key": "one"})
    assert replay.status_code == 202 and replay.json()["id"] == job["id"]
    assert replay.headers["idempotent-replayed"] == "true"

    queued = app.request("GET", f"/v1/jobs/{job['id']}", headers=auth)
    assert queued.status_code == 200 and queued.headers["retry-after"] == "5"
    assert queued.headers["content-type"] == "application/json"
    assert queued.json() == job

    claim = app.processing.claim()
    assert claim is not None
    running = app.request("GET", f"/v1/jobs/{job['id']}", headers=auth)
    assert running.json()["status"] == "running" and running.headers["retry-after"] == "3"
    not_ready = app.request("GET", f"/v1/jobs/{job['id']}/result", headers=auth)
    assert_problem(not_ready, 409, "result_not_ready")

    output = ConversionOutput(b"<svg/>", 10, 10, 2, background_removed=False)
    assert app.processing.succeed(claim, output) is not None
    done = app.request("GET", f"/v1/jobs/{job['id']}", headers=auth)
    assert done.json()["status"] == "succeeded" and "retry-after" not in done.headers
    assert done.json()["result"]["url"] == f"https://api.example/v1/jobs/{job['id']}/result"

    file = app.request("GET", f"/v1/jobs/{job['id']}/result", headers=auth)
    assert file.status_code == 200 and file.content == b"<svg/>"
    assert file.headers["content-type"] == "image/svg+xml"
    assert file.headers["content-disposition"] == f'attachment; filename="{job["id"]}.svg"'

    account = app.request("GET", "/v1/account", headers=auth).json()
    assert account["credits_balance"] == 9 and account["active_jobs"] == 0
    assert account["limits"]["max_upload_bytes"] == POLICY.max_upload_bytes


def test_cancel(app: App) -> None:
    auth = app.key(credits=2)
    job = app.submit(auth).json()
    assert app.request("GET", "/v1/account", headers=auth).json()["credits_held"] == 1
    canceled = app.request("POST", f"/v1/jobs/{job['id']}/cancel", headers=auth)
    assert canceled.status_code == 200 and canceled.json()["status"] == "canceled"
    assert "retry-after" not in canceled.headers
    again = app.request("POST", f"/v1/jobs/{job['id']}/cancel", headers=auth)
    assert again.status_code == 200 and again.json() == canceled.json()
    assert app.request("GET", "/v1/account", headers=auth).json()["credits_held"] == 0


def test_another_accounts_job_and_a_malformed_id_are_not_found(app: App) -> None:
    owner, stranger = app.key(), app.key()
    job = app.submit(owner).json()
    for path in (f"/v1/jobs/{job['id']}", f"/v1/jobs/{job['id']}/result", f"/v1/jobs/{MISSING}"):
        assert_problem(app.request("GET", path, headers=stranger), 404, "not_found")
    assert_problem(
        app.request("POST", f"/v1/jobs/{job['id']}/cancel", headers=stranger), 404, "not_found"
    )
    assert_problem(app.request("GET", "/v1/jobs/not%00a-job", headers=owner), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", f"/v1/jobs/{MISSING}"),
        ("GET", "/v1/account"),
        ("POST", "/v1/jobs"),
        ("POST", f"/v1/jobs/{MISSING}/cancel"),
        ("GET", f"/v1/jobs/{MISSING}/result"),
    ],
)
def test_keys_401_and_403(app: App, method: str, path: str) -> None:
    missing = app.request(method, path)
    assert_problem(missing, 401, "unauthenticated")
    assert missing.headers["www-authenticate"] == f'Bearer realm="{REALM}"'
    wrong = app.request(method, path, headers={"Authorization": "Bearer pjk1_" + "W" * 38})
    assert_problem(wrong, 401, "unauthenticated")
    assert wrong.headers["www-authenticate"] == f'Bearer realm="{REALM}", error="invalid_token"'

    account_id, auth = app.account()
    app.operator.disable_account(account_id)
    assert_problem(app.request(method, path, headers=auth), 403, "account_disabled")


def test_routing_404_405_and_head(app: App) -> None:
    for path in ("/", "/v1/jobs/", "/v1/account/", "/schema"):
        assert_problem(app.request("GET", path), 404, "not_found")
    refused = app.request("DELETE", "/v1/account")
    assert_problem(refused, 405, "method_not_allowed")
    assert refused.headers["allow"] == "GET"
    head = app.request("HEAD", "/v1/jobs")
    assert head.status_code == 405 and head.headers["allow"] == "POST"
    assert head.headers["content-type"] == PROBLEM_JSON and head.content == b""


def test_the_openapi_document_needs_no_key(app: App) -> None:
    served = app.request("GET", "/v1/openapi.json")
    assert served.status_code == 200 and served.headers["content-type"] == "application/json"
    assert served.json()["openapi"].startswith("3.1")
    assert app.request("GET", "/v1/openapi.json").content == served.content


def test_reads_over_the_minute_limit_get_429(app: App) -> None:
    auth = app.key()
    for _ in range(POLICY.reads_per_minute):
        assert app.request("GET", "/v1/account", headers=auth).status_code == 200
    assert_problem(app.request("GET", "/v1/account", headers=auth), 429, "rate_limited")
    assert_problem(app.request("GET", f"/v1/jobs/{MISSING}", headers=auth), 429, "rate_limited")


def test_request_over_max_upload_bytes_is_413(app: App) -> None:
    auth = app.key()
    too_big = app.submit(auth, image=fake_image() + b"x" * POLICY.max_upload_bytes)
    assert_problem(too_big, 413, "image_too_large", param="image")


def test_refusal_order_on_submit(app: App) -> None:
    """Design decision 6: 400 before 402, 402 before 429 too_many_active_jobs, and a client
    over its per-minute limit gets 429 first, even for a request refused in the shell."""
    broke = app.key(credits=0)
    assert_problem(app.submit(broke, fields={"format": "tiff"}), 400, "invalid_parameter", "format")
    assert_problem(app.submit(broke, image=b"not an image"), 422, "unsupported_image")
    assert_problem(app.submit(broke), 402, "insufficient_credits")
    app.clock.advance(60)

    busy = app.key(credits=10, active_jobs_max=3)
    for n in range(3):
        assert app.submit(busy, image=fake_image(salt=str(n))).status_code == 202
    full = app.submit(busy, image=fake_image(salt="3"))
    assert_problem(full, 429, "too_many_active_jobs")
    assert full.headers["retry-after"] == "5"
    # The fifth submission this minute is over the limit of 4: 429 before 413 or 400.
    oversized = app.submit(busy, image=fake_image() + b"x" * POLICY.max_upload_bytes)
    assert_problem(oversized, 429, "rate_limited")
    not_multipart = app.request("POST", "/v1/jobs", headers=busy, content=b"{}")
    assert_problem(not_multipart, 429, "rate_limited")


def test_a_refused_body_still_counts_as_a_submission(app: App) -> None:
    auth = app.key()
    for _ in range(POLICY.submissions_per_minute):
        big = app.submit(auth, image=fake_image() + b"x" * POLICY.max_upload_bytes)
        assert_problem(big, 413, "image_too_large", param="image")
    assert_problem(app.submit(auth), 429, "rate_limited")


def test_an_unexpected_failure_is_a_500_problem(
    app: App, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    auth = app.key()

    def broken(*args: object) -> None:
        raise RuntimeError("storage fell over")

    monkeypatch.setattr(app.ports.views, "job_by_key", broken)
    monkeypatch.setattr(app.ports.blobs, "get", broken)
    monkeypatch.setattr(app.ports.blobs, "open", broken)  # downloads stream the file
    job = app.submit(auth).json()
    claim = app.processing.claim()
    assert claim is not None
    app.processing.succeed(claim, ConversionOutput(b"<svg/>", 10, 10, 2, background_removed=False))
    for path in (f"/v1/jobs/{job['id']}", f"/v1/jobs/{job['id']}/result"):
        assert_problem(app.request("GET", path, headers=auth), 500, "internal_error")
    assert "storage fell over" in caplog.text
