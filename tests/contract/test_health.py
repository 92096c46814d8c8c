"""`GET /healthz` and `GET /readyz` on the real server (docs/operations.md, "Health
checks"): no key, outside `/v1`, JSON, and `/readyz` says why it is not ready."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx

from tests.contract.support import ServerProcess, assert_problem
from tests.contract.test_serve import _worker_pids


def ready_answer(server: ServerProcess, status: int, timeout: float = 20.0) -> httpx.Response:
    """Ask `/readyz` until it answers `status` (workers start in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        response = server.http.get("/readyz")
        if response.status_code == status or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def test_healthz_and_readyz_need_no_key_and_say_what_they_checked(
    server: ServerProcess,
) -> None:
    health = server.http.get("/healthz")
    assert health.status_code == 200
    assert health.headers["content-type"] == "application/json"
    assert health.headers["cache-control"] == "no-store"
    assert health.json() == {"status": "ok"}
    ready = ready_answer(server, 200)
    assert ready.status_code == 200, ready.text
    body = ready.json()
    assert body["status"] == "ready" and "reasons" not in body
    assert body["database"]["reachable"] is True
    assert body["database"]["schema_version"] == body["database"]["expected_schema_version"]
    assert body["workers"] == {"supervised": 1, "alive": 1, "api_only": False}
    assert body["queue"]["max_queue_depth"] == 1000
    assert body["queue"]["stale_running"] == 0


def test_only_get_and_only_the_exact_paths(server: ServerProcess) -> None:
    for method in ("HEAD", "POST", "DELETE", "OPTIONS"):
        for path in ("/healthz", "/readyz"):
            response = server.http.request(method, path)
            assert response.status_code == 405, (method, path)
            assert response.headers["allow"] == "GET"
            if method != "HEAD":
                assert_problem(response, 405, "method_not_allowed")
    for path in ("/healthz/", "/v1/healthz", "/readyz/x", "/health"):
        assert_problem(server.http.get(path), 404, "not_found")


def test_a_dead_worker_makes_the_server_not_ready_until_it_is_replaced(
    tmp_path: Path,
) -> None:
    server = ServerProcess(tmp_path / "data", workers=1).start()
    try:
        assert ready_answer(server, 200).status_code == 200
        assert server.process is not None
        (worker,) = _worker_pids(server.process.pid)
        os.kill(worker, signal.SIGKILL)
        down = ready_answer(server, 503, timeout=5)
        assert down.status_code == 503, down.text
        assert down.headers["retry-after"] == "5"
        assert down.headers["content-type"] == "application/json"
        body = down.json()
        assert body["status"] == "not_ready"
        assert [r["code"] for r in body["reasons"]] == ["workers_down"]
        assert body["reasons"][0]["detail"] == "0 of 1 worker processes are alive."
        # The supervisor starts a new worker: ready again.
        assert ready_answer(server, 200).status_code == 200
    finally:
        server.stop()


def test_an_api_only_server_is_ready_until_its_queue_is_full(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", workers=0, PRINTJOB_MAX_QUEUE_DEPTH="1").start()
    try:
        ready = server.http.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["workers"] == {"supervised": 0, "alive": 0, "api_only": True}
        with server.account() as client:
            assert client.submit().status_code == 202
        full = server.http.get("/readyz")
        assert full.status_code == 503
        assert full.headers["retry-after"] == "5"
        body = full.json()
        assert [r["code"] for r in body["reasons"]] == ["queue_full"]
        assert body["queue"]["queued"] == 1
        assert body["queue"]["oldest_queued_seconds"] >= 0
        assert server.http.get("/healthz").status_code == 200  # alive all the same
    finally:
        server.stop()
