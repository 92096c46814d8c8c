"""A small, strict `multipart/form-data` parser for the submission body (contract 4.1).

Its delimiters are found while the body arrives (`DelimiterScan`, fed piece by piece as
the body is spooled), and the body is then split where they are (`split`) from a spool
file mapped into memory: the image part is a view of the map, never a copy. Every
refusal is an `InvalidParameter` naming the field it concerns, so the client learns which
part to fix. Text values must be UTF-8; file parts other than
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
    #: A copy in memory, or a view of the spool file's map (`printjob_http.spooling`).
    image: bytes | memoryview | None
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


#: Parts a body may have: the image and the handful of option fields are far fewer.
MAX_PARTS = 100
#: Bytes between a delimiter and its line break (transport padding), and of a part's
#: headers: each is read where the delimiter was found, never searched for further.
MAX_BOUNDARY_LINE_BYTES = 1024
MAX_PART_HEADER_BYTES = 16 * 1024


class DelimiterScan:
    """Where a body's delimiters are, found piece by piece while the body arrives.

    Each piece is searched once (plus the few bytes before it that a delimiter could
    straddle), so when the last byte comes nothing is left to search: `split` then reads
    only the few bytes around each delimiter. Scanning stops at the closing delimiter
    (what follows is the epilogue) or past `MAX_PARTS` delimiters. Cost: one `find` pass
    over the body, O(parts) memory.
    """

    def __init__(self, boundary: bytes) -> None:
        self.boundary = boundary
        self._needle = b"\r\n--" + boundary
        #: Bytes kept from one piece to the next: a delimiter starting in them, and the two
        #: bytes after it that say whether it is the closing one, may be cut by a piece's end.
        self._keep = len(self._needle) + 1
        # A delimiter may open the body with no line break before it: as if one came first.
        self._tail = b"\r\n"
        self._tail_at = -2
        #: The first body offset where a next delimiter's line break may start.
        self._next = -2
        #: Body offsets of each delimiter's leading "--", in order.
        self.positions: list[int] = []
        self.closed = False
        self.too_many = False
        #: Bytes fed so far.
        self.size = 0

    @property
    def done(self) -> bool:
        """Nothing more to look for: the closing delimiter (or too many) was found."""
        return self.closed or self.too_many

    def feed(self, piece: bytes) -> None:
        """Look for delimiters in the body's next `piece`."""
        at = self.size
        self.size += len(piece)
        if self.done or not piece:
            return
        tail, tail_at = self._tail, self._tail_at
        # Delimiters starting in the kept bytes, then those inside the piece itself.
        self._search(tail + piece[: self._keep], tail_at, len(tail), final=False)
        if not self.done:
            self._search(piece, at, len(piece), final=False)
        if len(piece) >= self._keep:
            self._tail, self._tail_at = piece[-self._keep :], self.size - self._keep
        else:
            joined = tail + piece
            self._tail = joined[-self._keep :]
            self._tail_at = self.size - len(self._tail)

    def finish(self) -> None:
        """The body has ended: a delimiter in the last kept bytes counts without its
        two following bytes (a body cut right after one)."""
        if not self.done:
            self._search(self._tail, self._tail_at, len(self._tail), final=True)

    def _search(self, buffer: bytes, offset: int, starts_before: int, *, final: bool) -> None:
        needle = self._needle
        index = buffer.find(needle)
        while 0 <= index < starts_before:
            after = index + len(needle)
            if not final and after + 2 > len(buffer):
                return  # the next piece says whether it closes: it is kept for then
            if offset + index >= self._next:
                self.positions.append(offset + index + 2)
                self._next = offset + after
                if buffer[after : after + 2] == b"--":
                    self.closed = True
                    return
                if len(self.positions) > MAX_PARTS:
                    self.too_many = True
                    return
            index = buffer.find(needle, after)


def split(body: bytes | mmap.mmap, scan: DelimiterScan) -> Form:
    """The text fields and exactly one `image` file part of a body whose delimiters `scan`
    found. The image part is a slice of `body` (of an `mmap`: a `memoryview`, no copy;
    release it before the map is closed); text values are copied out."""
    delimiter = b"--" + scan.boundary
    size = len(body)
    if scan.too_many:
        raise _malformed(f"it has more than {MAX_PARTS} parts")
    if not scan.positions:
        raise _malformed("no part starts with the boundary")
    fields: list[tuple[str, str]] = []
    image: bytes | memoryview | None = None
    image_filename = ""
    last = len(scan.positions) - 1
    for index, start in enumerate(scan.positions):
        if index == last and scan.closed:
            break  # the closing delimiter; anything after it is the epilogue
        position = start + len(delimiter)
        line_end = body.find(b"\r\n", position, min(size, position + MAX_BOUNDARY_LINE_BYTES))
        if line_end < 0 or body[position:line_end].strip(b" \t"):
            raise _malformed("a boundary line is followed by other text")
        # The part ends where the next delimiter's line break starts (or the body does).
        part_end = scan.positions[index + 1] - 2 if index < last else size
        headers_end = body.find(
            b"\r\n\r\n", line_end, min(part_end, line_end + MAX_PART_HEADER_BYTES)
        )
        if headers_end == line_end:  # a part with no headers at all
            raise _malformed("a part has no Content-Disposition header")
        if headers_end < 0:
            raise _malformed("a part's headers never end")
        headers = _part_headers(body[line_end + 2 : headers_end])
        if index == last:
            raise _malformed("the closing boundary is missing")
        content_start = headers_end + 4
        name, filename = _disposition(headers.get("content-disposition"))
        if filename is not None and name == IMAGE_FIELD:
            if image is not None:
                raise InvalidParameter(
                    "Send exactly one image: the request has more than one part named image.",
                    param=IMAGE_FIELD,
                )
            if isinstance(body, mmap.mmap):
                image = memoryview(body)[content_start:part_end]
            else:
                image = body[content_start:part_end]
            image_filename = filename
            continue
        try:
            value = body[content_start:part_end].decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidParameter(
                f"The value of {name[:40]!r} is not valid UTF-8 text.", param=name
            ) from None
        fields.append((name, value))
    return Form(fields=fields, image=image, image_filename=image_filename)


def parse(body: bytes, boundary: bytes) -> Form:
    """Split a multipart body held in memory into text fields and exactly one `image`
    file part."""
    scan = DelimiterScan(boundary)
    scan.feed(body)
    scan.finish()
    return split(body, scan)


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
