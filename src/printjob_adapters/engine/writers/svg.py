"""The SVG writer: one `<g>` per layer, compact path data, physical size in points.

The root element states the physical size in points (`pt`, 1/72 inch, the unit of the PDF
and EPS writers too) and a `viewBox` in canvas pixels, so `width = canvas px * 72 / dpi`.
Every group states `fill-rule="evenodd"` (SVG's default is nonzero). Coordinates are canvas
pixels rounded to 1/100 px; each segment is written absolute or relative, whichever is
shorter. The output depends only on its input: the same art gives the same bytes.

Path data is built a layer at a time with whole-array work (`path_data`): the segments
that draw something (`drawn`), every number's written length and first character from
its integer value alone, the absolute-or-relative choice for every segment at once
(`_choices`), and finally the text itself, written digit by digit into one byte array
(`_write_tokens`). No Python object is made per number.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence

import attrs
import numpy as np

from printjob_adapters.engine.canvas import Placement
from printjob_adapters.engine.vector import (
    CLOSE,
    CURVE,
    LINE,
    MOVE,
    OP_NAMES,
    OP_POINTS,
    Layer,
    VectorArt,
)

#: Coordinates are written in units of 1 / QUANTUM canvas pixels.
QUANTUM = 100

_SVG_NS = "http://www.w3.org/2000/svg"
#: Commands the writers lay out in one whole-array pass (`layer_groups`): many small
#: layers together, without holding more than this many besides one large layer.
GROUP_COMMANDS = 1 << 12


def write_svg(
    art: VectorArt, placement: Placement, tick: Callable[[], None] | None = None
) -> bytes:
    """The art placed on the canvas as a standalone SVG document (UTF-8); `tick` is
    called before every layer."""
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        f'<svg xmlns="{_SVG_NS}" width="{decimal(placement.width_pt)}pt" '
        f'height="{decimal(placement.height_pt)}pt" '
        f'viewBox="0 0 {placement.canvas_width} {placement.canvas_height}">\n',
    ]
    for group in layer_groups(art.layers, GROUP_COMMANDS):
        commands, firsts = drawn_layers(group, placement)
        for layer, data in zip(group, _path_texts(commands, firsts), strict=True):
            if tick is not None:
                tick()
            if data:
                parts.append(f'<g fill="{layer.hex}" fill-rule="evenodd"><path d="{data}"/></g>\n')
    parts.append("</svg>\n")
    return "".join(parts).encode("utf-8")


def decimal(value: float, places: int = 4) -> str:
    """`value` rounded to `places` decimals, without trailing zeros."""
    text = f"{value:.{places}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def number(q: int) -> str:
    """A quantised coordinate as the shortest SVG number (`.5`, `-1.25`, `12`)."""
    if q == 0:
        return "0"
    sign = "-" if q < 0 else ""
    whole, frac = divmod(abs(q), QUANTUM)
    if frac == 0:
        return f"{sign}{whole}"
    digits = f"{frac:02d}".rstrip("0")
    return f"{sign}{whole or ''}.{digits}"


def quantised_points(points: np.ndarray, placement: Placement) -> np.ndarray:
    """Design-unit points (n, 2) as integer 1/QUANTUM canvas pixels."""
    xy = np.array(points, dtype=np.float64).reshape(-1, 2)
    if not len(xy):
        return np.zeros((0, 2), dtype=np.int64)
    xy *= placement.scale
    xy += (placement.offset_x, placement.offset_y)
    return np.rint(xy * QUANTUM).astype(np.int64)


@attrs.frozen(eq=False)
class Drawn:
    """A layer's commands that draw something, in quantised canvas points: op codes,
    each command's points (n, 3, 2; a moveTo or lineTo uses row 0, a closePath none)
    and the current point before each command."""

    ops: np.ndarray
    points: np.ndarray
    current: np.ndarray


def drawn(layer: Layer, placement: Placement) -> Drawn:
    """The layer's commands with quantised canvas points, minus what draws nothing
    (`drawn_layers` of this one layer)."""
    return drawn_layers([layer], placement)[0]


def layers_drawn(layers: Sequence[Layer], placement: Placement) -> Iterator[tuple[Layer, Drawn]]:
    """Every layer with its `drawn` commands, found a run of layers at a time
    (`layer_groups`, `drawn_layers`). O(commands)."""
    for group in layer_groups(layers, GROUP_COMMANDS):
        commands, firsts = drawn_layers(group, placement)
        for layer, a, b in zip(group, firsts[:-1].tolist(), firsts[1:].tolist(), strict=True):
            yield (
                layer,
                Drawn(
                    ops=commands.ops[a:b],
                    points=commands.points[a:b],
                    current=commands.current[a:b],
                ),
            )


def layer_groups(layers: Sequence[Layer], commands: int) -> Iterator[list[Layer]]:
    """The layers in runs of consecutive ones holding about `commands` commands (a run
    ends at the layer that reaches it), so that the writers handle many small layers in
    one whole-array pass and a run's arrays stay bounded. O(layers)."""
    group: list[Layer] = []
    held = 0
    for layer in layers:
        group.append(layer)
        held += len(layer.as_outline().ops)
        if held >= commands:
            yield group
            group, held = [], 0
    if group:
        yield group


def drawn_layers(layers: Sequence[Layer], placement: Placement) -> tuple[Drawn, np.ndarray]:
    """The layers' commands with quantised canvas points, minus what draws nothing, one
    after the other, and the index of every layer's first command among them (and of
    the end).

    Drops zero-length lines and a line back to the contour's start right before its close
    (the close draws it), so every writer gets the same, smallest outline. The current
    point before a command is the end of the one before it in its layer (a close ends at
    its contour's start; (0, 0) before a layer's first command): a dropped line ends
    where the current point already is, or is followed by a close. O(commands)."""
    outlines = [layer.as_outline() for layer in layers]
    sizes = np.array([len(o.ops) for o in outlines], dtype=np.int64)
    layer_first = np.zeros(len(outlines) + 1, dtype=np.int64)
    np.cumsum(sizes, out=layer_first[1:])
    ops = np.concatenate([o.ops for o in outlines]).astype(np.int64)
    xy = quantised_points(np.concatenate([o.points.reshape(-1, 2) for o in outlines]), placement)
    n = len(ops)
    layer_of = np.repeat(np.arange(len(outlines)), sizes)
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(OP_POINTS[ops], out=first[1:])
    take = OP_POINTS[ops]
    pts = np.zeros((n, 3, 2), dtype=np.int64)
    for k in range(3):
        has = np.nonzero(take > k)[0]
        pts[has, k] = xy[first[has] + k]
    end = pts[np.arange(n), np.maximum(take - 1, 0)]
    # A contour's start is its moveTo's point ((0, 0) before the layer's first moveTo).
    move = np.nonzero(ops == MOVE)[0]
    which = np.searchsorted(move, np.arange(n), side="right") - 1
    mover = move[np.maximum(which, 0)] if len(move) else np.zeros(n, dtype=np.int64)
    in_layer = (which >= 0) & (mover >= layer_first[layer_of])
    start = np.where(in_layer[:, None], pts[mover, 0], 0)
    close = ops == CLOSE
    end[close] = start[close]
    current = np.zeros((n, 2), dtype=np.int64)
    current[1:] = end[:-1]
    current[layer_first[:-1][sizes > 0]] = 0
    closes_next = np.zeros(n, dtype=bool)
    closes_next[:-1] = close[1:]
    closes_next[layer_first[1:][sizes > 0] - 1] = False
    here = pts[:, 0]
    zero = (ops == LINE) & (
        (here == current).all(axis=1) | (closes_next & (here == start).all(axis=1))
    )
    keep = np.nonzero(~zero)[0]
    return (
        Drawn(ops=ops[keep], points=pts[keep], current=current[keep]),
        np.searchsorted(keep, layer_first),
    )


def tick_chunks(d: Drawn, size: int, tick: Callable[[], None]) -> Iterator[Drawn]:
    """`d` in chunks, `tick` called before the command numbered a multiple of `size`
    (counting from 1), as a writer going command by command calls it. O(chunks)."""
    n = len(d.ops)
    bounds = [0, *range(size - 1, n, size), n]
    for k, (a, b) in enumerate(itertools.pairwise(bounds)):
        if k:
            tick()
        if b > a or k == 0:
            yield Drawn(ops=d.ops[a:b], points=d.points[a:b], current=d.current[a:b])


def segments(layer: Layer, placement: Placement) -> Iterator[tuple[str, list[tuple[int, int]]]]:
    """`drawn` as (op name, points) pairs, for writers that draw command by command."""
    d = drawn(layer, placement)
    points = d.points.tolist()
    for op, pts in zip(d.ops.tolist(), points, strict=True):
        yield OP_NAMES[op], [tuple(p) for p in pts[: OP_POINTS[op]]]


# Letters of the path commands: (absolute, relative) per kind of segment.
_MOVE, _LINE, _HLINE, _VLINE, _CURVE, _CLOSE = range(6)
_LETTERS = np.frombuffer(b"MmLlHhVvCczz", dtype=np.uint8).reshape(6, 2)
#: Numbers each kind of segment writes.
_ARITY = np.array([2, 2, 1, 1, 6, 0])
_SPACE, _MINUS, _DOT, _ZERO = (ord(c) for c in " -.0")


def path_data(layer: Layer, placement: Placement) -> str:
    """The layer's outlines as compact SVG path data in canvas pixels: each segment
    absolute or relative, whichever is shorter (absolute on a tie), its letter left out
    when it repeats the previous one (except moves), and numbers separated only where
    SVG needs it. O(segments)."""
    commands, firsts = drawn_layers([layer], placement)
    return _path_texts(commands, firsts)[0]


def _path_texts(d: Drawn, firsts: np.ndarray) -> list[str]:
    """`path_data` of several layers' commands laid end to end (`drawn_layers`; layer k
    holds commands firsts[k]:firsts[k + 1]), written in one pass and cut apart. Every
    layer starts with a moveTo from (0, 0), whose choice and letter depend on nothing
    before it, so the layers' texts are what each would be alone. O(segments)."""
    n = len(d.ops)
    if n == 0:
        return [""] * (len(firsts) - 1)
    cx, cy = d.current[:, 0], d.current[:, 1]
    x, y = d.points[:, 0, 0], d.points[:, 0, 1]
    kind = np.select(
        [d.ops == MOVE, d.ops == CLOSE, d.ops == CURVE, y == cy, x == cx],
        [_MOVE, _CLOSE, _CURVE, _HLINE, _VLINE],
        _LINE,
    )
    # The numbers of both candidates: (n, 2 candidates, 6 slots), `_ARITY[kind]` used.
    flat = d.points.reshape(n, 6)
    rel = flat - np.tile(d.current, 3)
    values = np.stack([flat, rel], axis=1)
    single = (kind == _HLINE) | (kind == _VLINE)
    values[kind == _VLINE, :, 0] = values[kind == _VLINE, :, 1]
    values[single, :, 1:] = 0
    used = np.arange(6) < _ARITY[kind][:, None]
    facts = _NumberFacts(values)
    choice = _choices(kind, used, facts)
    rows = np.arange(n)
    text, command_at = _write_tokens(
        kind, choice, values[rows, choice], used, facts.take(rows, choice)
    )
    cuts = np.append(command_at, len(text))[firsts].tolist()
    return [text[a:b] for a, b in itertools.pairwise(cuts)]


class _NumberFacts:
    """What the written form of every quantised number (`number`) looks like, from its
    integer value alone: its length, whether it starts with '-' or '.', and whether it
    holds a '.'."""

    def __init__(self, q: np.ndarray, negative_zero: bool = False) -> None:
        self.q = q
        negative = q < 0
        a = np.abs(q)
        self.whole, self.frac = a // QUANTUM, a % QUANTUM
        self.negative = negative
        self.dot = self.frac != 0
        # Digits of the whole part: "0" alone for zero, none before a fraction (but
        # with `negative_zero`, "-0.5" rather than "-.5").
        digits = np.ones(q.shape, dtype=np.int64)
        power = 10
        while True:
            more = self.whole >= power
            if not more.any():
                break
            digits += more
            power *= 10
        bare = self.dot & (self.whole == 0)
        if negative_zero:
            bare &= ~negative
        self.digits = np.where(bare, 0, digits)
        self.frac_digits = np.where(self.dot, np.where(self.frac % 10 == 0, 1, 2), 0)
        self.length = negative + self.digits + self.dot + self.frac_digits
        self.starts_dot = ~negative & (self.digits == 0)

    def take(self, rows: np.ndarray, choice: np.ndarray) -> _NumberFacts:
        """The facts of `q[rows, choice]` (one candidate per segment of (n, 2, slots)
        numbers), gathered rather than worked out again: every fact is a function of
        its number alone."""
        slots = self.q.shape[-1]
        at = 2 * rows + choice
        taken = object.__new__(_NumberFacts)
        for name in _FACTS:
            whole_rows = getattr(self, name).reshape(-1, slots)
            setattr(taken, name, np.take(whole_rows, at, axis=0))
        return taken


#: What `_NumberFacts` holds of every number, each an array shaped as the numbers.
_FACTS = (
    "q",
    "whole",
    "frac",
    "negative",
    "dot",
    "digits",
    "frac_digits",
    "length",
    "starts_dot",
)


def _gap(before_dot: np.ndarray, minus: np.ndarray, starts_dot: np.ndarray) -> np.ndarray:
    """1 where a space must separate a number from the one before it: unless it starts
    with '-', or with '.' after a number holding a '.'."""
    gap: np.ndarray = (~(minus | (starts_dot & before_dot))).astype(np.int64)
    return gap


def _choices(kind: np.ndarray, used: np.ndarray, f: _NumberFacts) -> np.ndarray:
    """Absolute (0) or relative (1) for every segment, as a writer going segment by
    segment picks them: the shorter text given the previous segment's choice (a letter
    repeating the previous one is left out, and then the separator before the first
    number depends on the previous number). Each choice is a function of the previous
    one (constant, the same, or the opposite), so composing those functions along the
    path (a prefix count of flips since the last constant) resolves them all at once.
    O(segments)."""
    n = len(kind)
    # Text length without the letter: numbers plus the separators between them.
    inner = _gap(f.dot[..., :-1], f.negative[..., 1:], f.starts_dot[..., 1:]) & used[:, None, 1:]
    body = (f.length * used[:, None, :]).sum(axis=2) + inner.sum(axis=2)
    last = np.maximum(_ARITY[kind] - 1, 0)
    rows = np.arange(n)
    last_dot = f.dot[rows, :, last]
    letter = _LETTERS[kind]
    length = np.empty((n, 2, 2), dtype=np.int64)  # [segment, previous choice, choice]
    for p in (0, 1):
        prev_letter = np.full((n, 2), -1)
        prev_dot = np.zeros((n, 1), dtype=bool)
        prev_letter[1:] = letter[:-1, p, None]
        prev_dot[1:, 0] = last_dot[:-1, p]
        repeat = (letter == prev_letter) & (kind != _MOVE)[:, None] & (kind != _CLOSE)[:, None]
        join = _gap(prev_dot, f.negative[:, :, 0], f.starts_dot[:, :, 0])
        length[:, p] = body + np.where(repeat, join, 1)
    relative = length[:, :, 1] < length[:, :, 0]  # per previous choice
    constant = relative[:, 0] == relative[:, 1]
    flips = (relative[:, 0] & ~relative[:, 1]).astype(np.int64)
    anchor = np.maximum.accumulate(np.where(constant, rows, 0))
    count = np.cumsum(flips)
    parity = (count - count[anchor]) & 1
    choice: np.ndarray = (relative[anchor, 0] ^ (parity == 1)).astype(np.int64)
    return choice


def _write_tokens(
    kind: np.ndarray, choice: np.ndarray, values: np.ndarray, used: np.ndarray, f: _NumberFacts
) -> tuple[str, np.ndarray]:
    """The chosen segments as path text: each number (or a close's 'z') one token with
    the letter or separator before it, laid out by a prefix sum of token lengths and
    written character by character column-wise into one byte array. Returns the text
    and where each segment's text begins in it. O(characters)."""
    n = len(kind)
    letter = _LETTERS[kind, choice]
    # The letter is left out where it repeats the previous one (not for moves).
    repeat = np.zeros(n, dtype=bool)
    repeat[1:] = (letter[1:] == letter[:-1]) & (kind[1:] != _MOVE) & (kind[1:] != _CLOSE)
    # One token per number, plus one for every close; in path order.
    token_used = used.copy()
    token_used[kind == _CLOSE, 0] = True
    # Tokens as flat places in the (segment, slot) arrays: one-axis gathers.
    token = np.flatnonzero(token_used)
    seg, slot = token // used.shape[1], token % used.shape[1]
    number = kind[seg] != _CLOSE
    negative = np.take(f.negative, token) & number
    dot = np.take(f.dot, token) & number
    digits = np.where(number, np.take(f.digits, token), 0)
    frac_digits = np.where(number, np.take(f.frac_digits, token), 0)
    number_len = np.where(number, np.take(f.length, token), 0)
    whole, frac = np.take(f.whole, token), np.take(f.frac, token)
    # What comes before each token: its segment's letter, or a separator if needed.
    prev_dot = np.zeros(len(seg), dtype=bool)
    prev_dot[1:] = dot[:-1] & number[:-1]
    gap = _gap(prev_dot, negative, np.take(f.starts_dot, token)).astype(bool) & number
    first = slot == 0
    put_letter = first & ~repeat[seg]
    prefix = np.where(put_letter, letter[seg], np.where(gap, _SPACE, 0))
    prefix_len = (prefix != 0).astype(np.int64)
    start = np.zeros(len(seg) + 1, dtype=np.int64)
    np.cumsum(prefix_len + number_len, out=start[1:])
    out = np.empty(int(start[-1]), dtype=np.uint8)
    at = start[:-1]
    has = prefix_len == 1
    out[at[has]] = prefix[has]
    _put_numbers(out, at + prefix_len, negative, digits, whole, dot, frac, frac_digits)
    return out.tobytes().decode("ascii"), start[np.searchsorted(seg, np.arange(n))]


def _put_numbers(
    out: np.ndarray,
    at: np.ndarray,
    negative: np.ndarray,
    digits: np.ndarray,
    whole: np.ndarray,
    dot: np.ndarray,
    frac: np.ndarray,
    frac_digits: np.ndarray,
) -> None:
    """Writes numbers (`_NumberFacts`' parts; `digits` 0 where nothing is written) into
    `out` from `at` on, one column of characters at a time. O(characters)."""
    out[at[negative]] = _MINUS
    at = at + negative
    for k in range(int(digits.max(initial=0))):
        has = digits > k
        power = 10 ** (digits[has] - 1 - k)
        out[at[has] + k] = _ZERO + (whole[has] // power) % 10
    at = at + digits
    out[at[dot]] = _DOT
    out[at[dot] + 1] = _ZERO + frac[dot] // 10
    two = frac_digits == 2
    out[at[two] + 2] = _ZERO + frac[two] % 10


def command_text(
    d: Drawn, letters: bytes, space: int, end: int, negative_zero: bool = False
) -> str:
    """Commands as operand-then-operator text (PostScript and PDF content): each point's
    two numbers (`number`'s form, or with `negative_zero` a '0' before the point of
    a negative fraction, as PDF writers print "-0.5") each followed by `space`, then
    the command's letter (`letters[op]`) followed by `end`. The tokens are laid out by
    a prefix sum of their lengths and written column-wise into one byte array: no
    Python object per number. O(characters)."""
    n = len(d.ops)
    # Up to six numbers and the letter per command, in that order.
    width = 2 * OP_POINTS[d.ops]
    used = np.arange(7) < width[:, None]
    used[:, 6] = True
    seg, slot = np.nonzero(used)
    number = slot < 6
    q = d.points.reshape(n, 6)[seg, np.minimum(slot, 5)]
    f = _NumberFacts(q, negative_zero)
    negative = f.negative & number
    dot = f.dot & number
    digits = np.where(number, f.digits, 0)
    frac_digits = np.where(number, f.frac_digits, 0)
    length = np.where(number, negative + digits + dot + frac_digits, 1) + 1
    start = np.zeros(len(seg) + 1, dtype=np.int64)
    np.cumsum(length, out=start[1:])
    out = np.empty(int(start[-1]), dtype=np.uint8)
    at = start[:-1]
    letter = ~number
    out[at[letter]] = np.frombuffer(letters, dtype=np.uint8)[d.ops[seg[letter]]]
    out[start[1:] - 1] = np.where(number, space, end)
    _put_numbers(out, at, negative, digits, f.whole, dot, f.frac, frac_digits)
    return out.tobytes().decode("ascii")
