"""What every part of the shell is given: the services and the settings it reads, as one
frozen value built by `create_app`, and the few facts it takes from a request's scope."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import anyio.to_thread
import attrs

from printjob_adapters.settings import DOCS_ERRORS_PATH
from printjob_adapters.storage import ImmediateReads, WouldWait
from printjob_core.limits import Policy
from printjob_core.services import Jobs, Submissions
from printjob_core.services.access import Access

T = TypeVar("T")
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Settings(Protocol):
    """The settings the shell reads (`printjob_adapters.settings.Settings` has them)."""

    @property
    def base_url(self) -> str | None: ...

    @property
    def docs_url(self) -> str | None: ...

    @property
    def service_name(self) -> str: ...

    @property
    def trusted_proxies(self) -> tuple[str, ...]: ...


@attrs.frozen
class Shell:
    """The services the shell calls and the settings it answers with."""

    access: Access
    submissions: Submissions
    jobs: Jobs
    policy: Policy
    #: For the OpenAPI document (its `servers`, the docs address, the limits).
    settings: Settings
    #: The base of Problem `type` links; None: this service's own errors page (`docs_for`).
    docs_url: str | None
    #: The realm of `WWW-Authenticate` (contract 5.3): the service's name.
    realm: str
    base_url: str | None
    trusted: tuple[Network, ...]
    #: Reads the storage can run on the event loop without waiting (SQLite); None otherwise.
    immediate: ImmediateReads | None
    #: Answers built once per process on first use (the OpenAPI document).
    cache: dict[str, bytes] = attrs.field(factory=dict, eq=False)
    #: Where uploads are spooled while they arrive (beside the blobs); None: the system's
    #: temporary directory.
    spool_dir: Path | None = None

    def api_base(self, scope: Any) -> str:
        """The API's address as clients reach it: configured, else from the request."""
        if self.base_url:
            return self.base_url.rstrip("/")
        return request_base(scope)

    def docs_for(self, scope: Any) -> str:
        """The base of a Problem's `type`: configured, else `/docs/errors` at the address
        the request came to, so that the link leads to this service's own page.

        Called only when a Problem is written: the answers that succeed never pay for it.
        """
        return self.docs_url or request_base(scope) + DOCS_ERRORS_PATH

    def credentials(self, scope: Any) -> tuple[str | None, str]:
        """The Authorization header and the client's address, for `Access.authenticate`.

        Read from the raw ASGI headers (names arrive lower-cased): building Litestar's
        header mapping for two lookups cost more than the lookups.
        """
        raw: list[tuple[bytes, bytes]] = scope["headers"]
        sent = [value.decode("latin-1") for name, value in raw if name == b"authorization"]
        decoded = ((name.decode("latin-1"), value.decode("latin-1")) for name, value in raw)
        address = client_address(scope, decoded, self.trusted)
        # Two Authorization headers are not one credential (RFC 9110 11.6.2): refused as a
        # malformed key, whichever of them a proxy in front may have looked at.
        authorization = sent[0] if len(sent) == 1 else ("Bearer" if sent else None)
        return authorization, address

    async def read(self, operation: Callable[..., T], *args: Any) -> T:
        """Run a read on the loop when the storage can do it without waiting, else in the
        thread pool (where waiting is fine).

        A trip to the thread pool costs several times the few SQLite statements of a
        read, and under load the loop and the pool's threads fight for the GIL.
        """
        if self.immediate is not None:
            try:
                return self.immediate.attempt(lambda: operation(*args))
            except WouldWait:
                pass  # it would have waited: do it where waiting is fine
        return await in_thread(operation, *args)


def request_base(scope: Any) -> str:
    """The address a request came to: its `Host`, else the socket it arrived on."""
    host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
    if host is None:
        server = scope.get("server")
        host = f"{_bracketed(server[0])}:{server[1]}" if server else "localhost"
    return f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}".rstrip("/")


def _bracketed(host: str) -> str:
    """An IPv6 literal as a URL's host takes it."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


async def in_thread(function: Callable[..., T], *args: Any) -> T:
    """`function(*args)` in the thread pool: storage calls may wait for a lock."""
    return await anyio.to_thread.run_sync(function, *args)


def client_address(
    scope: Any, headers: Iterable[tuple[str, str]], trusted: Iterable[Network]
) -> str:
    """The client's address: the peer, or from `X-Forwarded-For` when the peer is a proxy.

    Walking `X-Forwarded-For` from the right, trusted proxies are skipped; the first
    address that is not one is the client (design decision 7).
    """
    client = scope.get("client")
    peer: str = client[0] if client else ""
    trusted = tuple(trusted)
    if not trusted or not _is_trusted(peer, trusted):
        return peer
    hops: list[str] = []
    for name, value in headers:
        if name.lower() == "x-forwarded-for":
            hops.extend(part.strip() for part in value.split(","))
    address = peer
    for hop in reversed([h for h in hops if h]):
        address = hop
        if not _is_trusted(hop, trusted):
            break
    return address


def _is_trusted(address: str, trusted: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in trusted)


__all__ = ["Settings", "Shell", "client_address", "in_thread", "request_base"]
