"""The operations Litestar routes: submit, cancel, download and the OpenAPI document, with
the `Shell` (services and settings) injected; and the exception handlers that turn every
refusal into a Problem.

A new route: a handler here, its path in `printjob_http.gate.ROUTES`, its rules in a
service of `printjob_core.services`, and its description in `printjob_http.openapi`.
"""

from __future__ import annotations

import logging
from typing import Any, BinaryIO

import msgspec
from litestar import Request, get, post
from litestar.di import NamedDependency
from litestar.exceptions import HTTPException
from litestar.params import FromPath, SkipValidation
from litestar.types import ASGIApp

from printjob_adapters.metrics import recorder
from printjob_core.errors import (
    InternalError,
    InvalidParameter,
    MethodNotAllowed,
    NotFound,
    ProblemError,
    RateLimited,
    ServerBusy,
)
from printjob_core.model import Account, Job
from printjob_core.options import IDEMPOTENCY_KEY_HEADER, IMAGE_FIELD
from printjob_core.ports import BlobReader
from printjob_core.services import Submission, body_too_large
from printjob_http import multipart, spooling
from printjob_http.answers import (
    DEFAULT_RETRY_AFTER,
    JSON,
    Answer,
    encode_headers,
    problem_answer,
)
from printjob_http.polling import job_answer
from printjob_http.request_ids import REQUEST_ID
from printjob_http.shell import Shell, in_thread

log = logging.getLogger("printjob.http")
#: The `Shell` as Litestar injects it (`create_app` provides it): by name, and as it is,
#: since it is ours and not a request's input to validate.
Injected = NamedDependency[SkipValidation[Shell]]
#: The status the access log records for a request whose client left before it was read
#: whole (nginx's "client closed request"); nothing is sent, the client is gone.
CLIENT_CLOSED_REQUEST = 499


#: Bytes of a result read and sent at a time: large enough that a fast download costs a
#: few hundred thread hops for 42 MB, small enough that a slow one holds almost nothing.
DOWNLOAD_PIECE_BYTES = 256 * 1024


async def _authenticate(request: Request[Any, Any, Any], shell: Shell) -> Account:
    return await in_thread(shell.access.authenticate, *shell.credentials(request.scope))


async def _refuse(shell: Shell, account: Account, error: ProblemError) -> ProblemError:
    """The refusal to raise for `error`: still a submission, so 429 comes first."""
    return await in_thread(shell.submissions.refuse, account, error)


async def _read_body(
    request: Request[Any, Any, Any],
    shell: Shell,
    account: Account,
    spool: BinaryIO,
    boundary: bytes,
) -> multipart.DelimiterScan:
    """The body spooled (`spooling.read_body`); a refusal while it arrives (its size, or
    no turn to receive it) still counts as a submission."""
    try:
        return await spooling.read_body(request, shell.policy, spool, boundary)
    except ProblemError as error:
        raise await _refuse(shell, account, error) from None


def _parse_and_submit(
    shell: Shell,
    account: Account,
    spool: BinaryIO,
    scan: multipart.DelimiterScan,
    key: str | None,
    request_id: str | None,
) -> Submission:
    try:
        return _submit_spooled(shell, account, spool, scan, key, request_id)
    except ProblemError as error:
        # A refusal's traceback holds the frames that held the image's view of the spool
        # file: cut loose, the map is closed now, not whenever the collector finds it.
        error.__traceback__ = error.__cause__ = error.__context__ = None
        raise error from None


def _submit_spooled(
    shell: Shell,
    account: Account,
    spool: BinaryIO,
    scan: multipart.DelimiterScan,
    key: str | None,
    request_id: str | None,
) -> Submission:
    parsed = False
    try:
        with spooling.spooled_form(spool, scan) as form:
            parsed = True
            # The image is a view of the spool file: checked in place, stored from it.
            return shell.submissions.submit(account, form.fields, form.image, key, request_id)
    except ProblemError as error:
        if parsed:
            raise  # `submit` counted the submission itself
        raise shell.submissions.refuse(account, error) from None


@post("/v1/jobs", status_code=202)
async def submit_job(request: Request[Any, Any, Any], shell: Injected) -> ASGIApp:
    account = await _authenticate(request, shell)
    content_type = request.headers.get("content-type")
    try:
        boundary = multipart.boundary_of(content_type)
    except ProblemError as error:
        raise await _refuse(shell, account, error) from None
    await in_thread(shell.submissions.refuse_when_over_limit, account)
    with await in_thread(spooling.spool_file, shell.spool_dir) as spool:
        try:
            scan = await _read_body(request, shell, account, spool, boundary)
        except spooling.ClientDisconnected:
            log.info("client went away during its upload to %s; nothing stored", request.url.path)
            await in_thread(shell.submissions.abandoned, account)
            return Answer(b"", CLIENT_CLOSED_REQUEST, JSON)
        key = request.headers.get(IDEMPOTENCY_KEY_HEADER)
        request_id = request.scope.get(REQUEST_ID)
        submission = await in_thread(
            _parse_and_submit, shell, account, spool, scan, key, request_id
        )
    job = submission.job
    extra = {"Location": f"{shell.api_base(request.scope)}/v1/jobs/{job.id}"}
    if submission.replayed:
        extra["Idempotent-Replayed"] = "true"
    elif (counting := recorder()) is not None:
        counting.credits_held.inc(shell.policy.job_cost)
    return job_answer(shell, request.scope, job, 202, **extra)


@post("/v1/jobs/{job_id:str}/cancel", status_code=200)
async def cancel_job(
    request: Request[Any, Any, Any], shell: Injected, job_id: FromPath[str]
) -> ASGIApp:
    authorization, address = shell.credentials(request.scope)

    def cancel() -> Job:
        return shell.jobs.cancel(shell.access.authenticate(authorization, address), job_id)

    return job_answer(shell, request.scope, await in_thread(cancel))


@get("/v1/jobs/{job_id:str}/result")
async def download(
    request: Request[Any, Any, Any], shell: Injected, job_id: FromPath[str]
) -> ASGIApp:
    authorization, address = shell.credentials(request.scope)

    def result() -> tuple[Job, BlobReader]:
        return shell.jobs.download(shell.access.authenticate(authorization, address), job_id)

    job, reader = await in_thread(result)
    fmt = job.options.format
    headers = {
        "Content-Disposition": f'attachment; filename="{job.id}.{fmt.value}"',
        "X-Content-Type-Options": "nosniff",
    }
    return StreamedAnswer(reader, fmt.media_type, headers)


class StreamedAnswer:
    """A stored file sent piece by piece as the client takes it: uvicorn waits for the
    socket to drain before each next piece, so a client that reads slowly (or not at all,
    until the write timeout closes it) holds one piece, never the file."""

    __slots__ = ("headers", "reader")

    def __init__(self, reader: BlobReader, media_type: str, headers: dict[str, str]) -> None:
        self.reader = reader
        self.headers = encode_headers(b"", media_type, headers)
        self.headers[1] = (b"content-length", str(reader.size).encode())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.headers})
            remaining = self.reader.size
            while remaining > 0:
                piece = await in_thread(self.reader.read, min(DOWNLOAD_PIECE_BYTES, remaining))
                if not piece:
                    raise ResultCutShort(f"the stored file ended {remaining} bytes early")
                remaining -= len(piece)
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await in_thread(self.reader.close)

    def to_asgi_response(self, *args: Any, **kwargs: Any) -> StreamedAnswer:
        """What Litestar asks a handler's answer for."""
        return self


class ResultCutShort(Exception):
    """The stored result ended before its announced length (it was replaced or deleted
    while being sent); the connection is closed, the client sees a short download."""


@get("/v1/openapi.json")
async def openapi(shell: Injected) -> ASGIApp:
    # Built on first use: most processes never serve it, and it imports a large module.
    body = shell.cache.get("openapi")
    if body is None:
        from printjob_http.openapi import openapi_document

        body = shell.cache["openapi"] = msgspec.json.encode(openapi_document(shell.settings))
    return Answer(body, 200, JSON)


HANDLERS = (submit_job, cancel_job, download, openapi)


# -- exception handlers: Litestar's answers for what the handlers raise --


def _shell(request: Request[Any, Any, Any]) -> Shell:
    shell: Shell = request.app.state["shell"]
    return shell


def on_problem(request: Request[Any, Any, Any], error: Exception) -> Answer:
    assert isinstance(error, ProblemError)
    if isinstance(error, InternalError):
        log.error("internal error on %s %s: %s", request.method, request.url.path, error)
    shell = _shell(request)
    return problem_answer(error, shell.docs_for(request.scope), shell.realm)


def on_http_exception(request: Request[Any, Any, Any], error: Exception) -> Answer:
    """Litestar's own refusals (should the gate ever let one through), as Problems."""
    assert isinstance(error, HTTPException)
    shell = _shell(request)
    status = error.status_code
    problem: ProblemError
    if status == 404:
        problem = NotFound("Not found.")
    elif status == 405:
        problem = MethodNotAllowed("Method not allowed.")
    elif status == 413:
        problem = body_too_large(shell.policy)
    elif status == 400:
        problem = InvalidParameter(str(error.detail)[:200], param=IMAGE_FIELD)
    elif status == 503:
        problem = ServerBusy("The server is busy; retry shortly.", retry_after=5)
    elif status == 429:
        problem = RateLimited("Too many requests.", retry_after=DEFAULT_RETRY_AFTER)
    else:
        log.error("HTTP exception on %s %s: %r", request.method, request.url.path, error)
        problem = InternalError("Something went wrong on our side; please retry.")
    return problem_answer(problem, shell.docs_for(request.scope), shell.realm)


def on_exception(request: Request[Any, Any, Any], error: Exception) -> Answer:
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=error)
    shell = _shell(request)
    problem = InternalError("Something went wrong on our side; nothing was charged. Please retry.")
    return problem_answer(problem, shell.docs_for(request.scope), shell.realm)


EXCEPTION_HANDLERS = {
    ProblemError: on_problem,
    HTTPException: on_http_exception,
    Exception: on_exception,
}

__all__ = ["EXCEPTION_HANDLERS", "HANDLERS"]
