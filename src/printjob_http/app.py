"""The `/v1` HTTP shell (contract section 4): routes, authentication, Problem answers.

Wiring only: every rule lives in `printjob_core.services.ApiService`; this module turns
requests into its calls and its values and `ProblemError`s into answers.

Routing is strict and decided before Litestar sees a request (`PrintjobApp.__call__`),
so the answers do not depend on Litestar's path normalisation:

* a path that is not one of the six is 404 `not_found`; a trailing slash or an empty
  segment makes a different path (no redirects);
* a known path with any other method (HEAD and OPTIONS included) is 405
  `method_not_allowed` with `Allow` listing the contract's methods only.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Protocol, TypeVar
from urllib.parse import quote, unquote

import anyio.to_thread
import attrs
import msgspec
from litestar import Litestar, Request, Response, get, post
from litestar.exceptions import HTTPException
from litestar.types import ASGIApp, Receive, Scope, Send

from printjob_adapters.storage import Storage, WouldWait
from printjob_core.errors import (
    ImageTooLarge,
    InternalError,
    InvalidParameter,
    MethodNotAllowed,
    NotFound,
    ProblemError,
    RateLimited,
    ServerBusy,
    Unauthenticated,
)
from printjob_core.model import Account, Job, JobStatus
from printjob_core.options import IDEMPOTENCY_KEY_HEADER, IMAGE_FIELD
from printjob_core.services import ApiService, Ports, Submission
from printjob_core.shapes import job_view, problem_for, to_json
from printjob_http import multipart

log = logging.getLogger("printjob.http")

PROBLEM_JSON = "application/problem+json"
JSON = "application/json"
#: Polling hints of contract section 3.
RETRY_AFTER = {JobStatus.QUEUED: 5, JobStatus.RUNNING: 3}
#: Retry-After for a 429 whose error did not say (every 429 carries one, contract 4).
DEFAULT_RETRY_AFTER = 5
_SEGMENT = r"([^/]+)"

#: The six operations: name, path pattern (on the raw, still percent-encoded path), methods.
ROUTES: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("jobs", re.compile(r"/v1/jobs"), ("POST",)),
    ("job", re.compile(r"/v1/jobs/" + _SEGMENT), ("GET",)),
    ("cancel", re.compile(r"/v1/jobs/" + _SEGMENT + r"/cancel"), ("POST",)),
    ("result", re.compile(r"/v1/jobs/" + _SEGMENT + r"/result"), ("GET",)),
    ("account", re.compile(r"/v1/account"), ("GET",)),
    ("openapi", re.compile(r"/v1/openapi\.json"), ("GET",)),
)


@attrs.frozen
class Route:
    """A request's path as the gate understood it."""

    name: str
    methods: tuple[str, ...]
    #: The path Litestar routes on: decoded, but a "/" inside the segment stays encoded.
    canonical: str
    #: The decoded `{job_id}` segment, or "" for paths without one.
    segment: str


class Settings(Protocol):
    """The settings the shell reads (`printjob_adapters.settings.Settings` has them)."""

    base_url: str | None
    docs_url: str
    service_name: str
    trusted_proxies: tuple[str, ...]


class Container(Protocol):
    """What `printjob_adapters.bootstrap.bootstrap` returns, as far as the shell needs it."""

    settings: Any
    storage: Storage
    ports: Ports
    api: ApiService


T = TypeVar("T")


def match_route(raw_path: str) -> Route | None:
    """The route of a raw path; None when it is none of the six."""
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


#: Answers the gate gives itself: a route name -> an ASGI answer for (scope, segment).
DirectAnswer = Callable[[dict[str, Any], str], Awaitable[ASGIApp]]


class PrintjobApp(Litestar):
    """Litestar, behind a strict gate of the six paths and their methods.

    The gate also answers the two reads clients repeat most (`GET /v1/jobs/{id}` and
    `GET /v1/account`, see `direct`) without Litestar's per-request routing, request and
    response objects, which cost as much as the read itself; everything else goes on to
    Litestar.
    """

    #: Route name -> the answer the gate gives itself (filled by `create_app`).
    direct: Mapping[str, DirectAnswer] = MappingProxyType({})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            route = await self._gate(scope, send)
            if route is None:
                return
            answer = self.direct.get(route.name)
            if answer is not None:
                await (await answer(scope, route.segment))(scope, receive, send)
                return
        await super().__call__(scope, receive, send)

    async def _gate(self, scope: dict[str, Any], send: Send) -> Route | None:
        """Answer unknown paths (404) and other methods (405); the route when the app goes on."""
        raw: bytes = scope.get("raw_path") or scope["path"].encode()
        raw_path = raw.decode("latin-1").split("?", 1)[0]
        method: str = scope["method"]
        route = match_route(raw_path)
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
            await send_problem(send, error, self.state["docs_url"], headers, method == "HEAD")
            return None
        assert route is not None
        scope["path"] = route.canonical
        return route


async def send_problem(
    send: Send, error: ProblemError, docs_url: str, headers: dict[str, str], head: bool
) -> None:
    """A Problem answer written straight to ASGI (for requests Litestar never sees)."""
    body = msgspec.json.encode(to_json(problem_for(error, docs_url)))
    raw_headers = [
        (b"content-type", PROBLEM_JSON.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    raw_headers += [(k.lower().encode(), v.encode("latin-1")) for k, v in headers.items()]
    start: Any = {"type": "http.response.start", "status": error.status, "headers": raw_headers}
    await send(start)
    await send({"type": "http.response.body", "body": b"" if head else body, "more_body": False})


def problem_headers(
    error: ProblemError, headers: dict[str, str] | None = None, realm: str = ""
) -> dict[str, str]:
    """The headers a Problem's status calls for: `WWW-Authenticate` on 401, `Retry-After`
    on every 429 and 503 (contract 4)."""
    out = dict(headers or {})
    if isinstance(error, Unauthenticated):
        challenge = f'Bearer realm="{realm}"'
        if error.key_sent:
            challenge += ', error="invalid_token"'
        out["WWW-Authenticate"] = challenge
    if error.status in (429, 503):
        out["Retry-After"] = str(max(1, error.retry_after or DEFAULT_RETRY_AFTER))
    return out


def problem_response(
    error: ProblemError, docs_url: str, headers: dict[str, str] | None = None, realm: str = ""
) -> Response[bytes]:
    """An `application/problem+json` answer with the headers its status calls for."""
    body = msgspec.json.encode(to_json(problem_for(error, docs_url)))
    return Response(
        content=body,
        status_code=error.status,
        media_type=PROBLEM_JSON,
        headers=problem_headers(error, headers, realm),
    )


class JsonAnswer:
    """A JSON answer sent straight to ASGI.

    Litestar's `Response` builds header and cookie structures for every answer, a fifth of
    a poll's time; these answers have fixed, known headers, so they are written as they are.
    """

    __slots__ = ("body", "headers", "status")

    def __init__(
        self,
        value: object,
        status: int = 200,
        headers: dict[str, str] | None = None,
        media_type: str = JSON,
    ):
        self.status = status
        self.body = msgspec.json.encode(value)
        self.headers = [
            (b"content-type", media_type.encode()),
            (b"content-length", str(len(self.body)).encode()),
        ]
        if headers:
            self.headers += [(k.lower().encode(), v.encode("latin-1")) for k, v in headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start: Any = {"type": "http.response.start", "status": self.status, "headers": self.headers}
        await send(start)
        await send({"type": "http.response.body", "body": self.body, "more_body": False})


def client_address(scope: Scope, headers: Iterable[tuple[str, str]], trusted: list[Any]) -> str:
    """The client's address: the peer, or from `X-Forwarded-For` when the peer is a proxy.

    Walking `X-Forwarded-For` from the right, trusted proxies are skipped; the first
    address that is not one is the client (design decision 7).
    """
    client = scope.get("client")
    peer = client[0] if client else ""
    if not trusted or not _is_trusted(peer, trusted):
        return peer
    hops: list[str] = []
    for name, value in headers:
        if name.lower() == "x-forwarded-for":
            hops.extend(part.strip() for part in value.split(","))
    address = peer
    for hop in reversed([h for h in hops if h]):
        address = hop
        if not _is_trusted(hop, trusted):
            break
    return address


def _is_trusted(address: str, trusted: list[Any]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in trusted)


async def _in_thread(function: Callable[..., T], *args: Any) -> T:
    return await anyio.to_thread.run_sync(function, *args)


def create_app(container: Container) -> Litestar:
    """The `/v1` API over a composed container (see `printjob_adapters.bootstrap`)."""
    settings = container.settings
    api: ApiService = container.api
    policy = container.ports.policy
    docs_url: str = settings.docs_url
    realm: str = settings.service_name
    configured_base: str | None = settings.base_url
    trusted = [ipaddress.ip_network(n, strict=False) for n in settings.trusted_proxies]
    max_body = policy.max_upload_bytes

    def base_url(scope: Scope) -> str:
        """The API's address as clients reach it: configured, else from the request."""
        if configured_base:
            return configured_base.rstrip("/")
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
        if host is None:
            server = scope.get("server")
            host = f"{server[0]}:{server[1]}" if server else "localhost"
        return f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}".rstrip("/")

    def job_answer(scope: Scope, job: Job, status: int = 200, **extra: str) -> JsonAnswer:
        base = base_url(scope)
        headers = dict(extra)
        if job.status in RETRY_AFTER:
            headers["Retry-After"] = str(RETRY_AFTER[job.status])
        view = job_view(job, f"{base}/v1/jobs/{job.id}/result")
        return JsonAnswer(to_json(view), status, headers)

    def credentials(scope: Scope) -> tuple[str | None, str]:
        """The Authorization header and the client's address, for `ApiService.authenticate`.

        Read from the raw ASGI headers (names arrive lower-cased): building Litestar's
        header mapping for two lookups cost more than the lookups.
        """
        raw: list[tuple[bytes, bytes]] = scope["headers"]
        sent = [value.decode("latin-1") for name, value in raw if name == b"authorization"]
        decoded = ((name.decode("latin-1"), value.decode("latin-1")) for name, value in raw)
        address = client_address(scope, decoded, trusted)
        # Two Authorization headers are not one credential (RFC 9110 11.6.2): refused as a
        # malformed key, whichever of them a proxy in front may have looked at.
        authorization = sent[0] if len(sent) == 1 else ("Bearer" if sent else None)
        return authorization, address

    async def authenticate(request: Request[Any, Any, Any]) -> Account:
        return await _in_thread(api.authenticate, *credentials(request.scope))

    # A storage that can read without ever waiting (SQLite) lets the event loop run a
    # poll's read itself; a trip to the thread pool costs several times the few SQLite
    # statements of a read, and under load the loop and the pool's threads fight for the
    # GIL. Whatever would wait goes to the pool as before.
    immediate = container.storage.immediate_reads()

    async def on_loop_or_thread(operation: Callable[..., T], *args: Any) -> T:
        """Run a read on the loop when the storage can do it without waiting, else in the
        thread pool (where waiting is fine)."""
        if immediate is not None:
            try:
                return immediate.attempt(lambda: operation(*args))
            except WouldWait:
                pass  # it would have waited: do it where waiting is fine
        return await _in_thread(operation, *args)

    async def as_account(
        request: Request[Any, Any, Any], operation: Callable[..., T], *args: Any
    ) -> T:
        """Authenticate and run `operation(account, *args)` in one trip to the thread pool."""
        authorization, address = credentials(request.scope)

        def run() -> T:
            return operation(api.authenticate(authorization, address), *args)

        return await _in_thread(run)

    def refuse_submission(account: Account, error: ProblemError) -> ProblemError:
        """A refusal decided here still counts as a submission, so 429 keeps its place.

        The core counts submissions inside `submit`; a request refused before it gets
        there is counted here, and a client over the limit gets 429 first (decision 6).
        """
        try:
            api.count_submission(account)
        except RateLimited as limited:
            return limited
        return error

    async def read_body(request: Request[Any, Any, Any], account: Account) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None:
            if not declared.isdigit():
                raise await _in_thread(
                    refuse_submission,
                    account,
                    InvalidParameter("Content-Length is not a number.", param=IMAGE_FIELD),
                )
            if int(declared) > max_body:
                raise await _in_thread(refuse_submission, account, too_large(int(declared)))
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_body:
                raise await _in_thread(refuse_submission, account, too_large())
            chunks.append(chunk)
        return b"".join(chunks)

    def too_large(size: int | None = None) -> ImageTooLarge:
        what = f"{size:,} bytes" if size is not None else f"over {max_body:,} bytes"
        return ImageTooLarge(
            f"The request is {what}; at most {max_body:,} bytes (30 MB) are accepted. "
            "Send a smaller image.",
            param=IMAGE_FIELD,
        )

    def parse_and_submit(
        account: Account, content_type: str | None, body: bytes, key: str | None
    ) -> Submission:
        try:
            form = multipart.parse(body, multipart.boundary_of(content_type))
        except ProblemError as error:
            raise refuse_submission(account, error) from None
        return api.submit(account, form.fields, form.image, key)

    @post("/v1/jobs", status_code=202)
    async def submit_job(request: Request[Any, Any, Any]) -> ASGIApp:
        account = await authenticate(request)
        content_type = request.headers.get("content-type")
        try:
            multipart.boundary_of(content_type)
        except ProblemError as error:
            raise await _in_thread(refuse_submission, account, error) from None
        body = await read_body(request, account)
        key = request.headers.get(IDEMPOTENCY_KEY_HEADER)
        submission = await _in_thread(parse_and_submit, account, content_type, body, key)
        job = submission.job
        extra = {"Location": f"{base_url(request.scope)}/v1/jobs/{job.id}"}
        if submission.replayed:
            extra["Idempotent-Replayed"] = "true"
        return job_answer(request.scope, job, 202, **extra)

    @post("/v1/jobs/{job_id:str}/cancel", status_code=200)
    async def cancel_job(request: Request[Any, Any, Any], job_id: str) -> ASGIApp:
        job = await as_account(request, api.cancel, job_id)
        return job_answer(request.scope, job)

    @get("/v1/jobs/{job_id:str}/result")
    async def download(request: Request[Any, Any, Any], job_id: str) -> Response[bytes]:
        job, data = await as_account(request, api.result, job_id)
        fmt = job.options.format
        return Response(
            content=data,
            status_code=200,
            media_type=fmt.media_type,
            headers={
                "Content-Disposition": f'attachment; filename="{job.id}.{fmt.value}"',
                "X-Content-Type-Options": "nosniff",
            },
        )

    # -- the two reads the gate answers itself (see `PrintjobApp`) --

    async def read_job(scope: Scope, job_id: str) -> ASGIApp:
        job = await on_loop_or_thread(api.job_for_key, *credentials(scope), job_id)
        return job_answer(scope, job)

    async def read_account(scope: Scope, _segment: str) -> ASGIApp:
        view = await on_loop_or_thread(api.account_for_key, *credentials(scope))
        return JsonAnswer(to_json(view))

    def problem_answer(error: ProblemError) -> JsonAnswer:
        return JsonAnswer(
            to_json(problem_for(error, docs_url)),
            error.status,
            problem_headers(error, realm=realm),
            PROBLEM_JSON,
        )

    def guarded(read: DirectAnswer) -> DirectAnswer:
        """`read` with its errors answered as `on_problem` and `on_exception` would."""

        async def answer(scope: dict[str, Any], segment: str) -> ASGIApp:
            try:
                return await read(scope, segment)
            except ProblemError as error:
                if isinstance(error, InternalError):
                    log.error("internal error on GET %s: %s", scope["path"], error)
                return problem_answer(error)
            except Exception as error:
                log.error("unhandled error on GET %s", scope["path"], exc_info=error)
                return problem_answer(
                    InternalError("Something went wrong on our side; please retry.")
                )

        return answer

    openapi_cache: list[bytes] = []

    @get("/v1/openapi.json")
    async def openapi(request: Request[Any, Any, Any]) -> Response[bytes]:
        if not openapi_cache:
            from printjob_http.openapi import openapi_document

            openapi_cache.append(msgspec.json.encode(openapi_document(settings)))
        return Response(content=openapi_cache[0], media_type=JSON)

    def on_problem(request: Request[Any, Any, Any], error: Exception) -> Response[bytes]:
        assert isinstance(error, ProblemError)
        if isinstance(error, InternalError):
            log.error("internal error on %s %s: %s", request.method, request.url.path, error)
        return problem_response(error, docs_url, realm=realm)

    def on_http_exception(request: Request[Any, Any, Any], error: Exception) -> Response[bytes]:
        """Litestar's own refusals (should the gate ever let one through), as Problems."""
        assert isinstance(error, HTTPException)
        status = error.status_code
        problem: ProblemError
        if status == 404:
            problem = NotFound("Not found.")
        elif status == 405:
            problem = MethodNotAllowed("Method not allowed.")
        elif status == 413:
            problem = too_large()
        elif status == 400:
            problem = InvalidParameter(str(error.detail)[:200], param=IMAGE_FIELD)
        elif status == 503:
            problem = ServerBusy("The server is busy; retry shortly.", retry_after=5)
        elif status == 429:
            problem = RateLimited("Too many requests.", retry_after=DEFAULT_RETRY_AFTER)
        else:
            log.error("HTTP exception on %s %s: %r", request.method, request.url.path, error)
            problem = InternalError("Something went wrong on our side; please retry.")
        return problem_response(problem, docs_url, realm=realm)

    def on_exception(request: Request[Any, Any, Any], error: Exception) -> Response[bytes]:
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=error)
        problem: ProblemError = InternalError(
            "Something went wrong on our side; nothing was charged. Please retry."
        )
        return problem_response(problem, docs_url, realm=realm)

    app = PrintjobApp(
        route_handlers=[submit_job, cancel_job, download, openapi],
        openapi_config=None,
        exception_handlers={
            ProblemError: on_problem,
            HTTPException: on_http_exception,
            Exception: on_exception,
        },
        request_max_body_size=max_body,
        debug=False,
        # Logging is the process's (`printjob_http.server.configure_logging`): Litestar's
        # default would route every record through a queue to a second thread, and that
        # thread's fight for the GIL with the event loop doubled the cost of a poll.
        logging_config=None,
    )
    app.state["docs_url"] = docs_url
    app.direct = {"job": guarded(read_job), "account": guarded(read_account)}
    return app


__all__ = [
    "ROUTES",
    "JsonAnswer",
    "PrintjobApp",
    "Route",
    "client_address",
    "create_app",
    "match_route",
    "problem_headers",
    "problem_response",
]
