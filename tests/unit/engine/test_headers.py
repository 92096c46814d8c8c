"""The header budget: padded headers refused in a few steps, real ones passed to Pillow."""

from __future__ import annotations

import io
import struct

import pytest
from PIL import Image

from printjob_adapters import engine
from printjob_adapters.engine.decode import probe
from printjob_adapters.engine.headers import (
    MAX_GIF_SUB_BLOCKS,
    MAX_HEADER_PIECES,
    MAX_STRAY_BYTES,
    check_structure,
)


def encode(image: Image.Image, fmt: str, **params: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **params)
    return buffer.getvalue()


JPEG = encode(Image.new("RGB", (64, 64), (200, 30, 30)), "JPEG")
PNG = encode(Image.new("RGB", (64, 64), (200, 30, 30)), "PNG")
GIF = encode(Image.new("P", (64, 64), 1), "GIF")


def segment(marker: int, payload: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def chunk(kind: bytes, data: bytes) -> bytes:
    import zlib

    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def test_an_icc_profile_over_255_app2_markers_passes() -> None:
    icc = b"".join(
        segment(0xE2, b"ICC_PROFILE\x00" + bytes([i, 255]) + b"x" * 60000) for i in range(1, 256)
    )
    assert probe(JPEG[:2] + icc + JPEG[2:]).width == 64


@pytest.mark.parametrize("marker", [0xE1, 0xFE])
def test_jpeg_with_too_many_markers_is_refused(marker: int) -> None:
    padded = JPEG[:2] + segment(marker, b"") * (MAX_HEADER_PIECES + 1) + JPEG[2:]
    with pytest.raises(engine.UnsupportedImage, match="marker segments"):
        check_structure(padded)
    check_structure(JPEG[:2] + segment(marker, b"") * (MAX_HEADER_PIECES // 2) + JPEG[2:])


@pytest.mark.parametrize("stray", [b"\x00", b"\xff"])
def test_jpeg_with_stray_bytes_past_the_budget_is_refused(stray: bytes) -> None:
    with pytest.raises(engine.UnsupportedImage, match="stray bytes"):
        check_structure(JPEG[:2] + stray * (MAX_STRAY_BYTES * 4) + JPEG[2:])


def test_png_must_start_with_ihdr_and_keep_its_chunks_few() -> None:
    with pytest.raises(engine.UnsupportedImage, match="requires IHDR"):
        check_structure(PNG[:8] + chunk(b"prVt", b"") + PNG[8:])
    many = PNG[:33] + chunk(b"tEXt", b"k\x00v") * (MAX_HEADER_PIECES + 1) + PNG[33:]
    with pytest.raises(engine.UnsupportedImage, match="chunks"):
        check_structure(many)
    some = PNG[:33] + chunk(b"tEXt", b"k\x00v") * 50 + PNG[33:]
    assert probe(some).height == 64


def test_gif_comments_past_the_budget_are_refused() -> None:
    start = 13 + ((3 << ((GIF[10] & 0x07) + 1)) if GIF[10] & 0x80 else 0)
    blocks = b"\x21\xfe\x01x\x00" * (MAX_HEADER_PIECES + 1)
    with pytest.raises(engine.UnsupportedImage, match="extension blocks"):
        check_structure(GIF[:start] + blocks + GIF[start:])
    long = b"\x21\xfe" + b"\x01x" * (MAX_GIF_SUB_BLOCKS + 1) + b"\x00"
    with pytest.raises(engine.UnsupportedImage, match="sub-blocks"):
        check_structure(GIF[:start] + long + GIF[start:])
    assert probe(GIF[:start] + b"\x21\xfe\x05hello\x00" + GIF[start:]).width == 64


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "BMP", "WEBP"])
def test_ordinary_images_pass(fmt: str) -> None:
    data = encode(Image.new("RGB", (40, 30), (1, 2, 3)), fmt)
    check_structure(data)
    assert (probe(data).width, probe(data).height) == (40, 30)


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "GIF"])
def test_a_view_of_a_larger_buffer_is_read_in_place_as_bytes_are(fmt: str) -> None:
    data = {"JPEG": JPEG, "PNG": PNG, "GIF": GIF}[fmt]
    # The image in the middle of something larger, as a part of a spooled upload is.
    around = memoryview(b"--before--" + data + b"--after--")
    view = around[10 : 10 + len(data)]
    assert probe(view) == probe(data)
    view.release()
    around.release()  # nothing kept a view of it: releasing would raise BufferError


def test_a_padded_view_is_refused_as_padded_bytes_are() -> None:
    padded = JPEG[:2] + segment(0xE1, b"") * (MAX_HEADER_PIECES + 1) + JPEG[2:]
    with pytest.raises(engine.UnsupportedImage, match="marker segments"):
        check_structure(memoryview(padded))
    with pytest.raises(engine.UnsupportedImage, match="stray bytes"):
        check_structure(memoryview(JPEG[:2] + b"\x00" * (MAX_STRAY_BYTES * 4) + JPEG[2:]))
