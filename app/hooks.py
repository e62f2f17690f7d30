"""Tickets that start investigations by themselves: the inbound Zendesk and Freshdesk hooks.

Zendesk signs each request: ``X-Zendesk-Webhook-Signature`` = base64(HMAC-SHA256(signing secret,
``X-Zendesk-Webhook-Signature-Timestamp`` + raw body)); a timestamp more than five minutes away is
refused, which stops replays of old requests. Freshdesk automations cannot sign, so the channel's
inbound secret travels in an ``X-Sleuth-Secret`` header (compared in constant time). Anything not
authentic is refused before the body is even parsed, and nothing is recorded.

The ticket's subject and description (HTML stripped, quoted replies trimmed, size-capped) become the
question; the answer goes back to that ticket through the same channel. Later updates of that ticket (a
rating tag, the agent's reply, a status change) are recorded by `app.outcomes`. Helpdesks retry webhooks: the
investigation's idempotency key is channel + ticket (+ event id), so a retried event creates nothing new.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.intake import Launcher, Submitted, parse_request, submit_investigation
from app.outcomes import Recorded, apply_update, parse_freshdesk_update, parse_zendesk_update
from app.ticket_text import ticket_question
from bootstrap import Services
from investigation.errors import Forbidden, NotFound, PayloadTooLarge, ValidationFailed
from storage import repositories as repo
from storage.models import Tenant
from storage.secrets import SecretBox

TOLERANCE_SECONDS = 300
ZENDESK_CREATED = "zen:event-type:ticket.created"


class HookRejected(Forbidden):
    """Raised when an inbound hook is not authentic (bad, missing or stale signature; wrong secret)."""


@dataclass(frozen=True)
class TicketEvent:
    ticket_id: int
    event_id: str | None
    subject: str
    description: str
    requester_email: str | None = None
    requester_name: str | None = None


def zendesk_signature(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def _when(stamp: str) -> float:
    stamp = stamp.strip()
    if stamp.isdigit():
        return float(stamp)
    return datetime.fromisoformat(stamp).astimezone(UTC).timestamp()


def verify_zendesk(secret: str, headers: Mapping[str, str], body: bytes, *, now: float) -> None:
    """HookRejected unless the request carries a valid, recent Zendesk signature."""
    lowered = {k.lower(): v for k, v in headers.items()}
    signature = lowered.get("x-zendesk-webhook-signature")
    stamp = lowered.get("x-zendesk-webhook-signature-timestamp")
    if not signature or not stamp:
        raise HookRejected("missing X-Zendesk-Webhook-Signature or its timestamp")
    try:
        when = _when(stamp)
    except (ValueError, OverflowError, OSError):  # not a time, or one no clock can hold (year 1 at +23:59)
        raise HookRejected("unreadable X-Zendesk-Webhook-Signature-Timestamp") from None
    if abs(now - when) > TOLERANCE_SECONDS:
        raise HookRejected("stale signature timestamp (more than 5 minutes away)")
    # As bytes: `compare_digest` refuses str with non-ASCII characters (a header may carry any latin-1 byte).
    if not hmac.compare_digest(signature.strip().encode(), zendesk_signature(secret, stamp, body).encode()):
        raise HookRejected("bad signature")


def verify_freshdesk(secret: str, headers: Mapping[str, str]) -> None:
    given = {k.lower(): v for k, v in headers.items()}.get("x-sleuth-secret", "")
    if not given or not hmac.compare_digest(given.encode(), secret.encode()):
        raise HookRejected("missing or wrong X-Sleuth-Secret")


def _ticket_id(value: Any, field: str) -> int:
    text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    if not text.isdigit() or int(text) < 1:
        raise ValidationFailed(field, "must be a positive ticket number")
    return int(text)


def _text(value: Any, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValidationFailed(field, "must be a string")
    return value


def _object(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ValidationFailed("body", "not valid JSON") from None
    except RecursionError:  # nesting deeper than the parser goes: no ticket looks like that
        raise ValidationFailed("body", "JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise ValidationFailed("body", "must be a JSON object")
    return data


def parse_zendesk(raw: bytes) -> TicketEvent | None:
    """The ticket of an event-subscription body (``ticket.created``) or of a trigger's JSON body; None
    for another event type (acknowledged, ignored)."""
    data = _object(raw)
    if "type" in data and "detail" in data:
        if data.get("type") != ZENDESK_CREATED:
            return None
        detail = data.get("detail")
        if not isinstance(detail, dict):
            raise ValidationFailed("detail", "must be an object")
        return TicketEvent(_ticket_id(detail.get("id"), "detail.id"), str(data.get("id") or "") or None,
                           _text(detail.get("subject"), "detail.subject"),
                           _text(detail.get("description"), "detail.description"))
    ticket = data.get("ticket")
    if not isinstance(ticket, dict):
        raise ValidationFailed("ticket", "expected {\"ticket\": {\"id\", \"subject\", \"description\", ...}}")
    found = ticket.get("requester")
    requester: dict[str, Any] = found if isinstance(found, dict) else {}
    return TicketEvent(_ticket_id(ticket.get("id"), "ticket.id"), None,
                       _text(ticket.get("subject"), "ticket.subject"),
                       _text(ticket.get("description"), "ticket.description"),
                       _text(requester.get("email"), "ticket.requester.email") or None,
                       _text(requester.get("name"), "ticket.requester.name") or None)


def parse_freshdesk(raw: bytes) -> TicketEvent:
    data = _object(raw)
    return TicketEvent(
        _ticket_id(data.get("ticket_id"), "ticket_id"),
        None,
        _text(data.get("subject"), "subject"),
        _text(data.get("description"), "description"),
        _text(data.get("requester_email"), "requester_email") or None,
        _text(data.get("requester_name"), "requester_name") or None,
    )


def _channel(services: Services, kind: str, channel_id: str) -> tuple[Tenant, str, dict[str, str]]:
    """(tenant, channel name, decrypted secrets) of a helpdesk channel; NotFound for anything else."""
    with services.session() as session:
        try:
            channel = repo.get_channel(session, channel_id=channel_id)
        except NotFound:
            raise NotFound("no such hook") from None
        if channel.type != kind:
            raise NotFound("no such hook")
        tenant = Tenant.model_validate(repo.get_tenant(session, tenant_id=channel.tenant_id).model_dump())
        name, sealed = channel.name, channel.secrets
    return tenant, name, SecretBox.from_settings(services.settings).open(sealed)


def _submit(services: Services, kind: str, channel_id: str, tenant: Tenant, name: str, event: TicketEvent,
            launch: Launcher) -> Submitted:
    question = ticket_question(event.subject, event.description)
    if not question:
        raise ValidationFailed("description", "the ticket has no text to investigate")
    if len(question) > services.settings.limits.ticket_max_chars:
        raise PayloadTooLarge(f"ticket text over {services.settings.limits.ticket_max_chars} characters")
    context: dict[str, Any] = {"ticket_id": str(event.ticket_id)}
    if event.requester_email or event.requester_name:
        context["requester"] = {k: v for k, v in (("email", event.requester_email),
                                                  ("name", event.requester_name)) if v}
    try:
        request = parse_request({"question": question, "context": context,
                                 "callback": {"type": kind, "channel": name, "ticket_id": event.ticket_id}})
    except ValidationFailed as exc:
        if not exc.field.startswith("context.requester"):
            raise
        context.pop("requester")  # an unusable requester address does not stop the ticket
        request = parse_request({"question": question, "context": context,
                                 "callback": {"type": kind, "channel": name, "ticket_id": event.ticket_id}})
    key = f"{kind}:{channel_id}:{event.ticket_id}:{event.event_id or 'ticket'}"[:200]
    # The ticket is the key; its text may change between triggers (no 409 for a helpdesk).
    return submit_investigation(services, tenant=tenant, request=request, launch=launch, idempotency_key=key,
                                same_key_same_request=False)


def receive_zendesk(services: Services, channel_id: str, headers: Mapping[str, str], raw: bytes,
                    launch: Launcher, *, now: float | None = None) -> Submitted | Recorded | None:
    """Verify, parse, then submit a new ticket or record a ticket update's rating and outcome
    (`app.outcomes`). None when the event is neither."""
    tenant, name, secrets = _channel(services, "zendesk", channel_id)
    if not secrets.get("signing_secret"):
        raise HookRejected("this channel has no signing secret: inbound hooks are refused")
    verify_zendesk(secrets["signing_secret"], headers, raw, now=time.time() if now is None else now)
    update = parse_zendesk_update(_object(raw))
    if update is not None:
        return apply_update(services, tenant=tenant, kind="zendesk", channel_id=channel_id, update=update)
    event = parse_zendesk(raw)
    return None if event is None else _submit(services, "zendesk", channel_id, tenant, name, event, launch)


def receive_freshdesk(services: Services, channel_id: str, headers: Mapping[str, str], raw: bytes,
                      launch: Launcher) -> Submitted | Recorded:
    tenant, name, secrets = _channel(services, "freshdesk", channel_id)
    if not secrets.get("inbound_secret"):
        raise HookRejected("this channel has no inbound secret: inbound hooks are refused")
    verify_freshdesk(secrets["inbound_secret"], headers)
    update = parse_freshdesk_update(_object(raw))
    if update is not None:
        return apply_update(services, tenant=tenant, kind="freshdesk", channel_id=channel_id, update=update)
    return _submit(services, "freshdesk", channel_id, tenant, name, parse_freshdesk(raw), launch)


__all__ = ["HookRejected", "TicketEvent", "parse_freshdesk", "parse_zendesk", "receive_freshdesk",
           "receive_zendesk", "verify_freshdesk", "verify_zendesk", "zendesk_signature"]
