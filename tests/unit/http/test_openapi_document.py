"""The OpenAPI document reads on its own: described, exemplified, tagged, typed errors.

Every schema and property has a description in the product's words, every request and
answer has an example that its own schema accepts, every Problem code has an example,
every operation has a tag and a stable operationId, and every error answer is the typed
Problem.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from printjob_adapters.settings import Settings
from printjob_core.errors import PROBLEM_TYPES
from printjob_core.model import JobStatus
from printjob_http.openapi import openapi_document

DOCUMENT = openapi_document(Settings(base_url="https://api.example.com"))
OPERATIONS = {
    (method, path): operation
    for path, item in DOCUMENT["paths"].items()
    for method, operation in item.items()
}
PROBLEM = {"$ref": "#/components/schemas/Problem"}


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = DOCUMENT
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _answers() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for (method, path), operation in OPERATIONS.items():
        for status, answer in operation["responses"].items():
            yield f"{method.upper()} {path}", status, _resolve(answer)


def _validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """A validator for a schema of the document, its `#/components/...` references resolved."""
    return jsonschema.Draft202012Validator(
        {**schema, "components": DOCUMENT["components"]},
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )


def test_no_reference_to_documents_users_do_not_have() -> None:
    text = json.dumps(DOCUMENT).lower()
    assert "contract" not in text
    assert not re.search(r"section \d", text)


@pytest.mark.parametrize("name", sorted(DOCUMENT["components"]["schemas"]))
def test_every_schema_and_property_is_described(name: str) -> None:
    schema = DOCUMENT["components"]["schemas"][name]
    assert schema["description"].strip(), name
    for field, prop in schema["properties"].items():
        assert prop.get("description", "").strip(), f"{name}.{field}"


def test_operations_have_stable_ids_tags_and_summaries() -> None:
    assert {op["operationId"] for op in OPERATIONS.values()} == {
        "submitJob",
        "getJob",
        "cancelJob",
        "getJobResult",
        "getAccount",
        "getOpenApi",
    }
    tags = {tag["name"] for tag in DOCUMENT["tags"]}
    for operation in OPERATIONS.values():
        assert operation["tags"] and set(operation["tags"]) <= tags
        assert operation["summary"] and operation["description"]


def test_every_answer_has_examples_its_schema_accepts() -> None:
    for label, status, answer in _answers():
        assert answer["description"], (label, status)
        for media, content in answer.get("content", {}).items():
            examples = content["examples"]
            assert examples, (label, status, media)
            if content["schema"].get("format") == "binary":
                continue
            validator = _validator(content["schema"])
            for name, example in examples.items():
                errors = [e.message for e in validator.iter_errors(example["value"])]
                assert not errors, (label, status, name, errors)


def test_every_error_answer_is_the_typed_problem_with_an_example_per_code() -> None:
    seen: set[str] = set()
    for label, status, answer in _answers():
        if int(status) < 400:
            continue
        content = answer["content"]
        assert list(content) == ["application/problem+json"], (label, status)
        assert content["application/problem+json"]["schema"] == PROBLEM
        for code, example in content["application/problem+json"]["examples"].items():
            value = example["value"]
            assert value["code"] == code
            assert value["status"] == int(status) == PROBLEM_TYPES[code].status
            assert value["detail"] and value["type"].endswith(f"#error-{code}")
            seen.add(code)
    assert seen == set(PROBLEM_TYPES)


def test_every_path_documents_405_with_allow() -> None:
    for (method, path), operation in OPERATIONS.items():
        answer = _resolve(operation["responses"]["405"])
        assert "Allow" in answer["headers"], (method, path)


def test_jobs_are_shown_in_every_state_and_polling_headers_are_documented() -> None:
    get_job = OPERATIONS[("get", "/v1/jobs/{job_id}")]["responses"]["200"]
    examples = get_job["content"]["application/json"]["examples"]
    assert {e["value"]["status"] for e in examples.values()} == {s.value for s in JobStatus}
    assert "Retry-After" in get_job["headers"]
    submitted = OPERATIONS[("post", "/v1/jobs")]["responses"]["202"]["headers"]
    assert {"Location", "Retry-After", "Idempotent-Replayed"} <= set(submitted)
    links = OPERATIONS[("post", "/v1/jobs")]["responses"]["202"]["links"]
    assert {link["operationId"] for link in links.values()} == {
        "getJob",
        "cancelJob",
        "getJobResult",
    }
    result = OPERATIONS[("get", "/v1/jobs/{job_id}/result")]["responses"]["200"]
    assert "Content-Disposition" in result["headers"]
    unauthenticated = _answers()
    for _label, status, answer in unauthenticated:
        if status == "401":
            assert "WWW-Authenticate" in answer["headers"]
        if status in ("429", "503"):
            assert "Retry-After" in answer["headers"]


def test_the_upload_is_a_binary_file_part_of_an_image_type() -> None:
    body = OPERATIONS[("post", "/v1/jobs")]["requestBody"]["content"]["multipart/form-data"]
    image = _resolve(body["schema"])["properties"]["image"]
    assert (image["type"], image["format"]) == ("string", "binary")
    assert "image/png" in body["encoding"]["image"]["contentType"]
    assert body["examples"]
    submission = _resolve(body["schema"])
    assert "default" not in submission["properties"]["dpi"]  # a generated client sends defaults


def test_every_operation_takes_and_every_answer_carries_a_request_id() -> None:
    """The shell echoes `X-Request-Id` on every answer (`printjob_http.request_ids`): a
    client generated from the description can read it and send its own."""
    pattern = re.compile(
        _resolve({"$ref": "#/components/headers/X-Request-Id"})["schema"]["pattern"]
    )
    assert pattern.match("req_4f1c9b2a7d3e8f6a0b5c1d2e")
    assert not pattern.match("two words")
    for (method, path), operation in OPERATIONS.items():
        names = [_resolve(p)["name"] for p in operation.get("parameters", ())]
        assert names.count("X-Request-Id") == 1, (method, path)
        for status, answer in operation["responses"].items():
            headers = _resolve(answer).get("headers", {})
            assert "X-Request-Id" in headers, (method, path, status)
