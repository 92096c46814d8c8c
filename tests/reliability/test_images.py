"""Hostile and unusual images that pass the header check (issue part 3).

Decisions:

* A file whose header is valid but whose pixel data is damaged or cut short passes the
  submission check (only the header is read, contract 4.1) and is accepted (202); the job
  then fails with `processing_failed` and costs nothing. The contract's `unsupported_image`
  is for files that are not openable at all.
* An animated GIF or WebP is accepted and converted from its first frame; the header check
  never iterates frames, so a 1000-frame GIF costs no more to accept than a still one.
* The image part's declared content type and file name are ignored: the bytes decide.
  A file name such as `../../etc/passwd` is never used as a path.
"""

from __future__ import annotations

import io
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from tests.contract.support import Client, ServerProcess, png
from tests.reliability import images
from tests.reliability.conftest import new_account
from tests.reliability.http import file_part, post_form, text_part

UNUSUAL = {
    "cmyk-jpeg": (images.cmyk_jpeg, "svg"),
    "16-bit-png": (images.png16, "svg"),
    "palette-png-transparency": (images.palette_png_with_transparency, "png"),
    "exif-rotated-jpeg": (images.exif_rotated_jpeg, "svg"),
    "animated-webp": (images.animated_webp, "pdf"),
    "gif-1000-frames": (images.gif_frames, "eps"),
    "grey-alpha-png": (images.grey_alpha_png, "svg"),
    "bmp": (images.bmp, "svg"),
}
DAMAGED = {
    "png-cut-in-idat": images.valid("PNG")[:60],
    "jpeg-cut-in-half": images.valid("JPEG")[: len(images.valid("JPEG")) // 2],
    "gif-cut-in-half": images.valid("GIF")[: len(images.valid("GIF")) // 2],
    "bmp-cut-in-half": images.valid("BMP")[: len(images.valid("BMP")) // 2],
}
PART_TYPES = {
    "text-plain": b"text/plain",
    "octet-stream": b"application/octet-stream",
    "jpeg-for-a-png": b"image/jpeg",
    "svg-type": b"image/svg+xml",
    "no-type": None,
}
TRAVERSAL = b"../../../../../../tmp/printjob-evil-passwd"


def opens(data: bytes, fmt: str) -> tuple[int, int] | None:
    """Check the file is well-formed for its format; the raster size for a PNG."""
    if fmt == "svg":
        root = ET.fromstring(data)
        assert root.tag.endswith("svg")
        return None
    if fmt == "pdf":
        assert data.startswith(b"%PDF-") and b"%%EOF" in data[-64:]
        return None
    if fmt == "eps":
        assert data.startswith(b"%!PS-Adobe") and b"%%EOF" in data[-64:]
        return None
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        return image.size


@pytest.fixture(scope="module")
def submitted(hostile_server: ServerProcess) -> Iterator[dict[str, tuple[Client, dict]]]:
    """Every job of this module, submitted at once so the worker has them all queued.

    One account per group: each stays within its 10 unfinished jobs.
    """
    clients = [new_account(hostile_server, credits=100, active_jobs_max=10) for _ in range(3)]
    jobs: dict[str, tuple[Client, dict]] = {}

    def submit(client: Client, name: str, *parts: bytes) -> None:
        response = post_form(client, *parts)
        assert response.status_code == 202, (name, response.text)
        jobs[name] = (client, response.json())

    for name, (make, fmt) in UNUSUAL.items():
        extra = [text_part(b"size", b"400x300")] if fmt == "png" else []
        submit(clients[0], name, file_part(make()), text_part(b"format", fmt.encode()), *extra)
    for name, data in DAMAGED.items():
        submit(clients[1], name, file_part(data), text_part(b"format", b"svg"))
    for name, ctype in PART_TYPES.items():
        part = file_part(png(), content_type=ctype)
        submit(clients[2], f"type:{name}", part, text_part(b"format", b"svg"))
    part = file_part(png(), filename=TRAVERSAL)
    submit(clients[2], "traversal", part, text_part(b"format", b"svg"))
    yield jobs
    for client in clients:
        client.close()


Jobs = dict[str, tuple[Client, dict]]


def wait(jobs: Jobs, name: str) -> tuple[Client, dict]:
    client, job = jobs[name]
    return client, client.wait(job["id"], timeout=240)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(UNUSUAL))
def test_unusual_image_is_converted(submitted: Jobs, name: str) -> None:
    client, job = wait(submitted, name)
    assert job["status"] == "succeeded", job
    fmt = UNUSUAL[name][1]
    download = client.get(f"/v1/jobs/{job['id']}/result")
    assert download.status_code == 200
    assert len(download.content) == job["result"]["bytes"]
    size = opens(download.content, fmt)
    if fmt == "png":
        assert size == (400, 300)
    if name == "exif-rotated-jpeg":  # 120x40 stored, turned upright to 40x120
        assert job["result"]["height"] > job["result"]["width"], job["result"]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DAMAGED))
def test_damaged_pixels_fail_the_job_at_no_cost(submitted: Jobs, name: str) -> None:
    client, job = wait(submitted, name)
    assert job["status"] == "failed", job
    assert job["error"]["code"] == "processing_failed"
    assert job["credits_charged"] == 0 and job["result"] is None
    assert client.get(f"/v1/jobs/{job['id']}/result").status_code == 409


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PART_TYPES))
def test_part_content_type_is_ignored(submitted: Jobs, name: str) -> None:
    assert wait(submitted, f"type:{name}")[1]["status"] == "succeeded"


@pytest.mark.slow
def test_file_name_is_never_a_path(submitted: Jobs, hostile_server: ServerProcess) -> None:
    _client, job = wait(submitted, "traversal")
    assert job["status"] == "succeeded"
    assert not Path("/tmp/printjob-evil-passwd").exists()
    roots = [hostile_server.data_dir.parent, Path("/tmp")]
    for root in roots:
        for directory, _dirs, files in os.walk(root):
            for name in files:
                # The marker is specific enough that no other file carries it.
                assert "printjob-evil" not in name, os.path.join(directory, name)


@pytest.mark.slow
def test_credits_add_up_after_the_lot(submitted: Jobs) -> None:
    succeeded: dict[str, int] = {}
    clients: dict[str, Client] = {}
    for name in submitted:
        client, job = wait(submitted, name)
        clients[client.account_id] = client
        succeeded.setdefault(client.account_id, 0)
        succeeded[client.account_id] += job["status"] == "succeeded"
    for account_id, client in clients.items():
        account = client.account_view()
        assert account["credits_held"] == 0 and account["active_jobs"] == 0
        assert account["credits_balance"] == 100 - succeeded[account_id]
        assert account["credits_available"] == account["credits_balance"]
