"""Celery tasks of source syncs, on the `sources` queue (a big help center never delays an investigation):
`sources_due` (beat) starts the sources whose interval has passed, `source_sync` starts one run, and each
`source_batch` indexes one page and sends the next — so no task holds a worker for a whole help center."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from celery import Task, shared_task
from celery.utils.log import get_task_logger

from app import source_sync
from app.source_readers import source_row
from app.sources import refresh_faq
from investigation.errors import NotFound, SleuthError, TransientError
from investigation.sources.schedule import is_due
from storage import _sources as sources_repo
from storage.models import utcnow
from tasks.celery_tasks import retry_when_database_down
from workers import broker, names, runtime

log = get_task_logger(__name__)

_COMMON: dict[str, Any] = {
    "bind": True,
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
}
BATCH_RETRIES = 8  # a transient helpdesk failure is retried this often before the run ends with its error
TICKET_TYPES = ("zendesk-tickets", "freshdesk-tickets")


@shared_task(name=names.T_SOURCES_DUE, **_COMMON)
@retry_when_database_down
def sources_due(self: Task, now: str | None = None) -> dict[str, Any]:
    """Beat: start every source whose interval passed and that no run holds."""
    services = runtime.services()
    moment = datetime.fromisoformat(now) if now else utcnow()
    runs = source_sync.runs_for(services)
    with services.session() as session:
        sources = sources_repo.list_sources(session)
    started = []
    for source in sources:
        if runs.holder(source.id) is None and is_due(every_seconds=source.every_seconds,
                                                     last_started=source.last_started_at, now=moment):
            self.app.send_task(names.T_SOURCE_SYNC, args=[source.id, False])
            started.append(source.id)
    return {"started": started}


@shared_task(name=names.T_SOURCE_SYNC, **_COMMON)
@retry_when_database_down
def source_sync_task(self: Task, source_id: str, full: bool = False) -> dict[str, Any]:
    """Start a run (nothing when another run holds the source) and send its first batch."""
    services = runtime.services()
    try:
        run_id = source_sync.start(services, source_id, full=full)
    except NotFound:
        return {"skipped": "source removed"}
    except SleuthError as exc:
        return {"error": str(exc)}
    if run_id is None:
        return {"skipped": "a sync of this source is running"}
    self.app.send_task(names.T_SOURCE_BATCH, args=[source_id, run_id])
    return {"run_id": run_id}


@shared_task(name=names.T_SOURCE_BATCH, max_retries=BATCH_RETRIES, **_COMMON)
@retry_when_database_down
def source_batch(self: Task, source_id: str, run_id: str) -> dict[str, Any]:
    """Index one page of the run; send the next one, or end the run (and group ticket FAQs)."""
    services = runtime.services()
    try:
        outcome = source_sync.batch(services, source_id, run_id)
    except NotFound:
        return {"skipped": "source removed"}
    except TransientError as exc:
        if self.request.retries >= BATCH_RETRIES:
            source_sync.finish(services, source_id, run_id, error=str(exc))
            return {"error": str(exc)}
        delay = exc.retry_after if exc.retry_after is not None else min(60, 2 ** self.request.retries)
        raise self.retry(exc=exc, countdown=broker.countdown(services.settings, delay)) from exc
    if outcome.more:
        self.app.send_task(names.T_SOURCE_BATCH, args=[source_id, run_id])
    elif not outcome.stale and not outcome.error:
        source = source_row(services, source_id)
        if source.type in TICKET_TYPES:
            refresh_faq(services, source)
    return {"more": outcome.more, "stats": outcome.stats, "error": outcome.error, "stale": outcome.stale}
