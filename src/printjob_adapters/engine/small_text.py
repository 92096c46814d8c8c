"""Small text: letters a few pixels high traced from their coverage, at `SCALE` times.

A letter of 8-px type is drawn with strokes thinner than a pixel; its shape is in the
anti-aliasing (how much of each pixel the ink covers), not in which pixels are ink. The
label map can only say ink or paper per pixel, so its outline is a staircase of whole
pixels, and a bowl, a crossbar or the gap between two letters is lost in it (an "e"
becomes a bar, "rn" becomes "m"). A reader, and OCR, zooms the input smoothly and sees
the ink where the zoomed coverage passes a cut between ink and paper: that is the shape
traced here.

Stages (N pixels of the image, T of the letters' bounding box; each whole-array):

1. `find_letters`: candidates are the pixels of every colour but the commonest and the
   pixels the clean-up merged into the paper (misfits, far from their label's colour),
   labelled once from their runs (`_runs8`); fragments too short for a letter (dots,
   broken strokes) join the letters beside them (`_join_fragments`); a component is
   kept when letter-sized (`MIN_HEIGHT` to `MAX_HEIGHT` rows), thin (tints of the
   paper in its counters not counted), no solid block, and on one paper colour. O(N) (a
   few byte-wide comparisons, a lightness difference, the runs), then O(T) inside the
   letters' box only.
2. `coverage`: each pixel of the letters and the two pixels around them as a mixture of
   its letter's ink and paper colours, 0 (paper) to 1 (ink). O(N) (two dilations).
3. `glyph_labels`: the coverage zoomed `SCALE` times (bicubic, as a viewer zooms) and
   cut at Otsu's threshold (`_cut`): ink or nothing, per zoomed pixel. O(SCALE² · T).
4. `draw_over`: the letters are paper in the image's label map (`overlay`), and the
   zoomed ink is traced on its own (the ordinary tracer, `vectorise`) and drawn over the
   art, scaled back to design units. O(SCALE² · T) plus the tracer's cost on the glyphs.

With automatic colours, type whose ink the palette lacks (a grey caption beside black,
JPEG'd yellow type on blue) is drawn in its own measured ink, added as a colour
(`_own_inks`, `_foreign_inks`, O(pixels of the letters)); an explicit colour count is
kept exactly.

Flat art without small text pays stage 1's whole-array passes and nothing else (about
1 ms on a 512-px logo). The nearer misfit level, the joining of fragments and the
measured ink's coverage hold only for art that fits its palette (`_FlatTest`), so a
photo forced into two colours or a speckled stamp is traced as before. The
stage's labelling, erosion and dilation are NumPy (`_label8`, `_erode`, `_dilate`, equal
to `scipy.ndimage`'s, property-tested), so that tracing a logo never loads SciPy (about
0.12 s of a `printjob trace` process).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import numpy as np
import numpy.typing as npt
from PIL import Image

from printjob_adapters.engine.curves import groups
from printjob_adapters.engine.vector import Layer, Outline, VectorArt

if TYPE_CHECKING:
    from printjob_adapters.engine.progress import Checkpoint
    from printjob_adapters.engine.segmentation import Segmentation

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: Zoom at which the letters are traced: the finest step of a glyph's outline is
#: 1 / SCALE px, fine enough for the counters and joins of 8-px type.
SCALE = 3
#: Tallest component (pixels) taken for a letter, or a word of touching letters, of
#: small type (9-px type with descenders is about 10 px high; 14 px leaves room).
MAX_HEIGHT = 14
#: Shortest letter: a dot or a 1-px rule is no letter (and is kept by `detail`).
MIN_HEIGHT = 3
#: Widest gap (pixels) across which a fragment under `MIN_HEIGHT` rows joins its
#: neighbours (`_join_fragments`): the dot of an 8-px "i" is two rows above its stem.
FRAGMENT_GAP = 2
#: Largest difference (per channel) between a colour and the commonest one for it to be
#: a tint of the paper: pixels of it are not counted into a stroke's width (`_thick`).
TINT = 32
#: A letter whose ink is a palette colour is measured against its own strongest pixels
#: when they are less than this share of the way from its paper to that colour.
SHOWN_INK = 0.8
#: ... or more than this share of the way: its palette ink is a mixture of its ink and
#: its paper (a colour count too short for the anti-aliasing: `colors=2` labels black
#: type with a grey), and against that grey the letters' anti-aliasing counts as ink, so
#: counters and gaps fill in ("print" read "prim"). Thin strokes of the palette ink
#: itself reach 1.0 at most, JPEG's overshoot a few levels more.
BEYOND_INK = 1.25
#: A letter whose measured ink lies under this share of the way from its paper to its
#: palette ink is printed in an ink of its own (`_own_inks`): grey type beside black
#: measures 0.3 to 0.45, the thinnest letters of black 8-px type 0.75 and more.
OWN_SHARE = 0.6
#: Fewest letters, and least share of the letters of their palette ink, for such an ink
#: to be added: a caption, not one faint letter.
MIN_OWN_LETTERS = 3
OWN_PART = 0.25
#: Least share of a component too tall for type made of tints of the paper for those
#: tints to be JPEG's ringing around words rather than part of a shape
#: (`_without_ringing`): JPEG'd yellow-on-blue paragraphs are 0.6 to 0.75 tints.
RINGING_SHARE = 0.3
#: Largest lightness difference (mean of the channels) from the paper of a pixel taken
#: for JPEG's ringing around coloured type (`_without_ringing`).
NEAR_PAPER = 25
#: Fewest letter-sized components in a row for a line of type (`_in_text_lines`), and
#: most components looked at for lines (their pairs are compared).
LINE_LETTERS = 3
#: ... neighbours in a line are at most this many times their height apart (words three
#: spaces apart in 8-px monospace are 16 to 18 px apart, a short word 4 px high).
LINE_GAP = 3
_MOST_LINE_LETTERS = 1500
#: Longest palette in which JPEG's ringing is looked for (`_without_ringing`): JPEG'd
#: type on a flat ground is segmented into 4 to 7 colours, photos into 16 and more.
_RINGING_COLOURS = 8
#: ... and a longer palette, up to `_MOST_RINGING_COLOURS`, when at least
#: `RINGING_PALETTE_SHARE` of the pixels off the paper's colour are labelled with
#: colours of its lightness: JPEG'd red on cream at q90 is segmented into 20 to 28
#: colours, most of them tints of the cream ringing around each word (0.6 to 0.7 of
#: the pixels off the paper), and every word is then one blob taller than a line;
#: 9-px bold yellow on blue at q75 into 111 (the paper 0.58 of the image, tints of its
#: lightness 0.84 of the rest).
_MOST_RINGING_COLOURS = 128
RINGING_PALETTE_SHARE = 0.5
#: ... and only on a page: the paper at least this share of the image (the JPEG'd type
#: 0.70 to 0.75; the photos whose files changed without it, `sk-chelsea` with
#: `colors=24`, `sk-rocket-jpeg85`, `sk-hubble-deep-field-jpeg90`, `sk-text-photo`,
#: 0.05 to 0.36).
RINGING_PAPER_SHARE = 0.5
#: A mark at most this wide, at most `PERIOD_GAP` pixels after a letter of a line of
#: type on its bottom row, is joined to it (`_join_periods`); marks times letters past
#: `_MOST_PERIOD_PAIRS` are not looked at (a photo's specks).
PERIOD_SIZE = 3
PERIOD_GAP = 3
_MOST_PERIOD_PAIRS = 1_000_000
#: Share of its bounding box a component fills to be a solid block rather than a letter.
SOLID = 0.9
#: Narrowest box (pixels each way) read as a frame, not a letter, when its four sides are
#: its own stroke in one colour (`_framed`): the checkboxes of a form are 12 px.
FRAME_SIDE = 5
#: Least contrast (sRGB distance) between ink and paper for coverage to mean anything.
MIN_CONTRAST = 60.0
#: Largest box (input pixels) around the letters that is zoomed and traced at `SCALE`:
#: the zoomed arrays and their trace grow with it (SCALE² times), so past it the stage
#: leaves the text to the ordinary tracer rather than hold gigabytes (a 3 MP image of
#: letter-sized specks would zoom to 27 MP). A screenshot of 1000 x 500 is within it.
MAX_BOX_PIXELS = 500_000
#: Lowest coverage ever taken for ink when cutting the zoomed letters (`_cut`).
LEAST_CUT = 0.2
#: Largest lightness difference (mean of the sRGB channels) between a pixel and its
#: label's colour for the label to describe it: further, the pixel is detail the
#: clean-up merged away.
MISFIT = 80
#: ... or, between colours closer than twice `MISFIT` in lightness (yellow on blue is 93
#: levels apart), more than half the way to the furthest palette colour, but never
#: nearer its label than `LEAST_MISFIT`: such a pixel is more ink than paper.
LEAST_MISFIT = 40
#: ... but `LEAST_PAIR_MISFIT` on a palette of two colours (paper and one ink): light
#: grey type on white (grey 180: 75 levels) is segmented into white and a grey 180 to
#: 200, half of which is 29 to 37 levels a channel, and under 40 no stroke of it was ever
#: a misfit (its letters erased). Two colours have no tint of one another to take for
#: ink: a palette of more colours keeps `LEAST_MISFIT` (JPEG'd yellow on blue has a
#: grey-green mixture 51 levels from the blue, whose pixels are no ink). 20, not 25:
#: with `colors=2` the grey is a mixture of the type and its paper, 205 on a few dozen
#: pixels (half the way: 24 levels), and at 25 a letter or none of such type was found.
LEAST_PAIR_MISFIT = 20
#: ... but under this (the level before, 25) only when the ink's own pixels show the
#: palette ink at least half the way to the type's (`_ink_at_least_half_way`).
SHORT_PAIR_MISFIT = 25
#: Largest mean lightness difference (per channel) between the pixels and their labels'
#: colours for that nearer misfit level, and fragments joined, to be used (`_FlatTest`):
#: 8-px text fits within 2 to 7 (within 11 JPEG'd at q75, its letters far from the
#: paper they were merged into), a stamp's speckled ink 12, photos forced into two
#: colours 18 to 30.
FLAT_FIT = 10
#: `_FlatTest` reads every `_FLAT_STEP`-th row and column.
_FLAT_STEP = 3
#: Largest sRGB distance at which a measured ink is taken to be that palette colour
#: before any colour that merely stands out from the paper.
SAME_INK = 60.0
#: A measured ink is a mixture of its paper and a palette colour when it lies within
#: MIX_RESIDUAL (sRGB) of the line between them, at least MIN_MIX of the way along.
MIX_RESIDUAL = 24.0
MIN_MIX = 0.3
#: ... and for `_foreign_inks`, no further than this share past the palette colour.
MIX_BEYOND = 0.1
#: A letter of a run of JPEG'd coloured type (`_one_ink_per_run`) is of the run's ink
#: when its strongest pixels lie within this share of the paper-to-ink distance of the
#: line between them: 4:2:0 JPEG blurs the chroma of a letter at a block's edge further
#: than `MIX_RESIDUAL` (8-px yellow on blue, q75: 27 sRGB off a span of 234).
RUN_RESIDUAL = 0.2
#: Largest mean lightness difference (mean of the channels) between the pixels around
#: an erased letter and their label's colour (`_on_clean_paper`).
RING_FIT = 40
#: Largest share of the image one colour's letters may cover: more is a pattern, not text.
MAX_INK_SHARE = 0.35
#: A palette (or a set of colours left out) this short is handled colour by colour:
#: one comparison per colour costs less than a lookup per pixel.
_FEW_COLOURS = 8
#: A palette this short is counted colour by colour, one comparison of bytes each
#: (`np.bincount` casts every label to 64 bits first: 0.6 ms on 512 x 512).
_COUNTED_COLOURS = 32
#: `_Lightness.outside` reads the lightness of the pixels off their colour's exact value
#: only while they are at most this share of the image; more, the whole image's.
_FEW_OFF = 0.25


@attrs.frozen(eq=False)
class Letters:
    """Small letters found in a label map: `component` (H, W) int32, 0 outside letters,
    c + 1 inside letter component c; per component its `ink` and `paper` palette
    indices and its bounding box rows/columns (`top`, `bottom`, `left`, `right`,
    inclusive)."""

    component: IntArray
    ink: IntArray
    paper: IntArray
    ink_colour: FloatArray
    #: Whether the measured inks stay the colour coverage is measured against (art
    #: that fits its palette, `_FlatTest`) once a palette colour is chosen to draw them.
    measured_coverage: bool = False
    #: Whether the art fits its palette (`_FlatTest`): a letter's own ink may be added.
    fits: bool = False
    #: JPEG's ringing left out of the letters (`_without_ringing`), or None: around the
    #: letters it is paper, not traced as blobs under their glyphs.
    ringing: BoolArray | None = None

    @property
    def count(self) -> int:
        return len(self.ink)


@attrs.frozen(eq=False)
class Glyphs:
    """The letters' ink at `SCALE` times: `labels` (palette index or -1) over the zoomed
    box whose top-left input pixel is (`x0`, `y0`), and the `rgba` the tracer places
    their edges from."""

    labels: IntArray
    rgba: npt.NDArray[np.uint8]
    x0: int
    y0: int


def find_letters(
    labels: IntArray, rgb: npt.NDArray[np.uint8], palette: FloatArray
) -> Letters | None:
    """Stage 1: components of small type, or None when the image has none.

    The candidates are the pixels of every colour but the commonest (and but colours
    covering more than `MAX_INK_SHARE` of the image), and the pixels the label map
    calls paper though their colour is far from it (`MISFIT`): the letters that the
    clean-up of a noisy (JPEG) image merged into the paper. They are labelled once, all
    together (8-connected), so a letter's anti-aliasing tints and misfits join it. A
    component is kept when letter-sized (`MIN_HEIGHT` to `MAX_HEIGHT` rows), thin (no
    5x5 square of candidates inside), no solid block, and at least three quarters of the
    pixels around it are one paper colour (an anti-aliased edge along a shape has the
    shape on one side and is no letter). Its ink is the palette colour most of its
    pixels have, or, for a component mostly of misfits, measured (`_extreme`).
    O(N) for the masks, the labelling and the erosion; O(components) for the rest."""
    if len(palette) == 0:
        return None
    flat = _FlatTest(labels, rgb, palette)
    found_candidates = _candidates(labels, rgb, palette, flat)
    if found_candidates is None:
        return None
    candidate, misfit, commonest, counts = found_candidates
    runs = _join_fragments(_runs8(candidate), candidate.shape, flat)
    extent, area = runs.extents()
    ringing = _without_ringing(
        runs, extent, area, candidate, misfit, rgb, palette, commonest, flat, counts
    )
    if ringing is not None:
        candidate, runs, left_out = ringing
        extent, area = runs.extents()
    periods = _join_periods(runs, extent, flat)
    if periods is not runs:
        runs = periods
        extent, area = runs.extents()
    n = runs.count
    height = extent[:, 1] - extent[:, 0]
    width = extent[:, 3] - extent[:, 2]
    # A solid block (a dot, a square bullet) is no letter: letters have gaps.
    block = area >= SOLID * height * width
    if ringing is not None and block.any() and len(palette) > _RINGING_COLOURS:
        # With the ringing of a long palette left out (its tints are every stem's fringe)
        # a bold stem or a letter whose counter JPEG filled is as solid as a bullet (a 2-px
        # "l" of 8-px bold red on cream, q90); in a line of type it is a letter, or it is
        # drawn by the ordinary tracer as a blob of palette tints. Not on a short palette:
        # JPEG'd yellow on blue at q75 (4 to 7 colours) lost a word in Mono and in Bold.
        block &= _text_lines(extent) < 0
    if block.any() and (ringing is None or len(palette) > _RINGING_COLOURS):
        # Not on a short palette whose ringing was left out, as for the solid blocks
        # above: 8-px Mono yellow on blue at q75 (5 colours) read 0.50 → 0.44 with it.
        block &= ~_open_counters(runs, extent, area, block, labels, rgb, palette, commonest)
    letter = ~block & (height >= MIN_HEIGHT) & (height <= MAX_HEIGHT)
    if not letter.any():
        return None
    # From here on only the box around the letters (and a margin for their paper) is
    # read: flat art with a few small shapes pays for that box, not for the image.
    window = _window(extent, letter, labels.shape, margin=2)
    found = runs.paint(window, np.arange(1, n + 1, dtype=np.int32))
    # A letter's counters may be labelled with a tint of the paper (a bowl one pixel
    # across is never the paper's own colour): they are no ink, and no stroke is thick.
    inky = candidate[window] & ~np.take(_tints(palette, commonest), labels[window])
    if len(palette) == 2 and _faint_pair(palette):
        # A faint mixture labels a word's counters and gaps with the ink too (`colors=2`
        # on grey 180 type: the whole x-height is grey 221): only pixels as far from the
        # paper as that ink are strokes, or every such word is thick.
        inky &= _beyond_ink(rgb[window], palette, commonest)
    elif len(palette) == 2 or (ringing is not None and len(palette) > _RINGING_COLOURS):
        # A stroke is the darker half (a solid shape is dark throughout). JPEG'd bold
        # type: the 1-px gaps between its stems are blurred into mixtures far from any
        # tint of the paper, and "print" or "height" of 9-px Bold red on cream (q90) had
        # a 5x5 square of candidates. Two colours for JPEG'd type: the ink is a mixture
        # (grey 133 for black type at q75, `colors=2`) labelling the anti-aliasing
        # between stems too, and "file", "width", "black" were drawn as blobs. Not on a
        # short palette whose ringing was left out, as for solid blocks: 8-px Mono
        # yellow on blue at q75 (4 colours) lost a word. Not on every palette: outlines
        # of 1 px straddling two pixels (`test_thin_outlines`) became letters.
        inky &= _darker_half(rgb[window], found, n, palette[commonest])
    letter &= ~_thick(inky, found, n)
    # A box of 1-px sides (a checkbox, ticked or not) is no letter: drawn as a glyph it
    # took the labels' ink, its grey border and blue tick lost.
    letter &= ~_framed(inky, found, labels[window], extent, letter, window)
    if not letter.any():
        return None
    own = candidate[window] & ~misfit[window]
    remap = np.zeros(n + 1, dtype=np.int32)
    count = int(letter.sum())
    remap[1:][letter] = 1 + np.arange(count, dtype=np.int32)
    component = remap[found]
    near_labels, near_own = labels[window], own
    # Each letter's ink: the colour of most of its own-colour pixels, when they are most
    # of it; -1 (measured below) for letters mostly of misfits.
    k = len(palette)
    mine = near_own & (component > 0)
    votes = np.bincount(
        (component[mine] - 1).astype(np.int64) * k + near_labels[mine], minlength=count * k
    ).reshape(count, k)
    if ringing is not None:
        # A colour of the paper's lightness is ringing, no ink: a stroke labelled with
        # it is measured instead (drawn in it, it would not stand out from the paper).
        votes[:, _papery(palette, commonest)] = 0
    ink = votes.argmax(axis=1).astype(np.int32)
    # Each letter lies whole inside the window: its size is its area from the runs.
    sized = area[letter]
    ink[2 * votes.max(axis=1) < sized] = -1
    colour = palette[np.maximum(ink, 0)]
    measured = ink < 0
    # Lightness off the label's colour: only letters mostly of misfits are measured.
    off = _lightness_off(labels[window], rgb[window], palette) if measured.any() else None
    if off is not None:
        colour[measured] = _extreme(
            rgb[window], off, component, (1 + np.flatnonzero(measured)).astype(np.int32)
        )
    around = near_labels
    if ringing is not None:
        # The ringing left out of the candidates lies around the words on their paper; a
        # pixel of its colour exactly is a flat field of its own (a button, a menu bar)
        # the words are printed on, and is their paper.
        exact = np.clip(np.rint(palette), 0, 255).astype(np.uint8)[near_labels]
        flat_field = (rgb[window][..., :3] == exact).all(axis=2)
        around = np.where(left_out[window] & ~flat_field, commonest, near_labels)
    paper = _paper(around, component, count)
    usable = paper >= 0
    reshown = np.zeros(count, dtype=bool)
    voted = ~measured & usable
    if voted.any() and flat.holds():
        reshown[voted], seen = _shown_ink(
            rgb[window], component, voted, ink, paper, palette, extent[letter]
        )
        colour[reshown] = seen
    if off is not None:
        usable &= ~measured | _on_clean_paper(off, component, count)
    if not usable.any():
        return None
    if not usable.all():
        keep = np.concatenate([[0], np.cumsum(usable).astype(np.int32)])
        keep[1:][~usable] = 0
        component = keep[component]
        ink, paper, colour = ink[usable], paper[usable], colour[usable]
        reshown, measured = reshown[usable], measured[usable]
    whole = np.zeros(labels.shape, dtype=np.int32)
    whole[window] = component
    component = whole
    return Letters(
        component=component,
        ink=ink,
        paper=paper,
        ink_colour=colour,
        measured_coverage=bool(measured.any() or reshown.any()) and flat.holds(),
        fits=flat.holds(),
        ringing=None if ringing is None else left_out,
    )


def _window(
    extent: npt.NDArray[np.int64],
    letter: BoolArray,
    shape: tuple[int, ...],
    margin: int,
) -> tuple[slice, slice]:
    """The box around the components `letter` marks (their `extent` rows: first row,
    row past the last, first column, column past the last), `margin` pixels wider.
    O(components)."""
    chosen = extent[letter]
    top = max(int(chosen[:, 0].min()) - margin, 0)
    bottom = min(int(chosen[:, 1].max()) + margin, shape[0])
    left = max(int(chosen[:, 2].min()) - margin, 0)
    right = min(int(chosen[:, 3].max()) + margin, shape[1])
    return slice(top, bottom), slice(left, right)


def _candidates(
    labels: IntArray, rgb: npt.NDArray[np.uint8], palette: FloatArray, flat: _FlatTest
) -> tuple[BoolArray, BoolArray, int, npt.NDArray[np.int64]] | None:
    """The pixels that may be small type, which of them are misfits, the commonest
    colour and every colour's pixel count; None when there are none. Candidates are the
    pixels of every colour but the commonest (and but colours on more than
    `MAX_INK_SHARE` of the image), and the misfits: pixels
    labelled with one of those colours though their lightness is further than `MISFIT`
    from it. A few whole-array passes over bytes: with a short palette (`_FEW_COLOURS`)
    each colour's pixels are one comparison, counted (a bincount casts every label to 64
    bits first); the misfits are compared with the few left-out colours' levels, with no
    lookup per pixel (more left out: looked up with `np.take`, half the cost of fancy
    indexing). O(N)."""
    k = len(palette)
    # Compared as bytes when the palette fits in them (-1, no label, becomes 255): a
    # comparison of bytes reads a quarter of the memory.
    small = labels.astype(np.uint8) if k < 255 else labels
    painted = small != 255 if k < 255 else labels >= 0
    counted = k <= _COUNTED_COLOURS
    colour_masks = [small == c for c in range(k)] if counted else None
    if colour_masks is not None:
        counts = np.array([np.count_nonzero(m) for m in colour_masks], dtype=np.int64)
    else:
        counts = np.bincount(labels.ravel() + 1, minlength=k + 1)[1:]
    share = counts <= MAX_INK_SHARE * labels.size
    commonest = int(np.argmax(counts))
    share[commonest] = False
    left_out = np.flatnonzero(~share).tolist()
    # Misfits by lightness alone (one channel, a third of the cost): small type is read
    # by its contrast in lightness, and JPEG keeps lightness best.
    level = np.rint(palette.sum(axis=1)).astype(np.int16)
    reach = _misfit_reach(level)
    if k == 2 and 3 * LEAST_PAIR_MISFIT <= reach.min() < 3 * SHORT_PAIR_MISFIT:
        ink = 1 - commonest
        mask = colour_masks[ink] if colour_masks is not None else small == ink
        if not _ink_at_least_half_way(rgb, mask, level, ink, commonest):
            reach[:] = 3 * MISFIT
    if k == 2 and _faint_pair(palette):
        reach[:] = _faint_reach(level, reach)
    lightness = _Lightness(rgb)
    if len(left_out) <= _FEW_COLOURS:
        # Misfits can only be of the few colours left out: compared to those levels.
        own = painted.copy()
        misfit: BoolArray | None = None
        nearer: BoolArray | None = None
        for colour in left_out:
            mask = colour_masks[colour] if colour_masks is not None else small == colour
            own &= ~mask
            far, near = lightness.outside(
                mask, palette[colour], int(level[colour]), 3 * MISFIT, int(reach[colour])
            )
            misfit = far if misfit is None else misfit | far
            if near is not None:
                nearer = near if nearer is None else nearer | near
        if misfit is None:
            misfit = np.zeros(labels.shape, dtype=bool)
        # The nearer level finds the same pixels or more (it is nearer): only when it
        # finds more does it matter whether the art fits its palette.
        if nearer is not None and nearer.any() and flat.holds():
            misfit |= nearer
    else:
        if (reach[left_out] < 3 * MISFIT).any() and not flat.holds():
            # A photo or a scan quantised to a few colours: far from its label says
            # nothing.
            reach[:] = 3 * MISFIT
        grey = lightness.whole().copy()
        own = np.take(share, labels) & painted
        grey -= np.take(level, labels)
        misfit = np.abs(grey, out=grey) > np.take(reach, labels)
        misfit &= painted
        misfit &= ~own
    candidate = own | misfit
    if not candidate.any():
        return None
    return candidate, misfit, commonest, counts.astype(np.int64)


def _faint_pair(palette: FloatArray) -> bool:
    """Whether a two-colour `palette` is a paper and a faint mixture: its colours under
    `MIN_CONTRAST` apart (8-px grey 180 type on white with `colors=2` gets a grey 221,
    59 sRGB from the white). O(1)."""
    apart = palette[1] - palette[0]
    return bool(np.sqrt((apart * apart).sum()) < MIN_CONTRAST)


def _faint_reach(
    level: npt.NDArray[np.int16], reach: npt.NDArray[np.int16]
) -> npt.NDArray[np.int16]:
    """The misfit level of a faint two-colour palette (`_faint_pair`): the whole way from
    one colour to the other, when at least `LEAST_PAIR_MISFIT` a channel and nearer than
    `reach`. Half the way to a grey 221 (17 levels a channel) is too near the white for
    ink, so the fixed level was used and the type's strokes the segmentation labelled
    white (grey 180: 75 levels) were never misfits, whole words erased ("save", "size");
    a pixel labelled paper that lies further from it than the palette's ink is more ink
    than the ink's own pixels. O(1)."""
    spread = int(abs(int(level[1]) - int(level[0])))
    if spread < 3 * LEAST_PAIR_MISFIT or spread >= int(reach.min()):
        return reach
    return np.full_like(reach, spread)


def _grey(rgb: npt.NDArray[np.uint8]) -> npt.NDArray[np.int32]:
    """Per pixel: its lightness, the sum of its channels, in 32 bits (for differences
    and doubling without overflow). O(pixels given)."""
    grey: npt.NDArray[np.int32] = rgb[..., 0].astype(np.int32) + rgb[..., 1] + rgb[..., 2]
    return grey


def _beyond_ink(rgb: npt.NDArray[np.uint8], palette: FloatArray, paper: int) -> BoolArray:
    """Per pixel: whether its lightness lies at least as far from the `paper`'s as the
    other colour of a two-colour `palette` does. O(pixels given)."""
    level = np.rint(palette.sum(axis=1)).astype(np.int32)
    grey = _grey(rgb)
    beyond: BoolArray = np.abs(grey - level[paper]) >= abs(
        int(level[1 - paper]) - int(level[paper])
    )
    return beyond


def _ink_at_least_half_way(
    rgb: npt.NDArray[np.uint8], mask: BoolArray, level: npt.NDArray[np.int16], ink: int, paper: int
) -> bool:
    """Whether the pixels labelled with the `ink` of a two-colour palette (`mask`) reach
    at most twice as far from the `paper`'s lightness as that ink does: the palette ink
    is then at least half the way to the type's own (grey 180 type with `colors=2`:
    1.5), and half the way to it is no paper. JPEG'd yellow type on blue with `colors=2`
    is labelled with a mixture a third of the way (its pixels reach 3.4 times as far):
    half the way to that mixture takes the ringing for ink (Sans 0.40 read 0.10). O(N)
    for the mask, O(pixels of the ink) for the rest."""
    pixels = rgb[mask]
    if not len(pixels):
        return False
    grey = pixels[:, 0].astype(np.int32) + pixels[:, 1] + pixels[:, 2]
    furthest = int(np.abs(grey - int(level[paper])).max())
    return furthest <= 2 * abs(int(level[ink]) - int(level[paper]))


def _misfit_reach(level: npt.NDArray[np.int16]) -> npt.NDArray[np.int16]:
    """Per palette colour (lightness `level`, sum of the channels): how far a pixel's
    lightness may be from it before the pixel is a misfit. `MISFIT` per channel, or half
    the way to the furthest colour of the palette when that is nearer (but the fixed
    level when half of it would be under `LEAST_MISFIT`, or `LEAST_PAIR_MISFIT` for a
    palette of two colours, so too close for ink): on a low-contrast pair a stroke
    covering two thirds of a pixel is still further from the paper than the fixed level
    lets it be. O(K²)."""
    spread = np.abs(level[:, None].astype(np.int32) - level[None, :]).max(axis=1)
    half = spread // 2
    least = LEAST_PAIR_MISFIT if len(level) == 2 else LEAST_MISFIT
    # No colour far enough for the nearer level (or none at all): the fixed one.
    nearer = (half >= 3 * least) & (half < 3 * MISFIT)
    reach: npt.NDArray[np.int16] = np.where(nearer, half, 3 * MISFIT).astype(np.int16)
    return reach


class _Lightness:
    """The pixels' lightness (sum of the channels, int16), read only where it is needed.

    Most pixels of flat art have their label's colour exactly, and such a pixel is no
    misfit (its lightness is its colour's), so `outside` compares the image with the
    colour as whole pixels (one comparison of 32-bit words, contiguous) and sums the
    channels of the other pixels only; summing all three channels over the whole image
    reads them strided and costs more than every other pass of the search together.
    The whole image's lightness is worked out once, when asked or when too many pixels
    are off their colour (`_FEW_OFF`)."""

    def __init__(self, rgb: npt.NDArray[np.uint8]) -> None:
        self._rgb = rgb
        self._grey: npt.NDArray[np.int16] | None = None
        four = rgb.ndim == 3 and rgb.shape[2] == 4 and rgb.flags.c_contiguous
        self._words = rgb.view(np.uint32)[..., 0] if four else None

    def whole(self) -> npt.NDArray[np.int16]:
        """Every pixel's lightness. O(N)."""
        if self._grey is None:
            # Channel by channel: summing over the strided last axis is ten times slower.
            grey = self._rgb[..., 0].astype(np.int16)
            grey += self._rgb[..., 1]
            grey += self._rgb[..., 2]
            self._grey = grey
        return self._grey

    def outside(
        self, mask: BoolArray, colour: FloatArray, level: int, reach: int, nearer: int
    ) -> tuple[BoolArray, BoolArray | None]:
        """The pixels of `mask` whose lightness is more than `reach` from `level`, and,
        when `nearer` is under `reach`, those more than `nearer` from it but not more
        than `reach` (None otherwise); `colour` is the mask's palette colour. Both
        levels are read from one gather of the pixels off the colour. O(N) word
        comparisons, then O(pixels off it)."""
        both = nearer < reach
        low, high = level - reach, level + reach
        exact = np.clip(np.rint(colour), 0, 255).astype(np.uint8)
        # A pixel of the colour exactly is within both levels when the colour is.
        inside = low <= int(exact.sum()) <= high
        if both:
            inside = inside and level - nearer <= int(exact.sum()) <= level + nearer
        if self._grey is None and self._words is not None and inside:
            word = np.array([*exact.tolist(), 255], dtype=np.uint8).view(np.uint32)[0]
            off = self._words != word
            off &= mask
            if np.count_nonzero(off) <= _FEW_OFF * off.size:
                index = np.flatnonzero(off)
                pixels = np.take(self._rgb.reshape(-1, 4), index, axis=0)
                grey = pixels[:, 0].astype(np.int16)
                grey += pixels[:, 1]
                grey += pixels[:, 2]
                beyond = (grey < low) | (grey > high)
                far = np.zeros(mask.shape, dtype=bool)
                far.ravel()[index] = beyond
                if not both:
                    return far, None
                near = np.zeros(mask.shape, dtype=bool)
                near.ravel()[index] = ((grey < level - nearer) | (grey > level + nearer)) & ~beyond
                return far, near
        whole = self.whole()
        found: BoolArray = mask & ((whole < low) | (whole > high))
        if not both:
            return found, None
        closer: BoolArray = mask & ((whole < level - nearer) | (whole > level + nearer))
        closer &= ~found
        return found, closer


class _FlatTest:
    """Whether the painted pixels' lightness is on average within `FLAT_FIT` of their
    label's, worked out once and only when asked (`holds`): flat art (plain or JPEG'd)
    and text are; a photo forced into two colours is not, and there a pixel half way
    between its two colours, or a speck near a letter-sized one, is no erased stroke.
    O(N / 9), when asked."""

    def __init__(self, labels: IntArray, rgb: npt.NDArray[np.uint8], palette: FloatArray) -> None:
        self._labels, self._rgb, self._palette = labels, rgb, palette
        self._answer: bool | None = None

    def holds(self) -> bool:
        if self._answer is None:
            # A mean: every third row and column tells it (a ninth of the cost).
            labels = self._labels[::_FLAT_STEP, ::_FLAT_STEP]
            rgb = self._rgb[::_FLAT_STEP, ::_FLAT_STEP]
            level = np.rint(self._palette.sum(axis=1)).astype(np.int16)
            painted = labels >= 0
            grey = rgb[..., 0].astype(np.int16) + rgb[..., 1] + rgb[..., 2]
            off = np.abs(grey - np.take(level, labels))
            total = int(np.count_nonzero(painted))
            if total < painted.size:
                off = off[painted]
            self._answer = total > 0 and int(off.sum(dtype=np.int64)) <= 3 * FLAT_FIT * total
        return self._answer


def _lightness_off(
    labels: IntArray, rgb: npt.NDArray[np.uint8], palette: FloatArray
) -> npt.NDArray[np.int16]:
    """Per pixel: how far its lightness (sum of the channels) is from its label's colour
    (from the first colour where unlabelled). O(pixels given)."""
    grey = rgb[..., 0].astype(np.int16) + rgb[..., 1] + rgb[..., 2]
    level = np.rint(palette.sum(axis=1)).astype(np.int16)
    off: npt.NDArray[np.int16] = np.abs(grey - level[np.maximum(labels, 0)])
    return off


def _label8(mask: BoolArray) -> tuple[IntArray, int, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The 8-connected components of `mask`, numbered 1.. in raster order of their first
    pixel (as `scipy.ndimage.label` numbers them; 0 off the mask), their count, their
    boxes (first row, row past the last, first column, column past the last) and areas.
    `find_letters` takes the runs (`_runs8`) and paints only the letters' box; this is
    the whole map, as SciPy gives it. O(N + R log R)."""
    runs = _runs8(mask)
    extent, area = runs.extents()
    whole = (slice(0, mask.shape[0]), slice(0, mask.shape[1]))
    found = runs.paint(whole, np.arange(1, runs.count + 1, dtype=np.int32))
    return found, runs.count, extent, area


@attrs.frozen(eq=False)
class _Runs:
    """The horizontal runs of a mask, in raster order, and the 8-connected component
    each belongs to (numbered 0.. in raster order of the component's first pixel)."""

    row: npt.NDArray[np.int64]
    start: npt.NDArray[np.int64]
    stop: npt.NDArray[np.int64]
    owner: IntArray
    count: int

    def extents(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Per component its box (first row, row past the last, first column, column
        past the last) and its area. O(R)."""
        n = self.count
        extent = np.empty((n, 4), dtype=np.int64)
        extent[:, 0] = np.iinfo(np.int64).max
        extent[:, 1] = 0
        extent[:, 2] = np.iinfo(np.int64).max
        extent[:, 3] = 0
        np.minimum.at(extent[:, 0], self.owner, self.row)
        np.maximum.at(extent[:, 1], self.owner, self.row + 1)
        np.minimum.at(extent[:, 2], self.owner, self.start)
        np.maximum.at(extent[:, 3], self.owner, self.stop)
        area = np.bincount(self.owner, weights=self.stop - self.start, minlength=n)
        return extent, area.astype(np.int64)

    def paint(self, window: tuple[slice, slice], value: IntArray) -> IntArray:
        """`value[c]` over the pixels of each component c inside `window` (slices with
        start and stop), 0 elsewhere. O(R + pixels painted)."""
        r0, r1 = int(window[0].start), int(window[0].stop)
        c0, c1 = int(window[1].start), int(window[1].stop)
        out = np.zeros((r1 - r0, c1 - c0), dtype=np.int32)
        start = np.maximum(self.start, c0)
        stop = np.minimum(self.stop, c1)
        seen = (self.row >= r0) & (self.row < r1) & (stop > start) & (value[self.owner] != 0)
        lengths = (stop - start)[seen]
        if not len(lengths):
            return out
        heads = (self.row[seen] - r0) * (c1 - c0) + start[seen] - c0
        total = int(lengths.sum())
        offsets = np.cumsum(lengths) - lengths
        flat = np.repeat(heads - offsets, lengths) + np.arange(total, dtype=np.int64)
        out.ravel()[flat] = np.repeat(value[self.owner[seen]], lengths)
        return out


def _runs8(mask: BoolArray) -> _Runs:
    """The runs of `mask` joined 8-connected: a run touches the runs of the next row
    whose columns overlap its own widened by one. Runs from one pass over the mask;
    the touching runs of the next row are a range found by binary search (both ends
    of a row's runs are sorted); components by `graphs.connected_components`, which
    numbers them by their smallest run, so in raster order of their first pixel (as
    `scipy.ndimage.label` does). O(N) for the runs, O(R log R) for the rest."""
    from printjob_adapters.engine.graphs import connected_components

    h, w = mask.shape
    pitch = w + 2
    padded = np.zeros((h, pitch), dtype=bool)
    padded[:, 1:-1] = mask
    flat = padded.ravel()
    # On booleans: `np.diff` of int8 costs six times as much.
    change = np.flatnonzero(flat[1:] != flat[:-1])
    heads, tails = change[0::2] + 1, change[1::2] + 1
    row = heads // pitch
    start = heads - row * pitch - 1
    stop = tails - row * pitch - 1
    # Keys in raster order: a run's first and last columns, in the rows after.
    begins = row * pitch + start
    ends = row * pitch + stop
    first = np.searchsorted(ends, begins + pitch, side="left")
    last = np.searchsorted(begins, ends + pitch, side="right")
    touching = np.maximum(last - first, 0)
    total = int(touching.sum())
    here = np.repeat(np.arange(len(row), dtype=np.int64), touching)
    offsets = np.cumsum(touching) - touching
    there = np.repeat(first - offsets, touching) + np.arange(total, dtype=np.int64)
    count, owner = connected_components(len(row), here, there)
    return _Runs(row=row, start=start, stop=stop, owner=owner, count=count)


def _join_fragments(runs: _Runs, shape: tuple[int, ...], flat: _FlatTest) -> _Runs:
    """`runs` with each fragment too short for a letter (under `MIN_HEIGHT` rows: an
    i's dot, a period, the top of an "s" whose middle is fainter than the misfit level)
    joined to the components within `FRAGMENT_GAP` pixels of it (a light 8-px caption
    is all such fragments: only its darkest pixels are candidates), when together they
    are no taller than `MAX_HEIGHT` (two lines of text are never joined). A letter of
    8-px type broken by a faint stroke is one letter again, and its dots are drawn with
    it. A stamp's speckle does not fit its palette, so is not joined. Only the
    fragments' runs are looked at: each, widened by the gap, finds the runs of the rows
    around it that it reaches by binary search (the runs' ends are sorted), and the
    components so linked are joined (`graphs.connected_components`). Components are
    numbered again in raster order of their first pixel. O(F log R) for F runs of
    fragments among R, no pass over the image. Only on art that fits its palette
    (`_FlatTest`)."""
    from printjob_adapters.engine.graphs import connected_components

    n = runs.count
    extent, _ = runs.extents()
    short = (extent[:, 1] - extent[:, 0]) < MIN_HEIGHT
    if not short.any() or n < 2:
        return runs
    reach = FRAGMENT_GAP + 1
    pitch = int(shape[1]) + 2 * reach + 2
    begins = runs.row * pitch + runs.start + reach
    ends = runs.row * pitch + runs.stop + reach
    mine = np.flatnonzero(short[runs.owner])
    near_rows = np.arange(-reach, reach + 1, dtype=np.int64)
    row = (runs.row[mine][:, None] + near_rows[None, :]).ravel()
    start = np.repeat(runs.start[mine], len(near_rows))
    stop = np.repeat(runs.stop[mine], len(near_rows))
    owner = np.repeat(runs.owner[mine], len(near_rows))
    # Runs of that row ending after start - reach and starting before stop + reach.
    first = np.searchsorted(ends, row * pitch + start, side="right")
    last = np.searchsorted(begins, row * pitch + stop + 2 * reach, side="left")
    touching = np.maximum(last - first, 0)
    total = int(touching.sum())
    offsets = np.cumsum(touching) - touching
    other = np.repeat(first - offsets, touching) + np.arange(total, dtype=np.int64)
    count, group = connected_components(n, np.repeat(owner, touching), runs.owner[other])
    top = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
    bottom = np.zeros(count, dtype=np.int64)
    np.minimum.at(top, group, extent[:, 0])
    np.maximum.at(bottom, group, extent[:, 1])
    members = np.bincount(group, minlength=count)
    joined = (members > 1) & (bottom - top <= MAX_HEIGHT)
    if not joined.any() or not flat.holds():
        return runs
    return _regrouped(runs, np.where(joined[group], n + group, np.arange(n)))


def _regrouped(runs: _Runs, target: npt.NDArray[np.int64]) -> _Runs:
    """`runs` with component i joined to every component of the same `target[i]`, the
    new components numbered in raster order of their first pixel (each one's smallest
    first run), as the labelling numbers them. O(R + n log n) for R runs and n
    components."""
    n = runs.count
    first_run = np.full(n, len(runs.row), dtype=np.int64)
    np.minimum.at(first_run, runs.owner, np.arange(len(runs.row), dtype=np.int64))
    _, new_id = np.unique(target, return_inverse=True)
    count = int(new_id.max()) + 1
    head = np.full(count, len(runs.row), dtype=np.int64)
    np.minimum.at(head, new_id, first_run)
    rank = np.empty(count, dtype=np.int32)
    rank[np.argsort(head, kind="stable")] = np.arange(count, dtype=np.int32)
    renumbered = rank[new_id][runs.owner].astype(np.int32)
    return _Runs(row=runs.row, start=runs.start, stop=runs.stop, owner=renumbered, count=count)


def _join_periods(runs: _Runs, extent: npt.NDArray[np.int64], flat: _FlatTest) -> _Runs:
    """`runs` with each mark too short for a letter (under `MIN_HEIGHT` rows, at most
    `PERIOD_SIZE` pixels wide) that sits on the bottom row of a letter of a line of type
    (`_text_lines`, within a row) at most `PERIOD_GAP` pixels after it joined to that
    letter: a monospace period three pixels after its letter is further than
    `FRAGMENT_GAP`. Tied to a line (three letters in a row), not to a pair: a star
    beside a galaxy is no period. Only on art that fits its palette (`_FlatTest`).
    O(L²) for the L letter-sized components, O(F · L) for the F marks."""
    height = extent[:, 1] - extent[:, 0]
    width = extent[:, 3] - extent[:, 2]
    mark = np.flatnonzero((height < MIN_HEIGHT) & (width <= PERIOD_SIZE))
    if not len(mark):
        return runs
    letter = np.flatnonzero(_text_lines(extent) >= 0)
    if not len(letter) or len(mark) * len(letter) > _MOST_PERIOD_PAIRS or not flat.holds():
        return runs
    gap = extent[mark, 2][:, None] - extent[letter, 3][None, :]
    baseline = np.abs(extent[mark, 1][:, None] - extent[letter, 1][None, :]) <= 1
    after = baseline & (gap >= 0) & (gap <= PERIOD_GAP)
    found = after.any(axis=1)
    if not found.any():
        return runs
    n = runs.count
    target = np.arange(n)
    # The nearest letter before the mark.
    nearest = np.where(after, gap, PERIOD_GAP + 1).argmin(axis=1)
    target[mark[found]] = letter[nearest[found]]
    return _regrouped(runs, target)


def _without_ringing(
    runs: _Runs,
    extent: npt.NDArray[np.int64],
    area: npt.NDArray[np.int64],
    candidate: BoolArray,
    misfit: BoolArray,
    rgb: npt.NDArray[np.uint8],
    palette: FloatArray,
    commonest: int,
    flat: _FlatTest,
    counts: npt.NDArray[np.int64],
) -> tuple[BoolArray, _Runs, BoolArray] | None:
    """The candidates without the pixels of JPEG's ringing in components mostly made of
    it, their runs, and the pixels left out; None when there are none.

    JPEG rings around coloured 8-px type (yellow on blue): the blocks around each word
    are labelled with tints of the paper and with mixtures whose colour the chroma blur
    moved but whose lightness is the paper's (JPEG keeps lightness best). Such a colour
    (lightness within `NEAR_PAPER` of the paper's) is no ink, but its pixels join a word
    into a blob voted to be of that colour (drawn as a blob), or every word of a
    paragraph into one component taller than `MAX_HEIGHT` (no word found). In a
    component at least `RINGING_SHARE` of pixels of the paper's lightness, they are left
    out (by their own lightness: a stroke the palette labelled with such a colour is
    ink), and the words' own pixels are words again. A shape of its own colour with a
    fringe of tints is mostly its own and is left whole. Only on art that fits a short
    palette (`_RINGING_COLOURS`, `_FlatTest`) with such a colour: a photo's palette is
    tens of colours, and its glows and shadows are no ringing; and only where some
    letters already stand in a line (`_text_lines`). A longer palette (to
    `_MOST_RINGING_COLOURS`) only on a page (`RINGING_PAPER_SHARE`) whose other pixels
    are mostly of the paper's lightness (`RINGING_PALETTE_SHARE`), from the colour
    counts alone: JPEG'd red on cream at q90 has no line before its ringing is out.
    O(K) when the palette has no such colour, O(L²) for the L letter-sized components
    when no line is found; else O(box of the components) and O(L²) again: the words
    must come out in lines."""
    papery = _papery(palette, commonest)
    if len(palette) > _MOST_RINGING_COLOURS or not papery.any():
        return None
    if len(palette) > _RINGING_COLOURS:
        # A longer palette: only where most pixels off the paper are of its lightness
        # (one sum over the palette's counts).
        total = int(counts.sum())
        off_paper = total - int(counts[commonest])
        if int(counts[commonest]) < RINGING_PAPER_SHARE * total:
            return None
        if int(counts[papery].sum()) < RINGING_PALETTE_SHARE * off_paper and not (
            (_text_lines(extent) >= 0).any()
        ):
            # ... or, on a page, where some words are read whole in a line already:
            # JPEG'd red on white at q90 (16 colours) has 0.48 of its pixels off the
            # white of the white's lightness, its type's tints the rest.
            return None
    elif not (_text_lines(extent) >= 0).any():
        # Some words are read whole in spite of the ringing (a line of letters already):
        # art with no line of type pays nothing more (a logo's shapes of the paper's
        # lightness would cost a pass over the image).
        return None
    if not flat.holds():
        return None
    level = palette.sum(axis=1)
    window = _window(extent, np.ones(runs.count, dtype=bool), candidate.shape, margin=0)
    # By each pixel's own lightness: a stroke labelled with a ringing colour is ink.
    near = rgb[window]
    grey = near[..., 0].astype(np.int16)
    grey += near[..., 1]
    grey += near[..., 2]
    ringing = np.abs(grey - int(np.rint(level[commonest]))) <= 3 * NEAR_PAPER
    ringing &= candidate[window]
    ringing &= ~misfit[window]
    owner = runs.paint(window, np.arange(1, runs.count + 1, dtype=np.int32))
    share = np.bincount(owner[ringing], minlength=runs.count + 1)[1:] / np.maximum(area, 1)
    mostly = np.concatenate([[False], share >= RINGING_SHARE])
    ringing &= mostly[owner]
    if not ringing.any():
        return None
    left_out = np.zeros(candidate.shape, dtype=bool)
    left_out[window] = ringing
    kept = candidate & ~left_out
    split = _join_fragments(_runs8(kept), kept.shape, flat)
    # Only where the words come out in lines: a galaxy's glow left out leaves cores
    # scattered, not letters in a row.
    inline = _in_text_lines(split)
    first = np.full(split.count, len(split.row), dtype=np.int64)
    np.minimum.at(first, split.owner, np.arange(len(split.row), dtype=np.int64))
    origin = owner[split.row[first] - window[0].start, split.start[first] - window[1].start]
    confirmed = np.zeros(runs.count + 1, dtype=bool)
    confirmed[origin[inline]] = True
    confirmed[0] = False
    if not confirmed.any():
        return None
    if not confirmed[owner[ringing]].all():
        ringing &= confirmed[owner]
        left_out[window] = ringing
        kept = candidate & ~left_out
        split = _join_fragments(_runs8(kept), kept.shape, flat)
    return kept, split, left_out


def _in_text_lines(runs: _Runs) -> BoolArray:
    """Per component of `runs`: whether it is a letter of a line of type
    (`_text_lines`). O(R + L²)."""
    extent, _ = runs.extents()
    inline: BoolArray = _text_lines(extent) >= 0
    return inline


def _text_lines(extent: npt.NDArray[np.int64]) -> IntArray:
    """Per component (its `extent`: first row, row past the last, first column, column
    past the last): the line of type it is a letter of, or -1. A line is at least
    `LINE_LETTERS` letter-sized components in a row, each pair of neighbours sharing
    half the shorter one's rows, no further apart than `LINE_GAP` times the taller
    one's height. None past `_MOST_LINE_LETTERS` letter-sized components (a photo's
    specks, not a page). O(L²) for the L letter-sized components."""
    height = extent[:, 1] - extent[:, 0]
    line = np.full(len(extent), -1, dtype=np.int32)
    sized = np.flatnonzero((height >= MIN_HEIGHT) & (height <= MAX_HEIGHT))
    if not LINE_LETTERS <= len(sized) <= _MOST_LINE_LETTERS:
        return line
    top, bottom, left, right = (extent[sized, c][:, None] for c in range(4))
    tall = height[sized][:, None]
    shared = np.minimum(bottom, bottom.T) - np.maximum(top, top.T)
    gap = np.maximum(left, left.T) - np.minimum(right, right.T)
    near = (2 * shared >= np.minimum(tall, tall.T)) & (gap <= LINE_GAP * np.maximum(tall, tall.T))
    here, there = np.nonzero(np.triu(near, 1))
    from printjob_adapters.engine.graphs import connected_components

    count, group = connected_components(len(sized), here, there)
    members = np.bincount(group, minlength=count)
    line[sized] = np.where(members[group] >= LINE_LETTERS, group, -1)
    return line


def _open_counters(
    runs: _Runs,
    extent: npt.NDArray[np.int64],
    area: npt.NDArray[np.int64],
    block: BoolArray,
    labels: IntArray,
    rgb: npt.NDArray[np.uint8],
    palette: FloatArray,
    commonest: int,
) -> BoolArray:
    """Per component: whether a `block` of a line of type is solid only by its label: its
    pixels off its box's sides nearer the paper's lightness than half the way to their
    label's colour (a counter the clean-up labelled with the ink) left out, it fills
    less than `SOLID` of its box. The 8-px bold "o" at JPEG q90 is 4 x 5 pixels with a
    1-px counter of grey 227 to 239 labelled black: a solid block, drawn as a blob by the
    ordinary tracer, and "order" and "colour" read "erder" and "coleur". A bullet or a
    filled square is dark throughout and stays solid. O(L²) for the lines, and
    O(pixels of the blocks' boxes) when some block is in a line of type."""
    chosen = block & (_text_lines(extent) >= 0)
    if not chosen.any():
        return chosen
    window = _window(extent, chosen, labels.shape, margin=0)
    number = np.where(chosen, np.arange(1, len(chosen) + 1), 0).astype(np.int32)
    found = runs.paint(window, number)
    inside = found > 0
    level = palette.sum(axis=1)
    here = labels[window][inside]
    grey = rgb[window][inside][:, :3].astype(np.float64).sum(axis=1)
    paper = level[commonest]
    # Unlabelled pixels (-1) are no counter: their label's level is the paper's.
    reach = np.where(here >= 0, np.abs(level[np.maximum(here, 0)] - paper), 0.0)
    light = 2 * np.abs(grey - paper) < reach
    # A counter is enclosed: off its box's sides (a 1-px "l" of light red type is light
    # throughout, and no hollow letter).
    rows, cols = np.nonzero(inside)
    box = extent[found[inside] - 1]
    rows += window[0].start
    cols += window[1].start
    light &= (rows > box[:, 0]) & (rows < box[:, 1] - 1)
    light &= (cols > box[:, 2]) & (cols < box[:, 3] - 1)
    opened = np.bincount(found[inside][light] - 1, minlength=len(chosen))
    height = extent[:, 1] - extent[:, 0]
    width = extent[:, 3] - extent[:, 2]
    hollow: BoolArray = chosen & (area - opened < SOLID * height * width)
    return hollow


def _papery(palette: FloatArray, commonest: int) -> BoolArray:
    """Per palette colour: whether its lightness is within `NEAR_PAPER` of the
    `commonest` colour's (the paper's; itself not counted). O(K)."""
    level = palette.sum(axis=1)
    papery: BoolArray = np.abs(level - level[commonest]) <= 3 * NEAR_PAPER
    papery[commonest] = False
    return papery


def _tints(palette: FloatArray, commonest: int) -> BoolArray:
    """Per palette colour (and a last entry for unlabelled pixels, False): whether it
    is a tint of the `commonest` colour, within `TINT` of it in every channel. O(K)."""
    near = np.abs(palette - palette[commonest]).max(axis=1) <= TINT
    near[commonest] = False
    tint: BoolArray = np.append(near, False)
    return tint


def _darker_half(
    rgb: npt.NDArray[np.uint8], found: IntArray, n: int, paper: FloatArray
) -> BoolArray:
    """Per pixel of the components `found` numbers (of `n`): whether its lightness lies
    at least half as far from the `paper`'s as its component's furthest pixel does (the
    component's strokes at half coverage or more, what the cut keeps). O(pixels
    given)."""
    inside = found > 0
    grey = _grey(rgb)
    far = np.abs(grey - int(np.rint(paper.sum())))
    top = np.zeros(n + 1, dtype=np.int32)
    np.maximum.at(top, found[inside], far[inside])
    darker: BoolArray = inside & (2 * far >= top[found])
    return darker


def _framed(
    inky: BoolArray,
    found: IntArray,
    near_labels: IntArray,
    extent: npt.NDArray[np.int64],
    letter: BoolArray,
    window: tuple[slice, slice],
) -> BoolArray:
    """Per component (those `letter` marks; `found` numbers them 1.. over the `window`,
    `near_labels` is the label map there, `extent` gives their boxes in the image):
    whether the four sides of its box are its own stroke (`inky`: no tint of the
    paper) of one palette colour, every pixel of them: a box drawn with sides of a
    pixel, a checkbox (its tick, touching a side, is of the same component), a frame.
    No letter fills its box's four sides in one colour: a round letter's corners are
    paper or lighter anti-aliasing, a square one ("E", "H") leaves a side open. A
    checkbox beside its label is letter-sized, thin and on one paper, so it passed for
    a glyph: drawn from its coverage in the labels' ink, its grey border and blue tick
    were lost. At least `FRAME_SIDE` pixels each way: a stem ("l", "I") fills its box,
    and a filled box that wide is thick (`_thick`). O(perimeters of the letter-sized
    components), no pass over the window."""
    framed = np.zeros(len(letter), dtype=bool)
    r0, c0 = int(window[0].start), int(window[1].start)
    top = extent[:, 0] - r0
    bottom = extent[:, 1] - 1 - r0
    left = extent[:, 2] - c0
    right = extent[:, 3] - 1 - c0
    height, width = bottom - top + 1, right - left + 1
    chosen = np.flatnonzero(letter & (height >= FRAME_SIDE) & (width >= FRAME_SIDE))
    if not len(chosen):
        return framed
    # Each side's pixels: a row of `width` at the top and the bottom, a column of
    # `height` at the left and the right (the corners read twice).
    _, across, step_x = groups(width[chosen])
    _, down, step_y = groups(height[chosen])
    row_x = left[chosen][across] + step_x
    column_y = top[chosen][down] + step_y
    ys = np.concatenate([top[chosen][across], bottom[chosen][across], column_y, column_y])
    xs = np.concatenate([row_x, row_x, left[chosen][down], right[chosen][down]])
    whose = np.concatenate([across, across, down, down])
    own = inky[ys, xs] & (found[ys, xs] == chosen[whose] + 1)
    # One colour: the top-left corner's.
    corner = near_labels[top[chosen], left[chosen]]
    own &= near_labels[ys, xs] == corner[whose]
    missing = np.bincount(whose[~own], minlength=len(chosen))
    framed[chosen] = missing == 0
    return framed


def _thick(candidate: BoolArray, found: IntArray, n: int) -> BoolArray:
    """Per component (of `n`): whether a 5x5 square of candidates lies inside it (no
    stroke of small type is that wide). O(pixels of the window given): a 5x5 erosion
    (outside the window counts as no candidate), row by row then column by column."""
    core = _erode(_erode(candidate, axis=1), axis=0)
    thick: BoolArray = np.bincount(found[core], minlength=n + 1)[1:] > 0
    return thick


def _dilate(component: IntArray, reach: int) -> IntArray:
    """The largest value within `reach` pixels (a square of side 2·reach+1) of each pixel
    of a map of non-negative values; off the array counts as 0 (for such maps, what
    `ndimage.grey_dilation` gives with its mirrored border). Rows, then columns, each on
    slices of the map in its own memory order (no transposed copy of it). O(pixels · reach)."""
    out = component
    for axis in (1, 0):
        grown = out.copy()
        for step in range(1, reach + 1):
            later, earlier = _along(axis, step)
            np.maximum(grown[later], out[earlier], out=grown[later])
            np.maximum(grown[earlier], out[later], out=grown[earlier])
        out = grown
    return np.ascontiguousarray(out)


def _erode(mask: BoolArray, axis: int, reach: int = 2) -> BoolArray:
    """Where `mask` and its `reach` neighbours on both sides along `axis` all hold; off
    the array counts as not holding. On slices in the mask's own memory order (no
    transposed copy). O(pixels · reach)."""
    out = mask.copy()
    for step in range(1, reach + 1):
        later, earlier = _along(axis, step)
        out[later] &= mask[earlier]
        out[earlier] &= mask[later]
        first, last = _along(axis, -step)
        out[first] = False
        out[last] = False
    return out


def _along(axis: int, step: int) -> tuple[tuple[slice, ...], tuple[slice, ...]]:
    """Index tuples of a 2-D array along `axis`: for `step` > 0, the pixels from `step` on
    and those up to `step` before the end (each one's neighbour `step` back, and forward);
    for `step` < 0, the first and the last |`step`| pixels."""
    if step > 0:
        later, earlier = slice(step, None), slice(None, -step)
    else:
        later, earlier = slice(None, -step), slice(step, None)
    whole = slice(None)
    if axis == 1:
        return (whole, later), (whole, earlier)
    return (later, whole), (earlier, whole)


def _extreme(
    rgb: npt.NDArray[np.uint8], off: npt.NDArray[np.int16], found: IntArray, index: IntArray
) -> FloatArray:
    """The ink of components `index` (in `found`) made mostly of misfits: the mean colour
    of each one's pixels furthest from their label's colour (at least three quarters of
    its largest distance), as the ink is where a stroke covers most of a pixel.
    O(N) (bincounts; `ndimage.maximum` would sort every pixel)."""
    size = int(found.max()) + 1
    wanted = np.zeros(size, dtype=bool)
    wanted[index] = True
    inside = wanted[found]
    owner = found[inside]
    distance = off[inside]
    top = np.zeros(size, dtype=off.dtype)
    np.maximum.at(top, owner, distance)
    strong = distance >= 0.75 * top[owner]
    owner = owner[strong]
    pixels = rgb[..., :3][inside][strong].astype(np.float64)
    weight = np.bincount(owner, minlength=size)
    sums = np.stack([np.bincount(owner, pixels[:, c], size) for c in range(3)], axis=1)
    colour: FloatArray = sums[index] / np.maximum(weight[index], 1)[:, None]
    return colour


def _shown_ink(
    rgb: npt.NDArray[np.uint8],
    component: IntArray,
    voted: BoolArray,
    ink: IntArray,
    paper: IntArray,
    palette: FloatArray,
    extent: npt.NDArray[np.int64],
) -> tuple[BoolArray, FloatArray]:
    """For the letters `voted` (their ink a palette colour), whether their own
    strongest pixels (`_extreme`, by lightness from their paper) fall short of that ink
    by more than `SHOWN_INK` of the way, or lie further than `BEYOND_INK` of the way,
    and the colour those pixels show for those that do: light grey type labelled with a
    darker palette colour is measured against its grey, or its lighter strokes fall
    under the cut; black type labelled with a grey (a short explicit colour count) is
    measured against its black, or its anti-aliasing fills its counters. Beyond only
    for letters of a line of type (`_text_lines` over the letters' `extent`) whose
    beyond letters also make lines of their own and are three or more and at least half
    of their palette ink's letters: a photo's specks are darker than the centre of the
    colour they were labelled with too, a few here and there, and are left as they
    were. The letters are still drawn in their palette ink. O(window), and O(L²)
    for the L letters when some letter lies beyond its ink."""
    level = np.rint(palette.sum(axis=1)).astype(np.int16)
    grey = rgb[..., 0].astype(np.int16) + rgb[..., 1] + rgb[..., 2]
    paper_level = np.concatenate([[0], level[np.maximum(paper, 0)]]).astype(np.int16)
    far: npt.NDArray[np.int16] = np.abs(grey - paper_level[component])
    index = np.flatnonzero(voted)
    seen = _extreme(rgb, far, component, (1 + index).astype(np.int32))
    ink_level = level[ink[index]].astype(np.float64)
    paper_side = level[paper[index]].astype(np.float64)
    span = np.where(ink_level == paper_side, 1.0, ink_level - paper_side)
    shown = (seen.sum(axis=1) - paper_side) / span
    apart: BoolArray = shown < SHOWN_INK
    beyond = shown > BEYOND_INK
    # A palette ink too near its paper for coverage (`MIN_CONTRAST`) leaves the letter to
    # the ordinary tracer as a blob of that tint; its own pixels may stand out further.
    faint = _faint_inks(palette, ink[index], paper[index], seen)
    apart |= faint
    beyond &= ~faint
    if beyond.any():
        beyond &= _text_lines(extent)[index] >= 0
        # A photo's specks beyond their colour stand among letter-sized ones, not in
        # lines of their own.
        chosen = np.flatnonzero(beyond)
        beyond[chosen] = _text_lines(extent[index[chosen]]) >= 0
        # Type in too few colours is so throughout: most letters of their ink.
        inks = ink[index]
        k = int(inks.max()) + 1
        many = np.bincount(inks[beyond], minlength=k)
        most = (2 * many >= np.bincount(inks, minlength=k)) & (many >= LINE_LETTERS)
        apart |= beyond & most[inks]
    return apart, seen[apart]


def _faint_inks(palette: FloatArray, ink: IntArray, paper: IntArray, seen: FloatArray) -> BoolArray:
    """Per letter (its palette `ink` and `paper`, its strongest pixels `seen`): whether
    its palette ink lies under `MIN_CONTRAST` from its paper while its own pixels stand
    out by more, on a palette of two colours. `colors=2` on light grey type labels it
    with a mixture of its grey and the white (grey 180 type gets a grey 221, 60 sRGB
    from the white), against which no coverage is measured, so every word was left as a
    blob of that tint. Two colours only: a longer palette has tints of its paper for
    the specks and glows of a photo (`sk-coffee-jpeg85` and `sk-hubble-deep-field`
    changed without this), and a tint there is no mixture made for want of colours.
    O(letters)."""
    if len(palette) != 2:
        return np.zeros(len(ink), dtype=bool)
    span = palette[ink] - palette[paper]
    own = seen - palette[paper]
    faint: BoolArray = (np.sqrt((span * span).sum(axis=1)) < MIN_CONTRAST) & (
        np.sqrt((own * own).sum(axis=1)) >= MIN_CONTRAST
    )
    return faint


def _on_clean_paper(off: npt.NDArray[np.int16], component: IntArray, n: int) -> BoolArray:
    """Per component: whether the pixels just around it look like their label's colour
    (mean lightness difference at most `RING_FIT`). An erased letter lies on paper that
    is the paper's colour; a patch of an unevenly lit page, whose light the segmentation
    divided out, lies on paper as far off as itself, and is no letter. O(window)."""
    around = _dilate(component, reach=1)
    ring = (around > 0) & (component == 0)
    owner = around[ring]
    total = np.bincount(owner, weights=off[ring].astype(np.float64), minlength=n + 1)[1:]
    count = np.bincount(owner, minlength=n + 1)[1:]
    fit: BoolArray = total <= 3 * RING_FIT * np.maximum(count, 1)
    return fit


def _paper(labels: IntArray, component: IntArray, n: int) -> IntArray:
    """The paper of each letter component: the colour of most of the pixels around it,
    or -1 when less than three quarters of them agree (a letter over a pattern or on
    the edge of two areas has no single paper). O(N)."""
    around = _dilate(component, reach=1)
    ring = (around > 0) & (component == 0) & (labels >= 0)
    owner = around[ring] - 1
    colour = labels[ring]
    k = int(labels.max()) + 1
    votes = np.bincount(owner * k + colour, minlength=n * k).reshape(n, k)
    best = votes.argmax(axis=1).astype(np.int32)
    total = votes.sum(axis=1)
    agree = votes[np.arange(n), best] >= 0.75 * np.maximum(total, 1)
    return np.where(agree & (total > 0), best, -1).astype(np.int32)


def coverage(
    rgb: npt.NDArray[np.uint8], palette: FloatArray, letters: Letters
) -> tuple[FloatArray, IntArray]:
    """Stage 2: ink coverage (0..1) of every pixel in the letters and two pixels around them (0
    elsewhere), and which letter each such pixel belongs to (0: none). A pixel's colour
    c = a·ink + (1 - a)·paper gives a as its projection on the paper→ink line."""
    owner = _dilate(letters.component, reach=2)
    near = owner > 0
    ink = letters.ink_colour[owner[near] - 1]
    paper = palette[letters.paper[owner[near] - 1]]
    span = ink - paper
    pixels = rgb[near][:, :3].astype(np.float64)
    if letters.ringing is None:
        along = ((pixels - paper) * span).sum(axis=1)
        length = np.maximum((span * span).sum(axis=1), 1e-9)
    else:
        # JPEG'd coloured type: the chroma is blurred over the paper and keeps ringing,
        # the lightness (what JPEG keeps best) holds the letters' shape.
        rise = span.sum(axis=1)
        along = (pixels - paper).sum(axis=1) * rise
        length = np.maximum(rise * rise, 1e-9)
    amount = np.zeros(letters.component.shape, dtype=np.float64)
    amount[near] = np.clip(along / length, 0.0, 1.0)
    # Per letter, not per pixel: a letter whose ink barely stands out from its paper
    # (a patch of JPEG's ringing) owns nothing, and the others keep their pixels. Read
    # per pixel by letter number, the first letters of the page lost their coverage
    # whenever the first pixels in raster order were of such a patch (9-px Mono red on
    # cream, q90: three lines of words drawn as blobs by the ordinary tracer).
    reach = letters.ink_colour - palette[letters.paper]
    strong = np.sqrt((reach * reach).sum(axis=1)) >= MIN_CONTRAST
    owner = np.where(near, owner, 0).astype(np.int32)
    owner[near & ~strong[np.maximum(owner, 1) - 1]] = 0
    amount[owner == 0] = 0.0
    return amount, owner


def glyph_labels(
    amount: FloatArray, owner: IntArray, letters: Letters, palette: FloatArray
) -> Glyphs | None:
    """Stage 3: the ink at `SCALE` times over the letters' bounding box (one pixel of
    margin), cut at half coverage; each zoomed pixel takes its letter's ink colour."""
    rows = np.flatnonzero(owner.any(axis=1))
    cols = np.flatnonzero(owner.any(axis=0))
    if len(rows) == 0:
        return None
    y0, y1 = max(int(rows[0]) - 1, 0), min(int(rows[-1]) + 2, owner.shape[0])
    x0, x1 = max(int(cols[0]) - 1, 0), min(int(cols[-1]) + 2, owner.shape[1])
    box = amount[y0:y1, x0:x1].astype(np.float32)
    size = ((x1 - x0) * SCALE, (y1 - y0) * SCALE)
    zoomed = np.asarray(Image.fromarray(box).resize(size, Image.Resampling.BICUBIC))
    whose = np.repeat(np.repeat(owner[y0:y1, x0:x1], SCALE, axis=0), SCALE, axis=1)
    inside = whose > 0
    ink = (zoomed >= _cut(zoomed[inside])) & inside
    if not ink.any():
        return None
    labels = np.where(ink, letters.ink[np.maximum(whose, 1) - 1], -1).astype(np.int32)
    # Flat colours for the tracer's edge placement: the cut is the edge, to the zoomed
    # pixel, so no sub-pixel shift should move it.
    paper = letters.paper[np.maximum(whose, 1) - 1]
    shown = np.where(ink, labels, paper)
    rgba = np.empty((*labels.shape, 4), dtype=np.uint8)
    # Colours looked up as bytes: a float copy of the zoomed box would be 24 bytes a pixel.
    rgba[..., :3] = np.clip(np.rint(palette), 0, 255).astype(np.uint8)[shown]
    rgba[..., 3] = 255
    return Glyphs(labels=labels, rgba=rgba, x0=x0, y0=y0)


def _cut(zoomed: npt.NDArray[np.float32]) -> float:
    """The coverage above which a zoomed pixel is ink: Otsu's threshold over the zoomed
    letters, the cut a reader's eye (and OCR's binarisation) makes on the smoothly
    zoomed input. Half coverage would lose a thin stroke whose ink is shared by two
    pixels (each under one half, and so its zoom): on 8-px type the cut falls near 0.3.
    Kept between `LEAST_CUT` (a faint fringe is no ink) and one half (a stroke is never
    drawn thinner than the plain cut). O(n) (one histogram)."""
    if len(zoomed) == 0:
        return 0.5
    bins = 100
    counts = np.bincount(
        np.clip((zoomed * bins).astype(np.int64), 0, bins - 1), minlength=bins
    ).astype(np.float64)
    share = counts / counts.sum()
    level = (np.arange(bins) + 0.5) / bins
    below = np.cumsum(share)
    mean_below = np.cumsum(share * level)
    spread = (mean_below[-1] * below - mean_below) ** 2 / np.maximum(below * (1 - below), 1e-12)
    cut = float(np.argmax(spread[:-1]) + 1) / bins
    return min(max(cut, LEAST_CUT), 0.5)


def _ink_in_palette(letters: Letters, palette: FloatArray) -> Letters | None:
    """Letters whose ink is no palette colour take a palette colour: the one theirs is
    a mixture of with their paper (thin strokes never cover a pixel whole, so their
    darkest pixels are still partly paper), else one within `SAME_INK`, else the
    nearest that stands out from their paper by `MIN_CONTRAST`. No colour is added, so
    the file keeps the colours the segmentation chose (an explicit `colors=N` too); a
    letter with no such colour (one colour asked for) is left as the segmentation drew
    it. None when no letter is left. O(letters · K)."""
    missing = np.flatnonzero(letters.ink < 0)
    if len(missing) == 0:
        return letters
    colour = letters.ink_colour[missing]
    paper = palette[letters.paper[missing]]
    span = palette[None, :, :] - paper[:, None, :]
    offset = colour - paper
    amount, apart, length = _along_mixture(offset[:, None, :], span)
    stands_out = np.sqrt(length) >= MIN_CONTRAST
    mixture = (amount >= MIN_MIX) & (amount <= 1.0 + MIN_MIX) & (apart <= MIX_RESIDUAL)
    mixture &= stands_out
    distance = np.sqrt(((colour[:, None, :] - palette[None, :, :]) ** 2).sum(axis=2))
    # A grey is a mixture of white paper and every darker grey: the letter's measured
    # ink (its darkest pixels, still partly paper) lies between its paper and its ink,
    # so a palette colour it overshoots is a tint, taken only when no colour lies beyond
    # it. JPEG'd black type at q60 (white, a grey 141, black) had a third of its letters
    # measured at greys 60 to 110 drawn in the grey 141 (ties went to the lower index).
    overshot = np.where(amount > 1.0 + MIX_BEYOND, 500.0, 0.0)
    score = np.where(
        mixture,
        apart + overshot,
        np.where(
            distance <= SAME_INK,
            distance + 1e3,
            np.where(stands_out, distance + 2e3, np.inf),
        ),
    )
    best = score.argmin(axis=1).astype(np.int32)
    found = np.isfinite(score[np.arange(len(missing)), best])
    ink = letters.ink.copy()
    ink[missing] = np.where(found, best, -1)
    usable = ink >= 0
    if not usable.any():
        return None
    component = letters.component
    if not usable.all():
        keep = np.concatenate([[0], np.cumsum(usable).astype(np.int32)])
        keep[1:][~usable] = 0
        component = keep[component]
    ink = ink[usable]
    # On flat art the coverage is measured against the ink as it is in the image (a grey
    # caption drawn with the palette's black keeps the shape its grey strokes give it).
    return Letters(
        component=component,
        ink=ink,
        paper=letters.paper[usable],
        ink_colour=letters.ink_colour[usable] if letters.measured_coverage else palette[ink],
        fits=letters.fits,
        ringing=letters.ringing,
    )


def _beyond_their_tint(
    letters: Letters, palette: FloatArray, rgb: npt.NDArray[np.uint8]
) -> Letters:
    """Letters of a line of type labelled with a tint whose own strongest pixels lie
    beyond it, given back to `_ink_in_palette` to take the palette colour those pixels
    are a mixture of.

    JPEG'd black type at q60 is segmented into white, a grey 141 and black; a letter
    whose pixels are mostly the grey (its strokes thinned by the blocks) voted for the
    grey and was printed in it beside black words ("der" of "order", "file"), its
    strongest pixels (`_strongest`) a black of 20 to 23. A letter whose strongest
    pixels lie more than `BEYOND_INK` of the way past its palette ink, that ink a
    mixture of its paper and another palette colour, is such a letter: grey type
    really printed in the grey has its strongest pixels at the grey and keeps it. Only
    letters in lines of type (`_text_lines`): a photo's specks are darker than
    the colour they were labelled with too. Automatic colours only: an explicit count
    keeps one ink per line (`_one_ink_per_line`). O(pixels of the letters) + O(L²)."""
    voted = letters.ink >= 0
    if not voted.any():
        return letters
    seen, _ = _strongest(rgb, letters, palette)
    paper = palette[letters.paper]
    span = palette[np.maximum(letters.ink, 0)] - paper
    amount, _, length = _along_mixture(seen - paper, span)
    beyond = voted & (amount > BEYOND_INK) & (np.sqrt(length) >= MIN_CONTRAST)
    if not beyond.any():
        return letters
    # Only a tint: a mixture of the paper and another palette colour. A letter whose
    # palette ink is the only ink would take it again, measured against its own pixels
    # instead (8-px Serif red on cream at q75, two colours: 0.88 read 0.81).
    towards = palette[None, :, :] - paper[:, None, :]
    along, apart, _ = _along_mixture(span[:, None, :], towards)
    beyond &= ((along > 0.0) & (along < 1.0) & (apart <= MIX_RESIDUAL)).any(axis=1)
    if not beyond.any():
        return letters
    beyond &= _text_lines(_letter_extents(letters.component, letters.count)) >= 0
    if not beyond.any():
        return letters
    return attrs.evolve(
        letters,
        ink=np.where(beyond, -1, letters.ink).astype(np.int32),
        ink_colour=np.where(beyond[:, None], seen, letters.ink_colour),
    )


def _along_mixture(
    offset: FloatArray, span: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Where colours lie on the line from a paper to an ink: `offset` is each colour less
    its paper, `span` the ink less the paper (broadcast against each other on the last
    axis, sRGB). Returns the amount of ink (0 at the paper, 1 at the ink), the distance
    off the line, and the squared span (floored, so a span of zero divides). O(elements)."""
    length = np.maximum((span * span).sum(axis=-1), 1e-9)
    amount = (span * offset).sum(axis=-1) / length
    apart = np.sqrt(((offset - amount[..., None] * span) ** 2).sum(axis=-1))
    return amount, apart, length


def _one_ink_per_line(letters: Letters, palette: FloatArray, rgb: npt.NDArray[np.uint8]) -> Letters:
    """Letters of a line of type labelled with a tint of the line's ink take that ink.

    With an explicit colour count a grey caption's letters are labelled with the
    palette's dark ink or with a light tint of it, letter by letter, as their strongest
    pixels fall (a caption in two inks). A letter whose palette ink lies between its
    paper and the ink most letters of its line (`_text_lines`) have, on the line from
    one to the other (`MIX_RESIDUAL`), is such a letter. O(letters · K) when no letter
    is labelled with a tint of another letter's ink; else O(N) for the letters' boxes,
    O(L²) for the lines and O(pixels of the letters) for their strongest pixels."""
    k = len(palette)
    paper = palette[letters.paper]
    used = np.unique(letters.ink)
    span = palette[used][None, :, :] - paper[:, None, :]
    offset = (palette[letters.ink] - paper)[:, None, :]
    amount, apart, _ = _along_mixture(offset, span)
    tint_of_some = ((amount > 0.0) & (amount < 1.0) & (apart <= MIX_RESIDUAL)).any(axis=1)
    if not tint_of_some.any():
        return letters
    line = _text_lines(_letter_extents(letters.component, letters.count))
    inline = line >= 0
    if not inline.any():
        return letters
    lines = int(line.max()) + 1
    votes = np.bincount(line[inline] * k + letters.ink[inline], minlength=lines * k)
    main = votes.reshape(lines, k).argmax(axis=1)
    target = np.where(inline, main[np.maximum(line, 0)], letters.ink)
    towards = palette[target] - paper
    reach = np.maximum((towards * towards).sum(axis=1), 1e-9)
    own = palette[letters.ink] - paper
    along = (own * towards).sum(axis=1) / reach
    off = np.sqrt(((own - along[:, None] * towards) ** 2).sum(axis=1))
    tinted = inline & (target != letters.ink) & (along > 0.0) & (along < 1.0)
    tinted &= off <= MIX_RESIDUAL
    if not tinted.any():
        return letters
    ink = np.where(tinted, target, letters.ink).astype(np.int32)
    # Their coverage is measured against their own strongest pixels: against the line's
    # darker ink a light letter's strokes would fall under the cut and vanish.
    seen, _ = _strongest(rgb, letters, palette)
    colour = letters.ink_colour.copy()
    colour[tinted] = seen[tinted]
    return attrs.evolve(letters, ink=ink, ink_colour=colour)


def _letter_extents(component: IntArray, count: int) -> npt.NDArray[np.int64]:
    """Per letter of `component` (of `count`): its box (first row, row past the last,
    first column, column past the last). O(pixels of the letters)."""
    rows, cols = np.nonzero(component)
    owner = component[rows, cols] - 1
    extent = np.empty((count, 4), dtype=np.int64)
    extent[:, 0] = rows.max() + 1
    extent[:, 1] = 0
    extent[:, 2] = cols.max() + 1
    extent[:, 3] = 0
    np.minimum.at(extent[:, 0], owner, rows)
    np.maximum.at(extent[:, 1], owner, rows + 1)
    np.minimum.at(extent[:, 2], owner, cols)
    np.maximum.at(extent[:, 3], owner, cols + 1)
    return extent


def _one_ink_per_run(
    letters: Letters, palette: FloatArray, rgb: npt.NDArray[np.uint8], segmented: int
) -> tuple[Letters, FloatArray]:
    """JPEG'd coloured type drawn in one ink per run of type, not a tint per letter.

    JPEG q90 red type on cream is segmented into 20 to 28 colours, the red in several
    tints (the chroma blur spreads it thin over each 8-px letter), and each letter took
    the tint most of its pixels have: a word pink, the next dark red, 13 to 17 colours
    in the file where a print shop wants the text in one ink. The letters of a line of
    type (`_text_lines`) on one paper are one run; runs whose inks (the median of their
    letters' strongest quarter, `_strongest`) lie within `SAME_INK` of one another are
    one ink. A letter whose own strongest pixels are that ink, or a mixture of it with
    the paper (`MIX_RESIDUAL`), is drawn in it (added as a colour: automatic colours
    only) and its coverage measured against it, so every letter of the run has the
    same weight; a word in another ink keeps its own. Only where JPEG's ringing was
    left out (`Letters.ringing`). O(pixels of the letters) + O(L²) for the lines."""
    if letters.count < LINE_LETTERS:
        return letters, palette
    extent = _letter_extents(letters.component, letters.count)
    line = _text_lines(extent)
    inline = line >= 0
    if not inline.any():
        return letters, palette
    seen, strength = _strongest(rgb, letters, palette)
    # One run per line and paper.
    k = len(palette)
    run_key = np.where(inline, line * k + letters.paper, -1)
    runs, run_of = np.unique(run_key[inline], return_inverse=True)
    run_ink = np.empty((len(runs), 3), dtype=np.float64)
    for r in range(len(runs)):
        mine = run_of == r
        chosen = np.flatnonzero(inline)[mine]
        strong = chosen[strength[chosen] >= np.quantile(strength[chosen], 0.75)]
        run_ink[r] = np.median(seen[strong], axis=0)
    # Runs on one paper with inks within `SAME_INK` are one ink.
    run_paper = runs % k
    near = np.sqrt(((run_ink[:, None, :] - run_ink[None, :, :]) ** 2).sum(axis=2)) <= SAME_INK
    near &= run_paper[:, None] == run_paper[None, :]
    here, there = np.nonzero(np.triu(near, 1))
    from printjob_adapters.engine.graphs import connected_components

    groups, group_of = connected_components(len(runs), here, there)
    letter_group = np.full(letters.count, -1, dtype=np.int64)
    letter_group[inline] = group_of[run_of]
    ink = letters.ink.copy()
    colour = letters.ink_colour.copy()
    added: list[FloatArray] = []
    for g in range(groups):
        chosen = np.flatnonzero(letter_group == g)
        strong = chosen[strength[chosen] >= np.quantile(strength[chosen], 0.75)]
        new = np.median(seen[strong], axis=0)
        paper = palette[letters.paper[chosen]]
        amount, apart, length = _along_mixture(seen[chosen] - paper, new - paper)
        same = np.sqrt(((seen[chosen] - new) ** 2).sum(axis=1)) <= SAME_INK
        mixed = (
            (apart <= RUN_RESIDUAL * np.sqrt(length))
            & (amount >= MIN_MIX)
            & (amount <= 1.0 + MIX_BEYOND)
        )
        members = chosen[same | mixed]
        # A run already in one ink (JPEG'd yellow on blue: its foreign ink) is left as it is.
        if len(members) < LINE_LETTERS or (ink[members] == ink[members[0]]).all():
            continue
        ink[members] = k + len(added)
        # Each letter's coverage against its own strongest pixels: a thin letter's are
        # still partly paper, and against the run's ink its strokes fell under the cut
        # (Sans 0.75 against 0.88).
        kept = letters.ink[members] >= segmented
        colour[members] = np.where(kept[:, None], letters.ink_colour[members], seen[members])
        added.append(new)
    return _with_added_inks(letters, palette, ink, colour, added)


def _own_inks(
    letters: Letters, palette: FloatArray, rgb: npt.NDArray[np.uint8]
) -> tuple[Letters, FloatArray]:
    """Letters whose own ink stops short of their palette ink, drawn in their own ink.

    A grey caption beside black type has no palette colour of its own (the segmentation
    takes its few pixels for anti-aliasing of the black) and would print in the black.
    A letter whose measured ink (`Letters.ink_colour`: its strongest pixels) lies less
    than `OWN_SHARE` of the way from its paper to its palette ink is such type: thin
    strokes of the palette ink itself reach 0.8 of the way or more. When at least
    `MIN_OWN_LETTERS` letters of one palette ink are such, and `OWN_PART` of that ink's
    letters, the median ink of their strongest quarter is added as a colour of its own
    and they are drawn in it (automatic colours only: an explicit count stays exact).
    Letters of the same caption labelled with a lighter tint of that ink are drawn in it
    too (`_tinted_letters`). O(letters · K), and O(pixels of the letters) when some
    letter is labelled with such a tint."""
    ink_colour = letters.ink_colour
    paper = palette[letters.paper]
    span = palette[letters.ink] - paper
    length = np.maximum((span * span).sum(axis=1), 1e-9)
    shown = ((ink_colour - paper) * span).sum(axis=1) / length
    short = shown < OWN_SHARE
    ink = letters.ink.copy()
    colour = ink_colour.copy()
    added: list[FloatArray] = []
    for group in np.unique(ink[short]).tolist():
        mine = letters.ink == group
        own = mine & short
        many = int(own.sum()) >= MIN_OWN_LETTERS and own.sum() >= OWN_PART * mine.sum()
        if not many:
            continue
        # The strongest quarter: a thin letter's strongest pixels are still partly paper.
        strong = own & (shown >= np.quantile(shown[own], 0.75))
        new = np.median(ink_colour[strong], axis=0)
        tinted = _tinted_letters(letters, palette, rgb, own, new) & (ink == letters.ink)
        ink[own | tinted] = len(palette) + len(added)
        colour[own | tinted] = new
        added.append(new)
    return _with_added_inks(letters, palette, ink, colour, added)


def _with_added_inks(
    letters: Letters,
    palette: FloatArray,
    ink: IntArray,
    colour: FloatArray,
    added: list[FloatArray],
) -> tuple[Letters, FloatArray]:
    """The letters with their new `ink` indices and `colour`s, and the palette grown by the
    `added` inks (those indices count on from the palette's end); as they were when
    nothing was added. O(letters + K)."""
    if not added:
        return letters, palette
    grown = np.concatenate([palette, np.array(added, dtype=np.float64)])
    return attrs.evolve(letters, ink=ink, ink_colour=colour), grown


def _tinted_letters(
    letters: Letters,
    palette: FloatArray,
    rgb: npt.NDArray[np.uint8],
    own: BoolArray,
    added: FloatArray,
) -> BoolArray:
    """Which letters belong with the `own` letters (of one palette ink) though labelled
    with a tint of it: the detail stage keeps a light tint where a thin stroke is drawn
    in it with paper on both sides (`detail._resolve_tints`, for 1-px outlines), and a
    grey caption's thinnest strokes are such pixels, so a few of its letters vote for
    the tint and would print in it beside the rest in the `added` ink. A letter on the
    own letters' paper whose palette ink is a mixture of that paper and their palette
    ink lying short of the added ink, and whose strongest pixels (`_strongest`) are
    nearer the added ink than that tint, is such a letter; light type really printed in
    the tint keeps it. O(letters), and O(pixels of the letters) when some letter is
    labelled with such a tint."""
    group = int(letters.ink[own][0])
    paper = palette[letters.paper]
    span = palette[group] - paper
    amount, apart, length = _along_mixture(palette[letters.ink] - paper, span)
    reach = ((added - paper) * span).sum(axis=1) / length
    tinted: BoolArray = (letters.ink != group) & np.isin(letters.paper, letters.paper[own])
    tinted &= (apart <= MIX_RESIDUAL) & (amount > 0.0) & (amount < reach)
    if not tinted.any():
        return tinted
    seen, _ = _strongest(rgb, letters, palette)
    to_added = ((seen - added) ** 2).sum(axis=1)
    to_tint = ((seen - palette[letters.ink]) ** 2).sum(axis=1)
    nearer: BoolArray = to_added < to_tint
    return tinted & nearer


def _foreign_inks(
    letters: Letters, palette: FloatArray, rgb: npt.NDArray[np.uint8]
) -> tuple[Letters, FloatArray]:
    """Letters labelled with a palette colour that is not their ink, drawn in their own.

    JPEG's chroma blur leaves yellow 8-px type on blue without a yellow in the palette:
    its words are labelled with a grey-green mixture and the blue's ringing, and drawn
    in those they are illegible. Each letter's ink is measured from its own strongest
    pixels (`_strongest`: furthest from its paper); when it is further than `SAME_INK`
    from every palette colour, and at least `MIN_OWN_LETTERS` letters on one paper
    colour (and `OWN_PART` of its letters) are such, the median ink of their strongest
    quarter is added and they are drawn in it (automatic colours only). O(pixels of
    the letters) + O(letters · K)."""
    seen, strength = _strongest(rgb, letters, palette)
    apart = np.sqrt(((seen[:, None, :] - palette[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    # A thin stroke of a palette colour is a mixture of it and the paper (on the line
    # between them, not beyond): that ink is in the palette already.
    paper = palette[letters.paper]
    span = palette[None, :, :] - paper[:, None, :]
    amount, residual, _ = _along_mixture((seen - paper)[:, None, :], span)
    mixed = ((residual <= MIX_RESIDUAL) & (amount <= 1.0 + MIX_BEYOND)).any(axis=1)
    # Only letters mostly of their own palette colour: a letter of misfits (a speck
    # the clean-up merged away, or type it erased) takes a palette colour as before.
    foreign = (apart > SAME_INK) & ~mixed & (letters.ink >= 0)
    ink = letters.ink.copy()
    colour = letters.ink_colour.copy()
    added: list[FloatArray] = []
    for group in np.unique(letters.paper[foreign]).tolist():
        mine = letters.paper == group
        own = mine & foreign
        if int(own.sum()) < MIN_OWN_LETTERS or own.sum() < OWN_PART * mine.sum():
            continue
        strong = own & (strength >= np.quantile(strength[own], 0.75))
        new = np.median(seen[strong], axis=0)
        ink[own] = len(palette) + len(added)
        colour[own] = new
        added.append(new)
    return _with_added_inks(letters, palette, ink, colour, added)


def _strongest(
    rgb: npt.NDArray[np.uint8], letters: Letters, palette: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Per letter: the mean colour of its pixels furthest from its paper (at least three
    quarters of its largest sRGB distance), and that mean's distance from the paper.
    O(pixels of the letters)."""
    inside = letters.component > 0
    owner = letters.component[inside] - 1
    pixels = rgb[inside][:, :3].astype(np.float64)
    paper = palette[letters.paper]
    distance = np.sqrt(((pixels - paper[owner]) ** 2).sum(axis=1))
    top = np.zeros(letters.count, dtype=np.float64)
    np.maximum.at(top, owner, distance)
    strong = distance >= 0.75 * top[owner]
    weight = np.maximum(np.bincount(owner[strong], minlength=letters.count), 1)
    seen = (
        np.stack(
            [np.bincount(owner[strong], pixels[strong, c], letters.count) for c in range(3)], axis=1
        )
        / weight[:, None]
    )
    strength = np.sqrt(((seen - paper) ** 2).sum(axis=1))
    return seen, strength


@attrs.frozen(eq=False)
class TextOverlay:
    """What `overlay` found: the segmentation without its small letters, and the glyphs
    to trace and draw over it."""

    segmentation: Segmentation
    glyphs: Glyphs
    palette: FloatArray


def overlay(
    rgba: npt.NDArray[np.uint8], segmentation: Segmentation, *, automatic: bool = False
) -> TextOverlay | None:
    """Stages 1 to 3 for one segmentation; None when it holds no small text. With
    `automatic` colours (no count asked for), type printed in an ink the palette lacks
    (a grey caption) is drawn in that ink (`_own_inks`)."""
    labels = np.asarray(segmentation.labels, dtype=np.int32)
    palette = np.asarray(segmentation.palette, dtype=np.float64)
    letters = find_letters(labels, rgba, palette)
    if letters is None or _box_pixels(letters.component) > MAX_BOX_PIXELS:
        return None
    measured = letters.measured_coverage
    if automatic and letters.fits:
        letters, palette = _foreign_inks(letters, palette, rgba)
    if automatic and measured:
        letters = _beyond_their_tint(letters, palette, rgba)
    letters = _ink_in_palette(letters, palette)
    if letters is None:
        return None
    if automatic and measured:
        letters, palette = _own_inks(letters, palette, rgba)
    if automatic and letters.ringing is not None:
        letters, palette = _one_ink_per_run(letters, palette, rgba, len(segmentation.palette))
    elif not automatic:
        letters = _one_ink_per_line(letters, palette, rgba)
    amount, owner = coverage(rgba, palette, letters)
    glyphs = glyph_labels(amount, owner, letters, palette)
    if glyphs is None:
        return None
    inside = letters.component > 0
    inside &= owner > 0
    without = labels.copy()
    without[inside] = letters.paper[letters.component[inside] - 1]
    if letters.ringing is not None:
        ringing = letters.ringing & (owner > 0)
        without[ringing] = letters.paper[owner[ringing] - 1]
    return TextOverlay(
        segmentation=attrs.evolve(segmentation, labels=without),
        glyphs=glyphs,
        palette=palette,
    )


def _box_pixels(component: IntArray) -> int:
    """Pixels of the box around every letter. O(N)."""
    rows = np.flatnonzero(component.any(axis=1))
    cols = np.flatnonzero(component.any(axis=0))
    if len(rows) == 0:
        return 0
    return int(rows[-1] - rows[0] + 1) * int(cols[-1] - cols[0] + 1)


def draw_over(art: VectorArt, text: TextOverlay, checkpoint: Checkpoint) -> VectorArt:
    """Stage 4: trace the glyphs and add them on top of `art`, in design units."""
    from printjob_adapters.engine.segmentation import Segmentation
    from printjob_adapters.engine.vectorise import vectorise

    glyphs = text.glyphs
    used = np.unique(glyphs.labels[glyphs.labels >= 0])
    index = np.full(len(text.palette) + 1, -1, dtype=np.int32)
    index[used] = np.arange(len(used), dtype=np.int32)
    drawn = vectorise(
        glyphs.rgba,
        Segmentation(
            labels=index[glyphs.labels], palette=text.palette[used], background_removed=False
        ),
        checkpoint,
    )
    scale = 1.0 / SCALE
    # The letters' ink may have been the only use of its colour in the art: no empty layer.
    # (Read from the op codes: a photo's layers never become command tuples.)
    layers = [layer for layer in art.layers if not layer.is_empty()]
    for layer in drawn.layers:
        if layer.is_empty():
            continue
        outline = layer.as_outline()
        points = outline.points * scale + np.array([glyphs.x0, glyphs.y0], dtype=np.float64)
        moved = Outline(ops=outline.ops, points=points)
        layers.append(Layer(color=layer.color, outline=moved))
    return attrs.evolve(art, layers=tuple(layers))
