"""The website's own assets (one stylesheet, one script, the example pictures), read once
and served with a validator so browsers keep them."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from litestar import Request, Response, get
from litestar.params import FromPath

from printjob_core.errors import NotFound

STATIC = Path(__file__).parent / "static"
MEDIA_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
_FILES: dict[str, tuple[bytes, str, str]] = {}


def _load() -> dict[str, tuple[bytes, str, str]]:
    if not _FILES:
        for path in STATIC.iterdir():
            if path.suffix in MEDIA_TYPES:
                data = path.read_bytes()
                etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
                _FILES[path.name] = (data, MEDIA_TYPES[path.suffix], etag)
    return _FILES


@get("/static/{name:str}")
async def static_file(request: Request[Any, Any, Any], name: FromPath[str]) -> Response[bytes]:
    found = _load().get(name)
    if found is None:
        raise NotFound(f"There is no file {name[:80]!r} here.")
    data, media_type, etag = found
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if request.headers.get("if-none-match") == etag:
        return Response(b"", status_code=304, headers=headers)
    return Response(data, media_type=media_type, headers=headers)


__all__ = ["static_file"]
