"""Sources, their indexed items and FAQ candidates: keyword-only repository functions (docs/sources.md).

The cursor and the items table move together with a batch's stats in one transaction (`record_batch`), and
only for the run that is in progress: a stale batch of an older run changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, update
from sqlmodel import Session, col, select

from investigation.errors import NotFound, ValidationFailed
from storage._common import insert_ignore, row_values, write
from storage.models import utcnow
from storage.source_models import FaqCandidate, Source, SourceItem

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
STAT_KEYS = ("added", "updated", "deleted", "unchanged", "skipped")


def create_source(session: Session, *, tenant_id: str, name: str, type: str, channel_id: str | None,
                  config: dict[str, Any], every_seconds: int) -> Source:
    """A new source; ValidationFailed("name") when the tenant already has one of that name."""
    if not _NAME.fullmatch(name or ""):
        raise ValidationFailed("name", "1-100 characters of letters, digits, '_', '.' or '-'")
    source = Source(tenant_id=tenant_id, name=name, type=type, channel_id=channel_id, config=config,
                    every_seconds=every_seconds)
    with write(session):
        if not insert_ignore(session, Source, [row_values(source)], ["tenant_id", "name"]):
            raise ValidationFailed("name", f"the tenant already has a source named {name!r}")
        return get_source(session, source_id=source.id)


def get_source(session: Session, *, source_id: str | None = None, tenant_id: str | None = None,
               name: str | None = None) -> Source:
    """By id (and, when given, only the tenant's), or by the tenant's source name. NotFound otherwise."""
    if source_id is not None:
        found = session.get(Source, source_id, populate_existing=True)
        if found is None or (tenant_id is not None and found.tenant_id != tenant_id):
            raise NotFound(f"source {source_id} not found")
        return found
    stmt = select(Source).where(Source.tenant_id == tenant_id, Source.name == name)
    hit = session.exec(stmt.execution_options(populate_existing=True)).first()
    if hit is None:
        raise NotFound(f"no source named {name!r} (see `sleuth sources list`)")
    return hit


def list_sources(session: Session, *, tenant_id: str | None = None) -> list[Source]:
    stmt = select(Source).order_by(col(Source.tenant_id), col(Source.name))
    if tenant_id is not None:
        stmt = stmt.where(Source.tenant_id == tenant_id)
    return list(session.exec(stmt.execution_options(populate_existing=True)).all())


def delete_source(session: Session, *, source_id: str) -> None:
    with write(session):
        session.execute(delete(FaqCandidate).where(col(FaqCandidate.source_id) == source_id))
        session.execute(delete(SourceItem).where(col(SourceItem.source_id) == source_id))
        session.execute(delete(Source).where(col(Source.id) == source_id))


def known_items(
    session: Session, *, source_id: str, external_ids: Sequence[str] | None = None
) -> list[SourceItem]:
    """The source's indexed items (only `external_ids` when given)."""
    stmt = select(SourceItem).where(SourceItem.source_id == source_id)
    if external_ids is not None:
        if not external_ids:
            return []
        stmt = stmt.where(col(SourceItem.external_id).in_(list(external_ids)))
    return list(session.exec(stmt.execution_options(populate_existing=True)).all())


def start_run(
    session: Session, *, source_id: str, run_id: str, full: bool, now: datetime | None = None
) -> Source:
    """Mark a sync as started (its counters zeroed)."""
    with write(session):
        session.execute(update(Source).where(col(Source.id) == source_id).values(
            run_id=run_id, run_full=full, run_stats=dict.fromkeys(STAT_KEYS, 0),
            last_started_at=now or utcnow()))
        return get_source(session, source_id=source_id)


def record_batch(session: Session, *, source_id: str, run_id: str, items: Sequence[dict[str, Any]],
                 forget: Sequence[str], cursor: dict[str, Any] | None, stats: dict[str, int]) -> bool:
    """After a batch is in every engine: its items' versions and hashes, the items it removed, the cursor
    after
    it and its counts, in one transaction. False (nothing written) when `run_id` is no longer the run."""
    with write(session):
        source = get_source(session, source_id=source_id)
        if source.run_id != run_id:
            return False
        ids = [str(row["external_id"]) for row in items] + list(forget)
        for start in range(0, len(ids), 500):
            session.execute(delete(SourceItem).where(col(SourceItem.source_id) == source_id,
                                                     col(SourceItem.external_id).in_(ids[start:start + 500])))
        if items:
            rows = [row_values(SourceItem(source_id=source_id, **row)) for row in items]
            insert_ignore(session, SourceItem, rows, ["source_id", "external_id"])
        total = {k: int(source.run_stats.get(k, 0)) + int(stats.get(k, 0)) for k in STAT_KEYS}
        count = session.execute(select(func.count()).select_from(SourceItem)
                                .where(col(SourceItem.source_id) == source_id)).scalar_one()
        session.execute(update(Source).where(col(Source.id) == source_id).values(
            cursor=cursor, run_stats=total, items=int(count)))
        return True


def finish_run(session: Session, *, source_id: str, run_id: str, error: str | None,
               now: datetime | None = None) -> bool:
    """End the run: its counters become the last sync's; an error is kept (and counted) for the operator."""
    with write(session):
        source = get_source(session, source_id=source_id)
        if source.run_id != run_id:
            return False
        when = now or utcnow()
        values: dict[str, Any] = {
            "run_id": None,
            "last_finished_at": when,
            "last_stats": dict(source.run_stats),
            "last_error": error,
        }
        if error is None:
            values["last_success_at"] = when
        else:
            values["failures"] = source.failures + 1
        session.execute(update(Source).where(col(Source.id) == source_id).values(**values))
        return True


def upsert_faq(session: Session, *, tenant_id: str, source_id: str, key: str, question: str, answer: str,
               ticket_ids: Sequence[str]) -> None:
    """A candidate from the latest grouping; an approved one keeps its published text."""
    with write(session):
        row = session.exec(select(FaqCandidate).where(FaqCandidate.source_id == source_id,
                                                      FaqCandidate.key == key)).first()
        if row is None:
            insert_ignore(session, FaqCandidate, [row_values(FaqCandidate(
                tenant_id=tenant_id, source_id=source_id, key=key, question=question, answer=answer,
                ticket_ids=list(ticket_ids)))], ["source_id", "key"])
        elif row.status == "pending":
            session.execute(update(FaqCandidate).where(col(FaqCandidate.id) == row.id).values(
                question=question, answer=answer, ticket_ids=list(ticket_ids)))


def list_faq(session: Session, *, tenant_id: str) -> list[FaqCandidate]:
    stmt = (select(FaqCandidate).where(FaqCandidate.tenant_id == tenant_id)
            .order_by(col(FaqCandidate.status).desc(), col(FaqCandidate.created_at)))
    return list(session.exec(stmt.execution_options(populate_existing=True)).all())


def approve_faq(session: Session, *, tenant_id: str, faq_id: str) -> FaqCandidate:
    with write(session):
        row = session.get(FaqCandidate, faq_id, populate_existing=True)
        if row is None or row.tenant_id != tenant_id:
            raise NotFound(f"no FAQ candidate {faq_id!r} (see `sleuth sources faq`)")
        session.execute(update(FaqCandidate).where(col(FaqCandidate.id) == faq_id).values(
            status="approved", approved_at=utcnow()))
        found = session.get(FaqCandidate, faq_id, populate_existing=True)
        assert found is not None
        return found
