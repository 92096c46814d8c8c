"""Contract section 4: the six operations and nothing else (405 + Allow, 404, no redirects)."""

from __future__ import annotations

import pytest
from openapi_spec_validator import validate

from tests.contract.support import PROBLEM_JSON, ServerProcess, assert_problem

JOB = "job_" + "0" * 32
PATHS = {
    "/v1/jobs": "POST",
    f"/v1/jobs/{JOB}": "GET",
    f"/v1/jobs/{JOB}/cancel": "POST",
    f"/v1/jobs/{JOB}/result": "GET",
    "/v1/account": "GET",
    "/v1/openapi.json": "GET",
}
#: PROPFIND stands for "a method the API does not know"; a token that is no HTTP method at
#: all is refused by the HTTP parser (httptools) with a plain 400 before the app sees it.
OTHER_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND")


@pytest.mark.parametrize("path", list(PATHS))
def test_other_methods_get_405_with_allow(server: ServerProcess, path: str) -> None:
    """Contract 4 (end): a method not allowed for a path -> 405 method_not_allowed + Allow."""
    allowed = PATHS[path]
    for method in OTHER_METHODS:
        if method == allowed:
            continue
        response = server.http.request(method, path)
        assert_problem(response, 405, "method_not_allowed")
        assert response.headers["allow"] == allowed


@pytest.mark.parametrize("path", list(PATHS))
def test_head_gets_405_with_allow_and_no_body(server: ServerProcess, path: str) -> None:
    """Contract 4 (end), HEAD decision (docs/operations.md): HEAD is 405 with Allow."""
    response = server.http.head(path)
    assert response.status_code == 405
    assert response.headers["allow"] == PATHS[path]
    assert response.headers["content-type"].startswith(PROBLEM_JSON)
    assert response.content == b""


@pytest.mark.parametrize(
    "path",
    [
        # "/" is the website's front page (issue #11; tests/contract/website).
        "/v1",
        "/v1/",
        "/v2/jobs",
        "/schema",
        "/schema/swagger",
        "/v1/jobs/",
        f"/v1/jobs/{JOB}/",
        f"/v1/jobs/{JOB}/cancel/",
        "/v1/account/",
        "/v1/openapi.json/",
        f"/v1/jobs//{JOB}",
        f"/v1/jobs/{JOB}/other",
        "/v1/accounts",
    ],
)
def test_unknown_paths_and_trailing_slashes_are_404(server: ServerProcess, path: str) -> None:
    """Contract 4: only the six operations exist; other paths (trailing slash too) are 404."""
    response = server.http.get(path, follow_redirects=False)
    assert_problem(response, 404, "not_found")


def test_openapi_document_is_valid_and_describes_the_api(server: ServerProcess) -> None:
    """Contract 4.6 and 9.1: an OpenAPI 3.1 document, version 1.0.0, all six operations."""
    document = server.http.get("/v1/openapi.json").json()
    validate(document)
    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] == "1.0.0"
    assert document["servers"][0]["url"] == server.base_url
    operations = {
        (method.upper(), path)
        for path, item in document["paths"].items()
        for method in item
        if method in ("get", "post", "put", "delete", "patch")
    }
    assert operations == {
        ("POST", "/v1/jobs"),
        ("GET", "/v1/jobs/{job_id}"),
        ("POST", "/v1/jobs/{job_id}/cancel"),
        ("GET", "/v1/jobs/{job_id}/result"),
        ("GET", "/v1/account"),
        ("GET", "/v1/openapi.json"),
    }
    schemas = document["components"]["schemas"]
    assert set(schemas["Job"]["required"]) == {
        "id",
        "status",
        "phase",
        "progress",
        "created_at",
        "finished_at",
        "options",
        "credits_charged",
        "result",
        "error",
    }
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_not_found_job_is_a_problem(server: ServerProcess) -> None:
    """Contract 4.2: an unknown or malformed job id is 404 not_found (after auth)."""
    with server.account() as client:
        for job_id in (JOB, "job_nothex", "x"):
            assert_problem(client.get(f"/v1/jobs/{job_id}"), 404, "not_found")
            assert_problem(client.post(f"/v1/jobs/{job_id}/cancel"), 404, "not_found")
            assert_problem(client.get(f"/v1/jobs/{job_id}/result"), 404, "not_found")
