"""`GET /metrics` on the real server (docs/operations.md, "Metrics"): only with the
token, in the Prometheus text format, and counting what worker processes did."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.contract.support import ServerProcess, assert_problem, png

TOKEN = "scrape-0123456789abcdef"


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the exposition (0 when absent)."""
    for line in text.splitlines():
        match = re.fullmatch(r"([a-z_]+)(?:\{(.*)\})? (\S+)", line)
        if match is None or match.group(1) != name:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2) or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(match.group(3))
    return 0.0


@pytest.fixture(scope="module")
def metered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    data_dir: Path = tmp_path_factory.mktemp("metered") / "data"
    server = ServerProcess(data_dir, workers=1, PRINTJOB_METRICS_TOKEN=TOKEN).start()
    try:
        yield server
    finally:
        server.stop()


def scrape(server: ServerProcess) -> str:
    response = server.http.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return response.text


def test_without_the_setting_there_is_no_metrics(server: ServerProcess) -> None:
    assert_problem(server.http.get("/metrics"), 404, "not_found")
    response = server.http.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert_problem(response, 404, "not_found")


def test_only_the_token_opens_it(metered: ServerProcess) -> None:
    http = metered.http
    assert_problem(http.get("/metrics"), 401, "unauthenticated")
    for wrong in (f"Bearer {TOKEN}x", TOKEN, f"Basic {TOKEN}", "Bearer"):
        response = http.get("/metrics", headers={"Authorization": wrong})
        assert_problem(response, 401, "unauthenticated")
        assert response.headers["www-authenticate"].startswith("Bearer realm=")
    assert http.post("/metrics").status_code == 405


def test_a_job_a_worker_process_ran_shows_up(metered: ServerProcess) -> None:
    with metered.account(credits=5) as client:
        submitted = client.submit(png())
        assert submitted.status_code == 202
        job = client.wait(submitted.json()["id"])
        assert job["status"] == "succeeded"
        assert client.get("/v1/jobs/job_" + "0" * 32).status_code == 404
    text = scrape(metered)
    assert all(line.startswith(("# ", "printjob_")) for line in text.splitlines() if line), (
        "every metric is named printjob_"
    )
    # Counted in the worker process:
    assert sample(text, "printjob_jobs_finished_total", status="succeeded", error_code="") >= 1
    assert sample(text, "printjob_credits_charged_total") >= 1
    assert sample(text, "printjob_engine_seconds_per_megapixel_count") >= 1
    assert sample(text, "printjob_job_phase_seconds_count", phase="analysing") >= 1
    # Counted in the API process:
    assert sample(text, "printjob_credits_held_total") >= 1
    assert sample(text, "printjob_http_requests_total", route="jobs", method="POST", status="202")
    assert sample(text, "printjob_http_requests_total", route="job", method="GET", status="404")
    assert sample(text, "printjob_http_request_duration_seconds_count", route="job") >= 2
    assert sample(text, "printjob_refusals_total", code="not_found") >= 1
    # Read from storage at scrape time:
    assert "printjob_queue_depth 0.0" in text
    assert "printjob_queue_oldest_age_seconds 0.0" in text
    assert "printjob_jobs_stalled 0.0" in text
    assert TOKEN not in metered.log()
