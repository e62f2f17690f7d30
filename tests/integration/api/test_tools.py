"""`/v1/tools`: declare, list, replace and remove tools per tenant; bad declarations are a 422 naming the
field; a loopback target needs the tenant's allowlist; secrets are stored encrypted and never returned."""

from __future__ import annotations

from typing import Any

import pytest
from sqlmodel import select

from storage.models import ToolRecord
from tests.integration.api.conftest import Api
from tests.unit.investigation.tools.samples import billing, status, tickets


def post(api: Api, declaration: dict[str, Any], secret: str | None = None, key: str | None = None) -> Any:
    return api.client.post("/v1/tools", json={"declaration": declaration, "secret": secret},
                           headers=api.auth(key))


def test_declare_list_get_replace_and_remove(api: Api) -> None:
    created = post(api, billing(), secret="tok-123")
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["name"] == "billing_account" and body["has_secret"] is True and "tok-123" not in created.text
    assert post(api, status()).status_code == 201
    listed = api.client.get("/v1/tools", headers=api.auth()).json()["tools"]
    assert [t["name"] for t in listed] == ["billing_account", "service_status"]
    assert "tok-123" not in str(listed)
    replaced = post(api, billing(timeout=3))  # the stored secret is kept
    assert replaced.status_code == 200 and replaced.json()["has_secret"] is True
    assert replaced.json()["revision"] != body["revision"]
    assert (
        api.client.get("/v1/tools/billing_account", headers=api.auth()).json()["declaration"]["timeout"] == 3
    )
    assert api.client.delete("/v1/tools/billing_account", headers=api.auth()).status_code == 204
    assert api.client.get("/v1/tools/billing_account", headers=api.auth()).status_code == 404
    assert api.client.delete("/v1/tools/billing_account", headers=api.auth()).status_code == 404


def test_the_secret_is_encrypted_at_rest(api: Api) -> None:
    assert post(api, billing(), secret="tok-plaintext-123").status_code == 201
    with api.services.session() as session:
        stored = session.exec(select(ToolRecord).where(ToolRecord.name == "billing_account")).one()
    assert stored.secret and "tok-plaintext-123" not in stored.secret


def test_tools_are_per_tenant(api: Api) -> None:
    assert post(api, status()).status_code == 201
    assert api.client.get("/v1/tools", headers=api.auth(api.other_key)).json() == {"tools": []}
    assert api.client.get("/v1/tools/service_status", headers=api.auth(api.other_key)).status_code == 404
    assert api.client.delete("/v1/tools/service_status", headers=api.auth(api.other_key)).status_code == 404


@pytest.mark.parametrize(("declaration", "field", "words"), [
    (billing(url="https://api.acme.test/v1/accounts/{acount}/billing"), "url", "unknown template variable"),
    (billing(params={"account_id": {"schema": {"type": "nope"}, "source": "context.account_id"}}),
     "params.account_id.schema", "invalid JSON Schema"),
    (status(url="http://127.0.0.1:9/v1/status?region={region}"), "url", "loopback"),
    (status(url="http://10.1.2.3/v1/status?region={region}"), "url", "private"),
    (status(url="http://localhost:8080/v1/status?region={region}"), "url", "loopback"),
    (tickets(owner=None), "owner", "parameter ticket comes from the question"),
])
def test_bad_declarations_are_a_422_naming_the_field(api: Api, declaration: dict[str, Any], field: str,
                                                     words: str) -> None:
    response = post(api, declaration)
    assert response.status_code == 422, response.text
    detail = response.json()["detail"][0]
    assert ".".join(map(str, detail["loc"])) == f"body.declaration.{field}" and words in detail["msg"]


def test_auth_needs_a_secret_and_no_auth_refuses_one(api: Api) -> None:
    response = post(api, billing())
    assert response.status_code == 422 and response.json()["detail"][0]["loc"] == ["body", "secret"]
    response = post(api, status(), secret="unused")
    assert response.status_code == 422 and "none" in response.json()["detail"][0]["msg"]


def test_unauthenticated_is_401(api: Api) -> None:
    assert api.client.get("/v1/tools").status_code == 401


def test_the_tenants_allowlist_opens_a_loopback_host(api: Api) -> None:
    from storage import repositories as repo

    local = status(url="http://127.0.0.1:9/v1/status?region={region}")
    assert post(api, local).status_code == 422
    with api.services.session() as session:
        repo.update_allowed_hosts(session, tenant_id=api.tenant_id, add=["127.0.0.1"])
    assert post(api, local).status_code == 201
    assert post(api, local, key=api.other_key).status_code == 422  # another tenant's allowlist is its own
