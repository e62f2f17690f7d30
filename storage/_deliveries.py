"""Deliveries (one per investigation and channel) and their logged attempts."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, bindparam, update
from sqlmodel import Session, col, select

from investigation.errors import NotFound, ValidationFailed
from storage._common import insert_ignore, row_values, write
from storage._prepared import Prepared, load
from storage.models import Delivery, DeliveryAttempt, utcnow

STATUSES = ("pending", "delivered", "dead")


def get_or_create_delivery(
    session: Session, *, investigation_id: str, tenant_id: str, channel: str, target: dict[str, Any],
    slot: str | None = None,
) -> Delivery:
    """The delivery of this investigation in `slot` (default: the channel type); created (pending) if
    there is none yet."""
    slot = slot or channel
    delivery = Delivery(
        investigation_id=investigation_id,
        tenant_id=tenant_id,
        channel=channel,
        slot=slot,
        target=dict(target),
    )
    stmt = select(Delivery).where(Delivery.investigation_id == investigation_id, Delivery.slot == slot)
    with write(session):
        insert_ignore(session, Delivery, [row_values(delivery)], ["investigation_id", "slot"])
        return session.exec(stmt.execution_options(populate_existing=True)).one()


def delivery_rows(investigation_id: str, tenant_id: str, callback: Any) -> list[Delivery]:
    """The Delivery rows of a callback: one object → one row (slot = its type); a list → one row per
    entry (slot = ``"{index}:{type}"``)."""
    if callback is None:
        return []
    entries = [(str(callback["type"]), callback)] if isinstance(callback, dict) else [
        (f"{i}:{entry['type']}", entry) for i, entry in enumerate(callback)]
    return [Delivery(investigation_id=investigation_id, tenant_id=tenant_id, channel=str(entry["type"]),
                     slot=slot, target={k: v for k, v in entry.items() if k != "type"})
            for slot, entry in entries]


def mark_started(session: Session, *, delivery_id: str, number: int) -> None:
    """Attempt `number` is about to send: a later attempt that finds `started > attempts` knows a worker
    died mid-attempt (its outcome unknown)."""
    stmt = (
        update(Delivery)
        .where(col(Delivery.id) == delivery_id, col(Delivery.started) < number)
        .values(started=number)
        .execution_options(synchronize_session=False)
    )
    with write(session):
        session.execute(stmt)


def list_deliveries_by_status(session: Session, *, tenant_id: str, status: str | None = None,
                              limit: int = 100) -> list[Delivery]:
    """The tenant's deliveries, newest first, optionally only those in `status`."""
    if status is not None and status not in STATUSES:
        raise ValidationFailed("status", f"must be one of {', '.join(STATUSES)}")
    stmt = select(Delivery).where(Delivery.tenant_id == tenant_id)
    if status is not None:
        stmt = stmt.where(Delivery.status == status)
    stmt = stmt.order_by(col(Delivery.created_at).desc(), col(Delivery.id)).limit(limit)
    return list(session.exec(stmt.execution_options(populate_existing=True)).all())


def get_delivery(session: Session, *, delivery_id: str, tenant_id: str | None = None) -> Delivery:
    """NotFound also when the delivery belongs to another tenant."""
    delivery = session.get(Delivery, delivery_id, populate_existing=True)
    if delivery is None or (tenant_id is not None and delivery.tenant_id != tenant_id):
        raise NotFound(f"delivery {delivery_id} not found")
    return delivery


# Read when an investigation finishes: the statement is built once, not per call.
_DELIVERIES: Table = Delivery.__table__  # type: ignore[attr-defined]  # SQLModel sets __table__, undeclared
_DELIVERIES_OF = Prepared(
    select(*_DELIVERIES.c)
    .where(_DELIVERIES.c.investigation_id == bindparam("investigation_id"))
    .order_by(_DELIVERIES.c.created_at, _DELIVERIES.c.slot)
)


def list_deliveries(session: Session, *, investigation_id: str) -> list[Delivery]:
    return load(session, Delivery, _DELIVERIES_OF, {"investigation_id": investigation_id})


def record_attempt(
    session: Session,
    *,
    delivery_id: str,
    number: int,
    status_code: int | None,
    error: str | None,
    duration_ms: float,
    detail: str | None = None,
    uncertain: bool = False,
) -> DeliveryAttempt:
    """Log attempt `number` once (a redelivered task gets the logged row back); keeps `attempts` current."""
    attempt = DeliveryAttempt(
        delivery_id=delivery_id, number=number, status_code=status_code, error=error, duration_ms=duration_ms,
        detail=detail, uncertain=uncertain,
    )
    with write(session):
        get_delivery(session, delivery_id=delivery_id)  # NotFound rather than a foreign-key error
        if insert_ignore(session, DeliveryAttempt, [row_values(attempt)], ["delivery_id", "number"]):
            bump = update(Delivery).where(col(Delivery.id) == delivery_id)
            session.execute(
                bump.where(col(Delivery.attempts) < number)
                .values(attempts=number)
                .execution_options(synchronize_session=False)
            )
            if error is not None:
                session.execute(bump.values(last_error=error).execution_options(synchronize_session=False))
        stmt = select(DeliveryAttempt).where(
            DeliveryAttempt.delivery_id == delivery_id, DeliveryAttempt.number == number
        )
        return session.exec(stmt).one()


def list_attempts(session: Session, *, delivery_id: str) -> list[DeliveryAttempt]:
    stmt = (
        select(DeliveryAttempt)
        .where(DeliveryAttempt.delivery_id == delivery_id)
        .order_by(col(DeliveryAttempt.number))
    )
    return list(session.exec(stmt).all())


def mark_delivery(session: Session, *, delivery_id: str, status: str, error: str | None = None) -> Delivery:
    """Set the delivery's status; a delivered delivery stays delivered whatever comes later."""
    if status not in STATUSES:
        raise ValidationFailed("status", f"must be one of {', '.join(STATUSES)}")
    values: dict[str, Any] = {"status": status}
    if error is not None:
        values["last_error"] = error
    if status == "delivered":
        values["delivered_at"] = utcnow()
    stmt = (
        update(Delivery)
        .where(col(Delivery.id) == delivery_id, col(Delivery.status) != "delivered")
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    with write(session):
        session.execute(stmt)
        return get_delivery(session, delivery_id=delivery_id)


def reset_delivery(session: Session, *, delivery_id: str) -> Delivery:
    """Dead → pending, for the redeliver endpoint. Attempts keep counting (the next one is attempts + 1).

    A pending delivery is returned unchanged; a delivered one is refused (it is never sent twice).
    """
    stmt = (
        update(Delivery)
        .where(col(Delivery.id) == delivery_id, col(Delivery.status) == "dead")
        .values(status="pending", last_error=None)
        .execution_options(synchronize_session=False)
    )
    with write(session):
        session.execute(stmt)
        delivery = get_delivery(session, delivery_id=delivery_id)
    if delivery.status == "delivered":
        raise ValidationFailed("status", "already delivered")
    return delivery
