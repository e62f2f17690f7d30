"""What one delivery attempt talks to: the tenant's outbound guard, the channel's deliverer (built with
its decrypted secrets, inside the deliver task only), the payload as channels render it, and the
per-channel pace a helpdesk asked for (429 Retry-After, a low rate-limit remainder)."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from typing import Any

from adapters.delivery.email import EmailDeliverer
from adapters.delivery.freshdesk import FreshdeskDeliverer
from adapters.delivery.outbound import OutboundGuard
from adapters.delivery.webhook import WebhookDeliverer
from adapters.delivery.zendesk import ZendeskDeliverer
from bootstrap import Services
from investigation.errors import NotFound, PermanentError
from investigation.ports import Delivered, Deliverer
from storage import repositories as repo
from storage.rating_links import feedback_links, rating_token
from storage.secrets import SecretBox
from storage.signing_key import secret_key

CHANNEL_TYPE = {"email": "smtp", "zendesk": "zendesk", "freshdesk": "freshdesk"}
LOW_REMAINING_SHARE = 0.05  # slow down when under 5 % of the window's requests are left
MAX_PACE_SECONDS = 60.0


def guard_for(services: Services, tenant_id: str) -> OutboundGuard:
    """The tenant's outbound policy (its allowlist; the operator override, if set)."""
    with services.session() as session:
        hosts = list(repo.get_tenant(session, tenant_id=tenant_id).allowed_hosts or [])
    return OutboundGuard.for_hosts(hosts, allow_private=services.settings.security.webhook_allow_private)


def timeout_of(services: Services, kind: str) -> float:
    s = services.settings
    return s.delivery.smtp_timeout if kind == "email" else s.delivery.webhook_timeout


def channel_key(kind: str, target: dict[str, Any]) -> str | None:
    """The key a channel's pace is kept under (helpdesks only)."""
    if kind in ("zendesk", "freshdesk"):
        return str(target.get("channel_id") or target.get("channel") or "")
    return None


def build_deliverer(services: Services, *, kind: str, tenant_id: str, target: dict[str, Any]) -> Deliverer:
    """The deliverer of one attempt. Secrets are decrypted here and live only as long as it does."""
    guard = guard_for(services, tenant_id)
    timeout = timeout_of(services, kind)
    if kind == "webhook":
        return WebhookDeliverer(timeout, guard=guard)
    expected = CHANNEL_TYPE.get(kind)
    if expected is None:
        raise PermanentError(f"no deliverer for channel type {kind!r}")
    with services.session() as session:
        try:
            if target.get("channel_id"):
                channel = repo.get_channel(session, channel_id=str(target["channel_id"]), tenant_id=tenant_id)
            else:
                channel = repo.get_channel(session, tenant_id=tenant_id, name=str(target.get("channel")))
        except NotFound as exc:
            raise PermanentError(f"channel {target.get('channel')!r} no longer exists") from exc
        config, sealed, ctype = dict(channel.config), channel.secrets, channel.type
    if ctype != expected:
        raise PermanentError(f"channel {target.get('channel')!r} is a {ctype} channel, not {expected}")
    secrets = SecretBox.from_settings(services.settings).open(sealed)
    if kind == "email":
        return EmailDeliverer(
            config, secrets, guard, timeout=timeout, ca_file=services.settings.delivery.smtp_ca_file
        )
    if kind == "zendesk":
        return ZendeskDeliverer(config, secrets, guard, timeout=timeout)
    return FreshdeskDeliverer(config, secrets, guard, timeout=timeout)


def channel_payload(services: Services, inv_id: str, view: dict[str, Any]) -> dict[str, Any]:
    """The view plus what people-facing channels show: citation URLs and the trace link."""
    with services.session() as session:
        urls = {e.evidence_id: e.url for e in repo.list_evidence(session, investigation_id=inv_id) if e.url}
    payload = dict(view)
    payload["citations"] = [
        {**c, "url": urls.get(str(c.get("evidence_id")))} for c in view.get("citations") or []
    ]
    base = services.settings.public_url
    if base:
        payload["trace_url"] = f"{base.rstrip('/')}/trace/{inv_id}"
    return payload


def rater_of(channel: str, target: dict[str, Any]) -> str:
    """Who rates through a delivery's links: its recipients, its ticket, or the webhook's receiver."""
    if channel == "email":
        to = target.get("to")
        return "email:" + (", ".join(map(str, to)) if isinstance(to, list) else str(to or ""))
    if channel in ("zendesk", "freshdesk"):
        return f"{channel}:{target.get('channel', '')}#{target.get('ticket_id', '')}"
    return channel


def with_feedback_links(
    services: Services, tenant_id: str, view: dict[str, Any], rater: str
) -> dict[str, Any]:
    """The payload plus its rating links (`feedback_url`, `feedback_links`) when a public URL is configured
    and there is an answer or a refusal to rate. The token is dated by the investigation's end, so every
    attempt of a delivery carries the same links."""
    base = services.settings.public_url
    if not base or view.get("status") not in ("answered", "refused"):
        return view
    finished = view.get("finished_at")
    issued = (
        datetime.fromisoformat(finished).replace(tzinfo=UTC).timestamp()
        if isinstance(finished, str)
        else None
    )
    token = rating_token(secret_key(services.settings), tenant_id=tenant_id, investigation_id=str(view["id"]),
                         rater=rater, now=issued)
    links = feedback_links(base, token)
    return {**view, "feedback_url": links.pop("feedback_url"), "feedback_links": links}


# The wall clock the holds are written and read with (one clock for every process sharing Redis); a test
# freezes it to check a hold without racing it.
clock = time.time


def _pace_key(services: Services, key: str) -> str:
    return f"{services.settings.redis_prefix}:pace:channel:{key}"


def paced_for(services: Services, key: str | None) -> float:
    """Seconds to wait before the channel may be called again (0 when it may now)."""
    if not key or not services.settings.redis_url:
        return 0.0
    raw = services.redis.get(_pace_key(services, key))
    return max(0.0, float(raw) - clock()) if raw else 0.0


def slow_down(services: Services, key: str | None, seconds: float) -> None:
    """Nobody calls the channel for `seconds` (only ever extended, never shortened)."""
    if not key or not services.settings.redis_url or seconds <= 0:
        return
    until = clock() + seconds
    name = _pace_key(services, key)
    current = services.redis.get(name)
    if current is None or float(current) < until:
        services.redis.set(name, repr(until), ex=max(1, math.ceil(seconds) + 1))


def pace_after(sent: Delivered) -> float:
    """How long to hold a channel after a success that reported its rate-limit remainder."""
    remaining, total = sent.rate_limit_remaining, sent.rate_limit
    if remaining is None:
        return 0.0
    low = max(1, int(total * LOW_REMAINING_SHARE)) if total is not None and total > 0 else 5
    if remaining > low:
        return 0.0
    return min(MAX_PACE_SECONDS, 60.0 / (remaining + 1))


__all__ = ["build_deliverer", "channel_key", "channel_payload", "guard_for", "pace_after", "paced_for",
           "slow_down", "timeout_of"]
