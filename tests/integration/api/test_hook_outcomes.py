"""Ticket updates through the signed inbound hooks: a macro's `sleuth_*` tag records a rating (one current per
agent), the agent's public reply records the draft's use with its edit ratio, a solved ticket opened again
within 7 days counts as reopened (not after); an unsigned update records nothing; Freshdesk alike."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from app import outcomes
from storage import repositories as repo
from tests.integration.api.conftest import Api
from tests.integration.api.test_hooks import INBOUND, _channels, event_body, post, questions, signed

ANSWER = "Data stays in the Frankfurt region (eu-central-1) for German customers [1]."


@pytest.fixture(autouse=True)
def _loopback_allowed(api: Api) -> None:
    from app.channels import update_allowlist

    update_allowlist(api.services, tenant_id=api.tenant_id, add=["127.0.0.1"], remove=[])


def _answered_ticket(api: Api, zd: str, ticket: int = 35436) -> str:
    body = event_body(ticket=ticket, event=f"evt-{ticket}")
    assert post(api, f"/v1/hooks/zendesk/{zd}", body, signed(body)).status_code == 202
    [inv] = [i for i in questions(api) if i.context.get("ticket_id") == str(ticket)]
    with api.services.session() as session:
        repo.finish_investigation(
            session, investigation_id=inv.id, status="answered", stop_reason="sufficient", answer=ANSWER
        )
    return str(inv.id)


def zendesk_event(kind: str, ticket: int, event: dict[str, Any], actor: str = "9001") -> bytes:
    return json.dumps({"type": f"zen:event-type:ticket.{kind}", "account_id": 1, "id": f"e-{kind}-{ticket}",
                       "time": "2026-12-01T10:00:00Z", "zendesk_event_version": "2022-11-06",
                       "subject": f"zen:ticket:{ticket}", "detail": {"id": str(ticket), "actor_id": actor},
                       "event": event}).encode()


def _send(api: Api, zd: str, body: bytes) -> Any:
    response = post(api, f"/v1/hooks/zendesk/{zd}", body, signed(body))
    assert response.status_code == 200, response.text
    return response.json()


def test_a_macro_tag_records_one_current_rating_per_agent(api: Api) -> None:
    zd, _ = _channels(api)
    inv = _answered_ticket(api, zd)
    got = _send(
        api,
        zd,
        zendesk_event("tags_changed", 35436, {"tags": {"added": ["vip", "sleuth_wrong"], "removed": []}}),
    )
    assert got["recorded"]["investigation_id"] == inv and got["recorded"]["ratings"] == ["wrong"]
    _send(
        api,
        zd,
        zendesk_event(
            "tags_changed", 35436, {"tags": {"added": ["sleuth_helpful"], "removed": ["sleuth_wrong"]}}
        ),
    )
    with api.services.session() as session:
        current = repo.list_feedback(session, investigation_id=inv)
        history = repo.list_feedback(session, investigation_id=inv, current_only=False)
    assert [(f.rater, f.rating, f.source) for f in current] == [
        ("zendesk:agent 9001", "helpful", "zendesk_tag")
    ]
    assert len(history) == 2
    # Another ticket's tag, or a ticket Sleuth never saw, records nothing.
    assert _send(api, zd, zendesk_event("tags_changed", 999, {"tags": {"added": ["sleuth_wrong"]}})) == {
        "ignored": True}


def test_an_unsigned_update_records_nothing(api: Api) -> None:
    zd, _ = _channels(api)
    inv = _answered_ticket(api, zd)
    body = zendesk_event("tags_changed", 35436, {"tags": {"added": ["sleuth_wrong"]}})
    assert post(api, f"/v1/hooks/zendesk/{zd}", body, signed(body, secret="forged")).status_code == 401
    with api.services.session() as session:
        assert repo.list_feedback(session, investigation_id=inv, current_only=False) == []


def test_the_agents_public_reply_says_how_the_draft_was_used(api: Api) -> None:
    zd, _ = _channels(api)
    inv = _answered_ticket(api, zd)
    private = {
        "comment": {
            "id": "1",
            "body": "internal",
            "is_public": False,
            "author": {"id": "9001", "is_staff": True},
        }
    }
    assert _send(api, zd, zendesk_event("comment_added", 35436, private))["recorded"]["outcome"] == {}
    customer = {
        "comment": {"id": "2", "body": "thanks", "is_public": True, "author": {"id": "5", "is_staff": False}}
    }
    assert _send(api, zd, zendesk_event("comment_added", 35436, customer))["recorded"]["outcome"] == {}
    reply = {
        "comment": {
            "id": "3",
            "is_public": True,
            "author": {"id": "9001", "is_staff": True},
            "body": "Hi Jane, data stays in the Frankfurt region (eu-central-1) for German customers.",
        }
    }
    got = _send(api, zd, zendesk_event("comment_added", 35436, reply))["recorded"]["outcome"]
    assert got["draft"] == "edited" and 0.05 < got["edit_ratio"] < 0.3
    with api.services.session() as session:
        row = repo.get_outcome(session, investigation_id=inv)
    assert row is not None and (row.helpdesk, row.ticket_id) == ("zendesk", "35436")


def test_reopened_within_seven_days_only(api: Api) -> None:
    zd, _ = _channels(api)
    first, second = _answered_ticket(api, zd, 501), _answered_ticket(api, zd, 502)
    with api.services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=api.tenant_id)
    solved_at = datetime(2026, 12, 1, 9, 0)

    def status(ticket: int, previous: str, current: str, at: datetime) -> dict[str, Any]:
        update = outcomes.TicketUpdate(ticket, status=current, previous_status=previous)
        return outcomes.apply_update(
            api.services, tenant=tenant, kind="zendesk", channel_id=zd, update=update, now=at
        ).outcome

    assert status(501, "open", "solved", solved_at) == {
        "draft": "unused",
        "edit_ratio": None,
        "reopened": False,
    }
    assert status(501, "solved", "open", solved_at + timedelta(days=6, hours=23))["reopened"] is True
    status(502, "open", "solved", solved_at)
    assert status(502, "solved", "open", solved_at + timedelta(days=7, minutes=1)) == {}  # nothing to record
    with api.services.session() as session:
        a, b = (repo.get_outcome(session, investigation_id=i) for i in (first, second))
    assert a is not None and a.reopened and b is not None and not b.reopened


def test_freshdesk_automation_updates(api: Api) -> None:
    _, fd = _channels(api)
    new = json.dumps(
        {"ticket_id": 88, "subject": "Data residency", "description": "Where is our data?"}
    ).encode()
    headers = {"X-Sleuth-Secret": INBOUND, "Content-Type": "application/json"}
    assert post(api, f"/v1/hooks/freshdesk/{fd}", new, headers).status_code == 202
    [inv] = questions(api)
    with api.services.session() as session:
        repo.finish_investigation(
            session, investigation_id=inv.id, status="answered", stop_reason="sufficient", answer=ANSWER
        )
    update = json.dumps(
        {
            "ticket_id": 88,
            "event": "reply_added",
            "status": "Resolved",
            "tags": "sleuth_partly, vip",
            "latest_public_comment": ANSWER.replace(" [1]", ""),
            "agent_email": "amy@acme.test",
        }
    ).encode()
    got = post(api, f"/v1/hooks/freshdesk/{fd}", update, headers)
    assert got.status_code == 200, got.text
    assert got.json()["recorded"]["ratings"] == ["partly"]
    assert got.json()["recorded"]["outcome"]["draft"] == "unchanged"
    assert len(questions(api)) == 1  # an update starts no investigation
    wrong = post(api, f"/v1/hooks/freshdesk/{fd}", update, {"X-Sleuth-Secret": "nope"})
    assert wrong.status_code == 401
