"""Freshdesk Solutions: categories (`GET /api/v2/solutions/categories`), their folders (`GET
/api/v2/solutions/ categories/{id}/folders`, each with its `visibility`), and each folder's articles (`GET
/api/v2/solutions/ folders/{id}/articles?page=&per_page=100`, page based: a short page is the last). Freshdesk
has no change feed for articles, so every run lists them all: the content hash keeps unchanged articles from
being embedded again, the listing removes deleted ones, and `updated_at` is kept as the cursor's high-water
mark.

Status 1 (draft) is gone, 2 (published) is live; the folder's visibility decides public or internal.
"""

from __future__ import annotations

import uuid
from typing import Any

from adapters.sources.html import html_to_text
from adapters.sources.http import SourceClient
from investigation.sources.items import Item, Page
from investigation.sources.visibility import FRESHDESK_PUBLISHED, freshdesk_folder

FIX = ("use a Freshdesk channel whose API key belongs to an agent allowed to view Solutions "
       "(Profile settings > Your API key)")
PER_PAGE = 100


class FreshdeskSolutionsReader:
    """The `Reader` of one Freshdesk account's knowledge base."""

    def __init__(self, client: SourceClient) -> None:
        self.client = client

    def close(self) -> None:
        self.client.close()

    def begin(self, cursor: dict[str, Any] | None, *, full: bool) -> dict[str, Any]:
        cursor = dict(cursor or {})
        if cursor.get("phase") and not full:
            return cursor
        return {"updated_at": None if full else cursor.get("updated_at"), "phase": "folders",
                "listing": uuid.uuid4().hex[:16]}

    def page(self, cursor: dict[str, Any]) -> Page:
        if cursor.get("phase") == "folders":
            return Page((), {**cursor, "phase": "articles", "folders": self._folders(), "i": 0, "page": 1},
                        more=True, listing=str(cursor["listing"]))
        return self._articles(cursor)

    def _folders(self) -> list[list[Any]]:
        folders: list[list[Any]] = []
        for category in self.client.get("/api/v2/solutions/categories", what="the solution categories") or []:
            if not isinstance(category, dict) or category.get("id") is None:
                continue
            found = self.client.get(f"/api/v2/solutions/categories/{category['id']}/folders",
                                    what=f"the folders of category {category['id']}")
            for folder in found or []:
                if isinstance(folder, dict) and folder.get("id") is not None:
                    folders.append([folder["id"], folder.get("visibility")])
        return folders

    def _articles(self, cursor: dict[str, Any]) -> Page:
        folders, i, number = (
            cursor.get("folders") or [],
            int(cursor.get("i") or 0),
            int(cursor.get("page") or 1),
        )
        listing = str(cursor.get("listing") or "")
        if i >= len(folders):
            return Page(
                (), {"updated_at": cursor.get("updated_at")}, more=False, listing=listing, reconcile=True
            )
        folder_id, visibility = folders[i]
        data = self.client.get(
            f"/api/v2/solutions/folders/{folder_id}/articles",
            {"page": number, "per_page": PER_PAGE},
            what=f"the articles of folder {folder_id}",
        )
        articles = [a for a in data or [] if isinstance(a, dict)]
        items, skipped, newest = [], 0, cursor.get("updated_at")
        for article in articles:
            if article.get("id") is None:
                skipped += 1
                continue
            item = self._item(article, visibility)
            items.append(item)
            stamp = article.get("updated_at")
            if isinstance(stamp, str) and (newest is None or stamp > newest):
                newest = stamp
        listed = tuple(item.external_id for item in items if item.live)
        after = {**cursor, "updated_at": newest}
        after.update({"page": number + 1} if len(articles) >= PER_PAGE else {"i": i + 1, "page": 1})
        return Page(tuple(items), after, more=True, listed=listed, listing=listing, skipped=skipped)

    def _item(self, article: dict[str, Any], folder_visibility: object) -> Item:
        ext = str(article["id"])
        if article.get("status") != FRESHDESK_PUBLISHED:
            return Item(ext, live=False)
        text = article.get("description_text")
        if not isinstance(text, str) or not text.strip():
            html = article.get("description")
            text = html_to_text(html) if isinstance(html, str) else ""
        return Item(ext, title=str(article.get("title") or ""), text=text,
                    url=f"{self.client.base_url}/support/solutions/articles/{ext}",
                    updated_at=str(article.get("updated_at") or "") or None,
                    visibility=freshdesk_folder(folder_visibility))
