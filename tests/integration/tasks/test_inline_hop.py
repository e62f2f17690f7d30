"""The inline executor's hop reads the first searches' passages ahead while a hop of one query waits for its
query's embedding (`tasks/inline.py::_retrieve_hop`), and only then."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from investigation.state import Passage
from storage import repositories as repo
from tasks import inline, steps
from tasks.relay import Relay
from tests.support.stack import Stack

LONG = 30.0  # a search left waiting longer than this fails the test instead of hanging it


def _watched(stack: Stack, monkeypatch: pytest.MonkeyPatch, *,
             hold_embedding: bool) -> tuple[list[str], dict[str, list[str]]]:
    """(chunk ids read ahead, in order; ids found by each engine). With `hold_embedding`, a query embedded
    ahead (`Services.prepare_queries`, which `start` calls) runs only once a passage has been read ahead, or
    after LONG seconds when none is: its vector search, and the hop, wait for it meanwhile."""
    services = stack.services
    read: list[str] = []
    first_read = threading.Event()
    reasoner = services.reasoner
    reading: Callable[[Passage], None] = reasoner.read_ahead  # type: ignore[attr-defined]

    def read_ahead(passage: Passage) -> None:
        read.append(passage.chunk_id)
        reading(passage)
        first_read.set()

    monkeypatch.setattr(reasoner, "read_ahead", read_ahead)
    if hold_embedding:
        embedder = services.embedder
        embed_ahead: Callable[[str, str], None] = embedder._embed_ahead  # type: ignore[attr-defined]

        def held(key: str, text: str) -> None:
            first_read.wait(LONG)
            embed_ahead(key, text)

        monkeypatch.setattr(embedder, "_embed_ahead", held)
    found: dict[str, list[str]] = {}
    for name, backend in services.backends.items():
        real = backend.search

        def search(*args: Any, _name: str = name, _real: Callable[..., Any] = real, **kwargs: Any) -> Any:
            hits = _real(*args, **kwargs)
            found.setdefault(_name, []).extend(p.chunk_id for p in hits)
            return hits

        monkeypatch.setattr(backend, "search", search)
    return read, found


def test_a_one_query_hop_reads_the_lexical_hits_ahead_while_its_query_is_embedded(
        stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    services = stack.services
    inv_id = stack.asked("What does error ERR_4021 mean?")
    read, found = _watched(stack, monkeypatch, hold_embedding=True)
    # starts embedding the hop's query ahead (held until a passage is read)
    nxt = steps.start(services, inv_id)
    assert len({index for index, _ in nxt.slots}) == 1 and {e for _, e in nxt.slots} == {"bm25", "vector"}
    with ThreadPoolExecutor(4) as pool:
        inline._retrieve_hop(services, inv_id, nxt.hop, nxt.slots, pool)
    assert read, "nothing was read ahead"
    assert len(read) == len(set(read)) and set(read) <= set(found["bm25"])
    assert not services.preparing_queries()  # the query's run is done: nothing is read any more
    stored, _usage = services.state.hop_results(inv_id, nxt.hop)
    assert {slot: bool(hits.passages) for slot, hits in stored.items()} == {"0:bm25": True, "0:vector": True}


def test_a_hop_of_several_queries_reads_nothing_ahead(
        stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    services = stack.services
    inv_id = stack.asked("Sev 1 response time on Business vs Enterprise?")
    nxt = steps.start(services, inv_id)
    assert len({index for index, _ in nxt.slots}) >= 2  # as many model runs: both cores embed
    read, found = _watched(stack, monkeypatch, hold_embedding=False)
    with ThreadPoolExecutor(4) as pool:
        inline._retrieve_hop(services, inv_id, nxt.hop, nxt.slots, pool)
    assert read == [] and found["bm25"] and found["vector"]


def _kinds(stack: Stack, inv_id: str) -> list[tuple[str, str]]:
    with stack.services.session() as session:
        return [(e.kind, e.step_key) for e in repo.list_events(session, investigation_id=inv_id)]


def _searched(stack: Stack) -> tuple[str, steps.Next, Relay]:
    """A new investigation started and its first hop searched inline: (id, the hop, what it hands on)."""
    inv_id = stack.asked("What does error ERR_4021 mean?")
    nxt = steps.start(stack.services, inv_id)
    with ThreadPoolExecutor(4) as pool:
        handoff = inline._retrieve_hop(stack.services, inv_id, nxt.hop, nxt.slots, pool)
    return inv_id, nxt, handoff


def _raising(message: str) -> Callable[..., Any]:
    def fail(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError(message)

    return fail


def test_a_hops_search_events_are_written_with_its_reduction_first(stack: Stack) -> None:
    """The inline executor hands a hop's search events to its reducer: written in the reduction's
    transaction, before the reduction's own events (where their own transaction put them before)."""
    inv_id, nxt, handoff = _searched(stack)
    assert sorted(e.step_key for e in handoff.events) == sorted(f"retrieve:1:{i}:{e}" for i, e in nxt.slots)
    assert not any(kind == "retrieval" for kind, _ in _kinds(stack, inv_id))  # not written by the hop
    steps.reduce(stack.services, inv_id, nxt.hop, relay=handoff)
    kinds = [kind for kind, _ in _kinds(stack, inv_id)]
    assert kinds.count("retrieval") == len(nxt.slots)
    assert max(i for i, k in enumerate(kinds) if k == "retrieval") < kinds.index("fusion")


@pytest.mark.parametrize(
    "how", ["the reducer fails", "its transaction rolls back", "the investigation was over"]
)
def test_search_events_are_written_when_the_reduction_writes_nothing_or_fails(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A reduction that fails (its error is the one raised), whose transaction rolls back after the events
    went into it, or that writes nothing (the watchdog failed the investigation meanwhile): the hop's
    searches are traced all the same, on their own."""
    from investigation import loop

    services = stack.services
    inv_id, nxt, handoff = _searched(stack)
    if how == "the investigation was over":
        steps.fail(services, inv_id, reason="deadline", error="overdue")
        assert steps.reduce(services, inv_id, nxt.hop, relay=handoff).kind == steps.NextKind.DELIVER
    else:
        if how == "the reducer fails":
            monkeypatch.setattr(loop, "reduce_hop", _raising("broken"))
        else:
            monkeypatch.setattr(repo, "add_evidence", _raising("broken"))
        with pytest.raises(RuntimeError, match="broken"):
            steps.reduce(services, inv_id, nxt.hop, relay=handoff)
    kinds = [k for k, _ in _kinds(stack, inv_id)]
    assert kinds.count("retrieval") == len(nxt.slots) and "fusion" not in kinds


def test_start_embeds_the_question_before_it_routes_and_plans(
        stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hop 1 always searches the question itself (`loop.start`): its embedding starts as soon as the step has
    the question, before routing and planning, and the plan's own preparation does not embed it again."""
    from investigation import loop

    services = stack.services
    order: list[str] = []
    prepare, real_start = services.prepare_queries, loop.start
    embedder = services.embedder
    embedded: list[str] = []
    embed_ahead: Callable[[str, str], None] = embedder._embed_ahead  # type: ignore[attr-defined]

    def preparing(texts: Sequence[str]) -> None:
        order.append(f"prepare {list(texts)}")
        prepare(texts)

    def starting(*args: Any, **kwargs: Any) -> Any:
        order.append("route and plan")
        return real_start(*args, **kwargs)

    def embedding(key: str, text: str) -> None:
        embedded.append(text)
        embed_ahead(key, text)

    monkeypatch.setattr(services, "prepare_queries", preparing)
    monkeypatch.setattr(loop, "start", starting)
    monkeypatch.setattr(embedder, "_embed_ahead", embedding)
    question = "Sev 1 response time on Business vs Enterprise?"
    inv_id = stack.asked(question)
    nxt = steps.start(services, inv_id)
    assert order[:2] == [f"prepare {[question]}", "route and plan"]
    with services.session() as session:
        planned = repo.get_hop(session, investigation_id=inv_id, number=nxt.hop)
    assert planned is not None and planned.queries[0]["text"] == question and len(planned.queries) >= 2
    with ThreadPoolExecutor(4) as pool:
        inline._retrieve_hop(services, inv_id, nxt.hop, nxt.slots, pool)
    assert embedded.count(question) == 1  # embedded once, ahead: the plan's preparation found it on its way
    assert sorted(embedded) == sorted(q["text"] for q in planned.queries)
