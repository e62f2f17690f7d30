"""Deliveries of an investigation, one delivery with its attempt log, and redelivery of a dead one."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from api.auth import TenantDep
from api.deps import RedelivererDep, ServicesDep
from api.schemas import DeliveryDetail, DeliveryList, DeliveryPage, DeliveryPublic
from investigation.errors import TransientError
from storage import repositories as repo
from storage.models import Delivery, DeliveryAttempt

log = logging.getLogger(__name__)

router = APIRouter(tags=["deliveries"])


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.replace(tzinfo=moment.tzinfo or UTC).isoformat()


def delivery_json(delivery: Delivery) -> dict[str, Any]:
    """The public view of a delivery (its target holds no secret: channel secrets stay in the channel)."""
    return {
        "id": delivery.id,
        "investigation_id": delivery.investigation_id,
        "channel": delivery.channel,
        "slot": delivery.slot,
        "target": delivery.target,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "last_error": delivery.last_error,
        "created_at": _iso(delivery.created_at),
        "delivered_at": _iso(delivery.delivered_at),
    }


def attempt_json(attempt: DeliveryAttempt) -> dict[str, Any]:
    return {"number": attempt.number, "at": _iso(attempt.at), "status_code": attempt.status_code,
            "error": attempt.error, "detail": attempt.detail, "uncertain": attempt.uncertain,
            "duration_ms": round(attempt.duration_ms, 1)}


@router.get("/v1/investigations/{investigation_id}/deliveries", response_model=DeliveryList)
def list_deliveries(investigation_id: str, tenant: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """Every delivery (one per callback) of an investigation, each with every attempt made (status code
    or SMTP reply code, the server's reply or the note id, latency)."""
    with services.session() as session:
        repo.get_investigation(session, investigation_id=investigation_id, tenant_id=tenant.id)
        found = repo.list_deliveries(session, investigation_id=investigation_id)
        return {
            "id": investigation_id,
            "deliveries": [
                {
                    **delivery_json(d),
                    "attempt_log": [attempt_json(a) for a in repo.list_attempts(session, delivery_id=d.id)],
                }
                for d in found
            ],
        }


@router.get("/v1/deliveries", response_model=DeliveryPage, responses={422: {"description": "Unknown status"}})
def list_tenant_deliveries(
    tenant: TenantDep,
    services: ServicesDep,
    status: Annotated[str | None, Query(description="pending | delivered | dead")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> dict[str, Any]:
    """The tenant's deliveries, newest first; ``?status=dead`` lists the dead ones with their last error."""
    with services.session() as session:
        found = repo.list_deliveries_by_status(session, tenant_id=tenant.id, status=status, limit=limit)
        return {"deliveries": [delivery_json(d) for d in found]}


@router.get("/v1/deliveries/{delivery_id}", response_model=DeliveryDetail)
def get_delivery(delivery_id: str, tenant: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """One delivery and every attempt made (status code, error, duration)."""
    with services.session() as session:
        delivery = repo.get_delivery(session, delivery_id=delivery_id, tenant_id=tenant.id)
        attempts = repo.list_attempts(session, delivery_id=delivery_id)
        return {**delivery_json(delivery), "attempt_log": [attempt_json(a) for a in attempts]}


@router.post("/v1/deliveries/{delivery_id}/redeliver", status_code=202, response_model=DeliveryPublic,
             responses={422: {"description": "Already delivered"},
                        503: {"description": "Could not enqueue (the delivery stays dead)"}})
def redeliver(delivery_id: str, tenant: TenantDep, services: ServicesDep,
              redeliverer: RedelivererDep) -> dict[str, Any]:
    """Dead → pending, then one more attempt is enqueued (same delivery id, so receivers deduplicate).

    A pending delivery is enqueued again as is (its lock keeps two attempts from running at once).
    """
    with services.session() as session:
        was_dead = repo.get_delivery(session, delivery_id=delivery_id, tenant_id=tenant.id).status == "dead"
        delivery = repo.reset_delivery(session, delivery_id=delivery_id)
        view = delivery_json(delivery)
    try:
        redeliverer(delivery_id)
    except Exception as exc:
        log.exception("enqueue of delivery %s failed", delivery_id)
        if was_dead:  # put it back as it was: nothing would ever pick a pending one up
            with services.session() as session:
                repo.mark_delivery(session, delivery_id=delivery_id, status="dead",
                                   error=f"redeliver enqueue failed: {type(exc).__name__}")
        raise TransientError("the queue is unavailable; the delivery was not redelivered") from exc
    return view
