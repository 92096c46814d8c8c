"""The website's service over the same fakes as the core's other tests."""

from __future__ import annotations

import attrs

from printjob_core.fakes import FakePasswordHasher, fake_image
from printjob_core.model import Job, JobOptions, OutputFormat
from printjob_core.services import IssuedSession, SignedIn, WebsiteService
from tests.unit.core.conftest import World, output

PASSWORD = "correct horse battery"
CLIENT = "203.0.113.7"


@attrs.define
class Site:
    """A world with the website wired over it."""

    world: World
    website: WebsiteService

    def sign_up(self, email: str = "ada@example.com") -> IssuedSession:
        return self.website.sign_up(email, PASSWORD, CLIENT)

    def person(self, email: str = "ada@example.com") -> SignedIn:
        return self.sign_up(email).signed_in

    def convert(self, signed_in: SignedIn, salt: str = "") -> Job:
        return self.website.submit_conversion(
            signed_in, fake_image(salt=salt), JobOptions(OutputFormat.SVG)
        )

    def finish(self, job: Job, data: bytes = b"<svg/>") -> Job:
        """Run the next queued job (which must be `job`) to success."""
        claim = self.world.claim()
        assert claim.job.id == job.id
        finished = self.world.runner.succeed(claim, output(data))
        assert finished is not None
        return finished

    def converted(self, signed_in: SignedIn, salt: str = "") -> Job:
        return self.finish(self.convert(signed_in, salt))


def make_site(world: World, *, signup_open: bool = True, sign_ups_per_day: int = 5) -> Site:
    return Site(
        world,
        WebsiteService(
            world.ports,
            FakePasswordHasher(),
            signup_open=signup_open,
            sign_ups_per_day=sign_ups_per_day,
        ),
    )


__all__ = ["CLIENT", "PASSWORD", "Site", "make_site"]
