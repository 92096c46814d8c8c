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


#: What the `printjob` executable's own dispatcher must not load for `trace` either: the
#: operator's command line and the core's service layer (about 90 ms of imports).
COMMAND_LINE_ONLY = ("printjob_http.cli", "printjob_core.services", "printjob_core.quota")

#: A flat logo's trace has no use for SciPy at all (about 0.3 s of imports for sparse and
#: spatial, 0.12 s for ndimage): the stages that need it import it themselves.
SCIPY_HEAVY = ("scipy",)


def _flat_logo(path: Path, side: int = 64) -> Path:
    image = Image.new("RGB", (side, side * 3 // 4), (250, 250, 250))
    s = side / 64
    ImageDraw.Draw(image).ellipse((8 * s, 8 * s, 40 * s, 40 * s), fill=(200, 30, 30))
    ImageDraw.Draw(image).rectangle((44 * s, 10 * s, 60 * s, 40 * s), fill=(20, 40, 160))
    image.save(path)
    return path


def _offending(loaded: set[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        name
        for name in loaded
        for prefix in forbidden
        if name == prefix or name.startswith(prefix + ".")
    )


def _loaded_by_trace(tmp_path: Path, entry: str = "printjob_http.cli", side: int = 64) -> set[str]:
    source = _flat_logo(tmp_path / "logo.png", side)
    code = (
        "import sys\n"
        f"from {entry} import main\n"
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


def test_the_executable_sends_trace_to_the_engine_without_the_command_line(
    tmp_path: Path,
) -> None:
    loaded = _loaded_by_trace(tmp_path, entry="printjob_http.command")
    assert "printjob_adapters.engine" in loaded
    assert _offending(loaded, SERVER_ONLY + COMMAND_LINE_ONLY) == []


def test_a_flat_512_px_logo_is_traced_without_scipy(tmp_path: Path) -> None:
    loaded = _loaded_by_trace(tmp_path, entry="printjob_http.command", side=512)
    assert "printjob_adapters.engine.boundaries" in loaded  # it really vectorised
    assert _offending(loaded, SCIPY_HEAVY) == []


def test_the_executable_runs_the_operators_commands_as_before(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "printjob_http.command", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.startswith("printjob ")
