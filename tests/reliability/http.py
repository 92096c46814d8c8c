"""Hand-made requests: multipart bodies byte by byte; raw requests read back as httpx answers."""

from __future__ import annotations

import socket

import httpx

BOUNDARY = "rel-b0undary-42"


def file_part(
    content: bytes,
    name: bytes = b"image",
    filename: bytes = b"picture.png",
    content_type: bytes | None = b"image/png",
) -> bytes:
    head = b'Content-Disposition: form-data; name="' + name + b'"; filename="' + filename + b'"'
    if content_type is not None:
        head += b"\r\nContent-Type: " + content_type
    return head + b"\r\n\r\n" + content


def text_part(name: bytes, value: bytes) -> bytes:
    return b'Content-Disposition: form-data; name="' + name + b'"\r\n\r\n' + value


def body(*parts: bytes, boundary: str = BOUNDARY) -> bytes:
    delimiter = b"--" + boundary.encode()
    out = b""
    for part in parts:
        out += delimiter + b"\r\n" + part + b"\r\n"
    return out + delimiter + b"--\r\n"


def content_type(boundary: str = BOUNDARY) -> str:
    return f"multipart/form-data; boundary={boundary}"


def post_form(
    client: httpx.Client, *parts: bytes, headers: dict[str, str | bytes] | None = None
) -> httpx.Response:
    all_headers: dict[str, str | bytes] = {"Content-Type": content_type()}
    all_headers.update(headers or {})
    return client.post("/v1/jobs", content=body(*parts), headers=all_headers)


def raw(port: int, request: bytes, timeout: float = 15.0) -> httpx.Response:
    """Send raw bytes over one connection and parse the single answer (Content-Length framed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
            head, sep, rest = data.partition(b"\r\n\r\n")
            if sep:
                length = _content_length(head)
                if length is not None and len(rest) >= length:
                    break
                if length is None and head.startswith(b"HTTP/1.1 1"):
                    data = rest
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines and lines[0].startswith(b"HTTP/1."), f"no HTTP answer: {data[:200]!r}"
    status = int(lines[0].split()[1])
    headers = [tuple(line.split(b":", 1)) for line in lines[1:] if b":" in line]
    pairs = [(name.strip(), value.strip()) for name, value in headers]
    length = _content_length(head)
    return httpx.Response(status, headers=pairs, content=rest[:length] if length else rest)


def _content_length(head: bytes) -> int | None:
    for line in head.split(b"\r\n")[1:]:
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return None


def get_request(path: bytes, key: str | None, extra: bytes = b"", method: bytes = b"GET") -> bytes:
    auth = b"Authorization: Bearer " + key.encode() + b"\r\n" if key else b""
    return (
        method
        + b" "
        + path
        + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + auth
        + extra
        + b"Connection: close\r\n\r\n"
    )
