"""Contract 4.6: the served OpenAPI document describes every answer the server gives.

schemathesis generates requests from the document served by the running server (valid
and invalid ones) and runs every one of its checks on each answer: no 5xx, status,
content type, headers and body as documented, valid data accepted and invalid data
refused, a missing or wrong key refused with 401, another method refused with 405. Then
it follows the document's links from submitted jobs (read, cancel, download) as a client
would, with the same checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import schemathesis
from hypothesis import strategies as st

from tests.contract.support import Client, ServerProcess, png

# Image parts are real PNG pictures of various sizes (some too small), so that valid
# submissions are accepted and the workflows go on from the jobs they make.
schemathesis.openapi.media_type("image/png", st.builds(png, st.integers(8, 96), st.integers(8, 96)))


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server with every per-minute limit out of reach, wrong keys included.

    schemathesis sends a wrong key with every example of its authentication check; the
    per-network wrong-key limit would otherwise answer 429 instead of 401 after 30 of them.
    """
    data_dir: Path = tmp_path_factory.mktemp("fuzz") / "data"
    limits = {
        "PRINTJOB_READS_PER_MINUTE": "1000000",
        "PRINTJOB_SUBMISSIONS_PER_MINUTE": "1000000",
        "PRINTJOB_WRONG_KEYS_PER_MINUTE": "1000000",
    }
    server = ServerProcess(data_dir, workers=0, **limits).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def fuzz_client(fuzz_server: ServerProcess) -> Iterator[Client]:
    with fuzz_server.account(credits=1000, active_jobs_max=10) as client:
        # A few jobs so generated job ids are not the only ones that exist.
        client.submit()
        yield client


#: What a valid submission may still get besides the defaults (2xx, 401, 403, 404, 409,
#: 429): rules the schema cannot state. An image that is valid bytes for the schema may
#: have a side under 16 px or not open at all (422), or too many pixels (413); a size
#: matching the pattern may exceed 20000 px a side, and dpi is refused without an explicit
#: size (400). Server errors stay failures.
SUBMISSION_ACCEPTANCE = ["2xx", "400", "401", "403", "404", "409", "413", "422", "429"]
CONFIG = {
    "operations": [
        {
            "include-name": "POST /v1/jobs",
            "checks": {"positive_data_acceptance": {"expected-statuses": SUBMISSION_ACCEPTANCE}},
        }
    ]
}


@pytest.fixture(scope="module")
def api_schema(fuzz_server: ServerProcess, fuzz_client: Client) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(
        f"{fuzz_server.base_url}/v1/openapi.json",
        config=schemathesis.Config.from_dict(CONFIG),
    )


OPERATIONS = [
    "POST /v1/jobs",
    "GET /v1/jobs/{job_id}",
    "POST /v1/jobs/{job_id}/cancel",
    "GET /v1/jobs/{job_id}/result",
    "GET /v1/account",
    "GET /v1/openapi.json",
]


# `schemathesis.pytest.from_fixture` does not work with pytest 9 (it reads a private
# node attribute), so each operation's strategy is run with hypothesis directly.
# Every operation with valid input, and every operation that takes input with invalid
# input (the OpenAPI document's own operation takes none, so it has no invalid form).
CASES = [
    pytest.param(label, mode, id=f"{label}-{mode.value}")
    for label in OPERATIONS
    for mode in schemathesis.GenerationMode
    if not (label == "GET /v1/openapi.json" and mode is schemathesis.GenerationMode.NEGATIVE)
]


@pytest.mark.slow
@pytest.mark.parametrize(("label", "mode"), CASES)
def test_every_answer_matches_the_document(
    api_schema: schemathesis.BaseSchema,
    fuzz_client: Client,
    label: str,
    mode: schemathesis.GenerationMode,
) -> None:
    """Contract 4.6: no 5xx, and every answer conforms to the served OpenAPI document."""
    operation = api_schema.find_operation_by_label(label)
    assert operation is not None, label
    headers = {"Authorization": f"Bearer {fuzz_client.key}"}

    @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
    @hypothesis.settings(
        max_examples=60,
        deadline=None,
        suppress_health_check=list(hypothesis.HealthCheck),
        derandomize=True,
        database=None,
    )
    def run(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=headers)

    run()


@pytest.mark.slow
def test_job_workflows_match_the_document(
    api_schema: schemathesis.BaseSchema, fuzz_server: ServerProcess
) -> None:
    """Following the document's links (submit, then read, cancel, download the job) passes
    every check too, the stateful ones (a canceled job stays readable) included.

    Each scenario runs on a fresh account, so that what the server answers depends on the
    scenario alone (no unfinished jobs or Idempotency-Keys left by an earlier one): the
    generator replays scenarios and needs the same answers each time.
    """
    statuses: list[tuple[str, str, int]] = []

    class Workflow(api_schema.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            self.account = fuzz_server.account(credits=100, active_jobs_max=10)

        def teardown(self) -> None:
            self.account.close()

        def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, object]:
            return {"headers": {"Authorization": f"Bearer {self.account.key}"}}

        def after_call(self, response: Any, case: schemathesis.Case) -> None:
            statuses.append((case.method, case.path, response.status_code))

    Workflow.run(
        settings=hypothesis.settings(
            max_examples=15,
            stateful_step_count=6,
            deadline=None,
            suppress_health_check=list(hypothesis.HealthCheck),
            derandomize=True,
            database=None,
        )
    )
    # The links were followed: jobs were made, then read or canceled by their id.
    assert ("POST", "/v1/jobs", 202) in statuses, statuses
    assert {("GET", "/v1/jobs/{job_id}", 200), ("POST", "/v1/jobs/{job_id}/cancel", 200)} & set(
        statuses
    ), statuses
