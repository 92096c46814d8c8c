"""A small, strict `multipart/form-data` parser for the submission body (contract 4.1).

The body has already been read (with the 30 MB cap) by the caller, into memory or a
spool file mapped into memory (`mmap`: the parts are then the only copies made); this
module only splits it. Every refusal is an `InvalidParameter` naming the field it concerns, so the
client learns which part to fix. Text values must be UTF-8; file parts other than
`image` are handed on as text fields so the core refuses unknown names with `param`.
"""

from __future__ import annotations

import mmap
import re

import attrs

from printjob_core.errors import InvalidParameter
from printjob_core.options import IMAGE_FIELD

_PARAM = re.compile(r';\s*([^\s=;]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')
_BOUNDARY = re.compile(r"[0-9A-Za-z'()+_,\-./:=? ]{1,70}")
MULTIPART = "multipart/form-data"


@attrs.frozen
class Form:
    """The parsed submission: its text fields in order, and the one image part."""

    fields: list[tuple[str, str]]
    image: bytes | None
    #: The image part's file name as sent ("" without an image part); the website shows it.
    image_filename: str = ""


def media_type(content_type: str | None) -> str:
    """The bare, lower-case media type of a Content-Type header ("" when there is none)."""
    if not content_type:
        return ""
    return content_type.split(";", 1)[0].strip().lower()


def header_params(value: str) -> dict[str, str]:
    """The `; name=value` parameters of a header, names lower-cased, quotes removed."""
    params: dict[str, str] = {}
    _head, sep, rest = value.partition(";")
    if not sep:
        return params
    for match in _PARAM.finditer(";" + rest):
        name, raw = match.group(1).lower(), match.group(2).strip()
        if len(raw) >= 2 and raw[0] == raw[-1] == '"':
            raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
        params.setdefault(name, raw)
    return params


def boundary_of(content_type: str | None) -> bytes:
    """The boundary of a `multipart/form-data` Content-Type, or a 400 naming `image`."""
    if media_type(content_type) != MULTIPART:
        raise InvalidParameter(
            "Send the request as multipart/form-data with the picture in a file part named "
            f"image (the Content-Type was {content_type or 'missing'!s:.60}).",
            param=IMAGE_FIELD,
        )
    boundary = header_params(content_type or "").get("boundary", "")
    if not _BOUNDARY.fullmatch(boundary) or boundary.endswith(" "):
        raise InvalidParameter(
            "The multipart/form-data Content-Type has no valid boundary parameter.",
            param=IMAGE_FIELD,
        )
    return boundary.encode("ascii")


def _malformed(why: str) -> InvalidParameter:
    return InvalidParameter(
        f"The body is not valid multipart/form-data: {why}. Send the picture as a file part "
        "named image (curl: -F image=@picture.png).",
        param=IMAGE_FIELD,
    )


def _at(body: bytes | mmap.mmap, position: int, prefix: bytes) -> bool:
    """`body.startswith(prefix, position)`, which an `mmap` lacks."""
    return body[position : position + len(prefix)] == prefix


def parse(body: bytes | mmap.mmap, boundary: bytes) -> Form:
    """Split a multipart body into text fields and exactly one `image` file part."""
    delimiter = b"--" + boundary
    if _at(body, 0, delimiter):
        position = 0
    else:
        position = body.find(b"\r\n" + delimiter)
        if position < 0:
            raise _malformed("no part starts with the boundary")
        position += 2
    fields: list[tuple[str, str]] = []
    image: bytes | None = None
    image_filename = ""
    next_delimiter = b"\r\n" + delimiter
    while True:
        position += len(delimiter)
        if _at(body, position, b"--"):
            break  # the closing delimiter; anything after it is the epilogue
        line_end = body.find(b"\r\n", position)
        if line_end < 0 or body[position:line_end].strip(b" \t"):
            raise _malformed("a boundary line is followed by other text")
        headers_end = body.find(b"\r\n\r\n", line_end)
        if headers_end == line_end:  # a part with no headers at all
            raise _malformed("a part has no Content-Disposition header")
        if headers_end < 0:
            raise _malformed("a part's headers never end")
        headers = _part_headers(body[line_end + 2 : headers_end])
        content_start = headers_end + 4
        end = body.find(next_delimiter, content_start)
        if end < 0:
            raise _malformed("the closing boundary is missing")
        content = body[content_start:end]
        position = end + 2
        name, filename = _disposition(headers.get("content-disposition"))
        if filename is not None and name == IMAGE_FIELD:
            if image is not None:
                raise InvalidParameter(
                    "Send exactly one image: the request has more than one part named image.",
                    param=IMAGE_FIELD,
                )
            image, image_filename = content, filename
            continue
        try:
            value = content.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidParameter(
                f"The value of {name[:40]!r} is not valid UTF-8 text.", param=name
            ) from None
        fields.append((name, value))
    return Form(fields=fields, image=image, image_filename=image_filename)


def _part_headers(block: bytes) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in block.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if not sep:
            raise _malformed("a part header line has no colon")
        text = value.decode("utf-8", errors="replace").strip()
        headers[name.decode("latin-1").strip().lower()] = text
    return headers


def _disposition(value: str | None) -> tuple[str, str | None]:
    """The field name and, for a file part, the file name of a part."""
    if value is None or media_type(value) != "form-data":
        raise _malformed("a part has no 'Content-Disposition: form-data' header")
    params = header_params(value)
    name = params.get("name")
    if name is None:
        raise _malformed("a part has no name")
    filename = params.get("filename", params.get("filename*"))
    return name, filename
