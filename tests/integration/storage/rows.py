"""The rows the storage tests write again and again, with the arguments that do not matter to them filled
in: a rating (by rater "r", from a link) and a Zendesk ticket's outcome."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Session

from storage import repositories as repo
from storage.feedback_models import Feedback, Outcome


def rate(session: Session, tenant_id: str, investigation_id: str, rating: str, *, rater: str = "r",
         source: str = "link", comment: str | None = None, now: datetime | None = None) -> Feedback:
    """The rater's rating of the investigation (its current one from now on)."""
    return repo.record_feedback(session, tenant_id=tenant_id, investigation_id=investigation_id, rater=rater,
                                rating=rating, source=source, comment=comment, now=now)


def outcome(
    session: Session, tenant_id: str, investigation_id: str, ticket_id: str, **fields: Any
) -> Outcome:
    """The investigation's outcome on Zendesk ticket `ticket_id` (draft, edit_ratio, reopened, ...)."""
    return repo.record_outcome(session, tenant_id=tenant_id, investigation_id=investigation_id,
                               helpdesk="zendesk", ticket_id=ticket_id, **fields)
