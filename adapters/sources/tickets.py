"""Solved tickets as internal evidence. Zendesk: the cursor-based incremental ticket export (`GET /api/v2/
incremental/tickets/cursor.json?start_time=` then `?cursor=`; `after_cursor`, `end_of_stream`) and each kept
ticket's comments (`GET /api/v2/tickets/{id}/comments.json?include=users`). Freshdesk: `GET /api/v2/tickets
?updated_since=&order_by=updated_at&order_type=asc&page=&per_page=100` and `GET /api/v2/tickets/{id}/
conversations`.

What is indexed: the subject (the question) and the public replies written by human agents (the resolution),
never the requester's own messages, private notes or Sleuth's notes (they carry its reference), with e-mail
addresses, phone numbers and card numbers redacted (`investigation.sources.redaction`). Always internal.
A ticket that left the kept statuses (reopened) is gone; one whose comments could not be read is counted as
failed and kept as it was.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from adapters.delivery.render import REFERENCE_PREFIX
from adapters.sources.html import html_to_text
from adapters.sources.http import SourceClient
from investigation.errors import SleuthError
from investigation.sources.items import Item, Page
from investigation.sources.redaction import redact
from investigation.state import Visibility

PER_PAGE = 100
FRESHDESK_STATUS = {"resolved": 4, "closed": 5}


def _resolution(subject: str, replies: Sequence[str]) -> str:
    return redact(
        f"Question: {subject}\n\nResolution:\n\n" + "\n\n".join(r.strip() for r in replies if r.strip())
    )


def _human(text: str) -> bool:
    return REFERENCE_PREFIX not in text


class ZendeskTicketsReader:
    """The `Reader` of a Zendesk account's solved (or closed) tickets."""

    def __init__(self, client: SourceClient, *, statuses: Sequence[str], since_seconds: int,
                 clock: Callable[[], float] = time.time) -> None:
        self.client = client
        self.statuses = set(statuses)
        self.since_seconds = since_seconds
        self.clock = clock

    def close(self) -> None:
        self.client.close()

    def begin(self, cursor: dict[str, Any] | None, *, full: bool) -> dict[str, Any]:
        cursor = dict(cursor or {})
        if full or not cursor:
            return {"start_time": int(self.clock()) - self.since_seconds}
        return cursor

    def page(self, cursor: dict[str, Any]) -> Page:
        if cursor.get("cursor"):
            path = f"/api/v2/incremental/tickets/cursor.json?cursor={cursor['cursor']}"
        else:
            path = f"/api/v2/incremental/tickets/cursor.json?start_time={int(cursor.get('start_time') or 0)}"
        data = self.client.get(path, what="the incremental ticket export")
        items: list[Item] = []
        failed: list[str] = []
        for ticket in data.get("tickets") or []:
            if not isinstance(ticket, dict) or ticket.get("id") is None:
                continue
            ext = str(ticket["id"])
            if ticket.get("status") not in self.statuses:
                items.append(Item(ext, live=False))
                continue
            try:
                items.append(self._item(ticket))
            except SleuthError:
                failed.append(ext)
        after = {
            "cursor": data.get("after_cursor") or cursor.get("cursor"),
            "start_time": cursor.get("start_time"),
        }
        more = not data.get("end_of_stream", True)
        return Page(tuple(items), after, more=more, failed=tuple(failed))

    def _item(self, ticket: dict[str, Any]) -> Item:
        ext = str(ticket["id"])
        data = self.client.get(
            f"/api/v2/tickets/{ext}/comments.json?include=users", what=f"ticket {ext}'s comments"
        )
        roles = {u.get("id"): u.get("role") for u in data.get("users") or [] if isinstance(u, dict)}
        replies = [str(c.get("plain_body") or html_to_text(str(c.get("html_body") or c.get("body") or "")))
                   for c in data.get("comments") or [] if isinstance(c, dict) and c.get("public")
                   and roles.get(c.get("author_id")) in ("agent", "admin")]
        replies = [r for r in replies if _human(r)]
        subject = redact(str(ticket.get("subject") or ""))
        text = _resolution(subject, replies) if replies else ""
        return Item(
            ext,
            title=f"Ticket {ext}: {subject}",
            text=text,
            url=f"{self.client.base_url}/agent/tickets/{ext}",
            updated_at=str(ticket.get("updated_at") or "") or None,
            visibility=Visibility.INTERNAL,
            question=subject or None,
        )


class FreshdeskTicketsReader:
    """The `Reader` of a Freshdesk account's resolved (or closed) tickets."""

    def __init__(self, client: SourceClient, *, statuses: Sequence[str], since_seconds: int,
                 clock: Callable[[], float] = time.time) -> None:
        self.client = client
        self.statuses = {FRESHDESK_STATUS[s] for s in statuses if s in FRESHDESK_STATUS}
        self.since_seconds = since_seconds
        self.clock = clock

    def close(self) -> None:
        self.client.close()

    def begin(self, cursor: dict[str, Any] | None, *, full: bool) -> dict[str, Any]:
        cursor = dict(cursor or {})
        if full or not cursor:
            start = datetime.fromtimestamp(self.clock() - self.since_seconds, UTC).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            )
            return {"updated_since": start, "page": 1, "newest": start}
        return {**cursor, "page": int(cursor.get("page") or 1)}

    def page(self, cursor: dict[str, Any]) -> Page:
        number = int(cursor.get("page") or 1)
        rows = (
            self.client.get(
                "/api/v2/tickets",
                {
                    "updated_since": cursor["updated_since"],
                    "order_by": "updated_at",
                    "order_type": "asc",
                    "page": number,
                    "per_page": PER_PAGE,
                },
                what="the ticket list",
            )
            or []
        )
        items: list[Item] = []
        failed: list[str] = []
        newest = str(cursor.get("newest") or cursor["updated_since"])
        for ticket in rows:
            if not isinstance(ticket, dict) or ticket.get("id") is None:
                continue
            ext = str(ticket["id"])
            stamp = str(ticket.get("updated_at") or "")
            newest = max(newest, stamp)
            if ticket.get("status") not in self.statuses:
                items.append(Item(ext, live=False))
                continue
            try:
                items.append(self._item(ticket))
            except SleuthError:
                failed.append(ext)
        if len(rows) >= PER_PAGE:
            return Page(tuple(items), {**cursor, "page": number + 1, "newest": newest}, more=True,
                        failed=tuple(failed))
        return Page(tuple(items), {"updated_since": newest, "page": 1, "newest": newest}, more=False,
                    failed=tuple(failed))

    def _item(self, ticket: dict[str, Any]) -> Item:
        ext = str(ticket["id"])
        rows = (
            self.client.get(f"/api/v2/tickets/{ext}/conversations", what=f"ticket {ext}'s conversations")
            or []
        )
        replies = [str(c.get("body_text") or html_to_text(str(c.get("body") or ""))) for c in rows
                   if isinstance(c, dict) and not c.get("private") and not c.get("incoming")]
        replies = [r for r in replies if _human(r)]
        subject = redact(str(ticket.get("subject") or ""))
        text = _resolution(subject, replies) if replies else ""
        return Item(
            ext,
            title=f"Ticket {ext}: {subject}",
            text=text,
            url=f"{self.client.base_url}/a/tickets/{ext}",
            updated_at=str(ticket.get("updated_at") or "") or None,
            visibility=Visibility.INTERNAL,
            question=subject or None,
        )
