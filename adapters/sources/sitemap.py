"""A public docs site from its sitemap: every page the sitemap (or a sitemap index on the same host) lists,
fetched through the tenant's outbound guard, allowed by the site's `robots.txt` (urllib.robotparser), its main
text extracted by trafilatura (navigation, headers and footers left out). A page off the sitemap's host, or on
a refused address, is skipped per page; a page whose `lastmod` is not newer than the last sync is not fetched;
a page that fails to load is kept as it was (never taken for a deletion); pages the sitemap no longer lists
go.
"""

from __future__ import annotations

import hashlib
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx
import trafilatura

from adapters.delivery.outbound import GuardedTransport, OutboundGuard, OutboundRefused, UnresolvableHost
from adapters.delivery.webhook import parse_retry_after
from adapters.sources.base import SourceRejected
from investigation.errors import ReceiverUnavailable
from investigation.sources.items import MAX_ID_CHARS, Item, Page

USER_AGENT = "SleuthBot/1 (+knowledge sync)"
PAGES_PER_BATCH = 20
MAX_SITEMAPS = 50  # sitemap files read from one index: a bound on a hostile or broken index
MAX_PAGE_BYTES = 5_000_000
MAX_WAITS = 3
_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def page_id(url: str) -> str:
    """A page's item id: its URL, or a digest of a URL too long to be a key."""
    if len(url) <= MAX_ID_CHARS:
        return url
    return "url-" + hashlib.sha256(url.encode()).hexdigest()[:40]


class SitemapReader:
    """The `Reader` of one sitemap URL."""

    def __init__(
        self,
        url: str,
        *,
        guard: OutboundGuard,
        source: str,
        timeout: float,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = url
        self.source = source
        self.host = urlsplit(url).netloc.lower()
        self._guard = guard
        self._sleep = sleep
        self._client = httpx.Client(transport=GuardedTransport(guard, transport), timeout=timeout,
                                    follow_redirects=False, headers={"user-agent": USER_AGENT})
        self._robots: RobotFileParser | None = None

    def close(self) -> None:
        self._client.close()

    def begin(self, cursor: dict[str, Any] | None, *, full: bool) -> dict[str, Any]:
        cursor = dict(cursor or {})
        if cursor.get("phase") and not full:
            return cursor
        return {
            "since": None if full else cursor.get("since"),
            "phase": "sitemap",
            "listing": uuid.uuid4().hex[:16],
        }

    def page(self, cursor: dict[str, Any]) -> Page:
        listing = str(cursor.get("listing") or "")
        if cursor.get("phase") == "sitemap":
            urls = self._sitemap()
            newest = max((m for _, m in urls if m), default=cursor.get("since"))
            return Page((), {**cursor, "phase": "pages", "urls": urls, "i": 0, "newest": newest}, more=True,
                        listing=listing)
        urls, i = cursor.get("urls") or [], int(cursor.get("i") or 0)
        batch = urls[i:i + PAGES_PER_BATCH]
        items: list[Item] = []
        listed: list[str] = []
        failed: list[str] = []
        skipped = unchanged = 0
        for url, lastmod in batch:
            if urlsplit(url).netloc.lower() != self.host or not self._allowed(url):
                skipped += 1  # off-host, or robots.txt says no: neither listed nor fetched
                continue
            listed.append(page_id(url))
            since = cursor.get("since")
            if since and lastmod and lastmod <= since:
                unchanged += 1
                continue
            try:
                item = self._fetch(url)
            except OutboundRefused:
                listed.pop()
                skipped += 1
                continue
            except (ReceiverUnavailable, UnresolvableHost, httpx.HTTPError):
                failed.append(page_id(url))
                continue
            if item is None:
                skipped += 1
            else:
                items.append(item)
        if i + PAGES_PER_BATCH < len(urls):
            return Page(tuple(items), {**cursor, "i": i + PAGES_PER_BATCH}, more=True, listed=tuple(listed),
                        failed=tuple(failed), listing=listing, skipped=skipped, unchanged=unchanged)
        return Page(
            tuple(items),
            {"since": cursor.get("newest")},
            more=False,
            listed=tuple(listed),
            failed=tuple(failed),
            listing=listing,
            reconcile=True,
            skipped=skipped,
            unchanged=unchanged,
        )

    def _get(self, url: str) -> httpx.Response:
        for _ in range(MAX_WAITS + 1):
            try:
                response = self._client.get(url)
            except httpx.TransportError as exc:
                raise ReceiverUnavailable(
                    f"source {self.source!r}: {url} could not be fetched: {exc}"
                ) from exc
            if response.status_code == 429:
                wait = parse_retry_after(response.headers.get("retry-after"), now=time.time())
                self._sleep(min(wait if wait is not None else 1.0, 60.0))
                continue
            if response.status_code >= 500:
                raise ReceiverUnavailable(f"source {self.source!r}: {url} answered {response.status_code}",
                                          status_code=response.status_code)
            return response
        raise ReceiverUnavailable(f"source {self.source!r}: {url} is still rate limited", status_code=429)

    def _sitemap(self) -> list[list[Any]]:
        """[url, lastmod] of every page of the sitemap (an index's sitemaps on the same host followed)."""
        pending, seen, pages = [self.url], set[str](), list[list[Any]]()
        while pending and len(seen) < MAX_SITEMAPS:
            where = pending.pop(0)
            if where in seen or urlsplit(where).netloc.lower() != self.host:
                continue
            seen.add(where)
            try:
                response = self._get(where)
            except OutboundRefused as exc:
                raise SourceRejected(f"source {self.source!r}: {exc}") from exc
            if response.status_code != 200:
                raise SourceRejected(
                    f"source {self.source!r}: the sitemap {where} answered {response.status_code}; "
                    "check --url"
                )
            try:
                root = ET.fromstring(response.content)
            except ET.ParseError as exc:
                raise SourceRejected(
                    f"source {self.source!r}: {where} is not a sitemap (XML: {exc})"
                ) from exc
            for entry in root:
                loc = (entry.findtext(f"{_NS}loc") or entry.findtext("loc") or "").strip()
                if not loc:
                    continue
                if entry.tag.endswith("sitemap"):
                    pending.append(urljoin(where, loc))
                else:
                    lastmod = (
                        entry.findtext(f"{_NS}lastmod") or entry.findtext("lastmod") or ""
                    ).strip() or None
                    pages.append([urljoin(where, loc), lastmod])
        return pages

    def _allowed(self, url: str) -> bool:
        if self._robots is None:
            parts = urlsplit(self.url)
            robots = RobotFileParser()
            try:
                response = self._get(f"{parts.scheme}://{parts.netloc}/robots.txt")
                lines = response.text.splitlines() if response.status_code == 200 else []
            except (ReceiverUnavailable, OutboundRefused, UnresolvableHost):
                lines = []  # no readable robots.txt: everything is allowed, as crawlers read it
            robots.parse(lines)
            self._robots = robots
        return self._robots.can_fetch(USER_AGENT, url)

    def _fetch(self, url: str) -> Item | None:
        """The page as an item; None when it is not an HTML page with text."""
        response = self._get(url)
        if response.status_code in (404, 410):
            return Item(page_id(url), live=False)
        kind = response.headers.get("content-type", "")
        if response.status_code != 200 or "html" not in kind or len(response.content) > MAX_PAGE_BYTES:
            return None
        html = response.text
        text = trafilatura.extract(html, url=url, include_comments=False, include_tables=True,
                                   favor_precision=True) or ""
        meta = trafilatura.extract_metadata(html, default_url=url)
        title = (meta.title if meta is not None and meta.title else "") or url
        return Item(page_id(url), title=title, text=text, url=url)
