"""Hostile and unusual images, made on the fly (no files in the repository)."""

from __future__ import annotations

import io
import random
import struct
import zlib

from PIL import Image, ImageDraw

from tests.contract.support import png


def encode(image: Image.Image, fmt: str, **params: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **params)
    return buffer.getvalue()


def picture(width: int = 96, height: int = 64, mode: str = "RGB") -> Image.Image:
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle((width // 4, height // 4, 3 * width // 4, 3 * height // 4), fill=(30, 90, 200))
    draw.ellipse((2, 2, width // 3, height // 3), fill=(220, 30, 30))
    return image.convert(mode) if mode != "RGB" else image


def png_chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png_header_only(width: int, height: int, with_idat: bytes | None = None) -> bytes:
    """A PNG whose IHDR declares width x height, with `with_idat` as its only data."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    out = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr)
    if with_idat is not None:
        out += png_chunk(b"IDAT", with_idat) + png_chunk(b"IEND", b"")
    return out


def bomb_png(width: int = 60000, height: int = 60000) -> bytes:
    """A few hundred bytes declaring a huge image (a decompression bomb)."""
    row = b"\x00" + b"\x00" * 3 * 64
    return png_header_only(width, height, zlib.compress(row * 4, 9))


def random_bytes(size: int = 4096, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(size)


def corrupt(data: bytes, start: int, seed: int = 7, count: int = 64) -> bytes:
    """The bytes with `count` random bytes overwritten from `start` on."""
    rng = random.Random(seed)
    out = bytearray(data)
    for _ in range(count):
        out[rng.randrange(start, len(out))] = rng.randrange(256)
    return bytes(out)


def gif_frames(frames: int = 1000, size: int = 32) -> bytes:
    images = []
    for i in range(frames):
        frame = Image.new("P", (size, size), color=0)
        frame.putpixel((i % size, (i // size) % size), 1 + i % 200)
        images.append(frame)
    buffer = io.BytesIO()
    images[0].save(buffer, "GIF", save_all=True, append_images=images[1:], duration=10, loop=0)
    return buffer.getvalue()


def animated_webp(frames: int = 5) -> bytes:
    images = [picture().rotate(i * 10) for i in range(frames)]
    buffer = io.BytesIO()
    images[0].save(buffer, "WEBP", save_all=True, append_images=images[1:], duration=50)
    return buffer.getvalue()


def cmyk_jpeg() -> bytes:
    return encode(picture(mode="CMYK"), "JPEG", quality=90)


def png16() -> bytes:
    grey = Image.new("I;16", (80, 60), 1000)
    ImageDraw.Draw(grey).rectangle((20, 15, 60, 45), fill=60000)
    return encode(grey, "PNG")


def palette_png_with_transparency() -> bytes:
    image = picture().convert("P", palette=Image.Palette.ADAPTIVE, colors=8)
    return encode(image, "PNG", transparency=0)


def exif_rotated_jpeg() -> bytes:
    image = picture(120, 40)
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 CW to display
    return encode(image, "JPEG", exif=exif.tobytes())


def grey_alpha_png() -> bytes:
    return encode(picture(mode="LA"), "PNG")


def bmp() -> bytes:
    return encode(picture(), "BMP")


def valid(fmt: str) -> bytes:
    if fmt == "PNG":
        return png(96, 64)
    return encode(picture(), fmt)


SVG = (
    b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="64" height="64">'
    b'<rect width="64" height="64" fill="red"/></svg>'
)
PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]"
    b"/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
)


# -- headers padded to the upload limit (issue 15: the API's image check must stay cheap) --

#: Just under the contract's 30 MB request limit, leaving room for the multipart framing.
PADDED_SIZE = 30 * 1024 * 1024 - 4096


def padded_jpeg(marker: int = 0xE1, size: int = PADDED_SIZE) -> bytes:
    """A valid 64x64 JPEG with empty marker segments (APP1: 0xE1, COM: 0xFE) up to `size`."""
    jpeg = encode(picture(64, 64), "JPEG")
    segment = bytes([0xFF, marker, 0, 2])
    return jpeg[:2] + segment * ((size - len(jpeg)) // len(segment)) + jpeg[2:]


def gif_with_comments(size: int = PADDED_SIZE) -> bytes:
    """A valid 64x64 GIF with one-byte comment blocks before its frame, up to `size`."""
    gif = encode(picture(64, 64, "P"), "GIF")
    flags = gif[10]
    start = 13 + ((3 << ((flags & 0x07) + 1)) if flags & 0x80 else 0)
    comment = b"\x21\xfe\x01x\x00"
    return gif[:start] + comment * ((size - len(gif)) // len(comment)) + gif[start:]


def png_with_chunks(before_ihdr: bool, size: int = PADDED_SIZE) -> bytes:
    """A valid 64x64 PNG with empty private chunks before IHDR (or between IHDR and IDAT)."""
    data = encode(picture(64, 64), "PNG")
    chunk = png_chunk(b"prVt", b"")
    cut = 8 if before_ihdr else 8 + 25  # after the signature, or after IHDR
    return data[:cut] + chunk * ((size - len(data)) // len(chunk)) + data[cut:]
