"""Concurrency (issue part 1): credits, active-job limits and idempotency under concurrent
submissions, against one server process and against two processes sharing one data dir.

The servers run no workers, so accepted jobs stay queued and the figures are exact.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.contract.support import Client, ServerProcess, assert_problem, png
from tests.reliability.conftest import HIGH, new_account

LIMITS = {
    "PRINTJOB_SUBMISSIONS_PER_MINUTE": HIGH,
    "PRINTJOB_READS_PER_MINUTE": HIGH,
}


@pytest.fixture(scope="module", params=["one-process", "two-processes"])
def servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[ServerProcess]]:
    data_dir: Path = tmp_path_factory.mktemp(f"concurrency-{request.param}") / "data"
    count = 1 if request.param == "one-process" else 2
    started: list[ServerProcess] = []
    try:
        for _ in range(count):
            started.append(ServerProcess(data_dir, workers=0, **LIMITS).start())
        yield started
    finally:
        for server in started:
            server.stop()


def concurrently(
    servers: list[ServerProcess], key: str, calls: list[Callable[[httpx.Client], httpx.Response]]
) -> list[httpx.Response]:
    """Run each call in its own thread and connection, all released at once, spread over the
    servers in turn; every request has a client timeout, so nothing can hang the test."""
    barrier = threading.Barrier(len(calls))
    answers: list[httpx.Response | BaseException | None] = [None] * len(calls)

    def run(index: int) -> None:
        server = servers[index % len(servers)]
        with httpx.Client(
            base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as http:
            http.get("/v1/openapi.json")  # connect before the barrier
            barrier.wait(timeout=60)
            try:
                answers[index] = calls[index](http)
            except BaseException as error:
                answers[index] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a request hung"
    for answer in answers:
        assert isinstance(answer, httpx.Response), repr(answer)
    return answers  # type: ignore[return-value]


def submit_call(
    image: bytes, key: str | None = None, fmt: str = "svg"
) -> Callable[[httpx.Client], httpx.Response]:
    headers = {"Idempotency-Key": key} if key else {}

    def call(http: httpx.Client) -> httpx.Response:
        files = {"image": ("p.png", image, "image/png")}
        return http.post("/v1/jobs", files=files, data={"format": fmt}, headers=headers)

    return call


def check_figures(client: Client, active: int, balance: int) -> None:
    account = client.account_view()
    assert account["credits_balance"] == balance
    assert account["credits_held"] == active == account["active_jobs"]
    assert account["credits_available"] == account["credits_balance"] - account["credits_held"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("credits", "active_max", "refusal"),
    [
        (3, 3, None),  # both limits at 3: either refusal is right
        (3, 5, "insufficient_credits"),
        (10, 3, "too_many_active_jobs"),
    ],
)
def test_thirty_concurrent_submissions_respect_credits_and_active_jobs(
    servers: list[ServerProcess], credits: int, active_max: int, refusal: str | None
) -> None:
    with new_account(servers[0], credits=credits, active_jobs_max=active_max) as client:
        answers = concurrently(servers, client.key, [submit_call(png()) for _ in range(30)])
        accepted = [a for a in answers if a.status_code == 202]
        allowed = min(credits, active_max)
        assert len(accepted) == allowed, [a.status_code for a in answers]
        assert len({a.json()["id"] for a in accepted}) == allowed
        for answer in answers:
            if answer.status_code == 202:
                continue
            body = answer.json()
            if refusal is not None:
                status = 402 if refusal == "insufficient_credits" else 429
                assert_problem(answer, status, refusal)
            else:
                assert (answer.status_code, body["code"]) in (
                    (402, "insufficient_credits"),
                    (429, "too_many_active_jobs"),
                ), body
        check_figures(client, active=allowed, balance=credits)
        # Every accepted job is readable through every process.
        for server in servers:
            with Client(server, client.account_id, client.key) as other:
                for answer in accepted:
                    assert other.get(f"/v1/jobs/{answer.json()['id']}").status_code == 200


@pytest.mark.slow
def test_twenty_concurrent_replays_make_one_job(servers: list[ServerProcess]) -> None:
    with new_account(servers[0], credits=10, active_jobs_max=10) as client:
        image = png()
        answers = concurrently(
            servers, client.key, [submit_call(image, "order-7") for _ in range(20)]
        )
        assert [a.status_code for a in answers] == [202] * 20, [a.text for a in answers]
        assert len({a.json()["id"] for a in answers}) == 1
        first = [a for a in answers if "idempotent-replayed" not in a.headers]
        assert len(first) == 1
        assert all(a.headers["idempotent-replayed"] == "true" for a in answers if a is not first[0])
        check_figures(client, active=1, balance=10)


@pytest.mark.slow
def test_one_key_with_twenty_different_images_makes_one_job(servers: list[ServerProcess]) -> None:
    with new_account(servers[0], credits=30, active_jobs_max=10) as client:
        calls = [submit_call(png(), "same-key") for _ in range(20)]
        answers = concurrently(servers, client.key, calls)
        accepted = [a for a in answers if a.status_code == 202]
        assert len(accepted) == 1, [a.status_code for a in answers]
        assert "idempotent-replayed" not in accepted[0].headers
        for answer in answers:
            if answer is not accepted[0]:
                assert_problem(answer, 422, "idempotency_key_reused")
        check_figures(client, active=1, balance=30)
        # The winner's own request replays; nobody else's does.
        jobs = client.get(f"/v1/jobs/{accepted[0].json()['id']}")
        assert jobs.status_code == 200


@pytest.mark.slow
def test_concurrent_cancels_release_one_hold_each(servers: list[ServerProcess]) -> None:
    """Ten concurrent cancels of one job: all 200 canceled, the hold released once."""
    with new_account(servers[0], credits=5, active_jobs_max=5) as client:
        job_id = client.submit(png()).json()["id"]
        keep = client.submit(png()).json()["id"]

        def cancel(http: httpx.Client) -> httpx.Response:
            return http.post(f"/v1/jobs/{job_id}/cancel")

        answers = concurrently(servers, client.key, [cancel] * 10)
        assert [a.status_code for a in answers] == [200] * 10
        assert {a.json()["status"] for a in answers} == {"canceled"}
        check_figures(client, active=1, balance=5)
        assert client.get(f"/v1/jobs/{keep}").json()["status"] == "queued"
