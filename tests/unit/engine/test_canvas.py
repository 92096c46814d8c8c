"""Design decision 11: where the design goes on the canvas, and the file's physical size."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from printjob_adapters.engine.canvas import Placement, fit, place
from printjob_adapters.engine.options import OutputFormat, Size
from printjob_adapters.engine.options import TraceOptions as JobOptions


def test_explicit_size_is_the_exact_canvas_with_the_design_fitted_and_centred() -> None:
    options = JobOptions(format=OutputFormat.SVG, size=Size(1000, 1000))
    placement = place(200, 100, options)

    assert (placement.canvas_width, placement.canvas_height) == (1000, 1000)
    assert placement.scale == 5
    assert (placement.offset_x, placement.offset_y) == (0, 250)


def test_explicit_size_may_shrink_the_design() -> None:
    placement = place(2000, 1000, JobOptions(format=OutputFormat.PDF, size=Size(500, 500)))
    assert placement.scale == 0.25
    assert (placement.offset_x, placement.offset_y) == (0, 125)


def test_png_original_is_the_print_canvas_at_300_dpi() -> None:
    placement = place(1000, 1000, JobOptions(format=OutputFormat.PNG))

    assert (placement.canvas_width, placement.canvas_height) == (4500, 5400)
    assert placement.scale == 4.5
    assert (placement.offset_x, placement.offset_y) == (0, 450)
    assert placement.dpi == 300


@pytest.mark.parametrize("fmt", [OutputFormat.SVG, OutputFormat.PDF, OutputFormat.EPS])
def test_vector_original_is_the_input_size(fmt: OutputFormat) -> None:
    placement = place(640, 480, JobOptions(format=fmt))

    assert placement == Placement(640, 480, 1.0, 0.0, 0.0, 300)
    assert placement.width_in == pytest.approx(640 / 300)
    assert placement.width_pt == pytest.approx(640 * 72 / 300)


def test_physical_size_follows_the_dpi() -> None:
    options = JobOptions(format=OutputFormat.EPS, size=Size(1200, 600), dpi=150)
    placement = place(100, 50, options)

    assert placement.dpi == 150
    assert (placement.width_in, placement.height_in) == (8, 4)
    assert (placement.width_pt, placement.height_pt) == (576, 288)
    assert placement.points_per_pixel == 72 / 150


def test_to_canvas_maps_design_points() -> None:
    placement = fit(100, 50, 200, 200, 300)
    assert placement.to_canvas(0, 0) == (0, 50)
    assert placement.to_canvas(100, 50) == (200, 150)


def test_sides_must_be_positive() -> None:
    with pytest.raises(ValueError):
        fit(0, 10, 10, 10, 300)


sides = st.integers(min_value=1, max_value=20_000)


@given(sides, sides, sides, sides)
def test_the_fitted_design_touches_two_sides_and_stays_inside(
    w: int, h: int, cw: int, ch: int
) -> None:
    p = fit(w, h, cw, ch, 300)
    right, bottom = p.to_canvas(w, h)
    eps = 1e-6 * max(cw, ch)

    assert p.offset_x >= -eps and p.offset_y >= -eps
    assert right <= cw + eps and bottom <= ch + eps
    assert abs(right - cw) <= eps or abs(bottom - ch) <= eps  # fitted: fills one direction
    assert abs(p.offset_x - (cw - right)) <= eps and abs(p.offset_y - (ch - bottom)) <= eps
