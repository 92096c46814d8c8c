"""Contract 4.1: POST /v1/jobs, its answer, its refusals, idempotency and limits."""

from __future__ import annotations

import re

import httpx

from tests.contract.support import (
    JOB_ID_RE,
    Client,
    ServerProcess,
    assert_problem,
    fresh_window,
    iter_chunks,
    png,
    raw_request,
)


def test_accepted_job_answer(idle_client: Client) -> None:
    """Contract 4.1 rule 2: 202, queued Job, absolute Location, Retry-After 5, no replay flag."""
    response = idle_client.submit(format="pdf", size="1000X500", colors="4", background="remove")
    assert response.status_code == 202, response.text
    job = response.json()
    assert re.fullmatch(JOB_ID_RE, job["id"])
    assert job["status"] == "queued"
    assert job["phase"] == "queued"
    assert job["progress"] == 0
    assert job["credits_charged"] == 0
    assert job["result"] is None and job["error"] is None and job["finished_at"] is None
    assert job["options"] == {
        "format": "pdf",
        "size": "1000x500",
        "colors": 4,
        "background": "remove",
    }
    assert response.headers["location"] == f"{idle_client.server.base_url}/v1/jobs/{job['id']}"
    assert response.headers["retry-after"] == "5"
    assert "idempotent-replayed" not in response.headers
    assert response.headers["content-type"].startswith("application/json")
    account = idle_client.account_view()
    assert account["credits_held"] == 1
    assert account["active_jobs"] == 1


def test_defaults_and_dpi_echo(idle_client: Client) -> None:
    """Contract 2.2 and 4.1: defaults filled in; dpi echoed only when sent."""
    job = idle_client.submit(format="svg").json()
    assert job["options"] == {
        "format": "svg",
        "size": "original",
        "colors": None,
        "background": "keep",
    }
    job = idle_client.submit(format="eps", size="300x300", dpi="150").json()
    assert job["options"]["dpi"] == 150


def test_idempotent_replay_returns_the_first_job(idle_client: Client) -> None:
    """Contract 4.1 rule 3: same image, options and key -> the first job, no second hold."""
    image = png()
    first = idle_client.submit(image, idempotency_key="order-42", format="svg")
    assert first.status_code == 202
    assert "idempotent-replayed" not in first.headers
    second = idle_client.submit(image, idempotency_key='"order-42"', format="svg")
    assert second.status_code == 202
    assert second.headers["idempotent-replayed"] == "true"
    assert second.json()["id"] == first.json()["id"]
    assert second.headers["location"] == first.headers["location"]
    assert second.headers["retry-after"] == "5"
    assert idle_client.account_view()["credits_held"] == 1


def test_same_key_with_other_input_is_422(idle_client: Client) -> None:
    """Contract 4.1 rule 3: the key with another image or options -> 422 idempotency_key_reused."""
    image = png()
    assert idle_client.submit(image, idempotency_key="k-1", format="svg").status_code == 202
    assert_problem(
        idle_client.submit(image, idempotency_key="k-1", format="pdf"),
        422,
        "idempotency_key_reused",
    )
    assert_problem(
        idle_client.submit(png(), idempotency_key="k-1", format="svg"),
        422,
        "idempotency_key_reused",
    )


def test_refused_request_does_not_keep_its_key(idle_client: Client) -> None:
    """Contract 4.1 rule 3: a refused request does not keep its key; the fixed one is new."""
    image = png()
    assert_problem(
        idle_client.submit(image, idempotency_key="fix-me", format="tiff"),
        400,
        "invalid_parameter",
        "format",
    )
    fixed = idle_client.submit(image, idempotency_key="fix-me", format="svg")
    assert fixed.status_code == 202
    assert "idempotent-replayed" not in fixed.headers


def test_bad_idempotency_key_is_400(idle_client: Client) -> None:
    """Contract 4.1: Idempotency-Key pattern ^"?[A-Za-z0-9._:-]{1,255}"?$."""
    for key in ("has space", "x" * 256, "ключ"):
        response = idle_client.post(
            "/v1/jobs",
            files={"image": ("a.png", png(), "image/png")},
            data={"format": "svg"},
            headers=[(b"Idempotency-Key", key.encode("utf-8"))],
        )
        assert_problem(response, 400, "invalid_parameter", "Idempotency-Key")


def test_unknown_field_is_400_with_param(idle_client: Client) -> None:
    """Contract 4.1 rule 1: an unknown form field -> 400 invalid_parameter naming it."""
    assert_problem(
        idle_client.submit(format="svg", quality="high"), 400, "invalid_parameter", "quality"
    )


def test_field_values_are_checked(idle_server: ServerProcess) -> None:
    """Contract 4.1 table and section 8: each field's allowed values, param names the field."""
    cases = [
        ({"format": "gif"}, "format"),
        ({"size": "original"}, "format"),
        ({"format": "svg", "size": "0x100"}, "size"),
        ({"format": "svg", "size": "20001x10"}, "size"),
        ({"format": "svg", "size": "10000x5000"}, "size"),
        ({"format": "svg", "size": "big"}, "size"),
        ({"format": "svg", "size": "100x100", "dpi": "0"}, "dpi"),
        ({"format": "svg", "size": "100x100", "dpi": "10001"}, "dpi"),
        ({"format": "svg", "dpi": "300"}, "dpi"),
        ({"format": "svg", "colors": "0"}, "colors"),
        ({"format": "svg", "colors": "1001"}, "colors"),
        ({"format": "svg", "colors": "five"}, "colors"),
        ({"format": "svg", "background": "transparent"}, "background"),
    ]
    for fields, param in cases:
        with idle_server.account() as client:  # each account may submit 10 a minute
            response = client.post(
                "/v1/jobs", files={"image": ("a.png", png(), "image/png")}, data=fields
            )
            assert_problem(response, 400, "invalid_parameter", param)


def test_missing_or_misplaced_image_is_400(idle_client: Client) -> None:
    """Contract 4.1: image is a required file part."""
    response = idle_client.post("/v1/jobs", files={"format": (None, "svg")})
    assert_problem(response, 400, "invalid_parameter", "image")
    response = idle_client.post(
        "/v1/jobs", files={"format": (None, "svg"), "image": (None, "not a file")}
    )
    assert_problem(response, 400, "invalid_parameter", "image")


def test_two_images_are_400(idle_client: Client) -> None:
    """Contract 4.1: exactly one image part."""
    response = idle_client.post(
        "/v1/jobs",
        files=[
            ("image", ("a.png", png(), "image/png")),
            ("image", ("b.png", png(), "image/png")),
        ],
        data={"format": "svg"},
    )
    assert_problem(response, 400, "invalid_parameter", "image")


def test_not_multipart_is_400(idle_client: Client) -> None:
    """Contract 4.1: the request is multipart/form-data; anything else -> 400 (param image)."""
    for content_type, body in [
        ("application/json", b'{"format": "svg"}'),
        ("application/x-www-form-urlencoded", b"format=svg"),
        ("multipart/form-data", b"--x\r\n"),
        ("multipart/form-data; boundary=abc", b"garbage"),
    ]:
        response = idle_client.post(
            "/v1/jobs", content=body, headers={"Content-Type": content_type}
        )
        assert_problem(response, 400, "invalid_parameter", "image")
    assert_problem(idle_client.post("/v1/jobs"), 400, "invalid_parameter", "image")


def test_non_utf8_field_value_is_400(idle_client: Client) -> None:
    """Contract 4.1: text fields are text; undecodable bytes -> 400 naming the field."""
    boundary = "b0undary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="format"\r\n\r\n'.encode()
        + b"sv\xff\xfeg\r\n"
        + f'--{boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n'
        "Content-Type: image/png\r\n\r\n".encode()
        + png()
        + f"\r\n--{boundary}--\r\n".encode()
    )
    response = idle_client.post(
        "/v1/jobs",
        content=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert_problem(response, 400, "invalid_parameter", "format")


def test_too_few_credits_is_402(idle_server: ServerProcess) -> None:
    """Contract 4.1 and section 7: available credits below the job cost -> 402."""
    with idle_server.account(credits=1) as client:
        assert client.submit().status_code == 202
        body = assert_problem(client.submit(), 402, "insufficient_credits")
        assert "1" in body["detail"]


def test_declared_body_over_30_mb_is_413_unread(idle_client: Client) -> None:
    """Contract 4.1 and 8: a request over 31457280 bytes -> 413, refused on Content-Length."""
    head = (
        "POST /v1/jobs HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{idle_client.server.port}\r\n"
        f"Authorization: Bearer {idle_client.key}\r\n"
        "Content-Type: multipart/form-data; boundary=xyz\r\n"
        "Content-Length: 31457281\r\n\r\n"
    ).encode()
    answer = raw_request(idle_client.server.port, head + b"--xyz\r\n")
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.1 413"), answer[:300]
    assert b"application/problem+json" in rest
    assert b'"code":"image_too_large"' in rest


def test_streamed_body_over_30_mb_is_413(idle_client: Client) -> None:
    """Contract 4.1 and 8: a chunked request is cut off once it passes 30 MB -> 413."""
    try:
        response = idle_client.post(
            "/v1/jobs",
            content=iter_chunks(31_457_280 + 1024),
            headers={"Content-Type": "multipart/form-data; boundary=xyz"},
        )
    except httpx.HTTPError:  # the server may close while the client still sends
        return
    assert_problem(response, 413, "image_too_large")


def test_over_3_megapixels_is_413(idle_client: Client) -> None:
    """Contract 4.1 and 7: an image over 3 megapixels -> 413 image_too_large."""
    response = idle_client.submit(png(2000, 1501))
    assert_problem(response, 413, "image_too_large")


def test_unsupported_images_are_422(idle_client: Client) -> None:
    """Contract 4.1 and 7: not an image, a side under 16 px, or a ratio over 20 -> 422."""
    for image in (b"this is not an image", b"", png(15, 64), png(16, 330), b"%PDF-1.4\n"):
        assert_problem(idle_client.submit(image), 422, "unsupported_image")
    assert idle_client.submit(png(16, 320)).status_code == 202


def test_other_image_formats_are_accepted(idle_server: ServerProcess) -> None:
    """Contract 4.1: PNG, JPEG, GIF, BMP and WebP are accepted."""
    with idle_server.account(credits=10, active_jobs_max=10) as client:
        for fmt in ("PNG", "JPEG", "GIF", "BMP", "WEBP"):
            response = client.submit(png(fmt=fmt))
            assert response.status_code == 202, (fmt, response.text)


def test_submissions_per_minute_are_limited(server: ServerProcess) -> None:
    """Contract 4.1 rule 6 and 8: over 10 submissions a minute -> 429 rate_limited."""
    with server.account(credits=10) as client:
        fresh_window()
        statuses = [client.post("/v1/jobs", data={"format": "svg"}).status_code for _ in range(10)]
        assert statuses == [400] * 10
        response = client.submit()
        assert_problem(response, 429, "rate_limited")


def test_active_jobs_are_limited(idle_server: ServerProcess) -> None:
    """Contract 4.1 rule 5: at most active_jobs_max unfinished jobs -> 429 naming the number."""
    with idle_server.account(credits=10, active_jobs_max=3) as client:
        for _ in range(3):
            assert client.submit().status_code == 202
        body = assert_problem(client.submit(), 429, "too_many_active_jobs")
        assert "3" in body["detail"]
        assert client.account_view()["active_jobs"] == 3


def test_full_queue_is_503_server_busy(busy_server: ServerProcess) -> None:
    """Contract 4.1 and 7: server busy -> 503 server_busy with Retry-After; nothing changed."""
    with busy_server.account(credits=10) as first, busy_server.account(credits=10) as second:
        assert first.submit().status_code == 202
        response = second.submit(idempotency_key="retry-me")
        assert_problem(response, 503, "server_busy")
        assert second.account_view()["credits_held"] == 0
