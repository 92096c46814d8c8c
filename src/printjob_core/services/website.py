"""The website's use cases: people, sessions, the account page, keys and conversions.

A person belongs to one account, the one that holds the API keys and credits. Website
conversions are jobs on the same queue and workers as the API's, with the API's image
and option rules, but they hold and charge no credits and are invisible under `/v1`;
their downloads are counted by the plan's daily quota instead (`printjob_core.quota`).
Every method is one unit of work; the slow password hash is computed outside any
transaction, so it never holds a write lock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

import attrs

from printjob_core import quota, sessions, signins
from printjob_core.errors import (
    BadCredentials,
    EmailTaken,
    InvalidParameter,
    InviteInvalid,
    KeyLimitReached,
    NotFound,
    NotSignedIn,
    ResultExpired,
    ResultNotReady,
    SignInDisabled,
    SignUpClosed,
)
from printjob_core.keys import MAX_LIVE_KEYS, label_problem, new_key, shown_hint
from printjob_core.model import (
    Account,
    ApiKey,
    Job,
    JobChannel,
    JobOptions,
    JobStatus,
    Person,
    Plan,
)
from printjob_core.options import OPTION_FIELDS, parse_options
from printjob_core.passwords import (
    MAX_PASSWORD_LENGTH,
    check_password,
    clean_email,
    normalise_email,
)
from printjob_core.ports import PasswordHasher, UnitOfWork
from printjob_core.quota import QuotaView
from printjob_core.services.access import Access
from printjob_core.services.common import (
    JOB_ID,
    Ports,
    cancel_job,
    job_not_found,
    stored_account,
)
from printjob_core.services.submissions import Submissions
from printjob_core.sessions import csrf_token_for, csrf_valid, hash_token

#: How many jobs the account page lists, newest first.
RECENT_JOBS = 20
_KEY_ID = re.compile(r"key_[0-9a-f]{1,64}")


@attrs.frozen
class SignedIn:
    """Who a request's session cookie belongs to, and the CSRF token its forms carry."""

    #: The session's stored id (the SHA-256 of its token), never the token itself.
    session_id: str
    person_id: str
    email: str
    account_id: str
    csrf_token: str


@attrs.frozen
class IssuedSession:
    """A new session: `token` is the cookie's value, in plaintext only here."""

    token: str = attrs.field(repr=False)
    signed_in: SignedIn
    #: The absolute expiry, for the cookie's lifetime (idle expiry is checked on use).
    expires_at: datetime


@attrs.frozen
class KeyView:
    """An API key as the account page shows it."""

    id: str
    label: str
    #: `pjk1_…` and the key's last 4 characters.
    hint: str
    created_at: datetime
    last_used_at: datetime | None


@attrs.frozen
class CreatedKey:
    """A new key: `api_key` is shown once and never stored."""

    key: KeyView
    api_key: str = attrs.field(repr=False)


@attrs.frozen
class AccountPage:
    """Everything the account page shows, read at one moment."""

    email: str
    account_id: str
    plan: Plan
    quota: QuotaView
    credits_balance: int
    credits_held: int
    credits_available: int
    #: Unfinished API jobs (what `/v1/account` says).
    active_jobs: int
    active_jobs_max: int
    #: Unfinished website conversions (their own cap, also `active_jobs_max`).
    website_active_jobs: int
    keys: tuple[KeyView, ...]
    keys_max: int
    recent_jobs: tuple[Job, ...]


@attrs.frozen
class Download:
    """A website result handed to the browser; `counted` is False for a repeat download."""

    job: Job
    result_key: str
    media_type: str
    filename: str
    counted: bool
    #: The file itself.
    data: bytes = attrs.field(default=b"", repr=False)


@attrs.frozen
class InviteView:
    """What the set-password page of an invite shows."""

    email: str
    account_id: str
    expires_at: datetime


def key_view(key: ApiKey) -> KeyView:
    return KeyView(key.id, key.label, shown_hint(key), key.created_at, key.last_used_at)


def conversion_options(fields: Iterable[tuple[str, str]]) -> JobOptions:
    """The options of a website form, parsed by the API's parser (same codes, params and
    wording); fields that are not options (the CSRF token, say) and empty ones (an option
    left at its default) are left out."""
    chosen = {name: value for name, value in fields if name in OPTION_FIELDS and value != ""}
    return parse_options(chosen)


class WebsiteService:
    """The website's use cases over the core's ports and a `PasswordHasher`."""

    def __init__(
        self,
        ports: Ports,
        hasher: PasswordHasher,
        *,
        signup_open: bool = True,
        sign_ups_per_day: int = signins.SIGN_UPS_PER_ADDRESS,
    ) -> None:
        self.ports = ports
        self.policy = ports.policy
        self.hasher = hasher
        self.signup_open = signup_open
        #: Sign-ups per client network within `signins.SIGN_UP_WINDOW`; 0: no limit.
        self.sign_ups_per_day = sign_ups_per_day
        self.access = Access(ports)
        self.submissions = Submissions(ports, self.access)
        self._unknown_person_hash: str | None = None

    # -- people and sessions ------------------------------------------------------------

    def sign_up(self, email: str, password: str, client: str) -> IssuedSession:
        """A new account with one person, signed in. `client` is the client's address."""
        if not self.signup_open:
            raise SignUpClosed("Sign-up is closed on this service. Ask the operator for an invite.")
        address = clean_email(email)
        check_password(password, address)
        bucket = signins.sign_up_bucket(client)
        now = self.ports.clock.now()
        with self.ports.reader() as uow:
            if uow.people.find_by_email(address) is not None:
                raise _email_taken()
            made = uow.sign_in_failures.since(bucket, now - signins.SIGN_UP_WINDOW)
        limit = self.sign_ups_per_day
        wait = signins.seconds_to_wait(made, limit, now, signins.SIGN_UP_WINDOW) if limit else None
        if wait is not None:
            raise signins.sign_ups_throttled(wait)
        password_hash = self.hasher.hash(password)
        with self.ports.uow() as uow:
            account = Account(id=self.ports.ids.account_id(), created_at=now, email=address)
            uow.accounts.add(account)
            issued = self._welcome(uow, account.id, address, password_hash, now)
            uow.sign_in_failures.add(bucket, now)
            uow.commit()
        return issued

    def sign_in(self, email: str, password: str, client: str) -> IssuedSession:
        """A new session for the person, after the sign-in limit and the password."""
        address = normalise_email(email)
        buckets = (signins.address_bucket(client), signins.email_bucket(address))
        now = self.ports.clock.now()
        since = now - signins.SIGN_IN_WINDOW
        with self.ports.reader() as uow:
            by_address = uow.sign_in_failures.since(buckets[0], since)
            by_email = uow.sign_in_failures.since(buckets[1], since)
            person = uow.people.find_by_email(address) if address else None
        waits = [
            signins.seconds_to_wait(by_address, signins.FAILURES_PER_ADDRESS, now),
            signins.seconds_to_wait(by_email, signins.FAILURES_PER_EMAIL, now),
        ]
        wait = max((w for w in waits if w is not None), default=None)
        if wait is not None:
            raise signins.throttled(wait)
        if not self._password_matches(person, password):
            with self.ports.uow() as uow:
                for bucket in buckets:
                    uow.sign_in_failures.add(bucket, now)
                uow.sign_in_failures.purge_before(now - signins.KEPT_FOR)
                uow.commit()
            raise BadCredentials("The email or the password is wrong.")
        assert person is not None  # `_password_matches` is False without a person
        with self.ports.uow() as uow:
            account = uow.accounts.get(person.account_id)
            if account is None or account.disabled:
                raise _disabled()
            uow.sign_in_failures.clear(buckets[1])
            uow.sessions.purge_expired(now, now - sessions.IDLE_EXPIRY)
            issued = self._issue(uow, person, now)
            uow.commit()
        return issued

    def invite(self, invite_token: str) -> InviteView:
        """The invite behind a link, for the set-password form; `InviteInvalid` otherwise."""
        if not sessions.plausible_token(invite_token):
            raise _invite_invalid()
        with self.ports.reader() as uow:
            invite = uow.invites.get(hash_token(invite_token))
        if invite is None or not sessions.invite_usable(invite, self.ports.clock.now()):
            raise _invite_invalid()
        return InviteView(invite.email, invite.account_id, invite.expires_at)

    def accept_invite(self, invite_token: str, password: str) -> IssuedSession:
        """Set the invited person's password and sign them in; the link works once."""
        view = self.invite(invite_token)
        check_password(password, view.email)
        password_hash = self.hasher.hash(password)
        now = self.ports.clock.now()
        with self.ports.uow() as uow:
            if not uow.invites.use(hash_token(invite_token), now):
                raise _invite_invalid()
            account = uow.accounts.get(view.account_id)
            if account is None or account.disabled:
                raise _disabled()
            issued = self._welcome(uow, account.id, view.email, password_hash, now)
            uow.commit()
        return issued

    def session(self, token: str | None) -> SignedIn:
        """Who the session cookie `token` signs in; `NotSignedIn` when it is missing,
        unknown, expired, or its account is disabled."""
        if token is None or not sessions.plausible_token(token):
            raise NotSignedIn("Sign in to continue.")
        token_hash = hash_token(token)
        now = self.ports.clock.now()
        with self.ports.reader() as uow:
            session = uow.sessions.get(token_hash)
            if session is None or not sessions.is_live(session, now):
                raise NotSignedIn("Your session has ended; sign in again.")
            account = uow.accounts.get(session.account_id)
            person = uow.people.get(session.person_id)
        if account is None or account.disabled or person is None:
            raise NotSignedIn("Your session has ended; sign in again.")
        if sessions.needs_touch(session, now):
            with self.ports.uow() as uow:
                uow.sessions.touch(token_hash, now)
                uow.commit()
        return SignedIn(
            session_id=token_hash,
            person_id=person.id,
            email=person.email,
            account_id=account.id,
            csrf_token=csrf_token_for(token),
        )

    def sign_out(self, token: str | None) -> None:
        """End the session; signing out without one changes nothing."""
        if token is None or not sessions.plausible_token(token):
            return
        with self.ports.uow() as uow:
            uow.sessions.delete(hash_token(token))
            uow.commit()

    def change_password(self, signed_in: SignedIn, current: str, new: str) -> IssuedSession:
        """A new password and a new session; every other session of the person ends.

        A wrong current password counts against the sign-in limit of the person's email,
        so a borrowed session cannot be used to guess it."""
        now = self.ports.clock.now()
        bucket = signins.email_bucket(signed_in.email)
        since = now - signins.SIGN_IN_WINDOW
        with self.ports.reader() as uow:
            person = uow.people.get(signed_in.person_id)
            failures = uow.sign_in_failures.since(bucket, since)
        if person is None:
            raise NotSignedIn("Your session has ended; sign in again.")
        wait = signins.seconds_to_wait(failures, signins.FAILURES_PER_EMAIL, now)
        if wait is not None:
            raise signins.throttled(wait)
        if not self._password_matches(person, current):
            with self.ports.uow() as uow:
                uow.sign_in_failures.add(bucket, now)
                uow.commit()
            raise BadCredentials("The current password is wrong.")
        check_password(new, person.email)
        password_hash = self.hasher.hash(new)
        with self.ports.uow() as uow:
            stored = uow.people.get(person.id)
            if stored is None:
                raise NotSignedIn("Your session has ended; sign in again.")
            changed = attrs.evolve(stored, password_hash=password_hash, password_changed_at=now)
            uow.people.save(changed)
            uow.sessions.delete_for_person(person.id)
            issued = self._issue(uow, changed, now)
            uow.commit()
        return issued

    # -- the account page and keys -------------------------------------------------------

    def account_page(self, signed_in: SignedIn) -> AccountPage:
        now = self.ports.clock.now()
        with self.ports.reader() as uow:
            account = stored_account(uow, signed_in.account_id)
            keys = [key for key in uow.keys.list_for(account.id) if key.is_live]
            used = uow.downloads.count_on(account.id, quota.quota_day(now))
            active = uow.jobs.count_unfinished(account.id, JobChannel.API)
            website_active = uow.jobs.count_unfinished(account.id, JobChannel.WEBSITE)
            recent = uow.jobs.recent_for(account.id, RECENT_JOBS)
        return AccountPage(
            email=signed_in.email,
            account_id=account.id,
            plan=account.plan,
            quota=quota.quota_view(account.plan, used, now),
            credits_balance=account.credits_balance,
            credits_held=account.credits_held,
            credits_available=account.credits_available,
            active_jobs=active,
            active_jobs_max=account.active_jobs_max,
            website_active_jobs=website_active,
            keys=tuple(key_view(key) for key in keys),
            keys_max=MAX_LIVE_KEYS,
            recent_jobs=tuple(recent),
        )

    def quota(self, signed_in: SignedIn) -> QuotaView:
        """Today's website downloads of the account."""
        now = self.ports.clock.now()
        with self.ports.reader() as uow:
            account = stored_account(uow, signed_in.account_id)
            used = uow.downloads.count_on(account.id, quota.quota_day(now))
        return quota.quota_view(account.plan, used, now)

    def create_key(self, signed_in: SignedIn, label: str) -> CreatedKey:
        """A new API key; the secret is in the answer once and never stored."""
        kept = label.strip()
        problem = label_problem(kept)
        if problem is not None:
            raise InvalidParameter(problem, param="label")
        secret = self.ports.ids.api_key()
        now = self.ports.clock.now()
        with self.ports.uow() as uow:
            account = stored_account(uow, signed_in.account_id)
            live = sum(1 for key in uow.keys.list_for(account.id) if key.is_live)
            if live >= MAX_LIVE_KEYS:
                raise KeyLimitReached(
                    f"You have {MAX_LIVE_KEYS} API keys, the most an account may have at once. "
                    "Revoke one you no longer use, then create a new one."
                )
            key = new_key(self.ports.ids.key_id(), account.id, secret, now, kept)
            uow.keys.add(key)
            uow.commit()
        return CreatedKey(key_view(key), secret)

    def revoke_key(self, signed_in: SignedIn, key_id: str) -> None:
        """Revoke one of the account's keys; it stops working on the API at once."""
        with self.ports.uow() as uow:
            key = uow.keys.get(key_id) if _KEY_ID.fullmatch(key_id) else None
            if key is None or key.account_id != signed_in.account_id:
                raise NotFound("No such API key in this account.")
            if key.is_live:
                uow.keys.save(attrs.evolve(key, revoked_at=self.ports.clock.now()))
                uow.commit()

    # -- conversions ---------------------------------------------------------------------

    def refuse_when_over_limit(self, signed_in: SignedIn) -> None:
        """429 before an upload is read when the person's conversions this minute have
        reached the limit: a browser past it must not make the server receive 30 MB."""
        self.submissions.refuse_website_when_over_limit(signed_in.account_id)

    def submit_conversion(self, signed_in: SignedIn, image: bytes, options: JobOptions) -> Job:
        """A website job: the API's image rules and queue, no credits."""
        return self.submissions.submit_website(signed_in.account_id, options, image)

    def conversion(self, signed_in: SignedIn, job_id: str) -> Job:
        """Any job of the account, from the API or the website."""
        with self.ports.reader() as uow:
            job = uow.jobs.get(job_id) if JOB_ID.fullmatch(job_id) else None
        if job is None or job.account_id != signed_in.account_id:
            raise job_not_found(job_id)
        return job

    def cancel_conversion(self, signed_in: SignedIn, job_id: str) -> Job:
        """Cancel a queued or running website job (API jobs are canceled through the API)."""
        return cancel_job(self.ports, lambda uow: _website_job(uow, signed_in, job_id))

    def download(self, signed_in: SignedIn, job_id: str) -> Download:
        """A website job's file. The first download of a result counts against the plan's
        daily quota (`QuotaExhausted` once it is used up); the same result again is free."""
        with self.ports.reader() as uow:
            job = _website_job(uow, signed_in, job_id)
        now = self.ports.clock.now()
        if job.status is not JobStatus.SUCCEEDED or job.result is None:
            if job.is_final:
                reason = f"the conversion {job.status.value}, so there is no file"
            else:
                reason = "the conversion is not finished yet"
            raise ResultNotReady(f"Nothing to download: {reason}.")
        if job.result_key is None or now > job.result.expires_at:
            raise _result_expired(self.policy.result_ttl_seconds)
        try:
            data = self.ports.blobs.get(job.result_key)
        except KeyError:
            raise _result_expired(self.policy.result_ttl_seconds) from None
        with self.ports.uow() as uow:
            # Reading the account first locks it: two downloads of one account take turns,
            # so the fifth and sixth cannot both see four used.
            account = stored_account(uow, signed_in.account_id)
            counted = False
            if not uow.downloads.counted(account.id, job.id):
                day = quota.quota_day(now)
                view = quota.quota_view(account.plan, uow.downloads.count_on(account.id, day), now)
                if view.exhausted:
                    raise quota.quota_exhausted(view, now)
                counted = uow.downloads.record(account.id, job.id, day, now)
                uow.commit()
        fmt = job.options.format
        return Download(
            job=job,
            result_key=job.result_key,
            media_type=fmt.media_type,
            filename=f"{job.id}.{fmt.value}",
            counted=counted,
            data=data,
        )

    # -- steps ---------------------------------------------------------------------------

    def _welcome(
        self, uow: UnitOfWork, account_id: str, email: str, password_hash: str, now: datetime
    ) -> IssuedSession:
        """Add a person to `account_id` and sign them in, in the caller's transaction; the
        email's uniqueness is the database's to decide (two sign-ups at once)."""
        person = Person(
            id=self.ports.ids.person_id(),
            account_id=account_id,
            email=email,
            password_hash=password_hash,
            created_at=now,
            password_changed_at=now,
        )
        if not uow.people.add(person):
            raise _email_taken()
        return self._issue(uow, person, now)

    def _issue(self, uow: UnitOfWork, person: Person, now: datetime) -> IssuedSession:
        token = self.ports.ids.secret_token()
        session = sessions.new_session(hash_token(token), person, now)
        uow.sessions.add(session)
        signed_in = SignedIn(
            session_id=session.token_hash,
            person_id=person.id,
            email=person.email,
            account_id=person.account_id,
            csrf_token=csrf_token_for(token),
        )
        return IssuedSession(token, signed_in, session.expires_at)

    def _password_matches(self, person: Person | None, password: str) -> bool:
        """Whether `password` is the person's. An unknown person costs one hash check all
        the same, so the time taken does not tell who has an account."""
        if len(password) > MAX_PASSWORD_LENGTH:
            return False  # no password of ours is longer; hashing it would only cost time
        if person is None:
            if self._unknown_person_hash is None:
                self._unknown_person_hash = self.hasher.hash("no such person: a decoy hash")
            self.hasher.verify(self._unknown_person_hash, password)
            return False
        return self.hasher.verify(person.password_hash, password)


def _website_job(uow: UnitOfWork, signed_in: SignedIn, job_id: str) -> Job:
    job = uow.jobs.get(job_id) if JOB_ID.fullmatch(job_id) else None
    if (
        job is None
        or job.account_id != signed_in.account_id
        or job.channel is not JobChannel.WEBSITE
    ):
        raise job_not_found(job_id)
    return job


def _email_taken() -> EmailTaken:
    return EmailTaken("An account with this email exists already. Sign in, or use another email.")


def _invite_invalid() -> InviteInvalid:
    return InviteInvalid(
        "This invite link cannot be used: it was used already, it has expired (links last "
        "7 days), or it was copied incompletely. Ask the operator for a new one."
    )


def _disabled() -> SignInDisabled:
    return SignInDisabled("This account is disabled, so it cannot sign in. Contact the operator.")


def _result_expired(ttl_seconds: int) -> ResultExpired:
    return ResultExpired(
        f"The file was deleted {ttl_seconds // 3600} hours after the conversion ended; "
        "convert the image again to get a new one."
    )


__all__ = [
    "RECENT_JOBS",
    "AccountPage",
    "CreatedKey",
    "Download",
    "InviteView",
    "IssuedSession",
    "KeyView",
    "QuotaView",
    "SignedIn",
    "WebsiteService",
    "conversion_options",
    "csrf_token_for",
    "csrf_valid",
    "key_view",
]
