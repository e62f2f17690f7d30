"""Knowledge sources synced on a schedule: the sources, the items each has indexed, FAQ candidates.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "source",
        sa.Column("id", sa.String(length=40), primary_key=True),
        sa.Column("tenant_id", sa.String(length=32), sa.ForeignKey("tenant.id"), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("type", sa.String(length=30), nullable=False),
        sa.Column("channel_id", sa.String(length=40), nullable=True),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("every_seconds", sa.Integer(), nullable=False),
        sa.Column("cursor", sa.JSON(), nullable=True),
        sa.Column("run_id", sa.String(length=40), nullable=True),
        sa.Column("run_full", sa.Boolean(), nullable=False),
        sa.Column("run_stats", sa.JSON(), nullable=False),
        sa.Column("last_started_at", sa.DateTime(timezone=False), nullable=True),
        sa.Column("last_finished_at", sa.DateTime(timezone=False), nullable=True),
        sa.Column("last_success_at", sa.DateTime(timezone=False), nullable=True),
        sa.Column("last_stats", sa.JSON(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("items", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=False), nullable=False),
        sa.UniqueConstraint("tenant_id", "name", name="uq_source_name"),
    )
    op.create_index("ix_source_tenant_id", "source", ["tenant_id"])
    op.create_table(
        "source_item",
        sa.Column("source_id", sa.String(length=40), sa.ForeignKey("source.id"), primary_key=True),
        sa.Column("external_id", sa.String(length=200), primary_key=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("visibility", sa.String(length=20), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=False), nullable=False),
    )
    op.create_table(
        "faq_candidate",
        sa.Column("id", sa.String(length=40), primary_key=True),
        sa.Column("tenant_id", sa.String(length=32), sa.ForeignKey("tenant.id"), nullable=False),
        sa.Column("source_id", sa.String(length=40), sa.ForeignKey("source.id"), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("ticket_ids", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=False), nullable=False),
        sa.Column("approved_at", sa.DateTime(timezone=False), nullable=True),
        sa.UniqueConstraint("source_id", "key", name="uq_faq_key"),
    )
    op.create_index("ix_faq_candidate_tenant_id", "faq_candidate", ["tenant_id"])
    op.create_index("ix_faq_candidate_source_id", "faq_candidate", ["source_id"])


def downgrade() -> None:
    op.drop_index("ix_faq_candidate_source_id", "faq_candidate")
    op.drop_index("ix_faq_candidate_tenant_id", "faq_candidate")
    op.drop_table("faq_candidate")
    op.drop_table("source_item")
    op.drop_index("ix_source_tenant_id", "source")
    op.drop_table("source")
