"""Deliveries and attempts: one delivery per channel, attempts logged once, delivered is final."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from investigation.errors import NotFound, ValidationFailed
from storage.models import Delivery, Investigation, Tenant
from storage.repositories import (
    get_delivery,
    get_or_create_delivery,
    list_attempts,
    list_deliveries,
    mark_delivery,
    record_attempt,
    reset_delivery,
)


def _delivery(session: Session, inv: Investigation, channel: str = "webhook") -> Delivery:
    return get_or_create_delivery(
        session,
        investigation_id=inv.id,
        tenant_id=inv.tenant_id,
        channel=channel,
        target={"url": "https://x"},
    )


def test_one_delivery_per_investigation_and_channel(session: Session, investigation: Investigation) -> None:
    first = _delivery(session, investigation)
    again = get_or_create_delivery(
        session,
        investigation_id=investigation.id,
        tenant_id=investigation.tenant_id,
        channel="webhook",
        target={"url": "https://other"},
    )
    assert again.id == first.id and again.target == {"url": "https://x"}
    _delivery(session, investigation, "zendesk")
    assert sorted(d.channel for d in list_deliveries(session, investigation_id=investigation.id)) == [
        "webhook",
        "zendesk",
    ]


def test_another_tenants_delivery_is_not_found(
    session: Session, investigation: Investigation, other_tenant: Tenant
) -> None:
    delivery = _delivery(session, investigation)
    assert get_delivery(session, delivery_id=delivery.id, tenant_id=investigation.tenant_id).id == delivery.id
    with pytest.raises(NotFound):
        get_delivery(session, delivery_id=delivery.id, tenant_id=other_tenant.id)
    with pytest.raises(NotFound):
        get_delivery(session, delivery_id="msg_missing")


def test_attempts_are_logged_once_and_counted(session: Session, investigation: Investigation) -> None:
    delivery = _delivery(session, investigation)
    first = record_attempt(
        session, delivery_id=delivery.id, number=1, status_code=503, error="503", duration_ms=12.5
    )
    again = record_attempt(
        session, delivery_id=delivery.id, number=1, status_code=200, error=None, duration_ms=1
    )
    assert again.id == first.id and again.status_code == 503
    record_attempt(
        session, delivery_id=delivery.id, number=2, status_code=None, error="timeout", duration_ms=10_000
    )
    current = get_delivery(session, delivery_id=delivery.id)
    assert (current.attempts, current.last_error) == (2, "timeout")
    assert [(a.number, a.status_code, a.error) for a in list_attempts(session, delivery_id=delivery.id)] == [
        (1, 503, "503"),
        (2, None, "timeout"),
    ]
    with pytest.raises(NotFound):
        record_attempt(
            session, delivery_id="msg_missing", number=1, status_code=None, error=None, duration_ms=0
        )


def test_delivered_is_final(session: Session, investigation: Investigation) -> None:
    delivery = _delivery(session, investigation)
    done = mark_delivery(session, delivery_id=delivery.id, status="delivered")
    assert done.status == "delivered" and done.delivered_at is not None
    assert (
        mark_delivery(session, delivery_id=delivery.id, status="dead", error="late failure").status
        == "delivered"
    )
    with pytest.raises(ValidationFailed):
        reset_delivery(session, delivery_id=delivery.id)
    with pytest.raises(ValidationFailed):
        mark_delivery(session, delivery_id=delivery.id, status="lost")


def test_a_dead_delivery_can_be_reset_for_redelivery(session: Session, investigation: Investigation) -> None:
    delivery = _delivery(session, investigation)
    record_attempt(session, delivery_id=delivery.id, number=1, status_code=500, error="500", duration_ms=3)
    dead = mark_delivery(session, delivery_id=delivery.id, status="dead", error="gave up")
    assert (dead.status, dead.last_error) == ("dead", "gave up")
    reset = reset_delivery(session, delivery_id=delivery.id)
    assert (reset.status, reset.last_error, reset.attempts, reset.id) == ("pending", None, 1, delivery.id)
    assert reset_delivery(session, delivery_id=delivery.id).status == "pending"
