"""The HTTP side shared by the Zendesk and Freshdesk channels: a pinned client (outbound guard), status
codes turned into the error tree with reasons a person understands, and rate-limit headers read."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from adapters.delivery.outbound import GuardedTransport, OutboundGuard
from adapters.delivery.render import Rendered, reference, render
from adapters.delivery.webhook import parse_retry_after
from investigation.errors import ReceiverRejected, ReceiverUnavailable
from investigation.ports import Delivered

USER_AGENT = "Sleuth/1 (+helpdesk notes)"
MAX_PAGES = 10  # comments/notes read when looking for an earlier post (100 per page)


def _int_header(response: httpx.Response, *names: str) -> int | None:
    for name in names:
        value = response.headers.get(name)
        if value is not None and value.strip().isdigit():
            return int(value.strip())
    return None


class HelpdeskClient:
    """One helpdesk account: Basic auth, no redirects, every connection through the outbound guard."""

    def __init__(self, product: str, base_url: str, auth: tuple[str, str], guard: OutboundGuard, *,
                 timeout: float, transport: httpx.BaseTransport | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.product = product
        self.timeout = timeout
        self._clock = clock
        self._client = httpx.Client(
            base_url=base_url, auth=httpx.BasicAuth(*auth), timeout=timeout, follow_redirects=False,
            transport=GuardedTransport(guard, transport),
            headers={"user-agent": USER_AGENT, "accept": "application/json"})

    def close(self) -> None:
        self._client.close()

    def request(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None,
                not_found: str, write: bool) -> httpx.Response:
        """Send once; a 2xx response is returned, anything else raised as the error tree says.

        `write` marks a request that creates something: when it may have reached the helpdesk without
        an answer coming back (read timeout, dropped connection, 5xx), the error says `uncertain`.
        """
        try:
            response = self._client.request(method, path, json=json, params=params)
        except (httpx.ConnectTimeout, httpx.ConnectError, httpx.PoolTimeout) as exc:
            raise ReceiverUnavailable(f"could not reach {self.product}: {type(exc).__name__}: {exc}") from exc
        except httpx.TimeoutException as exc:
            raise ReceiverUnavailable(f"{self.product} did not answer within {self.timeout:g}s",
                                      uncertain=write) from exc
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ReceiverRejected(f"unusable {self.product} URL: {exc}") from exc
        except httpx.TransportError as exc:
            raise ReceiverUnavailable(f"connection to {self.product} failed: {type(exc).__name__}",
                                      uncertain=write) from exc
        code = response.status_code
        if 200 <= code < 300:
            return response
        if code == 429:
            wait = parse_retry_after(response.headers.get("retry-after"), now=self._clock())
            raise ReceiverUnavailable(f"{self.product} rate limit (429), retry after {wait or 0:g}s",
                                      status_code=code, retry_after=wait)
        if code >= 500 or code == 408:
            raise ReceiverUnavailable(f"{self.product} answered {code}", status_code=code, uncertain=write,
                                      retry_after=parse_retry_after(response.headers.get("retry-after"),
                                                                    now=self._clock()))
        if code == 401:
            raise ReceiverRejected(f"{self.product} rejected the API credentials (401)", status_code=code)
        if code == 403:
            raise ReceiverRejected(f"{self.product} refused: the API user may not do this (403)",
                                   status_code=code)
        if code == 404:
            raise ReceiverRejected(f"{not_found} (404)", status_code=code)
        if 300 <= code < 400:
            raise ReceiverRejected(f"{self.product} answered a redirect ({code}); redirects are not "
                                   "followed: check the base URL", status_code=code)
        raise ReceiverRejected(f"{self.product} answered {code}: {response.text[:200]}", status_code=code)


def posted(response: httpx.Response, detail: str) -> Delivered:
    """A helpdesk write that succeeded, with the rate-limit headroom Zendesk's or Freshdesk's headers give."""
    return Delivered(
        response.status_code,
        detail,
        rate_limit_remaining=_int_header(
            response, "x-rate-limit-remaining", "x-ratelimit-remaining", "ratelimit-remaining"
        ),
        rate_limit=_int_header(response, "x-rate-limit", "x-ratelimit-total", "ratelimit-limit"),
    )


def contains(texts: list[Any], needle: str) -> bool:
    return any(isinstance(t, str) and needle in t for t in texts)


__all__ = ["MAX_PAGES", "HelpdeskClient", "contains", "posted", "prepare_note"]


def prepare_note(
    find: Callable[[int, str], Any],
    *,
    ticket: int,
    delivery_id: str,
    payload: dict[str, object],
    resume: bool,
    noun: str,
) -> tuple[Rendered, Delivered | None]:
    """The rendered note, and — when `resume` and the ticket already carries this delivery's reference —
    the attempt's result saying so (the note must not be posted again)."""
    trace_url = payload.get("trace_url")
    rendered = render(
        payload, delivery_id=delivery_id, trace_url=trace_url if isinstance(trace_url, str) else None
    )
    if resume:
        existing = find(ticket, reference(delivery_id))
        if existing is not None:
            return rendered, Delivered(
                200, f"already on ticket {ticket} as {noun} {existing}; not posted again"
            )
    return rendered, None

