"""Read-only listings for the operator pages: a tenant's recent investigations and its dead deliveries."""

from __future__ import annotations

from sqlmodel import Session, col, func, select

from storage.models import Delivery, Investigation


def list_investigations(session: Session, *, tenant_id: str, status: str | None = None,
                        limit: int = 50) -> list[Investigation]:
    """The tenant's newest investigations first, optionally of one status."""
    stmt = select(Investigation).where(Investigation.tenant_id == tenant_id)
    if status:
        stmt = stmt.where(Investigation.status == status)
    return list(session.exec(stmt.order_by(col(Investigation.created_at).desc()).limit(limit)).all())


def count_investigations_by_status(session: Session, *, tenant_id: str) -> dict[str, int]:
    stmt = (select(Investigation.status, func.count()).where(Investigation.tenant_id == tenant_id)
            .group_by(Investigation.status))
    return {str(status): int(count) for status, count in session.exec(stmt).all()}


def list_dead_deliveries(session: Session, *, tenant_id: str, limit: int = 50) -> list[Delivery]:
    """The tenant's dead deliveries, newest first (each can be redelivered)."""
    stmt = (select(Delivery).where(Delivery.tenant_id == tenant_id, Delivery.status == "dead")
            .order_by(col(Delivery.created_at).desc()).limit(limit))
    return list(session.exec(stmt).all())
