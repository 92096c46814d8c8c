"""Crash safety (issue part 2): SIGKILL the whole server (API and workers) at random moments
while jobs are submitted, processed and downloaded; restart on the same data dir; repeat.

Afterwards nothing is lost: every job ever answered 202 is readable and final (failed ones
`interrupted` or `processing_failed`), no credit is held, balance = initial - succeeded,
every result downloads whole, and a submission whose answer was lost, sent again with its
Idempotency-Key, gives the same job (or a fresh one if the first never committed), never two
jobs for one key. The RNG is seeded, every loop is bounded, every request has a timeout.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.contract.support import FINAL, Client, ServerProcess, busy_png, png
from tests.postgres_support import database_for, use_postgres_servers
from tests.reliability.conftest import HIGH, new_account

SEED = 20261122
CYCLES = 4
INITIAL_CREDITS = 60
SETTINGS = {
    "PRINTJOB_SUBMISSIONS_PER_MINUTE": HIGH,
    "PRINTJOB_READS_PER_MINUTE": HIGH,
    # A dead worker's job is taken back within seconds, not a minute.
    "PRINTJOB_LEASE_SECONDS": "4",
}


@dataclass
class Sent:
    """One submission: what was sent, and what came back."""

    account: int
    key: str
    image: bytes
    fmt: str
    job_ids: set[str] = field(default_factory=set)
    lost: bool = False  # no answer (connection killed) or 503: to be sent again


@dataclass
class Ledger:
    sent: list[Sent] = field(default_factory=list)
    downloads: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def submit(http: httpx.Client, item: Sent) -> httpx.Response:
    files = {"image": ("p.png", item.image, "image/png")}
    return http.post(
        "/v1/jobs", files=files, data={"format": item.fmt}, headers={"Idempotency-Key": item.key}
    )


def record(item: Sent, response: httpx.Response, ledger: Ledger) -> None:
    if response.status_code == 202:
        item.job_ids.add(response.json()["id"])
        item.lost = False
    elif response.status_code == 503 and not item.job_ids:
        item.lost = True
    elif response.status_code >= 500:
        ledger.errors.append(f"{response.status_code} {response.text[:200]}")
    # 4xx (too many active jobs, say): refused, the key is not kept.


def workload(
    server: ServerProcess, clients: list[Client], ledger: Ledger, stop: threading.Event, seed: int
) -> None:
    """Submit, poll and download until `stop`; a dead server only makes requests fail."""
    rng = random.Random(seed)
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        serial = 0
        while not stop.is_set():
            index = rng.randrange(len(clients))
            auth = {"Authorization": f"Bearer {clients[index].key}"}
            http.headers.update(auth)
            serial += 1
            if rng.random() < 0.5:
                image = busy_png(500, 80) if rng.random() < 0.4 else png()
                item = Sent(index, f"s{seed}-{serial}", image, rng.choice(["svg", "pdf", "png"]))
                with ledger.lock:
                    ledger.sent.append(item)
                try:
                    record(item, submit(http, item), ledger)
                except httpx.HTTPError:
                    item.lost = True
                continue
            with ledger.lock:
                known = [j for s in ledger.sent if s.account == index for j in s.job_ids]
            if not known:
                stop.wait(0.05)
                continue
            job_id = rng.choice(known)
            try:
                job = http.get(f"/v1/jobs/{job_id}")
                if job.status_code >= 500:
                    ledger.errors.append(f"read {job.status_code} {job.text[:200]}")
                if job.status_code == 200 and job.json()["status"] == "succeeded":
                    result = http.get(f"/v1/jobs/{job_id}/result")
                    if result.status_code == 200:
                        if len(result.content) != job.json()["result"]["bytes"]:
                            ledger.errors.append(f"{job_id}: short download")
                        with ledger.lock:
                            ledger.downloads += 1
            except httpx.HTTPError:
                stop.wait(0.05)


def jobs_in_database(data_dir: Path) -> dict[str, tuple[str, str, str | None]]:
    query = "SELECT id, account_id, status, result_key FROM jobs"
    if use_postgres_servers():  # PRINTJOB_TEST_STORAGE=postgresql
        with psycopg.connect(database_for(data_dir)) as conn:
            rows = conn.execute(query).fetchall()
        return {job_id: (acct, status, key) for job_id, acct, status, key in rows}
    with sqlite3.connect(f"file:{data_dir / 'printjob.sqlite3'}?mode=ro", uri=True) as db:
        rows = db.execute(query).fetchall()
    return {job_id: (account, status, result_key) for job_id, account, status, result_key in rows}


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_kill_nine_at_random_moments_loses_nothing(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    data_dir = tmp_path / "data"
    server = ServerProcess(data_dir, workers=2, **SETTINGS).start()
    clients = [new_account(server, INITIAL_CREDITS, active_jobs_max=10) for _ in range(3)]
    ledger = Ledger()
    try:
        for cycle in range(CYCLES):
            for client in clients:
                client.server = server
            stop = threading.Event()
            threads = [
                threading.Thread(
                    target=workload,
                    args=(server, clients, ledger, stop, SEED * 10 + cycle * 3 + n),
                )
                for n in range(3)
            ]
            for thread in threads:
                thread.start()
            time.sleep(rng.uniform(1.5, 6.0))
            server.kill()  # SIGKILL to the process group: API and workers at once
            stop.set()
            for thread in threads:
                thread.join(timeout=30)
            assert not any(thread.is_alive() for thread in threads), "a client hung"
            server = ServerProcess(data_dir, workers=2, **SETTINGS).start()

        # Lost answers: send again with the same key, image and options.
        lost = [item for item in ledger.sent if item.lost]
        for item in lost:
            with Client(server, clients[item.account].account_id, clients[item.account].key) as c:
                for _ in range(20):
                    response = submit(c, item)
                    if response.status_code == 429:
                        time.sleep(int(response.headers["retry-after"]))
                        continue
                    break
                if response.status_code == 202:
                    item.job_ids.add(response.json()["id"])
                else:
                    assert response.status_code in (402, 429), response.text
        assert not ledger.errors, ledger.errors[:5]
        for item in ledger.sent:
            assert len(item.job_ids) <= 1, f"two jobs for key {item.key}: {item.job_ids}"

        answered = {job_id for item in ledger.sent for job_id in item.job_ids}
        assert len(answered) >= 5, "the workload made too few jobs to prove anything"
        # No job exists that no answer named (a committed job whose answer was lost and that
        # a resend with its key did not return).
        stored = jobs_in_database(data_dir)
        assert set(stored) == answered

        # Every job reaches a final status.
        for cycle_client in clients:
            cycle_client.close()
        with_server = [Client(server, c.account_id, c.key) for c in clients]
        finals: dict[str, dict] = {}
        for item in ledger.sent:
            for job_id in item.job_ids:
                finals[job_id] = with_server[item.account].wait(job_id, timeout=240)
        for job in finals.values():
            assert job["status"] in FINAL
            if job["status"] == "failed":
                # Every image here is valid: only a restart may fail a job. (processing_failed
                # would mean a needed upload was lost.)
                assert job["error"]["code"] == "interrupted", job
            if job["status"] == "succeeded":
                assert job["credits_charged"] == 1
        # Credits add up, for every account.
        for index, client in enumerate(with_server):
            mine = [
                finals[j] for item in ledger.sent if item.account == index for j in item.job_ids
            ]
            succeeded = sum(1 for job in mine if job["status"] == "succeeded")
            account = client.account_view()
            assert account["credits_held"] == 0 and account["active_jobs"] == 0, account
            assert account["credits_balance"] == INITIAL_CREDITS - succeeded, (account, succeeded)
        statuses = [job["status"] for job in finals.values()]
        errors = [job["error"]["code"] for job in finals.values() if job["error"]]
        print(
            f"crash test: {len(ledger.sent)} submissions, {len(lost)} lost and resent, "
            f"{len(finals)} jobs: {statuses.count('succeeded')} succeeded, "
            f"{statuses.count('failed')} failed {sorted(set(errors))}, "
            f"{ledger.downloads} downloads during the kills"
        )
        # Every result downloads whole.
        for item in ledger.sent:
            for job_id in item.job_ids:
                job = finals[job_id]
                if job["status"] != "succeeded":
                    continue
                download = with_server[item.account].get(f"/v1/jobs/{job_id}/result")
                assert download.status_code == 200
                assert len(download.content) == job["result"]["bytes"]
        # Nothing half-written or orphaned is left among the files: the workers' sweep
        # deletes what the kills left (temporary files, images of jobs that never
        # committed, results never recorded) once unneeded for a lease (4 s here).
        stored = jobs_in_database(data_dir)
        files = data_dir / "files"
        expected = {
            Path(key).name for _a, status, key in stored.values() if status == "succeeded" and key
        }
        deadline = time.monotonic() + 90
        while True:
            uploads = sorted(p.name for p in (files / "uploads").glob("*"))
            results = {p.name for p in (files / "results").glob("*")}
            if (uploads == [] and results == expected) or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert uploads == [], uploads
        assert results == expected, results ^ expected
        for client in with_server:
            client.close()
    finally:
        server.stop()


@pytest.mark.slow
def test_answer_lost_to_a_kill_is_safe_to_send_again(tmp_path: Path) -> None:
    """The whole request reaches the server, which dies before answering: the resend with the
    key gives one job either way (the first if it committed, else a fresh one)."""
    import socket

    from tests.reliability.http import body, content_type, file_part, text_part

    data_dir = tmp_path / "data"
    server = ServerProcess(data_dir, workers=0, **SETTINGS).start()
    client = new_account(server, 5, active_jobs_max=5)
    image = png()
    payload = body(file_part(image), text_part(b"format", b"svg"))
    head = (
        f"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {client.key}\r\n"
        f"Idempotency-Key: lost-1\r\nContent-Type: {content_type()}\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(head + payload)
            time.sleep(0.01)
            server.kill()
        server = ServerProcess(data_dir, workers=0, **SETTINGS).start()
        with Client(server, client.account_id, client.key) as again:
            first = again.submit(image, idempotency_key="lost-1", format="svg")
            assert first.status_code == 202, first.text
            second = again.submit(image, idempotency_key="lost-1", format="svg")
            assert second.status_code == 202 and second.headers["idempotent-replayed"] == "true"
            assert second.json()["id"] == first.json()["id"]
            assert list(jobs_in_database(data_dir)) == [first.json()["id"]]
            account = again.account_view()
            assert account["credits_held"] == 1 == account["active_jobs"]
    finally:
        client.close()
        server.stop()
