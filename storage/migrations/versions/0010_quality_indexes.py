"""Covering indexes for the quality page: a tenant's investigations by creation time carry the columns the
page groups and joins by (status, route, audience, finished_at, id), a tenant's current ratings carry their
investigation and rating, and deliveries are read by tenant and time, so PostgreSQL answers from the indexes
(index-only scans) instead of reading the wide rows.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

QUALITY_COLUMNS = ["tenant_id", "created_at", "status", "route", "audience", "finished_at", "id"]


def upgrade() -> None:
    op.drop_index("ix_investigation_tenant_created", table_name="investigation")
    op.create_index("ix_investigation_tenant_created", "investigation", QUALITY_COLUMNS)
    op.create_index(
        "ix_delivery_tenant_created", "delivery", ["tenant_id", "created_at", "channel", "status"]
    )
    op.create_index(
        "ix_feedback_tenant_current", "feedback", ["tenant_id", "current", "investigation_id", "rating"]
    )


def downgrade() -> None:
    op.drop_index("ix_feedback_tenant_current", table_name="feedback")
    op.drop_index("ix_delivery_tenant_created", table_name="delivery")
    op.drop_index("ix_investigation_tenant_created", table_name="investigation")
    op.create_index("ix_investigation_tenant_created", "investigation", ["tenant_id", "created_at"])
