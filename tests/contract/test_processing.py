"""Contract sections 1, 3 and 4.4 with real processing: files, progress, cancel, expiry."""

from __future__ import annotations

import io
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import pytest
from PIL import Image

from tests.contract.support import (
    Client,
    ServerProcess,
    assert_problem,
    busy_png,
    png,
)

MEDIA_TYPES = {
    "svg": "image/svg+xml",
    "pdf": "application/pdf",
    "eps": "application/postscript",
    "png": "image/png",
}


def check_file(fmt: str, data: bytes) -> None:
    if fmt == "svg":
        root = ET.fromstring(data)
        assert root.tag.endswith("svg")
    elif fmt == "pdf":
        assert data.startswith(b"%PDF")
    elif fmt == "eps":
        assert data.startswith(b"%!PS-Adobe-3.0 EPSF-3.0")
    else:
        image = Image.open(io.BytesIO(data))
        assert image.format == "PNG"
        dpi = image.info["dpi"]
        assert round(dpi[0]) == 300 and round(dpi[1]) == 300


@pytest.mark.parametrize("fmt", ["svg", "pdf", "eps", "png"])
def test_happy_path(client: Client, fmt: str) -> None:
    """Contract 1 and 4.1-4.5: submit, poll, download; 1 credit charged; file as promised."""
    size = {"png": "600x600"}.get(fmt, "original")
    submitted = client.submit(png(), idempotency_key=f"happy-{fmt}", format=fmt, size=size)
    assert submitted.status_code == 202
    job = client.wait(submitted.json()["id"])
    assert job["status"] == "succeeded", job
    assert job["phase"] == "finishing" and job["progress"] == 100
    assert job["credits_charged"] == 1 and job["error"] is None
    assert job["finished_at"] is not None
    result = job["result"]
    assert result["format"] == fmt
    assert result["url"] == f"{client.server.base_url}/v1/jobs/{job['id']}/result"
    assert result["colors"] >= 1
    assert result["background_removed"] is False
    if fmt == "png":
        assert (result["width"], result["height"]) == (600, 600)
    final = client.get(f"/v1/jobs/{job['id']}")
    assert "retry-after" not in final.headers

    download = client.get(result["url"])
    assert download.status_code == 200
    assert download.headers["content-type"].split(";")[0] == MEDIA_TYPES[fmt]
    assert download.headers["content-disposition"] == f'attachment; filename="{job["id"]}.{fmt}"'
    assert download.headers["x-content-type-options"] == "nosniff"
    assert len(download.content) == result["bytes"]
    check_file(fmt, download.content)
    # Contract 1.6: the uploaded image is deleted when the job ends.
    assert not (client.server.data_dir / "files" / "uploads" / job["id"]).exists()

    account = client.account_view()
    assert account["credits_balance"] == 9
    assert account["credits_held"] == 0
    assert account["active_jobs"] == 0


def test_print_png_original_is_the_print_canvas(client: Client) -> None:
    """Contract 4.1: a png with size original is 4500 x 5400 at 300 dpi."""
    job = client.wait(client.submit(format="png").json()["id"])
    assert job["status"] == "succeeded", job
    assert (job["result"]["width"], job["result"]["height"]) == (4500, 5400)
    data = client.get(job["result"]["url"]).content
    image = Image.open(io.BytesIO(data))
    assert image.size == (4500, 5400)
    check_file("png", data)


def test_succeeded_job_cannot_be_canceled(client: Client) -> None:
    """Contract 4.3 and 3: canceling a succeeded job -> 409 job_not_cancelable, unchanged."""
    job = client.wait(client.submit().json()["id"])
    assert job["status"] == "succeeded"
    assert_problem(client.post(f"/v1/jobs/{job['id']}/cancel"), 409, "job_not_cancelable")
    assert client.get(f"/v1/jobs/{job['id']}").json() == job
    assert client.account_view()["credits_balance"] == 9


def test_progress_rises_through_phases(server: ServerProcess) -> None:
    """Contract 2.1 and design 14: phases queued -> analysing -> building -> finishing,
    progress never goes down, running answers carry Retry-After: 3."""
    order = ["queued", "analysing", "building", "finishing"]
    with server.account(credits=5) as client:
        job_id = client.submit(busy_png(), format="png").json()["id"]
        seen: list[tuple[str, int | None, str]] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            response = client.get(f"/v1/jobs/{job_id}")
            if response.status_code == 429:
                time.sleep(int(response.headers["retry-after"]))
                continue
            job = response.json()
            seen.append((job["phase"], job["progress"], response.headers.get("retry-after", "")))
            if job["status"] in ("succeeded", "failed", "canceled"):
                break
            if job["status"] == "running":
                assert response.headers["retry-after"] == "3"
            time.sleep(0.2)
        assert job["status"] == "succeeded", job
        phases = [phase for phase, _, _ in seen]
        ranks = [order.index(p) for p in phases]
        assert ranks == sorted(ranks), phases
        progress = [p for _, p, _ in seen]
        assert progress == sorted(progress), progress
        assert progress[-1] == 100
        assert len(set(phases)) >= 2, seen


def test_cancel_running_job_charges_nothing(server: ServerProcess) -> None:
    """Contract 4.3 and 3: a running job canceled -> canceled, nothing charged, hold back."""
    with server.account(credits=5) as client:
        for _attempt in range(3):
            job_id = client.submit(busy_png(), format="png").json()["id"]
            client.wait(job_id, until=("running", "succeeded", "failed", "canceled"))
            response = client.post(f"/v1/jobs/{job_id}/cancel")
            if response.status_code == 409:  # it finished first: try a new one
                continue
            assert response.status_code == 200
            assert response.json()["status"] == "canceled"
            break
        else:
            pytest.fail("every job finished before it could be canceled")
        time.sleep(1.5)  # let the worker notice and stop
        job = client.get(f"/v1/jobs/{job_id}").json()
        assert job["status"] == "canceled"
        assert job["credits_charged"] == 0 and job["result"] is None
        account = client.account_view()
        assert account["credits_held"] == 0
        charged = 5 - account["credits_balance"]
        assert charged == _attempt  # only the jobs that had already succeeded were charged


def test_failed_job_costs_nothing(server: ServerProcess) -> None:
    """Contract 1.3 and 2.4: an image that cannot be processed fails with processing_failed."""
    # A valid header with truncated pixel data passes the probe but cannot be decoded.
    data = png(256, 256)
    broken = data[: len(data) // 2]
    with server.account(credits=3) as client:
        response = client.submit(broken)
        assert response.status_code == 202, response.text
        job = client.wait(response.json()["id"])
        assert job["status"] == "failed"
        assert job["error"]["code"] == "processing_failed"
        assert job["error"]["detail"]
        assert job["phase"] is None and job["progress"] is None
        assert job["credits_charged"] == 0 and job["result"] is None
        assert_problem(client.get(f"/v1/jobs/{job['id']}/result"), 409, "result_not_ready")
        assert_problem(client.post(f"/v1/jobs/{job['id']}/cancel"), 409, "job_not_cancelable")
        account = client.account_view()
        assert (account["credits_balance"], account["credits_held"]) == (3, 0)


def test_expired_result_is_410_but_job_stays_readable(expiring_server: ServerProcess) -> None:
    """Contract 1.6 and 4.4: after retention the file is gone (410); the job, result
    included, stays readable."""
    with expiring_server.account(credits=2) as client:
        job = client.wait(client.submit().json()["id"])
        assert job["status"] == "succeeded", job
        expires = job["result"]["expires_at"]
        results_dir = expiring_server.data_dir / "files" / "results"
        kept = list(results_dir.glob(f"{job['id']}*"))
        assert kept, "the result file should exist until it expires"
        moment = datetime.fromisoformat(expires.replace("Z", "+00:00"))
        time.sleep(max(0.0, (moment - datetime.now(UTC)).total_seconds()) + 0.3)
        assert_problem(client.get(f"/v1/jobs/{job['id']}/result"), 410, "result_expired")
        again = client.get(f"/v1/jobs/{job['id']}")
        assert again.status_code == 200
        assert again.json()["result"]["expires_at"] == expires
        assert again.json()["status"] == "succeeded"
        # The sweep (every few seconds) deletes the file itself.
        results = results_dir
        deadline = time.monotonic() + 15
        while list(results.glob(f"{job['id']}*")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not list(results.glob(f"{job['id']}*"))
