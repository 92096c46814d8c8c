"""What a crash leaves among the stored files is deleted, and nothing a job needs (in-process).

`JobProcessing.sweep_orphans` (core, on fakes) and `FilesystemBlobStore.sweep_temp_files`
(the real filesystem); the kill -9 test shows the same against the real server.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from printjob_adapters.blobs import FilesystemBlobStore
from tests.unit.core.conftest import make_world, output

JOB = "job_" + "ab" * 16


def test_unneeded_files_go_after_a_lease_and_needed_ones_stay() -> None:
    world = make_world()
    account = world.account(credits=10, active_jobs_max=5)
    queued = world.submit(account).job
    running_job = world.submit(account).job
    done_job = world.submit(account).job
    # done_job succeeds; then running_job is claimed (queue order: queued, running, done).
    claims = [world.claim(), world.claim(), world.claim()]
    by_id = {claim.job.id: claim for claim in claims}
    world.runner.succeed(by_id[done_job.id], output())
    world.runner.release(by_id[queued.id])
    # What crashes leave: an image whose job never committed, the image of a job that
    # ended, a result never recorded.
    world.blobs.put(f"uploads/{JOB}", b"never committed")
    world.blobs.put(f"uploads/{done_job.id}", b"left after the end")
    world.blobs.put(f"results/{running_job.id}-1.svg", b"never recorded")
    world.blobs.put("uploads/not-a-job-name", b"someone else's")
    needed = {
        f"uploads/{queued.id}",
        f"uploads/{running_job.id}",
        world.job(done_job.id).result_key,
    }
    assert needed <= set(world.blobs.blobs)

    assert world.runner.sweep_orphans() == 0  # first seen: kept for a lease
    world.clock.advance(world.ports.policy.lease_seconds - 1)
    assert world.runner.sweep_orphans() == 0
    world.clock.advance(1)
    assert world.runner.sweep_orphans() == 3
    assert set(world.blobs.blobs) == needed | {"uploads/not-a-job-name"}


def test_a_file_that_becomes_needed_is_not_deleted() -> None:
    """An image stored just before its job commits is unneeded for a moment, then needed."""
    world = make_world()
    account = world.account()
    world.blobs.put(f"uploads/{JOB}", b"x")
    world.runner.sweep_orphans()
    world.ids.job_id = lambda: JOB  # type: ignore[method-assign]
    job = world.submit(account).job  # the commit that makes it needed (same key)
    assert job.image_key == f"uploads/{JOB}"
    world.clock.advance(3600)
    assert world.runner.sweep_orphans() == 0
    assert world.blobs.exists(f"uploads/{JOB}")


def test_stale_temporary_files_are_deleted(tmp_path: Path) -> None:
    store = FilesystemBlobStore(tmp_path / "files")
    store.put("uploads/job_x", b"kept")
    stale = tmp_path / "files" / "uploads" / ".tmp-stale"
    fresh = tmp_path / "files" / "uploads" / ".tmp-fresh"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"being written")
    old = time.time() - 120
    os.utime(stale, (old, old))
    assert store.sweep_temp_files(60) == 1
    assert not stale.exists() and fresh.exists()
    assert store.get("uploads/job_x") == b"kept"
