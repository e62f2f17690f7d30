"""Celery signal handlers: logging set-up, per-task log context, step timings and queue wait.

Imported by `workers.app.create_celery`, so every process that builds the Celery app connects them
(publishers stamp the send time; workers read it). The ids bound here are on every log line a task
writes, Celery's own included.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import signals

from observability import events, exposition, logs, metrics, tracing
from storage import repositories as repo
from workers import runtime

log = logging.getLogger("sleuth.tasks")

SENT_AT = "sleuth_sent_at"
_STEP = {"sleuth.start": "start", "sleuth.retrieve": "retrieve", "sleuth.reduce": "reduce",
         "sleuth.synthesize": "synthesize", "sleuth.deliver": "deliver", "sleuth.hop_failed": "hop_failed",
         "sleuth.watchdog": "watchdog", "sleuth.tool_call": "tool_call"}
_started: dict[str, float] = {}


@signals.setup_logging.connect
def _setup_logging(loglevel: Any = None, **_: Any) -> None:
    """Connected, so Celery leaves logging to us: one handler, JSON or text, libraries at WARNING."""
    logs.configure(runtime.settings(), level=loglevel)


@signals.worker_init.connect
def _worker_init(**_: Any) -> None:
    settings = runtime.settings()
    metrics.configure(settings, redis_client=lambda: runtime.services().redis)
    events.install()
    exposition.start_worker_exporter(settings)


@signals.worker_process_init.connect
def _child_init(**_: Any) -> None:
    settings = runtime.settings()
    metrics.configure(settings, redis_client=lambda: runtime.services().redis)
    events.install()
    tracing.configure(settings)


@signals.before_task_publish.connect
def _stamp(headers: dict[str, Any] | None = None, **_: Any) -> None:
    if headers is not None:
        now = time.time()
        headers[SENT_AT] = now
        inner = headers.get("headers")
        if isinstance(inner, dict):
            inner[SENT_AT] = now


def _sent_at(task: Any) -> float | None:
    request = getattr(task, "request", None)
    value = getattr(request, SENT_AT, None)
    if value is None:
        value = (getattr(request, "headers", None) or {}).get(SENT_AT)
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _owner(kind: str, item_id: str) -> tuple[str, str]:
    """(investigation id, tenant id) of an investigation or delivery id (the storage's cached lookup)."""

    try:
        with runtime.services().session() as session:
            if kind == "delivery":
                return repo.delivery_owner(session, delivery_id=item_id)
            return item_id, repo.investigation_tenant(session, investigation_id=item_id)
    except Exception:  # noqa: BLE001 - a missing row is the task's problem to report, not the logger's
        return (item_id if kind != "delivery" else "", "")


def bind_task(name: str, task_id: str | None, args: tuple[Any, ...]) -> None:
    """Bind the ids of one task from its arguments (inv_id[, hop, ...] or delivery_id)."""
    fields: dict[str, Any] = {"task": name, "task_id": task_id}
    if name == "sleuth.deliver" and args:
        inv, tenant = _owner("delivery", str(args[0]))
        fields.update(delivery_id=args[0], investigation_id=inv or None, tenant_id=tenant or None)
    elif name in _STEP and name != "sleuth.watchdog" and args:
        inv_arg = args[1] if name == "sleuth.reduce" else args[0]  # reduce gets the chord results first
        inv, tenant = _owner("investigation", str(inv_arg))
        fields.update(investigation_id=inv, tenant_id=tenant or None)
        hop_arg = {
            "sleuth.retrieve": 1,
            "sleuth.tool_call": 1,
            "sleuth.reduce": 2,
            "sleuth.hop_failed": 4,
        }.get(name)
        fields["hop"] = args[hop_arg] if hop_arg is not None and len(args) > hop_arg else 0
    logs.bind(**fields)


@signals.task_prerun.connect
def _prerun(task_id: str | None = None, task: Any = None, args: tuple[Any, ...] = (), **_: Any) -> None:
    name = getattr(task, "name", "?")
    bind_task(name, task_id, tuple(args or ()))
    if task_id:
        _started[task_id] = time.perf_counter()
    sent = _sent_at(task)
    if sent is not None:
        metrics.observe_queue_wait(name, time.time() - sent)

    tracing.start_task_span(name, logs.current())


@signals.task_postrun.connect
def _postrun(task_id: str | None = None, task: Any = None, retval: Any = None, state: str | None = None,
             **_: Any) -> None:
    name = getattr(task, "name", "?")
    started = _started.pop(task_id or "", None)
    seconds = time.perf_counter() - started if started is not None else 0.0
    step = _STEP.get(name, name)
    metrics.observe_step(step, seconds)

    tracing.end_task_span(state)
    # The watchdog runs every few seconds: it speaks only when it moved something.
    if name == "sleuth.watchdog" and not (isinstance(retval, dict) and retval.get("failed")):
        return
    summary = retval if isinstance(retval, dict) else {}
    extra: dict[str, Any] = {"state": state, "ms": round(seconds * 1000, 1)}
    for key in ("kind", "status", "attempt", "hits", "error", "failed"):
        if summary.get(key) not in (None, [], ""):
            extra[key] = summary[key]
    log.info("%s %s", step, (state or "").lower(), extra=extra)
