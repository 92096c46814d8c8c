"""Parsing the submission's fields (contract 4.1, section 8, design decision 1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from printjob_core.errors import InvalidParameter
from printjob_core.model import Background, JobOptions, OutputFormat, Size
from printjob_core.options import (
    check_fields,
    options_fingerprint_text,
    parse_idempotency_key,
    parse_options,
)

from .conftest import World


def parse(**fields: str) -> JobOptions:
    return parse_options(check_fields(fields.items()))


def refused(param: str, **fields: str) -> InvalidParameter:
    with pytest.raises(InvalidParameter) as info:
        parse(**fields)
    assert info.value.param == param
    assert info.value.code == "invalid_parameter" and info.value.status == 400
    return info.value


def test_defaults():
    assert parse(format="svg") == JobOptions(
        format=OutputFormat.SVG, size=None, colors=None, background=Background.KEEP, dpi=None
    )
    assert parse(format="svg").effective_dpi == 300
    assert parse(format="svg").size_text == "original"


def test_every_field():
    opts = parse(format="png", size="4500x5400", dpi="150", colors="12", background="remove")
    assert opts == JobOptions(OutputFormat.PNG, Size(4500, 5400), 12, Background.REMOVE, 150)
    assert opts.size_text == "4500x5400"


@pytest.mark.parametrize("fmt", ["svg", "pdf", "eps", "png"])
def test_every_format(fmt: str):
    assert parse(format=fmt).format.value == fmt


def test_format_missing_or_empty():
    detail = refused("format").detail
    assert "svg" in detail and "png" in detail
    refused("format", format="")
    refused("format", size="10x10")


@pytest.mark.parametrize("value", ["SVG", "tiff", "jpg", " svg", "svg ", "svg\n"])
def test_format_unknown(value: str):
    refused("format", format=value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("original", None),
        ("", None),
        ("1000x500", Size(1000, 500)),
        ("1000X500", Size(1000, 500)),
        ("1x1", Size(1, 1)),
        ("20000x2000", Size(20000, 2000)),
        ("2000x20000", Size(2000, 20000)),
        ("000100x000200", Size(100, 200)),
        ("8000x5000", Size(8000, 5000)),  # exactly 40 MP
    ],
)
def test_size_accepted(value: str, expected: Size | None):
    assert parse(format="svg", size=value).size == expected


@pytest.mark.parametrize(
    "value",
    [
        "Original",
        "100",
        "100x",
        "x100",
        "100*100",
        "100 x 100",
        " 100x100",
        "100x100 ",
        "100x100\n",
        "1e3x100",
        "-1x100",
        "100.0x100",
        "１００x１００",
        "1234567x1",
        "0x100",
        "100x0",
        "20001x1",
        "1x20001",
        "999999x999999",
        "8001x5000",  # over 40 MP
        "20000x20000",
    ],
)
def test_size_refused(value: str):
    refused("size", format="svg", size=value)


def test_size_over_40_megapixels_says_so():
    assert "40 megapixels" in refused("size", format="svg", size="10000x4001").detail


@pytest.mark.parametrize(("value", "expected"), [("1", 1), ("10000", 10000), ("300", 300)])
def test_dpi_accepted_with_size(value: str, expected: int):
    opts = parse(format="pdf", size="100x100", dpi=value)
    assert opts.dpi == expected and opts.effective_dpi == expected


def test_dpi_without_size_is_refused_as_dpi():
    detail = refused("dpi", format="pdf", dpi="300").detail
    assert "size" in detail
    refused("dpi", format="pdf", dpi="300", size="original")
    refused("dpi", format="pdf", dpi="300", size="")


def test_empty_dpi_means_not_sent():
    assert parse(format="pdf", dpi="").dpi is None


ODD_NUMBERS = [
    "0",
    "-1",
    "1e3",
    "５",
    "１０",
    "5.0",
    " 5",
    "5 ",
    "+5",
    "0x10",
    "five",
    "٥",
    "1_000",
]


@pytest.mark.parametrize("value", [*ODD_NUMBERS, "10001", "99999999999999999999"])
def test_dpi_refused(value: str):
    refused("dpi", format="pdf", size="100x100", dpi=value)


@pytest.mark.parametrize(("value", "expected"), [("1", 1), ("1000", 1000), ("", None), ("07", 7)])
def test_colors_accepted(value: str, expected: int | None):
    assert parse(format="svg", colors=value).colors == expected


@pytest.mark.parametrize("value", [*ODD_NUMBERS, "1001", "auto"])
def test_colors_refused(value: str):
    detail = refused("colors", format="svg", colors=value).detail
    assert "1" in detail and "1000" in detail


@pytest.mark.parametrize(
    ("value", "expected"),
    [("keep", Background.KEEP), ("remove", Background.REMOVE), ("", Background.KEEP)],
)
def test_background_accepted(value: str, expected: Background):
    assert parse(format="svg", background=value).background is expected


@pytest.mark.parametrize("value", ["Keep", "REMOVE", "transparent", "true", " keep"])
def test_background_refused(value: str):
    refused("background", format="svg", background=value)


@pytest.mark.parametrize("name", ["colour", "Format", "quality", "", "image_url", "dpi "])
def test_unknown_field_param_is_the_field_name(name: str):
    with pytest.raises(InvalidParameter) as info:
        check_fields([("format", "svg"), (name, "1")])
    assert info.value.param == name


@pytest.mark.parametrize("name", ["format", "size", "dpi", "colors", "background"])
def test_repeated_field_is_refused(name: str):
    between = ("size", "1x1") if name != "size" else ("format", "svg")
    with pytest.raises(InvalidParameter) as info:
        check_fields([(name, "a"), between, (name, "a")])
    assert info.value.param == name
    assert "once" in info.value.detail


def test_image_sent_as_text_is_refused_with_param_image():
    with pytest.raises(InvalidParameter) as info:
        check_fields([("format", "svg"), ("image", "data:image/png;base64,AAAA")])
    assert info.value.param == "image"


def test_check_fields_keeps_known_fields():
    assert check_fields([("format", "svg"), ("size", "1x1")]) == {"format": "svg", "size": "1x1"}
    assert check_fields([]) == {}


def test_normalised_options_have_equal_fingerprint_text():
    a = parse(format="svg", size="1000X500", colors="", background="")
    b = parse(format="svg", size="1000x500", background="keep")
    assert a == b
    assert options_fingerprint_text(a) == options_fingerprint_text(b)
    assert options_fingerprint_text(parse(format="svg")) != options_fingerprint_text(
        parse(format="svg", colors="5")
    )


@given(
    fmt=st.sampled_from(["svg", "pdf", "eps", "png"]),
    size=st.one_of(st.none(), st.tuples(st.integers(1, 6000), st.integers(1, 6000))),
    colors=st.one_of(st.none(), st.integers(1, 1000)),
    background=st.sampled_from(["keep", "remove"]),
)
def test_fingerprint_text_is_equal_exactly_when_options_are(fmt, size, colors, background):
    fields = {"format": fmt, "background": background}
    if size is not None:
        fields["size"] = f"{size[0]}x{size[1]}"
    if colors is not None:
        fields["colors"] = str(colors)
    opts = parse(**fields)
    again = parse(**{**fields, **({"size": fields["size"].upper()} if size else {})})
    assert options_fingerprint_text(opts) == options_fingerprint_text(again)
    changed = parse(**{**fields, "background": "keep" if background == "remove" else "remove"})
    assert options_fingerprint_text(opts) != options_fingerprint_text(changed)


@given(
    st.dictionaries(
        st.sampled_from(["format", "size", "dpi", "colors", "background"]),
        st.one_of(
            st.text(max_size=12),
            st.from_regex(r"[0-9]{1,6}[xX][0-9]{1,6}", fullmatch=True),
            st.integers(-5, 30_000).map(str),
            st.sampled_from(["svg", "pdf", "eps", "png", "keep", "remove", "original"]),
        ),
    )
)
def test_any_fields_parse_within_bounds_or_are_refused_naming_a_field(fields):
    try:
        opts = parse_options(fields)
    except InvalidParameter as exc:
        assert exc.param in ("format", "size", "dpi", "colors", "background")
        assert exc.param == "format" or exc.param in fields
        return
    assert opts.format.value == fields["format"]
    if opts.size is not None:
        assert 1 <= opts.size.width <= 20_000 and 1 <= opts.size.height <= 20_000
        assert opts.size.width * opts.size.height <= 40_000_000
    if opts.dpi is not None:
        assert 1 <= opts.dpi <= 10_000 and opts.size is not None
    if opts.colors is not None:
        assert 1 <= opts.colors <= 1000
        assert fields["colors"].isascii() and fields["colors"].isdigit()


# -- Idempotency-Key header --


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        (None, None),
        ("abc", "abc"),
        ('"abc"', "abc"),
        ("a" * 255, "a" * 255),
        ('"' + "a" * 255 + '"', "a" * 255),
        ("123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"),
        ("A.b_c:d-9", "A.b_c:d-9"),
        ("x", "x"),
    ],
)
def test_idempotency_key_accepted(raw: str | None, key: str | None):
    assert parse_idempotency_key(raw) == key


@pytest.mark.parametrize(
    "raw",
    [
        "",
        '"',
        '""',
        "a" * 256,
        '"' + "a" * 256 + '"',
        "has space",
        " abc",
        "abc ",
        "ключ",
        "café",
        "a/b",
        "a+b",
        "a\nb",
        "abc\n",
        "'abc'",
        "a=b",
    ],
)
def test_idempotency_key_refused(raw: str):
    with pytest.raises(InvalidParameter) as info:
        parse_idempotency_key(raw)
    assert info.value.param == "Idempotency-Key"


def test_bad_idempotency_key_refuses_the_submission(world: World):
    account = world.account()
    with pytest.raises(InvalidParameter) as info:
        world.submit(account, key="a" * 256)
    assert info.value.param == "Idempotency-Key"
    assert world.store.state.jobs == {}
    assert world.submit(account, key="a" * 255).replayed is False
