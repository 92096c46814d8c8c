"""The gate: an ASGI app in front of Litestar that routes every request strictly.

Routing is decided before Litestar sees a request, so the answers do not depend on
Litestar's path normalisation:

* a path that is not one of the six (or a documentation page, `printjob_http.docs_pages`)
  is 404 `not_found`; a trailing slash or an empty segment makes a different path (no
  redirects);
* a known path with any other method (HEAD and OPTIONS included) is 405
  `method_not_allowed` with `Allow` listing the contract's methods only.

Outside `/v1`, the operator's `/healthz`, `/readyz` and `/metrics` (GET only) are routed
the same way (`OPERATOR_ROUTES`). Every answer, the gate's own included, carries the
request's `X-Request-Id` (`printjob_http.request_ids`).

The website's own paths (`printjob_http.website.paths`), when the server has a website,
go to the website's app (`Website`): its pages, not Problems, answer there.

The gate also answers the two reads clients repeat most (`GET /v1/jobs/{id}` and
`GET /v1/account`, see `printjob_http.polling`) without Litestar's per-request routing,
request and response objects, which cost as much as the read itself (decision 34).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import quote, unquote

import attrs

from printjob_adapters.logging_setup import bind_request, unbind
from printjob_core.errors import MethodNotAllowed, NotFound, ProblemError
from printjob_http.answers import Answer, problem_answer
from printjob_http.request_ids import REQUEST_ID, echoing, request_id_of

_SEGMENT = r"([^/]+)"
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]

#: The six operations, then the documentation pages: name, path pattern (on the raw, still
#: percent-encoded path), methods.
ROUTES: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("jobs", re.compile(r"/v1/jobs"), ("POST",)),
    ("job", re.compile(r"/v1/jobs/" + _SEGMENT), ("GET",)),
    ("cancel", re.compile(r"/v1/jobs/" + _SEGMENT + r"/cancel"), ("POST",)),
    ("result", re.compile(r"/v1/jobs/" + _SEGMENT + r"/result"), ("GET",)),
    ("account", re.compile(r"/v1/account"), ("GET",)),
    ("openapi", re.compile(r"/v1/openapi\.json"), ("GET",)),
    # The documentation pages (`printjob_http.docs_pages`): public, answered by the gate.
    ("docs", re.compile(r"/docs"), ("GET",)),
    ("docs_errors", re.compile(r"/docs/errors"), ("GET",)),
    ("docs_asset", re.compile(r"/docs/assets/redoc\.standalone\.js"), ("GET",)),
)

#: Where the gate notes the route's name in the scope (the metrics' `route` label).
ROUTE_NAME = "printjob.route"
#: The route name of every website page (one label, not one per page).
WEBSITE_ROUTE = "website"

#: The operator's endpoints, outside `/v1` and without a key: path -> (name, methods).
OPERATOR_ROUTES: dict[str, tuple[str, tuple[str, ...]]] = {
    "/healthz": ("healthz", ("GET",)),
    "/readyz": ("readyz", ("GET",)),
    "/metrics": ("metrics", ("GET",)),
}


@attrs.frozen
class Route:
    """A request's path as the gate understood it."""

    name: str
    methods: tuple[str, ...]
    #: The path Litestar routes on: decoded, but a "/" inside the segment stays encoded.
    canonical: str
    #: The decoded `{job_id}` segment, or "" for paths without one.
    segment: str


def match_route(raw_path: str) -> Route | None:
    """The route of a raw path; None when it is none of `ROUTES` (nor an operator's)."""
    operator = OPERATOR_ROUTES.get(raw_path)
    if operator is not None:
        return Route(operator[0], operator[1], raw_path, "")
    for name, pattern, methods in ROUTES:
        match = pattern.fullmatch(raw_path)
        if match is None:
            continue
        canonical, segment = raw_path, ""
        if match.groups():
            segment = unquote(match.group(1))
            # A decoded "/" would change the route Litestar picks: keep it encoded.
            shown = quote(segment, safe="") if "/" in segment else segment
            canonical = raw_path[: match.start(1)] + shown + raw_path[match.end(1) :]
        return Route(name, methods, canonical, segment)
    return None


@attrs.frozen
class Website:
    """The website beside the API: which raw paths are its, and the app that serves them."""

    claims: Callable[[str], bool]
    app: ASGIApp


#: An answer the gate gives itself: (scope, the route's segment) -> the answer.
DirectAnswer = Callable[[Any, str], Awaitable[Answer]]


class Gate:
    """Holds the Litestar app; routes every HTTP request, answers `direct` routes itself."""

    def __init__(
        self,
        app: ASGIApp,
        direct: Mapping[str, DirectAnswer],
        docs_for: Callable[[Any], str],
        website: Website | None = None,
    ) -> None:
        #: Everything the gate does not answer itself (and the lifespan) goes on to this.
        self.app = app
        self.direct = dict(direct)
        #: A request's scope -> the base of its Problem `type` links (`Shell.docs_for`).
        self.docs_for = docs_for
        self.website = website

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            # Every answer, whoever writes it, carries the request's id.
            request_id = scope[REQUEST_ID] = request_id_of(scope)
            token = bind_request(request_id)  # the API's log lines name the request
            try:
                await self._http(scope, receive, echoing(send, request_id))
            finally:
                unbind(token)
            return
        await self.app(scope, receive, send)

    async def _http(self, scope: Any, receive: Any, send: Any) -> None:
        route = await self._route(scope, send)
        if route is None:
            return
        if route.name == WEBSITE_ROUTE and self.website is not None:
            await self.website.app(scope, receive, send)
            return
        answer = self.direct.get(route.name)
        if answer is not None:
            await (await answer(scope, route.segment))(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _route(self, scope: Any, send: Any) -> Route | None:
        """Answer unknown paths (404) and other methods (405); the route when it goes on."""
        raw: bytes = scope.get("raw_path") or scope["path"].encode()
        raw_path = raw.decode("latin-1").split("?", 1)[0]
        method: str = scope["method"]
        route = match_route(raw_path)
        if route is None and self.website is not None and self.website.claims(raw_path):
            # The API's paths are matched first: its hot reads never pay for the website's.
            scope[ROUTE_NAME] = WEBSITE_ROUTE
            return Route(WEBSITE_ROUTE, (), raw_path, "")
        error: ProblemError | None = None
        headers: dict[str, str] = {}
        if route is None:
            error = NotFound(
                f"There is no {raw_path[:200]!r}; the API's paths are /v1/jobs, "
                "/v1/jobs/{job_id}, /v1/jobs/{job_id}/cancel, /v1/jobs/{job_id}/result, "
                "/v1/account and /v1/openapi.json."
            )
        elif method not in route.methods:
            allow = ", ".join(route.methods)
            error = MethodNotAllowed(f"{method[:20]} is not allowed here; use {allow}.")
            headers["Allow"] = allow
        if error is not None:
            docs_url = self.docs_for(scope)
            answer = problem_answer(error, docs_url, headers=headers, head=method == "HEAD")
            await answer(scope, None, send)
            return None
        assert route is not None
        scope["path"] = route.canonical
        scope[ROUTE_NAME] = route.name
        return route


__all__ = [
    "OPERATOR_ROUTES",
    "ROUTES",
    "ROUTE_NAME",
    "WEBSITE_ROUTE",
    "DirectAnswer",
    "Gate",
    "Route",
    "Website",
    "match_route",
]
