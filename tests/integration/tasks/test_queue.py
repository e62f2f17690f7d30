"""Whole investigations through a real Celery worker process on real Redis and a real database.

One worker per database serves the module (`queue`: a tenant of each test's own on it); the watchdog test
starts its own worker, which consumes only some queues."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import redis

from storage import repositories as repo
from tests.integration.tasks.conftest import Stack
from workers import names

# The whole queue path on each database (SQLite: the embedded default with several pool processes).
pytestmark = pytest.mark.both_databases


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
    for kind in (
        "route",
        "plan",
        "hop",
        "retrieval",
        "fusion",
        "grades",
        "judgment",
        "decision",
        "synthesis",
    ):
        assert kind in kinds, kinds
    assert (
        kinds.index("route") < kinds.index("retrieval") < kinds.index("decision") < kinds.index("synthesis")
    )


def test_greeting_is_answered_without_retrieval(queue: Stack) -> None:
    view = queue.wait(queue.ask("Hi there, thanks a lot for the help yesterday!"))
    assert view["status"] == "answered"
    assert view["route"] == "direct"
    assert view["retrieval_calls"] == 0
    assert view["stop_reason"] == "direct"


def test_question_outside_the_corpus_is_refused(queue: Stack) -> None:
    view = queue.wait(
        queue.ask("How do I configure the on-premise Kubernetes operator for air-gapped clusters?")
    )
    assert view["status"] == "refused", view
    assert not view["citations"]


def test_single_shot_mode_stops_after_one_hop(queue: Stack) -> None:
    view = queue.wait(queue.ask("Which plan includes SCIM provisioning?", mode="single-shot"))
    assert view["hops"] == 1 and view["retrieval_calls"] == 2
    assert view["stop_reason"] == "single_shot"


def test_tenant_b_never_retrieves_tenant_a_documents(queue: Stack) -> None:
    with queue.services.session() as session:
        other, _ = repo.create_tenant(session, name=queue.tenant_name + "-b", box=queue.services.secret_box())
    original = queue.tenant_name
    queue.tenant_name = other.name
    try:
        view = queue.wait(queue.ask("What does error ERR_4021 mean?"))
    finally:
        queue.tenant_name = original
    assert view["status"] == "refused"
    assert view["evidence"] == []


def _announced(pubsub: Any, wanted: set[str], services: Any, timeout: float = 60) -> dict[str, str]:
    """The investigations of `wanted` announced on the finished channel, each with its status as read from
    the database when its announcement arrived."""
    seen: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    while set(seen) != wanted and time.monotonic() < deadline:
        message = pubsub.get_message(timeout=1.0)
        if message is None or message["type"] != "message":
            continue
        inv_id = message["data"].decode() if isinstance(message["data"], bytes) else message["data"]
        if inv_id in wanted:
            with services.session() as session:
                seen[inv_id] = repo.get_investigation(session, investigation_id=inv_id).status
    return seen


def test_the_worker_announces_each_investigation_once_it_is_terminal(
    queue: Stack, redis_client: redis.Redis
) -> None:
    """What wakes the API's long polls (`api.finished`): the worker publishes the id of an investigation that
    turned terminal, after the commit (the status read on arrival is already terminal): answered through the
    loop, answered without retrieval, refused."""
    pubsub = redis_client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(queue.services.state.finished_channel())
    try:
        ids = {queue.ask("What does error ERR_4021 mean?"), queue.ask("Hi there, thanks a lot!"),
               queue.ask("How do I configure the on-premise Kubernetes operator for air-gapped clusters?")}
        seen = _announced(pubsub, ids, queue.services)
    finally:
        pubsub.close()
    assert set(seen) == ids, seen
    assert sorted(seen.values()) == ["answered", "answered", "refused"], seen


def test_watchdog_fails_an_investigation_stuck_past_its_deadline(
    stack: Stack, redis_client: redis.Redis
) -> None:
    # Only the plan queue is consumed: hop 1's retrievals are never picked up, so it can only end by
    # the beat watchdog once its deadline passes.
    stack.start_worker(queues="plan,deliver", beat=True)
    stack.wait_ready()
    from cli.commands import create_and_launch

    services = stack.services
    object.__setattr__(services, "settings", services.settings.model_copy(update={"deadline_seconds": 5}))
    pubsub = redis_client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(services.state.finished_channel())
    try:
        inv_id = create_and_launch(services, stack.tenant_name, "Which plan includes SCIM?", "agentic")
        view = stack.wait(inv_id, timeout=60)
        assert view["status"] == "failed"
        assert view["stop_reason"] == "deadline"
        assert _announced(pubsub, {inv_id}, services) == {inv_id: "failed"}  # the failure is announced too
    finally:
        pubsub.close()


def test_the_heuristic_reducer_answers_without_the_llm_queue(stack: Stack, redis_client: redis.Redis) -> None:
    """The heuristic's synthesis makes no LLM call: the reducer that ends the loop answers in its own process
    (`tasks.celery_tasks.synthesis_in_place`). A worker that does not read the `llm` queue still answers,
    and nothing was ever sent there."""
    stack.start_worker(queues="plan,retrieve,reduce,deliver,tools")
    stack.wait_ready()
    inv_id = stack.ask("What does error ERR_4021 mean?")
    view = stack.wait(inv_id, timeout=60)
    assert view["status"] == "answered", view
    assert "err-4021" in {c["source_id"] for c in view["citations"]}
    assert _kinds(stack, inv_id).count("synthesis") == 1
    prefix = f"{stack.settings.redis_prefix}:celery:"
    assert sum(redis_client.llen(prefix + key) for key in names.queue_keys(names.Q_LLM)) == 0


def test_a_reducer_that_fails_during_synthesis_answers_once_when_retried(
        stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """Synthesis in the reducer fails (a transient error: the task is retried; a killed worker: the message
    is redelivered): the hop is already reduced, so the retried reducer goes straight to synthesis, and the
    investigation is answered once, with one synthesis event."""
    from cli.commands import create_and_launch
    from investigation.errors import TransientError
    from tasks import inline, steps
    from tasks.celery_tasks import synthesis_in_place

    services = stack.services
    inv_id = create_and_launch(services, stack.tenant_name, "What does error ERR_4021 mean?", "single-shot",
                               launch=lambda _i: None)
    nxt = steps.start(services, inv_id)
    assert nxt.kind == steps.NextKind.HOP
    with ThreadPoolExecutor(2) as pool:
        inline._retrieve_hop(services, inv_id, nxt.hop, nxt.slots, pool)
    answer = steps.synthesize

    def failing(*_args: object) -> steps.Next:
        raise TransientError("database hiccup")

    monkeypatch.setattr(steps, "synthesize", failing)
    with pytest.raises(TransientError):
        synthesis_in_place(services, inv_id, steps.reduce(services, inv_id, nxt.hop))
    with services.session() as session:
        assert repo.get_investigation(session, investigation_id=inv_id).status == "running"
        hop = repo.get_hop(session, investigation_id=inv_id, number=nxt.hop)
        assert hop is not None and hop.state == "reduced"
    monkeypatch.setattr(steps, "synthesize", answer)
    again = steps.reduce(services, inv_id, nxt.hop)  # the retried task: the hop's decision is kept
    assert again.kind == steps.NextKind.SYNTHESIZE
    done = synthesis_in_place(services, inv_id, again)
    assert done.kind == steps.NextKind.DELIVER
    view = stack.wait(inv_id, timeout=5)
    assert view["status"] == "answered", view
    assert _kinds(stack, inv_id).count("synthesis") == 1
    # The same reducer delivered twice more (a redelivery after the answer): nothing runs again.
    assert (
        synthesis_in_place(services, inv_id, steps.reduce(services, inv_id, nxt.hop)).kind
        == steps.NextKind.DELIVER
    )
    assert _kinds(stack, inv_id).count("synthesis") == 1


def test_with_an_llm_synthesis_still_goes_to_the_llm_queue(stack: Stack) -> None:
    from tasks import steps
    from tasks.celery_tasks import synthesis_in_place

    services = stack.services
    object.__setattr__(services, "settings", services.settings.model_copy(update={"llm": "anthropic"}))
    nxt = steps.Next(steps.NextKind.SYNTHESIZE, 1)
    assert synthesis_in_place(services, "inv-never-read", nxt) is nxt  # sent on by `_dispatch`, untouched


def test_a_hops_members_store_no_result_and_the_hop_still_closes(
    queue: Stack, redis_client: redis.Redis
) -> None:
    """`workers.app.HopRedisBackend.store_result`: a chord member's result reaches the reducer through the
    chord's counter script only; no task of an investigation leaves a stored result behind (the steps ignore
    theirs), and the hops still close."""
    inv_id = queue.ask("Which plan includes SCIM provisioning, and what uptime does it guarantee?")
    view = queue.wait(inv_id)
    assert view["status"] == "answered" and view["retrieval_calls"] >= 2, view
    prefix = f"{queue.settings.redis_prefix}:celery:celery-task-meta-"
    assert list(redis_client.scan_iter(match=prefix + "*", count=1000)) == []


def test_a_hop_member_that_fails_ends_the_investigation_failed_through_the_error_callback(
    stack: Stack,
) -> None:
    """A chord member failing for good (not transient: a hop that was never planned) closes the chord with an
    error; its error callback (`sleuth.hop_failed`) ends the investigation `failed` with the reason."""
    from tasks.workflow import hop_canvas
    from workers.app import create_celery

    inv_id = stack.persisted("Which plan includes SCIM?")
    stack.start_worker()
    stack.wait_ready()
    app = create_celery(stack.settings)
    try:
        hop_canvas(app, inv_id, 7, ((0, "bm25"), (0, "vector"))).apply_async()
        view = stack.wait(inv_id, timeout=60)
    finally:
        app.close()
    assert view["status"] == "failed" and view["stop_reason"] == "error", view
    with stack.services.session() as session:
        error = repo.get_investigation(session, investigation_id=inv_id).error or ""
    # The member's own error when the chord had stored it before the callback ran (it is stored right after
    # the callback is sent), else the plain reason: either way the hop is named.
    assert error.startswith("hop 7: ") and ("never planned" in error or "of the hop failed" in error), error
