"""Rendering the website's pages: Jinja templates (autoescape on) into HTML answers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
from litestar import Response
from litestar.datastructures import Cookie

TEMPLATES = Path(__file__).parent / "templates"
#: Litestar adds `; charset=utf-8` to text types itself (naming it here doubled it).
HTML = "text/html"


def _when(value: datetime | None) -> str:
    """A moment as people read it, always in UTC (the quota's day is a UTC day)."""
    if value is None:
        return "never"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


class Pages:
    """The templates, loaded once per process."""

    def __init__(self, signup_open: bool) -> None:
        self.environment = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATES),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.environment.filters["when"] = _when
        self.environment.globals["signup_open"] = signup_open

    def render(self, template: str, **context: Any) -> str:
        return self.environment.get_template(template).render(**context)

    def answer(
        self,
        template: str,
        status: int = 200,
        *,
        headers: Mapping[str, str] | None = None,
        cookies: Sequence[Cookie] = (),
        **context: Any,
    ) -> Response[str]:
        """A page; never cached, since most show a person's own account."""
        context.setdefault("signed_in", None)
        context.setdefault("csrf_token", "")
        return Response(
            self.render(template, **context),
            status_code=status,
            media_type=HTML,
            headers={"Cache-Control": "no-store", **(headers or {})},
            cookies=list(cookies),
        )


__all__ = ["HTML", "Pages"]
