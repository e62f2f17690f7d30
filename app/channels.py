"""Managing a tenant's delivery channels and outbound allowlist — the same rules for the API and the CLI.

Secrets arrive as values (API body, or read by the CLI from a named environment variable or stdin),
are encrypted before they are stored, and are never returned: views show which secrets are set.
"""

from __future__ import annotations

from typing import Any

from adapters.delivery.channels import SECRET_FIELDS, parse_channel, split, target_endpoint
from adapters.delivery.outbound import canonical_host, normalize_host
from app.callbacks import check_endpoint, guard_for
from bootstrap import Services
from investigation.errors import ValidationFailed
from storage import repositories as repo
from storage.models import Channel, Tenant
from storage.secrets import SecretBox

HOOK_TYPES = ("zendesk", "freshdesk")


def inbound_path(channel: Channel) -> str | None:
    """Where the helpdesk posts new tickets (helpdesk channels only)."""
    return f"/v1/hooks/{channel.type}/{channel.id}" if channel.type in HOOK_TYPES else None


def view(services: Services, channel: Channel) -> dict[str, Any]:
    """The public view: configuration, which secrets are set (masked), and the inbound URL."""
    out = repo.channel_view(channel)
    path = inbound_path(channel)
    if path is not None:
        base = (services.settings.public_url or "").rstrip("/")
        out["inbound_url"] = base + path
    return out


def add_channel(services: Services, *, tenant: Tenant, data: dict[str, Any]) -> dict[str, Any]:
    """Validate, check the endpoint against the tenant's outbound guard, encrypt the secrets, store."""
    spec = parse_channel(data)
    config, secrets = split(spec)
    field = "host" if isinstance(target_endpoint(spec.type, config), tuple) else "base_url"
    check_endpoint(guard_for(tenant, services.settings), spec.type, config, field=field)
    with services.session() as session:
        channel = repo.create_channel(
            session,
            tenant_id=tenant.id,
            name=spec.name,
            type=spec.type,
            config=config,
            secrets=secrets,
            box=SecretBox.from_settings(services.settings),
        )
    return view(services, channel)


def list_channels(services: Services, *, tenant: Tenant) -> list[dict[str, Any]]:
    with services.session() as session:
        channels = repo.list_channels(session, tenant_id=tenant.id)
    return [view(services, c) for c in channels]


def remove_channel(services: Services, *, tenant: Tenant, name: str) -> None:
    with services.session() as session:
        repo.remove_channel(session, tenant_id=tenant.id, name=name)


def update_allowlist(services: Services, *, tenant_id: str, add: list[str], remove: list[str]) -> list[str]:
    """Open (or close again) hosts for the tenant's deliveries; returns the allowlist."""
    for host in add:
        if not normalize_host(host) or any(c in host for c in "/@ ") or len(host) > 253:
            raise ValidationFailed("allow_host", f"{host!r} is not a host name or address")
    with services.session() as session:
        tenant = repo.update_allowed_hosts(session, tenant_id=tenant_id,
                                           add=[canonical_host(h) for h in add],
                                           remove=[canonical_host(h) for h in remove])
        return list(tenant.allowed_hosts)


__all__ = [
    "SECRET_FIELDS",
    "add_channel",
    "inbound_path",
    "list_channels",
    "remove_channel",
    "update_allowlist",
    "view",
]
