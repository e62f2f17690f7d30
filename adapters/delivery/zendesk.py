"""The ``zendesk`` channel: the answer as an internal note (or public reply) on the ticket that asked.

``PUT /api/v2/tickets/{id}.json`` with ``{"ticket": {"comment": {"html_body", "public"},
"additional_tags": ["sleuth_answered" | "sleuth_refused" | "sleuth_failed"]}}``, Basic auth
``{email}/token:{token}``. Zendesk has no idempotency key for comments, so the note carries the
delivery's reference and an attempt that follows an unknown outcome (`resume`) first reads the
ticket's comments (``GET /api/v2/tickets/{id}/comments.json``) and posts nothing when it is there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from adapters.delivery.helpdesk import MAX_PAGES, HelpdeskClient, contains, posted, prepare_note
from adapters.delivery.outbound import OutboundGuard
from investigation.errors import ReceiverRejected
from investigation.ports import Delivered


def ticket_id_of(target: dict[str, object]) -> int:
    value = target.get("ticket_id")
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).isdigit():
        raise ReceiverRejected("the callback has no numeric ticket_id")
    return int(value)


class ZendeskDeliverer:
    """One Zendesk channel (its config and decrypted secrets), the `Deliverer` port."""

    channel = "zendesk"

    def __init__(self, config: dict[str, Any], secrets: dict[str, str], guard: OutboundGuard, *,
                 timeout: float, transport: httpx.BaseTransport | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        if not secrets.get("token"):
            raise ReceiverRejected("the Zendesk channel has no API token")
        self.timeout = timeout
        self._base = str(config["base_url"])
        self._client = HelpdeskClient("Zendesk", self._base, (f"{config['email']}/token", secrets["token"]),
                                      guard, timeout=timeout, transport=transport, clock=clock)

    def close(self) -> None:
        self._client.close()

    def find(self, ticket: int, needle: str) -> int | None:
        """The id of a comment on `ticket` containing `needle` (newest first), or None."""
        path: str | None = f"/api/v2/tickets/{ticket}/comments.json"
        params: dict[str, Any] | None = {"sort_order": "desc", "per_page": 100}
        for _ in range(MAX_PAGES):
            if path is None:
                break
            response = self._client.request("GET", path, params=params, write=False,
                                            not_found=f"Zendesk ticket {ticket} does not exist")
            data = response.json()
            for comment in data.get("comments") or []:
                if contains(
                    [comment.get("html_body"), comment.get("body"), comment.get("plain_body")], needle
                ):
                    return int(comment.get("id") or 0)
            path, params = self._next(data.get("next_page")), None
        return None

    def _next(self, url: object) -> str | None:
        """The next page, only on the channel's own origin (credentials never go anywhere else)."""
        if not isinstance(url, str) or not url:
            return None
        here, there = urlsplit(self._base), urlsplit(url)
        if (there.scheme, there.netloc) != (here.scheme, here.netloc):
            return None
        return there.path + (f"?{there.query}" if there.query else "")

    def deliver(self, *, delivery_id: str, target: dict[str, object], payload: dict[str, object],
                secret: str, resume: bool = False) -> Delivered:
        """Post the note once; with `resume`, first make sure an earlier attempt did not already."""
        ticket = ticket_id_of(target)
        rendered, already = prepare_note(self.find, ticket=ticket, delivery_id=delivery_id, payload=payload,
                                         resume=resume, noun="comment")
        if already is not None:
            return already
        body = {
            "ticket": {
                "comment": {"html_body": rendered.html, "public": bool(target.get("public", False))},
                "additional_tags": [f"sleuth_{rendered.outcome}"],
            }
        }
        response = self._client.request("PUT", f"/api/v2/tickets/{ticket}.json", json=body, write=True,
                                        not_found=f"Zendesk ticket {ticket} does not exist")
        audit = (response.json() or {}).get("audit") or {} if response.content else {}
        comment = next((e.get("id") for e in audit.get("events") or [] if e.get("type") == "Comment"), None)
        return posted(response, f"note on ticket {ticket}" + (f" (comment {comment})" if comment else ""))


__all__ = ["ZendeskDeliverer", "ticket_id_of"]
