"""What a source hands the sync: items (live or gone), pages of them with the cursor after the page, and the
checks that make a malformed item a counted skip instead of a failed sync."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from investigation.state import Visibility

MAX_BODY_CHARS = 1_000_000  # a larger body is skipped: a help article this long is an export mistake
MAX_ID_CHARS = 200  # the items table's key (sources hash longer natural ids, such as page URLs)
_LOCALE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{2,8})*")


@dataclass(frozen=True)
class Item:
    """One article, ticket, file or page as the source has it now. `live=False`: it is gone from what may
    be cited (deleted, archived, draft, unpublished) and must leave every engine."""

    external_id: str
    title: str = ""
    text: str = ""
    url: str | None = None
    updated_at: str | None = None
    visibility: Visibility = Visibility.PUBLIC
    live: bool = True
    locale: str | None = None
    question: str | None = None  # a solved ticket's subject (FAQ grouping); None for articles and files


@dataclass(frozen=True)
class Page:
    """One batch of a sync: its items, the cursor to store once they are indexed, whether more follow, the
    ids listed (a page of a listing of every id, collected under `listing`), ids whose fetch failed this run
    (never deleted), and — on the last page of a listing — `reconcile`: what the listing did not name goes."""

    items: tuple[Item, ...]
    cursor: dict[str, Any]
    more: bool
    listed: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    skipped: int = 0  # malformed entries the source itself dropped (no id to name them by)
    unchanged: int = 0  # entries the source knows are unchanged without reading them (a file's mtime)
    listing: str | None = None
    reconcile: bool = False


def problem(item: Item) -> str | None:
    """Why a live item cannot be indexed (counted as skipped), or None."""
    if not item.external_id.strip():
        return "no id"
    if len(item.external_id) > MAX_ID_CHARS:
        return f"id over {MAX_ID_CHARS} characters"
    if not item.text.strip():
        return "no body"
    if len(item.text) > MAX_BODY_CHARS:
        return f"body over {MAX_BODY_CHARS} characters"
    if item.locale is not None and not _LOCALE.fullmatch(item.locale.lower()):
        return f"unknown locale {item.locale!r}"
    return None


def content_hash(item: Item) -> str:
    """What decides whether an item must be indexed again: its text, title, link and visibility."""
    digest = hashlib.sha256()
    for part in (item.title, item.text, item.url or "", item.visibility.value):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]
