"""Tenants and API keys on SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import hashlib

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import inspect, text
from sqlmodel import Session, select

from investigation.errors import Forbidden, NotFound, ValidationFailed
from storage.models import Tenant
from storage.repositories import (
    authenticate,
    create_tenant,
    get_tenant,
    get_tenant_by_name,
    list_tenants,
    open_webhook_secret,
)
from storage.secrets import SecretBox, SecretKeyError


def test_create_tenant_returns_the_key_once_and_stores_only_its_hash(
    session: Session, secret_box: SecretBox
) -> None:
    tenant, api_key = create_tenant(session, box=secret_box, name="acme", limits={"llm_tokens_per_day": 1000})
    assert api_key.startswith("sk_") and len(api_key) > 40
    assert tenant.api_key_hash == hashlib.sha256(api_key.encode()).hexdigest()
    assert tenant.api_key_prefix == api_key[:8]
    assert tenant.limits == {"llm_tokens_per_day": 1000}
    secret = open_webhook_secret(tenant, secret_box)
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 24
    stored = session.exec(select(Tenant)).one()
    assert api_key not in {str(v) for v in stored.model_dump().values()}


def test_the_webhook_secret_is_stored_encrypted(session: Session, secret_box: SecretBox) -> None:
    tenant, _ = create_tenant(session, box=secret_box, name="acme")
    secret = open_webhook_secret(tenant, secret_box)
    (row,) = session.connection().execute(text("SELECT * FROM tenant")).all()
    assert not any("whsec_" in str(value) or secret in str(value) for value in row)
    with pytest.raises(SecretKeyError):  # another deployment's key reads nothing
        open_webhook_secret(tenant, SecretBox(Fernet.generate_key()))


def test_each_tenant_gets_its_own_key_and_secret(session: Session, secret_box: SecretBox) -> None:
    a, key_a = create_tenant(session, box=secret_box, name="a")
    b, key_b = create_tenant(session, box=secret_box, name="b")
    assert key_a != key_b and a.id != b.id
    assert open_webhook_secret(a, secret_box) != open_webhook_secret(b, secret_box)


def test_invalid_names_are_refused(session: Session, secret_box: SecretBox) -> None:
    for name in ["", "has space", "x" * 101, "semi;colon", "ünï"]:
        with pytest.raises(ValidationFailed) as info:
            create_tenant(session, box=secret_box, name=name)
        assert info.value.field == "name"
    assert list_tenants(session) == []


def test_an_existing_name_is_refused(session: Session, secret_box: SecretBox) -> None:
    create_tenant(session, box=secret_box, name="acme.support-1_x")
    with pytest.raises(ValidationFailed) as info:
        create_tenant(session, box=secret_box, name="acme.support-1_x")
    assert (info.value.field, info.value.message) == ("name", "already exists")
    assert len(list_tenants(session)) == 1


def test_lookups(session: Session, secret_box: SecretBox) -> None:
    acme, _ = create_tenant(session, box=secret_box, name="acme")
    create_tenant(session, box=secret_box, name="globex")
    assert get_tenant(session, tenant_id=acme.id).name == "acme"
    found = get_tenant_by_name(session, name="acme")
    assert found.id == acme.id and found in session  # the session's instance, as an ORM select gives
    assert found.model_dump() == get_tenant(session, tenant_id=acme.id).model_dump()
    assert [t.name for t in list_tenants(session)] == ["acme", "globex"]
    with pytest.raises(NotFound):
        get_tenant(session, tenant_id="nope")
    with pytest.raises(NotFound):
        get_tenant_by_name(session, name="nope")


def test_authenticate(session: Session, secret_box: SecretBox) -> None:
    acme, key = create_tenant(session, box=secret_box, name="acme")
    globex, other_key = create_tenant(session, box=secret_box, name="globex")
    assert authenticate(session, api_key=key).id == acme.id
    assert authenticate(session, api_key=other_key).id == globex.id
    found = authenticate(session, api_key=key)  # detached: no session holds it, every field as stored
    assert inspect(found).transient and found not in session
    assert found.model_dump() == get_tenant(session, tenant_id=acme.id).model_dump()
    for bad in ["", key + "x", key[:-1], "sk_unknown", acme.api_key_hash]:
        with pytest.raises(Forbidden):
            authenticate(session, api_key=bad)
