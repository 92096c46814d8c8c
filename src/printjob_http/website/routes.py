"""The website's pages: each handler reads its form, calls `WebsiteService` and renders.

Every rule (sessions, passwords, quota, keys, the options) is the core's; a handler only
checks the form's CSRF token, calls one service method and picks the page or redirect.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, SkipValidation

from printjob_core.errors import NotFound
from printjob_core.model import JobChannel
from printjob_core.services.website import IssuedSession, SignedIn
from printjob_http.shell import in_thread
from printjob_http.spooling import ClientDisconnected
from printjob_http.website.cookies import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    cookie_of,
    csrf_cookie,
    ended_session_cookie,
    session_cookie,
)
from printjob_http.website.csrf import (
    CSRF_FIELD,
    check_signed_in,
    check_signed_out,
    new_form_token,
)
from printjob_http.website.forms import Upload, read_form, read_upload, require_image
from printjob_http.website.refusals import REFUSALS, Refusal
from printjob_http.website.site import Site

AnyRequest = Request[Any, Any, Any]
#: The status the access log records for an upload its browser left (nginx's "client
#: closed request"), as the API's submit does.
CLIENT_CLOSED_REQUEST = 499
Injected = NamedDependency[SkipValidation[Site]]
#: The option fields' values when the converter is first shown.
DEFAULT_FIELDS = {"format": "svg", "size": "", "dpi": "", "colors": "", "background": "keep"}
_LOCAL_PATH = re.compile(r"/[A-Za-z0-9/_.~%?=&-]{0,500}")
#: Notices shown on the account page after a redirect (`?done=`).
NOTICES = {
    "revoked": "The key was revoked; it no longer works on the API.",
    "password": "Your password was changed; your other sessions were signed out.",
}


def redirect(location: str, *cookies: Any) -> Response[bytes]:
    """303 See Other: after a form, the browser GETs the next page."""
    return Response(b"", status_code=303, headers={"Location": location}, cookies=list(cookies))


def _local(target: str | None) -> str:
    """Where to go after signing in: only a path of this site (never `//host`, and no
    character a browser would drop or turn into a slash on the way)."""
    if target and _LOCAL_PATH.fullmatch(target) and not target.startswith("//"):
        return target
    return "/"


def _started(site: Site, issued: IssuedSession, target: str = "/") -> Response[bytes]:
    cookie = session_cookie(issued.token, issued.expires_at, site.secure_cookies)
    return redirect(_local(target), cookie)


def _form_token(request: AnyRequest) -> str:
    """The signed-out forms' double-submit token: the browser's, or a new one."""
    sent = cookie_of(request.scope, CSRF_COOKIE)
    return sent if sent and 20 <= len(sent) <= 100 and sent.isascii() else new_form_token()


def _signed_out_page(
    site: Site, request: AnyRequest, template: str, status: int = 200, **context: Any
) -> Response[str]:
    token = _form_token(request)
    return site.pages.answer(
        template,
        status,
        cookies=[csrf_cookie(token, site.secure_cookies)],
        headers=_retry_after(context.get("error")),
        csrf_token=token,
        **context,
    )


def _retry_after(error: Refusal | None) -> dict[str, str]:
    if error is not None and error.retry_after is not None:
        return {"Retry-After": str(error.retry_after)}
    return {}


# -- visitors: the front page, sign up, sign in, invites --


@get("/")
async def home(request: AnyRequest, site: Injected) -> Response[str]:
    person = await site.maybe_signed_in(request.scope)
    if person is None:
        return site.pages.answer("home.html")
    return await _converter(site, person)


@get("/signup")
async def signup_page(request: AnyRequest, site: Injected) -> Response[str]:
    status = 200 if site.service.signup_open else 403
    return _signed_out_page(site, request, "signup.html", status, email="", error=None)


@post("/signup")
async def signup(request: AnyRequest, site: Injected) -> Response[Any]:
    form = await read_form(request)
    check_signed_out(cookie_of(request.scope, CSRF_COOKIE), form.get(CSRF_FIELD))
    email, password = form.get("email", ""), form.get("password", "")
    try:
        issued = await in_thread(site.service.sign_up, email, password, site.client(request.scope))
    except REFUSALS as caught:
        error = Refusal.of(caught)
        return _signed_out_page(
            site, request, "signup.html", error.status, email=email, error=error
        )
    return _started(site, issued)


@get("/signin")
async def signin_page(request: AnyRequest, site: Injected) -> Response[str]:
    target = _local(request.query_params.get("next"))
    return _signed_out_page(site, request, "signin.html", email="", error=None, next=target)


@post("/signin")
async def signin(request: AnyRequest, site: Injected) -> Response[Any]:
    form = await read_form(request)
    check_signed_out(cookie_of(request.scope, CSRF_COOKIE), form.get(CSRF_FIELD))
    email, target = form.get("email", ""), _local(form.get("next"))
    client = site.client(request.scope)
    try:
        issued = await in_thread(site.service.sign_in, email, form.get("password", ""), client)
    except REFUSALS as caught:
        error = Refusal.of(caught)
        page = "signin.html"
        return _signed_out_page(
            site, request, page, error.status, email=email, error=error, next=target
        )
    return _started(site, issued, target)


@get("/invite/{token:str}")
async def invite_page(request: AnyRequest, site: Injected, token: FromPath[str]) -> Response[str]:
    invite = await in_thread(site.service.invite, token)
    return _signed_out_page(site, request, "invite.html", invite=invite, token=token, error=None)


@post("/invite/{token:str}")
async def accept_invite(request: AnyRequest, site: Injected, token: FromPath[str]) -> Response[Any]:
    form = await read_form(request)
    check_signed_out(cookie_of(request.scope, CSRF_COOKIE), form.get(CSRF_FIELD))
    invite = await in_thread(site.service.invite, token)
    try:
        issued = await in_thread(site.service.accept_invite, token, form.get("password", ""))
    except REFUSALS as caught:
        error = Refusal.of(caught)
        page = "invite.html"
        return _signed_out_page(
            site, request, page, error.status, invite=invite, token=token, error=error
        )
    return _started(site, issued)


# -- a signed-in person: sign out, the account page, keys, password --


@post("/signout")
async def signout(request: AnyRequest, site: Injected) -> Response[bytes]:
    form = await read_form(request)
    person = await site.maybe_signed_in(request.scope)
    if person is not None:
        check_signed_in(person, form.get(CSRF_FIELD))
        await in_thread(site.service.sign_out, cookie_of(request.scope, SESSION_COOKIE))
    return redirect("/", ended_session_cookie(site.secure_cookies))


async def _account(
    site: Site, person: SignedIn, status: int = 200, **context: Any
) -> Response[str]:
    page = await in_thread(site.service.account_page, person)
    context.setdefault("created", None)
    context.setdefault("error", None)
    context.setdefault("notice", None)
    return site.pages.answer(
        "account.html",
        status,
        signed_in=person,
        csrf_token=person.csrf_token,
        page=page,
        website=JobChannel.WEBSITE,
        **context,
    )


@get("/account")
async def account(request: AnyRequest, site: Injected) -> Response[str]:
    person = await site.signed_in(request.scope)
    notice = NOTICES.get(request.query_params.get("done", ""))
    return await _account(site, person, notice=notice)


@post("/account/keys")
async def create_key(request: AnyRequest, site: Injected) -> Response[str]:
    person = await site.signed_in(request.scope)
    form = await read_form(request)
    check_signed_in(person, form.get(CSRF_FIELD))
    try:
        created = await in_thread(site.service.create_key, person, form.get("label", ""))
    except REFUSALS as caught:
        error = Refusal.of(caught)
        return await _account(site, person, error.status, error=error)
    return await _account(site, person, 201, created=created)


@get("/account/keys/{key_id:str}/revoke")
async def revoke_key_page(
    request: AnyRequest, site: Injected, key_id: FromPath[str]
) -> Response[str]:
    person = await site.signed_in(request.scope)
    page = await in_thread(site.service.account_page, person)
    key = next((k for k in page.keys if k.id == key_id), None)
    if key is None:
        raise NotFound("There is no such key on your account; it may have been revoked already.")
    return site.pages.answer("revoke.html", signed_in=person, csrf_token=person.csrf_token, key=key)


@post("/account/keys/{key_id:str}/revoke")
async def revoke_key(request: AnyRequest, site: Injected, key_id: FromPath[str]) -> Response[bytes]:
    person = await site.signed_in(request.scope)
    form = await read_form(request)
    check_signed_in(person, form.get(CSRF_FIELD))
    await in_thread(site.service.revoke_key, person, key_id)
    return redirect("/account?done=revoked")


@get("/account/password")
async def password_page(request: AnyRequest, site: Injected) -> Response[str]:
    person = await site.signed_in(request.scope)
    return site.pages.answer(
        "password.html", signed_in=person, csrf_token=person.csrf_token, error=None
    )


@post("/account/password")
async def change_password(request: AnyRequest, site: Injected) -> Response[Any]:
    person = await site.signed_in(request.scope)
    form = await read_form(request)
    check_signed_in(person, form.get(CSRF_FIELD))
    current, new = form.get("current_password", ""), form.get("new_password", "")
    try:
        issued = await in_thread(site.service.change_password, person, current, new)
    except REFUSALS as caught:
        error = Refusal.of(caught)
        return site.pages.answer(
            "password.html",
            error.status,
            signed_in=person,
            csrf_token=person.csrf_token,
            error=error,
        )
    return _started(site, issued, "/account?done=password")


# -- converting: the form, the job's page and status, download, cancel --


async def _converter(
    site: Site,
    person: SignedIn,
    status: int = 200,
    upload: Upload | None = None,
    error: Refusal | None = None,
) -> Response[str]:
    page = await in_thread(site.service.account_page, person)
    fields = {**DEFAULT_FIELDS, **(upload.fields if upload else {})}
    return site.pages.answer(
        "convert.html",
        status,
        headers=_retry_after(error),
        signed_in=person,
        csrf_token=person.csrf_token,
        page=page,
        fields=fields,
        filename=upload.filename if upload else "",
        error=error,
        max_upload_bytes=site.policy.max_upload_bytes,
    )


@get("/convert")
async def convert_page(request: AnyRequest, site: Injected) -> Response[str]:
    return await _converter(site, await site.signed_in(request.scope))


@post("/convert")
async def convert(request: AnyRequest, site: Injected) -> Response[Any]:
    person = await site.signed_in(request.scope)
    upload: Upload | None = None
    try:
        # A person past the per-minute limit is refused before the upload is read.
        await in_thread(site.service.refuse_when_over_limit, person)
        upload = await read_upload(request, site.policy, site.spool_dir)
        check_signed_in(person, upload.csrf_token)
        options, image = upload.options(), require_image(upload)
        job = await in_thread(site.service.submit_conversion, person, image, options)
    except ClientDisconnected:
        # The browser left part way through its upload: no one to answer, nothing stored.
        return Response(b"", status_code=CLIENT_CLOSED_REQUEST)
    except REFUSALS as caught:
        error = Refusal.of(caught)
        return await _converter(site, person, error.status, upload, error)
    return redirect(f"/jobs/{quote(job.id, safe='')}")


@get("/jobs/{job_id:str}")
async def job_page(request: AnyRequest, site: Injected, job_id: FromPath[str]) -> Response[str]:
    person = await site.signed_in(request.scope)
    job = await in_thread(site.service.conversion, person, job_id)
    return site.pages.answer(
        "job.html",
        signed_in=person,
        csrf_token=person.csrf_token,
        job=job,
        website=JobChannel.WEBSITE,
    )


@get("/jobs/{job_id:str}/status")
async def job_status(
    request: AnyRequest, site: Injected, job_id: FromPath[str]
) -> Response[dict[str, Any]]:
    person = await site.signed_in(request.scope)
    job = await in_thread(site.service.conversion, person, job_id)
    body = {
        "status": job.status.value,
        "phase": job.phase.value if job.phase else None,
        "progress": job.progress,
        "finished": job.is_final,
        "error": job.error.detail if job.error else None,
    }
    return Response(body, status_code=200, headers={"Cache-Control": "no-store"})


@post("/jobs/{job_id:str}/download")
async def download(request: AnyRequest, site: Injected, job_id: FromPath[str]) -> Response[Any]:
    person = await site.signed_in(request.scope)
    form = await read_form(request)
    check_signed_in(person, form.get(CSRF_FIELD))
    got = await in_thread(site.service.download, person, job_id)
    disposition = f'attachment; filename="{got.filename}"'
    headers = {"Content-Disposition": disposition, "Cache-Control": "no-store"}
    return Response(got.data, status_code=200, media_type=got.media_type, headers=headers)


@post("/jobs/{job_id:str}/cancel")
async def cancel(request: AnyRequest, site: Injected, job_id: FromPath[str]) -> Response[bytes]:
    person = await site.signed_in(request.scope)
    form = await read_form(request)
    check_signed_in(person, form.get(CSRF_FIELD))
    job = await in_thread(site.service.cancel_conversion, person, job_id)
    return redirect(f"/jobs/{quote(job.id, safe='')}")


HANDLERS = (
    home,
    signup_page,
    signup,
    signin_page,
    signin,
    invite_page,
    accept_invite,
    signout,
    account,
    create_key,
    revoke_key_page,
    revoke_key,
    password_page,
    change_password,
    convert_page,
    convert,
    job_page,
    job_status,
    download,
    cancel,
)

__all__ = ["HANDLERS", "redirect"]
