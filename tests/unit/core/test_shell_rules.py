"""The rules the HTTP shell asks the core for: which refusal a submission gets when the
shell finds it, the body-size checks, the polling Retry-After, and the orphan sweep's
memory as a value."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
import pytest

from printjob_core.errors import (
    PROBLEM_TYPES,
    ImageTooLarge,
    InvalidParameter,
    ProblemError,
    RateLimited,
)
from printjob_core.limits import Policy
from printjob_core.model import JobStatus
from printjob_core.services import (
    REFUSAL_ORDER,
    JobProcessing,
    MemorySightings,
    Sightings,
    body_too_large,
    declared_length_refusal,
    poll_retry_after,
)
from tests.unit.core.conftest import World

POLICY = Policy(max_upload_bytes=1000)


@pytest.mark.parametrize(
    ("declared", "refusal"),
    [
        (None, None),
        ("0", None),
        ("1000", None),
        ("1001", ImageTooLarge),
        ("12abc", InvalidParameter),
        ("-1", InvalidParameter),
        (" 5", InvalidParameter),
    ],
)
def test_declared_length(declared: str | None, refusal: type[ProblemError] | None) -> None:
    found = declared_length_refusal(declared, POLICY)
    if refusal is None:
        assert found is None
    else:
        assert isinstance(found, refusal) and found.param == "image"


def test_body_too_large_names_the_size_when_known() -> None:
    assert "1,001 bytes" in body_too_large(POLICY, 1001).detail
    assert "over 1,000 bytes" in body_too_large(POLICY).detail


def test_poll_retry_after(world: World) -> None:
    job = world.submit(world.account()).job
    assert poll_retry_after(job) == 5
    running = attrs.evolve(job, status=JobStatus.RUNNING)
    assert poll_retry_after(running) == 3
    for final in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELED):
        assert poll_retry_after(attrs.evolve(job, status=final)) is None


def test_refusal_order_lists_every_submission_code_once() -> None:
    assert len(set(REFUSAL_ORDER)) == len(REFUSAL_ORDER)
    assert set(REFUSAL_ORDER) <= set(PROBLEM_TYPES)
    assert REFUSAL_ORDER.index("rate_limited") < REFUSAL_ORDER.index("invalid_parameter")


def test_a_refusal_found_in_the_shell_counts_and_429_comes_first(world: World) -> None:
    account = world.fresh(world.account())
    error = InvalidParameter("not multipart", param="image")
    limit = world.ports.policy.submissions_per_minute
    for _ in range(limit):
        assert world.api.submissions.refuse(account, error) is error
    assert isinstance(world.api.submissions.refuse(account, error), RateLimited)


def test_an_upload_cut_off_counts_as_a_submission(world: World) -> None:
    account = world.fresh(world.account())
    limit = world.ports.policy.submissions_per_minute
    for _ in range(limit):
        world.api.submissions.abandoned(account)  # past the limit: counted, nothing raised
    world.api.submissions.abandoned(account)
    error = InvalidParameter("not multipart", param="image")
    assert isinstance(world.api.submissions.refuse(account, error), RateLimited)


def test_a_submission_over_the_limit_is_refused_before_its_body_is_read(world: World) -> None:
    account = world.fresh(world.account())
    limit = world.ports.policy.submissions_per_minute
    for _ in range(limit):
        world.api.submissions.refuse_when_over_limit(account)  # under the limit: nothing
        world.api.submissions.abandoned(account)
    with pytest.raises(RateLimited) as refused:
        world.api.submissions.refuse_when_over_limit(account)
    assert 1 <= refused.value.retry_after <= 60


def test_sightings_delete_only_after_the_grace() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    grace = timedelta(seconds=60)
    due, seen = Sightings().due({"a", "b"}, start, grace)
    assert due == [] and set(seen.since) == {"a", "b"}
    # "b" is needed again meanwhile: it is forgotten, and starts over if unneeded later.
    due, seen = seen.due({"a"}, start + grace, grace)
    assert due == ["a"] and dict(seen.since) == {}
    due, seen = seen.due({"b"}, start + 2 * grace, grace)
    assert due == [] and dict(seen.since) == {"b": start + 2 * grace}


def test_the_sweep_keeps_its_memory_in_the_store_it_was_given(world: World) -> None:
    world.blobs.put("uploads/job_" + "a" * 32, b"stray")
    store = MemorySightings()
    runner = JobProcessing(world.ports, store)
    assert runner.sweep_orphans() == 0
    assert set(store.load().since) == {"uploads/job_" + "a" * 32}
    # another runner over the same store remembers what the first one saw
    world.clock.advance(world.ports.policy.lease_seconds)
    assert JobProcessing(world.ports, store).sweep_orphans() == 1
    assert world.uploads() == set()
