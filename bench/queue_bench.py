"""The fair queue's claim time with a deep queue, on SQLite and PostgreSQL.

    .venv/bin/python bench/queue_bench.py [--queued 1000] [--accounts 50] [--history 20000]

`--queued` jobs queued across `--accounts` accounts, a few running, and `--history`
finished jobs spread over the same accounts (the tie-break looks at when each account's
last job ended). Times `jobs.next_queued()` (the fair order, with its row lock) in a unit
of work that is rolled back, so every claim sees the same queue, against the former
oldest-first query. PostgreSQL comes from `PRINTJOB_TEST_DATABASE_URL` or
`.ci/postgres-up`, in a fresh database. Figures go into docs/operations.md by hand.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from printjob_adapters.postgres import open_storage as open_postgres  # noqa: E402
from printjob_adapters.sqlite import open_storage as open_sqlite  # noqa: E402
from printjob_core.model import Account, Job, JobOptions, JobStatus, OutputFormat, Phase  # noqa: E402

T0 = datetime(2026, 1, 1, tzinfo=UTC)
FIFO = "SELECT id FROM jobs WHERE status = 'queued' ORDER BY seq LIMIT 1"


def fill(storage: Any, queued: int, accounts: int, history: int) -> None:
    ids = [f"acct_{n:024x}" for n in range(accounts)]
    with storage.unit_of_work() as uow:
        for acct in ids:
            uow.accounts.add(Account(id=acct, created_at=T0, credits_balance=10**6))
        uow.commit()
    n = 0

    def add(uow: Any, account_id: str, **changes: Any) -> None:
        nonlocal n
        n += 1
        job = Job(
            id=f"job_{n:032x}",
            account_id=account_id,
            status=JobStatus.QUEUED,
            phase=Phase.QUEUED,
            progress=0,
            created_at=T0 + timedelta(seconds=n),
            finished_at=None,
            options=JobOptions(format=OutputFormat.SVG),
        )
        for key, value in changes.items():
            job = __import__("attrs").evolve(job, **{key: value})
        uow.jobs.add(job)

    with storage.unit_of_work() as uow:
        for i in range(history):
            at = T0 + timedelta(seconds=i)
            add(uow, ids[i % accounts], status=JobStatus.SUCCEEDED, phase=None, finished_at=at)
        for i in range(2):
            add(uow, ids[i], status=JobStatus.RUNNING, phase=Phase.BUILDING)
        for i in range(queued):
            add(uow, ids[(i * 7) % accounts])
        uow.commit()


def timed(storage: Any, claims: int, fair: bool) -> list[float]:
    times = []
    for _ in range(claims):
        started = time.perf_counter()
        with storage.unit_of_work() as uow:
            found = uow.jobs.next_queued() if fair else uow.jobs._one(FIFO)
            assert found is not None
        times.append((time.perf_counter() - started) * 1000)
    return times


def report(name: str, storage: Any, claims: int) -> None:
    for label, fair in (("oldest first (before)", False), ("fair (now)", True)):
        times = sorted(timed(storage, claims, fair))
        median = statistics.median(times)
        p95 = times[int(len(times) * 0.95) - 1]
        print(f"{name:10} {label:22} median {median:6.2f} ms  p95 {p95:6.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queued", type=int, default=1000)
    parser.add_argument("--accounts", type=int, default=50)
    parser.add_argument("--history", type=int, default=20000)
    parser.add_argument("--claims", type=int, default=200)
    args = parser.parse_args()
    print(f"{args.queued} queued jobs, {args.accounts} accounts, {args.history} finished jobs")
    with tempfile.TemporaryDirectory() as tmp:
        storage = open_sqlite(Path(tmp) / "bench.sqlite3")
        fill(storage, args.queued, args.accounts, args.history)
        report("SQLite", storage, args.claims)
        storage.close()
    url = (
        os.environ.get("PRINTJOB_TEST_DATABASE_URL")
        or subprocess.run(
            [str(ROOT / ".ci" / "postgres-up")], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    from tests.postgres_support import create_database, drop_database

    os.environ["PRINTJOB_TEST_DATABASE_URL"] = url
    database = create_database(f"pjbench_{uuid.uuid4().hex[:12]}")
    try:
        postgres = open_postgres(database)
        fill(postgres, args.queued, args.accounts, args.history)
        with postgres.unit_of_work() as uow:
            jobs: Any = uow.jobs
            jobs._change("ANALYZE jobs", ())
            uow.commit()
        report("PostgreSQL", postgres, args.claims)
        postgres.close()
    finally:
        drop_database(database)


if __name__ == "__main__":
    main()
