"""Parsing and validating the submission's form fields (contract 4.1, section 8).

Every refusal is an `InvalidParameter` whose `param` names the field and whose detail
says which values it takes. Numbers are ASCII digits only: `5.0`, ` 5`, `1e3`, `-1` and
full-width digits are refused rather than guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from printjob_core.errors import InvalidParameter
from printjob_core.model import Background, JobOptions, OutputFormat, Size

#: The text form fields a submission may carry, besides the `image` file part.
OPTION_FIELDS = ("format", "size", "dpi", "colors", "background")
IMAGE_FIELD = "image"

MAX_SIDE = 20_000
MAX_CANVAS_PIXELS = 40_000_000
DPI_RANGE = (1, 10_000)
COLORS_RANGE = (1, 1000)
IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"

_SIZE = re.compile(r"([0-9]{1,6})[xX]([0-9]{1,6})")
_DIGITS = re.compile(r"[0-9]{1,9}")
_IDEMPOTENCY_KEY = re.compile(r'"?([A-Za-z0-9._:-]{1,255})"?')


def check_fields(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Turn the request's text fields into a mapping, refusing unknown and repeated fields.

    The `image` field is not an option: sent as text instead of a file it is refused here.
    """
    fields: dict[str, str] = {}
    for name, value in pairs:
        if name == IMAGE_FIELD:
            raise InvalidParameter(
                "image must be sent as a file part (with a filename), not as a text field.",
                param=IMAGE_FIELD,
            )
        if name not in OPTION_FIELDS:
            raise InvalidParameter(
                f"Unknown field {_quote(name)}. The fields are image, "
                + ", ".join(OPTION_FIELDS)
                + ".",
                param=name,
            )
        if name in fields:
            raise InvalidParameter(f"{name} was sent more than once; send it once.", param=name)
        fields[name] = value
    return fields


def parse_options(fields: Mapping[str, str]) -> JobOptions:
    """Validate the option fields and return them normalised (defaults filled in).

    An empty optional field means "not sent" (the contract's `colors` default is empty).
    """
    fmt = _parse_format(fields.get("format"))
    size = _parse_size(fields.get("size", ""))
    dpi = _parse_int(fields.get("dpi", ""), "dpi", DPI_RANGE)
    if dpi is not None and size is None:
        raise InvalidParameter(
            "dpi applies only with an explicit size such as 4500x5400; send size as well, "
            "or leave dpi out (files state 300 dpi).",
            param="dpi",
        )
    colors = _parse_int(fields.get("colors", ""), "colors", COLORS_RANGE)
    background = _parse_background(fields.get("background", ""))
    return JobOptions(format=fmt, size=size, colors=colors, background=background, dpi=dpi)


def parse_idempotency_key(raw: str | None) -> str | None:
    """The normalised key (surrounding quotes dropped, design decision 3), or None."""
    if raw is None:
        return None
    match = _IDEMPOTENCY_KEY.fullmatch(raw)
    if match is None:
        raise InvalidParameter(
            "Idempotency-Key must be 1 to 255 letters, digits or . _ : - "
            "(optionally in double quotes); a UUID works.",
            param=IDEMPOTENCY_KEY_HEADER,
        )
    return match.group(1)


def options_fingerprint_text(options: JobOptions) -> str:
    """A canonical text of the options, equal exactly when the normalised options are."""
    return "|".join(
        (
            options.format.value,
            options.size_text,
            "auto" if options.colors is None else str(options.colors),
            options.background.value,
            str(options.effective_dpi),
        )
    )


def _parse_format(value: str | None) -> OutputFormat:
    allowed = ", ".join(f.value for f in OutputFormat)
    if value is None or value == "":
        raise InvalidParameter(f"format is required: one of {allowed}.", param="format")
    try:
        return OutputFormat(value)
    except ValueError:
        raise InvalidParameter(
            f"format {_quote(value)} is not offered: use one of {allowed}.", param="format"
        ) from None


def _parse_size(value: str) -> Size | None:
    if value in ("", "original"):
        return None
    match = _SIZE.fullmatch(value)
    if match is None:
        raise InvalidParameter(
            f"size {_quote(value)} is not valid: send original or <width>x<height> in pixels, "
            "e.g. 4500x5400.",
            param="size",
        )
    width, height = int(match.group(1)), int(match.group(2))
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
        raise InvalidParameter(
            f"size {width}x{height} is out of range: each side must be 1 to {MAX_SIDE} pixels.",
            param="size",
        )
    if width * height > MAX_CANVAS_PIXELS:
        raise InvalidParameter(
            f"size {width}x{height} is {width * height} pixels; at most 40 megapixels "
            f"({MAX_CANVAS_PIXELS}) are allowed.",
            param="size",
        )
    return Size(width, height)


def _parse_int(value: str, name: str, bounds: tuple[int, int]) -> int | None:
    if value == "":
        return None
    low, high = bounds
    if _DIGITS.fullmatch(value) is None or not (low <= int(value) <= high):
        raise InvalidParameter(
            f"{name} {_quote(value)} is not valid: send a whole number from {low} to {high} "
            "in plain digits.",
            param=name,
        )
    return int(value)


def _parse_background(value: str) -> Background:
    if value == "":
        return Background.KEEP
    try:
        return Background(value)
    except ValueError:
        raise InvalidParameter(
            f"background {_quote(value)} is not valid: use keep or remove.", param="background"
        ) from None


def _quote(value: str, limit: int = 40) -> str:
    """Echo a client's value safely and briefly in a detail."""
    shown = value if len(value) <= limit else value[:limit] + "…"
    return repr(shown)
