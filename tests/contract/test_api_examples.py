"""docs/api.md's complete examples (section 8), exactly as printed there, run against the
real server: bash + curl, Python (the official client), Node and PHP."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image

from tests.contract.support import JOB_ID_RE, ROOT, ServerProcess, png

#: An example is the fenced block right after its marker comment.
EXAMPLE = re.compile(r"<!-- example: (\w+) -->\n```\w+\n(.*?)\n```\n", re.DOTALL)
#: Language -> (interpreter, file name, the format its test asks for).
RUNNERS = {
    "curl": ("bash", "convert.sh", "svg"),
    "python": (sys.executable, "convert.py", "pdf"),
    "javascript": ("node", "convert.mjs", "png"),
    "php": ("php", "convert.php", "eps"),
}


def examples() -> dict[str, str]:
    found = EXAMPLE.findall((ROOT / "docs" / "api.md").read_text(encoding="utf-8"))
    assert len(found) == len(dict(found)), "an example marker appears twice"
    return dict(found)


def rendered(command: list[str]) -> Image.Image:
    """The PNG a renderer writes to stdout, opened (so the file it read parsed)."""
    done = subprocess.run(command, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    image = Image.open(io.BytesIO(done.stdout))
    image.load()
    return image


def assert_parses_as(fmt: str, path: Path) -> None:
    data = path.read_bytes()
    if fmt == "svg":
        assert ET.fromstring(data).tag.endswith("svg")
    elif fmt == "pdf":
        assert data.startswith(b"%PDF-")
        assert rendered(["pdftoppm", "-r", "10", "-png", "-singlefile", str(path)]).width > 0
    elif fmt == "eps":
        assert data.startswith(b"%!PS-Adobe-3.0 EPSF-3.0")
        gs = ["gs", "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-dEPSCrop", "-r10"]
        assert rendered([*gs, "-sDEVICE=png16m", "-sOutputFile=-", str(path)]).width > 0
    else:
        image = Image.open(io.BytesIO(data))
        assert image.format == "PNG"
        image.load()


def test_the_guide_has_one_example_per_language() -> None:
    assert set(examples()) == set(RUNNERS)


@pytest.mark.parametrize("language", list(RUNNERS))
def test_example_converts_an_image_end_to_end(
    server: ServerProcess, tmp_path: Path, language: str
) -> None:
    """The example submits, polls and downloads; run twice, it makes two jobs (fresh keys)."""
    interpreter, name, fmt = RUNNERS[language]
    assert shutil.which(interpreter), f"{interpreter} is missing: run `make system-deps`"
    program = tmp_path / name
    program.write_text(examples()[language] + "\n", encoding="utf-8")
    image = tmp_path / "logo.png"
    image.write_bytes(png())  # the same image both times: a reused key would replay
    with server.account(credits=5) as client:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PRINTJOB_")}
        env.update(PRINTJOB_API_KEY=client.key, PRINTJOB_API_URL=server.base_url)
        runs = [
            [str(image), fmt, str(tmp_path / f"first.{fmt}")],
            [str(image), fmt],  # the output path by default: the image's, new extension
        ]
        job_ids = []
        for arguments in runs:
            done = subprocess.run(
                [interpreter, str(program), *arguments],
                env=env,
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )
            assert done.returncode == 0, f"{language} example failed:\n{done.stderr}"
            output = Path(arguments[2]) if len(arguments) > 2 else tmp_path / f"logo.{fmt}"
            job_id, arrow, written = done.stdout.split()
            assert re.fullmatch(JOB_ID_RE, job_id) and arrow == "->"
            assert Path(written).resolve() == output
            assert_parses_as(fmt, output)
            job_ids.append(job_id)
        assert job_ids[0] != job_ids[1]
        for job_id in job_ids:
            job = client.get(f"/v1/jobs/{job_id}").json()
            assert job["status"] == "succeeded" and job["options"]["format"] == fmt
            assert job["credits_charged"] == 1
        account = client.account_view()
        assert account["credits_balance"] == 3 and account["credits_held"] == 0
