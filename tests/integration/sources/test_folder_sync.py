"""A folder source synced in this process: new, changed, unchanged and removed files reach every engine as
whole versions; removing the source removes its documents; the cursor only moves with indexed batches."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app import source_sync
from app.sources import add_source, get_source, list_sources, remove_source
from investigation.errors import ValidationFailed
from storage import repositories as repo
from tests.support.stack import Stack


def _tenant(stack: Stack):  # type: ignore[no-untyped-def]
    with stack.services.session() as session:
        return repo.get_tenant(session, tenant_id=stack.tenant_id)


def _source_ids(stack: Stack, query: str) -> dict[str, set[str]]:
    """The documents each engine returns for `query` (document ids, by engine)."""
    return {name: {p.source_id for p in backend.search(stack.tenant_id, query, 20)}
            for name, backend in stack.services.backends.items()}


def _touch(path: Path, text: str, mtime: float) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, (mtime, mtime))


def test_folder_changes_reach_every_engine_as_whole_versions(stack: Stack, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    _touch(docs / "refunds.md", "# Refund window\n\nRefunds are accepted within 30 days of purchase.", 1000)
    _touch(docs / "shipping.md", "# Shipping\n\nWe ship parcels to Norway in 4 business days.", 1000)
    _touch(
        docs / "notes.txt", "---\nvisibility: internal\n---\nEscalate zebra outages to the night team.", 1000
    )
    tenant = _tenant(stack)
    add_source(stack.services, tenant=tenant, data={"name": "kb", "type": "folder", "path": str(docs)})
    source = get_source(stack.services, tenant=tenant, name="kb")

    ended = source_sync.run_inline(stack.services, source.id)
    assert ended.last_error is None
    assert ended.last_stats == {"added": 3, "updated": 0, "deleted": 0, "unchanged": 0, "skipped": 0}
    assert ended.items == 3
    found = _source_ids(stack, "refund window days purchase")
    assert all(f"{source.id}:refunds.md@v1" in ids for ids in found.values()), found
    internal = stack.services.backends["bm25"].search(stack.tenant_id, "zebra outages night team", 5)
    assert internal and internal[0].visibility.value == "internal"

    # Changed, unchanged (newer mtime, same text), removed.
    _touch(docs / "refunds.md", "# Refund window\n\nRefunds are accepted within 14 days of purchase.", 2000)
    _touch(docs / "shipping.md", "# Shipping\n\nWe ship parcels to Norway in 4 business days.", 2000)
    (docs / "notes.txt").unlink()
    ended = source_sync.run_inline(stack.services, source.id)
    assert ended.last_stats == {"added": 0, "updated": 1, "deleted": 1, "unchanged": 1, "skipped": 0}
    for engine, ids in _source_ids(stack, "refund window days purchase").items():
        assert f"{source.id}:refunds.md@v2" in ids, engine
        assert f"{source.id}:refunds.md@v1" not in ids, engine
    for engine, ids in _source_ids(stack, "zebra outages night team").items():
        assert not any(i.startswith(f"{source.id}:notes.txt") for i in ids), engine

    # Nothing changed: nothing read again (the mtime cursor), nothing written.
    ended = source_sync.run_inline(stack.services, source.id)
    assert ended.last_stats == {"added": 0, "updated": 0, "deleted": 0, "unchanged": 2, "skipped": 0}
    assert list_sources(stack.services, tenant=tenant)[0]["items"] == 2

    assert remove_source(stack.services, tenant=tenant, name="kb") == 2
    for engine, ids in _source_ids(stack, "refund window shipping parcels Norway").items():
        assert not any(i.startswith(source.id) for i in ids), engine


def test_a_malformed_file_is_skipped_and_counted(stack: Stack, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    _touch(docs / "empty.md", "   \n", 1000)
    _touch(docs / "big.txt", "word " * 250_000, 1000)
    _touch(docs / "ok.md", "# Fine\n\nA perfectly good article about invoices.", 1000)
    tenant = _tenant(stack)
    add_source(stack.services, tenant=tenant, data={"name": "kb", "type": "folder", "path": str(docs)})
    ended = source_sync.run_inline(stack.services, get_source(stack.services, tenant=tenant, name="kb").id)
    assert ended.last_error is None
    assert ended.last_stats["added"] == 1 and ended.last_stats["skipped"] == 2


def test_bad_declarations_name_the_field(stack: Stack, tmp_path: Path) -> None:
    tenant = _tenant(stack)
    cases = [({"name": "a", "type": "nope"}, "type"), ({"name": "a", "type": "folder"}, "path"),
             ({"name": "a", "type": "zendesk-guide"}, "channel"),
             ({"name": "a", "type": "zendesk-guide", "channel": "missing"}, "channel"),
             ({"name": "a", "type": "folder", "path": str(tmp_path), "every": "soon"}, "every"),
             ({"name": "a", "type": "sitemap", "url": "http://10.1.2.3/sitemap.xml"}, "url")]
    for data, field in cases:
        with pytest.raises(ValidationFailed) as caught:
            add_source(stack.services, tenant=tenant, data=data)
        assert caught.value.field == field, (data, str(caught.value))
