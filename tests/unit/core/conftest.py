"""A fully wired core over the in-memory fakes, plus helpers the core tests share."""

from __future__ import annotations

from collections.abc import Iterable

import attrs
import pytest

from printjob_core.fakes import (
    FakeBlobStore,
    FakeClock,
    FakeIds,
    FakeImageProbe,
    FakeRateLimiter,
    FakeStore,
    fake_image,
)
from printjob_core.model import Account, ConversionOutput, Job
from printjob_core.services import (
    ApiService,
    Claim,
    JobProcessing,
    OperatorService,
    Ports,
    Submission,
)
from tests.keyed_reads import KeyedReads

DOCS_URL = "https://docs.example.test/errors"


@attrs.define
class World:
    """The three services over one set of fakes, with helpers for common steps."""

    store: FakeStore
    clock: FakeClock
    ids: FakeIds
    blobs: FakeBlobStore
    limiter: FakeRateLimiter
    ports: Ports
    api: ApiService
    runner: JobProcessing
    operator: OperatorService
    #: The server's reads (`GET /v1/jobs/{id}`, `GET /v1/account`), with a key per account.
    reads: KeyedReads

    def account(self, credits: int = 10, active_jobs_max: int = 3) -> Account:
        return self.operator.create_account(credits, active_jobs_max)

    def fresh(self, account: Account | str) -> Account:
        account_id = account if isinstance(account, str) else account.id
        found = self.store.state.accounts[account_id]
        return found

    def job(self, job_id: str) -> Job:
        return self.store.state.jobs[job_id]

    def submit(
        self,
        account: Account,
        fields: Iterable[tuple[str, str]] | None = None,
        image: bytes | None = None,
        key: str | None = None,
    ) -> Submission:
        if fields is None:
            fields = [("format", "svg")]
        if image is None:
            image = fake_image()
        return self.api.submit(self.fresh(account), fields, image, key)

    def claim(self) -> Claim:
        claim = self.runner.claim()
        assert claim is not None
        return claim

    def uploads(self) -> set[str]:
        return set(self.blobs.keys("uploads/"))

    def results(self) -> set[str]:
        return set(self.blobs.keys("results/"))

    def reset_rate_windows(self) -> None:
        """Move to the start of the next minute: every per-minute count starts again."""
        seconds = int(self.clock.now().timestamp())
        self.clock.advance(60 - seconds % 60)


def output(data: bytes = b"<svg/>", width: int = 100, height: int = 100) -> ConversionOutput:
    return ConversionOutput(
        data=data, width=width, height=height, colors=2, background_removed=False
    )


def make_world() -> World:
    store = FakeStore()
    clock = FakeClock()
    ids = FakeIds()
    blobs = FakeBlobStore()
    limiter = FakeRateLimiter()
    ports = Ports(
        uow=store.unit_of_work,
        reader=store.unit_of_work,
        clock=clock,
        ids=ids,
        blobs=blobs,
        limiter=limiter,
        probe=FakeImageProbe(),
    )
    api = ApiService(ports)
    operator = OperatorService(ports)
    return World(
        store=store,
        clock=clock,
        ids=ids,
        blobs=blobs,
        limiter=limiter,
        ports=ports,
        api=api,
        runner=JobProcessing(ports),
        operator=operator,
        reads=KeyedReads(api, operator),
    )


@pytest.fixture
def world() -> World:
    return make_world()
