"""How many SQL statements each step of an investigation sends, as budgets: at most so many in all and of each
kind, so a regression (a re-read of a row the step holds, a second UPDATE of one row, a plan read again)
fails here, while a refactor that keeps the counts, in whatever order, passes. On SQLite and PostgreSQL;
``BEGIN`` statements are not counted (PostgreSQL's driver sends none)."""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from storage import repositories as repo
from tasks import steps
from tests.support.stack import Stack

# Each database counts its own statements.
pytestmark = pytest.mark.both_databases

ERR = "What does error ERR_4021 mean?"


@pytest.fixture
def stack(quiet_stack: Stack) -> Stack:  # the steps' own statements only (conftest.py)
    return quiet_stack


def within(sent: list[str], total: int, **kinds: int) -> None:
    """`sent` is at most `total` statements, and at most `kinds[k]` of each kind named (``SELECT_hop=1`` for
    "SELECT hop"; a kind not named is bounded by the total only)."""
    counts = Counter(s.replace(" ", "_") for s in sent)
    over = {k: counts[k] for k, most in kinds.items() if counts[k] > most}
    assert len(sent) <= total and not over, f"over budget: {len(sent)} > {total} or {over}; sent {sent}"


def test_each_step_sends_only_the_statements_it_needs(stack: Stack) -> None:
    inv_id = stack.asked(ERR)
    services = stack.services

    # start: the checks and the move to running in one transaction, the UPDATE returning the row (no
    # re-read, then or after routing); then route/plan, the tenant's tools read (it has none), the hop saved
    # by INSERT ... RETURNING and the step's events with the hop's in ONE INSERT, all in a second one.
    # (One SELECT more in all for the corpus version the hop's searches cache under.)
    nxt, sent, commits = stack.counted(lambda: steps.start(services, inv_id))
    within(sent, 8, SELECT_investigation=1, SELECT_hop=1, UPDATE_investigation=2, SELECT_tool=1, INSERT_hop=1,
           INSERT_trace_event=1)
    assert commits <= 2
    assert nxt.kind == steps.NextKind.HOP and nxt.hop == 1
    slots = len(nxt.slots)
    # A slot of a hop this process planned reads no plan: its only statement is its trace event.
    for index, engine in nxt.slots:
        _, sent, commits = stack.counted(
            functools.partial(steps.retrieve, services, inv_id, 1, index, engine)
        )
        within(sent, 1, INSERT_trace_event=1)
        assert commits <= 1
    # reduce (the loop stops): reads, then evidence, counts (one UPDATE ... RETURNING), events, decision.
    nxt, sent, commits = stack.counted(lambda: steps.reduce(services, inv_id, 1))
    assert nxt.kind == steps.NextKind.SYNTHESIZE
    within(sent, 7, SELECT_investigation=1, SELECT_hop=1, SELECT_evidence=1, INSERT_evidence=1,
           INSERT_trace_event=1, UPDATE_investigation=1, UPDATE_hop=1)
    assert commits <= 2
    # synthesize: the final counts and the terminal status in ONE UPDATE, its event, and the deliveries to
    # make read in the same transaction.
    nxt, sent, commits = stack.counted(lambda: steps.synthesize(services, inv_id))
    within(sent, 6, SELECT_investigation=1, SELECT_evidence=1, SELECT_hop=1, UPDATE_investigation=1,
           INSERT_trace_event=1, SELECT_delivery=1)
    assert commits <= 2
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
        assert (inv.status, inv.hops, inv.retrieval_calls) == ("answered", 1, slots)


def test_a_reducer_that_goes_on_writes_the_row_once(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hop whose loop continues: its evidence, the next hop's queries and the calls so far in ONE UPDATE of
    the investigation (no second UPDATE of the row), then the next hop saved with this hop's decision, the
    reduction's events and the next hop's in ONE INSERT. The loop's own decision is replaced by CONTINUE (this
    tenant has no documents to go on with)."""
    from investigation import loop
    from investigation.state import LoopAction, LoopDecision, SubQuery

    inv_id = stack.asked(ERR)
    services = stack.services
    nxt = steps.start(services, inv_id)
    for index, engine in nxt.slots:
        steps.retrieve(services, inv_id, 1, index, engine)
    real = loop.reduce_hop

    def going_on(*args: Any, **kwargs: Any) -> loop.HopOutcome:
        out = real(*args, **kwargs)
        return dataclasses.replace(
            out,
            decision=LoopDecision(
                action=LoopAction.CONTINUE,
                reason="insufficient",
                next_queries=(SubQuery(text="ERR_4021 cause"),),
            ),
        )

    monkeypatch.setattr(loop, "reduce_hop", going_on)
    nxt, sent, commits = stack.counted(lambda: steps.reduce(services, inv_id, 1))
    assert nxt.kind == steps.NextKind.HOP and nxt.hop == 2
    within(sent, 10, SELECT_investigation=1, SELECT_hop=1, SELECT_evidence=1, INSERT_evidence=1,
           UPDATE_investigation=1, SELECT_tool=1, INSERT_hop=1, INSERT_trace_event=1, UPDATE_hop=1)
    assert commits <= 2  # the reads; the hop's writes, the tools read (none), the next hop with the decision
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
        assert (inv.hops, inv.retrieval_calls) == (2, len(nxt.slots))
        assert inv.subqueries == ["What does error ERR_4021 mean?", "ERR_4021 cause"]
        hop1 = repo.get_hop(session, investigation_id=inv_id, number=1)
        assert hop1 is not None and hop1.decision is not None and hop1.decision["action"] == "continue"


def test_a_hops_searches_run_together_in_one_round_trip_each_way_and_one_commit(
        stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """The inline executor's hop (`steps.retrieve_many`): every slot as its own retrieval task would do it,
    with one Redis round trip before the searches and one after and the slots' trace events in ONE INSERT
    and commit. An engine that crashes degrades its own slot only. Run again (a redelivery) it searches
    nothing, charges nothing and writes nothing, and answers the same."""
    from concurrent.futures import ThreadPoolExecutor

    inv_id = stack.asked(ERR)
    services = stack.services
    nxt = steps.start(services, inv_id)
    engines = sorted({engine for _, engine in nxt.slots})
    assert len(engines) >= 2 and len(nxt.slots) >= 2
    broken = engines[-1]
    searched: list[str] = []
    for name in engines:
        real = services.backends[name].search

        def search(*args: Any, _name: str = name, _real: Callable[..., Any] = real, **kwargs: Any) -> Any:
            searched.append(_name)
            if _name == broken:
                raise RuntimeError("index file truncated")
            return _real(*args, **kwargs)

        monkeypatch.setattr(services.backends[name], "search", search)
    client = services.state.client
    commands: list[object] = []
    execute: Callable[..., Any] = client.execute_command
    pipeline: Callable[..., Any] = client.pipeline
    pipelines: list[bool] = []

    # not the embedder's threads, storing the query vectors start prepared
    caller = threading.current_thread()

    def counted(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is caller:
            commands.append(args[0])
        return execute(*args, **kwargs)

    def counted_pipeline(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is caller:
            pipelines.append(True)
        return pipeline(*args, **kwargs)

    monkeypatch.setattr(client, "execute_command", counted)
    monkeypatch.setattr(client, "pipeline", counted_pipeline)
    with ThreadPoolExecutor(2) as pool:
        summaries, sent, commits = stack.counted(
            lambda: steps.retrieve_many(services, inv_id, 1, nxt.slots, run=pool.map))
        assert (commands, len(pipelines)) == (["EVALSHA"], 1)
        within(sent, 1, INSERT_trace_event=1)
        assert commits <= 1
        assert sorted(searched) == sorted(engine for _, engine in nxt.slots)
        assert [s["slot"] for s in summaries] == [f"{i}:{e}" for i, e in nxt.slots]
        for summary, (_, engine) in zip(summaries, nxt.slots, strict=True):
            if engine == broken:
                assert summary["error"] == "RuntimeError: index file truncated" and summary["hits"] == 0
            else:
                assert summary["error"] is None
        with services.session() as session:
            events = [e for e in repo.list_events(session, investigation_id=inv_id) if e.kind == "retrieval"]
        assert [e.step_key for e in events] == [f"retrieve:1:{i}:{e}" for i, e in nxt.slots]
        assert {e.data["error"] for e in events if e.data["engine"] == broken} == {
            "RuntimeError: index file truncated"}
        calls = services.state.usage(inv_id)["retrieval_calls"]
        assert calls == len(nxt.slots)
        searched.clear()
        again, sent, commits = stack.counted(
            lambda: steps.retrieve_many(services, inv_id, 1, nxt.slots, run=pool.map))
    assert (again, searched, sent, commits) == (summaries, [], [], 0)
    assert services.state.usage(inv_id)["retrieval_calls"] == calls
    with pytest.raises(LookupError, match="never planned"):
        steps.retrieve_many(services, inv_id, 1, [*nxt.slots, (99, engines[0])])
    assert services.state.usage(inv_id)["retrieval_calls"] == calls  # refused before anything was charged
    assert steps.retrieve_many(services, inv_id, 1, []) == []  # no slots: nothing read, nothing sent
