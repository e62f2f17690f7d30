"""Tenant-declared HTTP tools, and the tool calls planned for each hop.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tool",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("tenant_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=63), nullable=False),
        sa.Column("declaration", sa.JSON(), nullable=False),
        sa.Column("secret", sa.Text(), nullable=False),
        sa.Column("revision", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tenant_id", "name", name="uq_tool_name"),
    )
    op.create_index(op.f("ix_tool_tenant_id"), "tool", ["tenant_id"], unique=False)
    with op.batch_alter_table("hop") as batch:
        batch.add_column(sa.Column("tools", sa.JSON(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("hop") as batch:
        batch.drop_column("tools")
    op.drop_index(op.f("ix_tool_tenant_id"), table_name="tool")
    op.drop_table("tool")
