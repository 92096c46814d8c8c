"""Website conversions: the API's rules and queue, no credits, invisible under /v1, and
downloads counted by the plan's daily quota."""

from __future__ import annotations

import pytest

from printjob_core.errors import (
    ImageTooLarge,
    InvalidParameter,
    JobNotCancelable,
    NotFound,
    QuotaExhausted,
    RateLimited,
    ResultExpired,
    ResultNotReady,
    TooManyActiveJobs,
    UnsupportedImage,
)
from printjob_core.fakes import fake_image
from printjob_core.model import JobChannel, JobOptions, JobStatus, OutputFormat
from printjob_core.options import parse_options
from printjob_core.services import conversion_options
from tests.keyed_reads import ADDRESS
from tests.unit.core.conftest import World
from tests.unit.core.website_support import Site, make_site


@pytest.fixture
def site(world: World) -> Site:
    return make_site(world)


def test_a_website_conversion_runs_on_the_queue_and_moves_no_credit(site: Site) -> None:
    me = site.person()
    site.world.operator.add_credits(me.account_id, 2)
    before = site.world.fresh(me.account_id)
    job = site.convert(me)
    assert (job.channel, job.status) == (JobChannel.WEBSITE, JobStatus.QUEUED)
    assert site.world.fresh(me.account_id) == before
    finished = site.finish(job)
    assert (finished.status, finished.credits_charged) == (JobStatus.SUCCEEDED, 0)
    assert site.world.fresh(me.account_id) == before
    assert [e.kind.value for e in site.world.operator.credit_history(me.account_id)] == ["add"]
    assert site.website.conversion(me, job.id) == finished


def test_an_account_without_credits_converts_on_the_website(site: Site) -> None:
    me = site.person()
    assert site.world.fresh(me.account_id).credits_available == 0
    assert site.converted(me).status is JobStatus.SUCCEEDED


def test_website_jobs_do_not_exist_under_v1(site: Site) -> None:
    me = site.person()
    created = site.website.create_key(me, "")
    authorization = f"Bearer {created.api_key}"
    job = site.convert(me)
    with pytest.raises(NotFound):
        site.world.api.job_for_key(authorization, ADDRESS, job.id)
    account = site.world.fresh(me.account_id)
    for act in (site.world.api.cancel, site.world.api.result):
        with pytest.raises(NotFound):
            act(account, job.id)
    assert site.world.api.account_for_key(authorization, ADDRESS).active_jobs == 0


def test_failure_and_cancel_release_nothing(site: Site) -> None:
    me = site.person()
    site.world.operator.add_credits(me.account_id, 1)
    before = site.world.fresh(me.account_id)
    failing = site.convert(me, "a")
    site.world.runner.fail(site.world.claim(), "no luck")
    canceled = site.website.cancel_conversion(me, site.convert(me, "b").id)
    assert canceled.status is JobStatus.CANCELED
    assert site.website.conversion(me, failing.id).status is JobStatus.FAILED
    assert site.world.fresh(me.account_id) == before
    assert site.world.uploads() == set()


def test_disabling_cancels_website_jobs_without_moving_credits(site: Site) -> None:
    me = site.person()
    site.world.operator.add_credits(me.account_id, 1)
    site.convert(me)
    canceled = site.world.operator.disable_account(me.account_id)
    assert [job.status for job in canceled] == [JobStatus.CANCELED]
    assert site.world.fresh(me.account_id).credits_held == 0


def test_only_website_jobs_are_canceled_or_downloaded_on_the_website(site: Site) -> None:
    me = site.person()
    site.world.operator.add_credits(me.account_id, 1)
    api_job = site.world.submit(site.world.fresh(me.account_id)).job
    assert site.website.conversion(me, api_job.id).channel is JobChannel.API
    for act in (site.website.cancel_conversion, site.website.download):
        with pytest.raises(NotFound):
            act(me, api_job.id)


def test_another_accounts_job_is_not_found(site: Site) -> None:
    me, other = site.person(), site.person("bob@example.com")
    theirs = site.convert(other)
    for act in (site.website.conversion, site.website.cancel_conversion, site.website.download):
        with pytest.raises(NotFound):
            act(me, theirs.id)
    with pytest.raises(NotFound):
        site.website.conversion(me, "job_\x00")


def test_the_api_image_rules_apply(site: Site) -> None:
    me = site.person()
    options = JobOptions(OutputFormat.PNG)
    with pytest.raises(UnsupportedImage):
        site.website.submit_conversion(me, b"not an image", options)
    with pytest.raises(ImageTooLarge):
        site.website.submit_conversion(me, fake_image(3000, 1001), options)
    assert site.world.uploads() == set()


def test_the_options_are_parsed_by_the_apis_parser_with_its_wording(site: Site) -> None:
    fields = [("format", "pdf"), ("size", "800x600"), ("csrf_token", "t"), ("dpi", "")]
    assert conversion_options(fields) == parse_options({"format": "pdf", "size": "800x600"})
    with pytest.raises(InvalidParameter) as website:
        conversion_options([("format", "gif")])
    with pytest.raises(InvalidParameter) as api:
        parse_options({"format": "gif"})
    assert (website.value.param, website.value.detail) == (api.value.param, api.value.detail)


def test_website_jobs_have_their_own_cap_and_per_minute_bucket(site: Site) -> None:
    me = site.person()
    site.world.operator.add_credits(me.account_id, 10)
    for n in range(3):
        site.convert(me, str(n))
    with pytest.raises(TooManyActiveJobs):
        site.convert(me, "4")
    # The API's allowance is untouched by the website's.
    assert site.world.submit(site.world.fresh(me.account_id)).job.channel is JobChannel.API
    site.world.reset_rate_windows()
    other = site.person("bob@example.com")
    for n in range(10):
        job = site.convert(other, f"x{n}")
        site.website.cancel_conversion(other, job.id)
    with pytest.raises(RateLimited):
        site.convert(other, "eleventh")


def test_a_free_account_downloads_five_results_a_day_and_repeats_are_free(site: Site) -> None:
    me = site.person()
    jobs = [site.converted(me, str(n)) for n in range(6)]
    for job in jobs[:5]:
        download = site.website.download(me, job.id)
        assert download.counted and download.data == b"<svg/>"
        assert (download.media_type, download.filename) == ("image/svg+xml", f"{job.id}.svg")
    again = site.website.download(me, jobs[0].id)
    assert not again.counted
    with pytest.raises(QuotaExhausted) as refused:
        site.website.download(me, jobs[5].id)
    assert "monthly plan has no daily cap" in refused.value.detail
    assert site.website.account_page(me).quota.used == 5
    # A new UTC day, a new quota.
    site.world.clock.moment = refused.value.resets_at
    assert site.website.download(me, jobs[5].id).counted
    assert site.website.quota(me).used == 1


def test_a_monthly_account_has_no_cap(site: Site) -> None:
    me = site.person()
    site.world.operator.set_plan(me.account_id, "monthly")
    for n in range(7):
        assert site.website.download(me, site.converted(me, str(n)).id).counted
    assert site.website.quota(me).limit is None


def test_nothing_to_download_before_success_or_after_retention(site: Site) -> None:
    me = site.person()
    queued = site.convert(me)
    with pytest.raises(ResultNotReady):
        site.website.download(me, queued.id)
    done = site.finish(queued)
    site.world.clock.advance(86400 + 1)
    with pytest.raises(ResultExpired):
        site.website.download(me, done.id)
    with pytest.raises(JobNotCancelable):
        site.website.cancel_conversion(me, done.id)
    assert site.website.quota(me).used == 0
