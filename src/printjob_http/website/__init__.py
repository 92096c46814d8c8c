"""The website (issue #11): sign-up, the account page with API keys, converting in the
browser, served by `printjob serve` under `/` beside the API.

Wiring only, like the API's shell: the rules are `printjob_core.services.website`'s. What
is where: `routes` (the pages), `forms` (reading forms and the upload), `cookies`, `csrf`,
`security` (the headers), `head` (HEAD on pages), `pages` (the templates), `refusals`
(errors as pages), `paths` (which paths are the website's, for the gate), `static_files`,
`site` (what handlers get).
"""

from __future__ import annotations

from pathlib import Path

from litestar import Litestar
from litestar.di import Provide

from printjob_core.limits import Policy
from printjob_core.services.website import WebsiteService
from printjob_http.shell import Network
from printjob_http.website.head import answering_head
from printjob_http.website.pages import Pages
from printjob_http.website.paths import is_website_path
from printjob_http.website.refusals import EXCEPTION_HANDLERS
from printjob_http.website.routes import HANDLERS
from printjob_http.website.security import ASGIApp, with_security_headers
from printjob_http.website.site import Site
from printjob_http.website.static_files import static_file


def create_website(
    service: WebsiteService,
    policy: Policy,
    base_url: str | None,
    trusted: tuple[Network, ...],
    spool_dir: Path | None = None,
) -> ASGIApp:
    """The website as an ASGI app (the gate hands it the website's paths); uploads are
    spooled to `spool_dir` while they arrive, as the API's are."""
    site = Site(
        service=service,
        pages=Pages(signup_open=service.signup_open),
        policy=policy,
        secure_cookies=bool(base_url and base_url.lower().startswith("https://")),
        trusted=trusted,
        spool_dir=spool_dir,
    )

    def provide_site() -> Site:
        return site

    app = Litestar(
        route_handlers=[*HANDLERS, static_file],
        dependencies={"site": Provide(provide_site, use_cache=True, sync_to_thread=False)},
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=None,
        request_max_body_size=policy.max_upload_bytes,
        debug=False,
        logging_config=None,
    )
    app.state["site"] = site
    return with_security_headers(answering_head(app))


__all__ = ["create_website", "is_website_path"]
