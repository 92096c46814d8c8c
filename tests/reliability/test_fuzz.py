"""Fuzzing (issue part 3): the form fields against the live server, the image check in-process.

Both runs are bounded and derandomised (the same examples every run), so they pass or fail
reliably; a failure prints the example that broke.
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from printjob_adapters.engine import errors as engine
from printjob_adapters.engine.decode import decode
from printjob_adapters.tracing import PillowImageProbe
from printjob_core.errors import ImageTooLarge, UnsupportedImage
from printjob_core.limits import Policy
from printjob_core.services import check_image
from tests.contract.support import Client, ServerProcess, png
from tests.reliability import images
from tests.reliability.conftest import new_account
from tests.reliability.http import file_part, post_form, text_part

KNOWN = ["format", "size", "dpi", "colors", "background", "image"]
VALUES = ["svg", "pdf", "eps", "png", "original", "100x100", "300", "4", "keep", "remove", ""]

field_names = st.one_of(
    st.sampled_from(KNOWN),
    st.text(st.characters(blacklist_characters='"\r\n'), min_size=0, max_size=12),
)
field_values = st.one_of(
    st.sampled_from(VALUES).map(str.encode),
    st.text(max_size=40).map(lambda t: t.replace("\r\n", " ").encode("utf-8")),
    st.binary(max_size=40).filter(lambda b: b"\r\n--" not in b),
)
forms = st.lists(st.tuples(field_names, field_values), max_size=6)
idempotency_keys = st.one_of(
    st.none(), st.text(st.characters(max_codepoint=255), max_size=30).map(str.encode)
)


@pytest.fixture(scope="module")
def fuzz_client(hostile_server: ServerProcess) -> Iterator[Client]:
    with new_account(hostile_server, credits=1000, active_jobs_max=3) as client:
        yield client


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(form=forms, key=idempotency_keys, with_image=st.booleans())
def test_random_form_fields_get_202_or_a_4xx_problem(
    fuzz_client: Client, form: list[tuple[str, bytes]], key: bytes | None, with_image: bool
) -> None:
    parts = [file_part(png())] if with_image else []
    parts += [text_part(name.encode("utf-8"), value) for name, value in form]
    headers: dict[str, str | bytes] = {}
    if key is not None and key == key.strip() and all(31 < b != 127 for b in key):
        headers["Idempotency-Key"] = key  # what a client library can send at all
    response = post_form(fuzz_client, *parts, headers=headers)
    assert response.status_code < 500, response.text
    if response.status_code == 202:
        job = response.json()
        assert job["status"] == "queued"
        # Keep the account under its active-jobs limit for the next examples.
        fuzz_client.post(f"/v1/jobs/{job['id']}/cancel")
        return
    assert 400 <= response.status_code < 500
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["status"] == response.status_code and problem["code"], problem
    if problem["code"] == "invalid_parameter":
        assert isinstance(problem.get("param"), str), problem  # "" for a nameless field


SEEDS = {
    "PNG": images.valid("PNG"),
    "JPEG": images.valid("JPEG"),
    "GIF": images.valid("GIF"),
    "BMP": images.valid("BMP"),
    "WEBP": images.valid("WEBP"),
    "CMYK": images.cmyk_jpeg(),
    "PNG16": images.png16(),
    "ANIM": images.animated_webp(3),
}


@st.composite
def mutated_images(draw: st.DrawFn) -> bytes:
    seed = draw(st.sampled_from(sorted(SEEDS)))
    data = bytearray(SEEDS[seed])
    how = draw(st.sampled_from(["flip", "cut", "splice", "header", "random"]))
    rng = random.Random(draw(st.integers(0, 2**32)))
    if how == "random":
        return rng.randbytes(draw(st.integers(0, 512)))
    if how == "cut":
        return bytes(data[: draw(st.integers(0, len(data)))])
    if how == "splice":
        at = draw(st.integers(0, len(data)))
        return bytes(data[:at] + rng.randbytes(draw(st.integers(1, 64))) + data[at:])
    span = 40 if how == "header" else len(data)
    for _ in range(draw(st.integers(1, 16))):
        data[rng.randrange(min(span, len(data)))] = rng.randrange(256)
    return bytes(data)


@pytest.mark.timeout(300)
@settings(max_examples=400, deadline=None, derandomize=True)
@given(data=mutated_images())
def test_image_check_raises_only_image_errors(data: bytes) -> None:
    """PillowImageProbe + check_image on random and mutated bytes: a verdict, nothing else."""
    try:
        check_image(PillowImageProbe().probe(data), Policy())
    except (UnsupportedImage, ImageTooLarge) as error:
        assert error.param == "image"


@pytest.mark.timeout(300)
@settings(max_examples=150, deadline=None, derandomize=True)
@given(data=mutated_images())
def test_decode_raises_only_image_errors(data: bytes) -> None:
    """What passes the header check decodes or fails as an image error (processing_failed)."""
    try:
        check_image(PillowImageProbe().probe(data), Policy())
    except (UnsupportedImage, ImageTooLarge):
        return
    try:
        rgba = decode(data)
    except (engine.UnsupportedImage, engine.ImageTooLarge):
        return
    assert rgba.ndim == 3 and rgba.shape[2] == 4


def test_header_check_does_not_iterate_frames() -> None:
    """A 1000-frame GIF's probe reads the header only: Pillow's frame pointer never moves."""
    data = images.gif_frames(1000)
    opened: list[Image.Image] = []
    original = Image.open

    def spy(fp: object, *args: object, **kwargs: object) -> Image.Image:
        image = original(fp, *args, **kwargs)  # type: ignore[arg-type]
        opened.append(image)
        return image

    Image.open = spy  # type: ignore[assignment]
    try:
        info = PillowImageProbe().probe(data)
    finally:
        Image.open = original  # type: ignore[assignment]
    assert (info.format, info.width, info.height) == ("GIF", 32, 32)
    assert opened and all(image.tell() == 0 for image in opened)
    assert not any(getattr(image, "_n_frames", None) for image in opened)
    with Image.open(io.BytesIO(data)) as image:
        assert image.n_frames == 1000  # the file really has them
