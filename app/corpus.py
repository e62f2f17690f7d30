"""Changes to a tenant's knowledge base: every way documents reach or leave the engines (the CLI's ingest, a
source sync) goes through here, so each change also raises the tenant's corpus version in the database and
no search result cached before it is served after it (docs/answers.md, "Cached searches")."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from adapters.search.ingest import IngestReport, SourceDocument, ingest
from bootstrap import Services
from storage import repositories as repo


def ingest_documents(services: Services, documents: Sequence[SourceDocument], *, tenant_id: str,
                     progress: Callable[[int, int], None] | None = None) -> IngestReport:
    """Write `documents` to every engine of `services` for the tenant (`adapters.search.ingest.ingest`), then
    raise its corpus version: also when an engine failed part-way, since the others may hold the change."""
    try:
        return ingest(documents, tenant=tenant_id, backends=list(services.backends.values()),
                      max_words=services.settings.engines.chunk_tokens, progress=progress)
    finally:
        corpus_changed(services, tenant_id=tenant_id)


def remove_documents(services: Services, source_ids: Sequence[str], *, tenant_id: str) -> int:
    """Delete documents (by source id) from every engine; returns the most chunks any engine removed."""
    removed = 0
    try:
        for backend in services.backends.values():
            removed = max(removed, backend.delete(tenant_id, list(source_ids)))
    finally:
        corpus_changed(services, tenant_id=tenant_id)
    return removed


def corpus_changed(services: Services, *, tenant_id: str) -> int:
    """Raise the tenant's corpus version (after its engines changed) and return it: cached search results of
    earlier versions are never read again, in whatever Redis holds them."""
    with services.session() as session:
        return repo.bump_corpus_version(session, tenant_id=tenant_id)
