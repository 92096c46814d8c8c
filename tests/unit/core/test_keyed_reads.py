"""The one-snapshot reads (`job_for_key`, `account_for_key`), the server's only reads of a
job and an account: the stored values, and the refusals `authenticate` gives, for every
outcome."""

from __future__ import annotations

import attrs
import pytest

from printjob_core.errors import AccountDisabled, NotFound, RateLimited, Unauthenticated
from printjob_core.ports import JobByKey
from printjob_core.services import ApiService
from printjob_core.shapes import account_view
from printjob_core.views import UnitOfWorkViews
from tests.unit.core.conftest import World

ADDRESS = "192.0.2.7"


def keyed(world: World, credits: int = 5) -> tuple[str, str]:
    account = world.account(credits=credits)
    _, secret = world.operator.create_key(account.id)
    return account.id, f"Bearer {secret}"


def test_a_job_and_the_account_read_with_a_key(world: World) -> None:
    account_id, authorization = keyed(world)
    job = world.submit(world.fresh(account_id)).job
    assert world.api.job_for_key(authorization, ADDRESS, job.id) == world.job(job.id)
    view = world.api.account_for_key(authorization, ADDRESS)
    assert view == account_view(world.fresh(account_id), 1, world.ports.policy)
    assert (view.credits_held, view.active_jobs) == (1, 1)


def test_no_key_a_wrong_key_and_a_disabled_account(world: World) -> None:
    account_id, authorization = keyed(world)
    job = world.submit(world.fresh(account_id)).job
    for call in (
        lambda auth: world.api.job_for_key(auth, ADDRESS, job.id),
        lambda auth: world.api.account_for_key(auth, ADDRESS),
    ):
        with pytest.raises(Unauthenticated) as missing:
            call(None)
        assert not missing.value.key_sent
        with pytest.raises(Unauthenticated) as wrong:
            call("Bearer pjk1_" + "x" * 38)
        assert wrong.value.key_sent
    world.operator.disable_account(account_id)
    with pytest.raises(AccountDisabled):
        world.api.job_for_key(authorization, ADDRESS, job.id)
    with pytest.raises(AccountDisabled):
        world.api.account_for_key(authorization, ADDRESS)


def test_wrong_keys_count_against_the_network(world: World) -> None:
    wrong = "Bearer pjk1_" + "y" * 38
    for _ in range(30):
        with pytest.raises(Unauthenticated):
            world.api.account_for_key(wrong, ADDRESS)
    with pytest.raises(RateLimited):
        world.api.job_for_key(wrong, ADDRESS, "job_" + "0" * 32)


def test_another_accounts_job_and_malformed_ids_are_not_found(world: World) -> None:
    owner_id, _ = keyed(world)
    job = world.submit(world.fresh(owner_id)).job
    _, stranger = keyed(world)
    for job_id in (job.id, "job_" + "f" * 32, "../etc", job.id.upper()):
        with pytest.raises(NotFound):
            world.api.job_for_key(stranger, ADDRESS, job_id)


def test_every_read_counts_even_a_not_found_one(world: World) -> None:
    account_id, authorization = keyed(world)
    job = world.submit(world.fresh(account_id)).job
    for i in range(120):
        if i % 3 == 0:
            with pytest.raises(NotFound):
                world.api.job_for_key(authorization, ADDRESS, "job_" + "e" * 32)
        elif i % 3 == 1:
            world.api.job_for_key(authorization, ADDRESS, job.id)
        else:
            world.api.account_for_key(authorization, ADDRESS)
    with pytest.raises(RateLimited) as limited:
        world.api.job_for_key(authorization, ADDRESS, job.id)
    assert limited.value.retry_after >= 1
    with pytest.raises(RateLimited):
        world.api.job_for_key(authorization, ADDRESS, "job_" + "e" * 32)
    with pytest.raises(RateLimited):
        world.api.account_for_key(authorization, ADDRESS)


class RecordingViews(UnitOfWorkViews):
    """The generic views, remembering which job ids were asked for."""

    def __init__(self, world: World) -> None:
        super().__init__(world.ports.reader)
        self.job_ids: list[str] = []

    def job_by_key(self, key_hash: str, job_id: str) -> JobByKey | None:
        self.job_ids.append(job_id)
        return super().job_by_key(key_hash, job_id)


@pytest.mark.parametrize(
    "job_id", ["job_\x00" + "0" * 32, "job_" + "A" * 32, "job_" + "0" * 31, "../x", "'", ""]
)
def test_a_malformed_job_id_never_reaches_storage(world: World, job_id: str) -> None:
    """Storage sees only well-formed ids (PostgreSQL refuses a NUL in text: a 500)."""
    views = RecordingViews(world)
    api = ApiService(attrs.evolve(world.ports, views=views))
    _, authorization = keyed(world)
    with pytest.raises(NotFound):
        api.job_for_key(authorization, ADDRESS, job_id)
    assert views.job_ids == []
    with pytest.raises(Unauthenticated):
        api.job_for_key("Bearer pjk1_" + "z" * 38, ADDRESS, job_id)
