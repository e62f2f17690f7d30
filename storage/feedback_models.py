"""Tables of what people made of an answer: ratings (every one kept, one current per rater) and the
outcome of a drafted helpdesk note (sent unchanged, edited, unused; reopened) (docs/feedback.md)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import Column, DateTime, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

# As in storage.models (which imports this module at its end, so nothing is imported back from it here).
NAIVE_UTC = DateTime(timezone=False)

RATINGS = ("helpful", "partly", "wrong")
FEEDBACK_SOURCES = ("link", "api", "zendesk_tag", "freshdesk_tag")
DRAFT_USES = ("unchanged", "edited", "unused")
COMMENT_MAX_CHARS = 2000
RATER_MAX_CHARS = 200


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Feedback(SQLModel, table=True):
    """One rating. A rater's newer rating of the same investigation clears `current` on the older ones: the
    last one counts, the history stays."""

    __tablename__ = "feedback"
    __table_args__ = (
        Index("ix_feedback_current", "investigation_id", "rater", "current"),
        Index("ix_feedback_tenant_created", "tenant_id", "created_at"),
        # the quality page counts a tenant's current ratings by investigation (an index-only scan)
        Index("ix_feedback_tenant_current", "tenant_id", "current", "investigation_id", "rating"),
    )

    id: str = Field(default_factory=lambda: "fb_" + uuid.uuid4().hex, primary_key=True, max_length=40)
    tenant_id: str = Field(foreign_key="tenant.id", max_length=32)
    investigation_id: str = Field(foreign_key="investigation.id", max_length=32)
    rater: str = Field(max_length=RATER_MAX_CHARS)
    rating: str = Field(max_length=10)  # RATINGS
    comment: str | None = Field(default=None, sa_column=Column(Text))
    correct_answer: str | None = Field(default=None, sa_column=Column(Text))
    source: str = Field(max_length=20)  # FEEDBACK_SOURCES
    current: bool = True
    created_at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)


class Outcome(SQLModel, table=True):
    """What became of the note an investigation drafted on a helpdesk ticket, as the helpdesk's hooks tell
    it: the agent's public reply compared with the draft (`edit_ratio` 0 = sent as drafted, 1 = nothing
    kept), and whether the ticket reopened within the window after it was solved."""

    __tablename__ = "outcome"
    __table_args__ = (
        UniqueConstraint("investigation_id", name="uq_outcome_investigation"),
        Index("ix_outcome_tenant_ticket", "tenant_id", "helpdesk", "ticket_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", max_length=32)
    investigation_id: str = Field(foreign_key="investigation.id", max_length=32)
    helpdesk: str = Field(max_length=20)  # zendesk | freshdesk
    ticket_id: str = Field(max_length=40)
    draft: str | None = Field(default=None, max_length=10)  # DRAFT_USES; None until the agent replies
    edit_ratio: float | None = None
    replied_at: datetime | None = Field(default=None, sa_type=NAIVE_UTC)
    solved_at: datetime | None = Field(default=None, sa_type=NAIVE_UTC)
    reopened: bool = False
    reopened_at: datetime | None = Field(default=None, sa_type=NAIVE_UTC)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)
