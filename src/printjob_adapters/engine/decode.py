"""Reading uploads: the header-only probe and the full decode to straight-alpha RGBA.

Only PNG, JPEG, GIF, BMP and WebP are accepted (contract 4.1). `PillowImageProbe` reads
the header alone, so the core can refuse a size before anything is decoded. `decode`
repeats the size checks before it decodes (defence in depth: the engine may be called
directly, from the library or `printjob trace`), then turns every mode Pillow produces
into the one array the engine works on:

- EXIF orientation is applied, so a phone photo is upright;
- palette images keep their transparency; grey, grey+alpha and RGB gain an alpha channel;
- 16-bit grey is scaled to 8 bits (`v / 257`, rounded), not clipped;
- CMYK uses the embedded ICC profile when there is one, else the usual
  `(255 - c)(255 - k) / 255`; a CMYK JPEG without Adobe's marker is not inverted (Pillow
  assumes Adobe's inverted polarity for every CMYK JPEG);
- an animation gives its first frame.

Every failure is a typed error (`UnsupportedImage` or `ImageTooLarge`); a truncated file is
refused, never padded with grey.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
from PIL import Image, ImageChops, ImageCms, ImageOps

from printjob_core.errors import ImageTooLarge, UnsupportedImage
from printjob_core.limits import Policy
from printjob_core.options import IMAGE_FIELD
from printjob_core.ports import ImageInfo
from printjob_core.services import check_image

#: Pillow format names that may be uploaded (contract 4.1).
ALLOWED_FORMATS = frozenset({"PNG", "JPEG", "GIF", "BMP", "WEBP"})
#: Pillow names some JPEG files by a more specific format: a camera's multi-picture JPEG
#: (MPO) is a JPEG whose first picture is the photo.
_SAME_AS = {"MPO": "JPEG"}
#: The contract's image limits, checked again before decoding.
_POLICY = Policy()
#: Headers declaring more pixels than this are refused as decompression bombs before the
#: size rules are even looked at. Pillow warns above its own `MAX_IMAGE_PIXELS` (~89 MP)
#: and raises above twice that; the probe turns both into `ImageTooLarge`.
BOMB_PIXELS = Image.MAX_IMAGE_PIXELS or 89_478_485

_NOT_AN_IMAGE = "The file is not an openable PNG, JPEG, GIF, BMP or WebP image"
#: EXIF orientations that swap width and height (rotated a quarter turn).
_QUARTER_TURNS = frozenset({5, 6, 7, 8})
_EXIF_IN_HEADER = frozenset({"JPEG", "MPO", "WEBP"})


class PillowImageProbe:
    """The `ImageProbe` port: format and size from the header, nothing decoded."""

    def probe(self, data: bytes) -> ImageInfo:
        image = _open(data)
        width, height = image.size
        # Only JPEG and WebP carry EXIF in their header; asking a PNG for it would make
        # Pillow read the whole file. The size rules do not depend on the turn anyway.
        if image.format in _EXIF_IN_HEADER and _orientation(image) in _QUARTER_TURNS:
            width, height = height, width
        return ImageInfo(format=_format(image), width=width, height=height)


def probe(data: bytes) -> ImageInfo:
    """The header's format and (upright) size; see `PillowImageProbe`."""
    return PillowImageProbe().probe(data)


def decode(data: bytes) -> np.ndarray:
    """The image's first frame, upright, as a (height, width, 4) uint8 straight-alpha array."""
    image = _open(data)
    check_size(*image.size)
    try:
        image.seek(0)
        image.load()
    except (ImageTooLarge, UnsupportedImage):
        raise
    except Exception as exc:
        raise UnsupportedImage(
            f"{_NOT_AN_IMAGE}: its image data is damaged or cut short.", param=IMAGE_FIELD
        ) from exc
    image = _upright(image)
    return _to_rgba(image)


def check_size(width: int, height: int) -> None:
    """Refuse what the contract refuses (the core's rules): over 3 MP, a side under 16 px,
    a long side over 20 times the short one."""
    check_image(ImageInfo(format="", width=width, height=height), _POLICY)


def _open(data: bytes) -> Image.Image:
    """Open the header only, refusing bombs and formats outside the contract."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageTooLarge(
            "The image declares too many pixels to decode safely; "
            "at most 3 megapixels are accepted.",
            param=IMAGE_FIELD,
        ) from exc
    except Exception as exc:
        raise UnsupportedImage(f"{_NOT_AN_IMAGE}.", param=IMAGE_FIELD) from exc
    if _format(image) not in ALLOWED_FORMATS:
        sent = image.format or "an unknown format"
        raise UnsupportedImage(f"{_NOT_AN_IMAGE}; this file is {sent}.", param=IMAGE_FIELD)
    width, height = image.size
    if width * height > BOMB_PIXELS:
        raise ImageTooLarge(
            f"The image declares {width}x{height} pixels, too many to decode safely; "
            "at most 3 megapixels are accepted.",
            param=IMAGE_FIELD,
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


def _to_rgba(image: Image.Image) -> np.ndarray:
    mode = image.mode
    if mode in ("I;16", "I;16L", "I;16B", "I;16N", "I", "F"):
        return _wide_grey_to_rgba(image)
    if mode == "CMYK":
        return _cmyk_to_rgba(image)
    if mode != "RGBA":
        image = image.convert("RGBA")
    return np.array(image, dtype=np.uint8)


def _wide_grey_to_rgba(image: Image.Image) -> np.ndarray:
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


def _cmyk_to_rgba(image: Image.Image) -> np.ndarray:
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
