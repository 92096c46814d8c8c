"""Two OS processes spend one account's credits through one database file.

Two submitter processes hammer `ApiService.submit` while a third loop (a thread here)
claims the jobs and succeeds or fails them, so capacity frees up and credits are charged
while submissions race. Afterwards the ledger must be exact: no credit spent twice, none
lost, every hold matched by an unfinished job.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from printjob_adapters.blobs import FilesystemBlobStore
from printjob_adapters.sqlite import open_storage
from printjob_adapters.system import RandomIds, SystemClock
from printjob_core.limits import Policy
from printjob_core.model import ConversionOutput, JobStatus
from printjob_core.ports import ImageInfo
from printjob_core.services import JobProcessing, OperatorService, Ports

CREDITS = 25
ACTIVE_JOBS_MAX = 10

#: The submitter: wires real adapters on the shared files and submits until the
#: credits are gone (or its attempts run out), then prints what it saw as JSON.
SUBMITTER = textwrap.dedent(
    """
    import io, json, sys, time
    from pathlib import Path

    from printjob_adapters.blobs import FilesystemBlobStore
    from printjob_adapters.sqlite import open_storage
    from printjob_adapters.system import RandomIds, SystemClock
    from printjob_core.errors import ProblemError
    from printjob_core.limits import Policy
    from printjob_core.ports import ImageInfo
    from printjob_core.services import ApiService, Ports

    data, account_id, tag = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    try:
        from printjob_adapters.tracing import PillowImageProbe as Probe
    except ImportError:
        class Probe:
            def probe(self, payload):
                assert payload[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
                return ImageInfo("PNG", int.from_bytes(payload[16:20], "big"),
                                 int.from_bytes(payload[20:24], "big"))

    from PIL import Image
    buffer = io.BytesIO()
    Image.new("RGB", (32, 24), (200, 30, 30)).save(buffer, "PNG")
    image = buffer.getvalue()

    storage = open_storage(data / "printjob.sqlite3")
    policy = Policy(submissions_per_minute=10**9, max_queue_depth=10**6)
    ports = Ports(
        uow=storage.unit_of_work, reader=storage.reader, clock=SystemClock(), ids=RandomIds(),
        blobs=FilesystemBlobStore(data / "files"), limiter=storage.rate_limiter(),
        probe=Probe(), policy=policy,
    )
    api = ApiService(ports)
    with storage.reader() as uow:
        account = uow.accounts.get(account_id)
    (data / f"ready-{tag}").touch()
    while not (data / "go").exists():
        time.sleep(0.005)
    accepted, refused, broke = [], {}, 0
    deadline = time.monotonic() + 60
    for attempt in range(3000):
        if refused.get("insufficient_credits", 0) >= 30 or time.monotonic() > deadline:
            break
        try:
            submission = api.submit(account, [("format", "svg")], image, f"{tag}-{attempt}")
            accepted.append(submission.job.id)
        except ProblemError as exc:
            refused[exc.code] = refused.get(exc.code, 0) + 1
        except Exception as exc:
            broke += 1
            print(repr(exc), file=sys.stderr)
    print(json.dumps({"accepted": accepted, "refused": refused, "broke": broke,
                      "attempts": attempt}))
    """
)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_two_processes_never_spend_one_credit_twice(tmp_path: Path) -> None:
    storage = open_storage(tmp_path / "printjob.sqlite3")
    ports = Ports(
        uow=storage.unit_of_work,
        reader=storage.reader,
        clock=SystemClock(),
        ids=RandomIds(),
        blobs=FilesystemBlobStore(tmp_path / "files"),
        limiter=storage.rate_limiter(),
        probe=_NoProbe(),
        policy=Policy(submissions_per_minute=10**9, max_queue_depth=10**6),
    )
    operator = OperatorService(ports)
    account = operator.create_account(CREDITS, ACTIVE_JOBS_MAX)
    submitters = [
        subprocess.Popen(
            [sys.executable, "-c", SUBMITTER, str(tmp_path), account.id, tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("one", "two")
    ]

    processing = JobProcessing(ports)
    outcomes: Counter[str] = Counter()
    errors: list[BaseException] = []
    stop = threading.Event()
    samples: list[tuple[int, int, int]] = []

    def sample() -> None:
        """One consistent snapshot: (balance, held, unfinished jobs)."""
        with storage.reader() as uow:
            current = uow.accounts.get(account.id)
            assert current is not None
            unfinished = uow.jobs.count_unfinished(account.id)
        samples.append((current.credits_balance, current.credits_held, unfinished))

    def finisher() -> None:
        """Claim jobs as they come; succeed two in three, fail the third."""
        try:
            while True:
                sample()
                claim = processing.claim()
                if claim is None:
                    if stop.is_set():
                        return
                    time.sleep(0.002)
                    continue
                assert processing.image(claim)[:4] == b"\x89PNG"
                if sum(outcomes.values()) % 3 == 2:
                    assert processing.fail(claim, "could not trace") is not None
                    outcomes["failed"] += 1
                else:
                    output = ConversionOutput(b"<svg/>", 32, 24, 1, False)
                    assert processing.succeed(claim, output) is not None
                    outcomes["succeeded"] += 1
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=finisher, daemon=True)
    thread.start()
    # Start both at once, only when both are ready (imports done, storage open), so
    # that a slow start under load cannot leave one process all the credits.
    ready_by = time.monotonic() + 120
    while not all((tmp_path / f"ready-{tag}").exists() for tag in ("one", "two")):
        assert time.monotonic() < ready_by, "the submitters never got ready"
        time.sleep(0.01)
    started = time.monotonic()
    (tmp_path / "go").touch()
    reports = []
    for proc in submitters:
        out, err = proc.communicate(timeout=150)
        assert proc.returncode == 0, err
        reports.append(json.loads(out))
    stop.set()
    thread.join(60)
    elapsed = time.monotonic() - started
    assert not errors, errors
    assert not thread.is_alive()

    accepted = [job_id for report in reports for job_id in report["accepted"]]
    refused = Counter[str]()
    for report in reports:
        refused.update(report["refused"])
        assert report["broke"] == 0
    print(
        f"\ntwo processes: {sum(r['attempts'] for r in reports)} attempts in {elapsed:.1f} s; "
        f"accepted {[len(r['accepted']) for r in reports]}; refused {dict(refused)}; "
        f"{dict(outcomes)}; {len(samples)} ledger samples"
    )

    # Both processes really raced, and the credits really ran out.
    assert all(report["accepted"] for report in reports)
    assert refused["insufficient_credits"] > 0
    assert "server_busy" not in refused

    db = storage.database()
    rows = db.execute("SELECT id, status, credits_charged FROM jobs").fetchall()
    assert sorted(job_id for job_id, _, _ in rows) == sorted(accepted)
    assert len(set(accepted)) == len(accepted)
    statuses = Counter(status for _, status, _ in rows)
    succeeded = statuses[JobStatus.SUCCEEDED.value]
    assert succeeded == outcomes["succeeded"]
    assert statuses[JobStatus.FAILED.value] == outcomes["failed"]
    unfinished = statuses[JobStatus.QUEUED.value] + statuses[JobStatus.RUNNING.value]
    charged = sum(charge for _, _, charge in rows)

    summary = operator.show_account(account.id)
    final = summary.account
    assert succeeded <= CREDITS, "more jobs succeeded than there were credits"
    assert final.credits_balance == CREDITS - succeeded >= 0
    assert final.credits_held == unfinished == 0
    assert final.credits_available == final.credits_balance - final.credits_held
    assert charged == succeeded
    # Accepted jobs never exceeded the credits: each accepted job either succeeded (paid)
    # or failed (its hold returned), so what was accepted minus what failed fits the credits,
    # and at every moment sampled the holds fitted the balance and matched the open jobs.
    assert len(accepted) == succeeded + outcomes["failed"] + unfinished
    assert len(accepted) - outcomes["failed"] <= CREDITS
    assert len(samples) > 10
    for sampled_balance, held, open_jobs in samples:
        assert 0 <= held <= sampled_balance
        assert held == open_jobs <= ACTIVE_JOBS_MAX
    # Uploads are gone once their jobs ended; one result file per success is kept.
    blobs = ports.blobs
    assert list(blobs.keys("uploads/")) == []
    assert len(list(blobs.keys("results/"))) == succeeded
    storage.close()


class _NoProbe:
    """The finisher's ports never probe an image."""

    def probe(self, data: bytes) -> ImageInfo:  # pragma: no cover - never called
        raise AssertionError("not used")
