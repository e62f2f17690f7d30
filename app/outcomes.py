"""What helpdesk agents did with an answer, read from the helpdesk's own ticket-update hooks
(docs/feedback.md): a `sleuth_helpful` / `sleuth_partly` / `sleuth_wrong` tag set by a macro is a rating; the
agent's first public reply, compared with the drafted answer, says whether the draft went out unchanged,
edited (an edit-distance ratio) or unused; a solved ticket opened again within `REOPEN_WINDOW` counts as
reopened.

The update finds its investigation by the hook's idempotency key (`app.hooks`: kind, channel, ticket), so only
tickets that started an investigation through that channel are followed; anything else is acknowledged and
ignored."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from difflib import SequenceMatcher
from typing import Any

from bootstrap import Services
from investigation.errors import ValidationFailed
from storage import repositories as repo
from storage.feedback_models import utcnow
from storage.models import Tenant

TAG_RATINGS = {"sleuth_helpful": "helpful", "sleuth_partly": "partly", "sleuth_wrong": "wrong"}
REOPEN_WINDOW = timedelta(days=7)
# Share of the draft changed up to which the reply is the draft "unchanged" (whitespace, a greeting) and from
# which it is a different reply altogether.
UNCHANGED_UP_TO = 0.05
UNUSED_FROM = 0.8
_SOLVED = ("solved", "closed")
_OPEN = ("new", "open", "pending", "hold")
ZENDESK_TAGS = "zen:event-type:ticket.tags_changed"
ZENDESK_COMMENT = "zen:event-type:ticket.comment_added"
ZENDESK_STATUS = "zen:event-type:ticket.status_changed"
UPDATE_EVENTS = ("ticket_updated", "reply_added")  # a trigger's or automation's "sleuth_event"


@dataclass(frozen=True)
class TicketUpdate:
    """One update of a ticket, in the helpdesk's terms made common."""

    ticket_id: int
    tags_added: tuple[str, ...] = ()
    public_reply: str | None = None  # an agent's public comment
    status: str | None = None  # lowercase
    previous_status: str | None = None
    actor: str | None = None


@dataclass
class Recorded:
    """What one update recorded (the hook's answer)."""

    investigation_id: str | None
    tenant_id: str = ""
    route: str | None = None
    ratings: list[str] = field(default_factory=list)
    outcome: dict[str, Any] = field(default_factory=dict)


def _normalised(text: str) -> str:
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"\[\d+\]", " ", text)
    return re.sub(r" ([.,;:!?])", r"\1", " ".join(text.lower().split()))


def edit_ratio(draft: str, reply: str) -> float:
    """How much of the draft the reply changed: 0.0 sent as drafted, 1.0 nothing in common (difflib's
    similarity over the words, so shared letters of unrelated text do not count; case, spacing, markup and
    citation markers do not count either)."""
    a, b = _normalised(draft).split(), _normalised(reply).split()
    if not a and not b:
        return 0.0
    return round(1.0 - SequenceMatcher(None, a, b, autojunk=False).ratio(), 4)


def draft_use(ratio: float) -> str:
    if ratio <= UNCHANGED_UP_TO:
        return "unchanged"
    return "unused" if ratio >= UNUSED_FROM else "edited"


def _tags(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.replace(",", " ").split())
    if isinstance(value, list):
        return tuple(str(t) for t in value if isinstance(t, (str, int)))
    return ()


def _ticket(value: Any, name: str) -> int:
    text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    if not text.isdigit() or int(text) < 1:
        raise ValidationFailed(name, "must be a positive ticket number")
    return int(text)


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _status(value: Any) -> str | None:
    return str(value).strip().lower() or None if isinstance(value, str) else None


def parse_zendesk_update(data: dict[str, Any]) -> TicketUpdate | None:
    """A ticket update from a Zendesk event subscription (tags changed, comment added, status changed) or
    from a trigger whose JSON body says ``"sleuth_event": "ticket_updated"``; None for anything else."""
    kind = data.get("type")
    if "detail" in data and kind in (ZENDESK_TAGS, ZENDESK_COMMENT, ZENDESK_STATUS):
        detail, event = _obj(data.get("detail")), _obj(data.get("event"))
        ticket = _ticket(detail.get("id"), "detail.id")
        actor = str(detail.get("actor_id") or "") or None
        if kind == ZENDESK_TAGS:
            return TicketUpdate(ticket, tags_added=_tags(_obj(event.get("tags")).get("added")), actor=actor)
        if kind == ZENDESK_COMMENT:
            comment = _obj(event.get("comment"))
            author = _obj(comment.get("author"))
            staff = bool(author.get("is_staff"))
            body = comment.get("body")
            public = comment.get("is_public") is True and staff and isinstance(body, str)
            return TicketUpdate(ticket, public_reply=body if public else None,
                                actor=str(author.get("id") or "") or actor)
        return TicketUpdate(
            ticket,
            status=_status(event.get("current")),
            previous_status=_status(event.get("previous")),
            actor=actor,
        )
    if data.get("sleuth_event") in UPDATE_EVENTS:
        body = _obj(data.get("ticket"))
        reply = body.get("latest_public_comment")
        return TicketUpdate(
            _ticket(body.get("id"), "ticket.id"),
            tags_added=_tags(body.get("tags")),
            public_reply=reply if isinstance(reply, str) and reply.strip() else None,
            status=_status(body.get("status")),
            previous_status=_status(body.get("previous_status")),
            actor=str(body.get("updated_by") or "") or None,
        )
    return None


def parse_freshdesk_update(data: dict[str, Any]) -> TicketUpdate | None:
    """A ticket update from a Freshdesk automation whose body says ``"event": "ticket_updated"`` or
    ``"reply_added"`` (placeholders: ticket id, status, tags, latest public comment); None for a new
    ticket."""
    if data.get("event") not in UPDATE_EVENTS:
        return None
    reply = data.get("latest_public_comment")
    return TicketUpdate(
        _ticket(data.get("ticket_id"), "ticket_id"),
        tags_added=_tags(data.get("tags")),
        public_reply=reply if isinstance(reply, str) and reply.strip() else None,
        status=_status(data.get("status")),
        previous_status=_status(data.get("previous_status")),
        actor=str(data.get("agent_email") or "") or None,
    )


def apply_update(services: Services, *, tenant: Tenant, kind: str, channel_id: str, update: TicketUpdate,
                 now: datetime | None = None) -> Recorded:
    """Record the update's ratings and draft outcome against the investigation the ticket started."""
    at = now or utcnow()
    with services.session() as session:
        inv = repo.ticket_investigation(
            session, tenant_id=tenant.id, key_prefix=f"{kind}:{channel_id}:{update.ticket_id}:"
        )
        if inv is None:
            return Recorded(None)
        recorded = Recorded(inv.id, tenant.id, inv.route)
        rater = f"{kind}:agent {update.actor}" if update.actor else f"{kind}:ticket {update.ticket_id}"
        for tag in update.tags_added:
            rating = TAG_RATINGS.get(tag.lower())
            if rating is not None:
                repo.record_feedback(session, tenant_id=tenant.id, investigation_id=inv.id, rater=rater,
                                     rating=rating, source=f"{kind}_tag", now=at)
                recorded.ratings.append(rating)
        current = repo.get_outcome(session, investigation_id=inv.id)
        fields: dict[str, Any] = {}
        if update.public_reply and (current is None or current.draft is None) and inv.answer:
            ratio = edit_ratio(inv.answer, update.public_reply)
            fields.update(draft=draft_use(ratio), edit_ratio=ratio, replied_at=at)
        if update.status in _SOLVED:
            fields["solved_at"] = at
            if current is None or current.draft is None and "draft" not in fields:
                fields["draft"] = "unused"  # solved without a public reply: the draft was not sent
        elif update.status in _OPEN and current is not None and current.solved_at is not None \
                and not current.reopened and at - current.solved_at <= REOPEN_WINDOW:
            fields.update(reopened=True, reopened_at=at)
        if fields:
            row = repo.record_outcome(session, tenant_id=tenant.id, investigation_id=inv.id, helpdesk=kind,
                                      ticket_id=str(update.ticket_id), **fields)
            recorded.outcome = {"draft": row.draft, "edit_ratio": row.edit_ratio, "reopened": row.reopened}
    return recorded
