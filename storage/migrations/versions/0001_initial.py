"""Initial schema: tenants, investigations, hops, evidence, trace events, deliveries, attempts.

Portable to SQLite and PostgreSQL; must match storage/models.py exactly (a test checks for drift).

Revision ID: 0001
Revises:
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tenant",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("api_key_hash", sa.String(length=64), nullable=False),
        sa.Column("api_key_prefix", sa.String(length=16), nullable=False),
        sa.Column("webhook_secret", sa.String(length=100), nullable=False),
        sa.Column("limits", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_tenant_api_key_hash"), "tenant", ["api_key_hash"], unique=True)
    op.create_index(op.f("ix_tenant_name"), "tenant", ["name"], unique=True)

    op.create_table(
        "investigation",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("tenant_id", sa.String(length=32), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("mode", sa.String(length=20), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("route", sa.String(length=20), nullable=True),
        sa.Column("route_reason", sa.Text(), nullable=True),
        sa.Column("plan", sa.JSON(), nullable=True),
        sa.Column("subqueries", sa.JSON(), nullable=False),
        sa.Column("callback", sa.JSON(), nullable=True),
        sa.Column("budget", sa.JSON(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=True),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("citations", sa.JSON(), nullable=False),
        sa.Column("final_evidence_ids", sa.JSON(), nullable=False),
        sa.Column("caveat", sa.Text(), nullable=True),
        sa.Column("stop_reason", sa.String(length=40), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("hops", sa.Integer(), nullable=False),
        sa.Column("retrieval_calls", sa.Integer(), nullable=False),
        sa.Column("evidence_tokens", sa.Integer(), nullable=False),
        sa.Column("llm_input_tokens", sa.Integer(), nullable=False),
        sa.Column("llm_output_tokens", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("deadline_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["tenant_id"],
            ["tenant.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tenant_id", "idempotency_key", name="uq_investigation_idem"),
    )
    op.create_index(op.f("ix_investigation_created_at"), "investigation", ["created_at"], unique=False)
    op.create_index(op.f("ix_investigation_deadline_at"), "investigation", ["deadline_at"], unique=False)
    op.create_index(op.f("ix_investigation_status"), "investigation", ["status"], unique=False)
    op.create_index(op.f("ix_investigation_tenant_id"), "investigation", ["tenant_id"], unique=False)

    op.create_table(
        "delivery",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("investigation_id", sa.String(length=32), nullable=False),
        sa.Column("tenant_id", sa.String(length=32), nullable=False),
        sa.Column("channel", sa.String(length=20), nullable=False),
        sa.Column("target", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("delivered_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["investigation_id"],
            ["investigation.id"],
        ),
        sa.ForeignKeyConstraint(
            ["tenant_id"],
            ["tenant.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("investigation_id", "channel", name="uq_delivery"),
    )
    op.create_index(op.f("ix_delivery_investigation_id"), "delivery", ["investigation_id"], unique=False)
    op.create_index(op.f("ix_delivery_status"), "delivery", ["status"], unique=False)
    op.create_index(op.f("ix_delivery_tenant_id"), "delivery", ["tenant_id"], unique=False)

    op.create_table(
        "evidence",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("investigation_id", sa.String(length=32), nullable=False),
        sa.Column("evidence_id", sa.String(length=40), nullable=False),
        sa.Column("chunk_id", sa.String(length=200), nullable=False),
        sa.Column("source_id", sa.String(length=300), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("grade", sa.String(length=20), nullable=False),
        sa.Column("hop", sa.Integer(), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["investigation_id"],
            ["investigation.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("investigation_id", "evidence_id", name="uq_evidence"),
    )
    op.create_index(op.f("ix_evidence_investigation_id"), "evidence", ["investigation_id"], unique=False)

    op.create_table(
        "hop",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("investigation_id", sa.String(length=32), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("queries", sa.JSON(), nullable=False),
        sa.Column("engines", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("decision", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["investigation_id"],
            ["investigation.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("investigation_id", "number", name="uq_hop"),
    )
    op.create_index(op.f("ix_hop_investigation_id"), "hop", ["investigation_id"], unique=False)

    op.create_table(
        "trace_event",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("investigation_id", sa.String(length=32), nullable=False),
        sa.Column("step_key", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("hop", sa.Integer(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["investigation_id"],
            ["investigation.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("investigation_id", "step_key", name="uq_trace_step"),
    )
    op.create_index(
        op.f("ix_trace_event_investigation_id"), "trace_event", ["investigation_id"], unique=False
    )

    op.create_table(
        "delivery_attempt",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("delivery_id", sa.String(length=40), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["delivery.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("delivery_id", "number", name="uq_delivery_attempt"),
    )
    op.create_index(
        op.f("ix_delivery_attempt_delivery_id"), "delivery_attempt", ["delivery_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_delivery_attempt_delivery_id"), table_name="delivery_attempt")

    op.drop_table("delivery_attempt")
    op.drop_index(op.f("ix_trace_event_investigation_id"), table_name="trace_event")

    op.drop_table("trace_event")
    op.drop_index(op.f("ix_hop_investigation_id"), table_name="hop")

    op.drop_table("hop")
    op.drop_index(op.f("ix_evidence_investigation_id"), table_name="evidence")

    op.drop_table("evidence")
    op.drop_index(op.f("ix_delivery_tenant_id"), table_name="delivery")
    op.drop_index(op.f("ix_delivery_status"), table_name="delivery")
    op.drop_index(op.f("ix_delivery_investigation_id"), table_name="delivery")

    op.drop_table("delivery")
    op.drop_index(op.f("ix_investigation_tenant_id"), table_name="investigation")
    op.drop_index(op.f("ix_investigation_status"), table_name="investigation")
    op.drop_index(op.f("ix_investigation_deadline_at"), table_name="investigation")
    op.drop_index(op.f("ix_investigation_created_at"), table_name="investigation")

    op.drop_table("investigation")
    op.drop_index(op.f("ix_tenant_name"), table_name="tenant")
    op.drop_index(op.f("ix_tenant_api_key_hash"), table_name="tenant")

    op.drop_table("tenant")
