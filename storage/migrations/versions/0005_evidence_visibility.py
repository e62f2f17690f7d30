"""Evidence remembers its document's visibility (public | internal) and whether it was flagged as carrying
instructions for an AI, so citations can be marked internal and a customer answer can be checked.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("evidence") as batch:
        batch.add_column(
            sa.Column("visibility", sa.String(length=20), nullable=False, server_default="public")
        )
        batch.add_column(sa.Column("flagged", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("evidence") as batch:
        batch.drop_column("flagged")
        batch.drop_column("visibility")
