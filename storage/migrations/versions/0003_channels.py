"""Delivery channels: per-tenant channels with encrypted secrets, the tenant's outbound allowlist, one
delivery per callback slot (a callback may be a list), and the attempt bookkeeping exactly-once needs.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "channel",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("tenant_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("type", sa.String(length=20), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("secrets", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tenant_id", "name", name="uq_channel_name"),
    )
    op.create_index(op.f("ix_channel_tenant_id"), "channel", ["tenant_id"], unique=False)
    with op.batch_alter_table("tenant") as batch:
        batch.add_column(sa.Column("allowed_hosts", sa.JSON(), nullable=False, server_default="[]"))
    with op.batch_alter_table("delivery") as batch:
        batch.add_column(sa.Column("slot", sa.String(length=40), nullable=False, server_default=""))
        batch.add_column(sa.Column("started", sa.Integer(), nullable=False, server_default="0"))
    op.execute("UPDATE delivery SET slot = channel")
    with op.batch_alter_table("delivery") as batch:
        batch.drop_constraint("uq_delivery", type_="unique")
        batch.create_unique_constraint("uq_delivery_slot", ["investigation_id", "slot"])
    with op.batch_alter_table("delivery_attempt") as batch:
        batch.add_column(sa.Column("detail", sa.Text(), nullable=True))
        batch.add_column(sa.Column("uncertain", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("delivery_attempt") as batch:
        batch.drop_column("uncertain")
        batch.drop_column("detail")
    with op.batch_alter_table("delivery") as batch:
        batch.drop_constraint("uq_delivery_slot", type_="unique")
        batch.create_unique_constraint("uq_delivery", ["investigation_id", "channel"])
        batch.drop_column("started")
        batch.drop_column("slot")
    with op.batch_alter_table("tenant") as batch:
        batch.drop_column("allowed_hosts")
    op.drop_index(op.f("ix_channel_tenant_id"), table_name="channel")
    op.drop_table("channel")
