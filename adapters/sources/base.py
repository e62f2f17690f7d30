"""The `Reader` port every source implements, and the source error raised when a sync cannot go on."""

from __future__ import annotations

from typing import Any, Protocol

from investigation.errors import PermanentError
from investigation.sources.items import Page

SOURCE_TYPES = (
    "zendesk-guide",
    "freshdesk-solutions",
    "zendesk-tickets",
    "freshdesk-tickets",
    "folder",
    "sitemap",
)
CHANNEL_OF_TYPE = {"zendesk-guide": "zendesk", "zendesk-tickets": "zendesk",
                   "freshdesk-solutions": "freshdesk", "freshdesk-tickets": "freshdesk"}


class SourceRejected(PermanentError):
    """Raised when a source cannot be read and retrying will not help (bad credentials, a missing scope, an
    unreachable or refused base URL); the message names the source and what to fix."""


class Reader(Protocol):
    """One source's reading side. `begin` gives the cursor a run starts from (`full`: from scratch, and a
    listing of every id at the end); `page` reads the batch at a cursor. A cursor is a small JSON object."""

    def begin(self, cursor: dict[str, Any] | None, *, full: bool) -> dict[str, Any]: ...

    def page(self, cursor: dict[str, Any]) -> Page: ...

    def close(self) -> None: ...
