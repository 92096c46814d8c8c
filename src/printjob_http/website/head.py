"""HEAD on the website's pages: the GET's status and headers without its body.

Link checkers, uptime monitors and browsers' prefetchers ask pages with HEAD; the pages'
handlers are GET handlers, so HEAD runs the same handler and drops the body here. GET is
safe (the download, which spends quota, is a POST), so running it for HEAD changes
nothing. The API's paths never get here: they keep answering HEAD with 405 (contract).
"""

from __future__ import annotations

from typing import Any

from printjob_http.website.security import ASGIApp


def answering_head(app: ASGIApp) -> ASGIApp:
    """`app`, with HEAD served as GET whose body is left out (headers kept as they are,
    `Content-Length` included, as HTTP asks of HEAD)."""

    async def with_head(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await app(scope, receive, send)
            return

        async def headers_only(message: Any) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await app({**scope, "method": "GET"}, receive, headers_only)

    return with_head


__all__ = ["answering_head"]
