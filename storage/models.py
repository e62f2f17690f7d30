"""SQLModel tables: tenants, investigations, hops, evidence, trace events, deliveries and attempts.

JSON columns hold small typed documents (pydantic `model_dump(mode="json")`); ids are uuid4 hex strings.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from investigation.state import HopState


def new_id() -> str:
    return uuid.uuid4().hex


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def empty_list() -> list[Any]:
    """A list column's default. Not `list`: building a table model computes each default anew, and pydantic
    then inspects the factory's signature every time, which is slow for the builtin `list` and cheap for a
    plain function."""
    return []


# Timestamps are naive UTC in every table. The column type is pinned because newer SQLModel releases map
# a bare `datetime` to a type that rejects naive values.
NAIVE_UTC = DateTime(timezone=False)


class Tenant(SQLModel, table=True):
    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    name: str = Field(index=True, unique=True, max_length=100)
    api_key_hash: str = Field(index=True, unique=True, max_length=64)  # sha256 hex of the key
    api_key_prefix: str = Field(max_length=16)  # first chars, to recognise a key in logs
    # "whsec_<base64>" (Standard Webhooks style), encrypted like channel secrets (storage.secrets)
    webhook_secret: str = Field(sa_column=Column(Text, nullable=False))
    limits: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    # Hosts (names or addresses) this tenant's deliveries may reach although private/loopback.
    allowed_hosts: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)


class Channel(SQLModel, table=True):
    """A tenant's named delivery channel (smtp, zendesk, freshdesk). Secrets are encrypted (Fernet)."""

    __table_args__ = (UniqueConstraint("tenant_id", "name", name="uq_channel_name"),)

    id: str = Field(default_factory=lambda: "ch_" + new_id(), primary_key=True, max_length=40)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=32)
    name: str = Field(max_length=100)
    type: str = Field(max_length=20)
    config: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    secrets: str = Field(default="", sa_column=Column(Text, nullable=False))  # encrypted JSON object
    created_at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)


class Investigation(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("tenant_id", "idempotency_key", name="uq_investigation_idem"),
                      # the quality page and the feedback export read a tenant's investigations by time; the
                      # columns the page groups and joins by ride along, so PostgreSQL reads the index only
                      Index("ix_investigation_tenant_created", "tenant_id", "created_at", "status", "route",
                            "audience", "finished_at", "id"))

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=32)
    question: str = Field(sa_column=Column(Text, nullable=False))
    mode: str = Field(default="agentic", max_length=20)
    audience: str = Field(default="agent", max_length=20)  # agent | customer
    principals: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    context: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    status: str = Field(default="queued", index=True, max_length=20)
    route: str | None = Field(default=None, max_length=20)
    route_reason: str | None = Field(default=None, sa_column=Column(Text))
    plan: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))  # Plan.model_dump()
    subqueries: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    callback: dict[str, Any] | list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSON))
    budget: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    idempotency_key: str | None = Field(default=None, max_length=200)
    answer: str | None = Field(default=None, sa_column=Column(Text))
    citations: list[dict[str, Any]] = Field(
        default_factory=empty_list, sa_column=Column(JSON, nullable=False)
    )
    final_evidence_ids: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    caveat: str | None = Field(default=None, sa_column=Column(Text))
    stop_reason: str | None = Field(default=None, max_length=40)
    error: str | None = Field(default=None, sa_column=Column(Text))
    hops: int = 0
    retrieval_calls: int = 0
    evidence_tokens: int = 0
    llm_input_tokens: int = 0
    llm_output_tokens: int = 0
    created_at: datetime = Field(default_factory=utcnow, index=True, sa_type=NAIVE_UTC)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)
    deadline_at: datetime = Field(default_factory=utcnow, index=True, sa_type=NAIVE_UTC)
    finished_at: datetime | None = Field(default=None, sa_type=NAIVE_UTC)


class Hop(SQLModel, table=True):
    """One hop: its sub-queries (planned) and, once reduced, the loop decision taken after it."""

    __table_args__ = (UniqueConstraint("investigation_id", "number", name="uq_hop"),)

    id: int | None = Field(default=None, primary_key=True)
    investigation_id: str = Field(foreign_key="investigation.id", index=True, max_length=32)
    number: int
    queries: list[dict[str, Any]] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    engines: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    tools: list[dict[str, Any]] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    state: str = Field(default=HopState.PLANNED.value, max_length=20)  # investigation.state.HopState
    decision: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    created_at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)


class EvidenceRecord(SQLModel, table=True):
    __tablename__ = "evidence"
    __table_args__ = (UniqueConstraint("investigation_id", "evidence_id", name="uq_evidence"),)

    id: int | None = Field(default=None, primary_key=True)
    investigation_id: str = Field(foreign_key="investigation.id", index=True, max_length=32)
    evidence_id: str = Field(max_length=40)
    chunk_id: str = Field(max_length=200)
    source_id: str = Field(max_length=300)
    title: str = Field(sa_column=Column(Text, nullable=False))
    text: str = Field(sa_column=Column(Text, nullable=False))
    url: str | None = Field(default=None, sa_column=Column(Text))
    score: float = 0.0
    grade: str = Field(max_length=20)
    hop: int
    query: str = Field(sa_column=Column(Text, nullable=False))
    visibility: str = Field(default="public", max_length=20)  # investigation.state.Visibility
    flagged: bool = False


class TraceEvent(SQLModel, table=True):
    """One decision, in order. `step_key` makes writing it idempotent when a task is redelivered."""

    __tablename__ = "trace_event"
    __table_args__ = (UniqueConstraint("investigation_id", "step_key", name="uq_trace_step"),
                      # the quality page counts a tenant's tool calls and refusals by kind
                      Index("ix_trace_event_kind", "kind", "investigation_id"))

    id: int | None = Field(default=None, primary_key=True)
    investigation_id: str = Field(foreign_key="investigation.id", index=True, max_length=32)
    step_key: str = Field(max_length=200)
    kind: str = Field(max_length=40)
    hop: int = 0
    data: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)


class Delivery(SQLModel, table=True):
    """Exactly one per (investigation, slot). `id` doubles as the webhook-id / idempotency key / note ref.

    `slot` names the callback inside its investigation: the channel type for a single callback, and
    ``"{index}:{type}"`` for each entry of a callback list. `started` is the number of the last attempt
    that began sending: above `attempts`, a worker died mid-attempt and its outcome is unknown.
    """

    __table_args__ = (UniqueConstraint("investigation_id", "slot", name="uq_delivery_slot"),
                      # the quality page counts a tenant's deliveries of a period by channel and status
                      Index("ix_delivery_tenant_created", "tenant_id", "created_at", "channel", "status"))

    id: str = Field(default_factory=lambda: "msg_" + new_id(), primary_key=True, max_length=40)
    investigation_id: str = Field(foreign_key="investigation.id", index=True, max_length=32)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=32)
    channel: str = Field(max_length=20)
    slot: str = Field(max_length=40)
    target: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    status: str = Field(default="pending", index=True, max_length=20)  # pending|delivered|dead
    attempts: int = 0
    started: int = 0
    last_error: str | None = Field(default=None, sa_column=Column(Text))
    created_at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)
    delivered_at: datetime | None = Field(default=None, sa_type=NAIVE_UTC)


class DeliveryAttempt(SQLModel, table=True):
    __tablename__ = "delivery_attempt"
    __table_args__ = (UniqueConstraint("delivery_id", "number", name="uq_delivery_attempt"),)

    id: int | None = Field(default=None, primary_key=True)
    delivery_id: str = Field(foreign_key="delivery.id", index=True, max_length=40)
    number: int
    at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)
    status_code: int | None = None
    error: str | None = Field(default=None, sa_column=Column(Text))
    detail: str | None = Field(default=None, sa_column=Column(Text))  # e.g. the SMTP reply, the note id
    uncertain: bool = False  # the request may have reached the receiver although no answer came back
    duration_ms: float = 0.0


class ToolRecord(SQLModel, table=True):
    """A tenant's declared HTTP tool: the validated declaration and its secret, encrypted at rest."""

    __tablename__ = "tool"
    __table_args__ = (UniqueConstraint("tenant_id", "name", name="uq_tool_name"),)

    id: str = Field(default_factory=lambda: "tool_" + new_id(), primary_key=True, max_length=40)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=32)
    name: str = Field(max_length=63)
    declaration: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    secret: str = Field(default="", sa_column=Column(Text, nullable=False))  # encrypted; "" = none
    revision: str = Field(max_length=64)  # changes whenever the declaration or secret changes (cache keys)
    created_at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)


class CorpusVersion(SQLModel, table=True):
    """A tenant's corpus version: raised by every ingest and document removal (app/corpus.py). A cached search
    result records the version it was built under and is never served under another
    (storage/redis_state.py)."""

    __tablename__ = "corpus_version"

    tenant_id: str = Field(foreign_key="tenant.id", primary_key=True, max_length=32)
    version: int = 0


# Knowledge sources' and feedback tables live in their own modules; imported here so every table is on
# SQLModel.metadata.
from storage.feedback_models import Feedback, Outcome  # noqa: F401
from storage.source_models import FaqCandidate, Source, SourceItem  # noqa: F401
