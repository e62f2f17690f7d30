"""Where an answer may be sent: the checks every callback passes at intake (send time checks again).

A callback is one object or a list. Each webhook URL, and the endpoint of each named channel (its SMTP
host or helpdesk base URL), must pass the tenant's outbound guard (`adapters.delivery.outbound`:
private, loopback, link-local, multicast and reserved addresses refused unless the tenant's allowlist
names the host); each named channel must exist, belong to the tenant, and be of the callback's type.
The checked callback carries the channel's id, so a later rename cannot redirect a delivery.
"""

from __future__ import annotations

from typing import Any

from adapters.delivery.channels import target_endpoint
from adapters.delivery.outbound import OutboundGuard, OutboundRefused
from bootstrap import Services
from config.settings import Settings
from investigation.errors import NotFound, ValidationFailed
from storage import repositories as repo
from storage.models import Tenant

CHANNEL_TYPES = {"email": "smtp", "zendesk": "zendesk", "freshdesk": "freshdesk"}


def guard_for(tenant: Tenant, settings: Settings) -> OutboundGuard:
    """The tenant's outbound policy."""
    return OutboundGuard.for_hosts(
        tenant.allowed_hosts or [], allow_private=settings.security.webhook_allow_private
    )


def check_callbacks(services: Services, callback: dict[str, Any] | list[dict[str, Any]], *, tenant: Tenant,
                    field: str = "callback") -> dict[str, Any] | list[dict[str, Any]]:
    """The callback(s) as they will be stored (channel ids added); ValidationFailed naming the field."""
    guard = guard_for(tenant, services.settings)
    if isinstance(callback, dict):
        return check_callback(services, callback, tenant=tenant, guard=guard, field=field)
    return [check_callback(services, entry, tenant=tenant, guard=guard, field=f"{field}.{i}")
            for i, entry in enumerate(callback)]


def check_callback(services: Services, callback: dict[str, Any], *, tenant: Tenant, guard: OutboundGuard,
                   field: str = "callback") -> dict[str, Any]:
    """One callback: refuse a target Sleuth must not call, or a channel the tenant does not have."""
    kind = callback.get("type")
    if kind == "webhook":
        try:
            guard.check_url(str(callback["url"]))
        except OutboundRefused as exc:
            raise ValidationFailed(f"{field}.url", str(exc)) from None
        return dict(callback)
    expected = CHANNEL_TYPES.get(str(kind))
    if expected is None:
        raise ValidationFailed(f"{field}.type", "must be webhook, email, zendesk or freshdesk")
    with services.session() as session:
        try:
            channel = repo.get_channel(session, tenant_id=tenant.id, name=str(callback.get("channel")))
        except NotFound:
            raise ValidationFailed(f"{field}.channel", f"no channel named {callback.get('channel')!r} "
                                   "(see `sleuth channels list`)") from None
        channel_id, ctype, config = channel.id, channel.type, dict(channel.config)
    if ctype != expected:
        raise ValidationFailed(f"{field}.channel", f"{callback.get('channel')!r} is a {ctype} channel, "
                               f"not {expected}")
    check_endpoint(guard, ctype, config, field=f"{field}.channel")
    return {**callback, "channel_id": channel_id}


def check_endpoint(guard: OutboundGuard, channel_type: str, config: dict[str, Any], *, field: str) -> None:
    """Refuse a channel whose endpoint (an SMTP host and port, or a helpdesk URL) the guard refuses."""
    endpoint = target_endpoint(channel_type, config)
    try:
        if isinstance(endpoint, tuple):
            guard.check_host(*endpoint)
        else:
            guard.check_url(endpoint)
    except OutboundRefused as exc:
        raise ValidationFailed(field, str(exc)) from None


__all__ = ["check_callback", "check_callbacks", "check_endpoint", "guard_for"]
