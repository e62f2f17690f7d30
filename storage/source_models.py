"""Tables of knowledge sources: a tenant's declared sources, the items each one has indexed (version and
content hash), and FAQ candidates grouped from solved tickets (docs/sources.md)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

# As in storage.models (which imports this module at its end, so nothing is imported back from it here).
NAIVE_UTC = DateTime(timezone=False)


def new_id() -> str:
    return uuid.uuid4().hex


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def empty_list() -> list[Any]:
    return []


def empty_dict() -> dict[str, Any]:
    return {}


class Source(SQLModel, table=True):
    """A tenant's source of documents, synced on a schedule. `cursor` is where the next incremental sync
    reads from; it only moves after a batch is in every engine. `run_id` names the sync in progress."""

    __tablename__ = "source"
    __table_args__ = (UniqueConstraint("tenant_id", "name", name="uq_source_name"),)

    id: str = Field(default_factory=lambda: "src_" + new_id()[:16], primary_key=True, max_length=40)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=32)
    name: str = Field(max_length=100)
    type: str = Field(max_length=30)
    # no foreign key: a removed channel is an error
    channel_id: str | None = Field(default=None, max_length=40)
    config: dict[str, Any] = Field(default_factory=empty_dict, sa_column=Column(JSON, nullable=False))
    every_seconds: int = 900
    cursor: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    run_id: str | None = Field(default=None, max_length=40)
    run_full: bool = False
    run_stats: dict[str, Any] = Field(default_factory=empty_dict, sa_column=Column(JSON, nullable=False))
    last_started_at: datetime | None = Field(default=None, sa_type=NAIVE_UTC)
    last_finished_at: datetime | None = Field(default=None, sa_type=NAIVE_UTC)
    last_success_at: datetime | None = Field(default=None, sa_type=NAIVE_UTC)
    last_stats: dict[str, Any] = Field(default_factory=empty_dict, sa_column=Column(JSON, nullable=False))
    last_error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    failures: int = 0
    items: int = 0
    created_at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)


class SourceItem(SQLModel, table=True):
    """One item a source has in the engines: its current version (part of its document id) and content hash.
    `summary` holds a solved ticket's redacted question and resolution (FAQ grouping); empty otherwise."""

    __tablename__ = "source_item"

    source_id: str = Field(foreign_key="source.id", primary_key=True, max_length=40)
    external_id: str = Field(primary_key=True, max_length=200)
    version: int = 1
    hash: str = Field(max_length=64)
    title: str = Field(default="", sa_column=Column(Text, nullable=False))
    url: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    visibility: str = Field(default="public", max_length=20)
    summary: dict[str, Any] = Field(default_factory=empty_dict, sa_column=Column(JSON, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)


class FaqCandidate(SQLModel, table=True):
    """A question that recurs in solved tickets, with the resolution agents gave; published as a public
    document only when an operator approves it."""

    __tablename__ = "faq_candidate"
    __table_args__ = (UniqueConstraint("source_id", "key", name="uq_faq_key"),)

    id: str = Field(default_factory=lambda: "faq_" + new_id()[:12], primary_key=True, max_length=40)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=32)
    source_id: str = Field(foreign_key="source.id", index=True, max_length=40)
    key: str = Field(max_length=64)
    question: str = Field(sa_column=Column(Text, nullable=False))
    answer: str = Field(sa_column=Column(Text, nullable=False))
    ticket_ids: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    status: str = Field(default="pending", max_length=20)
    created_at: datetime = Field(default_factory=utcnow, sa_type=NAIVE_UTC)
    approved_at: datetime | None = Field(default=None, sa_type=NAIVE_UTC)
