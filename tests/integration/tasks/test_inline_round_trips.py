"""The inline executor's Redis round trips (issue 14): a hop's charge rides on its searches' first round trip,
and what its reducer would read back (every slot's result, the budget, the passages first seen) on the round
trip that parks the results; synthesis takes the count the last hop read. The budget's counters and the
investigation come out as the steps one at a time (the Celery path) leave them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import redis.client

from storage import repositories as repo
from tasks import inline, steps
from tasks.relay import Relay
from tests.support.stack import Stack

QUESTION = "Which plan includes SCIM provisioning, and what uptime does it guarantee?"


def _round_trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Redis round trips made from the calling thread from now on (a command, a script, a pipeline each):
    the loop's own; the embedder's and the searches' threads share query vectors through Redis too."""
    me = threading.get_ident()
    sent: list[str] = []

    def counted(fn: Callable[..., Any], name: Callable[..., str]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == me:
                sent.append(name(*args))
            return fn(*args, **kwargs)

        return call

    monkeypatch.setattr(redis.client.Redis, "execute_command",
                        counted(redis.client.Redis.execute_command, lambda _self, *a: str(a[0])))
    monkeypatch.setattr(redis.client.Pipeline, "execute",
                        counted(redis.client.Pipeline.execute, lambda _self, *_a: "pipeline"))
    return sent


def _outcome(stack: Stack, inv_id: str) -> dict[str, Any]:
    with stack.services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
        seen = sorted(e.chunk_id for e in repo.list_evidence(session, investigation_id=inv_id))
    usage = stack.services.state.usage(inv_id)
    return {
        "status": inv.status,
        "answer": inv.answer,
        "hops": inv.hops,
        "retrieval_calls": inv.retrieval_calls,
        "evidence": seen,
        "budget": {k: usage[k] for k in ("hops", "retrieval_calls", "llm_tokens")},
    }


def _one_step_at_a_time(stack: Stack, inv_id: str) -> None:
    """The steps as Celery tasks run them: each reads what it needs from Redis and the database."""
    services = stack.services
    nxt = steps.start(services, inv_id)
    while nxt.kind == steps.NextKind.HOP:
        for index, engine in nxt.slots:
            steps.retrieve(services, inv_id, nxt.hop, index, engine)
        nxt = steps.reduce(services, inv_id, nxt.hop)
    assert nxt.kind == steps.NextKind.SYNTHESIZE
    steps.synthesize(services, inv_id)


@pytest.mark.parametrize(("question", "hops"), [(QUESTION, 2), ("What does error ERR_4021 mean?", 1)])
def test_an_inline_investigation_makes_one_round_trip_at_start_and_two_a_hop(
        stack: Stack, monkeypatch: pytest.MonkeyPatch, question: str, hops: int) -> None:
    # The twin first, one step at a time as Celery runs them: what a process does once (a trace observer
    # registering the tenant's metrics label in Redis, when an earlier test installed observers) is done.
    twin = stack.asked(question)
    _one_step_at_a_time(stack, twin)
    inv_id = stack.asked(question)
    sent = _round_trips(monkeypatch)
    inline.run(stack.services, inv_id, deliver=False)
    monkeypatch.undo()
    done = _outcome(stack, inv_id)
    assert done["status"] == "answered" and done["hops"] == hops
    # The budget's start, then per hop the searches' begin (the hop charged with them) and end (the results
    # parked, their passages marked seen, the budget read): nothing else, synthesis included.
    assert sent == ["EVALSHA"] + ["EVALSHA", "pipeline"] * done["hops"], sent
    assert done["budget"]["hops"] == done["hops"]  # each hop charged once
    assert done["budget"]["retrieval_calls"] == done["retrieval_calls"] > 0
    assert _outcome(stack, twin) == done


def test_a_hop_planned_again_is_charged_once_whoever_charges_it(stack: Stack) -> None:
    """A hop's charge is once per hop whether the step made it (Celery), the searches did (inline) or both
    tried (a step redelivered to the other executor)."""
    services = stack.services
    inv_id = stack.asked(QUESTION)
    nxt = steps.start(services, inv_id, relay=Relay())
    assert nxt.kind == steps.NextKind.HOP
    assert services.state.usage(inv_id)["hops"] == 0  # not charged yet: the searches will
    again = steps.start(services, inv_id, relay=Relay())  # redelivered before the searches ran
    assert again.slots == nxt.slots and services.state.usage(inv_id)["hops"] == 0
    with ThreadPoolExecutor(4) as pool:
        inline._retrieve_hop(services, inv_id, nxt.hop, nxt.slots, pool)
        inline._retrieve_hop(services, inv_id, nxt.hop, nxt.slots, pool)  # the same hop again
    assert services.state.usage(inv_id)["hops"] == 1
    assert steps.start(services, inv_id).slots == nxt.slots  # … then redelivered to a Celery worker
    assert services.state.usage(inv_id)["hops"] == 1
    # Planned to be charged by searches that never ran, then redelivered to a Celery worker: its step charges.
    lost = stack.asked(QUESTION)
    steps.start(services, lost, relay=Relay())
    steps.start(services, lost)
    assert services.state.usage(lost)["hops"] == 1
    other = stack.asked(QUESTION)
    celery = steps.start(services, other)  # charged by the step
    assert services.state.usage(other)["hops"] == 1
    with ThreadPoolExecutor(4) as pool:  # … and the inline searches of the same hop charge nothing more
        inline._retrieve_hop(services, other, celery.hop, celery.slots, pool)
    assert services.state.usage(other)["hops"] == 1


def test_a_next_hop_planned_for_searches_that_never_ran_is_charged_by_a_redelivered_reducer(
    stack: Stack,
) -> None:
    services = stack.services
    inv_id = stack.asked(QUESTION)  # two hops
    nxt = steps.start(services, inv_id, relay=Relay())
    with ThreadPoolExecutor(4) as pool:
        handoff = inline._retrieve_hop(services, inv_id, nxt.hop, nxt.slots, pool)
    second = steps.reduce(services, inv_id, nxt.hop, relay=handoff)  # plans hop 2 for its searches to charge
    assert second.kind == steps.NextKind.HOP and second.hop == 2
    assert services.state.usage(inv_id)["hops"] == 1
    for _ in range(2):  # the hop's reducer redelivered to a Celery worker, twice: hop 2 charged once
        assert steps.reduce(services, inv_id, nxt.hop).slots == second.slots
        assert services.state.usage(inv_id)["hops"] == 2


def test_a_hop_of_tools_only_is_charged_on_its_own(stack: Stack) -> None:
    services = stack.services
    inv_id = stack.asked(QUESTION)
    nxt = steps.start(services, inv_id, relay=Relay())
    with ThreadPoolExecutor(2) as pool:
        handoff = inline._retrieve_hop(services, inv_id, nxt.hop, (), pool)
    assert handoff.events == [] and handoff.gathered is None
    assert services.state.usage(inv_id)["hops"] == 1


def test_a_reducer_handed_nothing_gathered_reads_redis_as_before(
        stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hop whose results were not gathered (a tool among its slots, a result that does not read back as
    itself) hands its reducer the events only: the reducer reads the results, the budget and the passages
    first seen from Redis, and decides as it would have."""
    services = stack.services
    inv_id = stack.asked(QUESTION)
    nxt = steps.start(services, inv_id, relay=Relay())
    with ThreadPoolExecutor(4) as pool:
        handoff = inline._retrieve_hop(services, inv_id, nxt.hop, nxt.slots, pool)
    assert handoff.gathered is not None
    reads: list[str] = []

    def watched(name: str) -> Callable[..., Any]:
        real: Callable[..., Any] = getattr(services.state, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            reads.append(name)
            return real(*args, **kwargs)

        return call

    for name in ("hop_results", "first_seen"):
        monkeypatch.setattr(services.state, name, watched(name))
    handoff.gathered = None
    after = steps.reduce(services, inv_id, nxt.hop, relay=handoff)
    assert reads == ["hop_results", "first_seen"]
    twin = stack.asked(QUESTION)
    nxt2 = steps.start(services, twin, relay=Relay())
    with ThreadPoolExecutor(4) as pool:
        handoff2 = inline._retrieve_hop(services, twin, nxt2.hop, nxt2.slots, pool)
    reads.clear()
    assert steps.reduce(services, twin, nxt2.hop, relay=handoff2).kind == after.kind
    assert reads == []  # handed on: nothing read back
    with services.session() as session:
        ours = sorted(e.chunk_id for e in repo.list_evidence(session, investigation_id=inv_id))
        theirs = sorted(e.chunk_id for e in repo.list_evidence(session, investigation_id=twin))
    assert ours == theirs
