"""The documentation the service serves itself (no CDN): `/docs`, `/docs/errors`, the
vendored Redoc bundle, and Problem `type` links that lead to them."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

import httpx
import pytest

from printjob_core.errors import PROBLEM_TYPES
from tests.contract.support import (
    PROBLEM_JSON,
    ROOT,
    Client,
    ServerProcess,
    assert_problem,
    raw_request,
)

BUNDLE = ROOT / "src" / "printjob_http" / "static" / "redoc" / "redoc.standalone.js"
JOB_ERRORS = ("processing_failed", "interrupted")
DOCS_PATHS = ("/docs", "/docs/errors", "/docs/assets/redoc.standalone.js")


class Page(HTMLParser):
    """The tags of an HTML page with their attributes, in order."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))

    def attribute(self, tag: str, name: str) -> list[str]:
        return [attrs[name] for t, attrs in self.tags if t == tag and name in attrs]

    def ids(self) -> list[str]:
        return [attrs["id"] for _tag, attrs in self.tags if "id" in attrs]


def assert_docs_headers(response: httpx.Response, media_type: str) -> None:
    assert response.status_code == 200, response.text[:300]
    assert response.headers["content-type"] == f"{media_type}; charset=utf-8"
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


@pytest.fixture(scope="module")
def own_address_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server with neither PRINTJOB_BASE_URL nor PRINTJOB_DOCS_URL set."""
    data_dir: Path = tmp_path_factory.mktemp("own-address") / "data"
    server = ServerProcess(data_dir, workers=0, PRINTJOB_BASE_URL="").start()
    try:
        yield server
    finally:
        server.stop()


def test_reference_page_loads_only_our_own_script(server: ServerProcess) -> None:
    """`/docs` renders `/v1/openapi.json` with the vendored bundle, from our origin only."""
    response = server.http.get("/docs")
    assert_docs_headers(response, "text/html")
    assert response.headers["cache-control"].startswith("public, max-age=")
    text = response.text
    page = Page(text)
    # No address of another host anywhere in the page: nothing comes from a CDN.
    for address in re.findall(r"(?i)\b(?:https?:)?//[^\s\"'<>]+", text):
        assert urlsplit(urljoin(str(response.url), address)).netloc == response.url.netloc
    scripts = page.attribute("script", "src")
    assert len(scripts) == len([t for t, _ in page.tags if t == "script"]) == 1
    script = httpx.URL(urljoin(str(response.url), scripts[0]))
    assert (script.scheme, script.host, script.port) == ("http", "127.0.0.1", server.port)
    assert script.path == "/docs/assets/redoc.standalone.js"
    # The document Redoc renders is this server's, and public.
    (spec_url,) = page.attribute("redoc", "spec-url")
    spec = server.http.get(urljoin(str(response.url), spec_url))
    assert spec.status_code == 200
    assert spec.json()["openapi"].startswith("3.1")
    # The script, as the page asks for it: the vendored bundle, as JavaScript, kept long.
    bundle = server.http.get(script, headers={"Accept-Encoding": "identity"})
    assert_docs_headers(bundle, "text/javascript")
    assert "content-encoding" not in bundle.headers
    assert bundle.content == BUNDLE.read_bytes()
    assert bundle.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert bundle.headers["vary"] == "Accept-Encoding"


def test_bundle_is_compressed_and_revalidated(server: ServerProcess) -> None:
    """The megabyte of Redoc goes gzip-compressed when accepted, and a cached copy is 304."""
    path = "/docs/assets/redoc.standalone.js"
    plain = server.http.get(path, headers={"Accept-Encoding": "identity"})
    assert plain.headers["cache-control"] == "public, max-age=86400"  # unversioned address
    with httpx.stream("GET", f"{server.base_url}{path}", headers={"Accept-Encoding": "gzip"}) as r:
        assert r.status_code == 200
        assert r.headers["content-encoding"] == "gzip"
        assert r.headers["content-type"] == "text/javascript; charset=utf-8"
        raw = b"".join(r.iter_raw())  # the bytes as sent, not decoded
    assert len(raw) < len(plain.content) // 2
    assert gzip.decompress(raw) == plain.content
    etag = plain.headers["etag"]
    again = server.http.get(path, headers={"Accept-Encoding": "identity", "If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    assert "cache-control" in again.headers
    other = server.http.get(path, headers={"Accept-Encoding": "identity", "If-None-Match": '"x"'})
    assert other.status_code == 200 and other.content == plain.content


def test_errors_page_has_an_anchor_per_code(server: ServerProcess) -> None:
    """`/docs/errors`: one `error-<code>` anchor per Problem code and per job error code."""
    response = server.http.get("/docs/errors")
    assert_docs_headers(response, "text/html")
    page = Page(response.text)
    ids = page.ids()
    assert len(ids) == len(set(ids))
    expected = {f"error-{code}" for code in (*PROBLEM_TYPES, *JOB_ERRORS)}
    assert expected <= set(ids)
    assert page.attribute("script", "src") == []
    # Its link to the reference leads to it.
    for href in page.attribute("a", "href"):
        assert server.http.get(urljoin(str(response.url), href)).status_code == 200


def follow_type(http: httpx.Client, problem: dict, code: str) -> str:
    """Fetch a Problem's `type` link; its page has the fragment's anchor. Returns the page URL."""
    page_url, fragment = urldefrag(problem["type"])
    assert fragment == f"error-{code}"
    page = http.get(page_url)
    assert page.status_code == 200, page.text[:300]
    assert page.headers["content-type"].startswith("text/html")
    assert f"error-{code}" in Page(page.text).ids()
    return page_url


def test_problem_type_links_resolve(server: ServerProcess, client: Client) -> None:
    """A real 401, 404, 405 and 400 Problem's `type` leads to its section of `/docs/errors`."""
    http = server.http
    answers = {
        "unauthenticated": http.get("/v1/account"),  # the gate's polling fast path
        "not_found": http.get("/no/such/path"),  # the gate
        "method_not_allowed": http.delete("/docs"),  # the gate
        "invalid_parameter": client.post("/v1/jobs", content=b"x"),  # a Litestar route
    }
    for code, response in answers.items():
        problem = assert_problem(response, response.status_code, code)
        page_url = follow_type(http, problem, code)
        assert page_url == f"{server.base_url}/docs/errors"


def test_links_lead_to_the_address_the_request_came_to(
    own_address_server: ServerProcess,
) -> None:
    """No PRINTJOB_BASE_URL nor PRINTJOB_DOCS_URL: links use the request's own address."""
    server = own_address_server
    with httpx.Client(base_url=f"http://localhost:{server.port}", timeout=30) as local:
        for via, base in ((server.http, server.base_url), (local, str(local.base_url))):
            base = base.rstrip("/")
            answers = [
                ("unauthenticated", via.get(f"/v1/jobs/job_{'0' * 32}")),  # polling fast path
                ("unauthenticated", via.post("/v1/jobs")),  # a Litestar route
                ("not_found", via.get("/docs/")),  # the gate
                ("method_not_allowed", via.put("/docs/errors")),  # the gate
            ]
            for code, response in answers:
                problem = assert_problem(response, response.status_code, code)
                assert follow_type(via, problem, code) == f"{base}/docs/errors"
    # The HTTP parser's own refusal of an oversized head carries a working link too.
    request = b"GET /v1/account HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Padding: %s\r\n\r\n" % (
        server.port,
        b"a" * 40_000,
    )
    answer = raw_request(server.port, request)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert PROBLEM_JSON.encode() in head
    problem = httpx.Response(400, content=body).json()
    assert problem["code"] == "invalid_parameter"
    assert follow_type(server.http, problem, "invalid_parameter") == (
        f"{server.base_url}/docs/errors"
    )


@pytest.mark.parametrize("path", DOCS_PATHS)
def test_docs_paths_take_get_only_and_no_key(server: ServerProcess, path: str) -> None:
    """Like the API's paths: another method (HEAD included) is 405 with `Allow: GET`."""
    assert server.http.get(path, headers={"Authorization": "Bearer pjk1_wrong"}).status_code == 200
    for method in ("HEAD", "POST", "PUT", "DELETE", "OPTIONS"):
        response = server.http.request(method, path)
        assert response.status_code == 405
        assert response.headers["allow"] == "GET"
        if method != "HEAD":
            assert_problem(response, 405, "method_not_allowed")


@pytest.mark.parametrize(
    "path",
    [
        "/docs/",
        "/docs/errors/",
        "/docs/index.html",
        "/docs/assets/",
        "/docs/assets/redoc.standalone.js.map",
        "/docs/static/redoc/LICENSE",
        "/docs//errors",
    ],
)
def test_other_docs_paths_are_the_apis_404(server: ServerProcess, path: str) -> None:
    response = server.http.get(path)
    assert_problem(response, 404, "not_found")
