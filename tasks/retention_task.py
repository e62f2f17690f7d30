"""The beat task of retention (on the `sources` queue, the background queue: it never takes an investigation's
worker): each tenant's expired trace events, evidence text and rating comments/corrections go, one small
transaction per batch, at most `retention_batches` transactions a run (the rest the next run)."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from celery import Task, shared_task

from storage import repositories as repo
from storage import retention
from storage.models import utcnow
from tasks.celery_tasks import retry_when_database_down
from workers import names, runtime

_COMMON: dict[str, Any] = {
    "bind": True,
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
}


@shared_task(name=names.T_RETENTION, **_COMMON)
@retry_when_database_down
def retention_run(self: Task) -> dict[str, Any]:
    """Beat: remove what passed each tenant's retention; one run per interval however often it fires."""
    services = runtime.services()
    settings = services.settings
    if not services.state.once(f"retention:{int(time.time() // settings.workers.retention_interval)}",
                               ttl=max(2, int(settings.workers.retention_interval * 2))):
        return {"skipped": "another retention run owns this interval"}
    with services.session() as session:
        tenants = [(t.id, retention.retention_days(t.limits, settings.workers.retention_days))
                   for t in repo.list_tenants(session)]
    left = settings.workers.retention_batches
    removed: dict[str, dict[str, int]] = {}
    for tenant_id, days in tenants:
        cutoff = utcnow() - timedelta(days=days)
        counts = {"events": 0, "evidence_text": 0, "feedback_text": 0}
        for kind, purge in (
            ("events", retention.purge_events),
            ("evidence_text", retention.purge_evidence_text),
            ("feedback_text", repo.purge_feedback_text),
        ):
            while left > 0:
                left -= 1
                with services.session() as session:
                    n = purge(
                        session, tenant_id=tenant_id, cutoff=cutoff, batch=settings.workers.retention_batch
                    )
                counts[kind] += n
                if n < settings.workers.retention_batch:
                    break
        if any(counts.values()):
            removed[tenant_id] = counts
    return {"removed": removed, "batches_left": left}
