"""Scans for work a dead worker may have dropped: idle active investigations and stranded deliveries."""

from __future__ import annotations

import functools
from datetime import datetime

from sqlalchemy import bindparam, func, or_
from sqlmodel import Session, col, select

from storage._common import naive_utc
from storage._investigations import _TABLE, ACTIVE, TERMINAL
from storage._prepared import Prepared, one_of
from storage.models import Delivery, DeliveryAttempt, Investigation, TraceEvent


def list_idle(session: Session, *, idle_since: datetime, limit: int = 200) -> list[str]:
    """Active investigations with no write (row update or trace event) since `idle_since`, oldest first."""
    cutoff = naive_utc(idle_since)
    recent = select(TraceEvent.investigation_id).where(
        col(TraceEvent.investigation_id) == Investigation.id, col(TraceEvent.at) >= cutoff)
    stmt = (
        select(Investigation.id)
        .where(col(Investigation.status).in_(ACTIVE), col(Investigation.updated_at) < cutoff,
               ~recent.exists())
        .order_by(col(Investigation.updated_at))
        .limit(limit)
    )
    return list(session.exec(stmt).all())


def list_stranded_deliveries(session: Session, *, idle_since: datetime, limit: int = 200) -> list[str]:
    """Pending deliveries of finished investigations untouched since `idle_since` (no attempt after it)."""
    cutoff = naive_utc(idle_since)
    last_attempt = (
        select(func.max(DeliveryAttempt.at))
        .where(col(DeliveryAttempt.delivery_id) == Delivery.id)
        .scalar_subquery()
    )
    stmt = (
        select(Delivery.id)
        .join(Investigation, col(Investigation.id) == col(Delivery.investigation_id))
        .where(col(Delivery.status) == "pending", col(Investigation.status).in_(TERMINAL),
               col(Delivery.created_at) < cutoff,
               func.coalesce(last_attempt, col(Delivery.created_at)) < cutoff)
        .order_by(col(Delivery.created_at))
        .limit(limit)
    )
    return list(session.exec(stmt).all())


def count_active(session: Session, *, tenant_id: str) -> int:
    """Queued or running investigations of a tenant (the ones held back by fairness included)."""
    stmt = select(func.count()).select_from(Investigation).where(
        col(Investigation.tenant_id) == tenant_id, col(Investigation.status).in_(ACTIVE))
    return int(session.exec(stmt).one())


_AMONG_BATCH = 32  # ids per statement: a tenant's running set is usually a few


@functools.cache
def _active_among(count: int) -> Prepared:
    """`SELECT id … WHERE id IN (count ids) AND status is active`, built once per count (the admission of
    every investigation asks it of its tenant's running set)."""
    ids = or_(*(_TABLE.c.id == bindparam(f"id{i}") for i in range(count)))
    return Prepared(select(_TABLE.c.id).where(ids, one_of(_TABLE.c.status, ACTIVE)))


def active_among(session: Session, *, ids: list[str]) -> set[str]:
    """Which of `ids` are still queued or running."""
    found: set[str] = set()
    for start in range(0, len(ids), _AMONG_BATCH):
        batch = ids[start : start + _AMONG_BATCH]
        rows = _active_among(len(batch)).rows(session, {f"id{i}": value for i, value in enumerate(batch)})
        found.update(str(row[0]) for row in rows)
    return found
