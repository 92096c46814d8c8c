"""Contract 4.6: the served OpenAPI document describes every answer the server gives.

schemathesis generates requests from the document served by the running server (valid
and invalid ones) and checks that none gets a 5xx and that every answer matches the
document: status documented, body matching its schema.
"""

from __future__ import annotations

from collections.abc import Iterator

import hypothesis
import pytest
import schemathesis
from schemathesis import checks

from tests.contract.support import Client, ServerProcess


@pytest.fixture(scope="session")
def fuzz_client(fuzz_server: ServerProcess) -> Iterator[Client]:
    with fuzz_server.account(credits=1000, active_jobs_max=10) as client:
        # A few jobs so generated job ids are not the only ones that exist.
        client.submit()
        yield client


@pytest.fixture(scope="session")
def api_schema(fuzz_server: ServerProcess, fuzz_client: Client) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{fuzz_server.base_url}/v1/openapi.json")


OPERATIONS = [
    "POST /v1/jobs",
    "GET /v1/jobs/{job_id}",
    "POST /v1/jobs/{job_id}/cancel",
    "GET /v1/jobs/{job_id}/result",
    "GET /v1/account",
    "GET /v1/openapi.json",
]
CHECKS = [checks.not_a_server_error, checks.response_schema_conformance]


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
        case.call_and_validate(headers=headers, checks=CHECKS)

    run()
