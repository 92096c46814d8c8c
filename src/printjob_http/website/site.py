"""The `Site`: what every website handler is given, built once by `create_website`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from printjob_core.errors import NotSignedIn
from printjob_core.limits import Policy
from printjob_core.services.website import SignedIn, WebsiteService
from printjob_http.shell import Network, client_address, in_thread
from printjob_http.website.cookies import SESSION_COOKIE, cookie_of
from printjob_http.website.pages import Pages

#: Where `Site.signed_in` notes the request's person in its scope.
PERSON = "printjob.website.person"


def person_of(scope: Any) -> SignedIn | None:
    """The person a handler found signed in before it raised (None for a visitor)."""
    person: SignedIn | None = scope.get(PERSON)
    return person


@attrs.frozen
class Site:
    """The website's service, its pages and the settings its answers depend on."""

    service: WebsiteService
    pages: Pages
    policy: Policy
    #: Cookies get `Secure` when the public base address is https.
    secure_cookies: bool
    trusted: tuple[Network, ...]
    #: Where uploads are spooled while they arrive (None: the system's temporary directory).
    spool_dir: Path | None = None

    def client(self, scope: Any) -> str:
        """The client's address, as the API's limits count it (design decision 7)."""
        decoded = ((k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"])
        return client_address(scope, decoded, self.trusted)

    async def signed_in(self, scope: Any) -> SignedIn:
        """The person of the request's session; `NotSignedIn` otherwise.

        Noted in the scope, so an error page shows the person still signed in."""
        person = await in_thread(self.service.session, cookie_of(scope, SESSION_COOKIE))
        scope[PERSON] = person
        return person

    async def maybe_signed_in(self, scope: Any) -> SignedIn | None:
        """Like `signed_in`, but None for a visitor (the pages everyone may see)."""
        if not cookie_of(scope, SESSION_COOKIE):
            return None
        try:
            return await self.signed_in(scope)
        except NotSignedIn:
            return None


__all__ = ["PERSON", "Site", "person_of"]
