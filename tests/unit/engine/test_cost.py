"""The engine's cost on hostile images (issue 15): every stage linear or n log n.

Timings belong in `bench/abuse.py`; here the cost is pinned by what it is made of (the
corner thinning against its quadratic definition) and by how often the stages check for
a cancel per unit of work.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from printjob_adapters.engine import curves


def thin_by_definition(
    gap: list[int], angle: list[float], span: int, m: int, closed: bool
) -> list[bool]:
    """Corner thinning as first written: strongest first, each candidate against every
    kept one (quadratic; the reference the windowed lookup must agree with)."""
    kept: list[int] = []
    for c in sorted(range(len(gap)), key=lambda c: (-angle[c], gap[c])):
        clash = []
        for q in kept:
            d = abs(gap[c] - gap[q])
            if min(d, m - d if closed else m) <= span:
                clash.append(q)
        sharp = angle[c] >= curves.SHARP_ANGLE
        if not clash or (sharp and all(angle[q] >= curves.SHARP_ANGLE for q in clash)):
            kept.append(c)
    return [c in kept for c in range(len(gap))]


@st.composite
def candidate_clusters(draw: st.DrawFn) -> tuple[list[int], list[float], int, int, bool]:
    m = draw(st.integers(5, 80))
    closed = draw(st.booleans())
    gaps = sorted(draw(st.sets(st.integers(0, m - 1), min_size=1, max_size=min(m, 40))))
    angles = draw(
        st.lists(
            st.sampled_from([0.9, 1.0, 1.2, 1.49, 1.5, 1.6, 2.0, 3.1]),
            min_size=len(gaps),
            max_size=len(gaps),
        )
    )
    return gaps, angles, draw(st.integers(1, 3)), m, closed


@settings(max_examples=400, deadline=None)
@given(candidate_clusters())
def test_corner_thinning_keeps_what_the_quadratic_definition_keeps(
    case: tuple[list[int], list[float], int, int, bool],
) -> None:
    gap, angle, span, m, closed = case
    kept = curves._thin_one(np.array(gap), np.array(angle), span, m, closed)
    assert kept.tolist() == thin_by_definition(gap, angle, span, m, closed)
