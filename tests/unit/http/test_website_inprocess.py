"""The website in process (gate, Litestar, templates) over the core's fakes, through
`httpx.ASGITransport`: statuses, redirects, cookies, CSRF, security headers and the pages'
text, without a server. `tests/contract/website` drives the same in a real browser."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from http.cookies import SimpleCookie
from typing import Any

import attrs
import httpx
import markupsafe
import pytest

from printjob_core.fakes import (
    FakeBlobStore,
    FakeClock,
    FakeIds,
    FakeImageProbe,
    FakePasswordHasher,
    FakeRateLimiter,
    FakeStore,
    fake_image,
)
from printjob_core.limits import Policy, website_submissions_bucket
from printjob_core.model import ConversionOutput, Plan
from printjob_core.services import ApiService, JobProcessing, OperatorService, Ports
from printjob_core.services.website import WebsiteService
from printjob_http.app import create_app

PASSWORD = "correct horse battery"
POLICY = Policy(submissions_per_minute=20, reads_per_minute=200, max_upload_bytes=4096)
CSRF_INPUT = re.compile(r'name="csrf_token" value="([^"]*)"')


@attrs.frozen
class SiteSettings:
    base_url: str | None
    docs_url: str = "https://docs.example/errors"
    service_name: str = "printjob-test"
    trusted_proxies: tuple[str, ...] = ()


@attrs.define
class NoImmediateReads:
    def immediate_reads(self) -> None:
        return None


@attrs.define
class Container:
    settings: SiteSettings
    storage: NoImmediateReads
    ports: Ports
    api: ApiService
    website: WebsiteService


@attrs.define
class Browser:
    """One person's browser: a cookie jar over the app, and the services to arrange."""

    client: httpx.AsyncClient
    loop: asyncio.AbstractEventLoop
    ports: Ports
    operator: OperatorService
    processing: JobProcessing
    clock: FakeClock

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.loop.run_until_complete(self.client.request(method, path, **kwargs))

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def token(self, path: str) -> str:
        """The CSRF token of the form on `path` (visiting it, as a browser would)."""
        page = self.get(path)
        assert page.status_code == 200, page.text
        found = CSRF_INPUT.search(page.text)
        assert found is not None, page.text
        return found.group(1)

    def post(self, path: str, form_page: str | None = None, **fields: str) -> httpx.Response:
        data = {"csrf_token": self.token(form_page or path), **fields}
        return self.request("POST", path, data=data)

    def sign_up(self, email: str = "ada@example.com") -> httpx.Response:
        answer = self.post("/signup", email=email, password=PASSWORD)
        assert answer.status_code == 303, answer.text
        return answer

    def other(self) -> Browser:
        """A second browser (its own cookies) on the same app."""
        client = httpx.AsyncClient(transport=self.client._transport, base_url=self.client.base_url)
        return Browser(client, self.loop, self.ports, self.operator, self.processing, self.clock)


def make_browser(base_url: str = "http://testserver", signup_open: bool = True) -> Browser:
    store, clock = FakeStore(), FakeClock()
    ports = Ports(
        uow=store.unit_of_work,
        reader=store.unit_of_work,
        clock=clock,
        ids=FakeIds(),
        blobs=FakeBlobStore(),
        limiter=FakeRateLimiter(),
        probe=FakeImageProbe(),
        policy=POLICY,
    )
    website = WebsiteService(ports, FakePasswordHasher(), signup_open=signup_open)
    container = Container(
        SiteSettings(base_url), NoImmediateReads(), ports, ApiService(ports), website
    )
    gate = create_app(container)
    loop = asyncio.new_event_loop()
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=gate, client=("192.0.2.5", 4000)), base_url=base_url
    )
    return Browser(client, loop, ports, OperatorService(ports), JobProcessing(ports), clock)


@pytest.fixture
def browser() -> Iterator[Browser]:
    made = make_browser()
    yield made
    made.loop.run_until_complete(made.client.aclose())
    made.loop.close()


def set_cookie(answer: httpx.Response, name: str) -> SimpleCookie:
    for header in answer.headers.get_list("set-cookie"):
        if header.startswith(name + "="):
            cookie: SimpleCookie = SimpleCookie()
            cookie.load(header)
            return cookie
    raise AssertionError(f"no {name} cookie in {answer.headers.get_list('set-cookie')}")


def raw_set_cookie(answer: httpx.Response, name: str) -> str:
    return next(h for h in answer.headers.get_list("set-cookie") if h.startswith(name + "="))


def account_of(browser: Browser) -> str:
    found = re.search(r"account <code>(acct_[0-9a-f]+)</code>", browser.get("/account").text)
    assert found is not None
    return found.group(1)


def submit(browser: Browser, **fields: str) -> httpx.Response:
    token = browser.token("/")
    image = fields.pop("image", None)
    files = {"image": ("pic.png", fake_image() if image is None else image.encode(), "image/png")}
    data = {"csrf_token": token, "format": "svg", **fields}
    return browser.request("POST", "/convert", data=data, files=files)


def finish(browser: Browser, data: bytes = b"<svg/>") -> None:
    claim = browser.processing.claim()
    assert claim is not None
    assert browser.processing.succeed(claim, ConversionOutput(data, 10, 10, 2, False)) is not None


def test_front_page_for_a_visitor_carries_the_security_headers(browser: Browser) -> None:
    page = browser.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "<title>Pictures to print files · printjob</title>" in page.text
    assert 'href="/signup"' in page.text and 'src="/static/example-before.png"' in page.text
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert page.headers["referrer-policy"] == "same-origin"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["x-frame-options"] == "DENY"
    for asset, media in (("site.css", "text/css"), ("site.js", "text/javascript")):
        served = browser.get(f"/static/{asset}")
        assert served.status_code == 200 and served.headers["content-type"].startswith(media)
        assert "content-security-policy" in served.headers
        again = browser.get(f"/static/{asset}", headers={"If-None-Match": served.headers["etag"]})
        assert again.status_code == 304


def test_the_apis_answers_are_unchanged_beside_the_website(browser: Browser) -> None:
    for path in ("/nope", "/static/", "/account/", "/jobs", "/v1"):
        answer = browser.get(path)
        assert answer.status_code == 404, path
        assert answer.headers["content-type"] == "application/problem+json"
        assert "content-security-policy" not in answer.headers
    assert browser.get("/v1/account").status_code == 401


def test_sign_up_sets_a_session_cookie_with_the_decided_flags(browser: Browser) -> None:
    form = browser.get("/signup")
    assert "printjob_csrf" in form.headers["set-cookie"]
    answer = browser.sign_up()
    assert answer.headers["location"] == "/"
    cookie = set_cookie(answer, "printjob_session")["printjob_session"]
    assert cookie["httponly"] and cookie["samesite"] == "lax" and cookie["path"] == "/"
    assert not cookie["secure"]  # the base address is http
    assert len(cookie.value) >= 40
    home = browser.get("/")
    assert "<title>Convert a picture · printjob</title>" in home.text
    assert 'for="image"' in home.text and home.headers["cache-control"] == "no-store"


def test_over_https_the_cookies_are_secure() -> None:
    browser = make_browser("https://printjob.example")
    try:
        answer = browser.sign_up()
        raw = raw_set_cookie(answer, "printjob_session")
        assert "Secure" in raw and "HttpOnly" in raw and "samesite=lax" in raw.lower()
        assert "Secure" in raw_set_cookie(browser.get("/signin"), "printjob_csrf")
    finally:
        browser.loop.run_until_complete(browser.client.aclose())
        browser.loop.close()


def test_every_form_without_its_token_is_refused(browser: Browser) -> None:
    browser.get("/signup")  # the double-submit cookie, but no field
    refused = browser.request(
        "POST", "/signup", data={"email": "a@b.example", "password": PASSWORD}
    )
    assert refused.status_code == 403 and "security token" in refused.text
    forged = browser.request(
        "POST",
        "/signup",
        data={"csrf_token": "x" * 43, "email": "a@b.example", "password": PASSWORD},
    )
    assert forged.status_code == 403
    browser.sign_up()
    for path in ("/account/keys", "/signout", "/account/password"):
        answer = browser.request("POST", path, data={"label": "x", "csrf_token": "wrong"})
        assert answer.status_code == 403, (path, answer.text)
    upload = browser.request(
        "POST",
        "/convert",
        data={"csrf_token": "wrong", "format": "svg"},
        files={"image": ("a.png", fake_image(), "image/png")},
    )
    assert upload.status_code == 403
    assert "No keys" not in browser.get("/account").text
    assert "You have no API keys yet." in browser.get("/account").text


def test_a_key_made_on_the_account_page_works_until_revoked(browser: Browser) -> None:
    browser.sign_up()
    created = browser.post("/account/keys", "/account", label="<b>shop</b> server")
    assert created.status_code == 201
    key = re.search(r'id="new-key" class="key" readonly value="([^"]+)"', created.text)
    assert key is not None
    assert "&lt;b&gt;shop&lt;/b&gt; server" in created.text and "<b>shop</b>" not in created.text
    auth = {"Authorization": f"Bearer {key.group(1)}"}
    assert browser.get("/v1/account", headers=auth).status_code == 200
    assert key.group(1) not in browser.get("/account").text  # shown once
    key_id = re.search(r'href="/account/keys/([^"/]+)/revoke"', created.text)
    assert key_id is not None
    confirm = browser.get(f"/account/keys/{key_id.group(1)}/revoke")
    assert confirm.status_code == 200 and "Revoke this key?" in confirm.text
    revoked = browser.post(f"/account/keys/{key_id.group(1)}/revoke")
    assert revoked.status_code == 303 and revoked.headers["location"] == "/account?done=revoked"
    assert browser.get("/v1/account", headers=auth).status_code == 401
    assert "no longer works" in browser.get("/account?done=revoked").text


def test_a_sixth_key_is_refused_clearly(browser: Browser) -> None:
    browser.sign_up()
    for n in range(5):
        assert browser.post("/account/keys", "/account", label=f"k{n}").status_code == 201
    sixth = browser.post("/account/keys", "/account", label="k6")
    assert sixth.status_code == 409 and "Key limit reached" in sixth.text


def test_converting_counts_downloads_against_the_free_plan(browser: Browser) -> None:
    browser.sign_up()
    downloads = []
    for n in range(6):
        sent = submit(browser, image=f"IMG PNG 100 100 {n}")
        assert sent.status_code == 303, sent.text
        job_path = sent.headers["location"]
        assert re.fullmatch(r"/jobs/job_[0-9a-f]{32}", job_path)
        status = browser.get(job_path + "/status").json()
        assert status == {
            "status": "queued",
            "phase": "queued",
            "progress": 0,
            "finished": False,
            "error": None,
        }
        finish(browser)
        assert browser.get(job_path + "/status").json()["finished"] is True
        page = browser.get(job_path)
        assert "Download SVG" in page.text
        downloads.append(browser.post(job_path + "/download", job_path))
    for answer in downloads[:5]:
        assert answer.status_code == 200 and answer.content == b"<svg/>"
        assert answer.headers["content-disposition"].startswith('attachment; filename="job_')
    sixth = downloads[5]
    assert sixth.status_code == 429 and "Daily download limit reached" in sixth.text
    assert "monthly" in sixth.text.lower() and int(sixth.headers["retry-after"]) >= 1
    assert "Sign out" in sixth.text  # the error page still shows the person signed in
    first = re.search(r'filename="(job_[0-9a-f]{32})', downloads[0].headers["content-disposition"])
    assert first is not None
    again = browser.post(f"/jobs/{first.group(1)}/download", f"/jobs/{first.group(1)}")
    assert again.status_code == 200  # the same result again does not count
    assert "5 of 5" in browser.get("/account").text
    browser.operator.set_plan(account_of(browser), Plan.MONTHLY)
    sixth_path = f"/jobs/{sixth.request.url.path.split('/')[2]}"
    assert browser.post(sixth_path + "/download", sixth_path).status_code == 200
    assert "Monthly" in browser.get("/account").text


def test_website_jobs_are_not_the_apis(browser: Browser) -> None:
    browser.sign_up()
    job_path = submit(browser).headers["location"]
    created = browser.post("/account/keys", "/account", label="api")
    key = re.search(r'readonly value="([^"]+)"', created.text)
    assert key is not None
    auth = {"Authorization": f"Bearer {key.group(1)}"}
    assert browser.get(f"/v1{job_path}", headers=auth).status_code == 404
    assert browser.get("/v1/account", headers=auth).json()["active_jobs"] == 0
    canceled = browser.post(job_path + "/cancel", job_path)
    assert canceled.status_code == 303
    assert "canceled" in browser.get(job_path).text


def test_option_errors_use_the_apis_wording(browser: Browser) -> None:
    browser.sign_up()
    created = browser.post("/account/keys", "/account", label="api")
    key = re.search(r'readonly value="([^"]+)"', created.text)
    assert key is not None
    auth = {"Authorization": f"Bearer {key.group(1)}"}
    api = browser.request(
        "POST",
        "/v1/jobs",
        headers=auth,
        data={"format": "svg", "size": "12"},
        files={"image": ("a.png", fake_image(), "image/png")},
    ).json()
    page = submit(browser, size="12", image="not an image <i>")
    assert page.status_code == 400
    assert str(markupsafe.escape(api["detail"])) in page.text
    assert 'id="size" name="size" value="12"' in page.text
    assert 'aria-invalid="true"' in page.text
    bad = submit(browser, image="not an image")
    assert bad.status_code == 422 and "Unsupported image" in bad.text
    named = browser.request(
        "POST",
        "/convert",
        data={"csrf_token": browser.token("/"), "format": "svg"},
        files={"image": ("<img src=x onerror=alert(1)>.png", b"nope", "image/png")},
    )
    assert "&lt;img src=x onerror=alert(1)&gt;.png" in named.text
    assert "<img src=x" not in named.text


def test_an_upload_past_the_per_minute_limit_is_refused_before_it_is_read(
    browser: Browser,
) -> None:
    browser.sign_up()
    token = browser.token("/")
    bucket = website_submissions_bucket(account_of(browser))
    for _ in range(POLICY.submissions_per_minute):
        assert browser.ports.limiter.hit(bucket, 10_000, browser.clock.now()).allowed
    form = httpx.Request(
        "POST",
        "http://testserver/convert",
        data={"csrf_token": token, "format": "svg"},
        files={"image": ("pic.png", fake_image(), "image/png")},
    )
    body = form.read()
    pieces_read: list[bytes] = []

    async def upload() -> AsyncIterator[bytes]:
        pieces_read.append(body)
        yield body

    refused = browser.request(
        "POST",
        "/convert",
        content=upload(),
        headers={"Content-Type": form.headers["content-type"], "Content-Length": str(len(body))},
    )
    assert refused.status_code == 429, refused.text
    assert "conversions per minute" in refused.text
    assert refused.headers["retry-after"].isdigit()
    assert pieces_read == []
    # The refusal counted nothing: once the minute is over, the same upload is accepted.
    browser.clock.advance(seconds=61)
    assert submit(browser).status_code == 303


def test_an_upload_left_part_way_stores_nothing(browser: Browser) -> None:
    browser.sign_up()
    token = browser.token("/")
    form = httpx.Request(
        "POST",
        "http://testserver/convert",
        data={"csrf_token": token, "format": "svg"},
        files={"image": ("pic.png", fake_image(), "image/png")},
    )
    body = form.read()
    cookie = "; ".join(f"{name}={value}" for name, value in browser.client.cookies.items())
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/convert",
        "raw_path": b"/convert",
        "root_path": "",
        "query_string": b"",
        "server": ("testserver", 80),
        "client": ("192.0.2.5", 4000),
        "headers": [
            (b"host", b"testserver"),
            (b"cookie", cookie.encode()),
            (b"content-type", form.headers["content-type"].encode()),
            (b"content-length", str(len(body)).encode()),
        ],
    }
    arriving = [
        {"type": "http.request", "body": body[:100], "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return arriving.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    transport = browser.client._transport
    assert isinstance(transport, httpx.ASGITransport)
    browser.loop.run_until_complete(transport.app(scope, receive, send))
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 499
    account = account_of(browser)
    with browser.ports.reader() as uow:
        assert uow.jobs.recent_for(account, 10) == []
    assert submit(browser).status_code == 303  # the same person converts again at once


def test_sign_in_is_limited_with_a_clear_message(browser: Browser) -> None:
    browser.sign_up("grace@example.com")
    browser.post("/signout", "/account")
    answers = [
        browser.post("/signin", email="grace@example.com", password="wrong password!")
        for _ in range(6)
    ]
    assert answers[0].status_code == 401 and "Sign-in failed" in answers[0].text
    last = answers[-1]
    assert last.status_code == 429 and "Too many sign-in attempts" in last.text
    assert int(last.headers["retry-after"]) >= 1
    right = browser.post("/signin", email="grace@example.com", password=PASSWORD)
    assert right.status_code == 429  # even the right password waits


def test_sign_ups_from_one_network_are_limited_with_a_clear_page(browser: Browser) -> None:
    for n in range(5):
        fresh = browser.other()
        fresh.sign_up(f"person{n}@example.com")
    refused = browser.other().post("/signup", email="person5@example.com", password=PASSWORD)
    assert refused.status_code == 429 and "Too many sign-ups" in refused.text
    assert "invite" in refused.text
    assert int(refused.headers["retry-after"]) > 23 * 3600
    browser.clock.advance(86400)
    browser.other().sign_up("person5@example.com")


def test_sign_out_and_sign_in_again(browser: Browser) -> None:
    browser.sign_up("lin@example.com")
    out = browser.post("/signout", "/account")
    assert out.status_code == 303 and out.headers["location"] == "/"
    assert "Max-Age=0" in raw_set_cookie(out, "printjob_session")
    asked = browser.get("/account")
    assert asked.status_code == 303 and asked.headers["location"] == "/signin?next=/account"
    back = browser.post(
        "/signin",
        "/signin?next=/account",
        email="lin@example.com",
        password=PASSWORD,
        next="/account",
    )
    assert back.status_code == 303 and back.headers["location"] == "/account"
    evil = browser.post(
        "/signin", email="lin@example.com", password=PASSWORD, next="//evil.example"
    )
    assert evil.headers["location"] == "/"
    tab = browser.post(
        "/signin", email="lin@example.com", password=PASSWORD, next="/\t/evil.example"
    )
    assert tab.headers["location"] == "/"


def test_a_disabled_accounts_session_ends(browser: Browser) -> None:
    browser.sign_up()
    browser.operator.disable_account(account_of(browser))
    asked = browser.get("/account")
    assert asked.status_code == 303 and asked.headers["location"].startswith("/signin")
    assert browser.get("/jobs/job_" + "0" * 32 + "/status").status_code == 401


def test_changing_the_password_ends_the_other_sessions(browser: Browser) -> None:
    browser.sign_up("kim@example.com")
    phone = browser.other()
    assert phone.post("/signin", email="kim@example.com", password=PASSWORD).status_code == 303
    assert phone.get("/account").status_code == 200
    changed = browser.post(
        "/account/password", current_password=PASSWORD, new_password="a new long passphrase"
    )
    assert changed.status_code == 303 and changed.headers["location"] == "/account?done=password"
    assert "printjob_session=" in changed.headers["set-cookie"]
    assert browser.get("/account").status_code == 200
    assert phone.get("/account").status_code == 303
    wrong = browser.post(
        "/account/password", current_password="nope nope nope", new_password="x" * 12
    )
    assert wrong.status_code in (400, 401) and "alert" in wrong.text


def test_closed_sign_up_and_invites() -> None:
    browser = make_browser(signup_open=False)
    try:
        page = browser.get("/signup")
        assert page.status_code == 403 and "invitation" in page.text
        account = browser.operator.create_account(0, 3)
        _invite, token = browser.operator.invite(account.id, "ivy@example.com")
        form = browser.get(f"/invite/{token}")
        assert form.status_code == 200 and "ivy@example.com" in form.text
        accepted = browser.post(f"/invite/{token}", password=PASSWORD)
        assert accepted.status_code == 303
        assert account.id in browser.get("/account").text
        used = browser.get(f"/invite/{token}")
        assert used.status_code == 404 and "This invite link does not work" in used.text
    finally:
        browser.loop.run_until_complete(browser.client.aclose())
        browser.loop.close()


def test_unknown_jobs_and_methods_are_pages_not_500s(browser: Browser) -> None:
    browser.sign_up()
    missing = browser.get("/jobs/job_" + "1" * 32)
    assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]
    assert browser.get("/jobs/nonsense").status_code == 404
    assert browser.request("PUT", "/account").status_code == 405
    assert browser.request("POST", "/convert", content=b"x").status_code in (400, 403)


@pytest.mark.parametrize("path", ["/", "/signup", "/signin", "/static/site.css"])
def test_head_on_a_page_answers_its_headers_without_a_body(browser: Browser, path: str) -> None:
    got = browser.get(path)
    head = browser.request("HEAD", path)
    assert head.status_code == got.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    assert "content-security-policy" in head.headers


def test_head_on_the_api_is_still_405(browser: Browser) -> None:
    answer = browser.request("HEAD", "/v1/jobs")
    assert answer.status_code == 405
