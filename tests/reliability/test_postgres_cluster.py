"""Several processes on one PostgreSQL: two API processes (`printjob serve --workers 0`) and
three `printjob worker` processes sharing a database, with workers SIGKILLed at random while
jobs run and started again. Twice: with blobs as files in one shared data directory (the
shared blob volume), and with blobs in the database (`PRINTJOB_BLOBS=database`), where
every process has a data directory of its own and shares nothing but PostgreSQL.

Every job must end; credits must add up on every account (charged exactly the succeeded
jobs, nothing left held); no job may run to success twice (one result file per succeeded
job, one "succeeded" log line per job across all workers). Always on PostgreSQL, whatever
PRINTJOB_TEST_STORAGE says (tests/postgres_support.py provides the server; never skipped).
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.contract.support import FINAL, Client, ServerProcess, base_env, shaded_png
from tests.postgres_support import create_database, drop_database

HIGH = "1000000"
WORKERS = 3
ACCOUNTS = 4
JOBS_PER_ACCOUNT = 6
CREDITS = 5  # fewer than the jobs: some submissions must be refused with 402


class Worker:
    """One `printjob worker` process (its own session, so a kill reaches only it)."""

    def __init__(self, data_dir: Path, settings: dict[str, str], log_path: Path) -> None:
        self.data_dir = data_dir
        self.settings = settings
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = open(self.log_path, "ab")  # noqa: SIM115 - kept open for the process's life
        self.process = subprocess.Popen(
            [sys.executable, "-m", "printjob_http.cli", "worker"],
            env=base_env(self.data_dir, **self.settings),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=20)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(params=["files", "database"])
def cluster(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[list[ServerProcess], list[Worker], Path]]:
    blobs = str(request.param)
    url = create_database()
    settings = {
        "PRINTJOB_DATABASE_URL": url,
        "PRINTJOB_BLOBS": blobs,
        "PRINTJOB_SUBMISSIONS_PER_MINUTE": HIGH,
        "PRINTJOB_READS_PER_MINUTE": HIGH,
        # A killed worker's job is taken over within a few seconds.
        "PRINTJOB_LEASE_SECONDS": "3",
    }

    def data_dir(process: str) -> Path:
        # Files: one shared volume. Database: nothing shared on disk.
        return tmp_path / ("shared" if blobs == "files" else process) / "data"

    apis = [ServerProcess(data_dir(f"api-{n}"), workers=0, **settings) for n in range(2)]
    workers = [
        Worker(data_dir(f"worker-{n}"), settings, tmp_path / f"worker-{n}.log")
        for n in range(WORKERS)
    ]
    try:
        for api in apis:
            api.start()
        for worker in workers:
            worker.start()
        yield apis, workers, tmp_path
    finally:
        for worker in workers:
            worker.stop()
        for api in apis:
            api.stop()
        drop_database(url)


def _wait_all(clients: list[Client], jobs: dict[str, Client], timeout: float) -> dict[str, dict]:
    deadline = time.monotonic() + timeout
    final: dict[str, dict] = {}
    while len(final) < len(jobs):
        for job_id, client in jobs.items():
            if job_id in final:
                continue
            response = client.get(f"/v1/jobs/{job_id}")
            assert response.status_code == 200, response.text
            if response.json()["status"] in FINAL:
                final[job_id] = response.json()
        if time.monotonic() > deadline:
            left = {j for j in jobs if j not in final}
            raise AssertionError(f"{len(left)} job(s) never ended: {sorted(left)[:5]}")
        time.sleep(0.3)
    return final


def _result_keys(api: ServerProcess) -> list[str]:
    """Every stored result: files in the shared volume, or rows of the database."""
    if api.settings["PRINTJOB_BLOBS"] == "files":
        return [path.name for path in (api.data_dir / "files" / "results").glob("*")]
    with psycopg.connect(api.settings["PRINTJOB_DATABASE_URL"]) as conn:
        rows = conn.execute("SELECT key FROM blobs WHERE key LIKE 'results/%'").fetchall()
    return [row[0].removeprefix("results/") for row in rows]


def _attempts(api: ServerProcess, job_ids: list[str]) -> dict[str, int]:
    """How many times each job was started (from the database: not in the API's view)."""
    with psycopg.connect(api.settings["PRINTJOB_DATABASE_URL"]) as conn:
        rows = conn.execute(
            "SELECT id, attempts FROM jobs WHERE id = ANY(%s)", (job_ids,)
        ).fetchall()
    return {row[0]: row[1] for row in rows}


@pytest.mark.slow
def test_two_apis_three_workers_survive_random_kills(
    cluster: tuple[list[ServerProcess], list[Worker], Path],
) -> None:
    apis, workers, logs = cluster
    rng = random.Random(20261122)
    accounts: list[tuple[Client, Client]] = []
    for _ in range(ACCOUNTS):
        # Created through one API, used through both: they share the database.
        first = apis[0].account(credits=CREDITS, active_jobs_max=10)
        second = Client(apis[1], first.account_id, first.key)
        accounts.append((first, second))

    jobs: dict[str, Client] = {}
    refused = 0
    for n in range(JOBS_PER_ACCOUNT):
        for first, second in accounts:
            via = first if n % 2 == 0 else second
            # Shaded art, so that every job runs for seconds however fast the engine's
            # flat-art path gets (flat shapes of this size had come down to 0.6 s, and
            # every job could end before the first kill): the kills must find jobs running.
            image = shaded_png(1500 + 8 * n, 500)
            response = via.submit(image, idempotency_key=f"k-{n}", format="svg")
            if response.status_code == 402:
                refused += 1
                continue
            assert response.status_code == 202, response.text
            # The same key through the other API process is a replay of the same job.
            other = second if via is first else first
            replay = other.submit(image, idempotency_key=f"k-{n}", format="svg")
            assert replay.status_code == 202, replay.text
            assert replay.headers.get("idempotent-replayed") == "true"
            assert replay.json()["id"] == response.json()["id"]
            jobs[response.json()["id"]] = other
    assert len(jobs) == ACCOUNTS * CREDITS
    assert refused == ACCOUNTS * (JOBS_PER_ACCOUNT - CREDITS)

    # Kill workers at random while the jobs run; start them again.
    clients = [client for pair in accounts for client in pair]
    kills = 0
    deadline = time.monotonic() + 25
    while time.monotonic() < deadline and kills < 8:
        time.sleep(rng.uniform(0.8, 2.5))
        victim = rng.choice(workers)
        victim.kill()
        kills += 1
        victim.start()
        running = [
            job_id
            for job_id, client in jobs.items()
            if client.get(f"/v1/jobs/{job_id}").json()["status"] in ("queued", "running")
        ]
        if not running:
            break

    final = _wait_all(clients, jobs, timeout=240)
    attempts = _attempts(apis[0], list(jobs))
    print(f"kills={kills} attempts={sorted(attempts.values())}")
    assert kills >= 3 and max(attempts.values()) >= 2, "kills must hit running jobs"

    statuses = [job["status"] for job in final.values()]
    assert set(statuses) <= {"succeeded", "failed"}, statuses
    for job in final.values():
        if job["status"] == "failed":
            # only ever for running out of attempts after kills
            assert job["error"]["code"] == "interrupted", job
    succeeded = {job_id for job_id, job in final.items() if job["status"] == "succeeded"}
    assert succeeded, "some jobs must succeed"

    # Credits add up on every account, seen from either API process.
    for first, second in accounts:
        mine = {j for j, client in jobs.items() if client.account_id == first.account_id}
        charged = len(mine & succeeded)
        for client in (first, second):
            view = client.account_view()
            assert view["credits_held"] == 0, view
            assert view["credits_balance"] == CREDITS - charged, (view, charged)
        for job_id in mine:
            expected = 1 if job_id in succeeded else 0
            assert final[job_id]["credits_charged"] == expected

    # Each succeeded job's file downloads, from either API process.
    for job_id in sorted(succeeded)[:4]:
        for api in apis:
            owner = jobs[job_id]
            got = httpx.get(
                f"{api.base_url}/v1/jobs/{job_id}/result",
                headers={"Authorization": f"Bearer {owner.key}"},
                timeout=30,
            )
            assert got.status_code == 200 and got.content.startswith(b"<?xml")

    # No job ran to success twice: one result file per succeeded job, one success line.
    per_job: dict[str, int] = {}
    for name in _result_keys(apis[0]):
        match = re.match(r"(job_[0-9a-f]{32})-\d+\.svg$", name)
        assert match, name
        per_job[match.group(1)] = per_job.get(match.group(1), 0) + 1
    assert set(per_job) == succeeded and set(per_job.values()) == {1}
    if apis[0].settings["PRINTJOB_BLOBS"] == "database":
        # Nothing was stored on any process's disk; uploads went when their jobs ended.
        for data_dir in [api.data_dir for api in apis] + [w.data_dir for w in workers]:
            files = data_dir / "files"
            assert not files.exists() or not any(p.is_file() for p in files.rglob("*"))
        with psycopg.connect(apis[0].settings["PRINTJOB_DATABASE_URL"]) as conn:
            uploads = conn.execute("SELECT count(*) FROM blobs WHERE key LIKE 'uploads/%'")
            assert uploads.fetchone() == (0,)
    lines = "".join(path.read_text(errors="replace") for path in logs.glob("worker-*.log"))
    for job_id in succeeded:
        assert lines.count(f"job {job_id}: succeeded") <= 1, job_id
    for client in clients:
        client.close()
