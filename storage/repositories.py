"""The repository functions: keyword-only, `session` first, raising the project errors.

Every write is its own committed transaction (so a redelivered task can call it again safely, and
SQLite's write lock is held briefly); reads never commit. Idempotent writes use INSERT ... ON CONFLICT
DO NOTHING, which is race-safe on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from storage._deliveries import (
    get_delivery,
    get_or_create_delivery,
    list_attempts,
    list_deliveries,
    mark_delivery,
    record_attempt,
    reset_delivery,
)
from storage._investigations import (
    create_investigation,
    finish_investigation,
    get_investigation,
    list_overdue,
    update_investigation,
)
from storage._records import (
    add_event,
    add_evidence,
    get_hop,
    list_events,
    list_evidence,
    list_hops,
    mark_hop_reduced,
    save_hop,
)
from storage._recovery import list_idle, list_stranded_deliveries
from storage._tenants import authenticate, create_tenant, get_tenant, get_tenant_by_name, list_tenants
from storage._views import event_view, investigation_view

__all__ = [
    "add_event",
    "add_evidence",
    "authenticate",
    "create_investigation",
    "create_tenant",
    "event_view",
    "finish_investigation",
    "get_delivery",
    "get_hop",
    "get_investigation",
    "get_or_create_delivery",
    "get_tenant",
    "get_tenant_by_name",
    "investigation_view",
    "list_attempts",
    "list_deliveries",
    "list_events",
    "list_evidence",
    "list_hops",
    "list_idle",
    "list_overdue",
    "list_stranded_deliveries",
    "list_tenants",
    "mark_delivery",
    "mark_hop_reduced",
    "record_attempt",
    "reset_delivery",
    "save_hop",
    "update_investigation",
]
