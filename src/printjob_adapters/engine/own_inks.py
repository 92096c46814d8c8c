"""Inks of their own: a colour between two palette colours that is drawn, not blended.

The greedy palette (`quantise.greedy_palette`) takes a colour only when its pixels are not
mixtures of colours already chosen, and on flat art a colour without flat interiors (thin
strokes, small text) is judged by its edge pixels alone. Greys all lie on one line: #555
text beside a #333 outline on white is, pixel for pixel, a mixture of #333 and white, and
so is a dark-grey drop shadow's edge beside a black outline; the text's ink was dropped
and drawn in the outline's grey. Anti-aliasing tints are mixtures too, and must still go.

What tells them apart is where the pixels of one exact colour lie (`find`):

1. Candidates: the distinct colours with at least `INK_PIXELS` pixels (hardly any of them
   in flat interiors, `INK_FLAT`), off every palette
   colour and a mixture of two of them (within the greedy palette's `mix` tolerance).
   O(U K^2) for U distinct colours and K palette colours, U counted only past the floor.
2. A tint lies on a ramp between its two ends: within `REACH` pixels of each of its
   pixels the colour goes on past it towards either end (an edge's anti-aliasing is at
   most two pixels wide). An ink of its own is the far end of its own strokes: towards
   one end of the mixture (the paper) its strokes fade, but nothing within reach goes
   past it towards the other. At least `OWN_SHARE` of its pixels must be so.
3. It covers strokes, not a hairline: at least `INK_RUNS` of its pixels continue along
   a row and as many along a column (a faint straight hairline is a stroke of its ink,
   `detail.recover_strokes`), and at least `INK_PIXELS` lie off lines one pixel wide of
   `LINE` pixels or more (a 1-px outline in a grey of its own, or the darker share of a
   line drawn between two pixels, is the line rule's: `detail._drawn_lines`).
4. Failing 3 for want of strokes off 1-px lines, a colour is still drawn in lines of its
   own (a checkbox's border, only ever 1 px wide) when at least `INK_PIXELS` of its line
   pixels have no lighter share of the same mixture beside them and are no mixture of
   the two colours on either side (`_shared`: the line drawn between two pixels, and an
   anti-aliased edge between two colours, are), and 2 and 3's runs hold over its strokes
   and those lines. Such a *line grey* stays out of the palette (`Found.lines`): only its
   lines' pixels take it (`with_lines`): as a palette colour it would also take the
   fringe and faint stems of the text beside it (greys' mixtures tie).
Cost: the candidates' P pixels listed from the R colour runs, O(R + P), no map of the
whole image; step 3's runs both ways counted over all of a candidate's pixels, O(P), which
rejects most anti-aliasing tints before step 2; then O(P REACH^2) gathers for the pixels
of the candidates left, all at once (0.3-0.45 ms in all on a corpus logo, under load);
step 3 in full only for those that pass step 2.
"""

from __future__ import annotations

from typing import Any, Protocol

import attrs
import numpy as np
import numpy.typing as npt

from printjob_adapters.engine import graphs

FloatArray = npt.NDArray[np.floating[Any]]

#: Least pixels of one exact colour that can be an ink of its own (a word of 12-px text
#: in its ink has more than a hundred).
INK_PIXELS = 24
#: Most share of a candidate's pixels in flat interiors: strokes and small text have
#: none, and a colour with interiors the greedy palette has judged already (a shaded
#: area's smooth ramp has many: they are its noise, not inks).
INK_FLAT = 0.1
#: Least pixels of the exact colour beside another along a row, and along a column:
#: strokes that run both ways, not a hairline (a line of 14-px text in its ink: 8 to a
#: dozen of each).
INK_RUNS = 4
#: Least pixels of an 8-connected group of one exact colour, one pixel wide, that is a
#: line (`detail.LINE_MIN`: a letter's stem at text sizes is shorter; an outline longer).
LINE = 24
#: Pixels around each pixel (Chebyshev radius) within which a tint's ramp reaches past it:
#: an anti-aliased edge is at most two pixels wide (at one, the fringe of small grey text
#: beside darker text passed for an ink: the public set's screenshot).
REACH = 2
#: Least share of its pixels beyond which nothing lies towards the far end.
OWN_SHARE = 0.8
#: How far past the candidate, in coverage of the mixture, a pixel must lie to count as
#: going on towards an end (the 8-bit rounding of an even stroke is far less).
PAST = 0.08
#: Most candidates examined (the commonest first): a bound on the cost.
MOST = 16


class Colours(Protocol):
    """What `find` reads of `quantise.Colours` (which calls this module, so is not
    imported here)."""

    @property
    def keys(self) -> npt.NDArray[np.int32]: ...

    @property
    def rgb(self) -> npt.NDArray[np.int64]: ...

    @property
    def count(self) -> npt.NDArray[np.int64]: ...

    @property
    def flat(self) -> npt.NDArray[np.int64]: ...

    @property
    def inverse(self) -> npt.NDArray[np.signedinteger[Any]]: ...

    @property
    def run_colour(self) -> npt.NDArray[np.int32]: ...

    @property
    def run_length(self) -> npt.NDArray[np.int64]: ...


@attrs.frozen(eq=False)
class Found:
    """What `find` found: the inks drawn in strokes of their own (`inks`, sRGB (M, 3)),
    which join the palette, and the greys drawn only as 1-px lines of their own
    (`lines`, sRGB (L, 3)) with each one's pixels (`line_pixels`, flat indices), which
    only those pixels take: the palette without them labels everything else."""

    inks: FloatArray
    lines: FloatArray
    line_pixels: tuple[npt.NDArray[np.intp], ...]


NONE = Found(np.zeros((0, 3)), np.zeros((0, 3)), ())


def find(
    rgb: npt.NDArray[np.uint8],
    colours: Colours,
    palette: FloatArray,
    rgb_tol: float,
    mix_tol: float,
) -> Found:
    """The colours drawn as strokes of their own, or as 1-px lines of their own, that
    `palette` holds only as mixtures of two of its colours; see the module's docstring.
    `rgb` is the image (H, W, 3 or 4) `colours` was found in; `rgb_tol` and `mix_tol` are
    `quantise.Tolerances`' `rgb` and `mix`. Cost: O(U K^2 + N) when there are
    candidates, O(U) otherwise."""
    if len(palette) < 2:
        return NONE
    pal = np.asarray(palette, dtype=np.float64)
    many = np.flatnonzero(
        (colours.count >= INK_PIXELS) & (colours.flat <= INK_FLAT * colours.count)
    )
    if len(many) == 0:
        return NONE
    cand = colours.rgb[many].astype(np.float64)
    off = cand[:, None, :] - pal[None, :, :]
    # Off every palette colour by more than a pixel's own tolerance.
    away = np.sqrt((off * off).sum(axis=2)).min(axis=1) > 2.0 * rgb_tol
    many, cand = many[away], cand[away]
    if len(many) == 0:
        return NONE
    first, second = np.triu_indices(len(pal), 1)
    res = _residual(cand, pal[first], pal[second])
    best = np.argmin(res, axis=1)
    mixture = res[np.arange(len(many)), best] < mix_tol
    many, cand, best = many[mixture], cand[mixture], best[mixture]
    if len(many) == 0:
        return NONE
    order = np.argsort(-colours.count[many], kind="stable")[:MOST]
    many, cand, best = many[order], cand[order], best[order]
    height, width = rgb.shape[:2]
    rows = rgb.reshape(-1, rgb.shape[-1])
    at, of = _pixels_of(colours, many)
    # Step 3's runs both ways, counted over all of a candidate's pixels (at least as many
    # as over its strokes alone): most anti-aliasing tints fail it, and are then left out
    # of step 2's gathers.
    inverse = colours.inverse
    runs = np.minimum(*_beside(at, inverse, many[of], width, len(many), of))
    keep = (runs >= INK_RUNS)[of]
    if not keep.any():
        return NONE
    at, of = at[keep], of[keep]
    # Step 2 for every candidate's pixels at once: whether nothing within reach goes past
    # each pixel towards either end of its candidate's mixture.
    fade_a, fade_b = _fades(rows, at, (height, width), pal[first[best]][of], pal[second[best]][of])
    found: list[FloatArray] = []
    lines: list[FloatArray] = []
    line_pixels: list[npt.NDArray[np.intp]] = []
    for i in np.flatnonzero(
        np.bincount(of, fade_a | fade_b, minlength=len(many)) >= OWN_SHARE * INK_PIXELS
    ).tolist():
        mine = of == i
        pixels = at[mine]
        thin = _thin_lines(pixels, width)
        if _own_strokes(~thin, fade_a[mine], fade_b[mine], pixels, inverse, int(many[i]), width):
            found.append(cand[i])
            continue
        if np.count_nonzero(thin) < INK_PIXELS:
            continue
        # Step 4: a grey drawn only as 1-px lines (a checkbox's border) when nothing
        # beside them is a lighter share of the same mixture or the lines are no edge
        # between two colours (`_shared`).
        ends = pal[first[best[i]]], pal[second[best[i]]]
        ink, paper = (
            ends if np.count_nonzero(fade_a[mine]) >= np.count_nonzero(fade_b[mine]) else ends[::-1]
        )
        drawn = thin.copy()
        drawn[thin] = ~_shared(
            rows, pixels[thin], (height, width), (ink, paper), pal, (rgb_tol, mix_tol)
        )
        if np.count_nonzero(drawn) >= INK_PIXELS and _own_strokes(
            ~thin | drawn, fade_a[mine], fade_b[mine], pixels, inverse, int(many[i]), width
        ):
            lines.append(cand[i])
            line_pixels.append(pixels[drawn])
    if not found and not lines:
        return NONE
    return Found(np.array(found).reshape(-1, 3), np.array(lines).reshape(-1, 3), tuple(line_pixels))


def _own_strokes(
    strokes: npt.NDArray[np.bool_],
    fade_a: npt.NDArray[np.bool_],
    fade_b: npt.NDArray[np.bool_],
    pixels: npt.NDArray[np.intp],
    inverse: npt.NDArray[np.signedinteger[Any]],
    colour: int,
    width: int,
) -> bool:
    """Whether the `strokes` among a candidate's `pixels` make an ink of its own: at least
    `INK_PIXELS` of them, `OWN_SHARE` fading one way (`_fades`), running both ways
    (`_both_ways`). O(P)."""
    count = np.count_nonzero(strokes)
    if count < INK_PIXELS:
        return False
    own = max(np.count_nonzero(fade_a & strokes), np.count_nonzero(fade_b & strokes))
    return (
        bool(own >= OWN_SHARE * count)
        and _both_ways(pixels[strokes], inverse, colour, width) >= INK_RUNS
    )


def _residual(
    colours: npt.NDArray[np.float64], a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """(C, P): how far (sRGB) each colour lies from the mixture of each pair a-b that
    shares its coverage, infinite where that coverage is under 0.1 or over 0.9 (a colour
    that close to an end is the end's own noise, not a stroke). O(C P)."""
    towards = b - a
    norm = np.maximum((towards * towards).sum(axis=1), 1e-9)
    rel = colours[:, None, :] - a[None, :, :]
    t = (rel * towards[None]).sum(axis=2) / norm[None]
    off = rel - t[..., None] * towards[None]
    res: npt.NDArray[np.float64] = np.sqrt((off * off).sum(axis=2))
    res[(t < 0.1) | (t > 0.9)] = np.inf
    return res


def _thin_lines(pixels: npt.NDArray[np.intp], width: int) -> npt.NDArray[np.bool_]:
    """Which pixels (sorted flat indices) lie in an 8-connected group of at least `LINE`
    of them that holds no 2x2 block: a line one pixel wide (a checkbox's outline, the
    darker share of a line drawn between two pixels), not strokes. O(P log P)."""
    x = pixels % width
    src: list[npt.NDArray[np.intp]] = []
    dst: list[npt.NDArray[np.intp]] = []
    for step, column_ok in (
        (1, x < width - 1),
        (width - 1, x > 0),
        (width, None),
        (width + 1, x < width - 1),
    ):
        there = np.searchsorted(pixels, pixels + step)
        there = np.minimum(there, len(pixels) - 1)
        joined = pixels[there] == pixels + step
        if column_ok is not None:
            joined &= column_ok
        src.append(np.flatnonzero(joined))
        dst.append(there[joined])
    _, group = graphs.connected_components(len(pixels), np.concatenate(src), np.concatenate(dst))
    size = np.bincount(group)
    block = np.isin(pixels + 1, pixels) & np.isin(pixels + width, pixels)
    block &= np.isin(pixels + width + 1, pixels) & (x < width - 1)
    has_block = np.zeros(len(size), dtype=bool)
    has_block[group[block]] = True
    thin: npt.NDArray[np.bool_] = (size[group] >= LINE) & ~has_block[group]
    return thin


def _shared(
    rows: npt.NDArray[np.uint8],
    pixels: npt.NDArray[np.intp],
    shape: tuple[int, int],
    ends: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
    pal: npt.NDArray[np.float64],
    tolerances: tuple[float, float],
) -> npt.NDArray[np.bool_]:
    """For the pixels (flat indices) of 1-px lines in one exact colour, a mixture of
    `ends` (the ink, then the paper it fades to): whether the line there is a share of an
    edge rather than drawn in that colour. A line of one colour drawn between two pixels
    is two lines side by side, its darker share and its lighter: beside the darker lies
    a lighter share of the same mixture (on it within the `mix` tolerance, past the line
    towards the paper by `PAST` of coverage, off every palette colour by more than twice
    the `rgb` tolerance). An anti-aliased edge between two colours (a black outline and
    a grey shadow) is a line whose colour is a mixture of the two beside it, left and
    right or above and below. A line drawn in a grey of its own (a checkbox's border)
    has the paper, or colours it is no mixture of, beside it. `tolerances` are
    (`rgb`, `mix`). O(P K) time for P pixels and K palette colours, O(P) memory."""
    height, width = shape
    rgb_tol, mix_tol = tolerances
    ink, paper = ends
    towards = paper - ink
    norm = max(float(towards @ towards), 1e-9)
    y, x = np.divmod(pixels, width)
    colour = rows.take(pixels, axis=0)[:, :3].astype(np.float64)
    level = ((colour - ink) @ towards) / norm
    shared = np.zeros(len(pixels), dtype=bool)
    sides: list[npt.NDArray[np.float64]] = []
    for step, inside in ((1, x < width - 1), (-1, x > 0), (width, y < height - 1), (-width, y > 0)):
        # Pixels on the image's border read themselves past it: no share, no edge.
        seen = rows.take(np.where(inside, pixels + step, pixels), axis=0)[:, :3].astype(np.float64)
        sides.append(seen)
        t = ((seen - ink) @ towards) / norm
        off = seen - ink - t[:, None] * towards
        lighter = (t > level + PAST) & (t < 1.0 - PAST)
        lighter &= (off * off).sum(axis=1) < mix_tol * mix_tol
        # Off every palette colour, one colour at a time: O(P) memory, not O(P K).
        for known in pal:
            gap = seen - known
            lighter &= (gap * gap).sum(axis=1) > (2.0 * rgb_tol) ** 2
        shared |= lighter
    for one, other in ((sides[0], sides[1]), (sides[2], sides[3])):
        across = other - one
        t = ((colour - one) * across).sum(axis=1) / np.maximum((across * across).sum(axis=1), 1e-9)
        off = colour - one - t[:, None] * across
        shared |= (t > 0.05) & (t < 0.95) & ((off * off).sum(axis=1) < mix_tol * mix_tol)
    return shared


def _pixels_of(
    colours: Colours, many: npt.NDArray[np.intp]
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """The flat indices, sorted, of the pixels of the colours `many` and which of them
    each is (its index into `many`), read from the colour runs: O(R + P) for R runs and
    P such pixels, no map of the whole image."""
    wanted = np.full(len(colours.keys) + 1, -1, dtype=np.intp)  # run colour -1 reads -1
    wanted[many] = np.arange(len(many))
    run_of = wanted[colours.run_colour]
    lengths = colours.run_length
    chosen = np.flatnonzero(run_of >= 0)
    length = lengths[chosen]
    start = (np.cumsum(lengths) - lengths)[chosen]
    # Each chosen run's pixels: its start plus 0, 1, ... counted across the chosen runs.
    at = np.arange(int(length.sum()), dtype=np.intp)
    at += np.repeat(start - (np.cumsum(length) - length), length)
    of = np.repeat(run_of[chosen], length)
    return at, of


def _beside(
    pixels: npt.NDArray[np.intp],
    inverse: npt.NDArray[np.signedinteger[Any]],
    colour: npt.NDArray[np.integer[Any]] | int,
    width: int,
    groups: int,
    group: npt.NDArray[np.intp] | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Per group (`group`, each pixel's; one group when None), how many of `pixels` (flat
    indices) have a pixel of their own `colour` (an index of `inverse`, the per-pixel
    colours) beside them along their row, and how many along their column. O(P)."""
    last = len(inverse) - 1
    along_row = (inverse.take(np.minimum(pixels + 1, last)) == colour) & (
        (pixels % width) < width - 1
    )
    along_column = inverse.take(np.minimum(pixels + width, last)) == colour
    along_column &= pixels + width <= last
    if group is None:
        group = np.zeros(len(pixels), dtype=np.intp)
    return (
        np.bincount(group, along_row, minlength=groups).astype(np.int64),
        np.bincount(group, along_column, minlength=groups).astype(np.int64),
    )


def _both_ways(
    pixels: npt.NDArray[np.intp],
    inverse: npt.NDArray[np.signedinteger[Any]],
    colour: int,
    width: int,
) -> int:
    """The fewer of `pixels` (flat indices) with a pixel of the same `colour` (an index of
    `inverse`, the per-pixel colours) beside them along their row and along their column:
    strokes run both ways (a hairline one way only). O(P)."""
    along_row, along_column = _beside(pixels, inverse, colour, width, 1)
    return int(min(along_row[0], along_column[0]))


def _fades(
    rows: npt.NDArray[np.uint8],
    pixels: npt.NDArray[np.intp],
    shape: tuple[int, int],
    a: npt.NDArray[np.float64],
    b: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """For each pixel, with its own mixture a-b (rows of `a` and `b`): whether no pixel
    within `REACH` lies past it towards a by `PAST` of coverage (its strokes fade towards
    b, the paper), and whether none lies past it towards b. Pixels within `REACH` of the
    image's border are neither. O(P REACH^2), the outer rings only for pixels still fading."""
    height, width = shape
    towards = b - a
    scale = towards / np.maximum((towards * towards).sum(axis=1), 1e-9)[:, None]
    base = np.einsum("ij,ij->i", a, scale)

    def coverage(where: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        seen = rows.take(where, axis=0)[:, :3].astype(np.float64)
        found: npt.NDArray[np.float64] = np.einsum("ij,ij->i", seen, scale) - base
        return found

    y, x = np.divmod(pixels, width)
    inner = (y >= REACH) & (y < height - REACH) & (x >= REACH) & (x < width - REACH)
    at = np.where(inner, pixels, REACH * width + REACH)  # border pixels read a safe one
    own = coverage(at)
    most = np.full(len(pixels), -np.inf)
    least = np.full(len(pixels), np.inf)
    # Ring by ring: a pixel with something past it within one ring has it within every
    # wider one, so each ring reads only the pixels still fading (most anti-aliasing
    # tints are out after the first ring).
    live = np.arange(len(pixels))
    for ring in range(1, REACH + 1):
        where, low, high, mine = at[live], own[live] - PAST, own[live] + PAST, scale[live]
        base_live = base[live]
        ring_most, ring_least = most[live], least[live]
        for dy in range(-ring, ring + 1):
            for dx in range(-ring, ring + 1):
                if max(abs(dy), abs(dx)) == ring:
                    seen = rows.take(where + (dy * width + dx), axis=0)[:, :3].astype(np.float64)
                    value = np.einsum("ij,ij->i", seen, mine) - base_live
                    np.maximum(ring_most, value, out=ring_most)
                    np.minimum(ring_least, value, out=ring_least)
        most[live], least[live] = ring_most, ring_least
        live = live[(ring_least >= low) | (ring_most <= high)]
    return inner & (least >= own - PAST), inner & (most <= own + PAST)


def with_lines(
    labels: npt.NDArray[np.int32],
    palette: npt.NDArray[np.float64],
    found: Found,
    colors: int | None,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
    """The label map and palette with the greys `find` found drawn only as 1-px lines
    (`found.lines`) added, each given to its lines' pixels alone: nearest-colour
    assignment would also give a grey the fringe of every darker stroke its colour
    passes through (greys' mixtures tie), and the unmixing would read faint strokes of
    it in text. With an explicit colour count, only the lines that fit within
    `colors` (the commonest first, as `find` lists them). Neither argument is changed.
    O(N) for the copy of the map."""
    room = len(found.lines) if colors is None else max(colors - len(palette), 0)
    if room == 0:
        return labels, palette
    out = labels.copy()
    flat = out.reshape(-1)
    for i, pixels in enumerate(found.line_pixels[:room]):
        flat[pixels] = len(palette) + i
    return out, np.vstack([palette, found.lines[:room]])


def marks(
    palette: npt.NDArray[np.floating[Any]], found: list[npt.NDArray[np.floating[Any]]]
) -> npt.NDArray[np.bool_] | None:
    """Which colours of `palette` are inks `find` added (`found`, as `find_palette` told
    them; an explicit colour count may have merged some away), or None when it found
    none. O(K M)."""
    if not found:
        return None
    inks = np.vstack(found)
    same: npt.NDArray[np.bool_] = (palette[:, None, :] == inks[None, :, :]).all(axis=2).any(axis=1)
    return same
