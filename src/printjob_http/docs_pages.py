"""The API's documentation pages, served by the service itself (no CDN):

* `/docs`: the API reference, rendered in the browser by the vendored Redoc bundle
  (`static/redoc/`, from the `redoc` npm package, MIT) from `/v1/openapi.json`;
* `/docs/errors`: one section per Problem `code`, each with the anchor `error-<code>`
  that every Problem's `type` link points at (`{docs_url}#error-<code>`), plus the two
  codes a failed job can carry.

Pages are rendered once per process: their text depends only on the core's error
table and the policy. The gate routes the three paths (GET only, no key needed) to
`docs_answers`.
"""

from __future__ import annotations

import gzip
import hashlib
import html
from functools import cache
from importlib.resources import files
from typing import Any

import anyio.to_thread

from printjob_core.errors import PROBLEM_TYPES
from printjob_core.limits import Policy
from printjob_http.answers import Answer
from printjob_http.gate import DirectAnswer

#: The vendored Redoc bundle's version (update it with the file: static/redoc/README.md).
REDOC_VERSION = "2.5.4"
REDOC_PATH = "/docs/assets/redoc.standalone.js"

#: What each code means for the client and what to do next, in the product's words.
_NEXT_STEP: dict[str, tuple[str, str]] = {
    "unauthenticated": (
        "The `Authorization: Bearer <key>` header is missing, or the key is wrong or revoked.",
        "Send a live key from your account page. Keys are shown once, when created.",
    ),
    "account_disabled": (
        "The key is right, but its account is disabled.",
        "Contact support; nothing can be submitted or read until the account is enabled.",
    ),
    "insufficient_credits": (
        "The account's available credits (balance minus what unfinished jobs hold) are "
        "below the cost of one job.",
        "Have credits added to the account, or wait for unfinished jobs to end (a failed or "
        "canceled job gives its credit back).",
    ),
    "invalid_parameter": (
        "A form field or header is missing, unknown, or has a value the API does not take. "
        "`param` names it and `detail` lists the values it takes.",
        "Fix the named field and send again; a refused request keeps no Idempotency-Key.",
    ),
    "image_too_large": (
        "The image has more pixels than allowed, or the request body is over the size limit.",
        "Scale the image down (or send a compressed format) and send again.",
    ),
    "unsupported_image": (
        "The upload is not an openable PNG, JPEG, GIF, BMP or WebP, or its sides are out of "
        "bounds (too small, or one side many times longer than the other).",
        "Send a supported image; `detail` says what was wrong with this one.",
    ),
    "rate_limited": (
        "A per-minute limit is used up (submissions, other calls, or wrong keys from one network).",
        "Wait the `Retry-After` seconds, then send again.",
    ),
    "too_many_active_jobs": (
        "The account already has as many unfinished jobs as it may have at once; `detail` "
        "names the number.",
        "Wait for a job to end (poll it), then submit again.",
    ),
    "server_busy": (
        "The service is under heavy load; the request changed nothing.",
        "Wait the `Retry-After` seconds and resend with the same Idempotency-Key.",
    ),
    "idempotency_key_reused": (
        "The Idempotency-Key was used before with another image or other options.",
        "Make a fresh key for every new submission; reuse a key only to resend the same one.",
    ),
    "not_found": (
        "There is no such job for this account (another account's jobs are not found "
        "either), or no such path.",
        "Check the job id and the key.",
    ),
    "method_not_allowed": (
        "The path exists, but not with this HTTP method.",
        "Use a method listed in the answer's `Allow` header.",
    ),
    "result_not_ready": (
        "The job has no file: it has not succeeded yet, or it failed or was canceled.",
        "Poll the job until its status is final; only a succeeded job has a file.",
    ),
    "job_not_cancelable": (
        "The job already succeeded or failed.",
        "Nothing to do: a finished job cannot be canceled.",
    ),
    "result_expired": (
        "The job's file was deleted when its retention ended; the job stays readable.",
        "Submit the image again for a new file.",
    ),
    "internal_error": (
        "Something broke on the service's side.",
        "Retry; nothing was charged for a job that did not succeed.",
    ),
}

#: The codes of a failed job's `error` (not HTTP answers).
_JOB_ERRORS: dict[str, str] = {
    "processing_failed": "The image could not be turned into a file; `detail` says why. "
    "Nothing was charged.",
    "interrupted": "A server restart stopped the job and it could not run again. Nothing "
    "was charged; submit it again.",
}

_STYLE = """
body{font:16px/1.5 system-ui,sans-serif;margin:0 auto;max-width:52rem;padding:1rem;color:#1b1b1b}
h1{font-size:1.6rem}h2{font-size:1.15rem;margin-top:2rem}code{background:#f2f2f2;padding:0 .2em}
section{border-top:1px solid #ddd}dt{font-weight:600}a{color:#0645ad}
"""


def _code_text(text: str) -> str:
    """Escape `text`, showing `back-quoted` parts as code."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _page(title: str, body: str) -> bytes:
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{body}</body></html>\n"
    ).encode()


@cache
def errors_page(policy: Policy) -> bytes:
    """`/docs/errors`: every Problem code with its status, meaning and next step."""
    sections = []
    for code, problem in PROBLEM_TYPES.items():
        when, then = _NEXT_STEP[code]
        sections.append(
            f'<section id="error-{code}"><h2><code>{code}</code>: {problem.status} '
            f"{html.escape(problem.title)}</h2>"
            f"<dl><dt>When</dt><dd>{_code_text(when)}</dd>"
            f"<dt>What to do</dt><dd>{_code_text(then)}</dd></dl></section>"
        )
    for code, meaning in _JOB_ERRORS.items():
        sections.append(
            f'<section id="error-{code}"><h2><code>{code}</code> (a failed job\'s '
            f"<code>error.code</code>)</h2><p>{_code_text(meaning)}</p></section>"
        )
    limits = (
        f"<p>Limits: {policy.max_upload_bytes:,} bytes per request, "
        f"{policy.max_upload_pixels:,} pixels per image, "
        f"{policy.submissions_per_minute} submissions and {policy.reads_per_minute} other "
        "calls per minute per account.</p>"
    )
    intro = (
        "<h1>printjob API errors</h1><p>Every error answer is "
        "<code>application/problem+json</code> with <code>type</code>, <code>title</code>, "
        "<code>status</code>, <code>detail</code>, <code>code</code> and, for a wrong field, "
        "<code>param</code>. Build on <code>code</code>; the <code>type</code> link leads "
        'here. See also the <a href="../docs">API reference</a>.</p>'
    )
    return _page("printjob API errors", intro + limits + "".join(sections))


@cache
def reference_page() -> bytes:
    """`/docs`: the OpenAPI document rendered by the vendored Redoc bundle.

    Links are relative, so the pages work wherever a proxy mounts the service.
    """
    body = (
        '<redoc spec-url="v1/openapi.json"></redoc>'
        f'<script src="{REDOC_PATH.lstrip("/")}?v={REDOC_VERSION}"></script>'
        "<noscript><p>The API reference needs JavaScript; the document itself is at "
        '<a href="v1/openapi.json">/v1/openapi.json</a>, and the errors at '
        '<a href="docs/errors">/docs/errors</a>.</p></noscript>'
    )
    return _page("printjob API reference", body)


@cache
def redoc_bundle() -> bytes:
    """The vendored Redoc standalone bundle."""
    return (files("printjob_http") / "static" / "redoc" / "redoc.standalone.js").read_bytes()


@cache
def _bundle(compressed: bool) -> tuple[bytes, str]:
    """The bundle as sent, plain or gzip-compressed (a third of the bytes), with its tag."""
    plain = redoc_bundle()
    tag = hashlib.sha256(plain).hexdigest()[:32]
    if compressed:
        return gzip.compress(plain, 9, mtime=0), f'"{tag}-gzip"'
    return plain, f'"{tag}"'


#: Only our own script; Redoc styles itself inline and runs its search in a blob worker.
DOCS_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src blob:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
HTML = "text/html; charset=utf-8"
JAVASCRIPT = "text/javascript; charset=utf-8"
#: Sent with every documentation answer.
_SECURITY = {
    "Content-Security-Policy": DOCS_CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
#: The pages change only with a new release or new limits: browsers may keep them a while.
_PAGE_CACHING = "public, max-age=600"
#: The page asks for the bundle with its version in the query (`?v=`), so a new version
#: is a new address: that address may be kept for good.
_VERSIONED_CACHING = "public, max-age=31536000, immutable"
_UNVERSIONED_CACHING = "public, max-age=86400"


def docs_answers(policy: Policy) -> dict[str, DirectAnswer]:
    """The gate's direct answers for the documentation paths (`gate.ROUTES`), by name."""

    async def reference(scope: Any, _segment: str) -> Answer:
        return _page_answer(reference_page())

    async def errors(scope: Any, _segment: str) -> Answer:
        return _page_answer(errors_page(policy))

    async def asset(scope: Any, _segment: str) -> Answer:
        compressed = _accepts_gzip(_header(scope, b"accept-encoding"))
        # Compressing the megabyte takes a moment once per process: not on the event loop.
        body, etag = await anyio.to_thread.run_sync(_bundle, compressed)
        versioned = scope.get("query_string", b"") == f"v={REDOC_VERSION}".encode()
        headers = {
            **_SECURITY,
            "Cache-Control": _VERSIONED_CACHING if versioned else _UNVERSIONED_CACHING,
            "ETag": etag,
            "Vary": "Accept-Encoding",
        }
        if _matches(_header(scope, b"if-none-match"), etag):
            return _not_modified(headers)
        if compressed:
            headers["Content-Encoding"] = "gzip"
        return Answer(body, 200, JAVASCRIPT, headers)

    return {"docs": reference, "docs_errors": errors, "docs_asset": asset}


def _page_answer(body: bytes) -> Answer:
    return Answer(body, 200, HTML, {**_SECURITY, "Cache-Control": _PAGE_CACHING})


def _not_modified(headers: dict[str, str]) -> Answer:
    """304: the validators and caching headers of the 200, and no body or length."""
    answer = Answer(b"", 304, JAVASCRIPT)
    answer.headers = [(k.lower().encode(), v.encode("latin-1")) for k, v in headers.items()]
    return answer


def _header(scope: Any, name: bytes) -> str:
    """A request header's values, joined as one list (RFC 9110 5.3)."""
    return ", ".join(v.decode("latin-1") for k, v in scope["headers"] if k == name)


def _accepts_gzip(accept_encoding: str) -> bool:
    """Whether `Accept-Encoding` takes gzip (not with `q=0`)."""
    for item in accept_encoding.split(","):
        coding, _, parameters = item.partition(";")
        if coding.strip().lower() not in ("gzip", "x-gzip", "*"):
            continue
        weight = parameters.strip().lower()
        if not weight.startswith("q="):
            return True
        try:
            return float(weight[2:]) > 0
        except ValueError:
            return False
    return False


def _matches(if_none_match: str, etag: str) -> bool:
    """`If-None-Match` names this entity tag (weak comparison, RFC 9110 13.1.2)."""
    if if_none_match.strip() == "*":
        return True
    return etag in {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}


__all__ = [
    "DOCS_CSP",
    "REDOC_PATH",
    "REDOC_VERSION",
    "docs_answers",
    "errors_page",
    "redoc_bundle",
    "reference_page",
]
