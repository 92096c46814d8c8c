"""The security headers every website answer carries, added by one ASGI wrapper.

The pages load only our own scripts and styles: no inline script, no CDN, no frames.
Images may also be `blob:` (the original picture previewed before it is uploaded).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' blob: data:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"referrer-policy", b"same-origin"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


def with_security_headers(app: ASGIApp) -> ASGIApp:
    """`app` whose every response start also carries `SECURITY_HEADERS`."""

    async def secured(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {bytes(name).lower() for name, _ in headers}
                headers.extend(h for h in SECURITY_HEADERS if h[0] not in present)
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, sending)

    return secured


__all__ = ["CONTENT_SECURITY_POLICY", "SECURITY_HEADERS", "with_security_headers"]
