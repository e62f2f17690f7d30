"""Channels (a tenant's named delivery destinations) and the tenant's outbound allowlist."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete
from sqlmodel import Session, col, select

from investigation.errors import NotFound, ValidationFailed
from storage._common import insert_ignore, iso, row_values, write
from storage.models import Channel, Tenant
from storage.secrets import SecretBox

CHANNEL_TYPES = ("smtp", "zendesk", "freshdesk")
SECRETS_SET = "secrets_set"  # config key: names of the secrets the channel holds (values encrypted apart)
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def create_channel(session: Session, *, tenant_id: str, name: str, type: str, config: dict[str, Any],
                   secrets: dict[str, str], box: SecretBox) -> Channel:
    """A new channel; ValidationFailed("name") when the tenant already has one of that name."""
    if not _NAME.fullmatch(name or ""):
        raise ValidationFailed("name", "1-100 characters of letters, digits, '_', '.' or '-'")
    if type not in CHANNEL_TYPES:
        raise ValidationFailed("type", f"must be one of {', '.join(CHANNEL_TYPES)}")
    present = {k: v for k, v in secrets.items() if v}
    # Which secrets are set is kept in the clear, so listing channels never decrypts anything.
    channel = Channel(tenant_id=tenant_id, name=name, type=type,
                      config={**config, SECRETS_SET: sorted(present)}, secrets=box.seal(present))
    with write(session):
        if not insert_ignore(session, Channel, [row_values(channel)], ["tenant_id", "name"]):
            raise ValidationFailed("name", f"the tenant already has a channel named {name!r}")
        return get_channel(session, channel_id=channel.id)


def get_channel(session: Session, *, channel_id: str | None = None, tenant_id: str | None = None,
                name: str | None = None) -> Channel:
    """By id (and, when given, only the tenant's), or by the tenant's channel name. NotFound otherwise."""
    if channel_id is not None:
        found = session.get(Channel, channel_id, populate_existing=True)
        if found is None or (tenant_id is not None and found.tenant_id != tenant_id):
            raise NotFound(f"channel {channel_id} not found")
        return found
    stmt = select(Channel).where(Channel.tenant_id == tenant_id, Channel.name == name)
    hit = session.exec(stmt.execution_options(populate_existing=True)).first()
    if hit is None:
        raise NotFound(f"channel {name!r} not found")
    return hit


def list_channels(session: Session, *, tenant_id: str) -> list[Channel]:
    stmt = select(Channel).where(Channel.tenant_id == tenant_id).order_by(col(Channel.name))
    return list(session.exec(stmt).all())


def remove_channel(session: Session, *, tenant_id: str, name: str) -> None:
    """Delete the tenant's channel (NotFound if absent). Pending deliveries to it then go dead."""
    with write(session):
        channel = get_channel(session, tenant_id=tenant_id, name=name)
        session.execute(delete(Channel).where(col(Channel.id) == channel.id))


def channel_view(channel: Channel) -> dict[str, Any]:
    """The public view: config and which secrets are set, never their values."""
    config = {k: v for k, v in channel.config.items() if k != SECRETS_SET}
    return {"id": channel.id, "name": channel.name, "type": channel.type, **config,
            "secrets": {name: "********" for name in channel.config.get(SECRETS_SET) or []},
            "created_at": iso(channel.created_at)}


def update_allowed_hosts(session: Session, *, tenant_id: str, add: Sequence[str] = (),
                         remove: Sequence[str] = ()) -> Tenant:
    """Add/remove entries of the tenant's outbound allowlist (entries already canonical)."""
    with write(session):
        tenant = session.get(Tenant, tenant_id, populate_existing=True)
        if tenant is None:
            raise NotFound(f"tenant {tenant_id} not found")
        hosts = [h for h in tenant.allowed_hosts or [] if h not in set(remove)]
        for host in add:
            if host not in hosts:
                hosts.append(host)
        tenant.allowed_hosts = hosts
        session.add(tenant)
    return tenant
