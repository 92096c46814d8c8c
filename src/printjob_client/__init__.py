"""The official Python client of the printjob API (`/v1`).

Convert an image through the API in three lines::

    from printjob_client import Client

    Client("pjk1_...", "https://printjob.example.com").convert("logo.png", "logo.svg", format="svg")

`Client` blocks; `AsyncClient` has the same calls for asyncio. Both submit with an
Idempotency-Key of their own and resend with the same key after a lost connection, a 503,
a 429 `rate_limited` or a 500 (bounded, honouring `Retry-After`), poll at the server's pace,
and raise one exception class per Problem code (`InsufficientCredits`, `InvalidParameter`,
..., all `PrintjobError`). Answers are typed (`Job`, `JobResult`, `Account`) and unknown
fields are ignored. The package needs only httpx and imports nothing else of printjob's.
"""

from __future__ import annotations

from printjob_client._async import AsyncClient
from printjob_client._retry import RetryPolicy
from printjob_client._sync import Client
from printjob_client._transport import USER_AGENT
from printjob_client.errors import (
    AccountDisabled,
    APIConnectionError,
    APITimeoutError,
    IdempotencyKeyReused,
    ImageTooLarge,
    InsufficientCredits,
    InternalError,
    InvalidParameter,
    JobCanceled,
    JobFailed,
    JobNotCancelable,
    MethodNotAllowed,
    NotFound,
    PrintjobError,
    RateLimited,
    ResultExpired,
    ResultNotReady,
    ServerBusy,
    TooManyActiveJobs,
    Unauthenticated,
    UnexpectedResponse,
    UnsupportedImage,
    WaitTimeout,
    error_class,
)
from printjob_client.models import (
    FINAL_STATUSES,
    Account,
    Job,
    JobError,
    JobOptions,
    JobResult,
    Limits,
)

__all__ = [
    "FINAL_STATUSES",
    "USER_AGENT",
    "APIConnectionError",
    "APITimeoutError",
    "Account",
    "AccountDisabled",
    "AsyncClient",
    "Client",
    "IdempotencyKeyReused",
    "ImageTooLarge",
    "InsufficientCredits",
    "InternalError",
    "InvalidParameter",
    "Job",
    "JobCanceled",
    "JobError",
    "JobFailed",
    "JobNotCancelable",
    "JobOptions",
    "JobResult",
    "Limits",
    "MethodNotAllowed",
    "NotFound",
    "PrintjobError",
    "RateLimited",
    "ResultExpired",
    "ResultNotReady",
    "RetryPolicy",
    "ServerBusy",
    "TooManyActiveJobs",
    "Unauthenticated",
    "UnexpectedResponse",
    "UnsupportedImage",
    "WaitTimeout",
    "error_class",
]
