"""Pure parts of the HTTP shell: routing table, client address, the OpenAPI document."""

from __future__ import annotations

import ipaddress

import pytest
from openapi_spec_validator import validate

from printjob_adapters.settings import Settings
from printjob_http.gate import Route, match_route
from printjob_http.openapi import openapi_document
from printjob_http.shell import client_address

JOB = "job_" + "a" * 32


@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("/v1/jobs", Route("jobs", ("POST",), "/v1/jobs", "")),
        (f"/v1/jobs/{JOB}", Route("job", ("GET",), f"/v1/jobs/{JOB}", JOB)),
        (f"/v1/jobs/{JOB}/cancel", Route("cancel", ("POST",), f"/v1/jobs/{JOB}/cancel", JOB)),
        (f"/v1/jobs/{JOB}/result", Route("result", ("GET",), f"/v1/jobs/{JOB}/result", JOB)),
        ("/v1/account", Route("account", ("GET",), "/v1/account", "")),
        ("/v1/openapi.json", Route("openapi", ("GET",), "/v1/openapi.json", "")),
        ("/v1/jobs/a%20b", Route("job", ("GET",), "/v1/jobs/a b", "a b")),
        ("/v1/jobs/a%2Fb/result", Route("result", ("GET",), "/v1/jobs/a%2Fb/result", "a/b")),
    ],
)
def test_known_paths(path: str, route: Route) -> None:
    assert match_route(path) == route


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/v1",
        "/v1/jobs/",
        f"/v1/jobs/{JOB}/",
        "/v1/jobs//cancel",
        "/v1/openapi.jsonx",
        "/schema",
    ],
)
def test_unknown_paths(path: str) -> None:
    assert match_route(path) is None


TRUSTED = [ipaddress.ip_network("10.0.0.0/8")]


def test_peer_address_without_trusted_proxy() -> None:
    scope = {"client": ("198.51.100.7", 5000)}
    headers = [("x-forwarded-for", "203.0.113.9")]
    assert client_address(scope, headers, []) == "198.51.100.7"  # type: ignore[arg-type]
    assert client_address(scope, headers, TRUSTED) == "198.51.100.7"  # type: ignore[arg-type]


def test_forwarded_for_from_trusted_proxy_skips_trusted_hops() -> None:
    scope = {"client": ("10.0.0.2", 5000)}
    headers = [("X-Forwarded-For", "203.0.113.9, 198.51.100.1, 10.0.0.5")]
    assert client_address(scope, headers, TRUSTED) == "198.51.100.1"  # type: ignore[arg-type]
    assert client_address(scope, [], TRUSTED) == "10.0.0.2"  # type: ignore[arg-type]


def test_openapi_document_is_valid_31() -> None:
    document = openapi_document(Settings(base_url="https://api.example.com"))
    validate(document)
    assert document["openapi"] == "3.1.0"
    assert document["info"]["version"] == "1.0.0"
    assert document["servers"] == [{"url": "https://api.example.com"}]
    problem = document["components"]["schemas"]["Problem"]
    assert problem["required"] == ["type", "title", "status", "detail", "code"]
