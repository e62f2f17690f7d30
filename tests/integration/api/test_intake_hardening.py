"""Hostile and careless input at intake: NUL characters, invisible questions, loose types, a reused
Idempotency-Key, visible tenant caps, the per-tenant rate limit and in-flight fairness."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from app import admission
from storage import repositories as repo
from storage.models import utcnow
from tests.integration.api.conftest import Api, count_investigations, new_tenant

QUESTION = {"question": "Which plan includes SCIM provisioning?"}


def _locs(response: Any) -> list[list[Any]]:
    return [item["loc"] for item in response.json()["detail"]]


@pytest.mark.parametrize(("body", "loc"), [
    ({"question": "What is ERR_4021?\u0000"}, ["body", "question"]),
    ({**QUESTION, "principals": ["group:a\u0000"]}, ["body", "principals"]),
    ({**QUESTION, "context": {"attributes": {"plan": "team\u0000"}}}, ["body", "context", "attributes"]),
    ({**QUESTION, "callback": {"type": "email", "channel": "mail\u0000", "to": ["a@example.com"]}},
     ["body", "callback", "object", "email", "channel"]),
])
def test_nul_characters_are_a_422_naming_the_field_on_every_database(api: Api, body: dict[str, Any],
                                                                      loc: list[str]) -> None:
    response = api.post(body)
    assert response.status_code == 422, response.text  # PostgreSQL used to answer 500 (psycopg.DataError)
    assert _locs(response) == [loc]
    assert "NUL" in response.json()["detail"][0]["msg"]
    assert count_investigations(api.services, api.tenant_id) == 0


@pytest.mark.parametrize("question", ["\u200b\u200d\ufeff", "\u2060 \u200e\u200f", "\u00ad\u202e\n"])
def test_a_question_of_only_invisible_characters_is_blank(api: Api, question: str) -> None:
    response = api.post({"question": question})
    assert response.status_code == 422
    assert _locs(response) == [["body", "question"]]
    assert "question is blank" in response.json()["detail"][0]["msg"]


@pytest.mark.parametrize("value", ["2", 2.0, True, "two"])
def test_budget_fields_are_strict_integers(api: Api, value: object) -> None:
    response = api.post({**QUESTION, "budget": {"max_hops": value}})
    assert response.status_code == 422, response.text
    assert _locs(response) == [["body", "budget", "max_hops"]]
    assert api.post({**QUESTION, "budget": {"max_hops": 2}}).status_code == 202


def test_same_idempotency_key_with_a_different_body_is_a_conflict(api: Api) -> None:
    first = api.post(QUESTION, **{"Idempotency-Key": "ticket-7"})
    assert first.status_code == 202
    again = api.post(QUESTION, **{"Idempotency-Key": "ticket-7"})
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    other = api.post({"question": "How do I reset my password?"}, **{"Idempotency-Key": "ticket-7"})
    assert other.status_code == 409, other.text
    assert "ticket-7" in other.json()["detail"] and "question" in other.json()["detail"]
    budget = api.post({**QUESTION, "budget": {"max_hops": 1}}, **{"Idempotency-Key": "ticket-7"})
    assert budget.status_code == 409 and "budget" in budget.json()["detail"]
    assert count_investigations(api.services, api.tenant_id) == 1


def test_tenant_caps_are_visible_in_get_tenant_and_in_the_422(api: Api) -> None:
    me = api.client.get("/v1/tenant", headers=api.auth())
    assert me.status_code == 200, me.text
    limits = me.json()["limits"]
    assert limits["budget_caps"]["max_hops"] == 2  # the fixture's tenant is capped at 2 hops
    assert limits["budget_caps"]["max_retrieval_calls"] == api.services.settings.limits.max_retrieval_calls
    assert limits["max_in_flight"] == api.services.settings.limits.tenant_max_in_flight
    assert limits["intake_per_minute"] == api.services.settings.limits.tenant_intake_per_minute
    over = api.post({**QUESTION, "budget": {"max_hops": 3}})
    assert over.status_code == 422
    assert _locs(over) == [["body", "budget", "max_hops"]]
    assert "at most 2" in over.json()["detail"][0]["msg"]
    assert api.client.get("/v1/tenant").status_code == 401


def test_the_intake_rate_limit_answers_429_with_retry_after(api: Api) -> None:
    _, key = new_tenant(api.services, limits={"intake_per_minute": 3, "max_in_flight": 0})
    codes = [api.post({"question": f"question {i}?"}, key=key).status_code for i in range(3)]
    assert codes == [202, 202, 202]
    limited = api.post({"question": "one too many?"}, key=key)
    assert limited.status_code == 429, limited.text
    assert 1 <= int(limited.headers["retry-after"]) <= 20  # one submission refills every 20 s
    assert "3 investigations per minute" in limited.json()["detail"]
    assert api.post(QUESTION).status_code == 202  # another tenant is not affected


def test_a_tenant_at_its_in_flight_cap_is_held_back_in_order(api: Api) -> None:
    big_id, big = new_tenant(api.services, limits={"max_in_flight": 2})
    ids = [api.post({"question": f"burst question {i}?"}, key=big).json()["id"] for i in range(5)]
    assert api.launcher.calls == ids[:2]  # the rest wait, persisted as queued
    with api.services.session() as session:  # a held one is not "overdue" while it waits its turn
        held = repo.get_investigation(session, investigation_id=ids[4])
        assert held.status == "queued" and held.deadline_at > utcnow() + timedelta(hours=1)
        overdue = repo.list_overdue(session, now=utcnow() + timedelta(minutes=30))
        assert set(overdue) & set(ids[2:]) == set()  # only the two running ones could be
    small = api.post(QUESTION).json()["id"]
    assert api.launcher.calls == [*ids[:2], small]  # another tenant goes straight to the queue
    # one of the running ones finishes: exactly the next in line starts
    with api.services.session() as session:
        repo.finish_investigation(
            session, investigation_id=ids[0], status="answered", stop_reason="sufficient"
        )
    assert admission.release(api.services, big_id, api.launcher) == [ids[2]]
    with api.services.session() as session:  # its deadline budget starts when it is released
        released = repo.get_investigation(session, investigation_id=ids[2])
        assert released.deadline_at < utcnow() + timedelta(
            seconds=api.services.settings.limits.deadline_seconds + 5
        )
    assert admission.release(api.services, big_id, api.launcher) == []  # still at the cap
    for done in ids[1:3]:
        with api.services.session() as session:
            repo.finish_investigation(session, investigation_id=done, status="failed", stop_reason="error")
    assert admission.release(api.services, big_id, api.launcher) == ids[3:5]
    assert api.launcher.calls == [*ids[:2], small, *ids[2:5]]
    assert admission.held_ids(api.services) == set()
