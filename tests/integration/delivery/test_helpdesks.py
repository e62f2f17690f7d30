"""Zendesk and Freshdesk channels against strict local API servers: documented shapes and auth, one
note per delivery, 429 + Retry-After, 5xx and timeouts (with the look-before-repost), 401/404 dead."""

from __future__ import annotations

import html
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlmodel import select

from bootstrap import Services
from storage import repositories as repo
from storage.models import Channel
from tasks import delivery_channels
from tasks.delivery_step import attempt_delivery
from tests.integration.delivery.helpers import (
    add_channel,
    attempts,
    delivery,
    finished,
    new_tenant,
)
from tests.support.helpdesks import FreshdeskFake, ZendeskFake

TOKEN, API_KEY = "zd-token-123", "fd-key-456"


@pytest.fixture()
def services_settings() -> dict[str, Any]:
    return {"webhook_timeout": 0.5, "webhook_backoff_max": 5.0, "webhook_max_attempts": 4}


@pytest.fixture(params=["zendesk", "freshdesk"])
def desk(request: pytest.FixtureRequest) -> Iterator[ZendeskFake | FreshdeskFake]:
    fake: ZendeskFake | FreshdeskFake = (
        ZendeskFake("bot@acme.test", TOKEN, {123, 124})
        if request.param == "zendesk"
        else FreshdeskFake(API_KEY, {123, 124})
    )
    yield fake
    fake.close()


def kind(desk: Any) -> str:
    return "zendesk" if isinstance(desk, ZendeskFake) else "freshdesk"


def setup(services: Services, desk: Any, *, tickets: list[int] = [123], public: bool | None = None,  # noqa: B006
          token: str | None = None) -> list[str]:
    tenant = new_tenant(services)
    if kind(desk) == "zendesk":
        add_channel(services, tenant, name="desk", type="zendesk", subdomain="acme", email="bot@acme.test",
                    token=token or TOKEN, base_url=desk.base_url)
    else:
        add_channel(services, tenant, name="desk", type="freshdesk", domain="acme", api_key=token or API_KEY,
                    base_url=desk.base_url)
    ids = []
    for ticket in tickets:
        callback: dict[str, Any] = {"type": kind(desk), "channel": "desk", "ticket_id": ticket}
        if public is not None:
            callback["public"] = public
        ids += finished(services, tenant, callback)[1]
    return ids


def body_of(note: dict[str, Any]) -> str:
    return str(note.get("html_body") or note.get("body"))


def test_one_internal_note_with_the_documented_shape(services: Services, desk: Any) -> None:
    [delivery_id] = setup(services, desk)
    outcome = attempt_delivery(services, delivery_id)
    assert (outcome.status, outcome.attempt) == ("delivered", 1)
    [note] = desk.notes[123]
    text = html.unescape(body_of(note))
    assert f"Sleuth ref {delivery_id}" in text and "Frankfurt region" in text and "<ol>" in text
    if kind(desk) == "zendesk":
        assert note["public"] is False and desk.tags[123] == ["sleuth_answered"]
    else:
        assert note["private"] is True
    [logged] = attempts(services, delivery_id)
    assert logged.status_code in (200, 201) and "ticket 123" in (logged.detail or "")
    assert attempt_delivery(services, delivery_id).status == "skipped"
    assert desk.writes() == 1


def test_zendesk_public_reply_on_request(services: Services) -> None:
    desk = ZendeskFake("bot@acme.test", TOKEN, {123})
    try:
        [delivery_id] = setup(services, desk, public=True)
        assert attempt_delivery(services, delivery_id).status == "delivered"
        assert desk.notes[123][0]["public"] is True
    finally:
        desk.close()


def test_secrets_are_encrypted_at_rest_and_never_in_the_view(services: Services, desk: Any) -> None:
    setup(services, desk)
    with services.session() as session:
        [tenant_channel] = session.exec(select(Channel)).all()
        assert TOKEN not in tenant_channel.secrets and API_KEY not in tenant_channel.secrets
        view = repo.channel_view(tenant_channel)
    assert view["secrets"] in ({"token": "********"}, {"api_key": "********"})
    assert TOKEN not in str(view) and API_KEY not in str(view)


def _run_until_settled(services: Services, ids: list[str], limit: float = 30.0) -> dict[str, int]:
    """Attempt every pending delivery until all are settled, waiting out what the channel asks for."""
    deadline = time.monotonic() + limit
    pending = list(ids)
    paced = 0
    while pending and time.monotonic() < deadline:
        for delivery_id in list(pending):
            outcome = attempt_delivery(services, delivery_id)
            if outcome.status in ("delivered", "dead", "skipped"):
                pending.remove(delivery_id)
            elif outcome.retry_in:
                paced += 1
                time.sleep(min(outcome.retry_in, 0.25))
    assert not pending, pending
    return {"paced": paced}


def test_429_retry_after_holds_the_whole_channel(services: Services, desk: Any) -> None:
    ids = setup(services, desk, tickets=[123, 124])
    desk.cues = [(429, {"Retry-After": "1"})]
    # the second attempt comes within the hold, however slow the host
    with pytest.MonkeyPatch.context() as frozen:
        now = time.time()
        frozen.setattr(delivery_channels, "clock", lambda: now)
        first = attempt_delivery(services, ids[0])
        assert (first.status, first.retry_in, first.attempt) == ("pending", 1.0, 1)
        held = attempt_delivery(services, ids[1])  # same channel: waits without calling the helpdesk
        assert held.status == "pending" and 0 < (held.retry_in or 0) <= 1.0 and held.attempt == 0
    assert len(desk.requests) == 1
    _run_until_settled(services, ids)
    assert [delivery(services, d).status for d in ids] == ["delivered", "delivered"]
    assert [len(desk.notes[t]) for t in (123, 124)] == [1, 1]
    assert [a.status_code for a in attempts(services, ids[0])] == [
        429,
        200 if kind(desk) == "zendesk" else 201,
    ]


def test_5xx_is_retried_and_looks_before_posting_again(services: Services, desk: Any) -> None:
    [delivery_id] = setup(services, desk)
    desk.cues = [(502, {})]
    assert attempt_delivery(services, delivery_id).status == "pending"
    assert attempts(services, delivery_id)[0].uncertain is True
    assert attempt_delivery(services, delivery_id).status == "delivered"
    methods = [r["method"] for r in desk.requests]
    assert methods == ["PUT" if kind(desk) == "zendesk" else "POST", "GET", methods[0]]
    assert len(desk.notes[123]) == 1


def test_timeout_after_the_note_was_stored_posts_nothing_more(services: Services, desk: Any) -> None:
    [delivery_id] = setup(services, desk)
    desk.hold_after_write = 1.0  # stored, but the answer comes after the 0.5 s timeout
    first = attempt_delivery(services, delivery_id)
    assert first.status == "pending" and "did not answer" in (attempts(services, delivery_id)[0].error or "")
    desk.hold_after_write = 0.0
    second = attempt_delivery(services, delivery_id)
    assert (second.status, second.attempt) == ("delivered", 2)
    assert len(desk.notes[123]) == 1 and desk.writes() == 1
    assert "not posted again" in (attempts(services, delivery_id)[1].detail or "")


def test_bad_credentials_and_missing_tickets_are_dead_at_once(services: Services, desk: Any) -> None:
    [bad_key] = setup(services, desk, token="wrong")
    assert attempt_delivery(services, bad_key).status == "dead"
    assert "rejected the API credentials" in (delivery(services, bad_key).last_error or "")
    [missing] = setup(services, desk, tickets=[999])
    assert attempt_delivery(services, missing).status == "dead"
    assert "ticket 999 does not exist" in (delivery(services, missing).last_error or "")
    desk.cues = [(401, {})]
    [cued] = setup(services, desk)
    assert attempt_delivery(services, cued).status == "dead"
    assert desk.writes() == 3 and all(not n for n in desk.notes.values())  # one try each, no retry


def test_low_rate_limit_remainder_slows_the_channel_before_a_429(services: Services) -> None:
    desk = ZendeskFake("bot@acme.test", TOKEN, {123, 124})
    desk.headers = {"X-Rate-Limit": "700", "X-Rate-Limit-Remaining": "3"}
    try:
        ids = setup(services, desk, tickets=[123, 124])
        assert attempt_delivery(services, ids[0]).status == "delivered"
        held = attempt_delivery(services, ids[1])
        assert held.status == "pending" and held.retry_in and held.retry_in > 0 and held.attempt == 0
        assert desk.writes() == 1
    finally:
        desk.close()
    key = delivery_channels.channel_key("zendesk", delivery(services, ids[1]).target)
    assert delivery_channels.paced_for(services, key) > 0


def test_a_burst_through_429s_delivers_each_note_once(services: Services, desk: Any) -> None:
    """Ten answers to one helpdesk that rate-limits twice: every ticket gets exactly one note."""
    tickets = list(range(500, 510))
    desk.tickets |= set(tickets)
    desk.notes.update({t: [] for t in tickets})
    if isinstance(desk, ZendeskFake):
        desk.tags.update({t: [] for t in tickets})
    ids = setup(services, desk, tickets=tickets)
    served = {"n": 0}
    original = desk.route

    def route(method: str, path: str, headers: dict[str, str], body: bytes) -> Any:
        served["n"] += 1
        if served["n"] in (3, 7):  # the 3rd and 7th request are rate-limited
            return 429, {"error": "rate limited"}, False
        return original(method, path, headers, body)

    desk.route = route
    paced = _run_until_settled(services, ids)["paced"]
    notes = [len(desk.notes[t]) for t in tickets]
    rate_limited = sum(1 for i in (3, 7) if i <= served["n"])
    print(f"\n[{kind(desk)}] 429 burst: deliveries={len(ids)} attempted={desk.writes()} "
          f"delivered={sum(1 for d in ids if delivery(services, d).status == 'delivered')} "
          f"duplicates={sum(n - 1 for n in notes if n > 1)} rate_limited={rate_limited} held_by_pace={paced}")
    assert notes == [1] * len(tickets)
    assert all(delivery(services, d).status == "delivered" for d in ids)
    assert desk.writes() == len(tickets) + rate_limited
