"""What one batch of a sync changes in the engines, decided from the items and what is already indexed.

A document is replaced as a whole: each version of an item is indexed under its own document id
(`<source>:<item>@v<n>`), the new version is written to every engine first, and only then the old one is
removed. Between the two steps both versions exist; retrieval keeps one version per item (the highest,
`latest_only`), so an investigation never cites a mix of an old and a new version of one article.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from investigation.sources.items import Item, content_hash, problem

_VERSIONED = re.compile(r"^(?P<base>.+)@v(?P<version>\d+)$")
P = TypeVar("P")


@dataclass(frozen=True)
class Known:
    """An item as the last sync indexed it."""

    version: int
    hash: str


@dataclass(frozen=True)
class Write:
    """A new version of an item to index."""

    item: Item
    version: int
    hash: str


@dataclass
class BatchPlan:
    """The writes, the document ids to remove after them, the items to forget, and the counts."""

    writes: list[Write] = field(default_factory=list)
    retire: list[str] = field(default_factory=list)  # document ids (old versions, gone items)
    forget: list[str] = field(default_factory=list)  # external ids no longer indexed
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)  # "<id>: <why>" of skipped items


def document_id(source_key: str, external_id: str, version: int) -> str:
    """The document id of one version of an item in the engines."""
    return f"{source_key}:{external_id}@v{version}"


def plan_batch(source_key: str, items: Sequence[Item], known: dict[str, Known]) -> BatchPlan:
    """Decide a batch: new or changed live items are written as the next version; gone items, and a live
    item that became unusable, are removed; unchanged content (same hash) is neither re-embedded nor
    rewritten. The last of two entries for one id wins."""
    plan = BatchPlan()
    latest: dict[str, Item] = {}
    for item in items:
        latest[item.external_id] = item
    for ext, item in latest.items():
        before = known.get(ext)
        why = problem(item) if item.live else None
        if why is not None:
            plan.skipped += 1
            plan.problems.append(f"{ext}: {why}")
        if not item.live or why is not None:
            if before is not None and not item.live:
                plan.retire.append(document_id(source_key, ext, before.version))
                plan.forget.append(ext)
                plan.deleted += 1
            continue
        digest = content_hash(item)
        if before is not None and before.hash == digest:
            plan.unchanged += 1
            continue
        version = before.version + 1 if before is not None else 1
        plan.writes.append(Write(item, version, digest))
        if before is not None:
            plan.retire.append(document_id(source_key, ext, before.version))
            plan.updated += 1
        else:
            plan.added += 1
    return plan


def plan_reconcile(source_key: str, known: dict[str, Known], listed: Iterable[str],
                   failed: Iterable[str]) -> tuple[list[str], list[str]]:
    """(document ids to remove, external ids to forget) after a full listing: every indexed item the listing
    did not name, except one whose fetch failed in this run (an error is never taken for a deletion)."""
    keep = set(listed) | set(failed)
    gone = sorted(ext for ext in known if ext not in keep)
    return [document_id(source_key, ext, known[ext].version) for ext in gone], gone


def version_of(source_id: str) -> tuple[str, int] | None:
    """(item's base id, version) of a versioned document id, or None for a document ingested from files."""
    match = _VERSIONED.match(source_id)
    return (match.group("base"), int(match.group("version"))) if match else None


def latest_only(passages: Sequence[P], source_id_of: Callable[[P], str]) -> list[P]:
    """`passages` less those of an item's older version when a newer version of the same item is among them
    (order kept): the swap window of a replacement never shows two versions of one document."""
    newest: dict[str, int] = {}
    for passage in passages:
        found = version_of(source_id_of(passage))
        if found is not None and found[1] > newest.get(found[0], -1):
            newest[found[0]] = found[1]
    if not newest:
        return list(passages)
    out: list[P] = []
    for passage in passages:
        found = version_of(source_id_of(passage))
        if found is None or found[1] == newest[found[0]]:
            out.append(passage)
    return out


