"""Investigations carry who reads the answer (audience), the asker's ACL principals and context.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("investigation") as batch:
        batch.add_column(sa.Column("audience", sa.String(length=20), nullable=False, server_default="agent"))
        batch.add_column(sa.Column("principals", sa.JSON(), nullable=False, server_default="[]"))
        batch.add_column(sa.Column("context", sa.JSON(), nullable=False, server_default="{}"))


def downgrade() -> None:
    with op.batch_alter_table("investigation") as batch:
        batch.drop_column("context")
        batch.drop_column("principals")
        batch.drop_column("audience")
