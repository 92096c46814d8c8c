"""`printjob trace` starts as a small process: the engine, not the service around it.

A print shop runs `printjob trace` in a loop over a folder; every module it loads at start
is paid for on every file. The storage adapters, the web framework and the database
drivers belong to the server and the operator's commands, never to the engine alone.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PIL import Image, ImageDraw

#: Top-level packages and printjob modules that `printjob trace` must not load.
SERVER_ONLY = (
    "litestar",
    "sqlite_utils",
    "psycopg",
    "psycopg_pool",
    "printjob_adapters.sql",
    "printjob_adapters.sqlite",
    "printjob_adapters.postgres",
    "printjob_adapters.postgres_blobs",
    "printjob_adapters.storage",
    "printjob_adapters.blobs",
    "printjob_adapters.runner",
    "printjob_adapters.bootstrap",
    "printjob_adapters.settings",
    "printjob_http.app",
    "printjob_http.shell",
)


def _loaded_by_trace(tmp_path: Path) -> set[str]:
    image = Image.new("RGB", (64, 48), (250, 250, 250))
    ImageDraw.Draw(image).ellipse((8, 8, 40, 40), fill=(200, 30, 30))
    source = tmp_path / "logo.png"
    image.save(source)
    code = (
        "import sys\n"
        "from printjob_http.cli import main\n"
        f"status = main(['trace', {str(source)!r}, '-o', {str(tmp_path / 'out.svg')!r}])\n"
        "print('--- modules after exit status', status)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    _, _, listing = done.stdout.partition("--- modules after exit status ")
    status, *modules = listing.splitlines()
    assert status == "0", done.stdout + done.stderr
    assert (tmp_path / "out.svg").read_text().startswith("<?xml")
    return set(modules)


def test_trace_loads_no_storage_adapter_web_framework_or_database_driver(
    tmp_path: Path,
) -> None:
    loaded = _loaded_by_trace(tmp_path)
    assert "printjob_adapters.engine" in loaded  # the run really traced
    offending = sorted(
        name
        for name in loaded
        for forbidden in SERVER_ONLY
        if name == forbidden or name.startswith(forbidden + ".")
    )
    assert offending == []
