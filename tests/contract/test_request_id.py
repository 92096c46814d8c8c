"""`X-Request-Id` and the log format on the real server (docs/operations.md, "Logs" and
"Request ids"): echoed on every answer, made when absent or malformed, and carried into
the worker's lines about the job it submitted, with the account; JSON lines on request."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx

from tests.contract.support import Client, ServerProcess, cli, png

GENERATED = re.compile(r"req_[0-9a-f]{24}")
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def test_a_well_formed_id_is_echoed_on_every_answer(server: ServerProcess) -> None:
    http = server.http
    answers = [
        http.get("/healthz", headers={"X-Request-Id": "lb-1:a.b_c"}),
        http.get("/v1/account", headers={"X-Request-Id": "lb-1:a.b_c"}),  # 401
        http.get("/nowhere", headers={"X-Request-Id": "lb-1:a.b_c"}),  # 404
        http.delete("/v1/account", headers={"X-Request-Id": "lb-1:a.b_c"}),  # 405
        http.get("/v1/openapi.json", headers={"X-Request-Id": "lb-1:a.b_c"}),
        http.post("/v1/jobs", headers={"X-Request-Id": "lb-1:a.b_c"}),  # 401 from Litestar
    ]
    assert [a.headers.get("x-request-id") for a in answers] == ["lb-1:a.b_c"] * len(answers)
    assert [a.status_code for a in answers] == [200, 401, 404, 405, 200, 401]


def test_an_id_is_made_when_absent_or_malformed(client: Client) -> None:
    made = [client.get("/v1/account").headers["x-request-id"] for _ in range(3)]
    assert all(GENERATED.fullmatch(rid) for rid in made), made
    assert len(set(made)) == 3
    for bad in ("x" * 129, "has space", "", "a\tb", "ünï"):
        response = client.get("/v1/account", headers={"X-Request-Id": bad.encode()})
        assert response.status_code == 200
        assert GENERATED.fullmatch(response.headers["x-request-id"]), bad
    assert (
        client.get("/v1/account", headers={"X-Request-Id": "y" * 128}).headers["x-request-id"]
        == "y" * 128
    )


def _submit(client: Client, request_id: str) -> httpx.Response:
    files = {"image": ("picture.png", png(), "image/png")}
    headers = {"X-Request-Id": request_id}
    return client.post("/v1/jobs", files=files, data={"format": "svg"}, headers=headers)


def _quiet_server(tmp_path: Path, **settings: str) -> ServerProcess:
    """A server on a data directory made beforehand: no first-start banner in its log."""
    data_dir = tmp_path / "data"
    cli(data_dir, "db", "upgrade")
    # On PostgreSQL the data directory holds only files: make it look used, too.
    (data_dir / "files").mkdir(parents=True, exist_ok=True)
    return ServerProcess(data_dir, workers=1, **settings).start()


def _run_one_job(server: ServerProcess, request_id: str) -> tuple[Client, str]:
    client = server.account()
    submitted = _submit(client, request_id)
    assert submitted.status_code == 202, submitted.text
    assert submitted.headers["x-request-id"] == request_id
    job_id: str = submitted.json()["id"]
    assert client.wait(job_id)["status"] == "succeeded"
    return client, job_id


def _log_after_stop(server: ServerProcess) -> str:
    server.stop()
    return server.log_path.read_text()


def test_json_lines_carry_the_request_id_into_the_worker(tmp_path: Path) -> None:
    server = _quiet_server(tmp_path, PRINTJOB_LOG_FORMAT="json")
    try:
        client, job_id = _run_one_job(server, "checkout-42")
        key = client.key
        client.close()
    finally:
        log = _log_after_stop(server)
    entries = [json.loads(line) for line in log.splitlines() if line.strip()]
    assert all(RFC3339.fullmatch(e["time"]) for e in entries)
    about_job = [e for e in entries if e.get("job_id") == job_id]
    assert about_job, log[-3000:]
    assert {e["logger"] for e in about_job} == {"printjob.runner"}
    assert all(e["account_id"] == client.account_id for e in about_job)
    assert all(e["request_id"] == "checkout-42" for e in about_job)
    assert any("succeeded" in e["message"] for e in about_job)
    access = [e for e in entries if e["logger"] == "printjob.access"]
    submit = [e for e in access if e["method"] == "POST" and e["target"] == "/v1/jobs"]
    assert [e["request_id"] for e in submit] == ["checkout-42"]
    assert key not in log and key[5:] not in log


def test_text_lines_share_one_timestamp_format_and_name_the_job(tmp_path: Path) -> None:
    server = _quiet_server(tmp_path)
    try:
        client, job_id = _run_one_job(server, "trace-7")
        key = client.key
        client.close()
    finally:
        log = _log_after_stop(server)
    lines = [line for line in log.splitlines() if line.strip()]
    assert lines and all(RFC3339.match(line) for line in lines), log[-3000:]
    worker_lines = [line for line in lines if f"job_id={job_id}" in line]
    assert worker_lines
    assert all(
        f"account_id={client.account_id}" in line and "request_id=trace-7" in line
        for line in worker_lines
    )
    assert any(
        '"POST /v1/jobs HTTP/1.1" 202' in line and "request_id=trace-7" in line for line in lines
    )
    assert key not in log


def test_the_id_is_not_part_of_the_job_answer(client: Client) -> None:
    submitted = _submit(client, "shape-check")
    assert submitted.status_code == 202
    assert "request_id" not in submitted.text
    assert "shape-check" not in client.get(f"/v1/jobs/{submitted.json()['id']}").text


def test_a_head_refused_before_it_is_read_still_gets_a_made_id(server: ServerProcess) -> None:
    response = httpx.get(
        f"{server.base_url}/v1/account", headers={"X-Big": "a" * 65536, "X-Request-Id": "mine"}
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_parameter"
    assert GENERATED.fullmatch(response.headers["x-request-id"])
