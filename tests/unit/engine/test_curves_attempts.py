"""Fit attempts (`curves._try`) give every row the same result whatever rows it is
tried with: alone or with only cubic rows (so the cubic rows' table is not taken
apart, `_attempt`) or in the search's own batches (line rows among the cubic rows)."""

from __future__ import annotations

import numpy as np

from printjob_adapters.engine import curves
from tests.unit.engine.test_curves import recorded_attempts


def one_row(args: tuple[np.ndarray, ...], k: int) -> tuple[np.ndarray, ...]:
    pts, *rows = args
    return (pts, *(r[k : k + 1] for r in rows))


def test_an_attempt_gives_the_same_result_alone_as_in_its_batch(monkeypatch):
    lines = cubics = retried = 0
    for seed in (3, 5):
        for args in recorded_attempts(monkeypatch, seed):
            ok, seg, line = curves._try(*args)
            lines += int(line.sum())
            cubics += int((~line).sum())
            retried += int((~line & ~ok).sum())
            for k in range(len(ok)):
                ok_1, seg_1, line_1 = curves._try(*one_row(args, k))
                assert ok_1[0] == ok[k]
                assert line_1[0] == line[k]
                assert np.array_equal(seg_1[0], seg[k])
    # Both kinds of rows, and cubics that no Newton step brought within the tolerance.
    assert lines > 0 and cubics > 0 and retried > 0


def test_an_attempt_of_only_cubic_rows_matches_the_same_rows_among_lines(monkeypatch):
    checked = 0
    for args in recorded_attempts(monkeypatch, 7):
        ok, seg, line = curves._try(*args)
        curve_rows = np.nonzero(~line)[0]
        if len(curve_rows) < 2 or len(curve_rows) == len(line):
            continue
        pts, *rows = args
        ok_c, seg_c, line_c = curves._try(pts, *(r[curve_rows] for r in rows))
        assert not line_c.any()
        assert np.array_equal(ok_c, ok[curve_rows])
        assert np.array_equal(seg_c, seg[curve_rows])
        checked += 1
    assert checked > 0
