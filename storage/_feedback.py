"""Ratings and draft outcomes: record them (one current rating per rater, the history kept), read them back
per investigation, per tenant and per period, and delete them with the tenant's retention."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import or_
from sqlmodel import Session, col, delete, func, select, update

from investigation.errors import NotFound, ValidationFailed
from storage._common import write
from storage.feedback_models import (
    COMMENT_MAX_CHARS,
    DRAFT_USES,
    FEEDBACK_SOURCES,
    RATER_MAX_CHARS,
    RATINGS,
    Feedback,
    Outcome,
    utcnow,
)
from storage.models import Investigation


def clean_text(value: str | None, field: str, limit: int = COMMENT_MAX_CHARS) -> str | None:
    """Plain text only: control characters (but newlines and tabs) dropped, trimmed, at most `limit` chars;
    None for nothing. Markup stays as typed and is escaped wherever it is shown."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationFailed(field, "must be a string")
    text = "".join(c for c in value.replace("\r\n", "\n")
                   if c in "\n\t" or unicodedata.category(c)[0] != "C").strip()
    if len(text) > limit:
        raise ValidationFailed(field, f"at most {limit} characters")
    return text or None


def _check(rating: str, source: str, rater: str) -> str:
    if rating not in RATINGS:
        raise ValidationFailed("rating", f"must be one of {', '.join(RATINGS)}")
    if source not in FEEDBACK_SOURCES:
        raise ValidationFailed("source", f"must be one of {', '.join(FEEDBACK_SOURCES)}")
    name = clean_text(rater, "rater", RATER_MAX_CHARS)
    if not name:
        raise ValidationFailed("rater", "must not be empty")
    return name


def record_feedback(session: Session, *, tenant_id: str, investigation_id: str, rater: str, rating: str,
                    source: str, comment: str | None = None, correct_answer: str | None = None,
                    now: datetime | None = None) -> Feedback:
    """Record a rating of the tenant's investigation: it becomes the rater's current one (the older ones
    stay, no longer current). NotFound when the investigation is not the tenant's."""
    name = _check(rating, source, rater)
    row = Feedback(tenant_id=tenant_id, investigation_id=investigation_id, rater=name, rating=rating,
                   source=source, comment=clean_text(comment, "comment"),
                   correct_answer=clean_text(correct_answer, "correct_answer"), created_at=now or utcnow())
    with write(session):
        # Locks the investigation's row on PostgreSQL, so two presses of one rater leave one current rating
        # (SQLite's write transaction already runs them one after the other).
        owner = session.exec(select(Investigation.tenant_id).where(Investigation.id == investigation_id)
                             .with_for_update()).first()
        if owner != tenant_id:
            raise NotFound(f"investigation {investigation_id} not found")
        session.exec(update(Feedback).where(col(Feedback.investigation_id) == investigation_id,
                                            col(Feedback.rater) == name, col(Feedback.current).is_(True))
                     .values(current=False))
        session.add(row)
        session.flush()
        session.refresh(row)
        session.expunge(row)
    return row


def list_feedback(session: Session, *, investigation_id: str, current_only: bool = True) -> list[Feedback]:
    """An investigation's ratings, oldest first: the current one per rater, or every one ever given."""
    stmt = select(Feedback).where(Feedback.investigation_id == investigation_id)
    if current_only:
        stmt = stmt.where(col(Feedback.current).is_(True))
    return list(session.exec(stmt.order_by(col(Feedback.created_at), col(Feedback.id))).all())


def rating_counts(session: Session, *, investigation_ids: Iterable[str]) -> dict[str, dict[str, int]]:
    """Current ratings per investigation: {id: {"helpful": 2, "wrong": 1}}."""
    ids = list(investigation_ids)
    if not ids:
        return {}
    stmt = (select(Feedback.investigation_id, Feedback.rating).where(col(Feedback.investigation_id).in_(ids),
                                                                     col(Feedback.current).is_(True)))
    counts: dict[str, dict[str, int]] = {}
    for inv_id, rating in session.exec(stmt).all():
        per = counts.setdefault(inv_id, {})
        per[rating] = per.get(rating, 0) + 1
    return counts


def tenant_feedback(session: Session, *, tenant_id: str, since: datetime,
                    ratings: Iterable[str] = RATINGS) -> list[Feedback]:
    """The tenant's current ratings given since `since`, oldest first."""
    stmt = (select(Feedback).where(Feedback.tenant_id == tenant_id, col(Feedback.created_at) >= since,
                                   col(Feedback.current).is_(True), col(Feedback.rating).in_(list(ratings)))
            .order_by(col(Feedback.created_at)))
    return list(session.exec(stmt).all())


def get_outcome(session: Session, *, investigation_id: str) -> Outcome | None:
    return session.exec(select(Outcome).where(Outcome.investigation_id == investigation_id)).first()


def record_outcome(session: Session, *, tenant_id: str, investigation_id: str, helpdesk: str, ticket_id: str,
                   **fields: Any) -> Outcome:
    """Create or update the investigation's outcome with `fields` (draft, edit_ratio, replied_at, solved_at,
    reopened, reopened_at)."""
    draft = fields.get("draft")
    if draft is not None and draft not in DRAFT_USES:
        raise ValidationFailed("draft", f"must be one of {', '.join(DRAFT_USES)}")
    with write(session):
        row = session.exec(select(Outcome).where(Outcome.investigation_id == investigation_id)
                           .with_for_update()).first()
        if row is None:
            row = Outcome(tenant_id=tenant_id, investigation_id=investigation_id, helpdesk=helpdesk,
                          ticket_id=str(ticket_id))
        for name, value in fields.items():
            setattr(row, name, value)
        row.updated_at = utcnow()
        session.add(row)
        session.flush()
        session.refresh(row)
        session.expunge(row)
    return row


def ticket_investigation(session: Session, *, tenant_id: str, key_prefix: str) -> Investigation | None:
    """The newest of the tenant's investigations whose idempotency key starts with `key_prefix` (a helpdesk
    hook keys its investigations by channel and ticket: `app.hooks`)."""
    stmt = (
        select(Investigation)
        .where(
            Investigation.tenant_id == tenant_id,
            col(Investigation.idempotency_key).startswith(key_prefix, autoescape=True),
        )
        .order_by(col(Investigation.created_at).desc())
        .limit(1)
    )
    return session.exec(stmt).first()


def delete_feedback_before(session: Session, *, tenant_id: str, before: datetime) -> int:
    """The tenant's ratings (comments, corrections) and outcomes older than `before` removed; how many."""
    with write(session):
        gone = session.exec(delete(Feedback).where(col(Feedback.tenant_id) == tenant_id,
                                                   col(Feedback.created_at) < before))
        old = session.exec(delete(Outcome).where(col(Outcome.tenant_id) == tenant_id,
                                                 col(Outcome.updated_at) < before))
    return int(gone.rowcount or 0) + int(old.rowcount or 0)


def purge_feedback_text(session: Session, *, tenant_id: str, cutoff: datetime, batch: int) -> int:
    """Blank the comment and correction of up to `batch` of the tenant's ratings given before `cutoff` (the
    retention job's batch, like `storage.retention`): free text is personal data; the rating itself stays, so
    the quality page's shares do not change when the text goes."""
    with write(session):
        ids = list(
            session.exec(
                select(Feedback.id)
                .where(
                    col(Feedback.tenant_id) == tenant_id,
                    col(Feedback.created_at) < cutoff,
                    or_(col(Feedback.comment).is_not(None), col(Feedback.correct_answer).is_not(None)),
                )
                .limit(batch)
            ).all()
        )
        if ids:
            session.exec(
                update(Feedback).where(col(Feedback.id).in_(ids)).values(comment=None, correct_answer=None)
            )
    return len(ids)


GAP_RATINGS = ("wrong", "partly")


def gap_questions(session: Session, *, tenant_id: str, since: datetime, until: datetime,
                  limit: int | None = None) -> list[tuple[str, str, datetime, str]]:
    """The tenant's questions asked in [since, until) that were refused or are currently rated wrong or
    partly, as (id, question, created_at, reason), oldest first; with `limit`, the newest `limit` of them.
    A question both refused and rated counts once, with its rating as the reason (wrong before partly)."""
    inv = Investigation
    period = (col(inv.tenant_id) == tenant_id, col(inv.created_at) >= since, col(inv.created_at) < until)
    newest = (col(inv.created_at).desc(), col(inv.id).desc())
    refused = select(inv.id, inv.question, inv.created_at).where(*period, col(inv.status) == "refused")
    rated = (select(inv.id, inv.question, inv.created_at, Feedback.rating)
             .join(Feedback, col(Feedback.investigation_id) == col(inv.id))
             .where(*period, col(Feedback.tenant_id) == tenant_id, col(Feedback.current).is_(True),
                    col(Feedback.rating).in_(GAP_RATINGS)))
    if limit is not None:
        refused, rated = refused.order_by(*newest).limit(limit), rated.order_by(*newest).limit(limit * 2)
    found: dict[str, tuple[str, str, datetime, str]] = {}
    for inv_id, question, created_at in session.exec(refused).all():
        found[inv_id] = (inv_id, question, created_at, "refused")
    for inv_id, question, created_at, rating in session.exec(rated).all():
        if inv_id not in found or found[inv_id][3] != "wrong":
            found[inv_id] = (inv_id, question, created_at, rating)
    rows = sorted(found.values(), key=lambda r: (r[2], r[0]))
    return rows[-limit:] if limit is not None else rows


def list_rated(session: Session, *, tenant_id: str, rating: str, limit: int = 50) -> list[Investigation]:
    """The tenant's newest investigations that someone currently rates `rating`."""
    rated = select(Feedback.investigation_id).where(
        Feedback.tenant_id == tenant_id, Feedback.rating == rating, col(Feedback.current).is_(True)
    )
    stmt = (
        select(Investigation)
        .where(Investigation.tenant_id == tenant_id, col(Investigation.id).in_(rated))
        .order_by(col(Investigation.created_at).desc())
        .limit(limit)
    )
    return list(session.exec(stmt).all())


def count_rated(session: Session, *, tenant_id: str) -> dict[str, int]:
    """How many of the tenant's investigations currently carry each rating."""
    stmt = (
        select(Feedback.rating, func.count(func.distinct(Feedback.investigation_id)))
        .where(Feedback.tenant_id == tenant_id, col(Feedback.current).is_(True))
        .group_by(Feedback.rating)
    )
    return {str(r): int(n) for r, n in session.exec(stmt).all()}
