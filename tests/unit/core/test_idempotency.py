"""Idempotent submission (contract 4.1 rule 3, design decisions 3-5)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from printjob_core import idempotency
from printjob_core.errors import (
    IdempotencyKeyReused,
    InsufficientCredits,
    InvalidParameter,
    RateLimited,
    TooManyActiveJobs,
    UnsupportedImage,
)
from printjob_core.model import IdempotencyRecord, JobOptions, JobStatus, OutputFormat, Size

from .conftest import World, output

NOW = datetime(2026, 1, 1, tzinfo=UTC)
IMAGE = b"IMG PNG 100 100 one"
OTHER_IMAGE = b"IMG PNG 100 100 two"


def test_fingerprint_binds_account_options_and_image():
    opts = JobOptions(OutputFormat.SVG)
    base = idempotency.fingerprint("a", opts, "d1")
    assert base == idempotency.fingerprint("a", JobOptions(OutputFormat.SVG), "d1")
    assert len(base) == 64
    assert base != idempotency.fingerprint("b", opts, "d1")
    assert base != idempotency.fingerprint("a", opts, "d2")
    assert base != idempotency.fingerprint("a", JobOptions(OutputFormat.PDF), "d1")
    assert base != idempotency.fingerprint("a", JobOptions(OutputFormat.SVG, colors=3), "d1")
    sized = JobOptions(OutputFormat.SVG, size=Size(10, 20))
    assert idempotency.fingerprint("a", sized, "d1") != idempotency.fingerprint(
        "a", JobOptions(OutputFormat.SVG, size=Size(20, 10)), "d1"
    )


def test_replayed_job_id_rules():
    record = IdempotencyRecord("a", "k", "fp", "job_x", NOW, NOW + timedelta(hours=24))
    assert idempotency.replayed_job_id(None, "fp", NOW) is None
    assert idempotency.replayed_job_id(record, "fp", NOW) == "job_x"
    assert idempotency.replayed_job_id(record, "fp", NOW + timedelta(hours=24)) is None
    with pytest.raises(IdempotencyKeyReused) as info:
        idempotency.replayed_job_id(record, "other", NOW)
    assert info.value.code == "idempotency_key_reused" and info.value.status == 422
    assert idempotency.replayed_job_id(record, "other", NOW + timedelta(hours=25)) is None


def test_same_key_same_image_same_options_returns_first_job_without_second_hold(world: World):
    account = world.account(credits=5)
    first = world.submit(account, [("format", "svg")], IMAGE, "k1")
    assert first.replayed is False
    world.clock.advance(3600)
    again = world.submit(account, [("format", "svg")], IMAGE, "k1")
    assert again.replayed is True
    assert again.job == first.job
    assert len(world.store.state.jobs) == 1
    assert world.fresh(account).credits_held == 1
    assert world.uploads() == {first.job.image_key}


def test_replay_returns_the_job_as_it_is_now(world: World):
    account = world.account(credits=5)
    first = world.submit(account, [("format", "svg")], IMAGE, "k1").job
    world.runner.succeed(world.claim(), output())
    again = world.submit(account, [("format", "svg")], IMAGE, "k1")
    assert again.replayed is True
    assert again.job.id == first.id
    assert again.job.status is JobStatus.SUCCEEDED
    assert world.fresh(account).credits_balance == 4


def test_replay_works_even_when_credits_or_active_jobs_would_refuse_a_new_job(world: World):
    account = world.account(credits=1)
    first = world.submit(account, [("format", "svg")], IMAGE, "k1").job
    with pytest.raises(InsufficientCredits):
        world.submit(account, [("format", "svg")], OTHER_IMAGE, "k2")
    again = world.submit(account, [("format", "svg")], IMAGE, "k1")
    assert again.replayed and again.job.id == first.id


def test_after_24_hours_the_key_makes_a_new_job(world: World):
    account = world.account(credits=5)
    first = world.submit(account, [("format", "svg")], IMAGE, "k1").job
    world.clock.advance(24 * 3600 - 1)
    assert world.submit(account, [("format", "svg")], IMAGE, "k1").replayed is True
    world.clock.advance(1)
    second = world.submit(account, [("format", "svg")], IMAGE, "k1")
    assert second.replayed is False
    assert second.job.id != first.id
    assert world.fresh(account).credits_held == 2
    # and the key now points at the new job
    assert world.submit(account, [("format", "svg")], IMAGE, "k1").job.id == second.job.id


def test_after_24_hours_another_request_may_use_the_key(world: World):
    account = world.account(credits=5)
    world.submit(account, [("format", "svg")], IMAGE, "k1")
    world.clock.advance(24 * 3600)
    world.runner.sweep()
    fresh = world.submit(account, [("format", "pdf")], OTHER_IMAGE, "k1")
    assert fresh.replayed is False


@pytest.mark.parametrize(
    ("fields", "image"),
    [
        ([("format", "svg")], OTHER_IMAGE),
        ([("format", "pdf")], IMAGE),
        ([("format", "svg"), ("colors", "4")], IMAGE),
        ([("format", "svg"), ("size", "100x100")], IMAGE),
        ([("format", "svg"), ("background", "remove")], IMAGE),
        ([("format", "svg"), ("size", "100x100"), ("dpi", "72")], IMAGE),
    ],
)
def test_same_key_with_other_image_or_options_is_refused(world: World, fields, image):
    account = world.account(credits=5)
    first = world.submit(account, [("format", "svg")], IMAGE, "k1").job
    with pytest.raises(IdempotencyKeyReused) as info:
        world.submit(account, fields, image, "k1")
    assert info.value.status == 422
    assert len(world.store.state.jobs) == 1
    assert world.fresh(account).credits_held == 1
    assert world.uploads() == {first.image_key}
    # the key still points at the first job
    assert world.submit(account, [("format", "svg")], IMAGE, "k1").job.id == first.id


@pytest.mark.parametrize(
    ("first_fields", "second_fields"),
    [
        ([("format", "svg"), ("size", "1000X500")], [("format", "svg"), ("size", "1000x500")]),
        ([("format", "svg"), ("colors", "")], [("format", "svg")]),
        ([("format", "svg"), ("background", "")], [("format", "svg"), ("background", "keep")]),
        ([("format", "svg")], [("background", "keep"), ("format", "svg"), ("size", "original")]),
        ([("format", "svg"), ("size", "")], [("format", "svg"), ("size", "original")]),
        (
            [("format", "png"), ("size", "100x100"), ("colors", "7"), ("dpi", "150")],
            [("dpi", "150"), ("colors", "7"), ("size", "100X100"), ("format", "png")],
        ),
    ],
)
def test_normalised_options_compare_equal(world: World, first_fields, second_fields):
    account = world.account(credits=5)
    first = world.submit(account, first_fields, IMAGE, "k1").job
    again = world.submit(account, second_fields, IMAGE, "k1")
    assert again.replayed is True and again.job.id == first.id


def test_quoted_and_bare_key_are_the_same_key(world: World):
    account = world.account(credits=5)
    first = world.submit(account, [("format", "svg")], IMAGE, '"abc"').job
    again = world.submit(account, [("format", "svg")], IMAGE, "abc")
    assert again.replayed and again.job.id == first.id
    with pytest.raises(IdempotencyKeyReused):
        world.submit(account, [("format", "pdf")], IMAGE, "abc")


def test_keys_are_per_account(world: World):
    one = world.account(credits=5)
    two = world.account(credits=5)
    first = world.submit(one, [("format", "svg")], IMAGE, "shared").job
    other = world.submit(two, [("format", "svg")], IMAGE, "shared")
    assert other.replayed is False and other.job.id != first.id
    assert other.job.account_id == two.id
    # another account's different request does not trip the first account's key either
    third = world.submit(two, [("format", "pdf")], OTHER_IMAGE, "other")
    assert third.replayed is False


def test_keys_are_case_sensitive(world: World):
    account = world.account(credits=5)
    first = world.submit(account, [("format", "svg")], IMAGE, "Key").job
    second = world.submit(account, [("format", "svg")], IMAGE, "key")
    assert second.replayed is False and second.job.id != first.id


def test_no_key_never_replays(world: World):
    account = world.account(credits=5)
    a = world.submit(account, [("format", "svg")], IMAGE).job
    b = world.submit(account, [("format", "svg")], IMAGE)
    assert b.replayed is False and b.job.id != a.id


def test_wrong_field_keeps_no_key(world: World):
    account = world.account(credits=5)
    with pytest.raises(InvalidParameter):
        world.submit(account, [("format", "svg"), ("colour", "3")], IMAGE, "k1")
    with pytest.raises(InvalidParameter):
        world.submit(account, [("format", "svg"), ("colors", "0")], IMAGE, "k1")
    with pytest.raises(UnsupportedImage):
        world.submit(account, [("format", "svg")], b"IMG PNG 10 10", "k1")
    assert world.store.state.idempotency == {}
    fixed = world.submit(account, [("format", "pdf")], OTHER_IMAGE, "k1")
    assert fixed.replayed is False


def test_insufficient_credits_keeps_no_key(world: World):
    account = world.account(credits=0)
    with pytest.raises(InsufficientCredits):
        world.submit(account, [("format", "svg")], IMAGE, "k1")
    assert world.store.state.idempotency == {}
    world.operator.add_credits(account.id, 1)
    fixed = world.submit(account, [("format", "svg")], IMAGE, "k1")
    assert fixed.replayed is False
    assert world.fresh(account).credits_held == 1


def test_too_many_active_jobs_keeps_no_key(world: World):
    account = world.account(credits=10)
    jobs = [world.submit(account, image=f"IMG PNG 100 100 {i}".encode()).job for i in range(3)]
    with pytest.raises(TooManyActiveJobs):
        world.submit(account, [("format", "svg")], IMAGE, "k1")
    assert world.store.state.idempotency == {}
    world.api.cancel(world.fresh(account), jobs[0].id)
    fixed = world.submit(account, [("format", "svg")], IMAGE, "k1")
    assert fixed.replayed is False


def test_rate_limited_submission_keeps_no_key(world: World):
    account = world.account(credits=100, active_jobs_max=10)
    jobs = [world.submit(account, image=f"IMG PNG 100 100 {i}".encode()).job for i in range(9)]
    with pytest.raises(InvalidParameter):  # refused, but it counts as a submission
        world.submit(account, [("format", "gif")], IMAGE, "k1")
    with pytest.raises(RateLimited):
        world.submit(account, [("format", "svg")], IMAGE, "k1")
    assert world.store.state.idempotency == {}
    assert len(world.store.state.jobs) == 9
    world.api.cancel(world.fresh(account), jobs[0].id)
    world.reset_rate_windows()
    assert world.submit(account, [("format", "svg")], IMAGE, "k1").replayed is False


def test_replay_does_not_write_an_upload(world: World):
    account = world.account(credits=5)
    first = world.submit(account, [("format", "svg")], IMAGE, "k1").job
    puts: list[str] = []
    real_put = world.blobs.put

    def spy(key: str, data: bytes) -> None:
        puts.append(key)
        real_put(key, data)

    world.blobs.put = spy  # type: ignore[method-assign]
    assert world.submit(account, [("format", "svg")], IMAGE, "k1").job.id == first.id
    assert puts == []


def test_a_request_with_the_same_key_landing_meanwhile_makes_one_job(world: World):
    """Two requests with one key race: the second to commit answers with the first's job."""
    account = world.account(credits=5)
    real_put = world.blobs.put
    inner: list = []

    def racing_put(key: str, data: bytes) -> None:
        real_put(key, data)
        if not inner:
            # the other request passes every check and commits while this one writes
            inner.append(None)
            inner[0] = world.submit(account, [("format", "svg")], IMAGE, "race")

    world.blobs.put = racing_put  # type: ignore[method-assign]
    outer = world.submit(account, [("format", "svg")], IMAGE, "race")
    first = inner[0]
    assert first.replayed is False
    assert outer.replayed is True and outer.job.id == first.job.id
    assert len(world.store.state.jobs) == 1
    assert world.fresh(account).credits_held == 1
    assert world.uploads() == {first.job.image_key}


def test_a_new_key_has_its_digest_made_while_the_upload_is_stored(world: World):
    """A fresh keyed upload is hashed by the store while it is written (one pass over a
    large upload, overlapped with the write); a retry is hashed first and writes nothing."""
    account = world.account(credits=5)
    real = world.blobs.put_with_digest
    hashed_while_stored: list[str] = []

    def spy(key: str, data: bytes) -> str:
        hashed_while_stored.append(key)
        return real(key, data)

    world.blobs.put_with_digest = spy  # type: ignore[method-assign]
    first = world.submit(account, [("format", "svg")], IMAGE, "fresh").job
    assert hashed_while_stored == [first.image_key]
    assert world.submit(account, [("format", "svg")], IMAGE, "fresh").job.id == first.id
    assert hashed_while_stored == [first.image_key]
    with pytest.raises(IdempotencyKeyReused):
        world.submit(account, [("format", "png")], IMAGE, "fresh")
    world.submit(account, [("format", "svg")], IMAGE)  # no key: plain `put`, no digest
    assert hashed_while_stored == [first.image_key]
