"""Ratings of answers (every one kept, one current per rater) and the outcomes of drafted helpdesk notes; the
indexes the quality page reads by (a tenant's investigations by time, trace events by kind).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "feedback",
        sa.Column("id", sa.String(length=40), primary_key=True),
        sa.Column("tenant_id", sa.String(length=32), sa.ForeignKey("tenant.id"), nullable=False),
        sa.Column(
            "investigation_id", sa.String(length=32), sa.ForeignKey("investigation.id"), nullable=False
        ),
        sa.Column("rater", sa.String(length=200), nullable=False),
        sa.Column("rating", sa.String(length=10), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("correct_answer", sa.Text(), nullable=True),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("current", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=False), nullable=False),
    )
    op.create_index("ix_feedback_current", "feedback", ["investigation_id", "rater", "current"])
    op.create_index("ix_feedback_tenant_created", "feedback", ["tenant_id", "created_at"])
    op.create_table(
        "outcome",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("tenant_id", sa.String(length=32), sa.ForeignKey("tenant.id"), nullable=False),
        sa.Column(
            "investigation_id", sa.String(length=32), sa.ForeignKey("investigation.id"), nullable=False
        ),
        sa.Column("helpdesk", sa.String(length=20), nullable=False),
        sa.Column("ticket_id", sa.String(length=40), nullable=False),
        sa.Column("draft", sa.String(length=10), nullable=True),
        sa.Column("edit_ratio", sa.Float(), nullable=True),
        sa.Column("replied_at", sa.DateTime(timezone=False), nullable=True),
        sa.Column("solved_at", sa.DateTime(timezone=False), nullable=True),
        sa.Column("reopened", sa.Boolean(), nullable=False),
        sa.Column("reopened_at", sa.DateTime(timezone=False), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=False), nullable=False),
        sa.UniqueConstraint("investigation_id", name="uq_outcome_investigation"),
    )
    op.create_index("ix_outcome_tenant_ticket", "outcome", ["tenant_id", "helpdesk", "ticket_id"])
    # The quality page reads a tenant's investigations by creation time.
    op.create_index("ix_investigation_tenant_created", "investigation", ["tenant_id", "created_at"])
    op.create_index("ix_trace_event_kind", "trace_event", ["kind", "investigation_id"])


def downgrade() -> None:
    op.drop_index("ix_trace_event_kind", table_name="trace_event")
    op.drop_index("ix_investigation_tenant_created", table_name="investigation")
    op.drop_index("ix_outcome_tenant_ticket", table_name="outcome")
    op.drop_table("outcome")
    op.drop_index("ix_feedback_tenant_created", table_name="feedback")
    op.drop_index("ix_feedback_current", table_name="feedback")
    op.drop_table("feedback")
