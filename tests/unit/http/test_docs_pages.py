"""The documentation pages' pure parts: the pages' text and the bundle's negotiation."""

from __future__ import annotations

import pytest

from printjob_core.errors import PROBLEM_TYPES
from printjob_core.limits import Policy
from printjob_http import docs_pages
from printjob_http.docs_pages import errors_page, reference_page


def test_errors_page_has_a_section_per_code() -> None:
    page = errors_page(Policy()).decode()
    for code in (*PROBLEM_TYPES, "processing_failed", "interrupted"):
        assert page.count(f'id="error-{code}"') == 1


def test_every_code_has_its_explanation() -> None:
    """A code added to the core without words for the page fails here, not at run time."""
    assert set(docs_pages._NEXT_STEP) == set(PROBLEM_TYPES)


def test_reference_page_uses_relative_addresses_only() -> None:
    """Relative links keep the pages working where a proxy mounts the service under a path."""
    page = reference_page().decode()
    assert "://" not in page
    assert f'src="docs/assets/redoc.standalone.js?v={docs_pages.REDOC_VERSION}"' in page
    assert 'spec-url="v1/openapi.json"' in page


@pytest.mark.parametrize(
    ("accept_encoding", "gzip"),
    [
        ("", False),
        ("identity", False),
        ("gzip", True),
        ("gzip, deflate, br", True),
        ("br;q=1.0, GZIP;q=0.5", True),
        ("x-gzip", True),
        ("*", True),
        ("gzip;q=0", False),
        ("gzip;q=0.000", False),
        ("gzip;q=nonsense", False),
        ("deflate, br", False),
    ],
)
def test_gzip_only_when_accepted(accept_encoding: str, gzip: bool) -> None:
    assert docs_pages._accepts_gzip(accept_encoding) is gzip


@pytest.mark.parametrize(
    ("if_none_match", "matches"),
    [
        ("", False),
        ('"abc"', True),
        ('W/"abc"', True),
        ('"x", "abc"', True),
        ("*", True),
        ('"abc-gzip"', False),
        ("abc", False),
    ],
)
def test_if_none_match(if_none_match: str, matches: bool) -> None:
    assert docs_pages._matches(if_none_match, '"abc"') is matches
