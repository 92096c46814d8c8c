"""The website's paths, so the gate can tell them from the API's (and from unknown ones).

The website claims these exact paths and no others: every other path stays the API's
404 Problem, as before the website existed.
"""

from __future__ import annotations

import re

_SEGMENT = r"[^/]+"

WEBSITE_PATHS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern)
    for pattern in (
        r"/",
        r"/signup",
        r"/signin",
        r"/signout",
        r"/account",
        r"/account/password",
        r"/account/keys",
        rf"/account/keys/{_SEGMENT}/revoke",
        rf"/invite/{_SEGMENT}",
        r"/convert",
        rf"/jobs/{_SEGMENT}",
        rf"/jobs/{_SEGMENT}/(?:status|download|cancel)",
        r"/static/[a-z0-9-]+\.(?:css|js|svg|png)",
    )
)


def is_website_path(raw_path: str) -> bool:
    """Whether a raw (still percent-encoded) path is one of the website's."""
    return any(pattern.fullmatch(raw_path) for pattern in WEBSITE_PATHS)


__all__ = ["WEBSITE_PATHS", "is_website_path"]
