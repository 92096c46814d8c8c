"""The website in a real browser: Debian's Chromium driven by Playwright (nothing is
downloaded), against a real `printjob serve` per module.

Every page a test visits is saved as a screenshot under `screenshots/` (git-ignored), named
after the test, so a person can look at what the browser showed.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from tests.contract.support import ServerProcess

SCREENSHOTS = Path(__file__).parent / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORD = "a long enough passphrase"


def chromium_path() -> str:
    found = shutil.which("chromium") or "/usr/bin/chromium"
    assert Path(found).exists(), "make test installs Debian's chromium (system-deps)"
    return found


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    launched = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    try:
        yield launched
    finally:
        launched.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the module; submissions generous enough for every test's jobs."""
    data_dir = tmp_path_factory.mktemp("website") / "data"
    # Every test signs up from loopback: the sign-up limit per network is lifted here (it
    # is tested in-process, `tests/unit/http/test_website_inprocess.py`).
    server = ServerProcess(
        data_dir,
        workers=1,
        PRINTJOB_SUBMISSIONS_PER_MINUTE="100",
        PRINTJOB_SIGNUPS_PER_DAY="0",
    ).start()
    try:
        yield server
    finally:
        server.stop()


class Camera:
    """Saves a screenshot of every page a test visits, in order."""

    def __init__(self, test_name: str) -> None:
        self.prefix = re.sub(r"[^a-z0-9_]+", "-", test_name.lower()).strip("-")
        self.count = 0

    def shot(self, page: Page, what: str) -> Path:
        self.count += 1
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / f"{self.prefix}-{self.count:02d}-{what}.png"
        page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def camera(request: pytest.FixtureRequest) -> Camera:
    return Camera(request.node.name)


@pytest.fixture
def context(browser: Browser, site: ServerProcess) -> Iterator[BrowserContext]:
    """A fresh browser profile (no cookies) for one test."""
    made = browser.new_context(base_url=site.base_url, accept_downloads=True)
    made.set_default_timeout(20_000)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()
