"""The website in Chromium against a real server: sign up and in, keys that work on the
API, converting with the progress seen, the download quota, CSRF, cookies, escaping, the
sign-in limit, a disabled account, and a password change ending the other sessions."""

from __future__ import annotations

import contextlib
import itertools
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import httpx
from PIL import Image
from playwright.sync_api import Browser, BrowserContext, Page, Response, Route, expect
from playwright.sync_api import Error as PlaywrightError

from tests.contract.support import ServerProcess, cli, png, shaded_png
from tests.contract.website.conftest import PASSWORD, Camera

_people = itertools.count(1)


def new_email(tag: str) -> str:
    return f"{tag}-{next(_people)}@example.com"


def sign_up(page: Page, camera: Camera, email: str) -> None:
    page.goto("/")
    camera.shot(page, "front-page")
    page.get_by_role("link", name="Sign up free").click()
    expect(page).to_have_title("Sign up · printjob")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    camera.shot(page, "sign-up")
    page.get_by_role("button", name="Create account").click()
    expect(page).to_have_title("Convert a picture · printjob")
    camera.shot(page, "converter")


def sign_in(page: Page, camera: Camera, email: str, password: str = PASSWORD) -> None:
    page.goto("/signin")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    camera.shot(page, "sign-in")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()
    camera.shot(page, "signed-in-or-refused")


def account_id(page: Page) -> str:
    page.goto("/account")
    found = re.search(r"account (acct_[0-9a-f]+)", page.locator("main").inner_text())
    assert found is not None
    return found.group(1)


def convert(
    page: Page, camera: Camera, image: bytes, fmt: str = "svg", name: str = "pic.png"
) -> str:
    """Submit `image` on the converter; the job's page path."""
    page.goto("/")
    page.get_by_label("Picture").set_input_files(
        {"name": name, "mimeType": "image/png", "buffer": image}
    )
    page.get_by_label("Format").select_option(fmt)
    page.get_by_role("button", name="Convert").click()
    expect(page).to_have_url(re.compile(r"/jobs/job_[0-9a-f]{32}$"))
    camera.shot(page, "job")
    return "/jobs/" + page.url.rsplit("/", 1)[1]


def wait_succeeded(page: Page) -> None:
    expect(page.locator("#job-status")).to_have_text("succeeded", timeout=90_000)


def test_sign_up_key_on_the_api_then_revoke(
    page: Page, context: BrowserContext, camera: Camera, site: ServerProcess
) -> None:
    sign_up(page, camera, new_email("keys"))
    cookie = next(c for c in context.cookies() if c["name"] == "printjob_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and not cookie["secure"]
    page.get_by_role("link", name="Account").click()
    expect(page).to_have_title("Your account · printjob")
    label = '<img src=x onerror="document.title=1">shop & co'
    page.get_by_label("Label for a new key").fill(label)
    page.get_by_role("button", name="Create key").click()
    key = page.get_by_role("textbox", name="New API key").input_value()
    assert key.startswith("pjk1_")
    expect(page.get_by_role("cell", name=label, exact=True)).to_be_visible()
    assert page.locator("main img").count() == 0  # the label is text, not markup
    camera.shot(page, "key-created")
    page.get_by_role("button", name="Copy key").click()
    with httpx.Client(base_url=site.base_url, timeout=30) as http:
        auth = {"Authorization": f"Bearer {key}"}
        assert http.get("/v1/account", headers=auth).status_code == 200
        page.goto("/account")
        expect(page.get_by_role("textbox", name="New API key")).to_have_count(0)  # shown once
        camera.shot(page, "account")
        page.get_by_role("link", name=re.compile("^Revoke key")).click()
        expect(page).to_have_title("Revoke key · printjob")
        camera.shot(page, "revoke-confirm")
        page.get_by_role("button", name="Revoke key").click()
        expect(page.get_by_role("status")).to_contain_text("no longer works")
        camera.shot(page, "revoked")
        assert http.get("/v1/account", headers=auth).status_code == 401
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_title("Pictures to print files · printjob")


def test_convert_with_progress_and_open_the_file(page: Page, camera: Camera) -> None:
    sign_up(page, camera, new_email("convert"))
    seen: list[dict[str, Any]] = []

    def note(answer: Response) -> None:
        if answer.url.endswith("/status"):
            with contextlib.suppress(PlaywrightError):  # a body gone with a reload
                seen.append(answer.json())

    page.on("response", note)
    page.get_by_label("Picture").set_input_files(
        {"name": "small.png", "mimeType": "image/png", "buffer": png()}
    )
    page.get_by_label("Size in pixels (W x H)").fill("12")
    page.get_by_role("button", name="Convert").click()
    expect(page.get_by_role("alert")).to_contain_text(
        "size '12' is not valid: send original or <width>x<height> in pixels"
    )  # the API's own wording
    expect(page.get_by_label("Size in pixels (W x H)")).to_have_attribute("aria-invalid", "true")
    camera.shot(page, "option-refused")
    page.get_by_label("Size in pixels (W x H)").fill("")
    name = "<b>bold</b> logo.png"
    page.get_by_label("Picture").set_input_files(
        # Shaded art: the job runs for over a second, so the page sees it unfinished
        # (flat shapes of this size take the engine about 0.4 s, and the page could see
        # only the finished job).
        {"name": name, "mimeType": "image/png", "buffer": shaded_png(900, 200)}
    )
    expect(page.locator("#chosen-name")).to_have_text(name)
    expect(page.locator("#original-preview")).to_be_visible()
    assert page.locator("#chosen-name b").count() == 0
    camera.shot(page, "picture-chosen")
    page.get_by_role("button", name="Convert").click()
    expect(page).to_have_url(re.compile(r"/jobs/job_[0-9a-f]{32}$"))
    expect(page.locator("#job-progress")).to_be_visible()
    camera.shot(page, "progress")
    wait_succeeded(page)
    camera.shot(page, "succeeded")
    unfinished = [s for s in seen if not s["finished"]]
    assert unfinished, seen
    assert all(s["phase"] in ("queued", "analysing", "building", "finishing") for s in unfinished)
    progress = [s["progress"] for s in seen]
    assert progress == sorted(progress)
    with page.expect_download() as download:
        page.get_by_role("button", name="Download SVG").click()
    path = download.value.path()
    assert download.value.suggested_filename.endswith(".svg")
    expect(page.get_by_role("img", name="Preview of the downloaded SVG file")).to_be_visible()
    camera.shot(page, "downloaded-with-preview")
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    assert len(list(root.iter())) > 3


def test_the_progress_poll_stops_when_the_job_cannot_be_found(
    page: Page, camera: Camera, site: ServerProcess
) -> None:
    """The page's status requests are sent on to the real server's status path of a job
    that does not exist, so each is answered 404 by the server itself."""
    sign_up(page, camera, new_email("gone"))
    missing = f"{site.base_url}/jobs/job_{'0' * 32}/status"
    asked: list[str] = []

    def to_missing_job(route: Route) -> None:
        asked.append(route.request.url)
        route.continue_(url=missing)

    page.route(re.compile(r"/jobs/job_[0-9a-f]{32}/status$"), to_missing_job)
    convert(page, camera, shaded_png(900, 200))  # unfinished for over a second: polled
    expect(page.locator("#job-poll-stopped")).to_contain_text(
        "can no longer be found", timeout=10_000
    )
    camera.shot(page, "poll-stopped")
    stopped_after = len(asked)
    page.wait_for_timeout(4_000)  # longer than the 3 s between retries
    assert len(asked) == stopped_after == 1


def test_the_sixth_download_of_a_free_account_is_refused(
    page: Page, context: BrowserContext, camera: Camera, site: ServerProcess
) -> None:
    sign_up(page, camera, new_email("quota"))
    account = account_id(page)
    jobs: list[str] = []
    for n in range(6):
        jobs.append(convert(page, camera, png(48, 48), fmt="png"))
        wait_succeeded(page)
        camera.shot(page, "job-succeeded")
        if n == 5:
            break
        with page.expect_download() as download:
            page.get_by_role("button", name="Download PNG").click()
        with Image.open(Path(download.value.path())) as opened:
            assert opened.format == "PNG" and opened.size[0] > 0
    camera.shot(page, "sixth-job")
    page.get_by_role("button", name="Download PNG").click()
    expect(page).to_have_title("Daily download limit reached · printjob")
    alert = page.get_by_role("alert").inner_text()
    assert "monthly" in alert.lower() and "UTC" in alert
    camera.shot(page, "quota-refused")
    page.goto("/account")
    expect(page.locator("main")).to_contain_text("5 of 5")
    camera.shot(page, "account-quota-used")
    cli(site.data_dir, "accounts", "plan", account, "monthly", **site.settings)
    page.goto(jobs[5])
    camera.shot(page, "sixth-job-monthly")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download PNG").click()
    assert download.value.suggested_filename.endswith(".png")
    page.goto("/account")
    expect(page.locator("main")).to_contain_text("Monthly")
    camera.shot(page, "account-monthly")


def test_a_form_without_its_csrf_token_is_refused(page: Page, camera: Camera) -> None:
    sign_up(page, camera, new_email("csrf"))
    page.goto("/account")
    page.evaluate("document.querySelectorAll('input[name=csrf_token]').forEach(e => e.remove())")
    page.get_by_label("Label for a new key").fill("forged")
    page.get_by_role("button", name="Create key").click()
    expect(page).to_have_title("This form could not be accepted · printjob")
    camera.shot(page, "csrf-refused")
    page.goto("/account")
    expect(page.locator("main")).to_contain_text("You have no API keys yet.")


def test_the_sign_in_limit_says_so(page: Page, camera: Camera) -> None:
    email = new_email("limit")
    sign_up(page, camera, email)
    page.get_by_role("button", name="Sign out").click()
    for _ in range(5):
        sign_in(page, camera, email, "not the password at all")
        expect(page.get_by_role("alert")).to_contain_text("Sign-in failed")
    sign_in(page, camera, email)
    expect(page.get_by_role("alert")).to_contain_text("Too many sign-in attempts")
    camera.shot(page, "throttled")


def test_a_disabled_accounts_session_ends(page: Page, camera: Camera, site: ServerProcess) -> None:
    sign_up(page, camera, new_email("disabled"))
    account = account_id(page)
    cli(site.data_dir, "accounts", "disable", account, **site.settings)
    page.goto("/account")
    expect(page).to_have_title("Sign in · printjob")
    camera.shot(page, "asked-to-sign-in")


def test_a_password_change_ends_the_other_sessions(
    browser: Browser, page: Page, camera: Camera, site: ServerProcess
) -> None:
    email = new_email("password")
    sign_up(page, camera, email)
    phone = browser.new_context(
        base_url=site.base_url, viewport={"width": 390, "height": 844}, is_mobile=True
    )
    try:
        other = phone.new_page()
        sign_in(other, camera, email)
        other.goto("/account")
        expect(other).to_have_title("Your account · printjob")
        camera.shot(other, "phone-account")
        page.goto("/account/password")
        page.get_by_label("Current password").fill(PASSWORD)
        page.get_by_label("New password").fill("another long passphrase")
        camera.shot(page, "change-password")
        page.get_by_role("button", name="Change password").click()
        expect(page.get_by_role("status")).to_contain_text("password was changed")
        camera.shot(page, "password-changed")
        other.goto("/account")
        expect(other).to_have_title("Sign in · printjob")
        camera.shot(other, "phone-signed-out")
    finally:
        phone.close()


def test_an_operators_invite_sets_a_password_for_an_existing_account(
    page: Page, camera: Camera, site: ServerProcess
) -> None:
    made = cli(site.data_dir, "accounts", "create", "--credits", "7", "--json", **site.settings)
    email = new_email("invited")
    invite = cli(
        site.data_dir,
        "accounts",
        "invite",
        made["account_id"],
        "--email",
        email,
        "--json",
        **site.settings,
    )
    assert invite["invite_url"].startswith(site.base_url + "/invite/")
    page.goto(invite["invite_url"])
    expect(page).to_have_title("Set your password · printjob")
    expect(page.locator("main")).to_contain_text(email)
    page.get_by_label("New password").fill(PASSWORD)
    camera.shot(page, "invite")
    page.get_by_role("button", name="Set password and sign in").click()
    expect(page).to_have_title("Convert a picture · printjob")
    page.goto("/account")
    expect(page.locator("main")).to_contain_text(made["account_id"])
    expect(page.locator("dd").first).to_have_text("7")  # the balance
    camera.shot(page, "invited-account")
    page.goto(invite["invite_url"])  # once only
    expect(page).to_have_title("This invite link does not work · printjob")
    camera.shot(page, "invite-used")


def test_a_picture_can_be_dropped_or_pasted(page: Page, camera: Camera) -> None:
    sign_up(page, camera, new_email("drop"))
    picture = list(png(40, 40))
    page.evaluate(
        """bytes => {
            const file = new File([new Uint8Array(bytes)], "dropped.png", {type: "image/png"});
            const data = new DataTransfer();
            data.items.add(file);
            document.getElementById("drop").dispatchEvent(
                new DragEvent("drop", {dataTransfer: data, bubbles: true, cancelable: true}));
        }""",
        picture,
    )
    expect(page.locator("#chosen-name")).to_have_text("dropped.png")
    expect(page.locator("#original-preview")).to_be_visible()
    camera.shot(page, "dropped")
    page.evaluate(
        """bytes => {
            const file = new File([new Uint8Array(bytes)], "pasted.png", {type: "image/png"});
            const data = new DataTransfer();
            data.items.add(file);
            document.dispatchEvent(
                new ClipboardEvent("paste", {clipboardData: data, bubbles: true}));
        }""",
        picture,
    )
    expect(page.locator("#chosen-name")).to_have_text("pasted.png")
    page.get_by_role("button", name="Convert").click()
    expect(page).to_have_url(re.compile(r"/jobs/job_[0-9a-f]{32}$"))
    camera.shot(page, "pasted-and-sent")
    wait_succeeded(page)


def test_head_on_pages_over_http(site: ServerProcess) -> None:
    """A monitor's HEAD gets the page's status and headers, no body; the API keeps 405."""
    with httpx.Client(base_url=site.base_url, timeout=30) as http:
        for path in ("/", "/signin", "/static/site.css"):
            head = http.head(path)
            assert head.status_code == 200, (path, head.status_code)
            assert head.content == b""
            assert int(head.headers["content-length"]) == len(http.get(path).content)
        assert http.head("/v1/jobs").status_code == 405
