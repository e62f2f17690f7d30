"""Inbound helpdesk hooks with real signatures: good, bad, stale, replayed; oversize and malformed bodies;
unknown channels and another tenant's channel. Nothing is recorded unless the request is authentic."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from app.channels import add_channel
from app.hooks import zendesk_signature
from storage import repositories as repo
from tests.integration.api.conftest import Api, count_investigations, new_tenant


@pytest.fixture(autouse=True)
def _loopback_allowed(api: Api) -> None:
    """The tests' helpdesks and receivers listen on 127.0.0.1: the tenant allowlists it."""
    from app.channels import update_allowlist

    update_allowlist(api.services, tenant_id=api.tenant_id, add=["127.0.0.1"], remove=[])

SIGNING = "zd-signing-secret"
INBOUND = "fd-inbound-secret"


def _tenant(api: Api, tenant_id: str | None = None) -> Any:
    with api.services.session() as session:
        return repo.get_tenant(session, tenant_id=tenant_id or api.tenant_id)


def _channels(api: Api, tenant_id: str | None = None) -> tuple[str, str]:
    tenant = _tenant(api, tenant_id)
    zd = add_channel(api.services, tenant=tenant, data={
        "name": "zd", "type": "zendesk", "subdomain": "acme", "email": "bot@acme.test", "token": "t",
        "signing_secret": SIGNING, "base_url": "http://127.0.0.1:9"})
    fd = add_channel(api.services, tenant=tenant, data={
        "name": "fd", "type": "freshdesk", "domain": "acme", "api_key": "k", "inbound_secret": INBOUND,
        "base_url": "http://127.0.0.1:9"})
    return zd["id"], fd["id"]


def event_body(ticket: int = 35436, event: str = "01HN-EVT-1", **detail: Any) -> bytes:
    return json.dumps(
        {
            "type": "zen:event-type:ticket.created",
            "account_id": 88888888,
            "id": event,
            "time": "2026-11-30T12:00:00Z",
            "zendesk_event_version": "2022-11-06",
            "subject": f"zen:ticket:{ticket}",
            "detail": {
                "id": str(ticket),
                "subject": "Data residency",
                "status": "NEW",
                "description": "<p>Which region keeps our data in <b>Germany</b>?</p>"
                "<blockquote>old thread</blockquote><p>--<br>Jane</p>",
                **detail,
            },
            "event": {},
        }
    ).encode()


def signed(body: bytes, *, secret: str = SIGNING, at: datetime | None = None) -> dict[str, str]:
    stamp = (at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"X-Zendesk-Webhook-Signature": zendesk_signature(secret, stamp, body),
            "X-Zendesk-Webhook-Signature-Timestamp": stamp, "Content-Type": "application/json"}


def post(api: Api, path: str, body: bytes, headers: dict[str, str]) -> Any:
    return api.client.post(path, content=body, headers=headers)


def questions(api: Api) -> list[Any]:
    from sqlmodel import select

    from storage.models import Investigation

    with api.services.session() as session:
        return list(session.exec(select(Investigation).where(Investigation.tenant_id == api.tenant_id)).all())


def test_signed_ticket_created_event_starts_one_investigation(api: Api) -> None:
    zd, _ = _channels(api)
    body = event_body()
    response = post(api, f"/v1/hooks/zendesk/{zd}", body, signed(body))
    assert response.status_code == 202, response.text
    [inv] = questions(api)
    assert response.json() == {"id": inv.id, "created": True}
    assert inv.question == "Data residency\n\nWhich region keeps our data in Germany?"
    assert inv.callback == {"type": "zendesk", "channel": "zd", "ticket_id": 35436, "public": False,
                            "channel_id": zd}
    assert api.launcher.calls == [inv.id]  # the task gets the id, never the ticket text
    replay = post(api, f"/v1/hooks/zendesk/{zd}", body, signed(body))  # Zendesk retries the same event
    assert (replay.status_code, replay.json()["id"]) == (200, inv.id)
    assert len(questions(api)) == 1 and api.launcher.calls == [inv.id]


def test_trigger_body_is_accepted_and_keyed_on_the_ticket(api: Api) -> None:
    zd, _ = _channels(api)
    body = json.dumps(
        {
            "ticket": {
                "id": "77",
                "subject": "Refund",
                "description": "Can I get a refund?\n\nOn Mon, Bob wrote:\n> old",
                "requester": {"email": "c@customer.example.com", "name": "C"},
            }
        }
    ).encode()
    assert post(api, f"/v1/hooks/zendesk/{zd}", body, signed(body)).status_code == 202
    again = json.dumps({"ticket": {"id": "77", "subject": "Refund", "description": "changed"}}).encode()
    assert post(api, f"/v1/hooks/zendesk/{zd}", again, signed(again)).status_code == 200
    [inv] = questions(api)
    assert inv.question == "Refund\n\nCan I get a refund?"
    assert inv.context["requester"] == {"email": "c@customer.example.com", "name": "C"}


@pytest.mark.parametrize("case", ["bad", "wrong-secret", "stale", "future", "missing", "tampered"])
def test_inauthentic_zendesk_requests_are_401_and_record_nothing(api: Api, case: str) -> None:
    zd, _ = _channels(api)
    body = event_body()
    headers = {
        "bad": {**signed(body), "X-Zendesk-Webhook-Signature": "AAAA"},
        "wrong-secret": signed(body, secret="other"),
        "stale": signed(body, at=datetime.fromtimestamp(time.time() - 360, UTC)),
        "future": signed(body, at=datetime.fromtimestamp(time.time() + 360, UTC)),
        "missing": {"Content-Type": "application/json"},
        "tampered": signed(body),
    }[case]
    sent = body.replace(b"Germany", b"Austria") if case == "tampered" else body
    response = post(api, f"/v1/hooks/zendesk/{zd}", sent, headers)
    assert response.status_code == 401, response.text
    assert count_investigations(api.services, api.tenant_id) == 0 and api.launcher.calls == []


def test_another_tenants_channel_and_unknown_ids(api: Api) -> None:
    mine, _ = _channels(api)
    other_id, _ = new_tenant(api.services, allowed_hosts=["127.0.0.1"])
    with api.services.session() as session:
        other = repo.get_tenant(session, tenant_id=other_id)
    theirs = add_channel(api.services, tenant=other, data={
        "name": "zd", "type": "zendesk", "subdomain": "other", "email": "x@other.test", "token": "t",
        "signing_secret": "their-secret", "base_url": "http://127.0.0.1:9"})["id"]
    body = event_body()
    # Signed with my secret, posted to their channel: not authentic there.
    assert post(api, f"/v1/hooks/zendesk/{theirs}", body, signed(body)).status_code == 401
    assert post(api, "/v1/hooks/zendesk/ch_doesnotexist", body, signed(body)).status_code == 404
    _, fd = _channels_of_type(api)
    assert post(api, f"/v1/hooks/zendesk/{fd}", body, signed(body)).status_code == 404  # a freshdesk channel
    assert count_investigations(api.services, api.tenant_id) == 0
    assert count_investigations(api.services, other_id) == 0
    assert post(api, f"/v1/hooks/zendesk/{mine}", body, signed(body)).status_code == 202


def _channels_of_type(api: Api) -> tuple[str, str]:
    with api.services.session() as session:
        found = {c.name: c.id for c in repo.list_channels(session, tenant_id=api.tenant_id)}
    return found["zd"], found["fd"]


def test_oversize_and_malformed_bodies(api: Api) -> None:
    zd, fd = _channels(api)
    huge = event_body(description="x" * 70_000)
    assert post(api, f"/v1/hooks/zendesk/{zd}", huge, signed(huge)).status_code == 413
    long_text = event_body(description="word " * 1000)  # under the body cap, over the question cap
    assert post(api, f"/v1/hooks/zendesk/{zd}", long_text, signed(long_text)).status_code == 413
    for bad in (b"{not json", b"[1, 2]", json.dumps({"ticket": {"subject": "no id"}}).encode(),
                json.dumps({"ticket": {"id": "-3", "subject": "s"}}).encode(),
                json.dumps({"ticket": {"id": 5, "subject": "", "description": "<p> </p>"}}).encode()):
        response = post(api, f"/v1/hooks/zendesk/{zd}", bad, signed(bad))
        assert response.status_code == 422, (bad, response.text)
    other_event = json.dumps(
        {"type": "zen:event-type:ticket.status_changed", "id": "e", "detail": {"id": "1"}}
    ).encode()
    assert post(api, f"/v1/hooks/zendesk/{zd}", other_event, signed(other_event)).json() == {"ignored": True}
    assert post(api, f"/v1/hooks/freshdesk/{fd}", b"{}", {"X-Sleuth-Secret": INBOUND}).status_code == 422
    assert count_investigations(api.services, api.tenant_id) == 0


def test_freshdesk_hook_needs_the_inbound_secret(api: Api) -> None:
    _, fd = _channels(api)
    body = json.dumps(
        {
            "ticket_id": "456",
            "subject": "SSO",
            "description": "<div>Does the Team plan include SSO?</div>",
            "requester_email": "c@customer.example.com",
        }
    ).encode()
    for headers in ({}, {"X-Sleuth-Secret": "wrong"}, {"X-Sleuth-Secret": INBOUND + "x"}):
        assert post(api, f"/v1/hooks/freshdesk/{fd}", body, headers).status_code == 401
    assert count_investigations(api.services, api.tenant_id) == 0
    first = post(api, f"/v1/hooks/freshdesk/{fd}", body, {"X-Sleuth-Secret": INBOUND})
    assert first.status_code == 202
    assert post(api, f"/v1/hooks/freshdesk/{fd}", body, {"X-Sleuth-Secret": INBOUND}).status_code == 200
    [inv] = questions(api)
    assert inv.question == "SSO\n\nDoes the Team plan include SSO?"
    assert inv.callback["type"] == "freshdesk" and inv.callback["ticket_id"] == 456
