"""Reading the website's forms: the small url-encoded ones, and the converter's upload.

The upload goes through the API's own spooling, multipart parser and size rules, and its option
fields through the API's option parser, so a person sees the same refusals, with the same
wording, as an API client (`printjob_core.options`, `printjob_http.multipart`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import parse_qsl

import attrs
from litestar import Request

from printjob_core.errors import InvalidParameter
from printjob_core.limits import Policy
from printjob_core.model import JobOptions
from printjob_core.options import IMAGE_FIELD
from printjob_core.services import declared_length_refusal
from printjob_core.services.website import conversion_options
from printjob_http import multipart, spooling
from printjob_http.shell import in_thread
from printjob_http.website.csrf import CSRF_FIELD

#: A url-encoded form is a few short fields: anything longer is not one of ours.
MAX_FORM_BYTES = 64 * 1024


class FormTooLarge(Exception):
    """A url-encoded form far longer than any of ours: refused unread (413)."""


@attrs.frozen
class Upload:
    """The converter's form: the picture, its chosen options, and the form's token."""

    image: bytes | None
    filename: str
    #: The option fields as sent (re-shown in the form when a value is refused).
    fields: dict[str, str]
    csrf_token: str | None

    def options(self) -> JobOptions:
        """The options, parsed and worded exactly as the API parses them."""
        return conversion_options(self.fields.items())


async def _body(request: Request[Any, Any, Any], limit: int, too_large: Exception) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


async def read_form(request: Request[Any, Any, Any]) -> dict[str, str]:
    """A url-encoded form's fields (the first of a repeated name)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_FORM_BYTES:
        raise FormTooLarge
    body = await _body(request, MAX_FORM_BYTES, FormTooLarge())
    fields: dict[str, str] = {}
    for name, value in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True):
        fields.setdefault(name, value)
    return fields


async def read_upload(
    request: Request[Any, Any, Any], policy: Policy, spool_dir: Path | None
) -> Upload:
    """The converter's multipart form, under the API's size limit and parser: spooled to a
    nameless file in `spool_dir` as it arrives and parsed from it, as the API's submit is
    (`printjob_http.spooling`), so an upload never sits whole in memory but as its image.

    `spooling.ClientDisconnected` when the browser leaves part way through."""
    refusal = declared_length_refusal(request.headers.get("content-length"), policy)
    if refusal is not None:
        raise refusal
    boundary = multipart.boundary_of(request.headers.get("content-type"))
    with await in_thread(spooling.spool_file, spool_dir) as spool:
        scan = await spooling.read_body(request, policy, spool, boundary)
        form, image = await in_thread(_copied_out, spool, scan)
    fields: dict[str, str] = {}
    for name, value in form.fields:
        fields.setdefault(name, value)
    token = fields.pop(CSRF_FIELD, None)
    return Upload(image, form.image_filename[:200], fields, token)


def _copied_out(
    spool: BinaryIO, scan: multipart.DelimiterScan
) -> tuple[multipart.Form, bytes | None]:
    """The spooled form, and its image copied out of the spool file's map: the page is
    rendered after the spool file is gone."""
    with spooling.spooled_form(spool, scan) as form:
        return form, None if form.image is None else bytes(form.image)


def require_image(upload: Upload) -> bytes:
    """The picture, or the API's refusal for a submission without one."""
    if upload.image is None or not upload.image:
        raise InvalidParameter(
            "image is required: choose, drop or paste a picture.", param=IMAGE_FIELD
        )
    return upload.image


__all__ = ["FormTooLarge", "Upload", "read_form", "read_upload", "require_image"]
