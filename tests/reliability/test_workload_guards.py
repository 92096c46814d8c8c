"""Making the service work hard without succeeding (issue 15): the kill guard, the budget,
SIGTERM, the memory cap, the fair queue and a client that leaves mid-upload.

The API is the real server (`printjob serve --workers 0`); the workers are real worker
processes under the real `Supervisor`, on the same data directory (or PostgreSQL
database), running a deliberate test double of the engine (tests/reliability/
hostile_engine.py) that spins, dawdles or hoards memory as the job's `colors` asks.

One case runs the real engine on a hostile image (two interlocking 1-px combs). Every
wait is bounded; budgets are small.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from printjob_adapters.settings import Settings
from printjob_http.server import Supervisor
from tests.contract.support import Client, ServerProcess, base_env, png
from tests.reliability.conftest import HIGH, new_account
from tests.reliability.hostile_engine import GREEDY, SLOW, SLOW_SECONDS, SPIN, hostile_worker

BUDGET_SECONDS = 3
MEMORY_CAP_MB = 768


class Rig:
    """The API server and a supervisor of hostile workers on one data directory."""

    def __init__(self, server: ServerProcess, supervisor: Supervisor) -> None:
        self.server = server
        self.supervisor = supervisor

    def account(self, credits: int = 10) -> Client:
        return new_account(self.server, credits=credits, active_jobs_max=10)

    def wait_pids(self, count: int = 1, timeout: float = 20.0) -> list[int]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pids = self.supervisor.pids
            if len(pids) == count:
                return pids
            time.sleep(0.05)
        raise AssertionError(f"{count} worker(s) not up in {timeout} s")


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    data_dir = tmp_path / "data"
    server = ServerProcess(
        data_dir,
        workers=0,
        PRINTJOB_SUBMISSIONS_PER_MINUTE=HIGH,
        PRINTJOB_READS_PER_MINUTE=HIGH,
    ).start()
    settings = Settings.from_env(
        base_env(
            data_dir,
            PRINTJOB_JOB_TIME_BUDGET_SECONDS=str(BUDGET_SECONDS),
            PRINTJOB_WORKER_MEMORY_MB=str(MEMORY_CAP_MB),
        )
    )
    supervisor = Supervisor(settings, 1, target=hostile_worker)
    supervisor.start()
    try:
        rig = Rig(server, supervisor)
        rig.wait_pids()
        yield rig
    finally:
        supervisor.stop()
        server.stop()


def accepted(response: httpx.Response) -> str:
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def submit(client: Client, colors: str) -> str:
    return accepted(client.submit(png(), colors=colors))


def wait_running(client: Client, job_id: str, timeout: float = 20.0) -> None:
    assert client.wait(job_id, timeout, until=("running",))["status"] == "running"


def held_and_balance(client: Client) -> tuple[int, int]:
    view: dict[str, Any] = client.account_view()
    return view["credits_held"], view["credits_balance"]


def test_cancel_of_a_job_whose_engine_never_calls_back_frees_the_worker(rig: Rig) -> None:
    hostile, other = rig.account(credits=1), rig.account()
    spinning = submit(hostile, SPIN)
    wait_running(hostile, spinning)
    first_pid = rig.supervisor.pids
    canceled_at = time.monotonic()
    assert hostile.post(f"/v1/jobs/{spinning}/cancel").json()["status"] == "canceled"
    quick = submit(other, "5")
    assert other.wait(quick, timeout=10)["status"] == "succeeded"
    assert time.monotonic() - canceled_at < 5.0
    assert rig.wait_pids() != first_pid  # the wedged worker was replaced
    assert hostile.get(f"/v1/jobs/{spinning}").json()["status"] == "canceled"
    assert held_and_balance(hostile) == (0, 1)


def test_a_job_over_its_budget_fails_uncharged_and_the_worker_is_replaced(rig: Rig) -> None:
    hostile, other = rig.account(credits=1), rig.account()
    spinning = submit(hostile, SPIN)
    started = time.monotonic()
    job = hostile.wait(spinning, timeout=BUDGET_SECONDS + 10)
    assert job["status"] == "failed"
    assert job["error"]["code"] == "processing_failed"
    assert f"longer than {BUDGET_SECONDS} s" in job["error"]["detail"]
    assert time.monotonic() - started < BUDGET_SECONDS + 5
    assert held_and_balance(hostile) == (0, 1)
    quick = submit(other, "5")
    assert other.wait(quick, timeout=10)["status"] == "succeeded"


def test_sigterm_stops_a_worker_whose_engine_never_calls_back(rig: Rig) -> None:
    client = rig.account(credits=1)
    spinning = submit(client, SPIN)
    wait_running(client, spinning)
    started = time.monotonic()
    rig.supervisor.stop(grace=10.0)
    assert time.monotonic() - started < 5.0  # stopped by itself, not killed at 10 s
    # Handed back to the queue for the next worker (its attempt counted).
    job = client.get(f"/v1/jobs/{spinning}").json()
    assert job["status"] == "queued"
    assert held_and_balance(client) == (1, 1)


def test_a_job_reaching_the_memory_cap_fails_and_the_worker_lives_on(rig: Rig) -> None:
    client = rig.account(credits=2)
    worker = rig.supervisor.pids
    greedy = submit(client, GREEDY)
    job = client.wait(greedy, timeout=30)
    assert job["status"] == "failed"
    assert job["error"]["code"] == "processing_failed"
    assert "more memory than one job may use" in job["error"]["detail"]
    quick = submit(client, "5")
    assert client.wait(quick, timeout=10)["status"] == "succeeded"
    assert rig.supervisor.pids == worker
    assert held_and_balance(client) == (0, 1)


def test_one_accounts_slow_jobs_delay_another_account_by_at_most_one(rig: Rig) -> None:
    busy, light = rig.account(), rig.account()
    slow = [submit(busy, SLOW) for _ in range(4)]
    wait_running(busy, slow[0])
    quick = submit(light, "5")
    assert light.wait(quick, timeout=4 * SLOW_SECONDS + 10)["status"] == "succeeded"
    states = [busy.get(f"/v1/jobs/{job_id}").json()["status"] for job_id in slow]
    # The first slow job ran (and perhaps the second started after the light job): at most
    # one of the busy account's jobs finished before the light one.
    assert states.count("succeeded") <= 1, states
    for job_id in slow:
        assert busy.wait(job_id, timeout=4 * SLOW_SECONDS + 10)["status"] == "succeeded"


# -- the real engine --


def combs_png(size: int) -> bytes:
    """Two interlocking 1-px combs: two regions whose shared border is the whole image."""
    from PIL import Image

    image = Image.new("RGB", (size, size), (255, 255, 255))
    pixels = image.load()
    assert pixels is not None
    for x in range(0, size, 2):
        for y in range(size - 1):
            pixels[x, y] = (20, 20, 200)
    for x in range(size):
        pixels[x, 0] = (20, 20, 200)
    import io

    buffer = io.BytesIO()
    image.save(buffer, "PNG", optimize=True)
    return buffer.getvalue()


@pytest.fixture
def real_server(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(
        tmp_path / "data",
        workers=1,
        PRINTJOB_SUBMISSIONS_PER_MINUTE=HIGH,
        PRINTJOB_READS_PER_MINUTE=HIGH,
        PRINTJOB_JOB_TIME_BUDGET_SECONDS="2",
    ).start()
    try:
        yield server
    finally:
        server.stop()


def test_the_real_engine_on_a_hostile_image_is_canceled_and_bounded(
    real_server: ServerProcess,
) -> None:
    hostile = new_account(real_server, credits=2)
    other = new_account(real_server)
    image = combs_png(1200)
    first = accepted(hostile.submit(image, format="svg"))
    job = hostile.wait(first, timeout=20)
    assert job["status"] == "failed"
    assert "longer than 2 s" in job["error"]["detail"]
    second = accepted(hostile.submit(image, format="svg"))
    hostile.wait(second, timeout=20, until=("running",))
    time.sleep(0.5)  # into the slow stage
    canceled_at = time.monotonic()
    assert hostile.post(f"/v1/jobs/{second}/cancel").json()["status"] == "canceled"
    quick = accepted(other.submit())
    assert other.wait(quick, timeout=15)["status"] == "succeeded"
    assert time.monotonic() - canceled_at < 10.0
    assert held_and_balance(hostile) == (0, 2)


# -- a client that leaves mid-upload --


def test_a_client_leaving_mid_upload_is_an_info_line(rig: Rig) -> None:
    client = rig.account()
    boundary = "pjboundary"
    head = (
        "POST /v1/jobs HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{rig.server.port}\r\n"
        f"Authorization: Bearer {client.key}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        "Content-Length: 200000\r\n\r\n"
    ).encode()
    part = (
        f"--{boundary}\r\n"
        'Content-Disposition: form-data; name="image"; filename="p.png"\r\n'
        "Content-Type: image/png\r\n\r\n"
    ).encode() + png()
    log_before = len(rig.server.log_path.read_bytes())
    with socket.create_connection(("127.0.0.1", rig.server.port), timeout=5) as sock:
        sock.sendall(head + part)
        time.sleep(0.3)
    deadline = time.monotonic() + 10
    text = ""
    while time.monotonic() < deadline:
        text = rig.server.log_path.read_bytes()[log_before:].decode(errors="replace")
        if "went away" in text and " 499 " in text:
            break
        time.sleep(0.1)
    assert "INFO printjob.http" in text and "went away during its upload" in text, text
    assert " 499 " in text, text
    assert "ERROR" not in text and " 500 " not in text and "Traceback" not in text, text
    assert held_and_balance(client) == (0, 10)
    assert client.account_view()["active_jobs"] == 0
