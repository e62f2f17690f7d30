"""A tenant's corpus version lives in the database, so an ingest with no Redis running still retires every
cached search result built before it.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "corpus_version",
        sa.Column("tenant_id", sa.String(length=32), sa.ForeignKey("tenant.id"), primary_key=True),
        sa.Column("version", sa.Integer(), nullable=False, server_default="0"),
    )


def downgrade() -> None:
    op.drop_table("corpus_version")
