"""Trace events → metrics. Every decision is already written as a trace event (by both executors, in
every process), so the metrics are derived from them in one place instead of being sprinkled over the
steps. Registered on `storage._records.EVENT_OBSERVERS` by `install()`.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from sqlmodel import Session

from investigation.errors import NotFound
from observability import metrics, tracing
from storage import repositories as repo
from storage._records import EVENT_OBSERVERS, NewEvent
from storage.models import utcnow

log = logging.getLogger(__name__)

BUDGET_STOPS = frozenset({"hop_cap", "retrieval_budget", "token_budget", "deadline"})
_TOKEN_KINDS = {"input_tokens": "input", "output_tokens": "output",
                "cache_read_input_tokens": "cache_read", "cache_creation_input_tokens": "cache_write"}


def install() -> None:
    """Observe trace events in this process (idempotent)."""
    if observe not in EVENT_OBSERVERS:
        EVENT_OBSERVERS.append(observe)


def observe(session: Session, event: NewEvent) -> None:
    """Turn one freshly written trace event into metric updates; a metrics bug never fails a step."""
    m = metrics.get()
    if m is None and not tracing.enabled():
        return
    try:
        _observe(m, session, event)
    except Exception:
        log.warning("metrics: could not observe %s event", event.kind, exc_info=True)


def _tenant(session: Session, inv_id: str) -> str:
    try:
        return repo.investigation_tenant(session, investigation_id=inv_id)
    except NotFound:
        return ""


def _seconds_since(moment: datetime | None) -> float | None:
    return None if moment is None else max(0.0, (utcnow() - moment).total_seconds())


def _observe(m: metrics.Metrics | None, session: Session, event: NewEvent) -> None:
    data: dict[str, Any] = event.data or {}
    kind = event.kind
    if kind == "llm_call" and tracing.enabled():
        tracing.record_call("sleuth.llm_call", event.investigation_id, event.at,
                            float(data.get("ms") or data.get("duration_ms") or 0) / 1000,
                            model=str(data.get("model")), step=str(data.get("step")),
                            input_tokens=int(data.get("input_tokens") or 0),
                            output_tokens=int(data.get("output_tokens") or 0))
    if kind == "synthesis" or (kind == "stop" and event.step_key.startswith("fail:")):
        _finished(m, session, event)
    if m is None:
        return
    if kind == "retrieval":
        engine = str(data.get("engine"))
        error = data.get("error")
        outcome = ("budget" if error in ("retrieval_budget", "deadline") else "error" if error
                   else "cached" if data.get("cached") else "ok")
        m.retrieval_calls.labels(engine, outcome).inc()
        if outcome == "ok":
            m.retrieval_seconds.labels(engine).observe(float(data.get("ms") or 0) / 1000)
    elif kind == "decision":
        hop = repo.get_hop(session, investigation_id=event.investigation_id, number=event.hop)
        if hop is not None and (seconds := _seconds_since(hop.created_at)) is not None:
            m.hop_seconds.observe(seconds)
    elif kind == "llm_call":
        tenant = metrics.tenant_label(_tenant(session, event.investigation_id))
        model = str(data.get("model") or "unknown")
        for field, label in _TOKEN_KINDS.items():
            if tokens := int(data.get(field) or 0):
                m.llm_tokens.labels(model, tenant, label).inc(tokens)
        from adapters.llm.claude_pricing import cost

        usd = cost(model, {f: int(data.get(f) or 0) for f in _TOKEN_KINDS})
        if usd:
            m.llm_cost.labels(model, tenant).inc(usd)
    elif kind == "llm_fallback":
        m.llm_fallbacks.labels(str(data.get("reason") or "unknown")).inc()
    elif kind == "delivery":
        channel, outcome = str(data.get("channel") or "webhook"), str(data.get("outcome") or "unknown")
        m.delivery_attempts.labels(channel, outcome).inc()
        m.delivery_seconds.labels(channel).observe(float(data.get("duration_ms") or 0) / 1000)
        if outcome == "dead":
            m.deliveries_dead.labels(channel).inc()


def _finished(m: metrics.Metrics | None, session: Session, event: NewEvent) -> None:
    """An investigation reached its terminal state (written just before this event)."""
    try:
        inv = repo.get_investigation(session, investigation_id=event.investigation_id)  # as just written
    except NotFound:
        return
    if event.kind == "synthesis" and (event.data or {}).get("status") not in (None, inv.status):
        return  # the watchdog got there first; its `fail:` event counted it
    route, status, stop = inv.route or "none", inv.status, inv.stop_reason or "none"
    tracing.finish_investigation(inv.id, inv.created_at, inv.finished_at or utcnow(), status=status,
                                 route=route, stop_reason=stop, hops=inv.hops,
                                 retrieval_calls=inv.retrieval_calls)
    if m is None:
        return
    m.investigations.labels(status, route, stop, metrics.tenant_label(inv.tenant_id)).inc()
    if (seconds := _seconds_since(inv.created_at)) is not None:
        m.investigation_seconds.labels(route, status).observe(seconds)
    m.investigation_retrieval_calls.observe(inv.retrieval_calls)
    m.investigation_evidence_tokens.observe(inv.evidence_tokens)
    if stop in BUDGET_STOPS:
        m.budget_stops.labels(stop).inc()
