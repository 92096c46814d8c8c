"""The OpenAPI 3.1 description of `/v1` (contract 4.6), written by hand to match what is served.

Every operation, parameter, header, answer and Problem of the contract is described
here, with an example for every request and answer, in words a client developer can
read without the contract. The contract tests validate it with openapi-spec-validator,
generate a client from it with openapi-python-client and drive the real server with that
client, and run schemathesis (every check) against it. Limits, enumerations, polling
hints and error codes come from the core (`Policy`, `printjob_core.model`, `options`,
`services`, `errors`), so the document cannot drift from what the service does.

Two choices serve generated clients: the image is a binary file part (`format: binary`),
and every error answer is the one `Problem` schema (no `allOf` narrowing, which
generators cannot merge), its possible codes listed per answer and shown as examples.
Values that may grow within `/v1` (Problem codes, job phases) are strings described in
words rather than enums, so an older generated client still parses a newer answer.
"""

from __future__ import annotations

from typing import Any

import attrs

from printjob_core.errors import (
    PROBLEM_TYPES,
    AccountDisabled,
    IdempotencyKeyReused,
    ImageTooLarge,
    InsufficientCredits,
    InternalError,
    InvalidParameter,
    JobNotCancelable,
    MethodNotAllowed,
    NotFound,
    RateLimited,
    ResultExpired,
    ResultNotReady,
    ServerBusy,
    TooManyActiveJobs,
    Unauthenticated,
    UnsupportedImage,
)
from printjob_core.keys import KEY_PREFIX
from printjob_core.limits import Policy
from printjob_core.model import (
    DEFAULT_DPI,
    PRINT_CANVAS,
    Account,
    Background,
    JobErrorCode,
    JobStatus,
    OutputFormat,
    Phase,
)
from printjob_core.options import COLORS_RANGE, DPI_RANGE, MAX_CANVAS_PIXELS, MAX_SIDE
from printjob_core.services import JOB_ID, POLL_RETRY_AFTER
from printjob_http.request_ids import WELL_FORMED

OPENAPI_VERSION = "3.1.0"
API_VERSION = "1.0.0"
JOB_ID_PATTERN = f"^{JOB_ID.pattern}$"
IDEMPOTENCY_KEY_PATTERN = '^"?[A-Za-z0-9._:-]{1,255}"?$'
REQUEST_ID_PATTERN = f"^{WELL_FORMED}$"
SIZE_PATTERN = "^(original|[0-9]{1,6}[xX][0-9]{1,6})$"
#: The image types the service opens, as the media types of the upload part.
IMAGE_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/bmp", "image/webp")

BACKGROUNDS = [b.value for b in Background]
FORMATS = [f.value for f in OutputFormat]
#: The polling hints, as the descriptions state them.
POLL_HINT = (
    f"{POLL_RETRY_AFTER[JobStatus.QUEUED]} s for a queued job, "
    f"{POLL_RETRY_AFTER[JobStatus.RUNNING]} s for a running one"
)

#: Which Problem codes each status can carry.
CODES_BY_STATUS: dict[int, list[str]] = {}
for _code, _cls in PROBLEM_TYPES.items():
    CODES_BY_STATUS.setdefault(_cls.status, []).append(_code)

#: The job every example speaks of, and the times it passes through.
EXAMPLE_JOB_ID = "job_3f9a1c2e4b7d48e6a0c5f1b2d3e4a5b6"
CREATED_AT = "2026-03-02T09:15:04Z"
FINISHED_AT = "2026-03-02T09:15:31Z"
EXPIRES_AT = "2026-03-03T09:15:31Z"
#: Unfinished jobs a new account may have at once.


def _default_active_jobs() -> int:
    default = attrs.fields(Account).active_jobs_max.default
    assert isinstance(default, int), default
    return default


DEFAULT_ACTIVE_JOBS = _default_active_jobs()


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "oneOf": [schema, {"type": "null"}]}


def _integer(description: str, minimum: int | None = None, **more: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "description": description, **more}
    if minimum is not None:
        schema["minimum"] = minimum
    return schema


def _job_schemas(policy: Policy) -> dict[str, Any]:
    hours = policy.result_ttl_seconds // 3600
    date_time = {"type": "string", "format": "date-time"}
    phases = ", ".join(f"`{phase.value}`" for phase in Phase)
    return {
        "JobOptions": {
            "type": "object",
            "description": (
                "The options the job was submitted with, normalised: the defaults are filled "
                "in for the fields that were left out."
            ),
            "required": ["format", "size", "colors", "background"],
            "properties": {
                "format": {
                    "type": "string",
                    "enum": FORMATS,
                    "description": "The kind of print file the job produces.",
                },
                "size": {
                    "type": "string",
                    "pattern": SIZE_PATTERN,
                    "description": "`original`, or the `<width>x<height>` box the design fits.",
                },
                "colors": {
                    "type": ["integer", "null"],
                    "minimum": COLORS_RANGE[0],
                    "maximum": COLORS_RANGE[1],
                    "description": "Number of flat colors asked for; null means automatic.",
                },
                "background": {
                    "type": "string",
                    "enum": BACKGROUNDS,
                    "description": "Whether the background color is kept or removed.",
                },
                "dpi": _integer(
                    "The resolution the file states; present only when it was sent.",
                    DPI_RANGE[0],
                    maximum=DPI_RANGE[1],
                ),
            },
        },
        "JobResult": {
            "type": "object",
            "description": "The file a succeeded job produced, and where to download it.",
            "required": [
                "format",
                "width",
                "height",
                "bytes",
                "colors",
                "background_removed",
                "url",
                "expires_at",
            ],
            "properties": {
                "format": {
                    "type": "string",
                    "enum": FORMATS,
                    "description": "The kind of print file.",
                },
                "width": _integer("Width of the design in pixels.", 1),
                "height": _integer("Height of the design in pixels.", 1),
                "bytes": _integer("Size of the file in bytes.", 0),
                "colors": _integer("Number of colors the file actually has.", 0),
                "background_removed": {
                    "type": "boolean",
                    "description": (
                        "Whether the background was actually removed (it is kept when "
                        "removing it would leave nothing)."
                    ),
                },
                "url": {
                    "type": "string",
                    "format": "uri",
                    "description": "Absolute address to download the file from (getJobResult).",
                },
                "expires_at": {
                    **date_time,
                    "description": f"When the file is deleted: {hours} hours after the job ended.",
                },
            },
        },
        "JobError": {
            "type": "object",
            "description": "Why a job failed. A failed job costs nothing.",
            "required": ["code", "detail"],
            "properties": {
                "code": {
                    "type": "string",
                    "enum": [c.value for c in JobErrorCode],
                    "description": (
                        f"`{JobErrorCode.PROCESSING_FAILED.value}`: the image could not be "
                        f"turned into a file; `{JobErrorCode.INTERRUPTED.value}`: a server "
                        "restart stopped the job and it could not run again."
                    ),
                },
                "detail": {"type": "string", "description": "What went wrong, for people."},
            },
        },
        "Job": {
            "type": "object",
            "description": (
                "One conversion of an image into a print file. `queued` and `running` jobs "
                "are unfinished; `succeeded`, `failed` and `canceled` are final and never "
                "change again. Ignore fields you do not know: new ones may be added."
            ),
            "required": [
                "id",
                "status",
                "phase",
                "progress",
                "created_at",
                "finished_at",
                "options",
                "credits_charged",
                "result",
                "error",
            ],
            "properties": {
                "id": {
                    "type": "string",
                    "pattern": JOB_ID_PATTERN,
                    "description": "The job's identifier.",
                },
                "status": {
                    "type": "string",
                    "enum": [status.value for status in JobStatus],
                    "description": "Where the job stands; poll until it is final.",
                },
                "phase": {
                    "type": ["string", "null"],
                    "description": (
                        f"What the job is doing now ({phases} today), for progress display "
                        "only: phases may change without notice. Null when failed or "
                        "canceled; `finishing` once succeeded."
                    ),
                },
                "progress": {
                    "type": ["integer", "null"],
                    "minimum": 0,
                    "maximum": 100,
                    "description": (
                        "Percent done; 100 when succeeded, null when failed or canceled."
                    ),
                },
                "created_at": {**date_time, "description": "When the job was submitted (UTC)."},
                "finished_at": {
                    "type": ["string", "null"],
                    "format": "date-time",
                    "description": "When the job became final (UTC); null while unfinished.",
                },
                "options": {
                    **_ref("JobOptions"),
                    "description": "The options it was submitted with.",
                },
                "credits_charged": _integer(
                    f"Credits this job cost: 0 until it succeeds, then {policy.job_cost}.", 0
                ),
                "result": _nullable(_ref("JobResult"), "The file; null unless succeeded."),
                "error": _nullable(_ref("JobError"), "Why it failed; null unless failed."),
            },
        },
    }


def _account_schemas() -> dict[str, Any]:
    return {
        "Limits": {
            "type": "object",
            "description": "The limits that apply to this account.",
            "required": [
                "active_jobs",
                "idempotency_ttl_seconds",
                "job_cost",
                "max_upload_bytes",
                "max_upload_pixels",
                "reads_per_minute",
                "result_ttl_seconds",
                "submissions_per_minute",
            ],
            "properties": {
                "active_jobs": _integer("Unfinished jobs allowed at once.", 1),
                "idempotency_ttl_seconds": _integer(
                    "How long an Idempotency-Key is remembered, in seconds.", 1
                ),
                "job_cost": _integer("Credits a succeeded job costs.", 0),
                "max_upload_bytes": _integer("Largest submission request, in bytes.", 1),
                "max_upload_pixels": _integer("Largest image, in pixels (width x height).", 1),
                "reads_per_minute": _integer("Calls other than submissions allowed per minute.", 1),
                "result_ttl_seconds": _integer(
                    "How long a result file is kept after its job ended, in seconds.", 1
                ),
                "submissions_per_minute": _integer("Submissions allowed per minute.", 1),
            },
        },
        "Account": {
            "type": "object",
            "description": "The account's credits, unfinished jobs and limits.",
            "required": [
                "credits_balance",
                "credits_held",
                "credits_available",
                "active_jobs",
                "active_jobs_max",
                "limits",
            ],
            "properties": {
                "credits_balance": _integer("Credits on the account."),
                "credits_held": _integer("Credits held by unfinished jobs.", 0),
                "credits_available": _integer(
                    "Credits that new jobs can use: the balance minus the held credits."
                ),
                "active_jobs": _integer("Unfinished (queued or running) jobs now.", 0),
                "active_jobs_max": _integer("Unfinished jobs allowed at once.", 1),
                "limits": {**_ref("Limits"), "description": "The limits of this account."},
            },
        },
    }


def _problem_schema(docs_url: str) -> dict[str, Any]:
    codes = ", ".join(f"`{code}`" for code in PROBLEM_TYPES)
    return {
        "type": "object",
        "description": (
            "An error answer (RFC 9457 problem details, `application/problem+json`). "
            "Build on `code`: it is stable, while titles and details are for people."
        ),
        "required": ["type", "title", "status", "detail", "code"],
        "properties": {
            "type": {
                "type": "string",
                "format": "uri",
                "description": f"Documentation of the error: `{docs_url}#error-<code>`.",
            },
            "title": {"type": "string", "description": "Short summary of the kind of error."},
            "status": _integer("The HTTP status of the answer.", 400, maximum=599),
            "detail": {
                "type": "string",
                "description": "What was wrong with this request and what to do next.",
            },
            "code": {
                "type": "string",
                "description": (
                    f"Stable error code: one of {codes}. New codes may be added within /v1."
                ),
            },
            "param": {
                "type": "string",
                "description": "Name of the offending field, for a wrong field.",
            },
        },
    }


def _submission_schema(policy: Policy) -> dict[str, Any]:
    return {
        "type": "object",
        "description": "The image to convert and the options of the conversion.",
        "required": ["image", "format"],
        "additionalProperties": False,
        "properties": {
            "image": {
                "type": "string",
                "format": "binary",
                "description": (
                    "The image file: PNG, JPEG, GIF, BMP or WebP; at most "
                    f"{policy.max_upload_pixels:,} pixels; each side at least "
                    f"{policy.min_side} px; long side at most {policy.max_aspect_ratio} "
                    f"times the short side; whole request at most {policy.max_upload_bytes:,} "
                    "bytes. Send it as a file part (with a file name)."
                ),
            },
            "format": {
                "type": "string",
                "enum": FORMATS,
                "description": (
                    f"The print file to make: svg, pdf, eps, or png (a print PNG at "
                    f"{DEFAULT_DPI} dpi)."
                ),
            },
            "size": {
                "type": "string",
                "pattern": SIZE_PATTERN,
                "default": "original",
                "description": (
                    "`original`, or `<width>x<height>` in pixels: each side 1 to "
                    f"{MAX_SIDE}, at most {MAX_CANVAS_PIXELS // 1_000_000} megapixels in all; "
                    "the design is fitted inside with its proportions kept. A png with "
                    f"`original` is the print canvas, {PRINT_CANVAS[0]} x {PRINT_CANVAS[1]} "
                    f"px at {DEFAULT_DPI} dpi."
                ),
            },
            # No `default` keyword here: generated clients would send it, and a dpi
            # without an explicit size is refused.
            "dpi": _integer(
                f"The resolution the file states ({DEFAULT_DPI} when left out). Only with "
                "an explicit size (without one: 400 invalid_parameter).",
                DPI_RANGE[0],
                maximum=DPI_RANGE[1],
            ),
            "colors": _integer(
                "Number of flat colors wanted; leave out for automatic. An image with fewer "
                "colors keeps what it has; `result.colors` reports the actual count.",
                COLORS_RANGE[0],
                maximum=COLORS_RANGE[1],
            ),
            "background": {
                "type": "string",
                "enum": BACKGROUNDS,
                "default": Background.KEEP.value,
                "description": (
                    "`remove` leaves the background color out of a vector file and makes it "
                    "transparent in a PNG; when removal would leave nothing, nothing is "
                    "removed and `result.background_removed` says so."
                ),
            },
        },
    }


def _schemas(docs_url: str, policy: Policy) -> dict[str, Any]:
    return {
        **_job_schemas(policy),
        **_account_schemas(),
        "Problem": _problem_schema(docs_url),
        "JobSubmission": _submission_schema(policy),
    }


def _job_examples(base_url: str, policy: Policy) -> dict[str, Any]:
    options = {"format": "svg", "size": "original", "colors": 4, "background": "keep"}
    unfinished = {
        "id": EXAMPLE_JOB_ID,
        "created_at": CREATED_AT,
        "finished_at": None,
        "options": options,
        "credits_charged": 0,
        "result": None,
        "error": None,
    }
    final = {**unfinished, "finished_at": FINISHED_AT}
    jobs = {
        "queued": {
            "summary": "Just submitted",
            "value": {**unfinished, "status": "queued", "phase": "queued", "progress": 0},
        },
        "running": {
            "summary": "Being converted",
            "value": {**unfinished, "status": "running", "phase": "building", "progress": 40},
        },
        "succeeded": {
            "summary": "Done: the file can be downloaded",
            "value": {
                **final,
                "status": "succeeded",
                "phase": "finishing",
                "progress": 100,
                "credits_charged": policy.job_cost,
                "result": {
                    "format": "svg",
                    "width": 1200,
                    "height": 900,
                    "bytes": 48213,
                    "colors": 4,
                    "background_removed": False,
                    "url": f"{base_url}/v1/jobs/{EXAMPLE_JOB_ID}/result",
                    "expires_at": EXPIRES_AT,
                },
            },
        },
        "failed": {
            "summary": "The image could not be converted (nothing charged)",
            "value": {
                **final,
                "status": "failed",
                "phase": None,
                "progress": None,
                "error": {
                    "code": JobErrorCode.PROCESSING_FAILED.value,
                    "detail": "No shapes could be traced from this image.",
                },
            },
        },
        "canceled": {
            "summary": "Canceled (nothing charged)",
            "value": {**final, "status": "canceled", "phase": None, "progress": None},
        },
    }
    return jobs


def _problem_examples(docs_url: str, policy: Policy, max_jobs: int) -> dict[str, dict[str, Any]]:
    """One realistic Problem per code, keyed by code."""
    details: dict[str, tuple[str, str | None]] = {
        InvalidParameter.code: (
            "format must be one of svg, pdf, eps, png; got 'jpg'.",
            "format",
        ),
        Unauthenticated.code: (
            "The API key is not valid: it is mistyped, revoked, or not a printjob key.",
            None,
        ),
        InsufficientCredits.code: (
            f"A job costs {policy.job_cost} credit; this account has 0 available.",
            None,
        ),
        AccountDisabled.code: (
            "This account is disabled; its keys cannot be used. Contact the operator.",
            None,
        ),
        NotFound.code: (f"No job '{EXAMPLE_JOB_ID}' in this account.", None),
        MethodNotAllowed.code: ("DELETE is not allowed here; use POST.", None),
        ResultNotReady.code: (
            "The job is running; poll it until it has succeeded, then download.",
            None,
        ),
        JobNotCancelable.code: ("The job already succeeded; it cannot be canceled.", None),
        ResultExpired.code: (
            f"The file was deleted {policy.result_ttl_seconds // 3600} hours after the job "
            "ended; submit the image again.",
            None,
        ),
        ImageTooLarge.code: (
            f"The image has 4,000,000 pixels; at most {policy.max_upload_pixels:,} are allowed.",
            None,
        ),
        UnsupportedImage.code: (
            "The image could not be opened as PNG, JPEG, GIF, BMP or WebP.",
            None,
        ),
        IdempotencyKeyReused.code: (
            "This Idempotency-Key was used with another image or other options; use a new key.",
            None,
        ),
        RateLimited.code: (
            f"At most {policy.submissions_per_minute} submissions per minute are allowed for "
            "an account; wait 12 s and send it again.",
            None,
        ),
        TooManyActiveJobs.code: (
            f"This account has {max_jobs} unfinished jobs, the most it may have; wait for "
            "one to finish.",
            None,
        ),
        ServerBusy.code: (
            "The server is busy; wait Retry-After seconds and send the request again with the "
            "same Idempotency-Key.",
            None,
        ),
        InternalError.code: ("Something went wrong on our side; try again.", None),
    }
    examples: dict[str, dict[str, Any]] = {}
    for code, (detail, param) in details.items():
        kind = PROBLEM_TYPES[code]
        value: dict[str, Any] = {
            "type": f"{docs_url}#error-{code}",
            "title": kind.title,
            "status": kind.status,
            "detail": detail,
            "code": code,
        }
        if param is not None:
            value["param"] = param
        examples[code] = {"summary": kind.title, "value": value}
    return examples


RETRY_AFTER = {"$ref": "#/components/headers/Retry-After"}
WWW_AUTHENTICATE = {"$ref": "#/components/headers/WWW-Authenticate"}
#: What each status means on any operation that can give it.
PROBLEM_TEXTS = {
    401: "The API key is missing, wrong or revoked.",
    403: "The account is disabled.",
    404: "No such job in this account (a job of another account is not found either).",
    429: "A per-minute limit was reached: wait Retry-After seconds.",
    500: "Something broke on the server: retry.",
}


#: What a client does next with a job it was given, as OpenAPI links.
JOB_LINKS = {
    name: {
        "operationId": operation,
        "parameters": {"job_id": "$response.body#/id"},
        "description": description,
    }
    for name, operation, description in (
        ("GetJob", "getJob", "Poll the job until it is final."),
        ("CancelJob", "cancelJob", "Cancel the job while it is unfinished."),
        ("GetJobResult", "getJobResult", "Download the file once the job has succeeded."),
    )
}


class _Answers:
    """Builds the answers of the operations, each with its examples."""

    def __init__(self, base_url: str, docs_url: str, policy: Policy) -> None:
        self.base_url = base_url
        self.jobs = _job_examples(base_url, policy)
        self.problems = _problem_examples(docs_url, policy, DEFAULT_ACTIVE_JOBS)

    def problem(self, status: int, description: str, codes: list[str] | None = None) -> Any:
        codes = codes or CODES_BY_STATUS[status]
        listed = ", ".join(f"`{code}`" for code in codes)
        answer: dict[str, Any] = {
            "description": f"{description} Codes: {listed}.",
            "content": {
                "application/problem+json": {
                    "schema": _ref("Problem"),
                    "examples": {code: self.problems[code] for code in codes},
                }
            },
        }
        if status in (429, 503):
            answer["headers"] = {"Retry-After": RETRY_AFTER}
        if status == 401:
            answer["headers"] = {"WWW-Authenticate": WWW_AUTHENTICATE}
        if status == 405:
            answer["headers"] = {"Allow": {"$ref": "#/components/headers/Allow"}}
        return answer

    def common(self, *statuses: int) -> dict[str, Any]:
        rate_only = [RateLimited.code]
        return {
            str(s): self.problem(s, PROBLEM_TEXTS[s], rate_only if s == 429 else None)
            for s in statuses
        }

    def job(self, description: str, states: tuple[str, ...], **headers: Any) -> Any:
        return {
            "description": description,
            "headers": headers,
            "links": JOB_LINKS,
            "content": {
                "application/json": {
                    "schema": _ref("Job"),
                    "examples": {state: self.jobs[state] for state in states},
                }
            },
        }


def _poll_header(note: str) -> dict[str, Any]:
    return {
        "description": f"Seconds to wait before polling the job ({POLL_HINT}). {note}",
        "required": False,
        "schema": {"type": "integer", "minimum": 1},
        "example": POLL_RETRY_AFTER[JobStatus.QUEUED],
    }


METHOD_NOT_ALLOWED = {"$ref": "#/components/responses/MethodNotAllowed"}
ALL_STATES = ("queued", "running", "succeeded", "failed", "canceled")
SVG_EXAMPLE = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="900" '
    'viewBox="0 0 1200 900"><path fill="#c81414" d="M300 225h600v450H300z"/></svg>'
)


def _submit(answers: _Answers, policy: Policy) -> dict[str, Any]:
    hours = policy.idempotency_ttl_seconds // 3600
    return {
        "operationId": "submitJob",
        "tags": ["jobs"],
        "summary": "Submit an image",
        "description": (
            "Sends one image with its options and answers at once with a queued job; the "
            f"file is produced in the background. {policy.job_cost} credit is held until "
            "the job ends and charged only on success. The same image, options and "
            f"Idempotency-Key within {hours} hours return the first job "
            "(`Idempotent-Replayed: true`) and hold no second credit; a refused request "
            "does not keep its key. A form field the API does not know is refused (400)."
        ),
        "parameters": [{"$ref": "#/components/parameters/IdempotencyKey"}],
        "requestBody": {
            "required": True,
            "description": "The image as a file part, and the options as form fields.",
            "content": {
                "multipart/form-data": {
                    "schema": _ref("JobSubmission"),
                    "encoding": {"image": {"contentType": ", ".join(IMAGE_MEDIA_TYPES)}},
                    "examples": {
                        "svg": {
                            "summary": "A PNG logo to an SVG with 4 colors",
                            "value": {
                                "image": "(the bytes of logo.png)",
                                "format": "svg",
                                "colors": 4,
                            },
                        },
                        "png": {
                            "summary": "A photo to a 3000x3000 print PNG, background removed",
                            "value": {
                                "image": "(the bytes of photo.jpg)",
                                "format": "png",
                                "size": "3000x3000",
                                "dpi": 300,
                                "background": "remove",
                            },
                        },
                    },
                }
            },
        },
        "responses": {
            "202": answers.job(
                "Accepted: the new job, queued (on a replay: the first job as it is now).",
                ("queued",),
                Location={
                    "description": "Absolute address of the job (getJob).",
                    "required": True,
                    "schema": {"type": "string", "format": "uri"},
                    "example": f"{answers.base_url}/v1/jobs/{EXAMPLE_JOB_ID}",
                },
                **{
                    "Retry-After": _poll_header("Absent for a final job on a replay."),
                    "Idempotent-Replayed": {
                        "description": (
                            "`true` only when a repeated Idempotency-Key returned the first job."
                        ),
                        "required": False,
                        "schema": {"type": "string", "const": "true"},
                        "example": "true",
                    },
                },
            ),
            "400": answers.problem(
                400,
                "A field is wrong, missing or unknown; `param` names it and the detail says "
                "what values it takes.",
            ),
            **answers.common(401),
            "402": answers.problem(
                402,
                f"Fewer credits available than a job costs ({policy.job_cost}).",
            ),
            **answers.common(403),
            "405": METHOD_NOT_ALLOWED,
            "413": answers.problem(
                413,
                f"The image has over {policy.max_upload_pixels:,} pixels, or the request is "
                f"over {policy.max_upload_bytes:,} bytes.",
            ),
            "422": answers.problem(
                422,
                "The image cannot be opened or its sides are out of bounds, or the "
                "Idempotency-Key came with another image or other options.",
            ),
            "429": answers.problem(
                429,
                f"More than {policy.submissions_per_minute} submissions this minute, or the "
                "account has as many unfinished jobs as it may; wait Retry-After seconds.",
            ),
            **answers.common(500),
            "503": answers.problem(
                503,
                "The server is busy: wait Retry-After seconds and send again with the same "
                "Idempotency-Key.",
            ),
        },
    }


def _result_content() -> dict[str, Any]:
    samples: dict[str, dict[str, Any]] = {
        "svg": {"summary": "An SVG file", "value": SVG_EXAMPLE},
        "eps": {"summary": "An EPS file", "value": "%!PS-Adobe-3.0 EPSF-3.0\n..."},
        "pdf": {"summary": "A PDF file", "description": "The bytes of a PDF document."},
        "png": {"summary": "A print PNG", "description": "The bytes of a PNG image."},
    }
    content: dict[str, Any] = {
        fmt.media_type: {
            "schema": {
                "type": "string",
                "format": "binary",
                "description": f"The {fmt.value} file.",
            },
            "examples": {fmt.value: samples[fmt.value]},
        }
        for fmt in OutputFormat
    }
    # Client generators read a download as bytes only under this media type; the answer
    # itself is labelled with its format's own type above.
    content["application/octet-stream"] = {
        "schema": {
            "type": "string",
            "format": "binary",
            "description": (
                "The file's bytes, whatever its format, for clients that read every download "
                "the same way; the answer's Content-Type is the format's own media type."
            ),
        },
        "examples": {"svg": samples["svg"]},
    }
    return content


def _paths(answers: _Answers, policy: Policy) -> dict[str, Any]:
    job_id = {"$ref": "#/components/parameters/JobId"}
    hours = policy.result_ttl_seconds // 3600
    return {
        "/v1/jobs": {"post": _submit(answers, policy)},
        "/v1/jobs/{job_id}": {
            "get": {
                "operationId": "getJob",
                "tags": ["jobs"],
                "summary": "Read a job",
                "description": (
                    "Poll this after the seconds given in Retry-After until the status is "
                    "final. A succeeded job carries `result`, a failed job `error`; the job "
                    "stays readable after its file has expired."
                ),
                "parameters": [job_id],
                "responses": {
                    "200": answers.job(
                        "The job.",
                        ALL_STATES,
                        **{"Retry-After": _poll_header("Absent once the job is final.")},
                    ),
                    **answers.common(401, 403, 404),
                    "405": METHOD_NOT_ALLOWED,
                    **answers.common(429, 500),
                },
            }
        },
        "/v1/jobs/{job_id}/cancel": {
            "post": {
                "operationId": "cancelJob",
                "tags": ["jobs"],
                "summary": "Cancel a job",
                "description": (
                    "Stops a queued or running job; nothing is charged and the held credit "
                    "returns. Canceling a canceled job again changes nothing. Send no body."
                ),
                "parameters": [job_id],
                "responses": {
                    "200": answers.job("The job, now canceled.", ("canceled",)),
                    **answers.common(401, 403, 404),
                    "405": METHOD_NOT_ALLOWED,
                    "409": answers.problem(
                        409, "The job already succeeded or failed.", [JobNotCancelable.code]
                    ),
                    **answers.common(429, 500),
                },
            }
        },
        "/v1/jobs/{job_id}/result": {
            "get": {
                "operationId": "getJobResult",
                "tags": ["jobs"],
                "summary": "Download the file",
                "description": (
                    "The file of a succeeded job, as an attachment, with the media type of "
                    f"its format. It is kept {hours} hours after the job ended."
                ),
                "parameters": [job_id],
                "responses": {
                    "200": {
                        "description": "The file, as an attachment.",
                        "headers": {
                            "Content-Disposition": {
                                "description": 'attachment; filename="<job_id>.<format>"',
                                "required": True,
                                "schema": {
                                    "type": "string",
                                    "pattern": (
                                        f'^attachment; filename="{JOB_ID.pattern}'
                                        f'\\.({"|".join(FORMATS)})"$'
                                    ),
                                },
                                "example": f'attachment; filename="{EXAMPLE_JOB_ID}.svg"',
                            },
                            "X-Content-Type-Options": {
                                "description": "Always nosniff.",
                                "required": True,
                                "schema": {"type": "string", "const": "nosniff"},
                                "example": "nosniff",
                            },
                        },
                        "content": _result_content(),
                    },
                    **answers.common(401, 403, 404),
                    "405": METHOD_NOT_ALLOWED,
                    "409": answers.problem(
                        409,
                        "The job has not succeeded yet, or failed or was canceled so no file "
                        "exists.",
                        [ResultNotReady.code],
                    ),
                    "410": answers.problem(
                        410, f"The file was deleted {hours} hours after the job ended."
                    ),
                    **answers.common(429, 500),
                },
            }
        },
        "/v1/account": {
            "get": {
                "operationId": "getAccount",
                "tags": ["account"],
                "summary": "Read credits and limits",
                "description": "The account's credits, unfinished jobs and limits.",
                "responses": {
                    "200": {
                        "description": "The account.",
                        "content": {
                            "application/json": {
                                "schema": _ref("Account"),
                                "examples": {"account": _account_example(policy)},
                            }
                        },
                    },
                    **answers.common(401, 403),
                    "405": METHOD_NOT_ALLOWED,
                    **answers.common(429, 500),
                },
            }
        },
        "/v1/openapi.json": {
            "get": {
                "operationId": "getOpenApi",
                "tags": ["description"],
                "summary": "This description",
                "description": "The OpenAPI 3.1 description of the API; needs no API key.",
                "security": [],
                "responses": {
                    "200": {
                        "description": "The OpenAPI 3.1 description of the API.",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "description": "An OpenAPI 3.1 document.",
                                },
                                "examples": {
                                    "document": {
                                        "summary": "The start of this document",
                                        "value": {
                                            "openapi": OPENAPI_VERSION,
                                            "info": {"version": API_VERSION},
                                        },
                                    }
                                },
                            }
                        },
                    },
                    "405": METHOD_NOT_ALLOWED,
                    **answers.common(500),
                },
            }
        },
    }


def _account_example(policy: Policy) -> dict[str, Any]:
    return {
        "summary": "An account with two unfinished jobs",
        "value": {
            "credits_balance": 25,
            "credits_held": 2,
            "credits_available": 23,
            "active_jobs": 2,
            "active_jobs_max": DEFAULT_ACTIVE_JOBS,
            "limits": {
                "active_jobs": DEFAULT_ACTIVE_JOBS,
                "idempotency_ttl_seconds": policy.idempotency_ttl_seconds,
                "job_cost": policy.job_cost,
                "max_upload_bytes": policy.max_upload_bytes,
                "max_upload_pixels": policy.max_upload_pixels,
                "reads_per_minute": policy.reads_per_minute,
                "result_ttl_seconds": policy.result_ttl_seconds,
                "submissions_per_minute": policy.submissions_per_minute,
            },
        },
    }


def openapi_document(settings: Any = None) -> dict[str, Any]:
    """The whole description; `settings` gives `servers` (base_url) and the docs address."""
    base_url = getattr(settings, "base_url", None) or "http://127.0.0.1:8000"
    # Unset, the docs are the service's own errors page (PRINTJOB_DOCS_URL's default).
    docs_url = getattr(settings, "docs_url", None) or f"{base_url.rstrip('/')}/docs/errors"
    service = getattr(settings, "service_name", None) or "printjob"
    policy = settings.policy() if settings is not None and hasattr(settings, "policy") else Policy()
    answers = _Answers(base_url, docs_url, policy)
    document = {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": f"{service} API",
            "version": API_VERSION,
            "description": (
                "Turn one raster image into one print file (SVG, PDF, EPS or a "
                f"{DEFAULT_DPI} dpi print PNG) as an asynchronous job: submit the image, poll "
                "the job after the seconds its Retry-After gives until it is final, then "
                f"download the file. A job that succeeds costs {policy.job_cost} credit; "
                "failed, canceled and interrupted jobs cost nothing. Every error is "
                "`application/problem+json` with a stable `code`. A request with a method "
                f"not allowed for a path gets 405 {MethodNotAllowed.code} with an `Allow` "
                "header (HEAD and OPTIONS included). Clients must ignore answer fields they "
                "do not know: within /v1, fields and error codes are only ever added."
            ),
        },
        "servers": [{"url": base_url}],
        "security": [{"bearer": []}],
        "tags": [
            {"name": "jobs", "description": "Submit images, follow jobs, download files."},
            {"name": "account", "description": "Credits, unfinished jobs and limits."},
            {"name": "description", "description": "This machine-readable description."},
        ],
        "paths": _paths(answers, policy),
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": (
                        f"An API key: 43 characters starting with `{KEY_PREFIX}`, sent as "
                        "`Authorization: Bearer <API_KEY>`. Keys are made and revoked on the "
                        "account page; keep them on your server. After "
                        f"{policy.wrong_keys_per_minute} wrong keys within a minute from one "
                        "network, further wrong keys get 429."
                    ),
                }
            },
            "parameters": {
                "JobId": {
                    "name": "job_id",
                    "in": "path",
                    "required": True,
                    "description": "The job's identifier, as submitJob returned it.",
                    "schema": {"type": "string", "pattern": JOB_ID_PATTERN},
                    "example": EXAMPLE_JOB_ID,
                },
                "RequestId": {
                    "name": "X-Request-Id",
                    "in": "header",
                    "required": False,
                    "description": (
                        "Your own id for this request (1 to 128 letters, digits or . _ : -), "
                        "echoed on the answer and kept in the service's logs; anything else "
                        "is replaced by a new id (never refused)."
                    ),
                    "schema": {"type": "string"},
                },
                "IdempotencyKey": {
                    "name": "Idempotency-Key",
                    "in": "header",
                    "required": False,
                    "description": (
                        "1 to 255 letters, digits or . _ : - (optionally in double quotes); a "
                        "UUID works. Remembered "
                        f"{policy.idempotency_ttl_seconds // 3600} hours per account: resend "
                        "a submission with the same key after a network error or a 503 and "
                        "it is not done twice."
                    ),
                    "schema": {"type": "string", "pattern": IDEMPOTENCY_KEY_PATTERN},
                    "example": "5f0c2a8e-6d1b-4e8a-9a43-0c1d2e3f4a5b",
                },
            },
            "headers": {
                "Retry-After": {
                    "description": "Seconds to wait before sending the request again.",
                    "required": True,
                    "schema": {"type": "integer", "minimum": 1},
                    "example": 12,
                },
                "WWW-Authenticate": {
                    "description": (
                        f'`Bearer realm="{service}"`, plus `, error="invalid_token"` when a '
                        "key was sent."
                    ),
                    "required": True,
                    "schema": {"type": "string", "pattern": '^Bearer realm="'},
                    "example": f'Bearer realm="{service}", error="invalid_token"',
                },
                "Allow": {
                    "description": "The methods the path allows.",
                    "required": True,
                    "schema": {"type": "string"},
                    "example": "POST",
                },
                "X-Request-Id": {
                    "description": (
                        "The request's id: the one the request sent when well-formed, else "
                        "a new one. Quote it when asking for help: it is in the service's logs."
                    ),
                    "required": True,
                    "schema": {"type": "string", "pattern": REQUEST_ID_PATTERN},
                    "example": "req_4f1c9b2a7d3e8f6a0b5c1d2e",
                },
            },
            "responses": {
                "MethodNotAllowed": answers.problem(
                    405,
                    "The path does not allow this method; `Allow` lists the methods it does. "
                    "Sent for any method besides the operation's, HEAD and OPTIONS included.",
                ),
            },
            "schemas": _schemas(docs_url, policy),
        },
    }
    _with_request_ids(document)
    return document


def _with_request_ids(document: dict[str, Any]) -> None:
    """Every operation takes an `X-Request-Id` and every answer carries one: the shell
    echoes it on all of them (`printjob_http.request_ids`), so it is documented once here
    rather than beside each answer."""
    parameter = {"$ref": "#/components/parameters/RequestId"}
    header = {"$ref": "#/components/headers/X-Request-Id"}
    answers = [document["components"]["responses"].values()]
    for path in document["paths"].values():
        for operation in path.values():
            operation["parameters"] = [*operation.get("parameters", ()), parameter]
            answers.append(operation["responses"].values())
    for group in answers:
        for answer in group:
            if "$ref" not in answer:
                answer["headers"] = {**answer.get("headers", {}), "X-Request-Id": header}


__all__ = ["API_VERSION", "openapi_document"]
