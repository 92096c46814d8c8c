"""The `/v1` HTTP shell (contract section 4): the composition of its pieces.

Wiring only; every rule lives in `printjob_core.services`. What is where:

* `gate`: strict routing (404, 405) in front of Litestar, and the two polling reads;
* `polling`: those two reads, answered without Litestar's per-request objects;
* `routes`: the operations Litestar routes, and the exception handlers;
* `answers`: the one JSON writer and the one Problem writer;
* `docs_pages`: the documentation pages (`/docs`, `/docs/errors`) the gate answers;
* `shell`: the `Shell` value (services and settings) every piece is given;
* `website`: the website's pages under `/`, beside the API, when the container has one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from litestar import Litestar
from litestar.di import Provide

from printjob_adapters.storage import Storage
from printjob_core.services import ApiService, Ports
from printjob_http.docs_pages import docs_answers
from printjob_http.gate import Gate, Route, Website, match_route
from printjob_http.health import WorkersNow, health_answers
from printjob_http.metrics import metrics_answer
from printjob_http.polling import polling_reads
from printjob_http.routes import EXCEPTION_HANDLERS, HANDLERS
from printjob_http.shell import Settings, Shell, client_address


class Container(Protocol):
    """What `printjob_adapters.bootstrap.bootstrap` returns, as far as the shell needs it."""

    @property
    def settings(self) -> Settings: ...

    @property
    def storage(self) -> Storage: ...

    @property
    def ports(self) -> Ports: ...

    @property
    def api(self) -> ApiService: ...


def create_app(
    container: Container,
    on_startup: Sequence[Callable[[], object]] = (),
    workers: WorkersNow | None = None,
    spool_dir: Path | None = None,
) -> Gate:
    """The `/v1` API over a composed container (see `printjob_adapters.bootstrap`);
    `on_startup` runs once the server has started (the lifespan goes on to Litestar);
    `workers` tells `/readyz` about the worker processes this server supervises;
    uploads are spooled to `spool_dir` while they arrive (None: the system's temporary
    directory)."""
    settings = container.settings
    api = container.api
    shell = Shell(
        access=api.access,
        submissions=api.submissions,
        jobs=api.jobs,
        policy=container.ports.policy,
        settings=settings,
        docs_url=settings.docs_url,
        realm=settings.service_name,
        base_url=settings.base_url,
        trusted=tuple(ipaddress.ip_network(n, strict=False) for n in settings.trusted_proxies),
        immediate=container.storage.immediate_reads(),
        spool_dir=spool_dir,
    )

    def provide_shell() -> Shell:
        return shell

    litestar = Litestar(
        route_handlers=list(HANDLERS),
        on_startup=list(on_startup),
        dependencies={"shell": Provide(provide_shell, use_cache=True, sync_to_thread=False)},
        openapi_config=None,
        # The handlers return an `Answer`, not a `Response`: it has the one method
        # Litestar's exception middleware calls (`to_asgi_response`).
        exception_handlers=dict(EXCEPTION_HANDLERS),  # type: ignore[arg-type]
        request_max_body_size=shell.policy.max_upload_bytes,
        debug=False,
        # Logging is the process's (`printjob_http.server.configure_logging`): Litestar's
        # default would route every record through a queue to a second thread, and that
        # thread's fight for the GIL with the event loop doubled the cost of a poll.
        logging_config=None,
    )
    litestar.state["shell"] = shell
    ports = container.ports
    direct = {
        **polling_reads(shell),
        **docs_answers(shell.policy),
        **health_answers(container.storage, ports.policy, ports.clock, workers),
        **metrics_answer(
            getattr(settings, "metrics_token", None),
            container.storage,
            ports.policy,
            ports.clock,
            shell.docs_for,
            shell.realm,
        ),
    }
    return Gate(litestar, direct, shell.docs_for, _website(container, shell))


def _website(container: Container, shell: Shell) -> Website | None:
    """The website over the container's `WebsiteService`; None when it has none."""
    service = getattr(container, "website", None)
    if service is None:
        return None
    from printjob_http.website import create_website, is_website_path

    app = create_website(service, shell.policy, shell.base_url, shell.trusted, shell.spool_dir)
    return Website(is_website_path, app)


__all__ = ["Container", "Route", "client_address", "create_app", "match_route"]
