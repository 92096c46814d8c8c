"""The header's structure walked within a budget, before Pillow is let near it.

Pillow reads everything before an image's pixel data in Python, one marker, chunk or block
at a time, and keeps most of it: a valid 64 x 64 JPEG padded to 30 MB with millions of
empty APP1 markers costs it 20 s of CPU and 1 GB of memory, and many COM markers, GIF
comment blocks or PNG chunks before the first IDAT do much the same. An upload is checked
in the API process, so every request must cost little whatever it holds.

`check_structure` walks the same structure Pillow will, using only `bytes.find` and
slicing (C speed, no copies of the payloads), and refuses a header with more pieces, more
stray bytes or more bytes in all than any real image has. Real files have tens of header
pieces: an ICC profile split over APP2 markers is at most 255 of them. What the walk does
not understand it leaves to Pillow, which then refuses the file as before; the walk's
only job is the budget. Cost: O(pieces) steps, at most `MAX_HEADER_PIECES`.
"""

from __future__ import annotations

import re
import struct

from printjob_adapters.engine.errors import UnsupportedImage

#: Markers, chunks or blocks an image may have before its pixel data.
MAX_HEADER_PIECES = 1024
#: Fill or junk bytes between JPEG markers (each costs Pillow a step of its own).
MAX_STRAY_BYTES = 1024
#: Bytes before the pixel data: room for the largest ICC profile (255 x 64 KiB) and more.
MAX_HEADER_BYTES = 20 * 1024 * 1024
#: GIF data sub-blocks (of at most 255 bytes) before the first frame: about 2 MB of
#: comments and application data, where real files have a few.
MAX_GIF_SUB_BLOCKS = 8192

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_GIF_SIGNATURES = (b"GIF87a", b"GIF89a")
_JPEG_SOI = b"\xff\xd8"
#: JPEG markers that stand alone, with no length after them (TEM, RST0-7, SOI, EOI).
_STANDALONE = frozenset({0x01, *range(0xD0, 0xDA)})
_JPEG_SOS = 0xDA
#: The next marker's 0xFF: a pattern, since a `memoryview` has no `find` (`re` searches
#: any buffer in place, at C speed).
_MARKER = re.compile(b"\xff")
_REDO = "Save it again from an image editor (which drops the padding) and send it again."


def check_structure(data: bytes | memoryview) -> None:
    """Refuse (`UnsupportedImage`) an image whose header is padded past the budget.

    `data` is read in place (a view of a mapped file included). Formats other than JPEG,
    PNG and GIF have fixed-size headers (BMP) or are parsed in C (WebP), and pass
    unchecked."""
    start = bytes(data[:8])
    if start.startswith(_JPEG_SOI):
        _check_jpeg(data)
    elif start.startswith(_PNG_SIGNATURE):
        _check_png(data)
    elif start.startswith(_GIF_SIGNATURES):
        _check_gif(data)


def _too_many(what: str, limit: int) -> UnsupportedImage:
    return UnsupportedImage(
        f"The image's header has more than {limit:,} {what} before its picture data; real "
        f"images have a few dozen. {_REDO}"
    )


def _too_long(where: int) -> UnsupportedImage:
    return UnsupportedImage(
        f"The image's header runs past {MAX_HEADER_BYTES // (1024 * 1024)} MiB (its picture "
        f"data starts after byte {where:,}); real images need far less. {_REDO}"
    )


def _check_jpeg(data: bytes | memoryview) -> None:
    """Markers from SOI to SOS, the way Pillow's JPEG reader steps through them."""
    position, pieces, stray, size = 2, 0, 0, len(data)
    while position < size:
        if position > MAX_HEADER_BYTES:
            raise _too_long(position)
        if data[position] != 0xFF:
            # Pillow skips junk one byte at a time: count the run, found at C speed.
            found = _MARKER.search(data, position)
            end = size if found is None else found.start()
            stray += end - position
            position = end
        else:
            after = position + 1
            # A run of 0xFF is fill before a marker; every one of them is a step too.
            while after < size and data[after] == 0xFF and stray <= MAX_STRAY_BYTES:
                after += 1
                stray += 1
            if after >= size:
                return
            marker = data[after]
            position = after + 1
            pieces += 1
            if marker == _JPEG_SOS:
                return
            if marker not in _STANDALONE and marker != 0x00:
                if position + 2 > size:
                    return
                (length,) = struct.unpack_from(">H", data, position)
                position += max(length, 2)
        if stray > MAX_STRAY_BYTES:
            raise _too_many("stray bytes between markers", MAX_STRAY_BYTES)
        if pieces > MAX_HEADER_PIECES:
            raise _too_many("marker segments", MAX_HEADER_PIECES)


def _check_png(data: bytes | memoryview) -> None:
    """Chunks from the signature to the first IDAT; IHDR must come first (PNG 5.6)."""
    position, pieces, size = len(_PNG_SIGNATURE), 0, len(data)
    while position + 8 <= size:
        length, kind = struct.unpack_from(">I4s", data, position)
        if pieces == 0 and kind != b"IHDR":
            raise UnsupportedImage(
                "The file is not an openable PNG, JPEG, GIF, BMP or WebP image: its first PNG "
                f"chunk is {kind.decode('latin-1')!r}, where PNG requires IHDR."
            )
        if kind == b"IDAT":
            return
        pieces += 1
        if pieces > MAX_HEADER_PIECES:
            raise _too_many("chunks", MAX_HEADER_PIECES)
        position += 12 + length
        if position > MAX_HEADER_BYTES:
            raise _too_long(position)


def _check_gif(data: bytes | memoryview) -> None:
    """Blocks from the screen descriptor to the first image descriptor."""
    size = len(data)
    if size < 13:
        return
    flags = data[10]
    position = 13 + (3 << ((flags & 0x07) + 1) if flags & 0x80 else 0)
    pieces = sub_blocks = 0
    while position < size:
        introducer = data[position]
        if introducer != 0x21:  # an image (0x2C), the trailer (0x3B), or junk for Pillow
            return
        pieces += 1
        if pieces > MAX_HEADER_PIECES:
            raise _too_many("extension blocks", MAX_HEADER_PIECES)
        position += 2  # introducer and label
        while position < size:
            length = data[position]
            position += 1 + length
            if length == 0:
                break
            sub_blocks += 1
            if sub_blocks > MAX_GIF_SUB_BLOCKS:
                raise _too_many("data sub-blocks", MAX_GIF_SUB_BLOCKS)
        if position > MAX_HEADER_BYTES:
            raise _too_long(position)


__all__ = [
    "MAX_GIF_SUB_BLOCKS",
    "MAX_HEADER_BYTES",
    "MAX_HEADER_PIECES",
    "MAX_STRAY_BYTES",
    "check_structure",
]
