"""Throughput of printjob on PostgreSQL with several processes on this machine.

    .venv/bin/python bench/cluster_bench.py [--jobs 24] [--workers 1,2,4] [--seconds 8]

1. Jobs per minute with 1, 2 and 4 `printjob worker` processes: N jobs are queued first
   (through an API process with `--workers 0`), then the workers are started and the
   clock runs until the last job is final.
2. API reads per second (`GET /v1/jobs/{id}`, authenticated, rate limit raised) with one
   and with two `printjob serve --workers 0` processes on one database, from 32 concurrent
   connections of an asyncio client in this process.

PostgreSQL comes from `PRINTJOB_TEST_DATABASE_URL` or `.ci/postgres-up`; every run uses a
fresh database. Figures are written to docs/operations.md by hand ("Several machines").
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.contract.support import ServerProcess  # noqa: E402
from tests.postgres_support import create_database, drop_database  # noqa: E402
from tests.reliability.test_postgres_cluster import Worker  # noqa: E402

HIGH = "1000000000"


def picture(n: int, size: int = 900) -> bytes:
    """A poster-like picture: bands and discs in 6 colours (a typical job, ~1-2 s)."""
    image = Image.new("RGB", (size, size * 3 // 4), (250, 248, 240))
    draw = ImageDraw.Draw(image)
    colours = [(200, 30, 40), (20, 90, 180), (240, 190, 20), (30, 140, 70), (40, 40, 40)]
    for i in range(18):
        c = colours[(i + n) % len(colours)]
        x, y = (i * 97 + n * 13) % size, (i * 61) % (size * 3 // 4)
        draw.ellipse((x, y, x + 120 + i * 3, y + 90 + i * 2), fill=c)
    draw.rectangle((0, 0, size, 40 + n % 7), fill=colours[n % 5])
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def settings_for(url: str) -> dict[str, str]:
    return {
        "PRINTJOB_DATABASE_URL": url,
        "PRINTJOB_SUBMISSIONS_PER_MINUTE": HIGH,
        "PRINTJOB_READS_PER_MINUTE": HIGH,
        "PRINTJOB_MAX_QUEUE_DEPTH": "100000",
    }


def jobs_per_minute(workers: int, jobs: int, root: Path) -> float:
    url = create_database()
    data_dir = root / f"jobs-{workers}" / "data"
    settings = settings_for(url)
    api = ServerProcess(data_dir, workers=0, **settings).start()
    procs: list[Worker] = []
    try:
        client = api.account(credits=jobs, active_jobs_max=10)
        ids: list[str] = []
        # active_jobs_max is at most 10: use several accounts.
        clients = [client] + [
            api.account(credits=jobs, active_jobs_max=10) for _ in range((jobs - 1) // 10)
        ]
        for n in range(jobs):
            response = clients[n // 10].submit(picture(n), format="svg")
            assert response.status_code == 202, response.text
            ids.append(response.json()["id"])
        started = time.monotonic()
        procs = [
            Worker(data_dir, settings, root / f"jobs-{workers}-w{n}.log") for n in range(workers)
        ]
        for proc in procs:
            proc.start()
        for n, job_id in enumerate(ids):
            job = clients[n // 10].wait(job_id, timeout=900)
            assert job["status"] == "succeeded", job
        elapsed = time.monotonic() - started
    finally:
        for proc in procs:
            proc.stop()
        api.stop()
        drop_database(url)
    return jobs / elapsed * 60


async def _hammer(urls: list[str], key: str, job_id: str, seconds: float) -> float:
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    headers = {"Authorization": f"Bearer {key}"}
    clients = [
        httpx.AsyncClient(base_url=u, headers=headers, limits=limits, timeout=30) for u in urls
    ]
    done = 0
    stop_at = time.monotonic() + seconds

    async def loop(n: int) -> None:
        nonlocal done
        client = clients[n % len(clients)]
        while time.monotonic() < stop_at:
            response = await client.get(f"/v1/jobs/{job_id}")
            assert response.status_code == 200, response.text
            done += 1

    started = time.monotonic()
    await asyncio.gather(*(loop(n) for n in range(32)))
    elapsed = time.monotonic() - started
    for client in clients:
        await client.aclose()
    return done / elapsed


def reads_per_second(apis: int, seconds: float, root: Path) -> float:
    url = create_database()
    data_dir = root / f"reads-{apis}" / "data"
    servers = [ServerProcess(data_dir, workers=0, **settings_for(url)) for _ in range(apis)]
    try:
        for server in servers:
            server.start()
        client = servers[0].account(credits=5)
        response = client.submit(picture(1), format="svg")
        job_id = response.json()["id"]
        asyncio.run(_hammer([s.base_url for s in servers], client.key, job_id, 1.0))  # warm
        return asyncio.run(_hammer([s.base_url for s in servers], client.key, job_id, seconds))
    finally:
        for server in servers:
            server.stop()
        drop_database(url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=24)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    print(f"machine: {cores} core(s); PostgreSQL on loopback")
    with tempfile.TemporaryDirectory(prefix="printjob-cluster-bench-") as tmp:
        root = Path(tmp)
        for workers in (int(w) for w in args.workers.split(",")):
            rate = jobs_per_minute(workers, args.jobs, root)
            print(
                f"jobs/min with {workers} worker process(es): {rate:7.1f} "
                f"({rate / min(workers, cores):6.1f} per busy core)",
                flush=True,
            )
        for apis in (1, 2):
            rate = reads_per_second(apis, args.seconds, root)
            print(f"API reads/s with {apis} API process(es): {rate:7.0f}", flush=True)


if __name__ == "__main__":
    main()
