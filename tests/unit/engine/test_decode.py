"""Decoding uploads to straight-alpha RGBA, and the header-only probe.

Every input is made with Pillow in the test: CMYK JPEGs (Adobe and plain), 16-bit PNGs,
palette PNGs with transparency, EXIF-rotated JPEGs, animations, grey, BMP.
"""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageOps

from printjob_adapters.engine import errors as engine
from printjob_adapters.engine.decode import decode
from printjob_adapters.tracing import PillowImageProbe
from printjob_core.errors import ImageTooLarge, UnsupportedImage


def encode(image: Image.Image, fmt: str, **params: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **params)
    return buffer.getvalue()


def halves(mode: str, left: object, right: object, size: tuple[int, int] = (40, 20)) -> Image.Image:
    """An image whose left half is `left` and right half is `right`."""
    image = Image.new(mode, size, left)  # type: ignore[arg-type]
    image.paste(right, (size[0] // 2, 0, size[0], size[1]))  # type: ignore[arg-type]
    return image


def close(pixel: np.ndarray, expected: tuple[int, ...], tolerance: int = 6) -> bool:
    return bool(np.all(np.abs(pixel.astype(int) - np.array(expected)) <= tolerance))


# -- what comes out --------------------------------------------------------------------------


def test_rgba_png_round_trips_exactly() -> None:
    rng = np.random.default_rng(1)
    pixels = rng.integers(0, 256, (30, 50, 4), dtype=np.uint8)
    out = decode(encode(Image.fromarray(pixels), "PNG"))

    assert out.dtype == np.uint8 and out.shape == (30, 50, 4)
    assert np.array_equal(out, pixels)


def test_rgb_jpeg_gains_opaque_alpha() -> None:
    out = decode(encode(halves("RGB", (255, 0, 0), (0, 0, 255)), "JPEG", quality=95))
    assert out.shape == (20, 40, 4)
    assert close(out[10, 5], (255, 0, 0, 255))
    assert close(out[10, 35], (0, 0, 255, 255))


def test_adobe_cmyk_jpeg_converts_to_rgb() -> None:
    # Pillow writes CMYK JPEGs the way Photoshop does: inverted, with Adobe's marker.
    data = encode(halves("CMYK", (0, 255, 255, 0), (0, 0, 0, 128)), "JPEG", quality=95)
    assert b"Adobe" in data
    out = decode(data)
    assert close(out[10, 5], (255, 0, 0, 255))
    assert close(out[10, 35], (127, 127, 127, 255))


def test_plain_cmyk_jpeg_without_adobe_marker_is_not_inverted() -> None:
    # Store the inverse so the file holds plain CMYK, then drop the Adobe APP14 segment.
    inverse = Image.eval(halves("CMYK", (0, 255, 255, 0), (255, 0, 0, 0)), lambda v: 255 - v)
    data = _without_segment(encode(inverse, "JPEG", quality=95), 0xEE)
    assert b"Adobe" not in data
    out = decode(data)
    assert close(out[10, 5], (255, 0, 0, 255))
    assert close(out[10, 35], (0, 255, 255, 255))


def test_cmyk_with_a_broken_icc_profile_falls_back_to_the_plain_formula() -> None:
    data = encode(halves("CMYK", (0, 255, 255, 0), (0, 0, 0, 0)), "JPEG", icc_profile=b"junk")
    out = decode(data)
    assert close(out[10, 5], (255, 0, 0, 255))
    assert close(out[10, 35], (255, 255, 255, 255))


CMYK_PROFILE = Path("/usr/share/color/icc/ghostscript/default_cmyk.icc")


def test_cmyk_with_an_icc_profile_is_colour_managed() -> None:
    image = halves("CMYK", (0, 255, 255, 0), (0, 0, 0, 0))
    data = encode(image, "JPEG", quality=95, icc_profile=CMYK_PROFILE.read_bytes())
    out = decode(data)
    red, white = out[10, 5].astype(int), out[10, 35].astype(int)
    # Printing inks are duller than the screen's primaries: a managed red is not pure red.
    assert red[0] > 200 and red[1] < 90 and red[2] < 90 and red[3] == 255
    assert tuple(red[:3]) != (255, 0, 0)
    assert (white[:3] > 240).all()


def test_16_bit_grey_png_is_scaled_not_clipped() -> None:
    values = np.array([[0, 257, 32896, 65535]], dtype=np.uint16).repeat(16, axis=0)
    values = values.repeat(4, axis=1)  # 16 x 16
    data = encode(Image.fromarray(values), "PNG")
    assert Image.open(io.BytesIO(data)).mode.startswith("I")
    out = decode(data)

    assert out[0, ::4, 0].tolist() == [0, 1, 128, 255]
    assert (out[..., 0] == out[..., 1]).all() and (out[..., 3] == 255).all()


def test_16_bit_rgba_png_keeps_colour_and_alpha() -> None:
    # A 16-bit RGBA PNG built by hand (Pillow writes 8-bit RGBA only).
    row = struct.pack(">4H", 65535, 0, 32896, 32896) * 16
    out = decode(_png(16, 16, bit_depth=16, colour_type=6, rows=[row] * 16))
    assert close(out[3, 3], (255, 0, 128, 128), tolerance=1)


def test_palette_png_keeps_its_transparency() -> None:
    image = halves("P", 0, 1)
    image.putpalette([255, 255, 255, 200, 0, 0] + [0] * 762)
    out = decode(encode(image, "PNG", transparency=0))

    assert out[10, 5, 3] == 0
    assert tuple(out[10, 35]) == (200, 0, 0, 255)


def test_colour_key_transparency_in_rgb_grey_and_16_bit_png() -> None:
    rgb = decode(encode(halves("RGB", (1, 2, 3), (200, 0, 0)), "PNG", transparency=(1, 2, 3)))
    assert rgb[10, 5, 3] == 0 and tuple(rgb[10, 35]) == (200, 0, 0, 255)

    grey = decode(encode(halves("L", 7, 200), "PNG", transparency=7))
    assert grey[10, 5, 3] == 0 and grey[10, 35, 3] == 255

    wide = np.full((16, 40), 1000, dtype=np.uint16)
    wide[:, 20:] = 60000
    out = decode(encode(Image.fromarray(wide), "PNG", transparency=1000))
    assert tuple(out[5, 5]) == (4, 4, 4, 0)
    assert tuple(out[5, 30]) == (233, 233, 233, 255)


def test_grey_and_grey_alpha() -> None:
    grey = decode(encode(halves("L", 0, 200), "PNG"))
    assert tuple(grey[10, 35]) == (200, 200, 200, 255)

    grey_alpha = decode(encode(halves("LA", (10, 0), (90, 128)), "PNG"))
    assert tuple(grey_alpha[10, 5]) == (10, 10, 10, 0)
    assert tuple(grey_alpha[10, 35]) == (90, 90, 90, 128)


def test_one_bit_bmp() -> None:
    out = decode(encode(halves("1", 0, 1), "BMP"))
    assert tuple(out[10, 5]) == (0, 0, 0, 255)
    assert tuple(out[10, 35]) == (255, 255, 255, 255)


def test_bmp_and_gif() -> None:
    colours = halves("RGB", (255, 0, 0), (0, 255, 0))
    assert tuple(decode(encode(colours, "BMP"))[10, 35]) == (0, 255, 0, 255)
    assert tuple(decode(encode(colours, "GIF"))[10, 5]) == (255, 0, 0, 255)


def test_exif_orientation_6_is_applied() -> None:
    # Stored 40 x 20, left half red; orientation 6 means "turn a quarter clockwise to view".
    exif = Image.Exif()
    exif[0x0112] = 6
    data = encode(halves("RGB", (255, 0, 0), (0, 0, 255)), "JPEG", quality=95, exif=exif)
    out = decode(data)

    assert out.shape == (40, 20, 4)  # width and height swapped
    assert close(out[5, 10], (255, 0, 0, 255))  # the left half is now on top
    assert close(out[35, 10], (0, 0, 255, 255))
    assert PillowImageProbe().probe(data).width == 20


def _reference(data: bytes) -> np.ndarray:
    """Pillow's own way: decode, turn upright, convert to RGBA, copy into an array."""
    with Image.open(io.BytesIO(data)) as opened:
        upright = ImageOps.exif_transpose(opened)
        return np.array(upright.convert("RGBA"), dtype=np.uint8)


@pytest.mark.parametrize("mode", ["RGB", "RGBA"])
@pytest.mark.parametrize(
    ("width", "height", "params"),
    [
        (50, 30, {}),
        (33, 17, {"optimize": True}),
        (61, 45, {"interlace": 1}),
        (40, 20, {"transparency": (10, 20, 30)}),
        (40, 20, {"orientation": 6}),
        (40, 20, {"orientation": 3}),
    ],
)
@pytest.mark.parametrize("seed", [3, 4])
def test_rgb_and_rgba_pngs_decode_as_pillows_rgba(
    mode: str, width: int, height: int, params: dict[str, object], seed: int
) -> None:
    # Plain 8-bit RGB and RGBA PNGs are decoded straight into the array: every pixel as
    # Pillow's decode, turn and conversion give it, alpha opaque for RGB, every kind of
    # PNG around them (interlaced, a transparent colour, EXIF-turned) as before.
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (height, width, 4), dtype=np.uint8)
    pixels[: height // 3, : width // 3, :3] = (10, 20, 30)
    image = Image.fromarray(pixels, "RGBA").convert(mode)
    options = dict(params)
    if "orientation" in options:
        exif = Image.Exif()
        exif[0x0112] = options.pop("orientation")
        options["exif"] = exif
    if "transparency" in options and mode == "RGBA":
        options.pop("transparency")
    data = encode(image, "PNG", **options)
    out = decode(data)

    assert out.flags.writeable and out.flags.c_contiguous
    assert np.array_equal(out, _reference(data))
    if mode == "RGB" and "transparency" not in options:
        assert (out[..., 3] == 255).all()


@pytest.mark.parametrize("mode", ["RGB", "L", "CMYK"])
@pytest.mark.parametrize(
    "params",
    [{}, {"progressive": True}, {"subsampling": 0}, {"orientation": 6}, {"orientation": 8}],
)
def test_jpegs_decode_as_pillows_rgba(mode: str, params: dict[str, object]) -> None:
    # An upright RGB JPEG is decoded straight into the array; grey, CMYK and turned
    # JPEGs as before: every pixel as Pillow's decode, turn and conversion give it.
    rng = np.random.default_rng(6)
    pixels = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    image = Image.fromarray(pixels, "RGB").convert(mode)
    options = dict(params)
    if "orientation" in options:
        exif = Image.Exif()
        exif[0x0112] = options.pop("orientation")
        options["exif"] = exif
    data = encode(image, "JPEG", quality=90, **options)
    out = decode(data)

    expected = _reference(data)
    if mode == "CMYK":
        assert out.shape == expected.shape  # its own conversion (tested above)
    else:
        assert np.array_equal(out, expected)
    assert (out[..., 3] == 255).all()


def test_truncated_rgba_png_is_unsupported_not_padded() -> None:
    rng = np.random.default_rng(5)
    data = encode(Image.fromarray(rng.integers(0, 256, (200, 200, 4), dtype=np.uint8)), "PNG")
    with pytest.raises(engine.UnsupportedImage, match="damaged or cut short"):
        decode(data[: len(data) // 2])
    jpeg = encode(Image.fromarray(rng.integers(0, 256, (200, 200, 3), dtype=np.uint8)), "JPEG")
    with pytest.raises(engine.UnsupportedImage):
        decode(jpeg[: len(jpeg) // 3])


@pytest.mark.parametrize("fmt", ["GIF", "WEBP"])
def test_animation_gives_its_first_frame(fmt: str) -> None:
    frames = [Image.new("RGB", (32, 32), c) for c in ((255, 0, 0), (0, 0, 255), (0, 255, 0))]
    extra = {"lossless": True} if fmt == "WEBP" else {}
    data = encode(frames[0], fmt, save_all=True, append_images=frames[1:], duration=100, **extra)
    assert getattr(Image.open(io.BytesIO(data)), "n_frames", 1) == 3
    assert close(decode(data)[16, 16], (255, 0, 0, 255), tolerance=2)


def test_multi_picture_jpeg_is_a_jpeg() -> None:
    first, second = Image.new("RGB", (32, 32), (255, 0, 0)), Image.new("RGB", (32, 32), "blue")
    data = encode(first, "MPO", save_all=True, append_images=[second], quality=95)
    assert Image.open(io.BytesIO(data)).format == "MPO"

    assert PillowImageProbe().probe(data).format == "JPEG"
    assert close(decode(data)[16, 16], (255, 0, 0, 255))


def test_webp_with_alpha() -> None:
    image = halves("RGBA", (255, 0, 0, 255), (0, 0, 0, 0))
    out = decode(encode(image, "WEBP", lossless=True))
    assert tuple(out[10, 5]) == (255, 0, 0, 255)
    assert out[10, 35, 3] == 0


# -- what is refused -------------------------------------------------------------------------


def test_over_3_megapixels_is_too_large() -> None:
    data = encode(Image.new("L", (2000, 1501)), "PNG")
    with pytest.raises(engine.ImageTooLarge):
        decode(data)


@pytest.mark.parametrize("size", [(15, 100), (100, 15), (400, 19)])
def test_small_sides_and_long_strips_are_unsupported(size: tuple[int, int]) -> None:
    with pytest.raises(engine.UnsupportedImage):
        decode(encode(Image.new("L", size), "PNG"))


def test_truncated_image_is_unsupported_not_padded() -> None:
    rng = np.random.default_rng(2)
    data = encode(Image.fromarray(rng.integers(0, 256, (200, 200, 3), dtype=np.uint8)), "PNG")
    with pytest.raises(engine.UnsupportedImage, match="damaged or cut short"):
        decode(data[: len(data) // 2])
    jpeg = encode(Image.fromarray(rng.integers(0, 256, (200, 200, 3), dtype=np.uint8)), "JPEG")
    with pytest.raises(engine.UnsupportedImage):
        decode(jpeg[: len(jpeg) // 2])


@pytest.mark.parametrize("data", [b"", b"hello", b"\x89PNG\r\n\x1a\n" + b"\0" * 40])
def test_not_an_image(data: bytes) -> None:
    with pytest.raises(
        engine.UnsupportedImage, match="not an openable PNG, JPEG, GIF, BMP or WebP"
    ):
        decode(data)
    with pytest.raises(UnsupportedImage):
        PillowImageProbe().probe(data)


@pytest.mark.parametrize("fmt", ["TIFF", "PPM", "ICO"])
def test_other_formats_are_named_and_refused(fmt: str) -> None:
    data = encode(Image.new("RGB", (32, 32)), fmt)
    with pytest.raises(UnsupportedImage, match=fmt):
        PillowImageProbe().probe(data)
    with pytest.raises(engine.UnsupportedImage):
        decode(data)


def test_decompression_bomb_is_too_large() -> None:
    bomb = _png(50_000, 50_000, bit_depth=1, colour_type=0, rows=[])
    with pytest.raises(ImageTooLarge):
        PillowImageProbe().probe(bomb)
    with pytest.raises(engine.ImageTooLarge):
        decode(bomb)


def test_between_pillows_warning_and_error_limits_is_too_large() -> None:
    side = int((Image.MAX_IMAGE_PIXELS or 0) ** 0.5) + 100  # over 1x, under 2x
    with pytest.raises(ImageTooLarge):
        PillowImageProbe().probe(_png(side, side, bit_depth=1, colour_type=0, rows=[]))


# -- the probe -------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "BMP", "WEBP"])
def test_probe_reports_pillow_format_and_size(fmt: str) -> None:
    info = PillowImageProbe().probe(encode(Image.new("RGB", (123, 45)), fmt))
    assert (info.format, info.width, info.height) == (fmt, 123, 45)


def test_probe_reads_only_the_header() -> None:
    # Size rules are the core's: the probe reports a big image, and a cut-off one.
    big = _png(3000, 3000, bit_depth=8, colour_type=2, rows=[])
    info = PillowImageProbe().probe(big)
    assert (info.format, info.width, info.height) == ("PNG", 3000, 3000)


# -- helpers ---------------------------------------------------------------------------------


def _png(width: int, height: int, *, bit_depth: int, colour_type: int, rows: list[bytes]) -> bytes:
    """A PNG written chunk by chunk, so that headers can declare anything."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0, 0, 0)
    data = zlib.compress(b"".join(b"\0" + row for row in rows))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


def _without_segment(jpeg: bytes, marker: int) -> bytes:
    """The JPEG without its APPn segments of one kind (e.g. 0xEE, Adobe's APP14)."""
    out, i = bytearray(jpeg[:2]), 2
    while i < len(jpeg):
        kind = jpeg[i + 1]
        if kind == 0xDA:  # start of scan: the rest is entropy-coded data
            out += jpeg[i:]
            break
        length = struct.unpack(">H", jpeg[i + 2 : i + 4])[0]
        if kind != marker:
            out += jpeg[i : i + 2 + length]
        i += 2 + length
    return bytes(out)
