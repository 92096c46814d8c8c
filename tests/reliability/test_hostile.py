"""Hostile input (issue: reliability, security and load, part 3).

A catalogue of bad requests against the REAL server: each gets the right 4xx Problem
(status, code, and `param` where a field is wrong), never a 5xx or a hang (every request has
a client timeout), and the server still answers afterwards. Valid but unusual images are
accepted and converted. Decisions the contract leaves open are stated per case.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.contract.support import Client, assert_problem, png
from tests.reliability import images
from tests.reliability.http import (
    body,
    content_type,
    file_part,
    get_request,
    post_form,
    raw,
    text_part,
)

FMT = text_part(b"format", b"svg")


@dataclass(frozen=True)
class Case:
    id: str
    send: Callable[[Client], httpx.Response]
    status: int
    code: str
    param: str | None = None


def image_case(
    case_id: str, data: bytes, status: int, code: str, param: str | None = "image"
) -> Case:
    return Case(case_id, lambda c: post_form(c, file_part(data), FMT), status, code, param)


def field_case(name: str, value: bytes, param: str | None = None, extra: bytes = b"") -> Case:
    """A submission with a good image whose field `name` has `value`: 400 naming `param`."""

    def send(c: Client) -> httpx.Response:
        parts = [file_part(png())]
        if name != "format":
            parts.append(FMT)
        parts.append(text_part(name.encode(), value))
        if extra:
            parts.append(extra)
        return post_form(c, *parts)

    return Case(f"{name}={value[:24]!r}", send, 400, "invalid_parameter", param or name)


def key_case(key: bytes) -> Case:
    return Case(
        f"idempotency-key={key[:20]!r}",
        lambda c: post_form(c, file_part(png()), FMT, headers={"Idempotency-Key": key}),
        400,
        "invalid_parameter",
        "Idempotency-Key",
    )


def ctype_case(case_id: str, ctype: str | None, data: bytes | None = None) -> Case:
    def send(c: Client) -> httpx.Response:
        headers = {} if ctype is None else {"Content-Type": ctype}
        content = body(file_part(png()), FMT) if data is None else data
        return c.post("/v1/jobs", content=content, headers=headers)

    return Case(f"content-type:{case_id}", send, 400, "invalid_parameter", "image")


def malformed_case(case_id: str, data: bytes) -> Case:
    def send(c: Client) -> httpx.Response:
        return c.post("/v1/jobs", content=data, headers={"Content-Type": content_type()})

    return Case(f"multipart:{case_id}", send, 400, "invalid_parameter", "image")


def auth_case(case_id: str, value: bytes | None) -> Case:
    def send(c: Client) -> httpx.Response:
        # Raw bytes: httpx refuses to send some of these values (trailing blanks).
        header = b"" if value is None else b"Authorization: " + value + b"\r\n"
        return raw(c.server.port, get_request(b"/v1/account", None, extra=header))

    return Case(f"auth:{case_id}", send, 401, "unauthenticated")


def head_case(case_id: str, extra: bytes, path: bytes = b"/v1/account") -> Case:
    """A request head over the server's 32 KiB bound: 400 invalid_parameter, read no further.

    Decision: httptools has no limit of its own, so the server counts the head itself and
    answers a Problem (400, the contract's invalid_parameter) instead of buffering it all.
    """

    def send(c: Client) -> httpx.Response:
        return raw(c.server.port, get_request(path, c.key, extra=extra))

    return Case(f"head:{case_id}", send, 400, "invalid_parameter")


def two_keys(c: Client) -> httpx.Response:
    """Two Authorization headers, the first valid: refused (not one credential)."""
    extra = b"Authorization: Bearer " + b"pjk1_" + b"B" * 38 + b"\r\n"
    return raw(c.server.port, get_request(b"/v1/account", c.key, extra=extra))


def path_case(method: bytes, path: bytes, status: int = 404, code: str = "not_found") -> Case:
    def send(c: Client) -> httpx.Response:
        return raw(c.server.port, get_request(path, c.key, method=method))

    return Case(f"{method.decode()} {path.decode('latin-1')}", send, status, code)


PNG = png(96, 64)
JPEG = images.valid("JPEG")
GIF = images.valid("GIF")
WEBP = images.valid("WEBP")
BMP = images.valid("BMP")
BAD_IDS = (
    b"..%2F..%2Fetc%2Fpasswd",
    b"%2e%2e",
    b"..",
    b"job_" + b"ABCDEF0123456789" * 2,
    b"job_" + b"0" * 31,
    b"job_" + b"0" * 33,
    b'job_"' + b"0" * 30 + b'"',
    b"job_%00" + b"0" * 31,
    b"%6A%6F%62_" + b"0" * 32,  # percent-encoded "job" of an id that does not exist
)

CATALOGUE: list[Case] = [
    # -- images that are not openable PNG/JPEG/GIF/BMP/WebP: 422 unsupported_image --
    image_case("random-bytes", images.random_bytes(), 422, "unsupported_image"),
    image_case("empty-file", b"", 422, "unsupported_image"),
    image_case("png-signature-only", PNG[:8], 422, "unsupported_image"),
    image_case("png-cut-in-ihdr", PNG[:20], 422, "unsupported_image"),
    image_case("png-bad-signature", b"\x89PNX" + PNG[4:], 422, "unsupported_image"),
    image_case("png-corrupt-ihdr-crc", PNG[:29] + b"\0\0\0\0" + PNG[33:], 422, "unsupported_image"),
    image_case("jpeg-soi-only", b"\xff\xd8", 422, "unsupported_image"),
    image_case("jpeg-cut-in-header", JPEG[:30], 422, "unsupported_image"),
    image_case("gif-cut-in-header", GIF[:12], 422, "unsupported_image"),
    image_case("gif-bad-version", b"GIF88a" + GIF[6:], 422, "unsupported_image"),
    image_case("webp-cut", WEBP[: len(WEBP) // 2], 422, "unsupported_image"),
    image_case("webp-corrupt", images.corrupt(WEBP, 12), 422, "unsupported_image"),
    image_case("bmp-cut-in-header", BMP[:30], 422, "unsupported_image"),
    image_case("svg-as-image", images.SVG, 422, "unsupported_image"),
    image_case("pdf-as-image", images.PDF, 422, "unsupported_image"),
    image_case("tiff", images.encode(images.picture(), "TIFF"), 422, "unsupported_image"),
    image_case("ico", images.encode(images.picture(), "ICO"), 422, "unsupported_image"),
    image_case("html", b"<html><script>alert(1)</script></html>", 422, "unsupported_image"),
    image_case("too-narrow-15px", png(15, 100), 422, "unsupported_image"),
    image_case("aspect-over-20", png(16, 330), 422, "unsupported_image"),
    # -- decompression bombs and big images: 413 image_too_large --
    image_case("bomb-60000x60000", images.bomb_png(), 413, "image_too_large"),
    image_case("bomb-20000x20000", images.bomb_png(20000, 20000), 413, "image_too_large"),
    image_case("bomb-12000x9000", images.bomb_png(12000, 9000), 413, "image_too_large"),
    image_case("bomb-1x4000000000", images.bomb_png(65535, 65535), 413, "image_too_large"),
    image_case("just-over-3mp", images.png_header_only(2000, 1501, b""), 413, "image_too_large"),
    # -- the image part: missing, doubled, sent as text --
    Case("no-image", lambda c: post_form(c, FMT), 400, "invalid_parameter", "image"),
    Case(
        "two-images",
        lambda c: post_form(c, file_part(png()), file_part(png()), FMT),
        400,
        "invalid_parameter",
        "image",
    ),
    Case(
        "image-as-text",
        lambda c: post_form(c, text_part(b"image", PNG), FMT),
        400,
        "invalid_parameter",
        "image",
    ),
    Case(
        "second-file-part-other-name",
        lambda c: post_form(c, file_part(png()), file_part(png(), name=b"logo"), FMT),
        400,
        "invalid_parameter",
        "logo",
    ),
    # -- fields: unknown, repeated, not UTF-8, huge, odd values --
    field_case("colour", b"4"),
    field_case("Format", b"svg"),
    field_case("format", b"svg", extra=text_part(b"format", b"svg")),
    field_case("size", b"100x100", extra=text_part(b"size", b"100x100")),
    field_case("colors", b"4", extra=text_part(b"colors", b"5")),
    field_case("format", b"\xff\xfesvg"),
    field_case("background", b"keep\xc3"),
    field_case("size", b"\xe2\x82"),
    field_case("format", b"s" * (1 << 20)),
    field_case("colors", b"9" * (1 << 20)),
    field_case("notes", b"x" * (1 << 20)),
    field_case("format", b""),
    field_case("format", b"SVG"),
    field_case("format", b"svg "),
    field_case("format", b"jpg"),
    field_case("format", b"svg\x00"),
    field_case("background", b"Remove"),
    field_case("background", b"none"),
    field_case("size", b"1e3x10"),
    field_case("size", "１０x１０".encode()),
    field_case("size", "10×10".encode()),
    field_case("size", b"10 x 10"),
    field_case("size", b" 10x10"),
    field_case("size", b"0x10"),
    field_case("size", b"20001x10"),
    field_case("size", b"-1x10"),
    field_case("size", b"10x10x10"),
    field_case("size", b"7000x7000"),
    field_case("size", b"1234567x1"),
    field_case("colors", b"5.0"),
    field_case("colors", b" 5"),
    field_case("colors", b"5 "),
    field_case("colors", b"-1"),
    field_case("colors", b"+5"),
    field_case("colors", b"0"),
    field_case("colors", b"1001"),
    field_case("colors", b"0x10"),
    field_case("colors", b"1e3"),
    field_case("colors", "１２".encode()),
    field_case("colors", "٣".encode()),
    field_case("colors", b"99999999999999999999999"),
    field_case("dpi", b"300"),  # no explicit size
    field_case("dpi", b"0", extra=text_part(b"size", b"100x100")),
    field_case("dpi", b"10001", extra=text_part(b"size", b"100x100")),
    field_case("dpi", b"300.5", extra=text_part(b"size", b"100x100")),
    # -- Idempotency-Key: 400 param Idempotency-Key --
    key_case(b"k" * 256),
    key_case(b"has space"),
    key_case("ключ".encode()),
    key_case(b'"'),
    key_case(b'""'),
    key_case(b""),
    key_case(b"a/b"),
    key_case(b"tab\there"),
    # -- Content-Type and body framing: 400 param image --
    ctype_case("missing", None),
    ctype_case("json", "application/json", b'{"format": "svg"}'),
    ctype_case("urlencoded", "application/x-www-form-urlencoded", b"format=svg&image=x"),
    ctype_case("multipart-mixed", f"multipart/mixed; boundary={'rel-b0undary-42'}"),
    ctype_case("no-boundary", "multipart/form-data"),
    ctype_case("empty-boundary", 'multipart/form-data; boundary=""'),
    ctype_case("boundary-71-chars", "multipart/form-data; boundary=" + "b" * 71),
    ctype_case("other-boundary", "multipart/form-data; boundary=not-the-one"),
    malformed_case("garbage", images.random_bytes(2048, seed=3)),
    malformed_case("no-closing-boundary", body(file_part(PNG), FMT)[:-24]),
    malformed_case("empty-body", b""),
    malformed_case(
        "part-without-disposition",
        b"--rel-b0undary-42\r\nX-Y: z\r\n\r\nsvg\r\n--rel-b0undary-42--\r\n",
    ),
    malformed_case("headers-never-end", b"--rel-b0undary-42\r\nContent-Disposition: form-data"),
    # -- Authorization: 401 unauthenticated with WWW-Authenticate --
    auth_case("missing", None),
    auth_case("bearer-alone", b"Bearer"),
    auth_case("bearer-blanks", b"Bearer  "),
    auth_case("basic", b"Basic dXNlcjpwYXNz"),
    auth_case("wrong-key", b"Bearer pjk1_" + b"A" * 38),
    auth_case("10kb-token", b"Bearer " + b"A" * 10240),
    auth_case("utf8-token", "Bearer pjk1_ключ".encode()),
    auth_case("two-tokens", b"Bearer a b"),
    auth_case("token68-padding", b"Bearer abc=="),
    auth_case("tab-separator", b"Bearer\tpjk1_" + b"C" * 38),
    Case("auth:two-authorization-headers", two_keys, 401, "unauthenticated"),
    # -- request heads over 32 KiB --
    head_case("64kb-header", b"X-Big: " + b"a" * 65536 + b"\r\n"),
    head_case("1mb-header", b"X-Big: " + b"a" * (1 << 20) + b"\r\n"),
    head_case("5000-headers", b"".join(b"X-H%d: v\r\n" % i for i in range(5000))),
    head_case("64kb-url", b"", path=b"/v1/jobs/" + b"a" * 65536),
    head_case("64kb-key", b"Idempotency-Key: " + b"k" * 65536 + b"\r\n", path=b"/v1/jobs"),
    # -- job ids: 404 not_found on every operation --
    *[path_case(b"GET", b"/v1/jobs/" + job_id) for job_id in BAD_IDS],
    *[path_case(b"POST", b"/v1/jobs/" + job_id + b"/cancel") for job_id in BAD_IDS],
    *[path_case(b"GET", b"/v1/jobs/" + job_id + b"/result") for job_id in BAD_IDS],
    # -- paths: trailing slashes, empty segments, case: 404 --
    path_case(b"GET", b"/v1/account/"),
    path_case(b"POST", b"/v1/jobs/"),
    path_case(b"GET", b"/v1//account"),
    path_case(b"GET", b"/V1/account"),
    path_case(b"GET", b"/v1/account%2F"),
    path_case(b"GET", b"/v1/openapi.json/"),
    # -- methods: 405 with Allow --
    path_case(b"HEAD", b"/v1/account", 405, "method_not_allowed"),
    path_case(b"OPTIONS", b"/v1/jobs", 405, "method_not_allowed"),
    path_case(b"DELETE", b"/v1/jobs/job_" + b"0" * 32, 405, "method_not_allowed"),
    path_case(b"PUT", b"/v1/jobs", 405, "method_not_allowed"),
    path_case(b"GET", b"/v1/jobs", 405, "method_not_allowed"),
]


def test_the_catalogue_is_big_enough() -> None:
    assert len(CATALOGUE) >= 60
    assert len({case.id for case in CATALOGUE}) == len(CATALOGUE), "case ids must differ"


@pytest.fixture(autouse=True)
def still_alive(hostile_client: Client) -> Iterator[None]:
    yield
    assert hostile_client.get("/v1/account").status_code == 200


@pytest.mark.parametrize("case", CATALOGUE, ids=[case.id for case in CATALOGUE])
def test_bad_request_gets_its_problem(hostile_client: Client, case: Case) -> None:
    before = hostile_client.account_view()
    response = case.send(hostile_client)
    if case.id.startswith("HEAD "):  # a HEAD answer has the Problem's headers, no body
        assert response.status_code == case.status
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.headers["allow"] == "GET" and response.content == b""
        return
    assert_problem(response, case.status, case.code, case.param)
    if case.param is None:
        assert case.code != "invalid_parameter" or case.id.startswith("head:")
    if case.status == 401:
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith('Bearer realm="printjob"')
        if case.id != "auth:missing":
            assert 'error="invalid_token"' in challenge
    if case.status == 405:
        assert response.headers["allow"]
    after = hostile_client.account_view()
    assert after["credits_held"] == before["credits_held"]
    assert after["active_jobs"] == before["active_jobs"]
