"""`printjob remote convert` and `printjob remote account` as subprocesses, against the real
server."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from printjob_http.remote_cli import Progress, idempotency_key
from tests.contract.support import Client as HttpClient
from tests.contract.support import ServerProcess, base_env, png, shaded_png


def env_for(tmp_path: Path, account: HttpClient | None, **extra: str) -> dict[str, str]:
    env = base_env(tmp_path / "unused-data", **extra)
    if account is not None:
        env["PRINTJOB_API_KEY"] = account.key
        env["PRINTJOB_API_URL"] = account.server.base_url
    return env


def remote(
    tmp_path: Path, account: HttpClient | None, *args: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "printjob_http.cli", "remote", *args],
        env=env_for(tmp_path, account, **extra),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def images(tmp_path: Path, count: int = 3) -> list[str]:
    paths = []
    for i in range(count):
        path = tmp_path / "in" / f"art-{i}.png"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(png(48 + 8 * i, 48))
        paths.append(str(path))
    return paths


def one_error_line(stderr: str, progress: bool = False) -> str:
    """The only error line on stderr (with `progress`, after the progress lines)."""
    lines = stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("printjob: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], stderr
    assert progress or len(lines) == 1, stderr
    return errors[0]


def test_convert_writes_every_file_and_a_second_run_charges_nothing(
    client: HttpClient, tmp_path: Path
) -> None:
    sources = images(tmp_path)
    out = tmp_path / "out" / "svg"
    first = remote(tmp_path, client, "convert", *sources, "-o", str(out), "--format", "svg")
    assert first.returncode == 0, first.stderr
    for i, source in enumerate(sources):
        written = out / f"art-{i}.svg"
        assert ET.parse(written).getroot().tag.endswith("svg")
        assert f"wrote {written}" in first.stdout
        assert f"printjob: {source}: queued 0%" in first.stderr  # one line per phase change
    assert "printjob: overall: 3/3 files, 100%" in first.stderr
    assert "3 of 3 files converted" in first.stderr
    after_first = client.account_view()
    assert (after_first["credits_balance"], after_first["credits_held"]) == (7, 0)

    for written in out.iterdir():
        written.unlink()
    again = remote(tmp_path, client, "convert", *sources, "-o", str(out), "--format", "svg")
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in out.iterdir()) == ["art-0.svg", "art-1.svg", "art-2.svg"]
    assert "3 from an earlier run's jobs, not charged again" in again.stderr
    assert client.account_view() == after_first


def test_an_interrupted_run_is_picked_up_without_paying_twice(
    client: HttpClient, tmp_path: Path
) -> None:
    sources = images(tmp_path, 2)
    out = tmp_path / "out"
    args = ["convert", *sources, "-o", str(out), "--format", "png", "--size", "64x64"]
    process = subprocess.Popen(
        [sys.executable, "-m", "printjob_http.cli", "remote", *args],
        env=env_for(tmp_path, client),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    queued: set[str] = set()
    deadline = time.monotonic() + 60
    while len(queued) < 2 and time.monotonic() < deadline:  # both submitted, polls 5 s away
        line = process.stderr.readline()
        if line.endswith(" queued 0%\n"):  # "printjob: <file>: queued 0%": one per file
            queued.add(line.rsplit(": ", 1)[0])
    assert len(queued) == 2, queued
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=30)
    assert process.returncode == 130
    assert "run the same command again" in one_error_line(rest)
    assert not list(out.glob("*.png"))

    again = remote(tmp_path, client, *args)
    assert again.returncode == 0, again.stderr
    assert "2 from an earlier run's jobs" in again.stderr
    view = client.account_view()
    assert (view["credits_balance"], view["credits_held"]) == (8, 0)
    assert len(list(out.glob("*.png"))) == 2


def test_the_key_is_the_same_for_the_same_file_and_options(tmp_path: Path) -> None:
    image = png()
    key = idempotency_key(image, {"format": "svg"})
    assert key == idempotency_key(image, {"format": "svg", "background": "keep"})
    assert key == idempotency_key(image, {"format": "svg", "size": "original"})
    assert key != idempotency_key(image, {"format": "pdf"})
    assert key != idempotency_key(image + b"\0", {"format": "svg"})
    assert key != idempotency_key(image, {"format": "svg"}, attempt=1)
    assert key.startswith("pj-") and len(key) <= 255


def test_a_failed_file_is_one_line_and_the_others_are_written(
    client: HttpClient, tmp_path: Path
) -> None:
    good = images(tmp_path, 1)[0]
    broken = tmp_path / "in" / "broken.png"
    broken.write_bytes(b"this is not a picture")
    missing = str(tmp_path / "in" / "missing.png")
    out = tmp_path / "out"
    done = remote(
        tmp_path, client, "convert", good, str(broken), missing, "-o", str(out), "--format", "eps"
    )
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("printjob: error: ")]
    assert len(errors) == 2, done.stderr
    assert any(line.startswith(f"printjob: error: {broken}: ") for line in errors)
    assert any(line.startswith(f"printjob: error: {missing}: cannot read it") for line in errors)
    assert "1 of 3 files converted" in done.stderr
    assert (out / "art-0.eps").read_bytes().startswith(b"%!PS")
    assert client.account_view()["credits_balance"] == 9


def test_account_prints_credits_and_limits(client: HttpClient, tmp_path: Path) -> None:
    shown = remote(tmp_path, client, "account")
    assert shown.returncode == 0, shown.stderr
    rows = dict(line.split(None, 1) for line in shown.stdout.splitlines())
    assert rows["credits_balance"] == "10" and rows["credits_available"] == "10"
    assert rows["active_jobs_max"] == "3" and rows["limits.submissions_per_minute"] == "10"
    as_json = remote(tmp_path, client, "account", "--json")
    assert json.loads(as_json.stdout) == client.account_view()


def test_a_missing_key_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for args in (["account"], ["convert", "a.png", "-o", str(tmp_path), "--format", "svg"]):
        done = remote(tmp_path, None, *args)
        assert done.returncode == 2
        assert "PRINTJOB_API_KEY" in one_error_line(done.stderr)


def test_a_wrong_key_or_unreachable_service_is_one_line_and_exit_1(
    server: ServerProcess, tmp_path: Path
) -> None:
    wrong = remote(
        tmp_path,
        None,
        "account",
        PRINTJOB_API_KEY="pjk1_" + "w" * 38,
        PRINTJOB_API_URL=server.base_url,
    )
    assert wrong.returncode == 1
    one_error_line(wrong.stderr)
    source = images(tmp_path, 1)[0]
    nowhere = remote(
        tmp_path,
        None,
        "convert",
        source,
        "-o",
        str(tmp_path / "out"),
        "--format",
        "svg",
        PRINTJOB_API_KEY="pjk1_" + "w" * 38,
        PRINTJOB_API_URL="http://127.0.0.1:9",
    )
    assert nowhere.returncode == 1
    assert "cannot reach http://127.0.0.1:9" in one_error_line(nowhere.stderr)


def test_bad_options_are_one_line_and_exit_2(client: HttpClient, tmp_path: Path) -> None:
    source = images(tmp_path, 1)[0]
    out = str(tmp_path / "out")
    for bad, option, by_api in (
        (["--format", "bmp"], "--format", False),
        (["--format", "svg", "--colors", "many"], "--colors", False),
        (["--format", "svg", "--size", "big"], "--size", False),
        (["--format", "svg", "--background", "drop"], "--background", False),
        (["--format", "svg", "--colors", "5000"], "--colors", True),  # refused by the API
    ):
        done = remote(tmp_path, client, "convert", source, "-o", out, *bad)
        assert done.returncode == 2, (bad, done.stderr)
        assert option in one_error_line(done.stderr, progress=by_api), bad
    twice = remote(
        tmp_path, client, "convert", source, str(tmp_path / "art-0.png"), "-o", out,
        "--format", "svg",
    )  # fmt: skip
    assert twice.returncode == 2
    assert "would both be written" in one_error_line(twice.stderr)
    assert client.account_view()["credits_held"] == 0


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_redrawn_bars(client: HttpClient) -> None:
    from printjob_client import Client

    with Client(client.key, client.server.base_url) as pj:
        job = pj.wait(pj.submit(png(), format="svg"))
    err, out = FakeTerminal(), io.StringIO()
    progress = Progress(["a.png", "b.png"], err, out)
    progress.note(0, "submitting")
    progress.update(0, job)
    progress.note(1, "building", 40)
    progress.done(0, Path("out/a.svg"), job)
    progress.fail(1, "it broke")
    progress.close()
    screen = err.getvalue()
    assert "a.png   [########################] 100% finishing" in screen
    assert "b.png   [#########...............]  40% building" in screen
    assert "overall [" in screen and "1/2 files" in screen
    assert "\x1b[" in screen  # redrawn in place
    assert "printjob: error: b.png: it broke" in screen
    assert out.getvalue().startswith("wrote out/a.svg (svg ")


def test_an_earlier_runs_canceled_job_is_asked_for_again(
    client: HttpClient, tmp_path: Path
) -> None:
    from printjob_client import Client

    source = Path(images(tmp_path, 1)[0])
    key = idempotency_key(source.read_bytes(), {"format": "svg"})
    with Client(client.key, client.server.base_url) as pj:
        # Shaded art keeps the one worker busy over a second.
        blocker = pj.submit(shaded_png(1000, 200), format="svg")
        earlier = pj.submit(source, format="svg", idempotency_key=key)
        assert pj.cancel(earlier).status == "canceled"
        done = remote(tmp_path, client, "convert", str(source), "-o", str(tmp_path / "out"),
                      "--format", "svg")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert ET.parse(tmp_path / "out" / "art-0.svg").getroot().tag.endswith("svg")
        assert "earlier run" not in done.stdout  # a new job, under the next key
        assert pj.wait(blocker).succeeded
        again = pj.submit(source, format="svg", idempotency_key=f"{key}.2")
        assert again.replayed and again.succeeded
        assert pj.account().credits_balance == 8  # the blocker and one conversion
