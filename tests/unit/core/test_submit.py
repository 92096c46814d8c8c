"""Submission checks besides options: the image (contract 4.1, 7, 8) and the order of checks."""

from __future__ import annotations

import pytest

from printjob_core.errors import (
    AccountDisabled,
    ImageTooLarge,
    InsufficientCredits,
    InvalidParameter,
    ProblemError,
    ServerBusy,
    TooManyActiveJobs,
    UnsupportedImage,
)
from printjob_core.fakes import fake_image
from printjob_core.limits import Policy
from printjob_core.model import JobStatus
from printjob_core.ports import ImageInfo
from printjob_core.services import ApiService, Ports, check_image

from .conftest import World


def assert_nothing_kept(world: World) -> None:
    assert world.store.state.jobs == {}
    assert world.store.state.idempotency == {}
    assert world.uploads() == set()
    assert all(a.credits_held == 0 for a in world.store.state.accounts.values())


@pytest.mark.parametrize(
    ("width", "height"),
    [(16, 16), (1000, 3000), (3000, 1000), (1732, 1732), (16, 320), (320, 16), (387, 7740)],
)
def test_images_within_bounds_are_accepted(world: World, width: int, height: int):
    account = world.account()
    job = world.submit(account, image=fake_image(width, height)).job
    assert job.status is JobStatus.QUEUED
    assert world.blobs.get(job.image_key) == fake_image(width, height)


@pytest.mark.parametrize(
    ("width", "height"), [(1733, 1732), (3001, 1000), (1000, 3001), (5000, 5000)]
)
def test_over_3_megapixels_is_image_too_large(world: World, width: int, height: int):
    account = world.account()
    with pytest.raises(ImageTooLarge) as info:
        world.submit(account, image=fake_image(width, height))
    assert info.value.status == 413 and info.value.code == "image_too_large"
    assert_nothing_kept(world)


@pytest.mark.parametrize(("width", "height"), [(15, 100), (100, 15), (1, 1), (15, 15), (0, 100)])
def test_a_side_under_16_is_unsupported(world: World, width: int, height: int):
    account = world.account()
    with pytest.raises(UnsupportedImage) as info:
        world.submit(account, image=fake_image(width, height))
    assert info.value.status == 422 and info.value.code == "unsupported_image"
    assert "16" in info.value.detail
    assert_nothing_kept(world)


@pytest.mark.parametrize(("width", "height"), [(16, 321), (321, 16), (100, 2001), (2001, 100)])
def test_long_side_over_20_times_short_side_is_unsupported(world: World, width, height):
    account = world.account()
    with pytest.raises(UnsupportedImage) as info:
        world.submit(account, image=fake_image(width, height))
    assert "20" in info.value.detail
    assert_nothing_kept(world)


def test_unreadable_image_is_unsupported(world: World):
    account = world.account()
    with pytest.raises(UnsupportedImage):
        world.submit(account, image=b"GIF89a not really")
    assert_nothing_kept(world)


def test_missing_image_is_invalid_parameter_image(world: World):
    account = world.account()
    with pytest.raises(InvalidParameter) as info:
        world.api.submit(world.fresh(account), [("format", "svg")], None)
    assert info.value.param == "image"
    assert_nothing_kept(world)


def test_upload_over_30_mb_is_image_too_large(world: World):
    account = world.account()
    big = fake_image(100, 100) + b" " + b"x" * (31_457_280 - len(fake_image(100, 100)))
    with pytest.raises(ImageTooLarge):
        world.submit(account, image=big)
    assert_nothing_kept(world)
    exact = big[:31_457_280]
    assert world.submit(account, image=exact).job.status is JobStatus.QUEUED


def test_check_image_directly():
    policy = Policy()
    check_image(ImageInfo("PNG", 3000, 1000), policy)
    with pytest.raises(ImageTooLarge):
        check_image(ImageInfo("PNG", 3000, 1001), policy)
    with pytest.raises(UnsupportedImage):
        check_image(ImageInfo("PNG", 16, 321), policy)
    check_image(ImageInfo("PNG", 16, 320), policy)


@pytest.mark.parametrize(
    ("fields", "image", "credits", "expected"),
    [
        # fields (400) before the image (413/422)
        ([("format", "nope")], fake_image(5000, 5000), 5, InvalidParameter),
        ([("format", "svg"), ("x", "1")], b"garbage", 5, InvalidParameter),
        # the image before credits (402)
        ([("format", "svg")], fake_image(10, 10), 0, UnsupportedImage),
        ([("format", "svg")], fake_image(5000, 5000), 0, ImageTooLarge),
        # credits before active jobs
        ([("format", "svg")], fake_image(), 0, InsufficientCredits),
    ],
)
def test_order_of_checks(world: World, fields, image, credits, expected):
    account = world.account(credits=credits)
    with pytest.raises(ProblemError) as info:
        world.submit(account, fields, image)
    assert type(info.value) is expected


def test_disabled_account_submission_is_refused_in_the_transaction(world: World):
    account = world.account(credits=5)
    stale = world.fresh(account)
    world.operator.disable_account(account.id)
    with pytest.raises(AccountDisabled):
        world.api.submit(stale, [("format", "svg")], fake_image())
    assert_nothing_kept(world)


def test_full_queue_is_server_busy_and_changes_nothing(world: World):
    ports = Ports(
        uow=world.ports.uow,
        reader=world.ports.reader,
        clock=world.clock,
        ids=world.ids,
        blobs=world.blobs,
        limiter=world.limiter,
        probe=world.ports.probe,
        policy=Policy(max_queue_depth=2),
    )
    api = ApiService(ports)
    one = world.account(credits=5)
    two = world.account(credits=5)
    api.submit(world.fresh(one), [("format", "svg")], fake_image(salt="1"))
    api.submit(world.fresh(two), [("format", "svg")], fake_image(salt="2"))
    with pytest.raises(ServerBusy) as info:
        api.submit(world.fresh(one), [("format", "svg")], fake_image(salt="3"), "retry-me")
    assert info.value.status == 503 and info.value.retry_after is not None
    assert len(world.store.state.jobs) == 2
    assert world.store.state.idempotency == {}
    assert world.fresh(one).credits_held == 1
    assert len(world.uploads()) == 2
    world.claim()
    again = api.submit(world.fresh(one), [("format", "svg")], fake_image(salt="3"), "retry-me")
    assert again.replayed is False


def test_too_many_active_jobs_leaves_no_upload(world: World):
    account = world.account(credits=5)
    for i in range(3):
        world.submit(account, image=fake_image(salt=str(i)))
    with pytest.raises(TooManyActiveJobs):
        world.submit(account, image=fake_image(salt="x"))
    assert len(world.uploads()) == 3
    assert world.fresh(account).credits_held == 3


def test_options_are_kept_on_the_job(world: World):
    account = world.account()
    job = world.submit(
        account, [("format", "png"), ("size", "300X200"), ("dpi", "72"), ("colors", "3")]
    ).job
    assert job.options.format.value == "png"
    assert str(job.options.size) == "300x200"
    assert job.options.dpi == 72 and job.options.colors == 3


def test_the_submitting_request_id_is_kept_with_the_job_and_a_replay_keeps_the_first(
    world: World,
):
    account = world.account()
    first = world.api.submit(
        world.fresh(account), [("format", "svg")], fake_image(), "k1", request_id="req_first"
    )
    replay = world.api.submit(
        world.fresh(account), [("format", "svg")], fake_image(), "k1", request_id="req_again"
    )
    assert replay.replayed and replay.job.id == first.job.id
    assert world.store.state.jobs[first.job.id].request_id == "req_first"
    plain = world.submit(account).job
    assert world.store.state.jobs[plain.id].request_id is None
