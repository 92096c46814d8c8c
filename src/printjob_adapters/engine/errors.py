"""Every error the engine raises; each has a `detail` fit to show the person who sent
the image, and the original exception (if any) as its `__cause__`."""

from __future__ import annotations


class EngineError(Exception):
    """Base of the engine's errors, so a caller can catch them all at once."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class UnsupportedImage(EngineError):
    """The bytes are not a PNG, JPEG, GIF, BMP or WebP image that can be read whole, or
    its sides are out of bounds: the image itself must change, retrying cannot help."""


class ImageTooLarge(EngineError):
    """The image has more pixels than the engine accepts (or declares so many that
    decoding it would be a decompression bomb): it must be scaled down first."""


class TracingFailed(EngineError):
    """A stage failed on an image that could be read (a bug or running out of memory);
    the detail names the stage, not internals."""


class Cancelled(EngineError):
    """The caller's cancel check answered true between two units of work; no file."""
