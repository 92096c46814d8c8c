"""Reading uploads: the header-only probe and the full decode to straight-alpha RGBA.

Only PNG, JPEG, GIF, BMP and WebP are accepted (contract 4.1). `probe` reads the header
alone, so a caller can refuse a size before anything is decoded. `decode` checks the
sizes itself before it decodes (`ImageLimits`; the engine may be called directly, from
the library or `printjob trace`), then turns every mode Pillow produces into the one
array the engine works on:

- EXIF orientation is applied, so a phone photo is upright;
- palette images keep their transparency; grey, grey+alpha and RGB gain an alpha channel;
- 16-bit grey is scaled to 8 bits (`v / 257`, rounded), not clipped;
- CMYK uses the embedded ICC profile when there is one, else the usual
  `(255 - c)(255 - k) / 255`; a CMYK JPEG without Adobe's marker is not inverted (Pillow
  assumes Adobe's inverted polarity for every CMYK JPEG);
- an animation gives its first frame.

Every failure is one of the engine's errors (`UnsupportedImage` or `ImageTooLarge`); a
truncated file is refused, never padded with grey.
"""

from __future__ import annotations

import io
import warnings
from typing import IO, Any

import attrs
import numpy as np
import numpy.typing as npt
from PIL import Image, ImageChops, ImageCms, ImageFile, ImageOps

from printjob_adapters.engine.errors import ImageTooLarge, UnsupportedImage
from printjob_adapters.engine.headers import check_structure
from printjob_adapters.engine.options import DEFAULT_LIMITS, ImageLimits

RGBA = npt.NDArray[np.uint8]

#: Pillow format names that may be uploaded (contract 4.1).
ALLOWED_FORMATS = frozenset({"PNG", "JPEG", "GIF", "BMP", "WEBP"})
#: Pillow names some JPEG files by a more specific format: a camera's multi-picture JPEG
#: (MPO) is a JPEG whose first picture is the photo.
_SAME_AS = {"MPO": "JPEG"}
#: Headers declaring more pixels than this are refused as decompression bombs before the
#: size rules are even looked at. Pillow warns above its own `MAX_IMAGE_PIXELS` (~89 MP)
#: and raises above twice that; `probe` turns both into `ImageTooLarge`.
BOMB_PIXELS = Image.MAX_IMAGE_PIXELS or 89_478_485

_NOT_AN_IMAGE = "The file is not an openable PNG, JPEG, GIF, BMP or WebP image"
#: EXIF orientations that swap width and height (rotated a quarter turn).
_QUARTER_TURNS = frozenset({5, 6, 7, 8})
_EXIF_IN_HEADER = frozenset({"JPEG", "MPO", "WEBP"})


@attrs.frozen
class ImageHeader:
    """What an image's header says: Pillow's format name (MPO counted as JPEG) and the
    upright size."""

    format: str
    width: int
    height: int


def probe(data: bytes | memoryview) -> ImageHeader:
    """The header's format and (upright) size, nothing decoded; no size rule applied
    beyond the decompression-bomb guard. `data` is read in place (a view of a mapped
    file stays one: only the header's pages are touched)."""
    with _open(data) as image:
        width, height = image.size
        # Only JPEG and WebP carry EXIF in their header; asking a PNG for it would make
        # Pillow read the whole file. The size rules do not depend on the turn anyway.
        if image.format in _EXIF_IN_HEADER and _orientation(image) in _QUARTER_TURNS:
            width, height = height, width
        return ImageHeader(format=_format(image), width=width, height=height)


def decode(data: bytes, limits: ImageLimits = DEFAULT_LIMITS) -> RGBA:
    """The image's first frame, upright, as a (height, width, 4) uint8 straight-alpha array."""
    image = _open(data)
    check_size(*image.size, limits)
    pixels = _load(image, in_place=True)
    if pixels is not None:
        if _orientation(image) == 1:
            return pixels
        # A turned PNG (rare; its EXIF may follow the pixels): decoded again the ordinary
        # way, then turned.
        image = _open(data)
        _load(image, in_place=False)
    image = _upright(image)
    return _to_rgba(image)


def _load(image: Image.Image, *, in_place: bool) -> RGBA | None:
    """Decode the first frame; with `in_place`, a plain PNG or JPEG (`_in_place_target`)
    straight into a new array, returned (None when Pillow decoded into memory of its own)."""
    try:
        image.seek(0)
        target = _in_place_target(image) if in_place else None
        image.load()
    except (ImageTooLarge, UnsupportedImage):
        raise
    except Exception as exc:
        raise UnsupportedImage(f"{_NOT_AN_IMAGE}: its image data is damaged or cut short.") from exc
    if target is None or image.im is not target[1]:
        return None
    pixels = target[0]
    if image.mode == "RGB":
        # The fourth byte of each pixel is Pillow's padding: opaque, set here whatever it is.
        words = pixels.view(np.uint32)
        np.bitwise_or(words, _OPAQUE, out=words)
    return pixels


#: The four-byte layout Pillow keeps each mode's pixels in, for the modes an image is
#: decoded straight into the array in: RGBA as it is, RGB with a fourth (padding) byte.
_IN_PLACE_LAYOUT = {"RGBA": "RGBA", "RGB": "RGBX"}
#: Formats decoded straight into the array (a multi-picture JPEG, MPO, is not).
_IN_PLACE_FORMATS = frozenset({"PNG", "JPEG"})
#: A pixel's alpha byte, as a 32-bit word of the array (whatever the byte order).
_OPAQUE = np.array([0, 0, 0, 255], dtype=np.uint8).view(np.uint32)[0]


def _raw_mode(args: object) -> object:
    """The raw mode of a tile's decoder arguments (a PNG gives it alone, a JPEG first)."""
    return args[0] if isinstance(args, tuple) and args else args


def _in_place_target(image: Image.Image) -> tuple[RGBA, Any] | None:
    """For a still, 8-bit RGB or RGBA PNG without a transparent colour, or an upright
    RGB JPEG: a new array and Pillow's image memory mapped over it, given to `image` to
    decode into. Its rows are the straight-alpha RGBA the engine works on (an RGB
    image's padding byte is made opaque after), so neither Pillow's conversion to RGBA
    nor the copy into an array runs: 0.1 ms of an RGBA and 0.7 ms of an RGB 512-px PNG,
    0.8 ms of a 512 x 384 JPEG, most of it the first touch of two megabytes of fresh
    memory. Every other image (palette, grey, 16-bit, a transparent colour, an
    animation, CMYK, a turned JPEG, another format) decodes as before; so does this one
    when Pillow would not decode into the given memory (`_load` checks it did). O(1)."""
    layout = _IN_PLACE_LAYOUT.get(image.mode)
    if (
        layout is None
        or not isinstance(image, ImageFile.ImageFile)
        or image.format not in _IN_PLACE_FORMATS
        or "transparency" in image.info
        or getattr(image, "is_animated", False)
        or len(image.tile) != 1
        or _raw_mode(image.tile[0][3]) != image.mode
    ):
        return None
    if image.format == "JPEG" and _orientation(image) != 1:
        return None  # a turned JPEG (its EXIF is in the header): decoded once, as before
    width, height = image.size
    pixels = np.empty((height, width, 4), dtype=np.uint8)
    try:
        memory = Image.frombuffer(layout, (width, height), pixels, "raw", layout, 0, 1).im
        image.im = memory
    except Exception:
        return None  # a Pillow that would not share its memory: decoded as before
    return pixels, memory


def check_size(width: int, height: int, limits: ImageLimits = DEFAULT_LIMITS) -> None:
    """Refuse an image over `limits.max_pixels`, with a side under `limits.min_side`, or a
    long side over `limits.max_aspect_ratio` times the short one. The wording is the job
    service's own (`printjob_core.services.check_image`), so a refusal reads the same
    whether it came from a submission or from the engine alone."""
    pixels = width * height
    if pixels > limits.max_pixels:
        raise ImageTooLarge(
            f"The image is {width}x{height} = {pixels:,} pixels; at most "
            f"{limits.max_pixels:,} pixels ({limits.max_pixels / 1e6:g} megapixels) are "
            "accepted. Scale it down and send it again."
        )
    short, long = sorted((width, height))
    if short < limits.min_side:
        raise UnsupportedImage(
            f"The image is {width}x{height}; each side must be at least {limits.min_side} pixels."
        )
    if long > limits.max_aspect_ratio * short:
        raise UnsupportedImage(
            f"The image is {width}x{height}; its long side may be at most "
            f"{limits.max_aspect_ratio} times its short side."
        )


class _ViewFile(io.RawIOBase):
    """A read-only file over a buffer, for Pillow to read a header from: `io.BytesIO`
    would first copy the whole buffer (30 MB for a header of a few KB)."""

    def __init__(self, data: memoryview) -> None:
        super().__init__()
        self._view = data.cast("B") if data.format != "B" else memoryview(data)
        self._at = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        size = max(0, min(len(target), len(self._view) - self._at))
        target[:size] = self._view[self._at : self._at + size]
        self._at += size
        return size

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._at, io.SEEK_END: len(self._view)}[whence]
        self._at = max(0, base + offset)
        return self._at

    def tell(self) -> int:
        return self._at

    def close(self) -> None:
        if not self.closed:
            self._view.release()  # this file's own view: the caller's stays usable
        super().close()


def _file_of(data: bytes | memoryview) -> IO[bytes]:
    if isinstance(data, memoryview):
        return io.BufferedReader(_ViewFile(data))
    return io.BytesIO(data)  # shares the bytes (copy on write): no copy


def _open(data: bytes | memoryview) -> Image.Image:
    """Open the header only, refusing bombs, padded headers and formats outside the
    contract."""
    check_structure(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(_file_of(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageTooLarge(
            "The image declares too many pixels to decode safely; "
            "at most 3 megapixels are accepted."
        ) from exc
    except Exception as exc:
        raise UnsupportedImage(f"{_NOT_AN_IMAGE}.") from exc
    if _format(image) not in ALLOWED_FORMATS:
        sent = image.format or "an unknown format"
        raise UnsupportedImage(f"{_NOT_AN_IMAGE}; this file is {sent}.")
    width, height = image.size
    if width * height > BOMB_PIXELS:
        raise ImageTooLarge(
            f"The image declares {width}x{height} pixels, too many to decode safely; "
            "at most 3 megapixels are accepted."
        )
    return image


def _format(image: Image.Image) -> str:
    """The contract's name for the image's format (Pillow's, with MPO counted as JPEG)."""
    name = image.format or ""
    return _SAME_AS.get(name, name)


def _orientation(image: Image.Image) -> int:
    try:
        return int(image.getexif().get(0x0112, 1))
    except Exception:
        return 1


def _upright(image: Image.Image) -> Image.Image:
    """Apply the EXIF orientation; a damaged EXIF block is ignored, not fatal."""
    if _orientation(image) == 1:
        return image
    try:
        return ImageOps.exif_transpose(image)
    except Exception:
        return image


def _to_rgba(image: Image.Image) -> RGBA:
    mode = image.mode
    if mode in ("I;16", "I;16L", "I;16B", "I;16N", "I", "F"):
        return _wide_grey_to_rgba(image)
    if mode == "CMYK":
        return _cmyk_to_rgba(image)
    if mode != "RGBA":
        image = image.convert("RGBA")
    return _pixels(image)


def _pixels(image: Image.Image) -> RGBA:
    """An RGBA image's pixels as a new writable (height, width, 4) array, copied row by
    row into the array's own memory: Pillow maps an image over the array
    (`Image.frombuffer` shares a buffer of its raw layout) and pastes into it. Asking
    the image for an array (`np.array(image)`) goes through `tobytes`, whose raw
    encoder costs ten times the copy (0.6 ms of a 512-px image). O(pixels)."""
    width, height = image.size
    pixels = np.empty((height, width, 4), dtype=np.uint8)
    try:
        shared = Image.frombuffer("RGBA", (width, height), pixels, "raw", "RGBA", 0, 1)
        shared.im.paste(image.im, (0, 0, width, height))
    except Exception:
        # A Pillow that would not share or paste: the plain, slower copy.
        return np.array(image, dtype=np.uint8)
    return pixels


def _wide_grey_to_rgba(image: Image.Image) -> RGBA:
    """16-bit (or 32-bit) grey scaled from 0..65535 to 0..255, with tRNS as alpha."""
    values = np.asarray(image)
    if image.mode == "F":
        grey = np.clip(np.rint(values), 0, 255).astype(np.uint8)
    else:
        wide = np.clip(values.astype(np.int64), 0, 65535)
        grey = ((wide * 255 + 32767) // 65535).astype(np.uint8)
    alpha = np.full(grey.shape, 255, dtype=np.uint8)
    transparent = image.info.get("transparency")
    if isinstance(transparent, int):
        alpha[values == transparent] = 0
    return np.dstack([grey, grey, grey, alpha])


def _cmyk_to_rgba(image: Image.Image) -> RGBA:
    icc = image.info.get("icc_profile")
    if _format(image) == "JPEG" and "adobe" not in image.info:
        # Pillow read it as Adobe's inverted CMYK; without the marker the data is plain.
        image = ImageChops.invert(image)
    if icc:
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            srgb = ImageCms.createProfile("sRGB")
            managed = ImageCms.profileToProfile(image, source, srgb, outputMode="RGB")
            if managed is not None:
                return np.array(managed.convert("RGBA"), dtype=np.uint8)
        except Exception:
            pass  # a broken profile falls back to the plain conversion below
    cmyk = np.asarray(image).astype(np.uint16)
    white = 255 - cmyk[..., 3:4]
    rgb = ((255 - cmyk[..., :3]) * white + 127) // 255
    alpha = np.full((*rgb.shape[:2], 1), 255, dtype=np.uint16)
    return np.concatenate([rgb, alpha], axis=2).astype(np.uint8)
