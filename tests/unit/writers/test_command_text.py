"""The EPS and PDF path text written whole-array is what writing it command by command
gives: `number` for PostScript, reportlab's `fp_str` for PDF, ticks at the same
commands."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from reportlab.lib.rl_accel import fp_str

from printjob_adapters.engine.vector import CLOSE, CURVE, LINE, MOVE, OP_POINTS
from printjob_adapters.engine.writers import pdf
from printjob_adapters.engine.writers.svg import QUANTUM, Drawn, command_text, number, tick_chunks

OPS = st.sampled_from([MOVE, LINE, CURVE, CLOSE])
# Whole pixels, fractions below one, signs and the largest canvases.
QUANTISED = st.one_of(
    st.integers(-300, 300), st.integers(-3_000_000, 3_000_000), st.sampled_from([0, 5, -5, 10])
)


def commands(draw: st.DrawFn, values: st.SearchStrategy[int] = QUANTISED) -> Drawn:
    ops = draw(st.lists(OPS, min_size=1, max_size=30))
    points = np.array(
        [[[draw(values), draw(values)] for _ in range(3)] for _ in ops], dtype=np.int64
    ).reshape(len(ops), 3, 2)
    return Drawn(ops=np.array(ops, dtype=np.int64), points=points, current=np.zeros((len(ops), 2)))


drawn_commands = st.composite(commands)


def by_command(d: Drawn, format_numbers: object, end: str) -> str:
    letters = "mlch"
    out = []
    for op, pts in zip(d.ops.tolist(), d.points.tolist(), strict=True):
        xy = [v for point in pts[: OP_POINTS[op]] for v in point]
        text = format_numbers(xy)  # type: ignore[operator]
        out.append(f"{text} {letters[op]}" if text else letters[op])
    return end.join(out) + end


@settings(max_examples=200, deadline=None)
@given(drawn_commands())
def test_postscript_text_is_number_by_number(d: Drawn) -> None:
    expected = by_command(d, lambda xy: " ".join(number(v) for v in xy), "\n")
    assert command_text(d, b"mlch", ord(" "), ord("\n")) == expected


@settings(max_examples=200, deadline=None)
@given(drawn_commands())
def test_pdf_text_is_reportlabs(d: Drawn) -> None:
    expected = by_command(d, lambda xy: fp_str(*[v / QUANTUM for v in xy]) if xy else "", " ")
    assert pdf._path_code(d, lambda: None) == expected[:-1]


@settings(max_examples=50, deadline=None)
@given(drawn_commands(st.integers(-(10**9), 10**9)))
def test_pdf_text_of_huge_coordinates_is_reportlabs(d: Drawn) -> None:
    expected = by_command(d, lambda xy: fp_str(*[v / QUANTUM for v in xy]) if xy else "", " ")
    assert pdf._path_code(d, lambda: None) == expected[:-1]


@given(st.integers(0, 40), st.integers(1, 9))
def test_ticks_come_before_the_same_commands(n: int, size: int) -> None:
    d = Drawn(
        ops=np.zeros(n, dtype=np.int64),
        points=np.zeros((n, 3, 2), dtype=np.int64),
        current=np.zeros((n, 2)),
    )
    seen: list[int] = []
    done = [0]

    def tick() -> None:
        seen.append(done[0])

    for part in tick_chunks(d, size, tick):
        done[0] += len(part.ops)
    assert done[0] == n
    assert seen == [k - 1 for k in range(1, n + 1) if k % size == 0]
