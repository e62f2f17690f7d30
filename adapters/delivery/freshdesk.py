"""The ``freshdesk`` channel: the answer as a private note on the ticket that asked.

``POST /api/v2/tickets/{id}/notes`` with ``{"body": html, "private": true}``, Basic auth
``{api_key}:X``. Freshdesk has no idempotency key for notes: the note carries the delivery's
reference, and an attempt that follows an unknown outcome (`resume`) first reads the ticket's
conversations (``GET /api/v2/tickets/{id}/conversations``) and posts nothing when it is there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from adapters.delivery.helpdesk import MAX_PAGES, HelpdeskClient, contains, posted, prepare_note
from adapters.delivery.outbound import OutboundGuard
from adapters.delivery.zendesk import ticket_id_of
from investigation.errors import ReceiverRejected
from investigation.ports import Delivered

PER_PAGE = 100


class FreshdeskDeliverer:
    """One Freshdesk channel (its config and decrypted secrets), the `Deliverer` port."""

    channel = "freshdesk"

    def __init__(self, config: dict[str, Any], secrets: dict[str, str], guard: OutboundGuard, *,
                 timeout: float, transport: httpx.BaseTransport | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        if not secrets.get("api_key"):
            raise ReceiverRejected("the Freshdesk channel has no API key")
        self.timeout = timeout
        self._client = HelpdeskClient("Freshdesk", str(config["base_url"]), (secrets["api_key"], "X"), guard,
                                      timeout=timeout, transport=transport, clock=clock)

    def close(self) -> None:
        self._client.close()

    def find(self, ticket: int, needle: str) -> int | None:
        """The id of a conversation (reply or note) on `ticket` containing `needle`, or None."""
        for page in range(1, MAX_PAGES + 1):
            response = self._client.request(
                "GET", f"/api/v2/tickets/{ticket}/conversations", params={"page": page, "per_page": PER_PAGE},
                write=False, not_found=f"Freshdesk ticket {ticket} does not exist")
            items = response.json() or []
            for item in items:
                if contains([item.get("body"), item.get("body_text")], needle):
                    return int(item.get("id") or 0)
            if len(items) < PER_PAGE:
                break
        return None

    def deliver(self, *, delivery_id: str, target: dict[str, object], payload: dict[str, object],
                secret: str, resume: bool = False) -> Delivered:
        """Post the private note once; with `resume`, first make sure an earlier attempt did not already."""
        ticket = ticket_id_of(target)
        rendered, already = prepare_note(self.find, ticket=ticket, delivery_id=delivery_id, payload=payload,
                                         resume=resume, noun="note")
        if already is not None:
            return already
        response = self._client.request("POST", f"/api/v2/tickets/{ticket}/notes",
                                        json={"body": rendered.html, "private": True}, write=True,
                                        not_found=f"Freshdesk ticket {ticket} does not exist")
        note = (response.json() or {}).get("id") if response.content else None
        return posted(response, f"private note on ticket {ticket}" + (f" (note {note})" if note else ""))


__all__ = ["FreshdeskDeliverer"]
