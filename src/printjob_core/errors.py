"""Every error the core can raise, each with the stable `code` of contract section 7.

The HTTP shell turns a `ProblemError` into a Problem answer using `status` and `title`;
nothing else is needed to render it. Engine errors are separate: they end a job, they
are never an HTTP answer.
"""

from __future__ import annotations

from datetime import datetime
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


class WebsiteError(PrintjobError):
    """A refusal on the website: a stable `code`, the HTTP status the page answers with,
    and a `detail` written for a person, which the page shows as it is."""

    code: ClassVar[str] = "website_error"
    status: ClassVar[int] = 400

    def __init__(self, detail: str, *, retry_after: int | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.retry_after = retry_after


class NotSignedIn(WebsiteError):
    """No session cookie, or one that is unknown, expired, or of a disabled account: the
    page asks the person to sign in."""

    code, status = "not_signed_in", 401


class BadCredentials(WebsiteError):
    """The email or the password is wrong; one wording for both, so the form does not
    tell who has an account."""

    code, status = "bad_credentials", 401


class SignInThrottled(WebsiteError):
    """Too many failed sign-ins from this address or for this email: guessing stops here,
    even with the right password, for `retry_after` seconds."""

    code, status = "sign_in_throttled", 429


class SignUpThrottled(WebsiteError):
    """Too many accounts made from this client network within a day: one visitor cannot
    multiply the free daily quota by signing up again and again. Invites still work."""

    code, status = "sign_up_throttled", 429


class SignUpClosed(WebsiteError):
    """The operator turned self sign-up off (`PRINTJOB_SIGNUP=closed`); invites still work."""

    code, status = "sign_up_closed", 403


class EmailTaken(WebsiteError):
    """Someone already signs in with this email."""

    code, status = "email_taken", 409


class PasswordRejected(WebsiteError):
    """The new password breaks the policy; the detail says which rule."""

    code, status = "password_rejected", 400


class InviteInvalid(WebsiteError):
    """The invite link is unknown, used already, or expired."""

    code, status = "invite_invalid", 404


class KeyLimitReached(WebsiteError):
    """The account has the most live API keys it may have; one must be revoked first."""

    code, status = "key_limit_reached", 409


class QuotaExhausted(WebsiteError):
    """A free account has used its website downloads for the UTC day; `resets_at` says
    when the next one is allowed."""

    code, status = "quota_exhausted", 429

    def __init__(self, detail: str, *, resets_at: datetime, retry_after: int) -> None:
        super().__init__(detail, retry_after=retry_after)
        self.resets_at = resets_at


class SignInDisabled(WebsiteError):
    """The operator disabled the account: its people cannot sign in (the right password
    is needed to learn this, so it tells a guesser nothing)."""

    code, status = "account_disabled", 403
