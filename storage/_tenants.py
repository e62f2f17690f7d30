"""Tenants and their API keys: only the sha256 of a key is stored, the key itself is shown once."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table, bindparam
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from investigation.errors import Forbidden, NotFound, ValidationFailed
from storage._common import insert_ignore, row_values, write
from storage._prepared import Prepared, load
from storage.models import Tenant
from storage.secrets import SecretBox

_TABLE: Table = Tenant.__table__  # type: ignore[attr-defined]  # SQLModel sets __table__, undeclared
_BY_KEY_HASH = Prepared(sa_select(_TABLE).where(_TABLE.c.api_key_hash == bindparam("digest")))
# Every intake from the CLI and the bench looks its tenant up by name: the statement built once.
_BY_NAME = Prepared(sa_select(_TABLE).where(_TABLE.c.name == bindparam("name")))

API_KEY_PREFIX = "sk_"
WEBHOOK_SECRET_PREFIX = "whsec_"
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def hash_api_key(api_key: str) -> str:
    """The stored form of an API key (sha256 hex)."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()


def new_api_key() -> str:
    return API_KEY_PREFIX + secrets.token_urlsafe(32)


def new_webhook_secret() -> str:
    return WEBHOOK_SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode("ascii")


def validate_tenant_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValidationFailed("name", "1-100 characters of letters, digits, '_', '.' or '-'")
    return name


# Caps a tenant may carry; an investigation's budget can only lower them (see api/routes/investigations.py).
TENANT_LIMITS = (
    "max_hops",
    "max_retrieval_calls",
    "max_llm_tokens",
    "deadline_seconds",
    "llm_tokens_per_day",
    "max_in_flight",
    "intake_per_minute",
    "retention_days",
)
# Settings of a tenant that are not budgets, and the least each may be.
_AT_LEAST = {"retention_days": 1}


def validate_limits(limits: dict[str, Any] | None) -> dict[str, int]:
    checked: dict[str, int] = {}
    for key, value in (limits or {}).items():
        if key not in TENANT_LIMITS:
            raise ValidationFailed(f"limits.{key}", f"unknown limit; one of {', '.join(TENANT_LIMITS)}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValidationFailed(f"limits.{key}", "must be a non-negative integer")
        if value < _AT_LEAST.get(key, 0):
            raise ValidationFailed(f"limits.{key}", f"must be at least {_AT_LEAST[key]}")
        checked[key] = value
    return checked


def create_tenant(session: Session, *, name: str, box: SecretBox, limits: dict[str, Any] | None = None,
                  allowed_hosts: Sequence[str] = ()) -> tuple[Tenant, str]:
    """A new tenant and its plaintext API key (returned once, never stored). `allowed_hosts`: canonical
    outbound allowlist entries (see `adapters.delivery.outbound.canonical_host`). The webhook signing
    secret is stored sealed by `box`: `open_webhook_secret` reads it."""
    validate_tenant_name(name)
    limits = validate_limits(limits)
    api_key = new_api_key()
    tenant = Tenant(
        name=name,
        api_key_hash=hash_api_key(api_key),
        api_key_prefix=api_key[:8],
        webhook_secret=box.seal_text(new_webhook_secret()),
        limits=dict(limits or {}),
        allowed_hosts=list(allowed_hosts),
    )
    with write(session):
        if not insert_ignore(session, Tenant, [row_values(tenant)], ["name"]):
            raise ValidationFailed("name", "already exists")
        return get_tenant(session, tenant_id=tenant.id), api_key


def open_webhook_secret(tenant: Tenant, box: SecretBox) -> str:
    """The tenant's webhook signing secret in clear ("whsec_..."), for signing or showing it to its owner."""
    return box.open_text(tenant.webhook_secret)


def get_tenant(session: Session, *, tenant_id: str) -> Tenant:
    tenant = session.get(Tenant, tenant_id)
    if tenant is None:
        raise NotFound(f"tenant {tenant_id} not found")
    return tenant


def get_tenant_by_name(session: Session, *, name: str) -> Tenant:
    """The tenant named `name`, as the session's instance (names are unique)."""
    found = load(session, Tenant, _BY_NAME, {"name": name})
    if not found:
        raise NotFound(f"tenant {name!r} not found")
    return found[0]


def list_tenants(session: Session) -> list[Tenant]:
    return list(session.exec(select(Tenant).order_by(col(Tenant.name))).all())


def authenticate(session: Session, *, api_key: str) -> Tenant:
    """The tenant owning `api_key`, detached (no session holds it: safe to read after the session is gone,
    never written back by accident); Forbidden when the key is empty or unknown.

    Every API request runs this: one Core SELECT and a model built from the row (the ORM's identity map
    and a detaching copy cost as much as the query)."""
    if not api_key or not isinstance(api_key, str):
        raise Forbidden("missing API key")
    digest = hash_api_key(api_key)
    names, rows = _BY_KEY_HASH.fetch(session, {"digest": digest})
    found = dict(zip(names, rows[0])) if rows else None
    # The lookup is by hash (timing reveals nothing about the key); compare again in constant time.
    if found is None or not hmac.compare_digest(found["api_key_hash"], digest):
        raise Forbidden("invalid API key")
    return Tenant.model_validate(found)


def rotate_api_key(session: Session, *, tenant_id: str) -> tuple[Tenant, str]:
    """A new API key for the tenant (returned once); the old key stops working at once, and with it every
    console session and sign-in link made under it (they carry a tag of the key's hash)."""
    api_key = new_api_key()
    with write(session):
        tenant = get_tenant(session, tenant_id=tenant_id)
        tenant.api_key_hash = hash_api_key(api_key)
        tenant.api_key_prefix = api_key[:8]
        session.add(tenant)
    return get_tenant(session, tenant_id=tenant_id), api_key


def update_limits(session: Session, *, tenant_id: str, changes: dict[str, Any]) -> Tenant:
    """Set (validated) limits of the tenant, the others kept; returns the tenant as stored."""
    checked = validate_limits(changes)
    with write(session):
        tenant = get_tenant(session, tenant_id=tenant_id)
        tenant.limits = {**(tenant.limits or {}), **checked}
        session.add(tenant)
    return get_tenant(session, tenant_id=tenant_id)
