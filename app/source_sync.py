"""The sync of one source, batch by batch — the same code for a Celery task and `sleuth sources sync`.

A run: `start` takes the source's lock (one sync per source at a time) and fixes the cursor the run begins
at; each `batch` reads one page at the stored cursor, writes new versions to every engine, then removes the
old versions and gone items, and only then stores the cursor after the page (with the items' versions and
hashes, in one transaction) — a run killed part-way reads the same page again, never skips it. The last page
of a listing removes every indexed item the listing did not name (except those whose fetch failed).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from adapters.search.ingest import SourceDocument
from app.corpus import ingest_documents, remove_documents
from app.source_readers import open_reader, source_row
from bootstrap import Services
from investigation.errors import NotFound, PermanentError, SleuthError
from investigation.sources.items import Page
from investigation.sources.plan import Known, Write, document_id, plan_batch, plan_reconcile
from storage import _sources as sources_repo
from storage.source_models import Source
from storage.source_runs import MemoryRuns, RedisRuns, Runs

log = logging.getLogger(__name__)
LOCK_SECONDS = 600  # a batch refreshes it; a killed worker's sync can be taken over this long after

_memory_runs = MemoryRuns()


def runs_for(services: Services) -> Runs:
    """Where locks and listings live: Redis when there is one (workers share it), else this process."""
    if services.settings.redis_url:
        return RedisRuns(services.redis, services.settings.redis_prefix)
    return _memory_runs


@dataclass
class Outcome:
    """What one batch did: whether the run goes on, its counts so far, and the error that ended it."""

    more: bool
    stats: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    stale: bool = False


def start(services: Services, source_id: str, *, full: bool = False, runs: Runs | None = None) -> str | None:
    """Begin a run of the source; its id, or None when another run holds the source's lock."""
    runs = runs or runs_for(services)
    run_id = "run_" + uuid.uuid4().hex[:16]
    if not runs.acquire(source_id, run_id, LOCK_SECONDS):
        return None
    with services.session() as session:
        sources_repo.start_run(session, source_id=source_id, run_id=run_id, full=full)
    source = source_row(services, source_id)
    try:
        reader = open_reader(services, source)
        try:
            cursor = reader.begin(source.cursor, full=full)
        finally:
            reader.close()
        with services.session() as session:
            sources_repo.record_batch(session, source_id=source_id, run_id=run_id, items=[], forget=[],
                                      cursor=cursor, stats={})
    except SleuthError as exc:
        finish(services, source_id, run_id, error=str(exc), runs=runs)
        raise
    return run_id


def finish(
    services: Services, source_id: str, run_id: str, *, error: str | None, runs: Runs | None = None
) -> None:
    runs = runs or runs_for(services)
    with services.session() as session:
        sources_repo.finish_run(session, source_id=source_id, run_id=run_id, error=error)
    runs.release(source_id, run_id)
    if error:
        log.warning("source %s: sync %s failed: %s", source_id, run_id, error)


def batch(services: Services, source_id: str, run_id: str, *, runs: Runs | None = None,
          reader_factory: Callable[[Services, Source], Any] = open_reader) -> Outcome:
    """Read, index and record one page of the run; finish the run after its last page or a permanent error.
    A transient error (the helpdesk unreachable, 5xx, a long 429) is raised for the caller to retry."""
    runs = runs or runs_for(services)
    source = source_row(services, source_id)
    if source.run_id != run_id or not runs.refresh(source_id, run_id, LOCK_SECONDS):
        return Outcome(more=False, stale=True)
    try:
        reader = reader_factory(services, source)
        try:
            page = reader.page(source.cursor)
        finally:
            reader.close()
        stats = _apply(services, source, run_id, page, runs)
    except PermanentError as exc:
        finish(services, source_id, run_id, error=str(exc), runs=runs)
        return Outcome(more=False, error=str(exc))
    if not page.more:
        finish(services, source_id, run_id, error=None, runs=runs)
    return Outcome(more=page.more, stats=stats)


def _apply(services: Services, source: Source, run_id: str, page: Page, runs: Runs) -> dict[str, int]:
    """Index the page's changes in every engine, then record them and the cursor after the page."""
    tenant_id = source.tenant_id
    with services.session() as session:
        rows = sources_repo.known_items(session, source_id=source.id,
                                        external_ids=[i.external_id for i in page.items])
    known = {r.external_id: Known(r.version, r.hash) for r in rows}
    plan = plan_batch(source.id, page.items, known)
    documents = [_document(source.id, w) for w in plan.writes]
    if documents:
        ingest_documents(services, documents, tenant_id=tenant_id)  # the new versions, in every engine
    retire, forget = list(plan.retire), list(plan.forget)
    if page.listing is not None and (page.listed or page.failed or page.reconcile):
        runs.add_listed(source.id, page.listing, page.listed)
        if page.failed:
            runs.add_listed(source.id, page.listing, page.failed, failed=True)
    if page.reconcile and page.listing is not None:
        listed = runs.listed(source.id, page.listing)
        if listed is None:
            log.warning("source %s: the listing's ids were lost; deletions wait for the next sync", source.id)
        else:
            with services.session() as session:
                every = sources_repo.known_items(session, source_id=source.id)
            written = {w.item.external_id for w in plan.writes}
            all_known = {
                r.external_id: Known(r.version, r.hash) for r in every if r.external_id not in written
            }
            gone_docs, gone_ids = plan_reconcile(source.id, all_known, listed[0] | written, listed[1])
            retire += gone_docs
            forget += gone_ids
            plan.deleted += len(gone_ids)
    if retire:
        remove_documents(services, retire, tenant_id=tenant_id)  # old versions go after the new are in
    stats = {"added": plan.added, "updated": plan.updated, "deleted": plan.deleted,
             "unchanged": plan.unchanged + page.unchanged, "skipped": plan.skipped + page.skipped}
    items = [
        {
            "external_id": w.item.external_id,
            "version": w.version,
            "hash": w.hash,
            "title": w.item.title[:500],
            "url": w.item.url,
            "visibility": w.item.visibility.value,
            "summary": {"question": w.item.question, "resolution": w.item.text} if w.item.question else {},
        }
        for w in plan.writes
    ]
    try:
        with services.session() as session:
            sources_repo.record_batch(session, source_id=source.id, run_id=run_id, items=items, forget=forget,
                                      cursor=page.cursor, stats=stats)
    except NotFound:
        # The source was removed while this batch was indexing: take back what it wrote, then stop.
        if documents:
            remove_documents(services, [d.id for d in documents], tenant_id=tenant_id)
        raise
    if page.reconcile and page.listing is not None:
        runs.forget(source.id, page.listing)
    for problem in plan.problems[:20]:
        log.info("source %s: skipped %s", source.id, problem)
    return stats


def _document(source_key: str, write: Write) -> SourceDocument:
    item = write.item
    return SourceDocument(id=document_id(source_key, item.external_id, write.version), title=item.title or
                          item.external_id, text=item.text, url=item.url, updated_at=item.updated_at,
                          visibility=item.visibility)


def run_inline(services: Services, source_id: str, *, full: bool = False,
               progress: Callable[[dict[str, int]], None] | None = None) -> Source:
    """A whole run in this process (the CLI's `sync`); the source as it ended. Transient errors end it too."""
    runs = runs_for(services)
    run_id = start(services, source_id, full=full, runs=runs)
    if run_id is None:
        raise PermanentError("the source is being synced already (its lock is held); try again later")
    totals: dict[str, int] = {}
    while True:
        try:
            outcome = batch(services, source_id, run_id, runs=runs)
        except SleuthError as exc:
            finish(services, source_id, run_id, error=str(exc), runs=runs)
            break
        for key, value in outcome.stats.items():
            totals[key] = totals.get(key, 0) + value
        if progress is not None:
            progress(totals)
        if not outcome.more:
            break
    return source_row(services, source_id)
