"""Whole investigations through a real Celery worker process on real Redis and a real database.

One worker per database serves the module (`queue`: a tenant of each test's own on it); the watchdog test
starts its own worker, which consumes only some queues."""

from __future__ import annotations

import pytest

from storage import repositories as repo
from tests.integration.tasks.conftest import Stack

pytestmark = pytest.mark.integration


def _kinds(stack: Stack, inv_id: str) -> list[str]:
    with stack.services.session() as session:
        return [e.kind for e in repo.list_events(session, investigation_id=inv_id)]


def test_lookup_is_answered_with_valid_citations_and_a_full_trace(queue: Stack) -> None:
    inv_id = queue.ask("What does error ERR_4021 mean?")
    view = queue.wait(inv_id)
    assert view["status"] == "answered", view
    assert view["citations"], view
    evidence_ids = {e["id"] for e in view["evidence"]}
    assert all(c["evidence_id"] in evidence_ids for c in view["citations"])
    assert "err-4021" in {c["source_id"] for c in view["citations"]}
    assert view["retrieval_calls"] >= 2 and view["hops"] >= 1
    kinds = _kinds(queue, inv_id)
    for kind in ("route", "plan", "hop", "retrieval", "fusion", "grades", "judgment", "decision", "synthesis"):
        assert kind in kinds, kinds
    assert kinds.index("route") < kinds.index("retrieval") < kinds.index("decision") < kinds.index("synthesis")


def test_greeting_is_answered_without_retrieval(queue: Stack) -> None:
    view = queue.wait(queue.ask("Hi there, thanks a lot for the help yesterday!"))
    assert view["status"] == "answered"
    assert view["route"] == "direct"
    assert view["retrieval_calls"] == 0
    assert view["stop_reason"] == "direct"


def test_question_outside_the_corpus_is_refused(queue: Stack) -> None:
    view = queue.wait(queue.ask("How do I configure the on-premise Kubernetes operator for air-gapped clusters?"))
    assert view["status"] == "refused", view
    assert not view["citations"]


def test_single_shot_mode_stops_after_one_hop(queue: Stack) -> None:
    view = queue.wait(queue.ask("Which plan includes SCIM provisioning?", mode="single-shot"))
    assert view["hops"] == 1 and view["retrieval_calls"] == 2
    assert view["stop_reason"] == "single_shot"


def test_tenant_b_never_retrieves_tenant_a_documents(queue: Stack) -> None:
    with queue.services.session() as session:
        other, _ = repo.create_tenant(session, name=queue.tenant_name + "-b")
    original = queue.tenant_name
    queue.tenant_name = other.name
    try:
        view = queue.wait(queue.ask("What does error ERR_4021 mean?"))
    finally:
        queue.tenant_name = original
    assert view["status"] == "refused"
    assert view["evidence"] == []


def test_watchdog_fails_an_investigation_stuck_past_its_deadline(stack: Stack) -> None:
    # Only the plan queue is consumed: hop 1's retrievals are never picked up, so it can only end by
    # the beat watchdog once its deadline passes.
    stack.start_worker(queues="plan,deliver", beat=True)
    stack.wait_ready()
    from cli.commands import create_and_launch

    services = stack.services
    object.__setattr__(services, "settings", services.settings.model_copy(update={"deadline_seconds": 5}))
    inv_id = create_and_launch(services, stack.tenant_name, "Which plan includes SCIM?", "agentic")
    view = stack.wait(inv_id, timeout=60)
    assert view["status"] == "failed"
    assert view["stop_reason"] == "deadline"
