"""`printjob serve` itself: the first-start demo key, and stopping without losing a job."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.contract.support import ServerProcess, busy_png


def test_first_start_prints_a_working_demo_key_and_command(idle_server: ServerProcess) -> None:
    """README / design: on first start with an empty data dir, a demo key with credits and a
    ready curl command are printed; the command submits a job (contract 4.1: 202)."""
    text = idle_server.log_path.read_text(errors="replace")
    key = re.search(r"API key:\s+(pjk1_[0-9A-Za-z]{38})", text)
    assert key is not None, text[:2000]
    response = idle_server.http.get(
        "/v1/account", headers={"Authorization": f"Bearer {key.group(1)}"}
    )
    assert response.status_code == 200
    assert response.json()["credits_available"] >= 1
    command = re.search(r"(curl -sS -X POST .*?-F format=svg)", text, re.S)
    assert command is not None
    assert shutil.which("curl") is not None, "make test installs curl"
    shell = command.group(1).replace("\\\n", " ")
    done = subprocess.run(
        shell + " -o /dev/null -w '%{http_code}'",
        shell=True,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.stdout.strip() == "202", (done.stdout, done.stderr)


def test_restart_prints_no_second_demo_key(tmp_path: Path) -> None:
    """The demo account is made only on the first start with an empty data directory."""
    server = ServerProcess(tmp_path / "data", workers=0).start()
    server.stop()
    again = ServerProcess(tmp_path / "data", workers=0)
    again.log_path = tmp_path / "second.log"
    again.start()
    again.stop()
    assert "API key:" in server.log_path.read_text()
    assert "API key:" not in again.log_path.read_text()


@pytest.mark.slow
def test_sigterm_hands_the_running_job_back(tmp_path: Path) -> None:
    """Design 9 and docs/operations.md: SIGTERM stops the server and its workers; a job in
    the middle of running goes back to the queue at once (nothing charged, credit still
    held), and the next start finishes it."""
    server = ServerProcess(tmp_path / "data", workers=1).start()
    client = server.account(credits=3)
    job_id = client.submit(busy_png(), format="png").json()["id"]
    job = client.wait(job_id, until=("running", "succeeded", "failed", "canceled"))
    client.close()
    assert job["status"] == "running", job
    assert server.process is not None
    os.kill(server.process.pid, signal.SIGTERM)  # the server alone: it stops its workers
    server.process.wait(timeout=30)
    operator = server.operator()
    summary = operator.show_account(client.account_id)
    with operator.ports.reader() as uow:
        stored = uow.jobs.get(job_id)
    assert stored is not None
    assert stored.status.value == "queued"
    assert summary.account.credits_held == 1
    assert summary.account.credits_balance == 3

    again = ServerProcess(tmp_path / "data", workers=1)
    again.log_path = tmp_path / "second.log"
    again.start()
    try:
        with type(client)(again, client.account_id, client.key) as client2:
            deadline = time.monotonic() + 120
            finished = client2.wait(job_id, timeout=deadline - time.monotonic())
            assert finished["status"] == "succeeded"
            account = client2.account_view()
            assert (account["credits_balance"], account["credits_held"]) == (2, 0)
    finally:
        again.stop()


def _worker_pids(server_pid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == server_pid and b"multiprocessing.spawn" in cmdline:
            pids.append(int(entry.name))
    return pids


def test_a_dead_worker_is_started_again(server: ServerProcess) -> None:
    """docs/operations.md: the server supervises its workers; one that dies is replaced and
    jobs keep being processed."""
    assert server.process is not None
    deadline = time.monotonic() + 20
    before = _worker_pids(server.process.pid)
    while not before and time.monotonic() < deadline:  # workers start in the background
        time.sleep(0.1)
        before = _worker_pids(server.process.pid)
    assert len(before) == 1, before
    os.kill(before[0], signal.SIGKILL)
    deadline = time.monotonic() + 20
    after: list[int] = []
    while time.monotonic() < deadline:
        after = [pid for pid in _worker_pids(server.process.pid) if pid not in before]
        if after:
            break
        time.sleep(0.2)
    assert after, "no new worker was started"
    with server.account(credits=2) as client:
        job = client.wait(client.submit().json()["id"], timeout=120)
        assert job["status"] == "succeeded"
