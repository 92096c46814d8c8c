"""What the website answers when a handler raises: a clear page with the right 4xx status
(or a sign-in redirect), never a Problem document and never a 500 for a person's input."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import attrs
from litestar import Request, Response
from litestar.exceptions import HTTPException

from printjob_core.errors import NotSignedIn, ProblemError, WebsiteError
from printjob_http.website.cookies import SESSION_COOKIE, cookie_of, ended_session_cookie
from printjob_http.website.csrf import CsrfRefused
from printjob_http.website.forms import FormTooLarge
from printjob_http.website.site import Site, person_of

log = logging.getLogger("printjob.website")
AnyRequest = Request[Any, Any, Any]

#: Titles of Litestar's own refusals (a path parameter it could not route, a method).
_HTTP_TITLES = {
    400: "Bad request",
    404: "Page not found",
    405: "Not allowed here",
    413: "Too large",
}


#: What a page shows a person for a refusal of the website's own (the API's errors have
#: their contract titles).
WEBSITE_TITLES = {
    "bad_credentials": "Sign-in failed",
    "sign_in_throttled": "Too many sign-in attempts",
    "sign_up_closed": "Sign-up is closed",
    "email_taken": "Email already registered",
    "password_rejected": "Password not accepted",
    "invite_invalid": "This invite link does not work",
    "key_limit_reached": "Key limit reached",
    "quota_exhausted": "Daily download limit reached",
    "sign_up_throttled": "Too many sign-ups",
    "account_disabled": "Account disabled",
}
#: Every refusal a handler shows on its own form instead of an error page.
REFUSALS = (ProblemError, WebsiteError)


@attrs.frozen
class Refusal:
    """A refusal as a page shows it: API errors and the website's alike."""

    status: int
    title: str
    detail: str
    #: The form field it concerns (the API's `param`), to mark that field.
    param: str | None = None
    retry_after: int | None = None

    @classmethod
    def of(cls, error: ProblemError | WebsiteError) -> Refusal:
        if isinstance(error, ProblemError):
            return cls(error.status, error.title, error.detail, error.param, error.retry_after)
        title = WEBSITE_TITLES.get(error.code, "That did not work")
        return cls(error.status, title, error.detail, None, error.retry_after)


def _site(request: AnyRequest) -> Site:
    site: Site = request.app.state["site"]
    return site


def _page(
    request: AnyRequest, status: int, title: str, detail: str, headers: dict[str, str] | None = None
) -> Response[str]:
    site = _site(request)
    person = person_of(request.scope)
    return site.pages.answer(
        "error.html",
        status,
        headers=headers,
        title=title,
        detail=detail,
        signed_in=person,
        csrf_token=person.csrf_token if person else "",
    )


def on_not_signed_in(request: AnyRequest, error: Exception) -> Response[Any]:
    """Pages send the browser to sign in (and back); the status poll says so in JSON."""
    site = _site(request)
    ended = (
        [ended_session_cookie(site.secure_cookies)]
        if cookie_of(request.scope, SESSION_COOKIE)
        else []
    )
    path = request.url.path
    if path.endswith("/status"):
        body = {"status": "signed_out", "detail": "Please sign in again."}
        return Response(body, status_code=401, cookies=ended)
    target = "/signin"
    if request.method == "GET" and path != "/":
        target += "?next=" + quote(path, safe="/")
    return Response(b"", status_code=303, headers={"Location": target}, cookies=ended)


def on_csrf(request: AnyRequest, error: Exception) -> Response[str]:
    return _page(
        request,
        403,
        "This form could not be accepted",
        "The form was sent without its security token, or with one for another session "
        "(it may come from another site, or the page is old). Nothing was changed. Go back, "
        "reload the page and try again.",
    )


def on_form_too_large(request: AnyRequest, error: Exception) -> Response[str]:
    return _page(request, 413, "Too large", "That form is far larger than any of ours.")


def on_refusal(request: AnyRequest, error: Exception) -> Response[str]:
    assert isinstance(error, REFUSALS)
    refusal = Refusal.of(error)
    if refusal.status >= 500:
        log.error("website refusal on %s %s: %s", request.method, request.url.path, error)
    retry_after = refusal.retry_after
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return _page(request, refusal.status, refusal.title, refusal.detail, headers)


def on_http_exception(request: AnyRequest, error: Exception) -> Response[str]:
    assert isinstance(error, HTTPException)
    status = error.status_code if 400 <= error.status_code < 500 else 500
    if status == 500:
        log.error("HTTP exception on %s %s: %r", request.method, request.url.path, error)
    title = _HTTP_TITLES.get(status, "Something went wrong")
    detail = "There is no such page." if status == 404 else str(error.detail)[:200]
    return _page(request, status, title, detail)


def on_exception(request: AnyRequest, error: Exception) -> Response[str]:
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=error)
    return _page(
        request,
        500,
        "Something went wrong",
        "Something went wrong on our side; nothing was charged. Please try again.",
    )


EXCEPTION_HANDLERS: dict[int | type[Exception], Callable[[AnyRequest, Any], Response[Any]]] = {
    NotSignedIn: on_not_signed_in,
    CsrfRefused: on_csrf,
    FormTooLarge: on_form_too_large,
    ProblemError: on_refusal,
    WebsiteError: on_refusal,
    HTTPException: on_http_exception,
    Exception: on_exception,
}

__all__ = ["EXCEPTION_HANDLERS", "REFUSALS", "Refusal"]
