"""Ending an investigation that cannot go on (`failed`, with the reason), and finding the overdue ones."""

from __future__ import annotations

from datetime import UTC, datetime

from bootstrap import Services
from investigation.state import Status
from storage import repositories as repo
from tasks.next import Next, NextKind
from tasks.trace import pending_deliveries


def fail(services: Services, inv_id: str, *, reason: str, error: str) -> Next:
    """Move a stuck or broken investigation to `failed` (once) and hand it to delivery."""
    # The move and its trace event in one transaction (the event only when this call moved it), then the
    # deliveries to make, read in the same transaction.
    event = repo.new_event(investigation_id=inv_id, step_key=f"fail:{reason}", kind="stop",
                           data={"reason": reason, "error": error, "at": datetime.now(UTC).isoformat()})
    with services.session() as session, repo.atomic(session):
        repo.finish_investigation(session, investigation_id=inv_id, status=Status.FAILED.value,
                                  stop_reason=reason, error=error, event=event)
        return Next(NextKind.DELIVER, deliveries=pending_deliveries(session, inv_id))


def overdue(services: Services) -> list[str]:
    """Ids of investigations past their deadline and still not terminal (for the watchdog)."""
    with services.session() as session:
        return repo.list_overdue(session, now=datetime.now(UTC).replace(tzinfo=None))
