"""The image rules of contract 4.1 and section 8, judged from the header alone.

A module of their own, below the services: `printjob trace` applies the same rules as
`POST /v1/jobs`, and must not load the service layer to do so (its start-up is paid on
every file a print shop converts).
"""

from __future__ import annotations

from printjob_core.errors import ImageTooLarge, UnsupportedImage
from printjob_core.limits import Policy
from printjob_core.options import IMAGE_FIELD
from printjob_core.ports import ImageInfo


def check_image(info: ImageInfo, policy: Policy) -> None:
    """The image rules of contract 4.1 and section 8, from the header alone."""
    pixels = info.width * info.height
    if pixels > policy.max_upload_pixels:
        raise ImageTooLarge(
            f"The image is {info.width}x{info.height} = {pixels:,} pixels; at most "
            f"{policy.max_upload_pixels:,} pixels (3 megapixels) are accepted. Scale it down "
            "and send it again.",
            param=IMAGE_FIELD,
        )
    short, long = sorted((info.width, info.height))
    if short < policy.min_side:
        raise UnsupportedImage(
            f"The image is {info.width}x{info.height}; each side must be at least "
            f"{policy.min_side} pixels.",
            param=IMAGE_FIELD,
        )
    if long > policy.max_aspect_ratio * short:
        raise UnsupportedImage(
            f"The image is {info.width}x{info.height}; its long side may be at most "
            f"{policy.max_aspect_ratio} times its short side.",
            param=IMAGE_FIELD,
        )
