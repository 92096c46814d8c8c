"""The OpenAPI 3.1 description of `/v1` (contract 4.6), written by hand to match what is served.

Every operation, parameter, header, answer and Problem of the contract is described
here; the contract tests run schemathesis against this document as served by the real
server, and validate it with openapi-spec-validator. Limits, enumerations, polling hints
and error codes come from the core (`Policy`, `printjob_core.model`, `options`,
`services`, `errors`), so the document cannot drift from what the service does.
"""

from __future__ import annotations

from typing import Any

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
    Background,
    JobErrorCode,
    JobStatus,
    OutputFormat,
    Phase,
)
from printjob_core.options import COLORS_RANGE, DPI_RANGE, MAX_CANVAS_PIXELS, MAX_SIDE
from printjob_core.services import JOB_ID, POLL_RETRY_AFTER

OPENAPI_VERSION = "3.1.0"
API_VERSION = "1.0.0"
JOB_ID_PATTERN = f"^{JOB_ID.pattern}$"
IDEMPOTENCY_KEY_PATTERN = '^"?[A-Za-z0-9._:-]{1,255}"?$'
SIZE_PATTERN = "^(original|[0-9]{1,6}[xX][0-9]{1,6})$"

BACKGROUNDS = [b.value for b in Background]
#: The polling hints of contract section 3, as the descriptions state them.
POLL_HINT = (
    f"{POLL_RETRY_AFTER[JobStatus.QUEUED]} queued, {POLL_RETRY_AFTER[JobStatus.RUNNING]} running"
)

#: Which Problem codes each status can carry (contract section 7).
CODES_BY_STATUS: dict[int, list[str]] = {}
for _code, _cls in PROBLEM_TYPES.items():
    CODES_BY_STATUS.setdefault(_cls.status, []).append(_code)


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"oneOf": [schema, {"type": "null"}]}


def _schemas(docs_url: str, policy: Policy) -> dict[str, Any]:
    formats = [f.value for f in OutputFormat]
    hours = policy.result_ttl_seconds // 3600
    date_time = {"type": "string", "format": "date-time"}
    return {
        "JobOptions": {
            "type": "object",
            "description": "The options of the submission, normalised (contract 2.2).",
            "required": ["format", "size", "colors", "background"],
            "properties": {
                "format": {"type": "string", "enum": formats},
                "size": {"type": "string", "pattern": SIZE_PATTERN},
                "colors": {
                    "type": ["integer", "null"],
                    "minimum": COLORS_RANGE[0],
                    "maximum": COLORS_RANGE[1],
                    "description": "null means automatic.",
                },
                "background": {"type": "string", "enum": BACKGROUNDS},
                "dpi": {
                    "type": "integer",
                    "minimum": DPI_RANGE[0],
                    "maximum": DPI_RANGE[1],
                    "description": "Present only when it was sent.",
                },
            },
        },
        "JobResult": {
            "type": "object",
            "description": "The file a succeeded job produced (contract 2.3).",
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
                "format": {"type": "string", "enum": formats},
                "width": {"type": "integer", "minimum": 1},
                "height": {"type": "integer", "minimum": 1},
                "bytes": {"type": "integer", "minimum": 0, "description": "File size."},
                "colors": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Number of colors the file actually has.",
                },
                "background_removed": {"type": "boolean"},
                "url": {
                    "type": "string",
                    "format": "uri",
                    "description": "Absolute address of GET /v1/jobs/{job_id}/result.",
                },
                "expires_at": {
                    **date_time,
                    "description": f"When the file is deleted: {hours} hours after the job ended.",
                },
            },
        },
        "JobError": {
            "type": "object",
            "description": "Why a job failed (contract 2.4).",
            "required": ["code", "detail"],
            "properties": {
                "code": {"type": "string", "enum": [c.value for c in JobErrorCode]},
                "detail": {"type": "string"},
            },
        },
        "Job": {
            "type": "object",
            "description": "One conversion job (contract 2.1). Ignore fields you do not know.",
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
                "id": {"type": "string", "pattern": JOB_ID_PATTERN},
                "status": {
                    "type": "string",
                    "enum": [status.value for status in JobStatus],
                },
                "phase": {
                    "type": ["string", "null"],
                    "enum": [*(phase.value for phase in Phase), None],
                    "description": "For progress display only; may change without notice.",
                },
                "progress": {"type": ["integer", "null"], "minimum": 0, "maximum": 100},
                "created_at": date_time,
                "finished_at": {"type": ["string", "null"], "format": "date-time"},
                "options": _ref("JobOptions"),
                "credits_charged": {"type": "integer", "minimum": 0},
                "result": _nullable(_ref("JobResult")),
                "error": _nullable(_ref("JobError")),
            },
        },
        "Limits": {
            "type": "object",
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
                "active_jobs": {"type": "integer", "minimum": 1},
                "idempotency_ttl_seconds": {"type": "integer", "minimum": 1},
                "job_cost": {"type": "integer", "minimum": 0},
                "max_upload_bytes": {"type": "integer", "minimum": 1},
                "max_upload_pixels": {"type": "integer", "minimum": 1},
                "reads_per_minute": {"type": "integer", "minimum": 1},
                "result_ttl_seconds": {"type": "integer", "minimum": 1},
                "submissions_per_minute": {"type": "integer", "minimum": 1},
            },
        },
        "Account": {
            "type": "object",
            "description": "Credits and limits (contract 2.5).",
            "required": [
                "credits_balance",
                "credits_held",
                "credits_available",
                "active_jobs",
                "active_jobs_max",
                "limits",
            ],
            "properties": {
                "credits_balance": {"type": "integer"},
                "credits_held": {"type": "integer", "minimum": 0},
                "credits_available": {"type": "integer"},
                "active_jobs": {"type": "integer", "minimum": 0},
                "active_jobs_max": {"type": "integer", "minimum": 1},
                "limits": _ref("Limits"),
            },
        },
        "Problem": {
            "type": "object",
            "description": (
                "RFC 9457 problem details with a stable `code` (contract 2.6, section 7). "
                f"`type` is `{docs_url}#error-<code>`."
            ),
            "required": ["type", "title", "status", "detail", "code"],
            "properties": {
                "type": {"type": "string", "format": "uri"},
                "title": {"type": "string"},
                "status": {"type": "integer", "minimum": 400, "maximum": 599},
                "detail": {"type": "string"},
                "code": {"type": "string", "enum": sorted(PROBLEM_TYPES)},
                "param": {
                    "type": "string",
                    "description": "Name of the offending field, for a wrong field.",
                },
            },
        },
        "JobSubmission": {
            "type": "object",
            "description": "The multipart form of POST /v1/jobs (contract 4.1).",
            "required": ["image", "format"],
            "additionalProperties": False,
            "properties": {
                "image": {
                    "type": "string",
                    "contentMediaType": "application/octet-stream",
                    "description": (
                        "PNG, JPEG, GIF, BMP or WebP; at most "
                        f"{policy.max_upload_pixels:,} pixels; each side at least "
                        f"{policy.min_side} px; long side at most {policy.max_aspect_ratio} "
                        f"times the short side; whole request at most {policy.max_upload_bytes} "
                        "bytes."
                    ),
                },
                "format": {
                    "type": "string",
                    "enum": formats,
                    "description": f"png is a print PNG at {DEFAULT_DPI} dpi.",
                },
                "size": {
                    "type": "string",
                    "pattern": SIZE_PATTERN,
                    "default": "original",
                    "description": (
                        f"original, or <width>x<height> in pixels: each side 1 to {MAX_SIDE}, at "
                        f"most {MAX_CANVAS_PIXELS // 1_000_000} megapixels. A png with original "
                        f"is {PRINT_CANVAS[0]} x {PRINT_CANVAS[1]} at {DEFAULT_DPI} dpi."
                    ),
                },
                "dpi": {
                    "type": "integer",
                    "minimum": DPI_RANGE[0],
                    "maximum": DPI_RANGE[1],
                    "default": DEFAULT_DPI,
                    "description": (
                        "Only with an explicit size (without one: 400 invalid_parameter)."
                    ),
                },
                "colors": {
                    "type": "integer",
                    "minimum": COLORS_RANGE[0],
                    "maximum": COLORS_RANGE[1],
                    "description": "Number of flat colors wanted; leave out for automatic.",
                },
                "background": {
                    "type": "string",
                    "enum": BACKGROUNDS,
                    "default": Background.KEEP.value,
                },
            },
        },
    }


def _header(description: str, schema: dict[str, Any], required: bool = True) -> dict[str, Any]:
    return {"description": description, "required": required, "schema": schema}


RETRY_AFTER = {"$ref": "#/components/headers/Retry-After"}


def _problem(status: int, description: str, codes: list[str] | None = None) -> dict[str, Any]:
    codes = codes or CODES_BY_STATUS[status]
    schema: dict[str, Any] = {
        "allOf": [
            _ref("Problem"),
            {"properties": {"status": {"const": status}, "code": {"enum": codes}}},
        ]
    }
    answer: dict[str, Any] = {
        "description": description,
        "content": {"application/problem+json": {"schema": schema}},
    }
    if status in (429, 503):
        answer["headers"] = {"Retry-After": RETRY_AFTER}
    if status == 401:
        answer["headers"] = {"WWW-Authenticate": {"$ref": "#/components/headers/WWW-Authenticate"}}
    return answer


def _job_answer(description: str, status_note: str) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {
            "Retry-After": {
                "description": (
                    "Seconds to wait before polling again, while the job is unfinished "
                    f"({POLL_HINT}). {status_note}"
                ),
                "required": False,
                "schema": {"type": "integer", "minimum": 1},
            }
        },
        "content": {"application/json": {"schema": _ref("Job")}},
    }


def _common(*statuses: int) -> dict[str, Any]:
    texts = {
        401: f"The API key is missing, wrong or revoked ({Unauthenticated.code}).",
        403: f"The account is disabled ({AccountDisabled.code}).",
        404: f"No such job in this account ({NotFound.code}), also for another account's job.",
        429: f"A per-minute limit was reached ({RateLimited.code}): wait Retry-After seconds.",
        500: f"Something broke on the server ({InternalError.code}): retry.",
    }
    only_rate = [RateLimited.code]
    return {str(s): _problem(s, texts[s], only_rate if s == 429 else None) for s in statuses}


def openapi_document(settings: Any = None) -> dict[str, Any]:
    """The whole description; `settings` gives `servers` (base_url) and the docs address."""
    base_url = getattr(settings, "base_url", None) or "http://127.0.0.1:8000"
    docs_url = getattr(settings, "docs_url", None) or "https://docs.printjob.dev/v1/errors"
    service = getattr(settings, "service_name", None) or "printjob"
    policy = settings.policy() if settings is not None and hasattr(settings, "policy") else Policy()
    formats = [f.value for f in OutputFormat]
    job_id = {"$ref": "#/components/parameters/JobId"}
    security: list[dict[str, list[str]]] = [{"bearer": []}]
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": f"{service} API",
            "version": API_VERSION,
            "description": (
                "Turn one raster image into one print file (SVG, PDF, EPS or a "
                f"{DEFAULT_DPI} dpi print PNG) as an asynchronous job: submit, poll the job "
                "honoring Retry-After, then download the file. A job that succeeds costs "
                f"{policy.job_cost} credit; failed, canceled and "
                "interrupted jobs cost nothing. Every error is application/problem+json with "
                "a stable `code`. A request with a method not allowed for a path gets 405 "
                f"{MethodNotAllowed.code} with an `Allow` header (HEAD and OPTIONS included)."
            ),
        },
        "servers": [{"url": base_url}],
        "security": security,
        "paths": {
            "/v1/jobs": {
                "post": {
                    "operationId": "submitJob",
                    "summary": "Submit an image",
                    "description": (
                        "Accepts one image with its options and answers at once with a queued "
                        f"job; the file is produced in the background. {policy.job_cost} credit "
                        "is held until the job ends and charged only on success. The same "
                        "image, options and Idempotency-Key within "
                        f"{policy.idempotency_ttl_seconds // 3600} hours return the first job "
                        "(Idempotent-Replayed: true) and hold no second credit."
                    ),
                    "parameters": [{"$ref": "#/components/parameters/IdempotencyKey"}],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "multipart/form-data": {
                                "schema": _ref("JobSubmission"),
                                "encoding": {"image": {"contentType": "image/*"}},
                            }
                        },
                    },
                    "responses": {
                        "202": {
                            "description": "Accepted: the job (queued; as it is now on a replay).",
                            "headers": {
                                "Location": {
                                    "description": "Absolute address of the job.",
                                    "required": True,
                                    "schema": {"type": "string", "format": "uri"},
                                },
                                "Retry-After": {
                                    "description": (
                                        f"Seconds to wait before the first poll ({POLL_HINT}); "
                                        "absent for a final job on a replay."
                                    ),
                                    "required": False,
                                    "schema": {"type": "integer", "minimum": 1},
                                },
                                "Idempotent-Replayed": {
                                    "description": (
                                        "`true` only when a repeated Idempotency-Key returned "
                                        "the first job."
                                    ),
                                    "required": False,
                                    "schema": {"type": "string", "const": "true"},
                                },
                            },
                            "content": {"application/json": {"schema": _ref("Job")}},
                        },
                        "400": _problem(
                            400,
                            f"A field is wrong, missing or unknown ({InvalidParameter.code}); "
                            "`param` names it.",
                        ),
                        "401": _common(401)["401"],
                        "402": _problem(402, f"Not enough credits ({InsufficientCredits.code})."),
                        "403": _common(403)["403"],
                        "413": _problem(
                            413,
                            f"Over {policy.max_upload_pixels // 1_000_000} megapixels or a "
                            f"request over {policy.max_upload_bytes // 2**20} MB "
                            f"({ImageTooLarge.code}).",
                        ),
                        "422": _problem(
                            422,
                            "Not an openable image or sides out of bounds "
                            f"({UnsupportedImage.code}), or the key came with another image or "
                            f"options ({IdempotencyKeyReused.code}).",
                        ),
                        "429": _problem(
                            429,
                            f"Submissions per minute exceeded ({RateLimited.code}) or too many "
                            f"unfinished jobs ({TooManyActiveJobs.code}); wait Retry-After "
                            "seconds.",
                        ),
                        "500": _common(500)["500"],
                        "503": _problem(
                            503,
                            f"Server busy ({ServerBusy.code}): wait Retry-After seconds and resend "
                            "with the same Idempotency-Key.",
                        ),
                    },
                }
            },
            "/v1/jobs/{job_id}": {
                "get": {
                    "operationId": "getJob",
                    "summary": "Read a job",
                    "description": (
                        "A succeeded job carries `result`, a failed job `error`; the job stays "
                        "readable after its file has expired."
                    ),
                    "parameters": [job_id],
                    "responses": {
                        "200": _job_answer("The job.", "Absent once the job is final."),
                        **_common(401, 403, 404, 429, 500),
                    },
                }
            },
            "/v1/jobs/{job_id}/cancel": {
                "post": {
                    "operationId": "cancelJob",
                    "summary": "Cancel a job",
                    "description": (
                        "Stops a queued or running job; nothing is charged and the held "
                        "credit returns. Canceling a canceled job again changes nothing."
                    ),
                    "parameters": [job_id],
                    "responses": {
                        "200": {
                            "description": "The job, now canceled.",
                            "content": {"application/json": {"schema": _ref("Job")}},
                        },
                        **_common(401, 403, 404),
                        "409": _problem(
                            409,
                            f"The job already succeeded or failed ({JobNotCancelable.code}).",
                            [JobNotCancelable.code],
                        ),
                        **_common(429, 500),
                    },
                }
            },
            "/v1/jobs/{job_id}/result": {
                "get": {
                    "operationId": "getJobResult",
                    "summary": "Download the file",
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
                                            f'\\.({"|".join(formats)})"$'
                                        ),
                                    },
                                },
                                "X-Content-Type-Options": {
                                    "description": "Always nosniff.",
                                    "required": True,
                                    "schema": {"type": "string", "const": "nosniff"},
                                },
                            },
                            "content": {
                                media: {"schema": {"type": "string", "format": "binary"}}
                                for media in (f.media_type for f in OutputFormat)
                            },
                        },
                        **_common(401, 403, 404),
                        "409": _problem(
                            409,
                            f"The job has no file yet, or never will ({ResultNotReady.code}).",
                            [ResultNotReady.code],
                        ),
                        "410": _problem(
                            410,
                            f"The file was deleted {policy.result_ttl_seconds // 3600} hours after "
                            f"the job ended ({ResultExpired.code}).",
                        ),
                        **_common(429, 500),
                    },
                }
            },
            "/v1/account": {
                "get": {
                    "operationId": "getAccount",
                    "summary": "Read credits and limits",
                    "responses": {
                        "200": {
                            "description": "The account.",
                            "content": {"application/json": {"schema": _ref("Account")}},
                        },
                        **_common(401, 403, 429, 500),
                    },
                }
            },
            "/v1/openapi.json": {
                "get": {
                    "operationId": "getOpenApi",
                    "summary": "This description",
                    "security": [],
                    "responses": {
                        "200": {
                            "description": "The OpenAPI 3.1 description of the API.",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        },
                        "500": _common(500)["500"],
                    },
                }
            },
        },
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": (
                        f"An API key: 43 characters starting with `{KEY_PREFIX}`, sent as "
                        "`Authorization: Bearer <API_KEY>`. After "
                        f"{policy.wrong_keys_per_minute} wrong keys within a "
                        "minute from one network, further wrong keys get 429."
                    ),
                }
            },
            "parameters": {
                "JobId": {
                    "name": "job_id",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string", "pattern": JOB_ID_PATTERN},
                },
                "IdempotencyKey": {
                    "name": "Idempotency-Key",
                    "in": "header",
                    "required": False,
                    "description": (
                        "1 to 255 letters, digits or . _ : - (optionally in double quotes); a "
                        "UUID works. Remembered "
                        f"{policy.idempotency_ttl_seconds // 3600} hours per account."
                    ),
                    "schema": {"type": "string", "pattern": IDEMPOTENCY_KEY_PATTERN},
                },
            },
            "headers": {
                "Retry-After": {
                    "description": "Seconds to wait before sending the request again.",
                    "required": True,
                    "schema": {"type": "integer", "minimum": 1},
                },
                "WWW-Authenticate": {
                    "description": (
                        f'`Bearer realm="{service}"`, plus `, error="invalid_token"` when a '
                        "key was sent."
                    ),
                    "required": True,
                    "schema": {"type": "string", "pattern": '^Bearer realm="'},
                },
                "Allow": {
                    "description": "The methods the path allows (on 405 answers).",
                    "required": True,
                    "schema": {"type": "string"},
                },
            },
            "responses": {
                "MethodNotAllowed": {
                    "description": (
                        f"The path does not allow this method ({MethodNotAllowed.code}); `Allow` "
                        "lists the methods it does. Sent for any method besides the "
                        "operation's, HEAD and OPTIONS included."
                    ),
                    "headers": {"Allow": {"$ref": "#/components/headers/Allow"}},
                    "content": {
                        "application/problem+json": {
                            "schema": _problem(405, "")["content"]["application/problem+json"][
                                "schema"
                            ]
                        }
                    },
                },
                "NotFound": {
                    "description": (
                        f"No such path ({NotFound.code}); trailing slashes are not added."
                    ),
                    "content": _problem(404, "")["content"],
                },
            },
            "schemas": _schemas(docs_url, policy),
        },
    }


__all__ = ["API_VERSION", "openapi_document"]
