"""Word recall of small type, per font, colour pair, file format and colour option.

Issue #12's legibility criterion, case by case: tesseract (`tests/unit/engine/ocr.py`,
sparse text, words of two characters or more) reads the words W of the input zoomed 4x
bicubic and the words R of the traced SVG rendered 4x by resvg over white; the recall is
|W ∩ R| / |W|. Each case is the tests' text (`hard_synthetic.WORDS`, sixteen words in four
lines of four, as `tests/unit/engine/test_small_text.py` draws it) in DejaVu Sans, Serif,
Sans Bold or Sans Mono at 8 to 10 px, in one of the colour pairs below, saved as PNG or
JPEG (4:2:0 chroma) and traced with automatic colours or `colors=N`.

From the repository root (a few minutes per size on two cores; one tesseract per image):

    .venv/bin/python bench/small_text_table.py                     # 8 px, every case
    .venv/bin/python bench/small_text_table.py --sizes 8,9 --json /tmp/after.json \\
        --compare /tmp/before.json                                 # before/after columns

The code traced is the one importable as `printjob_adapters` (run with
`PYTHONPATH=<other tree>/src` to measure another tree). Prints one line per case (recall,
the file's colours, the words lost) and a table per colour option: fonts by rows, colour
pair and format by columns. With `--compare`, each cell reads "before → after".
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
from PIL import Image, ImageFont

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.unit.engine import hard_synthetic, ocr  # noqa: E402

RGB = tuple[int, int, int]
FONTS = {
    "sans": "DejaVuSans.ttf",
    "serif": "DejaVuSerif.ttf",
    "bold": "DejaVuSans-Bold.ttf",
    "mono": "DejaVuSansMono.ttf",
}
#: Ink on paper. The first four are the tests' pairs; grey 180 on white is type 75 levels
#: from its paper (a faint caption), white on dark and yellow on blue the light-on-dark
#: and coloured cases. What print shops send besides: white type on a dark red badge, red
#: type on white, and a mid-grey caption (grey 110) on white.
PAIRS: dict[str, tuple[RGB, RGB]] = {
    "dark-on-light": ((0, 0, 0), (255, 255, 255)),
    "light-on-dark": ((255, 255, 255), (30, 30, 40)),
    "yellow-on-blue": ((250, 230, 60), (20, 80, 160)),
    "red-on-cream": ((180, 20, 30), (235, 240, 210)),
    "grey180-on-white": ((180, 180, 180), (255, 255, 255)),
    "white-on-badge": ((255, 255, 255), (200, 30, 45)),
    "red-on-white": ((200, 20, 30), (255, 255, 255)),
    "grey110-on-white": ((110, 110, 110), (255, 255, 255)),
}
FORMATS = ("png", "q60", "q75", "q90")
OPTIONS = ("auto", "colors2")


@attrs.frozen
class Case:
    font: str
    size: int
    pair: str
    form: str
    option: str

    @property
    def key(self) -> str:
        return f"{self.font} {self.size}px {self.pair} {self.form} {self.option}"


def text_image(font: str, pixel_size: int, ink: RGB, paper: RGB) -> Image.Image:
    """The tests' sixteen words in four lines, `pixel_size` px, as `test_small_text` draws."""
    face = ImageFont.truetype(str(hard_synthetic.FONT_DIR / FONTS[font]), pixel_size)
    return hard_synthetic.typeset(face, pixel_size, ink, paper)


def encoded(image: Image.Image, form: str) -> Image.Image:
    if form == "png":
        return image
    return hard_synthetic.jpeg(image, int(form.removeprefix("q")))


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def measure(image: Image.Image, option: str, wanted: frozenset[str]) -> dict[str, object]:
    """Recall, the file's colours and the words lost for one traced case."""
    import resvg_py

    from printjob_adapters.engine import TraceOptions, trace

    options = TraceOptions() if option == "auto" else TraceOptions(colors=int(option[6:]))
    result = trace(png_bytes(image), options)
    png = resvg_py.svg_to_bytes(svg_string=result.data.decode(), width=image.width * 4, dpi=300)
    read = ocr.read_words(Image.open(io.BytesIO(bytes(png))))
    return {
        "recall": round(ocr.word_recall(wanted, read), 4),
        "colours": result.colors,
        "lost": sorted(wanted - read),
    }


def cases(args: argparse.Namespace) -> Iterator[tuple[Case, ...]]:
    """The cases, grouped by input image (its reference words are read once)."""
    for size in args.sizes:
        for font in args.fonts:
            for pair in args.pairs:
                for form in args.formats:
                    yield tuple(Case(font, size, pair, form, option) for option in args.options)


def table(
    results: dict[str, dict[str, object]],
    before: dict[str, dict[str, object]] | None,
    args: argparse.Namespace,
) -> str:
    """Markdown tables, one per size and colour option: fonts by rows, pair x format by
    columns; a cell is "recall (colours)", or "before → after" with a comparison."""
    out: list[str] = []
    columns = [(pair, form) for pair in args.pairs for form in args.formats]
    for size in args.sizes:
        for option in args.options:
            out.append(f"\n{size} px, {option}:\n")
            out.append("| font | " + " | ".join(f"{p} {f}" for p, f in columns) + " |")
            out.append("| --- |" + " --- |" * len(columns))
            for font in args.fonts:
                cells = []
                for pair, form in columns:
                    key = Case(font, size, pair, form, option).key
                    cells.append(
                        _cell(results.get(key), None if before is None else before.get(key))
                    )
                out.append(f"| {font} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def _cell(after: dict[str, object] | None, before: dict[str, object] | None) -> str:
    def one(result: dict[str, object] | None) -> str:
        if result is None:
            return "-"
        return f"{float(str(result['recall'])):.2f} ({result['colours']})"

    if before is None:
        return one(after)
    return f"{one(before)} → {one(after)}"


def _listed(text: str) -> list[str]:
    return [part for part in text.split(",") if part]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="8", help="comma-separated pixel sizes (8)")
    parser.add_argument("--fonts", default=",".join(FONTS))
    parser.add_argument("--pairs", default=",".join(PAIRS))
    parser.add_argument("--formats", default=",".join(FORMATS), help="png, q75, q90, ...")
    parser.add_argument("--options", default=",".join(OPTIONS), help="auto, colors2, colors3 ...")
    parser.add_argument("--json", type=Path, help="write every case's result here")
    parser.add_argument("--compare", type=Path, help="an earlier --json: before → after cells")
    args = parser.parse_args()
    args.sizes = [int(s) for s in _listed(args.sizes)]
    args.fonts, args.pairs = _listed(args.fonts), _listed(args.pairs)
    args.formats, args.options = _listed(args.formats), _listed(args.options)
    before = json.loads(args.compare.read_text()) if args.compare else None
    results: dict[str, dict[str, object]] = {}
    for group in cases(args):
        first = group[0]
        ink, paper = PAIRS[first.pair]
        image = encoded(text_image(first.font, first.size, ink, paper), first.form)
        wanted = ocr.read_words(ocr.upscale(ocr.over_white(image)))
        for case in group:
            result = measure(image, case.option, wanted)
            results[case.key] = result
            was = (
                ""
                if before is None or case.key not in before
                else (f"  (was {float(str(before[case.key]['recall'])):.2f})")
            )
            print(
                f"{case.key}: {result['recall']:.2f} ({result['colours']} col.){was} "
                f"lost {result['lost']}",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True))
    print(table(results, before, args))


if __name__ == "__main__":
    main()
