"""The repository functions: keyword-only, `session` first, raising the project errors.

Every write is its own committed transaction (so a redelivered task can call it again safely, and
SQLite's write lock is held briefly), unless the caller groups several in one `atomic(session)` block:
then they commit together, all or nothing (a step's state change with its trace events); reads never
commit. Idempotent writes use INSERT ... ON CONFLICT
DO NOTHING, which is race-safe on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from storage._channels import (
    channel_view,
    create_channel,
    get_channel,
    list_channels,
    remove_channel,
    update_allowed_hosts,
)
from storage._common import after_commit, atomic
from storage._corpus import bump_corpus_version, corpus_version
from storage._deliveries import (
    get_delivery,
    get_or_create_delivery,
    list_attempts,
    list_deliveries,
    list_deliveries_by_status,
    mark_delivery,
    mark_started,
    record_attempt,
    reset_delivery,
)
from storage._feedback import (
    count_rated,
    delete_feedback_before,
    gap_questions,
    get_outcome,
    list_feedback,
    list_rated,
    purge_feedback_text,
    rating_counts,
    record_feedback,
    record_outcome,
    tenant_feedback,
    ticket_investigation,
)
from storage._investigations import (
    create_investigation,
    finish_investigation,
    get_investigation,
    investigation_status,
    list_overdue,
    set_investigation,
    update_investigation,
)
from storage._listing import count_investigations_by_status, list_dead_deliveries, list_investigations
from storage._owners import delivery_owner, investigation_tenant
from storage._plans import PlannedHop, planned_hop, remember_plan
from storage._quality import QualityReport, quality_report
from storage._records import (
    NewEvent,
    add_event,
    add_events,
    add_evidence,
    get_hop,
    list_events,
    list_evidence,
    list_hops,
    mark_hop_reduced,
    new_event,
    save_hop,
    step_state,
)
from storage._recovery import active_among, count_active, list_idle, list_stranded_deliveries
from storage._tenants import (
    authenticate,
    create_tenant,
    get_tenant,
    get_tenant_by_name,
    list_tenants,
    open_webhook_secret,
    rotate_api_key,
)
from storage._tools import get_tool, list_tools, put_tool, remove_tool
from storage.views import event_view, investigation_view

__all__ = [
    "NewEvent",
    "PlannedHop",
    "QualityReport",
    "active_among",
    "add_event",
    "add_events",
    "add_evidence",
    "after_commit",
    "atomic",
    "authenticate",
    "bump_corpus_version",
    "channel_view",
    "corpus_version",
    "count_active",
    "count_investigations_by_status",
    "count_rated",
    "create_channel",
    "create_investigation",
    "create_tenant",
    "delete_feedback_before",
    "delivery_owner",
    "event_view",
    "finish_investigation",
    "gap_questions",
    "get_channel",
    "get_delivery",
    "get_hop",
    "get_investigation",
    "get_or_create_delivery",
    "get_outcome",
    "get_tenant",
    "get_tenant_by_name",
    "get_tool",
    "investigation_status",
    "investigation_tenant",
    "investigation_view",
    "list_attempts",
    "list_channels",
    "list_dead_deliveries",
    "list_deliveries",
    "list_deliveries_by_status",
    "list_events",
    "list_evidence",
    "list_feedback",
    "list_hops",
    "list_idle",
    "list_investigations",
    "list_overdue",
    "list_rated",
    "list_stranded_deliveries",
    "list_tenants",
    "list_tools",
    "mark_delivery",
    "mark_hop_reduced",
    "mark_started",
    "new_event",
    "open_webhook_secret",
    "planned_hop",
    "purge_feedback_text",
    "put_tool",
    "quality_report",
    "rating_counts",
    "record_attempt",
    "record_feedback",
    "record_outcome",
    "remember_plan",
    "remove_channel",
    "remove_tool",
    "reset_delivery",
    "rotate_api_key",
    "save_hop",
    "set_investigation",
    "step_state",
    "tenant_feedback",
    "ticket_investigation",
    "update_allowed_hosts",
    "update_investigation",
]
