"""Contract 4.6: a client generated from the served description works against the server.

openapi-python-client (what a Python developer reaches for) generates a package from
`/v1/openapi.json` as served, with no warning: no answer left out, no schema it cannot
type. That package then submits an image as a binary file part, polls the job, downloads
the file, cancels a job, and parses error answers as its typed `Problem`, all against the
real server.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from xml.etree import ElementTree

import pytest
from PIL import Image

from printjob_core.keys import KEY_PREFIX
from tests.contract.support import FINAL, Client, ServerProcess, png

PACKAGE = "printjob_api_client"


@pytest.fixture(scope="module")
def generated(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The package openapi-python-client generates from the served description, imported."""
    workdir = tmp_path_factory.mktemp("generated")
    document = workdir / "openapi.json"
    document.write_text(json.dumps(server.http.get("/v1/openapi.json").json()))
    bin_dir = str(Path(sys.executable).parent)
    # The generator's post-hooks run ruff: the one installed beside this interpreter.
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    output = workdir / "client"
    run = subprocess.run(
        [
            str(Path(bin_dir) / "openapi-python-client"),
            "generate",
            "--path",
            str(document),
            "--output-path",
            str(output),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    said = run.stdout + run.stderr
    assert run.returncode == 0, said
    assert "warning" not in said.lower(), said
    assert "skipping" not in said.lower(), said  # every post-hook ran
    assert "error" not in said.lower(), said
    sys.path.insert(0, str(output))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(output))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def _api(generated: ModuleType, name: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.api.{name}")


def _models(generated: ModuleType) -> Any:
    return importlib.import_module(f"{PACKAGE}.models")


def _authenticated(generated: Any, client: Client, key: str | None = None) -> Any:
    return generated.AuthenticatedClient(
        base_url=client.server.base_url, token=key or client.key, timeout=30.0
    )


def _submission(generated: ModuleType, image: bytes, **options: Any) -> Any:
    models = _models(generated)
    types = importlib.import_module(f"{PACKAGE}.types")
    picture = types.File(payload=io.BytesIO(image), file_name="logo.png", mime_type="image/png")
    return models.JobSubmission(image=picture, **options)


def _poll(generated: ModuleType, api: Any, job_id: str, timeout: float = 90.0) -> Any:
    get_job = _api(generated, "jobs.get_job")
    deadline = time.monotonic() + timeout
    while True:
        answer = get_job.sync_detailed(job_id, client=api)
        assert answer.status_code == 200, answer.content
        job = answer.parsed
        if job.status.value in FINAL:
            return job
        assert time.monotonic() < deadline, f"{job_id} still {job.status.value}"
        time.sleep(min(0.5, float(answer.headers.get("retry-after", "1"))))


def test_generated_client_submits_polls_and_downloads(
    generated: ModuleType, client: Client
) -> None:
    """Submit a PNG as the binary part, poll to success, download the print PNG."""
    models = _models(generated)
    submit = _api(generated, "jobs.submit_job")
    api = _authenticated(generated, client)
    body = _submission(
        generated,
        png(),
        format_=models.JobSubmissionFormat.PNG,
        size="200x100",
        dpi=150,
        colors=2,
        background=models.JobSubmissionBackground.KEEP,
    )
    answer = submit.sync_detailed(client=api, body=body, idempotency_key="generated-client-1")
    assert answer.status_code == 202, answer.content
    job = answer.parsed
    assert isinstance(job, models.Job)
    assert job.status is models.JobStatus.QUEUED
    assert job.options.format_ is models.JobOptionsFormat.PNG
    assert job.options.size == "200x100"
    assert job.options.colors == 2
    assert answer.headers["location"].endswith(f"/v1/jobs/{job.id}")

    done = _poll(generated, api, job.id)
    assert done.status is models.JobStatus.SUCCEEDED, done.to_dict()
    assert isinstance(done.result, models.JobResult)
    assert done.result.format_ is models.JobResultFormat.PNG
    assert done.credits_charged == 1

    download = _api(generated, "jobs.get_job_result").sync_detailed(job.id, client=api)
    assert download.status_code == 200
    data = download.parsed.payload.read()
    assert len(data) == done.result.bytes_
    with Image.open(io.BytesIO(data)) as picture:
        assert picture.format == "PNG"
        assert picture.size == (done.result.width, done.result.height)

    account = _api(generated, "account.get_account").sync(client=api)
    assert isinstance(account, models.Account)
    assert account.credits_balance == 9
    assert account.limits.job_cost == 1


def test_generated_client_downloads_an_svg(generated: ModuleType, client: Client) -> None:
    """A submission with only the required fields, downloaded and parsed as SVG."""
    models = _models(generated)
    api = _authenticated(generated, client)
    body = _submission(generated, png(), format_=models.JobSubmissionFormat.SVG)
    job = _api(generated, "jobs.submit_job").sync(client=api, body=body)
    assert isinstance(job, models.Job), job
    assert job.options.size == "original"
    assert _poll(generated, api, job.id).status is models.JobStatus.SUCCEEDED
    download = _api(generated, "jobs.get_job_result").sync(job.id, client=api)
    root = ElementTree.fromstring(download.payload.read())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"


def test_generated_client_cancels_a_job(generated: ModuleType, idle_client: Client) -> None:
    """On a server with no workers the job stays queued until the client cancels it."""
    models = _models(generated)
    api = _authenticated(generated, idle_client)
    body = _submission(generated, png(), format_=models.JobSubmissionFormat.PDF)
    job = _api(generated, "jobs.submit_job").sync(client=api, body=body)
    assert isinstance(job, models.Job), job
    canceled = _api(generated, "jobs.cancel_job").sync(job.id, client=api)
    assert isinstance(canceled, models.Job), canceled
    assert canceled.status is models.JobStatus.CANCELED
    assert canceled.credits_charged == 0
    again = _api(generated, "jobs.get_job").sync(job.id, client=api)
    assert again.status is models.JobStatus.CANCELED

    not_ready = _api(generated, "jobs.get_job_result").sync(job.id, client=api)
    assert isinstance(not_ready, models.Problem)
    assert (not_ready.status, not_ready.code) == (409, "result_not_ready")


def test_generated_client_parses_problems(generated: ModuleType, client: Client) -> None:
    """A wrong key and a wrong field come back as the typed Problem."""
    models = _models(generated)
    submit = _api(generated, "jobs.submit_job")
    stranger = _authenticated(generated, client, key=KEY_PREFIX + "x" * 38)
    refused = _api(generated, "account.get_account").sync_detailed(client=stranger)
    assert refused.status_code == 401
    assert isinstance(refused.parsed, models.Problem)
    assert refused.parsed.code == "unauthenticated"
    assert refused.headers["www-authenticate"].startswith("Bearer realm=")

    api = _authenticated(generated, client)
    body = _submission(generated, png(), format_=models.JobSubmissionFormat.SVG, size="0x0")
    wrong = submit.sync_detailed(client=api, body=body)
    assert wrong.status_code == 400
    assert isinstance(wrong.parsed, models.Problem)
    assert (wrong.parsed.code, wrong.parsed.param) == ("invalid_parameter", "size")

    body = _submission(generated, b"not an image", format_=models.JobSubmissionFormat.SVG)
    unreadable = submit.sync_detailed(client=api, body=body)
    assert isinstance(unreadable.parsed, models.Problem)
    assert (unreadable.parsed.status, unreadable.parsed.code) == (422, "unsupported_image")

    missing = _api(generated, "jobs.get_job").sync("job_" + "0" * 32, client=api)
    assert isinstance(missing, models.Problem)
    assert missing.code == "not_found"
    assert missing.type_.endswith("#error-not_found")
    assert client.account_view()["credits_held"] == 0
