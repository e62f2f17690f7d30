"""HTTP for helpdesk sources: the delivery channels' guarded client (no redirects, every connection through
the tenant's outbound guard), 429 answered by waiting its `Retry-After`, and 401/403 turned into an error
naming the source and what to fix on the helpdesk side."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from adapters.delivery.helpdesk import HelpdeskClient
from adapters.delivery.outbound import OutboundGuard, OutboundRefused
from adapters.sources.base import SourceRejected
from investigation.errors import ReceiverRejected, ReceiverUnavailable

MAX_RATE_LIMIT_WAITS = 5  # 429s in a row on one request before the batch is retried later instead
MAX_WAIT_SECONDS = 120.0  # a longer Retry-After ends the batch (retried as a task, not slept in one)


class SourceClient:
    """One helpdesk account as a source reads it. `fix` says what to change when the helpdesk refuses the
    credentials (401) or the permission (403)."""

    def __init__(
        self,
        *,
        source: str,
        product: str,
        base_url: str,
        auth: tuple[str, str],
        guard: OutboundGuard,
        timeout: float,
        fix: str,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.source = source
        self.base_url = base_url.rstrip("/")
        self._fix = fix
        self._sleep = sleep
        self.waits: list[float] = []  # each Retry-After honoured (for the sync's report and the tests)
        self._client = HelpdeskClient(
            product, self.base_url, auth, guard, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        self._client.close()

    def get(self, path: str, params: dict[str, Any] | None = None, *, what: str) -> Any:
        """The JSON of a GET on the account (a path, or a full URL on the same origin)."""
        path = self.local(path)
        for _ in range(MAX_RATE_LIMIT_WAITS + 1):
            try:
                response = self._client.request("GET", path, params=params, write=False,
                                                not_found=f"source {self.source!r}: {what} not found")
            except ReceiverUnavailable as exc:
                wait = exc.retry_after if exc.retry_after is not None else 1.0
                if exc.status_code != 429 or wait > MAX_WAIT_SECONDS:
                    raise
                self.waits.append(wait)
                self._sleep(wait)
                continue
            except ReceiverRejected as exc:
                raise self._rejected(exc) from exc
            except OutboundRefused as exc:
                raise SourceRejected(f"source {self.source!r}: {exc}") from exc
            try:
                return response.json()
            except ValueError as exc:
                raise SourceRejected(f"source {self.source!r}: {what} is not JSON; check the base URL "
                                     f"{self.base_url}") from exc
        raise ReceiverUnavailable(
            f"source {self.source!r}: still rate limited after {MAX_RATE_LIMIT_WAITS} waits", status_code=429
        )

    def _rejected(self, exc: ReceiverRejected) -> SourceRejected:
        code = exc.status_code
        if code == 401:
            return SourceRejected(
                f"source {self.source!r}: the helpdesk rejected the channel's credentials (401); {self._fix}"
            )
        if code == 403:
            return SourceRejected(f"source {self.source!r}: the channel's API user may not read this (403); "
                                  f"{self._fix}")
        return SourceRejected(f"source {self.source!r}: {exc}")

    def local(self, url: str) -> str:
        """A path on the account for `url`; a next-page URL on another origin is refused (credentials never
        go anywhere else)."""
        if not url.startswith(("http://", "https://")):
            return url
        here, there = urlsplit(self.base_url), urlsplit(url)
        if (there.scheme, there.netloc) != (here.scheme, here.netloc):
            raise SourceRejected(
                f"source {self.source!r}: the helpdesk pointed to {there.netloc}, not its own "
                f"{here.netloc}; check the channel's base URL"
            )
        return there.path + (f"?{there.query}" if there.query else "")
