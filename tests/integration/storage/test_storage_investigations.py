"""Investigations: intake, idempotency, tenant isolation, updates, finishing once, the overdue scan,
and the public view."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlmodel import Session, func, select

from investigation.errors import NotFound, ValidationFailed
from storage.models import Delivery, Investigation, Tenant
from storage.repositories import (
    add_evidence,
    create_investigation,
    finish_investigation,
    get_investigation,
    get_or_create_delivery,
    investigation_view,
    list_deliveries,
    list_overdue,
    update_investigation,
)
from tests.integration.storage.conftest import make_evidence, new_investigation, sql

CALLBACK = {"type": "webhook", "url": "https://hooks.example.com/sleuth", "headers": {"x": "1"}}


def _count(session: Session, model: type) -> int:
    return session.exec(select(func.count()).select_from(model)).one()


def test_create_persists_the_question_verbatim_with_its_delivery(session: Session, tenant: Tenant) -> None:
    before = datetime.now(UTC).replace(tzinfo=None)
    inv, created = create_investigation(
        session,
        tenant=tenant,
        question="  Which plan includes SSO?\n",
        mode="single-shot",
        callback=CALLBACK,
        budget={"max_hops": 2},
        idempotency_key="req-1",
        deadline_seconds=90,
    )
    assert created
    fresh = get_investigation(session, investigation_id=inv.id)
    assert fresh.question == "  Which plan includes SSO?\n"
    assert (fresh.status, fresh.mode, fresh.budget, fresh.callback) == (
        "queued",
        "single-shot",
        {"max_hops": 2},
        CALLBACK,
    )
    assert timedelta(seconds=89) < fresh.deadline_at - before < timedelta(seconds=95)
    [delivery] = list_deliveries(session, investigation_id=inv.id)
    assert (delivery.channel, delivery.status, delivery.tenant_id) == ("webhook", "pending", tenant.id)
    assert delivery.target == {"url": "https://hooks.example.com/sleuth", "headers": {"x": "1"}}
    assert delivery.id.startswith("msg_")


def test_intake_writes_the_row_and_reads_it_back_in_one_statement(
        session: Session, session_factory: Any, tenant: Tenant, statements: list[str]) -> None:
    statements.clear()
    inv, created = create_investigation(session, tenant=tenant, question="Which plan?", mode="agentic",
                                        callback=None, budget={"max_hops": 2}, idempotency_key=None,
                                        deadline_seconds=90, principals=["staff"], context={"plan": "team"})
    assert created and sql(statements) == ["INSERT"]  # INSERT ... RETURNING the row: no read after it
    assert inv in session and not session.dirty  # the session's row, as a read would have loaded it
    with session_factory() as other:
        stored = other.get(Investigation, inv.id)
        assert stored is not None
        assert stored.model_dump() == inv.model_dump()  # every column as written, defaults included


def test_the_same_idempotency_key_returns_the_same_investigation(session: Session, tenant: Tenant) -> None:
    kwargs: dict[str, Any] = {"question": "q?", "mode": "agentic", "callback": CALLBACK, "budget": {},
                              "deadline_seconds": 60}
    first, created = create_investigation(session, tenant=tenant, idempotency_key="k", **kwargs)
    again, created_again = create_investigation(session, tenant=tenant, idempotency_key="k", **kwargs)
    assert created and not created_again
    assert again.id == first.id
    assert _count(session, Investigation) == 1 and _count(session, Delivery) == 1


def test_idempotency_keys_are_per_tenant_and_optional(
    session: Session, tenant: Tenant, other_tenant: Tenant
) -> None:
    a = new_investigation(session, tenant, idempotency_key="k")
    b = new_investigation(session, other_tenant, idempotency_key="k")
    c = new_investigation(session, tenant)
    d = new_investigation(session, tenant)
    assert len({a.id, b.id, c.id, d.id}) == 4


def test_invalid_intake_is_refused(session: Session, tenant: Tenant) -> None:
    cases: dict[str, dict[str, Any]] = {
        "question": {"question": "   "},
        "mode": {"mode": "turbo"},
        "callback": {"callback": {"url": "https://x"}},
        "deadline_seconds": {"deadline_seconds": 0},
    }
    for field, overrides in cases.items():
        with pytest.raises(ValidationFailed) as info:
            new_investigation(session, tenant, **overrides)
        assert info.value.field == field
    assert _count(session, Investigation) == 0


def test_another_tenants_investigation_is_not_found(
    session: Session, tenant: Tenant, other_tenant: Tenant, investigation: Investigation
) -> None:
    assert (
        get_investigation(session, investigation_id=investigation.id, tenant_id=tenant.id).id
        == investigation.id
    )
    with pytest.raises(NotFound):
        get_investigation(session, investigation_id=investigation.id, tenant_id=other_tenant.id)
    with pytest.raises(NotFound):
        get_investigation(session, investigation_id="missing")


def test_update_sets_fields_and_updated_at(session: Session, investigation: Investigation) -> None:
    before = investigation.updated_at
    time.sleep(0.01)
    plan = {"original": "q", "subqueries": [{"text": "a", "purpose": ""}], "kind": "as_is"}
    inv = update_investigation(
        session, investigation_id=investigation.id, status="running", route="lookup", plan=plan, hops=1
    )
    assert (inv.status, inv.route, inv.plan, inv.hops) == ("running", "lookup", plan, 1)
    assert inv.updated_at > before
    with pytest.raises(ValidationFailed):
        update_investigation(session, investigation_id=investigation.id, colour="blue")
    with pytest.raises(ValidationFailed):
        update_investigation(session, investigation_id=investigation.id, id="other")
    with pytest.raises(ValidationFailed):
        update_investigation(session, investigation_id=investigation.id, status="answered")
    with pytest.raises(NotFound):
        update_investigation(session, investigation_id="missing", route="lookup")


def test_a_finished_investigation_cannot_be_revived(session: Session, investigation: Investigation) -> None:
    assert finish_investigation(
        session, investigation_id=investigation.id, status="failed", stop_reason="deadline"
    )
    inv = update_investigation(session, investigation_id=investigation.id, status="running", hops=2)
    assert (inv.status, inv.hops) == ("failed", 2)


def test_an_update_is_one_statement_returning_the_row_and_keeps_a_terminal_status(
        session: Session, session_factory: Any, investigation: Investigation, statements: list[str]) -> None:
    session.expunge_all()
    statements.clear()
    inv = update_investigation(session, investigation_id=investigation.id, status="running", hops=1)
    assert sql(statements) == ["UPDATE"]  # no read before or after: UPDATE ... RETURNING
    assert (inv.status, inv.hops) == ("running", 1)
    assert finish_investigation(
        session, investigation_id=investigation.id, status="failed", stop_reason="deadline"
    )
    statements.clear()
    inv = update_investigation(session, investigation_id=investigation.id, status="queued", hops=2)
    assert sql(statements) == ["UPDATE"]  # the terminal rule is in the statement (CASE), not a read
    assert (inv.status, inv.hops) == ("failed", 2)
    with session_factory() as other:
        stored = other.get(Investigation, investigation.id)
        assert stored is not None and (stored.status, stored.hops) == ("failed", 2)


def test_an_update_refreshes_the_held_row_and_writes_what_the_session_had_pending_first(
        session: Session, session_factory: Any, investigation: Investigation) -> None:
    held = get_investigation(session, investigation_id=investigation.id)
    held.caveat = "set on the object, not yet flushed"  # the ORM's autoflush wrote this before the UPDATE
    plan = {"original": "q", "subqueries": [{"text": "a", "purpose": ""}], "kind": "as_is"}
    inv = update_investigation(session, investigation_id=investigation.id, plan=plan, subqueries=["a", "b"],
                               hops=1)
    assert inv is held  # the session's instance, refreshed from the row the UPDATE returned
    assert (inv.plan, inv.subqueries, inv.hops) == (plan, ["a", "b"], 1)  # JSON columns as the ORM reads them
    assert isinstance(inv.updated_at, datetime) and inv.updated_at.tzinfo is None  # naive UTC, as stored
    assert not session.dirty
    with session_factory() as other:
        stored = other.get(Investigation, investigation.id)
        assert stored is not None
        assert (stored.caveat, stored.plan, stored.subqueries, stored.updated_at) == (
            "set on the object, not yet flushed", plan, ["a", "b"], inv.updated_at)


def test_finish_writes_the_final_counts_in_its_one_update(
        session: Session, investigation: Investigation, statements: list[str]) -> None:
    statements.clear()
    assert finish_investigation(session, investigation_id=investigation.id, status="answered",
                                stop_reason="sufficient", counts={"hops": 2, "retrieval_calls": 5})
    assert sql(statements) == ["UPDATE"]
    # Already terminal: the status stays, the late step's counts are still written (as an update would).
    assert not finish_investigation(session, investigation_id=investigation.id, status="failed",
                                    stop_reason="deadline", counts={"hops": 3, "retrieval_calls": 6})
    inv = get_investigation(session, investigation_id=investigation.id)
    assert (inv.status, inv.stop_reason, inv.hops, inv.retrieval_calls) == ("answered", "sufficient", 3, 6)
    with pytest.raises(ValidationFailed):
        finish_investigation(session, investigation_id=investigation.id, status="failed", stop_reason="x",
                             counts={"question": 1})


def test_finish_moves_to_a_terminal_status_only_once(session: Session, investigation: Investigation) -> None:
    citations = [{"marker": 1, "evidence_id": "e1", "source_id": "plans", "title": "Plans"}]
    assert finish_investigation(
        session,
        investigation_id=investigation.id,
        status="answered",
        stop_reason="sufficient",
        answer="The Team plan [1].",
        citations=citations,
        caveat="one source",
        final_evidence_ids=["e1"],
        evidence_tokens=42,
    )
    assert investigation.status == "answered"  # the caller's object is refreshed
    assert not finish_investigation(
        session, investigation_id=investigation.id, status="failed", stop_reason="deadline"
    )
    inv = get_investigation(session, investigation_id=investigation.id)
    assert (inv.status, inv.stop_reason, inv.answer, inv.caveat) == (
        "answered",
        "sufficient",
        "The Team plan [1].",
        "one source",
    )
    assert (inv.citations, inv.final_evidence_ids, inv.evidence_tokens) == (citations, ["e1"], 42)
    assert inv.finished_at is not None and inv.error is None
    with pytest.raises(ValidationFailed):
        finish_investigation(session, investigation_id=investigation.id, status="running", stop_reason=None)


def test_list_overdue(session: Session, tenant: Tenant) -> None:
    late = new_investigation(session, tenant, deadline_seconds=1)
    running = new_investigation(session, tenant, deadline_seconds=1)
    update_investigation(session, investigation_id=running.id, status="running")
    done = new_investigation(session, tenant, deadline_seconds=1)
    finish_investigation(session, investigation_id=done.id, status="refused", stop_reason="unanswerable")
    new_investigation(session, tenant, deadline_seconds=3600)
    now = datetime.now(UTC)
    assert list_overdue(session, now=now) == []
    later = now + timedelta(seconds=5)
    assert set(list_overdue(session, now=later)) == {late.id, running.id}
    assert set(list_overdue(session, now=later.replace(tzinfo=None))) == {late.id, running.id}
    assert len(list_overdue(session, now=later, limit=1)) == 1


def test_investigation_view_is_the_public_json_shape(session: Session, tenant: Tenant) -> None:
    inv, _ = create_investigation(
        session,
        tenant=tenant,
        question="q?",
        mode="agentic",
        callback=CALLBACK,
        budget={},
        idempotency_key=None,
        deadline_seconds=60,
    )
    get_or_create_delivery(
        session, investigation_id=inv.id, tenant_id=tenant.id, channel="email", target={"to": "a@b"}
    )
    add_evidence(
        session,
        investigation_id=inv.id,
        evidence=[
            make_evidence("e1", 1, 0.2),
            make_evidence("e2", 1, 0.9),
            make_evidence("e3", 2, 0.5),
            make_evidence("e4", 2, 0.7),
        ],
    )
    update_investigation(
        session, investigation_id=inv.id, route="multi_hop", subqueries=["a", "b"], hops=2, retrieval_calls=4
    )
    finish_investigation(
        session,
        investigation_id=inv.id,
        status="answered",
        stop_reason="sufficient",
        answer="A [1][2]",
        citations=[
            {"marker": 1, "evidence_id": "e3", "source_id": "doc-e3", "title": "T e3", "extra": 1},
            {"marker": 2, "evidence_id": "e1", "source_id": "doc-e1", "title": "T e1"},
        ],
        final_evidence_ids=["e3", "e1"],
        evidence_tokens=12,
    )
    view = investigation_view(session, investigation=get_investigation(session, investigation_id=inv.id))
    assert json.loads(json.dumps(view)) == view
    assert list(view) == [
        "id",
        "status",
        "mode",
        "audience",
        "question",
        "route",
        "answer",
        "caveat",
        "citations",
        "evidence",
        "subqueries",
        "hops",
        "retrieval_calls",
        "evidence_tokens",
        "llm",
        "stop_reason",
        "error",
        "created_at",
        "finished_at",
        "deliveries",
    ]
    assert view["citations"][0] == {"marker": 1, "evidence_id": "e3", "source_id": "doc-e3", "title": "T e3",
                                    "internal": False}
    assert [e["id"] for e in view["evidence"]] == ["e3", "e1", "e2", "e4"]
    assert set(view["evidence"][0]) == {"id", "source_id", "title", "text", "score", "grade", "hop", "query"}
    assert (view["route"], view["subqueries"], view["hops"], view["retrieval_calls"]) == (
        "multi_hop",
        ["a", "b"],
        2,
        4,
    )
    assert datetime.fromisoformat(view["created_at"]).tzinfo is not None
    assert datetime.fromisoformat(view["finished_at"]) >= datetime.fromisoformat(view["created_at"])
    assert sorted(d["channel"] for d in view["deliveries"]) == ["email", "webhook"]
    assert set(view["deliveries"][0]) == {"id", "channel", "status", "attempts"}
