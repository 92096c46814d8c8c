"""The limits of contract section 8, and who they are counted against."""

from __future__ import annotations

import ipaddress
from datetime import timedelta

import attrs

from printjob_core.credits import JOB_COST


@attrs.frozen
class Policy:
    """Every limit and retention the service applies; the operator may set most of them."""

    submissions_per_minute: int = 10
    reads_per_minute: int = 120
    wrong_keys_per_minute: int = 30
    idempotency_ttl_seconds: int = 86_400
    result_ttl_seconds: int = 86_400
    max_upload_bytes: int = 31_457_280
    max_upload_pixels: int = 3_000_000
    min_side: int = 16
    max_aspect_ratio: int = 20
    job_cost: int = JOB_COST
    #: How many times a job may be started before a restart fails it (design decision 9).
    max_attempts: int = 3
    #: A running job whose worker has not reported for this long is taken as dead.
    lease_seconds: int = 60
    #: Longest a single job may run before it fails.
    job_time_budget_seconds: int = 300
    #: Queue depth at which submissions get 503 server_busy (design decision 8).
    max_queue_depth: int = 1000

    @property
    def idempotency_ttl(self) -> timedelta:
        return timedelta(seconds=self.idempotency_ttl_seconds)

    @property
    def result_ttl(self) -> timedelta:
        return timedelta(seconds=self.result_ttl_seconds)

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.lease_seconds)


def submissions_bucket(account_id: str) -> str:
    return f"submit:{account_id}"


def website_submissions_bucket(account_id: str) -> str:
    """The website's conversions have a per-minute bucket of their own, of the API's size."""
    return f"websubmit:{account_id}"


def reads_bucket(account_id: str) -> str:
    return f"read:{account_id}"


def wrong_keys_bucket(client_address: str) -> str:
    return f"wrongkey:{client_network(client_address)}"


def client_network(address: str) -> str:
    """The network a client counts as for the wrong-key limit (design decision 7).

    An IPv4 address is its own network; IPv6 clients count per /64, since one host
    usually holds a whole /64. Anything unparseable counts as itself.
    """
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)
