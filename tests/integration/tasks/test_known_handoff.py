"""A step of the inline executor hands the next one what it wrote (`tasks.relay.Known`): the investigation's
columns the steps read, its hops, its evidence in `list_evidence`'s order. The next step then reads only what
another process may have changed since (the status, the hop's state) — and what it is handed is exactly what
the reads it skips would have given. On SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import functools
import math
import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from investigation import loop
from investigation.errors import NotFound
from investigation.state import Evidence, Grade, LoopAction, LoopDecision, Status, SubQuery
from storage import repositories as repo
from tasks import inline, steps
from tasks.facts import Facts, HopFacts, evidence_of
from tasks.relay import Known, Relay, evidence_after
from tests.support.stack import Stack

# What a step hands the next must equal what each database's reads give.
pytestmark = pytest.mark.both_databases

TWO_HOPS = "Which plan includes SCIM provisioning, and what uptime does it guarantee?"
ONE_HOP = "What does error ERR_4021 mean?"


@pytest.fixture
def stack(quiet_stack: Stack) -> Stack:  # the steps' own statements only (conftest.py)
    return quiet_stack


def _as_read(stack: Stack, inv_id: str) -> Known:
    """What the reads a handed step skips give back now."""
    with stack.services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
        hops = repo.list_hops(session, investigation_id=inv_id)
        evidence = evidence_of(repo.list_evidence(session, investigation_id=inv_id))
    return Known(Facts.of(inv), tuple(HopFacts.of(h) for h in hops), tuple(evidence))


def _searched(stack: Stack, inv_id: str, nxt: steps.Next, relay: Relay) -> Relay:
    with ThreadPoolExecutor(4) as pool:
        return inline._retrieve_hop(stack.services, inv_id, nxt.hop, nxt.slots, pool, relay)


def _going_on(monkeypatch: pytest.MonkeyPatch, query: str = "ERR_4021 cause") -> None:
    """The first hop's decision replaced by CONTINUE with one more query (then the loop decides again)."""
    real = loop.reduce_hop

    def going_on(*args: Any, **kwargs: Any) -> loop.HopOutcome:
        out = real(*args, **kwargs)
        if kwargs["hop"] > 1:
            return out
        return dataclasses.replace(out, decision=LoopDecision(
            action=LoopAction.CONTINUE, reason="insufficient", next_queries=(SubQuery(text=query),)))

    monkeypatch.setattr(loop, "reduce_hop", going_on)


@pytest.mark.parametrize("question", [TWO_HOPS, ONE_HOP])
def test_each_step_is_handed_exactly_what_the_database_holds_and_reads_only_the_status(
        stack: Stack, monkeypatch: pytest.MonkeyPatch, question: str) -> None:
    _going_on(monkeypatch)
    services = stack.services
    inv_id = stack.asked(question)
    relay = Relay()
    nxt = steps.start(services, inv_id, relay=relay)
    reductions = 0
    while nxt.kind == steps.NextKind.HOP:
        assert relay.known == _as_read(stack, inv_id)  # every column, hop and evidence, in order
        reduce = functools.partial(
            steps.reduce, services, inv_id, nxt.hop, relay=_searched(stack, inv_id, nxt, relay)
        )
        nxt, sent, _ = stack.counted(reduce)
        reductions += 1
        # No read of the row, the hop or the evidence: the status and the hop's state in one statement.
        assert (
            sent[0] == "SELECT investigation" and "SELECT evidence" not in sent and "SELECT hop" not in sent
        )
        assert sent.count("SELECT investigation") == 1
    assert reductions >= 2  # the first hop went on
    assert nxt.kind == steps.NextKind.SYNTHESIZE and relay.known == _as_read(stack, inv_id)
    assert len(relay.known.evidence) > 1
    done, sent, _ = stack.counted(lambda: steps.synthesize(services, inv_id, relay=relay))
    assert done.kind == steps.NextKind.DELIVER
    assert sorted(sent) == sorted(["SELECT investigation", "UPDATE investigation", "INSERT trace_event",
                                   "SELECT delivery"])  # the status only: no evidence, hop or row read


def test_a_handed_investigation_ends_as_one_whose_steps_read_everything(
        stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same question run by the inline executor (each step handed what the one before wrote) and step by
    step as Celery runs them (each reading the database): the same investigation, hops, evidence and
    answer."""
    _going_on(monkeypatch)
    services = stack.services
    handed = stack.asked(TWO_HOPS)
    inline.run(services, handed, deliver=False)
    read = stack.asked(TWO_HOPS)
    nxt = steps.start(services, read)
    while nxt.kind == steps.NextKind.HOP:
        for index, engine in nxt.slots:
            steps.retrieve(services, read, nxt.hop, index, engine)
        nxt = steps.reduce(services, read, nxt.hop)
    steps.synthesize(services, read)

    def outcome(inv_id: str) -> dict[str, Any]:
        known = _as_read(stack, inv_id)
        with services.session() as session:
            inv = repo.get_investigation(session, investigation_id=inv_id)
        return {"status": inv.status, "answer": inv.answer, "citations": inv.citations, "hops": known.hops,
                "subqueries": known.facts.subqueries, "plan": known.facts.plan, "route": known.facts.route,
                "evidence": known.evidence, "final": inv.final_evidence_ids, "calls": inv.retrieval_calls}

    ours = outcome(handed)
    assert ours["status"] == "answered" and len(ours["hops"]) == 2
    assert ours == outcome(read)
    # The trace in the order it was written: each step's events (the hop's searches', then the reduction's)
    # before the next hop's, as the steps one at a time write them (the searches' keys name their slot).
    keys = {inv_id: [e.step_key for e in _events(stack, inv_id)] for inv_id in (handed, read)}
    assert keys[handed][:3] == ["route", "plan", "hop:1"] and keys[handed][-1] == "synthesis"
    for hop in (1, 2):
        at = keys[handed].index(f"fuse:{hop}")
        assert keys[handed][at:at + 4] == [f"fuse:{hop}", f"grade:{hop}", f"judge:{hop}", f"decide:{hop}"]
        assert all(
            k.startswith("retrieve:") for k in keys[handed][at - len(ours["hops"][hop - 1].engines) : at]
        )
    assert keys[handed][keys[handed].index("decide:1") + 1] == "hop:2"
    assert sorted(keys[handed]) == sorted(keys[read])


def _events(stack: Stack, inv_id: str) -> list[Any]:
    with stack.services.session() as session:
        return repo.list_events(session, investigation_id=inv_id)


def test_a_step_handed_what_was_known_still_sees_a_cancellation(stack: Stack) -> None:
    services = stack.services
    inv_id = stack.asked(TWO_HOPS)
    relay = Relay()
    nxt = steps.start(services, inv_id, relay=relay)
    _searched(stack, inv_id, nxt, relay)
    with services.session() as session:  # cancelled (or failed by the watchdog) while the hop searched
        repo.finish_investigation(session, investigation_id=inv_id, status=Status.FAILED.value,
                                  stop_reason="cancelled", error="cancelled by the requester")
    after = steps.reduce(services, inv_id, nxt.hop, relay=relay)
    assert after.kind == steps.NextKind.DELIVER and relay.known is None
    with services.session() as session:
        assert repo.list_evidence(session, investigation_id=inv_id) == []  # nothing reduced
    # … and synthesis handed what a reducer knew, the investigation failed meanwhile: delivered as it is.
    other = stack.asked(ONE_HOP)
    relay = Relay()
    nxt = steps.start(services, other, relay=relay)
    stop = steps.reduce(services, other, nxt.hop, relay=_searched(stack, other, nxt, relay))
    assert stop.kind == steps.NextKind.SYNTHESIZE and relay.known is not None
    with services.session() as session:
        repo.finish_investigation(session, investigation_id=other, status=Status.FAILED.value,
                                  stop_reason="cancelled", error="cancelled by the requester")
    assert steps.synthesize(services, other, relay=relay).kind == steps.NextKind.DELIVER
    with services.session() as session:
        assert repo.get_investigation(session, investigation_id=other).answer is None


def test_a_hop_another_process_reduced_meanwhile_is_followed_not_reduced_again(stack: Stack) -> None:
    services = stack.services
    inv_id = stack.asked(ONE_HOP)
    relay = Relay()
    nxt = steps.start(services, inv_id, relay=relay)
    _searched(stack, inv_id, nxt, relay)
    theirs = steps.reduce(services, inv_id, nxt.hop)  # a Celery worker's reducer got there first
    with services.session() as session:
        before = repo.list_evidence(session, investigation_id=inv_id)
    ours, sent, _ = stack.counted(lambda: steps.reduce(services, inv_id, nxt.hop, relay=relay))
    assert ours == theirs and relay.known is None  # its decision, and nothing handed on: the next step reads
    assert "INSERT evidence" not in sent and not any(s.startswith("UPDATE") for s in sent)
    with services.session() as session:
        assert repo.list_evidence(session, investigation_id=inv_id) == before


def test_a_hop_handed_nothing_known_reads_as_before_and_hands_nothing_on(stack: Stack) -> None:
    services = stack.services
    inv_id = stack.asked(ONE_HOP)
    relay = Relay()
    nxt = steps.start(services, inv_id, relay=relay)
    relay.known = None  # as a start redelivered after it planned hop 1 hands on: nothing
    _searched(stack, inv_id, nxt, relay)
    stop, sent, _ = stack.counted(lambda: steps.reduce(services, inv_id, nxt.hop, relay=relay))
    assert sent[:3] == ["SELECT investigation", "SELECT hop", "SELECT evidence"]
    assert stop.kind == steps.NextKind.SYNTHESIZE and relay.known is None


def test_the_step_state_of_an_investigation_and_a_hop(stack: Stack) -> None:
    services = stack.services
    inv_id = stack.asked(ONE_HOP)
    with services.session() as session:
        assert repo.step_state(session, investigation_id=inv_id, number=1)[1:] == (None, None)
    nxt = steps.start(services, inv_id)
    with services.session() as session:
        assert repo.step_state(session, investigation_id=inv_id, number=1) == ("running", "planned", None)
    for index, engine in nxt.slots:
        steps.retrieve(services, inv_id, 1, index, engine)
    steps.reduce(services, inv_id, 1)
    with services.session() as session:
        status, state, decision = repo.step_state(session, investigation_id=inv_id, number=1)
        assert (status, state, decision["action"]) == ("running", "reduced", "stop")
        with pytest.raises(NotFound, match="not found"):
            repo.step_state(session, investigation_id="nope", number=1)


def _evidence(eid: str, hop: int, score: float) -> Evidence:
    return Evidence(id=eid, chunk_id=f"c-{eid}", source_id=f"doc-{eid}", title=f"T {eid}", text=f"text {eid}",
                    score=score, grade=Grade.CORRECT, hop=hop, query="q")


def test_evidence_handed_on_is_in_the_order_the_database_reads_it(stack: Stack) -> None:
    """Hop by hop, random evidence with many equal scores (and repeated ids in a batch): what
    `evidence_after` computes is what `list_evidence` reads, order among equal scores included."""
    services = stack.services
    rng = random.Random(14)
    for _ in range(3):
        inv_id = stack.asked(ONE_HOP)
        held: tuple[Evidence, ...] = ()
        count = 0
        for hop in (1, 2, 3):
            batch = []
            for _ in range(rng.randint(0, 9)):
                eid = f"e{rng.randint(0, count + 9)}" if rng.random() < 0.2 else f"e{count}"
                count += 1
                batch.append(
                    _evidence(eid, rng.choice([hop, hop, hop - 1 or 1]), rng.choice([0.5, 0.25, 1.0, -1.5]))
                )
            with services.session() as session, repo.atomic(session):
                inserted = repo.add_evidence(session, investigation_id=inv_id, evidence=batch)
            stored = tuple(evidence_of(_read_evidence(stack, inv_id)))
            after = evidence_after(held, batch, inserted)
            taken = {e.id for e in held}
            if any(e.id in taken for e in batch):  # an id already stored: the stored row is the earlier one
                assert after is None
            else:
                assert after == stored
            held = stored


def _read_evidence(stack: Stack, inv_id: str) -> list[Any]:
    with stack.services.session() as session:
        return repo.list_evidence(session, investigation_id=inv_id)


def test_evidence_whose_stored_form_is_not_known_is_not_handed_on() -> None:
    one = _evidence("a", 1, 0.5)
    assert evidence_after((), [one, _evidence("b", 1, 0.5)], 1) is None  # one of two was not inserted
    assert evidence_after((), [one, _evidence("a", 1, 0.9)], 1) == (one,)  # a repeated id: the first
    assert evidence_after((), [_evidence("z", 1, -0.0)], 1) is None  # SQLite reads -0.0 back as 0.0
    assert evidence_after((), [_evidence("n", 1, math.nan)], 1) is None
    assert evidence_after((), [_evidence("i", 1, math.inf)], 1) is None
    assert evidence_after((), [_evidence("zero", 1, 0.0)], 1) is not None
    later = _evidence("c", 1, 0.7)
    assert evidence_after((one,), [later, _evidence("d", 2, 0.1)], 2) == (later, one, _evidence("d", 2, 0.1))
