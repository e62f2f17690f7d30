"""Retention: a finished investigation's trace events and evidence text (tool results reach the database only
as both) are removed once older than its tenant's retention; its answer, citations and ratings stay.

Each call removes at most one batch in one short transaction, so a run never holds locks that intake waits
on."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Select, Table, delete, select, update
from sqlmodel import Session

from investigation.state import Status
from storage._common import write
from storage.models import EvidenceRecord, Investigation, TraceEvent

_INV: Table = Investigation.__table__  # type: ignore[attr-defined]  # SQLModel sets __table__, undeclared
_EVENTS: Table = TraceEvent.__table__  # type: ignore[attr-defined]
_EVIDENCE: Table = EvidenceRecord.__table__  # type: ignore[attr-defined]
TERMINAL = [s.value for s in Status if s.terminal]
# What an expired passage's text becomes: its title, source and grade stay, so citations still resolve.
REMOVED_TEXT = ""


def _expired(tenant_id: str, cutoff: datetime) -> Select[tuple[str]]:
    return select(_INV.c.id).where(_INV.c.tenant_id == tenant_id, _INV.c.created_at < cutoff,
                                   _INV.c.status.in_(TERMINAL))


def purge_events(session: Session, *, tenant_id: str, cutoff: datetime, batch: int) -> int:
    """Remove up to `batch` trace events of the tenant's finished investigations created before `cutoff`."""
    with write(session):
        ids = list(session.execute(select(_EVENTS.c.id).where(_EVENTS.c.investigation_id.in_(
            _expired(tenant_id, cutoff))).limit(batch)).scalars())
        if ids:
            session.execute(delete(_EVENTS).where(_EVENTS.c.id.in_(ids)))
    return len(ids)


def retention_days(limits: dict[str, object] | None, default: int) -> int:
    """A tenant's retention in days: its own (`limits["retention_days"]`) or the deployment's default."""
    value = (limits or {}).get("retention_days")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else default


def purge_evidence_text(session: Session, *, tenant_id: str, cutoff: datetime, batch: int) -> int:
    """Blank the text of up to `batch` evidence rows of the tenant's finished investigations before
    `cutoff`."""
    with write(session):
        ids = list(session.execute(select(_EVIDENCE.c.id).where(
            _EVIDENCE.c.investigation_id.in_(_expired(tenant_id, cutoff)),
            _EVIDENCE.c.text != REMOVED_TEXT).limit(batch)).scalars())
        if ids:
            session.execute(update(_EVIDENCE).where(_EVIDENCE.c.id.in_(ids)).values(text=REMOVED_TEXT))
    return len(ids)
