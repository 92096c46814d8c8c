"""The service layer, one module per actor; each method is one unit of work over the ports,
so the rules hold whatever storage is plugged in.

| module | actor | |
|---|---|---|
| `access` | any client | API keys, the per-minute limits |
| `submissions` | a client sending an image | POST /v1/jobs and the order of its refusals |
| `jobs` | a client after submitting | polling, cancel, download, the account |
| `api` | the HTTP shell | `ApiService`: the three above over one set of ports |
| `website` | a person in a browser | `WebsiteService`: people, sessions, keys, conversions |
| `processing` | the job runner | claim, report, finish, recover, sweep |
| `operator` | the operator's command line | accounts, credits, keys |
| `common` | all of them | `Ports`, saving a transition, dropping an upload |

Client-facing services raise `ProblemError`s with the contract's codes; the operator's
raise `OperatorError`.
"""

from __future__ import annotations

from printjob_core.lifecycle import IllegalTransition
from printjob_core.services.access import Access, _live_owner
from printjob_core.services.api import ApiService
from printjob_core.services.common import JOB_ID, Ports
from printjob_core.services.jobs import POLL_RETRY_AFTER, Jobs, poll_retry_after
from printjob_core.services.operator import ACTIVE_JOBS_CHOICES, AccountSummary, OperatorService
from printjob_core.services.processing import (
    Claim,
    JobProcessing,
    MemorySightings,
    Sightings,
    SightingsStore,
)
from printjob_core.services.submissions import (
    ACTIVE_JOBS_RETRY_AFTER,
    REFUSAL_ORDER,
    Submission,
    Submissions,
    body_too_large,
    check_image,
    declared_length_refusal,
)
from printjob_core.services.website import (
    AccountPage,
    CreatedKey,
    Download,
    InviteView,
    IssuedSession,
    KeyView,
    SignedIn,
    WebsiteService,
    conversion_options,
)

__all__ = [
    "ACTIVE_JOBS_CHOICES",
    "ACTIVE_JOBS_RETRY_AFTER",
    "JOB_ID",
    "POLL_RETRY_AFTER",
    "REFUSAL_ORDER",
    "Access",
    "AccountPage",
    "AccountSummary",
    "ApiService",
    "Claim",
    "CreatedKey",
    "Download",
    "IllegalTransition",
    "InviteView",
    "IssuedSession",
    "JobProcessing",
    "Jobs",
    "KeyView",
    "MemorySightings",
    "OperatorService",
    "Ports",
    "Sightings",
    "SightingsStore",
    "SignedIn",
    "Submission",
    "Submissions",
    "WebsiteService",
    "_live_owner",
    "body_too_large",
    "check_image",
    "conversion_options",
    "declared_length_refusal",
    "poll_retry_after",
]
