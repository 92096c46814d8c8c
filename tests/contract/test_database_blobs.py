"""The real server with uploads and results in PostgreSQL (`PRINTJOB_BLOBS=database`):
submit, a worker converts, download; the upload goes when the job ends, the result when
it expires (then 410); nothing is written under the data directory's `files`."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import psycopg

from tests.contract.support import ServerProcess, assert_problem, png
from tests.postgres_support import database_for


def stored_keys(server: ServerProcess, job_id: str) -> list[str]:
    """The keys of the job's blobs in the server's database."""
    with psycopg.connect(database_for(server.data_dir)) as conn:
        rows = conn.execute(
            "SELECT key FROM blobs WHERE key LIKE %s ORDER BY key", (f"%{job_id}%",)
        ).fetchall()
    return [row[0] for row in rows]


def test_submit_convert_download_with_blobs_in_the_database(
    database_blobs_server: ServerProcess,
) -> None:
    with database_blobs_server.account(credits=3) as client:
        image = png(200, 150)
        submitted = client.submit(image, format="png", size="400x300")
        assert submitted.status_code == 202, submitted.text
        job_id = submitted.json()["id"]
        job = client.wait(job_id)
        assert job["status"] == "succeeded", job

        got = client.get(f"/v1/jobs/{job_id}/result")
        assert got.status_code == 200, got.text
        assert got.content.startswith(b"\x89PNG")
        assert len(got.content) == job["result"]["bytes"]
        # The upload went when the job ended; only the result is kept, in the database.
        assert stored_keys(database_blobs_server, job_id) == [f"results/{job_id}-1.png"]
        files = database_blobs_server.data_dir / "files"
        assert not files.exists() or not any(p.is_file() for p in files.rglob("*"))
        assert client.account_view()["credits_balance"] == 2


def test_an_expired_result_is_deleted_from_the_database_and_answers_410(
    database_blobs_server: ServerProcess,
) -> None:
    with database_blobs_server.account(credits=2) as client:
        job = client.wait(client.submit(format="svg").json()["id"])
        assert job["status"] == "succeeded", job
        assert stored_keys(database_blobs_server, job["id"]) == [f"results/{job['id']}-1.svg"]
        moment = datetime.fromisoformat(job["result"]["expires_at"].replace("Z", "+00:00"))
        time.sleep(max(0.0, (moment - datetime.now(UTC)).total_seconds()) + 0.3)
        assert_problem(client.get(f"/v1/jobs/{job['id']}/result"), 410, "result_expired")
        assert client.get(f"/v1/jobs/{job['id']}").json()["result"] is not None
        # The worker's sweep (every few seconds) deletes the row itself.
        deadline = time.monotonic() + 15
        while stored_keys(database_blobs_server, job["id"]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert stored_keys(database_blobs_server, job["id"]) == []
