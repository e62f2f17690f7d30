"""Tenants and API keys on SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import hashlib

import pytest
from sqlalchemy import inspect
from sqlmodel import Session, select

from investigation.errors import Forbidden, NotFound, ValidationFailed
from storage.models import Tenant
from storage.repositories import authenticate, create_tenant, get_tenant, get_tenant_by_name, list_tenants

pytestmark = pytest.mark.integration


def test_create_tenant_returns_the_key_once_and_stores_only_its_hash(session: Session) -> None:
    tenant, api_key = create_tenant(session, name="acme", limits={"llm_tokens_per_day": 1000})
    assert api_key.startswith("sk_") and len(api_key) > 40
    assert tenant.api_key_hash == hashlib.sha256(api_key.encode()).hexdigest()
    assert tenant.api_key_prefix == api_key[:8]
    assert tenant.limits == {"llm_tokens_per_day": 1000}
    assert tenant.webhook_secret.startswith("whsec_")
    assert len(base64.b64decode(tenant.webhook_secret.removeprefix("whsec_"))) == 24
    stored = session.exec(select(Tenant)).one()
    assert api_key not in {str(v) for v in stored.model_dump().values()}


def test_each_tenant_gets_its_own_key_and_secret(session: Session) -> None:
    a, key_a = create_tenant(session, name="a")
    b, key_b = create_tenant(session, name="b")
    assert key_a != key_b and a.webhook_secret != b.webhook_secret and a.id != b.id


def test_invalid_names_are_refused(session: Session) -> None:
    for name in ["", "has space", "x" * 101, "semi;colon", "ünï"]:
        with pytest.raises(ValidationFailed) as info:
            create_tenant(session, name=name)
        assert info.value.field == "name"
    assert list_tenants(session) == []


def test_an_existing_name_is_refused(session: Session) -> None:
    create_tenant(session, name="acme.support-1_x")
    with pytest.raises(ValidationFailed) as info:
        create_tenant(session, name="acme.support-1_x")
    assert (info.value.field, info.value.message) == ("name", "already exists")
    assert len(list_tenants(session)) == 1


def test_lookups(session: Session) -> None:
    acme, _ = create_tenant(session, name="acme")
    create_tenant(session, name="globex")
    assert get_tenant(session, tenant_id=acme.id).name == "acme"
    found = get_tenant_by_name(session, name="acme")
    assert found.id == acme.id and found in session  # the session's instance, as an ORM select gives
    assert found.model_dump() == get_tenant(session, tenant_id=acme.id).model_dump()
    assert [t.name for t in list_tenants(session)] == ["acme", "globex"]
    with pytest.raises(NotFound):
        get_tenant(session, tenant_id="nope")
    with pytest.raises(NotFound):
        get_tenant_by_name(session, name="nope")


def test_authenticate(session: Session) -> None:
    acme, key = create_tenant(session, name="acme")
    globex, other_key = create_tenant(session, name="globex")
    assert authenticate(session, api_key=key).id == acme.id
    assert authenticate(session, api_key=other_key).id == globex.id
    found = authenticate(session, api_key=key)  # detached: no session holds it, every field as stored
    assert inspect(found).transient and found not in session
    assert found.model_dump() == get_tenant(session, tenant_id=acme.id).model_dump()
    for bad in ["", key + "x", key[:-1], "sk_unknown", acme.api_key_hash]:
        with pytest.raises(Forbidden):
            authenticate(session, api_key=bad)
