"""Per-account and per-network limits (contract 4.1 rules 5-6, 5.5, section 8)."""

from __future__ import annotations

import pytest

from printjob_core.errors import (
    InvalidParameter,
    NotFound,
    RateLimited,
    TooManyActiveJobs,
    Unauthenticated,
)
from printjob_core.limits import (
    Policy,
    client_network,
    reads_bucket,
    submissions_bucket,
    wrong_keys_bucket,
)

from .conftest import World, output


def img(i: int) -> bytes:
    return f"IMG PNG 100 100 {i}".encode()


@pytest.mark.parametrize("active_max", [3, 5, 10])
def test_active_jobs_limit_names_the_number(world: World, active_max: int):
    account = world.account(credits=50, active_jobs_max=active_max)
    for i in range(active_max):
        world.submit(account, image=img(i))
    world.reset_rate_windows()  # 11 submissions need two minutes
    with pytest.raises(TooManyActiveJobs) as info:
        world.submit(account, image=img(99))
    assert info.value.code == "too_many_active_jobs" and info.value.status == 429
    assert str(active_max) in info.value.detail
    assert len(world.store.state.jobs) == active_max
    assert world.fresh(account).credits_held == active_max
    assert world.uploads() == {j.image_key for j in world.store.state.jobs.values()}


def test_a_finished_job_frees_an_active_slot(world: World):
    account = world.account(credits=50)
    for i in range(3):
        world.submit(account, image=img(i))
    world.runner.succeed(world.claim(), output())
    world.submit(account, image=img(3))
    world.runner.fail(world.claim(), "x")
    world.submit(account, image=img(4))
    with pytest.raises(TooManyActiveJobs):
        world.submit(account, image=img(5))


def test_running_jobs_count_as_active(world: World):
    account = world.account(credits=50)
    for i in range(3):
        world.submit(account, image=img(i))
    world.claim()
    world.claim()
    with pytest.raises(TooManyActiveJobs):
        world.submit(account, image=img(5))
    assert world.reads.account(world.fresh(account)).active_jobs == 3


def test_active_jobs_are_per_account(world: World):
    one = world.account(credits=50)
    two = world.account(credits=50)
    for i in range(3):
        world.submit(one, image=img(i))
    assert world.submit(two, image=img(0)).job.account_id == two.id


def test_eleventh_submission_in_a_minute_is_rate_limited_with_retry_after(world: World):
    account = world.account(credits=100, active_jobs_max=10)
    world.clock.advance(15)  # 45 s left in this minute
    for i in range(10):
        world.submit(account, image=img(i))
    with pytest.raises(RateLimited) as info:
        world.submit(account, image=img(10))
    assert info.value.code == "rate_limited" and info.value.status == 429
    assert info.value.retry_after == 45
    assert len(world.store.state.jobs) == 10
    assert world.fresh(account).credits_held == 10
    # other accounts have their own count
    other = world.account(credits=5)
    world.submit(other, image=img(0))
    # the next minute starts a new count (the active-jobs limit now answers instead)
    world.clock.advance(45)
    with pytest.raises(TooManyActiveJobs):
        world.submit(account, image=img(11))


def test_refused_submissions_count_towards_the_minute(world: World):
    account = world.account(credits=100)
    for _ in range(10):
        with pytest.raises(InvalidParameter):
            world.submit(account, [("format", "tiff")])
    with pytest.raises(RateLimited):
        world.submit(account)
    assert world.store.state.jobs == {}


def test_reads_are_limited_to_120_a_minute_across_get_cancel_result_and_account(world: World):
    account = world.account(credits=5)
    job = world.submit(account).job
    fresh = world.fresh(account)
    unknown = "job_" + "f" * 32

    def missing_result() -> None:
        with pytest.raises(NotFound):
            world.api.result(fresh, unknown)

    def missing_cancel() -> None:
        with pytest.raises(NotFound):
            world.api.cancel(fresh, unknown)

    calls = [
        lambda: world.reads.job(fresh, job.id),
        lambda: world.reads.account(fresh),
        missing_result,
        missing_cancel,
    ]
    for i in range(120):
        calls[i % 4]()
    for call in (
        lambda: world.reads.job(fresh, job.id),
        lambda: world.reads.account(fresh),
        lambda: world.api.result(fresh, job.id),
        lambda: world.api.cancel(fresh, job.id),
    ):
        with pytest.raises(RateLimited) as info:
            call()
        assert info.value.retry_after == 60
    # the refused cancel did nothing
    assert world.job(job.id).status.value == "queued"
    # submissions have their own limit
    world.api.submit(fresh, [("format", "svg")], img(1))
    world.reset_rate_windows()
    assert world.reads.job(fresh, job.id).id == job.id


def test_reads_limit_is_per_account(world: World):
    one = world.account()
    two = world.account()
    for _ in range(120):
        world.reads.account(world.fresh(one))
    with pytest.raises(RateLimited):
        world.reads.account(world.fresh(one))
    world.reads.account(world.fresh(two))


def test_31st_wrong_key_from_one_network_is_rate_limited_but_a_valid_key_works(world: World):
    account = world.account()
    _, secret = world.operator.create_key(account.id)
    world.clock.advance(20)
    wrong = "pjk1_" + "x" * 38
    for _ in range(30):
        with pytest.raises(Unauthenticated) as info:
            world.api.authenticate(f"Bearer {wrong}", "198.51.100.7")
        assert info.value.key_sent is True
    with pytest.raises(RateLimited) as limited:
        world.api.authenticate(f"Bearer {wrong}", "198.51.100.7")
    assert limited.value.retry_after == 40
    assert world.api.authenticate(f"Bearer {secret}", "198.51.100.7").id == account.id
    # another IPv4 address is another network
    with pytest.raises(Unauthenticated):
        world.api.authenticate(f"Bearer {wrong}", "198.51.100.8")
    # a request with no key at all is not a wrong key
    with pytest.raises(Unauthenticated) as missing:
        world.api.authenticate(None, "198.51.100.7")
    assert missing.value.key_sent is False
    # the next minute the network may try again
    world.clock.advance(40)
    with pytest.raises(Unauthenticated):
        world.api.authenticate(f"Bearer {wrong}", "198.51.100.7")


def test_malformed_and_revoked_keys_count_as_wrong_keys(world: World):
    account = world.account()
    key, secret = world.operator.create_key(account.id)
    world.operator.revoke_key(key.id)
    sent = ["Bearer nope", "Basic abc", "Bearer", f"Bearer {secret}", "Bearer pjk1_short"]
    for i in range(30):
        with pytest.raises(Unauthenticated):
            world.api.authenticate(sent[i % len(sent)], "203.0.113.1")
    with pytest.raises(RateLimited):
        world.api.authenticate("Bearer nope", "203.0.113.1")


def test_ipv6_clients_are_grouped_per_64(world: World):
    wrong = "Bearer pjk1_" + "y" * 38
    for i in range(30):
        with pytest.raises(Unauthenticated):
            world.api.authenticate(wrong, f"2001:db8:1:2::{i + 1:x}")
    with pytest.raises(RateLimited):
        world.api.authenticate(wrong, "2001:db8:1:2:ffff:ffff:ffff:ffff")
    with pytest.raises(Unauthenticated):
        world.api.authenticate(wrong, "2001:db8:1:3::1")


def test_client_network():
    assert client_network("192.0.2.1") == "192.0.2.1"
    assert client_network("2001:db8::1") == client_network("2001:db8::ffff:1")
    assert client_network("2001:db8::1") == "2001:db8::/64"
    assert client_network("2001:db8:0:1::1") != client_network("2001:db8::1")
    assert client_network("::ffff:192.0.2.1") == "192.0.2.1"
    assert client_network("not-an-ip") == "not-an-ip"
    assert wrong_keys_bucket("2001:db8::1") == wrong_keys_bucket("2001:db8::2")
    assert wrong_keys_bucket("192.0.2.1") != wrong_keys_bucket("192.0.2.2")
    assert submissions_bucket("a") != reads_bucket("a")


def test_policy_defaults_match_the_contract():
    policy = Policy()
    assert policy.submissions_per_minute == 10
    assert policy.reads_per_minute == 120
    assert policy.wrong_keys_per_minute == 30
    assert policy.idempotency_ttl_seconds == 86_400
    assert policy.result_ttl_seconds == 86_400
    assert policy.max_upload_bytes == 31_457_280
    assert policy.max_upload_pixels == 3_000_000
    assert policy.job_cost == 1
    assert policy.max_attempts == 3
