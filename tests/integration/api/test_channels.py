"""``/v1/channels`` and channel callbacks at intake: secrets masked, outbound rules applied, a callback
naming a channel must name one of the tenant's, of the right type; ``/v1/deliveries?status=dead``."""

from __future__ import annotations

from typing import Any

import pytest

from storage import repositories as repo
from tests.integration.api.conftest import Api, count_investigations


@pytest.fixture(autouse=True)
def _loopback_allowed(api: Api) -> None:
    """The tests' helpdesks and receivers listen on 127.0.0.1: the tenant allowlists it."""
    from app.channels import update_allowlist

    update_allowlist(api.services, tenant_id=api.tenant_id, add=["127.0.0.1"], remove=[])

SMTP = {"name": "mail", "type": "smtp", "host": "127.0.0.1", "port": 2525, "username": "bot",
        "password": "hunter2-secret", "starttls": True, "from": "sleuth@acme.test"}
ZENDESK = {"name": "zd", "type": "zendesk", "subdomain": "acme", "email": "bot@acme.test",
           "token": "zd-token-secret", "signing_secret": "sign-secret", "base_url": "http://127.0.0.1:9"}


def test_add_list_remove_with_secrets_masked(api: Api) -> None:
    created = api.client.post("/v1/channels", json=SMTP, headers=api.auth())
    assert created.status_code == 201, created.text
    zd = api.client.post("/v1/channels", json=ZENDESK, headers=api.auth()).json()
    assert zd["inbound_url"] == f"/v1/hooks/zendesk/{zd['id']}"
    listed = api.client.get("/v1/channels", headers=api.auth())
    text = listed.text + created.text + str(zd)
    for secret in ("hunter2-secret", "zd-token-secret", "sign-secret"):
        assert secret not in text
    names = {c["name"]: c for c in listed.json()["channels"]}
    assert (
        names["mail"]["secrets"] == {"password": "********"} and names["mail"]["from"] == "sleuth@acme.test"
    )
    assert names["zd"]["secrets"] == {"signing_secret": "********", "token": "********"}
    assert api.client.get("/v1/channels", headers=api.auth(api.other_key)).json() == {"channels": []}
    assert api.client.post("/v1/channels", json=SMTP, headers=api.auth()).status_code == 422  # duplicate
    assert api.client.delete("/v1/channels/mail", headers=api.auth(api.other_key)).status_code == 404
    assert api.client.delete("/v1/channels/mail", headers=api.auth()).status_code == 204
    assert [c["name"] for c in api.client.get("/v1/channels", headers=api.auth()).json()["channels"]] == [
        "zd"
    ]


@pytest.mark.parametrize(("body", "field"), [
    ({**SMTP, "type": "pigeon"}, "channel"),
    ({**SMTP, "from": "nobody"}, "from"),
    ({**SMTP, "ssl": True}, "channel"),
    ({**ZENDESK, "subdomain": "a.b"}, "subdomain"),
    ({**ZENDESK, "base_url": "ftp://x"}, "base_url"),
    ({k: v for k, v in ZENDESK.items() if k != "token"}, "token"),
])
def test_invalid_channels_are_422(api: Api, body: dict[str, Any], field: str) -> None:
    response = api.client.post("/v1/channels", json=body, headers=api.auth())
    assert response.status_code == 422, response.text
    assert field in str(response.json()["detail"])


def test_private_channel_endpoints_need_the_allowlist(api: Api) -> None:
    for body in ({**SMTP, "host": "10.0.0.5"}, {**ZENDESK, "base_url": "http://169.254.169.254"},
                 {**ZENDESK, "base_url": "http://0x7f.1:9"}):
        response = api.client.post("/v1/channels", json=body, headers=api.auth(api.other_key))
        assert response.status_code == 422 and "allow-host" in response.text, response.text


def test_channel_callbacks_are_checked_at_intake(api: Api) -> None:
    api.client.post("/v1/channels", json=SMTP, headers=api.auth())
    api.client.post("/v1/channels", json=ZENDESK, headers=api.auth(api.other_key))  # refused: not allowlisted
    cases = [
        ({"type": "email", "channel": "nope", "to": ["a@example.com"]}, "channel"),
        ({"type": "zendesk", "channel": "mail", "ticket_id": 5}, "channel"),  # an smtp channel
        ([{"type": "webhook", "url": "https://example.com/h"},
          {"type": "webhook", "url": "http://169.254.169.254/x"}], "url"),
    ]
    for callback, field in cases:
        response = api.post({"question": "q?", "callback": callback})
        assert response.status_code == 422, response.text
        assert field in response.json()["detail"][0]["loc"], response.json()
    other = api.post(
        {"question": "q?", "callback": {"type": "email", "channel": "mail", "to": ["a@example.com"]}},
        key=api.other_key,
    )
    assert other.status_code == 422  # another tenant's channel name means nothing here
    assert count_investigations(api.services, api.tenant_id) == 0
    ok = api.post(
        {
            "question": "q?",
            "callback": [
                {"type": "email", "channel": "mail", "to": ["a@example.com"]},
                {"type": "webhook", "url": "http://127.0.0.1:9/h"},
            ],
        }
    )
    assert ok.status_code == 202, ok.text
    deliveries = api.client.get(f"/v1/investigations/{ok.json()['id']}/deliveries", headers=api.auth()).json()
    assert [(d["channel"], d["slot"]) for d in deliveries["deliveries"]] == [("email", "0:email"),
                                                                            ("webhook", "1:webhook")]
    assert deliveries["deliveries"][0]["target"]["channel_id"].startswith("ch_")


def test_dead_deliveries_are_listed_with_their_last_error(api: Api) -> None:
    ok = api.post({"question": "q?", "callback": {"type": "webhook", "url": "http://127.0.0.1:9/h"}})
    [delivery] = api.client.get(f"/v1/investigations/{ok.json()['id']}/deliveries",
                                headers=api.auth()).json()["deliveries"]
    with api.services.session() as session:
        repo.record_attempt(session, delivery_id=delivery["id"], number=1, status_code=None,
                            error="could not reach receiver", duration_ms=3.0)
        repo.mark_delivery(
            session, delivery_id=delivery["id"], status="dead", error="could not reach receiver"
        )
    dead = api.client.get("/v1/deliveries?status=dead", headers=api.auth()).json()["deliveries"]
    assert [(d["id"], d["last_error"]) for d in dead] == [(delivery["id"], "could not reach receiver")]
    assert api.client.get("/v1/deliveries?status=dead", headers=api.auth(api.other_key)).json() == {
        "deliveries": []
    }
    assert api.client.get("/v1/deliveries?status=lost", headers=api.auth()).status_code == 422
    log = api.client.get(f"/v1/investigations/{ok.json()['id']}/deliveries", headers=api.auth()).json()
    assert log["deliveries"][0]["attempt_log"][0]["error"] == "could not reach receiver"
    assert (
        api.client.post(f"/v1/deliveries/{delivery['id']}/redeliver", headers=api.auth()).status_code == 202
    )
    assert api.redeliverer.calls == [delivery["id"]]
