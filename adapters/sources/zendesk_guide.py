"""Zendesk Guide articles: the incremental article export (`GET /api/v2/help_center/incremental/articles
?start_time=`, agents or admins only; `articles`, `next_page`, `end_time`), then a listing of every live
article id (`GET /api/v2/help_center[/{locale}]/articles?page[size]=100`, cursor pagination `meta.has_more`,
`links.next`) so archived and deleted articles leave the engines in the same sync.

A draft is gone; the visibility comes from the article's `user_segment_id`
(`investigation.sources.visibility`); the citation link is the article's `html_url`.
"""

from __future__ import annotations

import uuid
from typing import Any

from adapters.sources.html import html_to_text
from adapters.sources.http import SourceClient
from investigation.sources.items import Item, Page
from investigation.sources.visibility import zendesk_article

FIX = ("use a Zendesk channel whose e-mail is an agent or admin with Guide access and a valid API token "
       "(Admin Center > Apps and integrations > Zendesk API)")
LIST_PAGE_SIZE = 100


class ZendeskGuideReader:
    """The `Reader` of one Zendesk help center (optionally one locale)."""

    def __init__(self, client: SourceClient, *, locale: str | None = None) -> None:
        self.client = client
        self.locale = locale.lower() if locale else None
        self._segments: dict[int, str] | None = None

    def close(self) -> None:
        self.client.close()

    def begin(self, cursor: dict[str, Any] | None, *, full: bool) -> dict[str, Any]:
        cursor = dict(cursor or {})
        if cursor.get("phase") and not full:
            return cursor  # a run that stopped part-way: go on from its last indexed batch
        start = 0 if full else int(cursor.get("start_time") or 0)
        return {"start_time": start, "phase": "export", "next": None, "listing": uuid.uuid4().hex[:16]}

    def page(self, cursor: dict[str, Any]) -> Page:
        if cursor.get("phase") == "list":
            return self._list(cursor)
        return self._export(cursor)

    def _export(self, cursor: dict[str, Any]) -> Page:
        start = int(cursor.get("start_time") or 0)
        path = cursor.get("next") or f"/api/v2/help_center/incremental/articles?start_time={start}"
        data = self.client.get(path, what="the incremental article export")
        items: list[Item] = []
        skipped = 0
        for article in data.get("articles") or []:
            item = self._item(article)
            if item is None:
                skipped += 1
            elif self.locale is None or (item.locale or "").lower() == self.locale:
                items.append(item)
        end_time = data.get("end_time")
        nxt = data.get("next_page")
        after = dict(cursor)
        if isinstance(end_time, int) and end_time >= start:
            after["start_time"] = end_time
        # The export's last page has no next page (or says end_of_stream, or repeats the time it started
        # from).
        if (
            nxt
            and not data.get("end_of_stream")
            and not (isinstance(end_time, int) and end_time == start and not items)
        ):
            after["next"] = nxt
            return Page(tuple(items), after, more=True, skipped=skipped)
        after.update(phase="list", next=None)
        return Page(tuple(items), after, more=True, skipped=skipped)

    def _list(self, cursor: dict[str, Any]) -> Page:
        where = (
            f"/api/v2/help_center/{self.locale}/articles" if self.locale else "/api/v2/help_center/articles"
        )
        path = cursor.get("next") or f"{where}?page[size]={LIST_PAGE_SIZE}"
        data = self.client.get(path, what="the article list")
        listed = tuple(str(a["id"]) for a in data.get("articles") or []
                       if isinstance(a, dict) and "id" in a and not a.get("draft"))
        listing = str(cursor.get("listing") or "")
        if (data.get("meta") or {}).get("has_more") and (data.get("links") or {}).get("next"):
            return Page(
                (), {**cursor, "next": data["links"]["next"]}, more=True, listed=listed, listing=listing
            )
        done = {"start_time": cursor.get("start_time") or 0}
        return Page((), done, more=False, listed=listed, listing=listing, reconcile=True)

    def _item(self, article: Any) -> Item | None:
        """An export entry as an item (None when it has no id). A draft is gone."""
        if not isinstance(article, dict) or article.get("id") is None:
            return None
        ext = str(article["id"])
        if article.get("draft"):
            return Item(ext, live=False)
        body = article.get("body")
        text = html_to_text(body) if isinstance(body, str) else ""
        return Item(ext, title=str(article.get("title") or ""), text=text,
                    url=article.get("html_url") if isinstance(article.get("html_url"), str) else None,
                    updated_at=str(article.get("updated_at") or "") or None,
                    visibility=zendesk_article(article.get("user_segment_id"), self.segments()),
                    locale=str(article.get("locale") or "") or None)

    def segments(self) -> dict[int, str]:
        """The account's user segments' `user_type` by id (read once per reader)."""
        if self._segments is None:
            found: dict[int, str] = {}
            path: str | None = "/api/v2/help_center/user_segments"
            while path:
                data = self.client.get(path, what="the user segments")
                for segment in data.get("user_segments") or []:
                    if isinstance(segment, dict) and isinstance(segment.get("id"), int):
                        found[segment["id"]] = str(segment.get("user_type") or "")
                path = data.get("next_page")
            self._segments = found
        return self._segments
