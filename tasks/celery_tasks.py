"""Celery tasks: thin shells over `tasks.steps` (serialisation, retries, acks); canvas in `workflow`."""

from __future__ import annotations

import time
from typing import Any

from celery import Task, shared_task
from celery.utils.log import get_task_logger

from investigation.errors import TransientError
from tasks import steps, workflow
from workers import names, runtime

log = get_task_logger(__name__)

_COMMON: dict[str, Any] = {"bind": True, "acks_late": True, "reject_on_worker_lost": True}


def _dispatch(app: Any, inv_id: str, nxt: steps.Next) -> None:
    """Enqueue `nxt`; once the investigation is terminal, a held one of its tenant may start."""
    workflow.dispatch(app, inv_id, nxt)
    if nxt.kind == steps.NextKind.DELIVER:
        from app.admission import release
        from storage import repositories as repo

        services = runtime.services()
        with services.session() as session:
            tenant_id = repo.get_investigation(session, investigation_id=inv_id).tenant_id
        release(services, tenant_id, lambda i: workflow.launch(app, i))


@shared_task(name=names.T_START, autoretry_for=(TransientError,), max_retries=3, retry_backoff=True,
             **_COMMON)
def start(self: Task, inv_id: str) -> dict[str, Any]:
    nxt = steps.start(runtime.services(), inv_id)
    _dispatch(self.app, inv_id, nxt)
    return nxt.as_json()


@shared_task(name=names.T_RETRIEVE, autoretry_for=(TransientError,), max_retries=2, retry_backoff=True,
             **_COMMON)
def retrieve(self: Task, inv_id: str, hop: int, index: int, engine: str) -> dict[str, Any]:
    return steps.retrieve(runtime.services(), inv_id, hop, index, engine)


@shared_task(name=names.T_TOOL, autoretry_for=(TransientError,), max_retries=2, retry_backoff=True,
             **_COMMON)
def tool_call(self: Task, inv_id: str, hop: int, name: str) -> dict[str, Any]:
    """One declared tool of a hop (its own queue); retries of 5xx happen inside, within its timeout."""
    from tasks.tool_step import call_tool

    return call_tool(runtime.services(), inv_id, hop, name)


@shared_task(name=names.T_REDUCE, autoretry_for=(TransientError,), max_retries=3, retry_backoff=True,
             **_COMMON)
def reduce(self: Task, _results: list[Any], inv_id: str, hop: int) -> dict[str, Any]:
    # The chord's member results are summaries only; the reducer re-reads the hits from Redis.
    nxt = steps.reduce(runtime.services(), inv_id, hop)
    _dispatch(self.app, inv_id, nxt)
    return nxt.as_json()


@shared_task(name=names.T_HOP_FAILED, **_COMMON)
def hop_failed(self: Task, request: Any, exc: BaseException, traceback: Any, inv_id: str,
               hop: int) -> dict[str, Any]:
    """Error callback of a hop's chord: the investigation ends `failed` with the reason, never hangs."""
    log.error("hop %s of %s failed: %r", hop, inv_id, exc)
    nxt = steps.fail(runtime.services(), inv_id, reason="error", error=f"hop {hop}: {exc!r}"[:500])
    _dispatch(self.app, inv_id, nxt)
    return nxt.as_json()


@shared_task(name=names.T_SYNTHESIZE, autoretry_for=(TransientError,), max_retries=3, retry_backoff=True,
             **_COMMON)
def synthesize(self: Task, inv_id: str) -> dict[str, Any]:
    nxt = steps.synthesize(runtime.services(), inv_id)
    _dispatch(self.app, inv_id, nxt)
    return nxt.as_json()


@shared_task(name=names.T_DELIVER, max_retries=None, **_COMMON)
def deliver(self: Task, delivery_id: str) -> dict[str, Any]:
    from tasks.delivery_step import attempt_delivery

    outcome = attempt_delivery(runtime.services(), delivery_id)
    if outcome.status == "pending" and outcome.retry_in is not None:
        raise self.retry(countdown=outcome.retry_in)
    return {"delivery_id": delivery_id, "status": outcome.status, "attempt": outcome.attempt}


@shared_task(name=names.T_WATCHDOG, **_COMMON)
def watchdog(self: Task) -> dict[str, Any]:
    """Beat task: investigations past their deadline end `failed: deadline`; work a dead worker dropped is
    re-driven (`tasks.redrive`). One run per interval, however many beats or redeliveries fire it."""
    from tasks.redrive import redrive

    services = runtime.services()
    interval = services.settings.watchdog_interval
    if not services.state.once(f"watchdog:{int(time.time() // interval)}", ttl=max(2, int(interval * 2))):
        return {"skipped": "another watchdog run owns this interval"}
    moved = []
    for inv_id in steps.overdue(services):
        nxt = steps.fail(services, inv_id, reason="deadline", error="deadline passed before completion")
        _dispatch(self.app, inv_id, nxt)
        moved.append(inv_id)
    from app.admission import held_tenants, release

    released = [i for t in held_tenants(services) for i in release(services, t, lambda i: workflow.launch(self.app, i))]
    return {"failed": moved, "released": released, "redriven": redrive(self.app, services).as_json()}
