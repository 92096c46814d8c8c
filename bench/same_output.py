"""Whether two trees of the engine make the same files, byte for byte.

Run from the repository root, once per tree, then compare:

    PYTHONPATH=/work/main/src .venv/bin/python bench/same_output.py --json /tmp/before.json
    .venv/bin/python bench/same_output.py --json /tmp/after.json --compare /tmp/before.json

Traces every image of the given folders (default: the corpus, the hard set and the own
hard images, when present) with a few option sets (automatic colours, `colors=2`,
`colors=24`, `background=remove`) and records each SVG's SHA-256. With `--compare` it
prints the cases whose bytes differ and exits 1 if any do. A change meant to keep the
engine's output (an import, a faster equal stage) must leave every hash as it was.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from printjob_adapters.engine import TraceOptions, trace

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = (
    Path("/work/shared/corpus"),
    Path("/work/shared/corpus-hard"),
    ROOT / "bench" / "out" / "hard",
)
SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp"}
OPTION_SETS = {
    "auto": TraceOptions(),
    "colors2": TraceOptions(colors=2),
    "colors24": TraceOptions(colors=24),
    "remove": TraceOptions(background="remove"),  # type: ignore[arg-type]
}


def images(folders: list[Path]) -> list[Path]:
    found: list[Path] = []
    for folder in folders:
        if folder.is_dir():
            found += sorted(p for p in folder.iterdir() if p.suffix.lower() in SUFFIXES)
    return found


def hashes(folders: list[Path], option_sets: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for image in images(folders):
        data = image.read_bytes()
        for name in option_sets:
            try:
                result = trace(data, OPTION_SETS[name]).data
            except Exception as exc:  # a refusal is an outcome to compare too
                result = f"{type(exc).__name__}: {exc}".encode()
            out[f"{image.parent.name}/{image.name} {name}"] = hashlib.sha256(result).hexdigest()
            print(f"{image.name} {name} {out[f'{image.parent.name}/{image.name} {name}'][:12]}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folders", nargs="*", type=Path, default=list(FOLDERS))
    parser.add_argument("--options", default=",".join(OPTION_SETS))
    parser.add_argument("--json", type=Path, required=True, help="where to write the hashes")
    parser.add_argument("--compare", type=Path, help="hashes of the other tree")
    args = parser.parse_args()
    found = hashes(args.folders, args.options.split(","))
    args.json.write_text(json.dumps(found, indent=1, sort_keys=True))
    if args.compare is None:
        return 0
    before = json.loads(args.compare.read_text())
    differ = sorted(k for k in found.keys() | before.keys() if found.get(k) != before.get(k))
    for case in differ:
        print(f"DIFFERENT: {case}")
    print(f"{len(found) - len(differ)} of {len(found | before)} cases identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
