"""The client's exceptions: one class per Problem `code` of the API, all under `PrintjobError`.

Every error the API answers with is a Problem (RFC 9457) carrying a stable `code`; the
client raises the class registered for that code (`InsufficientCredits` for
`insufficient_credits`, ...). A code this version of the client does not know yet (the API
may add codes within `/v1`) raises `PrintjobError` itself, with the code the server sent.

A few errors come from the client's side rather than from a Problem: `APIConnectionError`
(the service could not be reached, after the retries), `UnexpectedResponse` (an answer that
is not the API's, e.g. an HTML page from a proxy), `JobFailed` / `JobCanceled` (`convert`
waited for a job that did not succeed) and `WaitTimeout` (`wait(timeout=...)` ran out).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from printjob_client.models import Job

__all__ = [
    "APIConnectionError",
    "APITimeoutError",
    "AccountDisabled",
    "IdempotencyKeyReused",
    "ImageTooLarge",
    "InsufficientCredits",
    "InternalError",
    "InvalidParameter",
    "JobCanceled",
    "JobFailed",
    "JobNotCancelable",
    "MethodNotAllowed",
    "NotFound",
    "PrintjobError",
    "RateLimited",
    "ResultExpired",
    "ResultNotReady",
    "ServerBusy",
    "TooManyActiveJobs",
    "Unauthenticated",
    "UnexpectedResponse",
    "UnsupportedImage",
    "WaitTimeout",
    "error_class",
]


class PrintjobError(Exception):
    """An error of the printjob API or of talking to it.

    Attributes:
        code: the Problem's stable `code` (build on this), e.g. ``"insufficient_credits"``.
        detail: a sentence for people.
        param: the offending request field, when there is one (``"format"``, ``"size"``).
        status: the HTTP status, or None when no answer came.
        headers: the answer's headers (lower-case names), empty when no answer came.
        title: the Problem's title, when there was one.
        problem: the whole Problem body as sent (unknown fields included).
    """

    #: The Problem code this class stands for (the base class: any code not known here).
    default_code: ClassVar[str] = "error"

    def __init__(
        self,
        detail: str,
        *,
        code: str | None = None,
        param: str | None = None,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        title: str | None = None,
        problem: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.code = code if code is not None else self.default_code
        self.param = param
        self.status = status
        self.headers: dict[str, str] = {k.lower(): v for k, v in (headers or {}).items()}
        self.title = title
        self.problem: dict[str, Any] = dict(problem or {})

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked to wait (`Retry-After`), when it said."""
        return parse_retry_after(self.headers.get("retry-after"))

    def __str__(self) -> str:
        return self.detail

    def __repr__(self) -> str:
        parts = [f"code={self.code!r}", f"detail={self.detail!r}"]
        if self.param is not None:
            parts.append(f"param={self.param!r}")
        if self.status is not None:
            parts.append(f"status={self.status}")
        return f"{type(self).__name__}({', '.join(parts)})"


# -- one class per Problem code of the contract (section 7) --


class Unauthenticated(PrintjobError):
    """401: the API key is missing, wrong or revoked."""

    default_code = "unauthenticated"


class AccountDisabled(PrintjobError):
    """403: the account is disabled; contact the operator."""

    default_code = "account_disabled"


class InsufficientCredits(PrintjobError):
    """402: available credits are below the job cost."""

    default_code = "insufficient_credits"


class InvalidParameter(PrintjobError):
    """400: a wrong or unknown field; `param` names it."""

    default_code = "invalid_parameter"


class ImageTooLarge(PrintjobError):
    """413: over 3 megapixels, or the request over 30 MB."""

    default_code = "image_too_large"


class UnsupportedImage(PrintjobError):
    """422: not an image the service opens, a side under 16 px, or too elongated."""

    default_code = "unsupported_image"


class RateLimited(PrintjobError):
    """429: a per-minute limit was exceeded; `retry_after` says how long to wait."""

    default_code = "rate_limited"


class TooManyActiveJobs(PrintjobError):
    """429: the account has `active_jobs_max` unfinished jobs; wait for one to finish."""

    default_code = "too_many_active_jobs"


class ServerBusy(PrintjobError):
    """503: the service is busy; resend with the same Idempotency-Key after `retry_after`."""

    default_code = "server_busy"


class IdempotencyKeyReused(PrintjobError):
    """422: the Idempotency-Key was used with another image or other options."""

    default_code = "idempotency_key_reused"


class NotFound(PrintjobError):
    """404: no such job (or a job of another account)."""

    default_code = "not_found"


class MethodNotAllowed(PrintjobError):
    """405: the method is not allowed for the path."""

    default_code = "method_not_allowed"


class ResultNotReady(PrintjobError):
    """409: the job has no file yet, or never will (failed or canceled)."""

    default_code = "result_not_ready"


class JobNotCancelable(PrintjobError):
    """409: the job already succeeded or failed."""

    default_code = "job_not_cancelable"


class ResultExpired(PrintjobError):
    """410: the file was deleted 24 hours after the job ended."""

    default_code = "result_expired"


class InternalError(PrintjobError):
    """500: the service failed; the client retries these on its own."""

    default_code = "internal_error"


# -- errors of the client's side --


class APIConnectionError(PrintjobError):
    """The service could not be reached, or the connection broke, on every attempt."""

    default_code = "connection_error"


class APITimeoutError(APIConnectionError):
    """The service did not answer in time, on every attempt."""

    default_code = "timeout"


class UnexpectedResponse(PrintjobError):
    """An answer that is not the API's (no Problem body), e.g. a proxy's error page."""

    default_code = "unexpected_response"


class JobFailed(PrintjobError):
    """A job that was waited for ended without a file; `job` is the final job.

    `code` is the job's error code: ``"processing_failed"`` (this image cannot be turned
    into a file) or ``"interrupted"`` (a server restart stopped it). Nothing was charged.
    """

    default_code = "processing_failed"

    def __init__(self, detail: str, *, job: Job, code: str | None = None) -> None:
        super().__init__(detail, code=code)
        self.job = job


class JobCanceled(JobFailed):
    """A job that was waited for was canceled; nothing was charged."""

    default_code = "canceled"


class WaitTimeout(PrintjobError):
    """`wait(timeout=...)` ran out before the job was final; `job` is the last state seen."""

    default_code = "wait_timeout"

    def __init__(self, detail: str, *, job: Job) -> None:
        super().__init__(detail)
        self.job = job


_BY_CODE: dict[str, type[PrintjobError]] = {
    cls.default_code: cls
    for cls in (
        Unauthenticated,
        AccountDisabled,
        InsufficientCredits,
        InvalidParameter,
        ImageTooLarge,
        UnsupportedImage,
        RateLimited,
        TooManyActiveJobs,
        ServerBusy,
        IdempotencyKeyReused,
        NotFound,
        MethodNotAllowed,
        ResultNotReady,
        JobNotCancelable,
        ResultExpired,
        InternalError,
    )
}


def error_class(code: str) -> type[PrintjobError]:
    """The exception class of a Problem code (`PrintjobError` for a code not known here)."""
    return _BY_CODE.get(code, PrintjobError)


def parse_retry_after(value: str | None) -> float | None:
    """`Retry-After` in seconds, or None if absent or unreadable.

    The API sends whole seconds; an HTTP date (which a proxy may send) counts from now."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    if seconds != seconds or seconds < 0:  # NaN or negative
        return None
    return seconds
