"""The multipart/form-data parser of the submission body (contract 4.1)."""

from __future__ import annotations

import mmap
from pathlib import Path

import httpx
import pytest

from printjob_core.errors import InvalidParameter
from printjob_http.multipart import (
    MAX_PARTS,
    DelimiterScan,
    boundary_of,
    header_params,
    parse,
    split,
)


def encode(files: object = None, data: object = None) -> tuple[bytes, str]:
    request = httpx.Request("POST", "http://x/", files=files, data=data)
    return request.read(), request.headers["content-type"]


def test_fields_and_image_come_apart() -> None:
    image = b"\x89PNG\r\n\r\n--not-the-boundary\r\n\x00\xff"
    body, content_type = encode(
        files={"image": ("a.png", image, "image/png")}, data={"format": "svg", "colors": "4"}
    )
    form = parse(body, boundary_of(content_type))
    assert form.image == image
    assert form.image_filename == "a.png"
    assert form.fields == [("format", "svg"), ("colors", "4")]


def test_repeated_and_unknown_fields_are_handed_on_in_order() -> None:
    body, content_type = encode(
        files=[("format", (None, "svg")), ("format", (None, "pdf")), ("quality", (None, "high"))]
    )
    form = parse(body, boundary_of(content_type))
    assert form.fields == [("format", "svg"), ("format", "pdf"), ("quality", "high")]
    assert form.image is None


def test_image_as_text_is_a_field_the_core_refuses() -> None:
    body, content_type = encode(files={"image": (None, "abc")})
    assert parse(body, boundary_of(content_type)).fields == [("image", "abc")]


def test_two_images_are_refused() -> None:
    body, content_type = encode(
        files=[("image", ("a.png", b"1", "image/png")), ("image", ("b.png", b"2", "image/png"))]
    )
    with pytest.raises(InvalidParameter) as error:
        parse(body, boundary_of(content_type))
    assert error.value.param == "image"


def test_non_utf8_value_names_its_field() -> None:
    body = b'--b\r\nContent-Disposition: form-data; name="size"\r\n\r\n\xff\xfe\r\n--b--\r\n'
    with pytest.raises(InvalidParameter) as error:
        parse(body, b"b")
    assert error.value.param == "size"


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "",
        "application/json",
        "text/plain; boundary=abc",
        "multipart/form-data",
        "multipart/form-data; boundary=",
        "multipart/mixed; boundary=abc",
    ],
)
def test_only_multipart_form_data_with_a_boundary(content_type: str | None) -> None:
    with pytest.raises(InvalidParameter) as error:
        boundary_of(content_type)
    assert error.value.param == "image"


def test_boundary_may_be_quoted_and_type_any_case() -> None:
    assert boundary_of('Multipart/Form-Data; charset=utf-8; boundary="a b:c"') == b"a b:c"


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"garbage",
        b"--b\r\n",
        b'--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue',
        b"--b\r\n\r\nvalue\r\n--b--",
        b"--b\r\nContent-Type: text/plain\r\n\r\nvalue\r\n--b--",
        b"--b\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n--b--",
        b"--b\r\nno colon here\r\n\r\nvalue\r\n--b--",
        b"--bXYZ\r\n",
    ],
)
def test_malformed_bodies_are_400_naming_image(body: bytes) -> None:
    with pytest.raises(InvalidParameter) as error:
        parse(body, b"b")
    assert error.value.param == "image"


def test_preamble_and_epilogue_are_ignored() -> None:
    body = (
        b'preamble\r\n--b\r\nContent-Disposition: form-data; name="format"\r\n\r\nsvg\r\n'
        b"--b--\r\nepilogue"
    )
    assert parse(body, b"b").fields == [("format", "svg")]


def test_header_params() -> None:
    assert header_params('form-data; name="a;b"; filename="x\\"y.png"') == {
        "name": "a;b",
        "filename": 'x"y.png',
    }


def scanned(body: bytes, boundary: bytes, piece: int) -> DelimiterScan:
    scan = DelimiterScan(boundary)
    for start in range(0, len(body), piece):
        scan.feed(body[start : start + piece])
    scan.finish()
    return scan


@pytest.mark.parametrize("piece", [1, 2, 3, 7, 16, 1000])
def test_delimiters_cut_by_any_piece_boundary_are_found(piece: int) -> None:
    image = b"\x89PNG\r\n--not-the-boundary\r\n\r\n\xff" * 5
    body, content_type = encode(
        files={"image": ("a.png", image, "image/png")}, data={"format": "svg", "colors": "4"}
    )
    boundary = boundary_of(content_type)
    scan = scanned(body, boundary, piece)
    whole = scanned(body, boundary, len(body))
    assert scan.positions == whole.positions and len(scan.positions) == 4
    assert scan.closed and scan.size == len(body)
    form = split(body, scan)
    assert form.image == image
    assert form.fields == [("format", "svg"), ("colors", "4")]


def test_nothing_after_the_closing_delimiter_is_searched() -> None:
    body = b'--b\r\nContent-Disposition: form-data; name="format"\r\n\r\nsvg\r\n--b--\r\n'
    scan = DelimiterScan(b"b")
    scan.feed(body)
    scan.feed(b"\r\n--b\r\n" * 1000)  # an epilogue full of delimiters
    scan.finish()
    assert scan.positions == [0, body.index(b"--b--")]
    assert split(body, scan).fields == [("format", "svg")]


def test_a_body_cut_right_after_a_delimiter_is_refused() -> None:
    body = b'--b\r\nContent-Disposition: form-data; name="format"\r\n\r\nsvg\r\n--b'
    with pytest.raises(InvalidParameter) as error:
        split(body, scanned(body, b"b", 5))
    assert "other text" in error.value.detail


def test_more_parts_than_any_submission_has_are_refused() -> None:
    part = b'\r\n--b\r\nContent-Disposition: form-data; name="x"\r\n\r\n1'
    body = part[2:] + part * (MAX_PARTS + 5) + b"\r\n--b--\r\n"
    scan = scanned(body, b"b", 4096)
    assert len(scan.positions) == MAX_PARTS + 1  # it stopped looking
    with pytest.raises(InvalidParameter) as error:
        split(body, scan)
    assert error.value.param == "image" and f"more than {MAX_PARTS} parts" in error.value.detail


def test_the_image_of_a_mapped_body_is_a_view_not_a_copy(tmp_path: Path) -> None:
    image = bytes(range(256)) * 1000
    body, content_type = encode(files={"image": ("a.png", image, "image/png")})
    path = tmp_path / "spool"
    path.write_bytes(body)
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        form = split(m, scanned(body, boundary_of(content_type), 65536))
        assert isinstance(form.image, memoryview)
        assert form.image == image
        form.image.release()
