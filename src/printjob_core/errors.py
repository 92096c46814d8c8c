"""Every error the core can raise, each with the stable `code` of contract section 7.

The HTTP shell turns a `ProblemError` into a Problem answer using `status` and `title`;
nothing else is needed to render it. Engine errors are separate: they end a job, they
are never an HTTP answer.
"""

from __future__ import annotations

from typing import ClassVar


class PrintjobError(Exception):
    """Base of every error printjob raises on purpose."""


class ProblemError(PrintjobError):
    """A refused request: carries the contract's code, status and title, and a detail."""

    code: ClassVar[str] = "internal_error"
    status: ClassVar[int] = 500
    title: ClassVar[str] = "Internal error"

    def __init__(
        self, detail: str, *, param: str | None = None, retry_after: int | None = None
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.param = param
        self.retry_after = retry_after


class InvalidParameter(ProblemError):
    """A field is missing, unknown or has a value the contract does not allow."""

    code, status, title = "invalid_parameter", 400, "Invalid parameter"


class Unauthenticated(ProblemError):
    """No key, a wrong key or a revoked key (contract 5.3)."""

    code, status, title = "unauthenticated", 401, "Authentication required"

    def __init__(self, detail: str, *, key_sent: bool) -> None:
        super().__init__(detail)
        #: Whether a key was sent: then `WWW-Authenticate` adds `error="invalid_token"`.
        self.key_sent = key_sent


class InsufficientCredits(ProblemError):
    """The account cannot hold the cost of one more job."""

    code, status, title = "insufficient_credits", 402, "Not enough credits"


class AccountDisabled(ProblemError):
    """The operator disabled the account; its keys still identify it but may not act."""

    code, status, title = "account_disabled", 403, "Account disabled"


class NotFound(ProblemError):
    """No such job for this account (another account's job is not found either)."""

    code, status, title = "not_found", 404, "Not found"


class MethodNotAllowed(ProblemError):
    """The path exists but not with this method."""

    code, status, title = "method_not_allowed", 405, "Method not allowed"


class ResultNotReady(ProblemError):
    """The job has no file yet, or never will."""

    code, status, title = "result_not_ready", 409, "Result not ready"


class JobNotCancelable(ProblemError):
    """The job already succeeded or failed."""

    code, status, title = "job_not_cancelable", 409, "Job cannot be canceled"


class ResultExpired(ProblemError):
    """The result file was deleted after its retention."""

    code, status, title = "result_expired", 410, "Result expired"


class ImageTooLarge(ProblemError):
    """Over 3 megapixels, or a request over 30 MB."""

    code, status, title = "image_too_large", 413, "Image too large"


class UnsupportedImage(ProblemError):
    """Not an openable PNG, JPEG, GIF, BMP or WebP, or sides out of bounds."""

    code, status, title = "unsupported_image", 422, "Unsupported image"


class IdempotencyKeyReused(ProblemError):
    """The same key came with another image or other options."""

    code, status, title = "idempotency_key_reused", 422, "Idempotency key reused"


class RateLimited(ProblemError):
    """A per-minute limit is used up; `retry_after` says when the window resets."""

    code, status, title = "rate_limited", 429, "Too many requests"


class TooManyActiveJobs(ProblemError):
    """The account has `active_jobs_max` unfinished jobs already."""

    code, status, title = "too_many_active_jobs", 429, "Too many unfinished jobs"


class ServerBusy(ProblemError):
    """The queue is too deep or storage stayed locked; nothing was changed."""

    code, status, title = "server_busy", 503, "Server busy"


class InternalError(ProblemError):
    """Something broke that the client cannot fix; safe to retry."""


#: Every Problem the API can answer, by code: the contract's section 7 table.
PROBLEM_TYPES: dict[str, type[ProblemError]] = {
    cls.code: cls
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


class OperatorError(PrintjobError):
    """An operator command cannot be carried out (unknown id, sixth key, bad amount)."""


class ConversionFailed(PrintjobError):
    """The engine could not turn this image into a file; the detail is shown to the client."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class ConversionCancelled(PrintjobError):
    """The engine stopped because its job was canceled; there is no result."""
