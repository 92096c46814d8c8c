"""The API process does bounded work per request (issue 15, item 3), against the REAL server.

Uploads whose headers are padded to the 30 MB limit with millions of markers, comments or
chunks are refused by the header check without Pillow stepping through them (it took
seconds and a gigabyte each before); slow and silent clients are cut off by the server's
connection timeouts, set small here so the tests run in seconds.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.contract.support import Client, assert_problem
from tests.reliability import images
from tests.reliability.http import file_part, post_form, text_part

FMT = text_part(b"format", b"svg")

PADDED: dict[str, Callable[[], bytes]] = {
    "jpeg-app1-markers": lambda: images.padded_jpeg(0xE1),
    "jpeg-com-markers": lambda: images.padded_jpeg(0xFE),
    "gif-comment-blocks": images.gif_with_comments,
    "png-chunks-before-ihdr": lambda: images.png_with_chunks(before_ihdr=True),
    "png-chunks-before-idat": lambda: images.png_with_chunks(before_ihdr=False),
}


@pytest.mark.parametrize("name", list(PADDED))
def test_a_header_padded_to_30_mb_is_refused_without_reading_it_all(
    hostile_client: Client, name: str
) -> None:
    data = PADDED[name]()
    assert len(data) > 29 * 1024 * 1024
    # The client's read timeout bounds the check: Pillow alone spent 5 to 22 s on these.
    timeout = httpx.Timeout(60.0, read=5.0)
    with httpx.Client(
        base_url=hostile_client.base_url, headers=hostile_client.headers, timeout=timeout
    ) as http:
        answer = post_form(http, file_part(data, content_type=b"image/jpeg"), FMT)
    body = assert_problem(answer, 422, "unsupported_image", "image")
    assert "header" in body["detail"] or "IHDR" in body["detail"], body
    # The server answers the next request at once, the upload forgotten.
    assert hostile_client.get("/v1/account").status_code == 200
