"""Hops, evidence and trace events: idempotent writes (a redelivered task writes nothing twice)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import event
from sqlmodel import Session

from investigation.errors import NotFound
from investigation.state import Grade, Visibility
from storage._records import EVENT_OBSERVERS, NewEvent
from storage.models import EvidenceRecord, Investigation
from storage.repositories import (
    add_event,
    add_events,
    add_evidence,
    atomic,
    event_view,
    get_hop,
    list_events,
    list_evidence,
    list_hops,
    mark_hop_reduced,
    new_event,
    save_hop,
)
from tests.integration.storage.conftest import make_evidence, sql


def test_save_hop_is_idempotent(session: Session, investigation: Investigation) -> None:
    queries = [{"text": "sso plan", "purpose": ""}]
    first = save_hop(
        session, investigation_id=investigation.id, number=1, queries=queries, engines=["lexical"]
    )
    again = save_hop(
        session, investigation_id=investigation.id, number=1, queries=[{"text": "x"}], engines=[]
    )
    assert again.id == first.id
    assert (again.queries, again.engines, again.state, again.decision) == (
        queries,
        ["lexical"],
        "planned",
        None,
    )
    save_hop(session, investigation_id=investigation.id, number=0, queries=[], engines=["vector"])
    assert [h.number for h in list_hops(session, investigation_id=investigation.id)] == [0, 1]
    assert get_hop(session, investigation_id=investigation.id, number=7) is None


def test_the_first_reduction_of_a_hop_wins(session: Session, investigation: Investigation) -> None:
    save_hop(session, investigation_id=investigation.id, number=1, queries=[], engines=[])
    first = {"action": "continue", "reason": "missing", "next_queries": [{"text": "b"}]}
    assert mark_hop_reduced(session, investigation_id=investigation.id, number=1, decision=first) == first
    hop = get_hop(session, investigation_id=investigation.id, number=1)
    assert hop is not None and (hop.state, hop.decision) == ("reduced", first)
    again = mark_hop_reduced(
        session, investigation_id=investigation.id, number=1, decision={"action": "stop"}
    )
    assert again == first
    with pytest.raises(NotFound):
        mark_hop_reduced(session, investigation_id=investigation.id, number=9, decision={})


def test_a_new_hop_and_its_first_reduction_are_one_statement_each(
        session: Session, investigation: Investigation, statements: list[str]) -> None:
    statements.clear()
    hop = save_hop(
        session, investigation_id=investigation.id, number=1, queries=[{"text": "a"}], engines=["bm25"]
    )
    assert sql(statements) == ["INSERT"]  # INSERT ... RETURNING: no re-read of the row just written
    assert (hop.number, hop.queries, hop.state) == (1, [{"text": "a"}], "planned")
    assert hop in session and not session.dirty and not session.new  # held as the row it is: nothing to flush
    session.commit()
    assert sql(statements) == ["INSERT"]
    statements.clear()
    reduced = mark_hop_reduced(
        session, investigation_id=investigation.id, number=1, decision={"action": "stop"}
    )
    assert sql(statements) == ["UPDATE"]  # UPDATE ... RETURNING the decision
    assert reduced == {"action": "stop"}
    statements.clear()  # a redelivered step: the existing rows, read back
    again = save_hop(
        session, investigation_id=investigation.id, number=1, queries=[{"text": "b"}], engines=[]
    )
    assert again.queries == [{"text": "a"}]
    statements.clear()
    assert mark_hop_reduced(session, investigation_id=investigation.id, number=1,
                            decision={"action": "continue"}) == {"action": "stop"}
    assert sql(statements) == ["UPDATE", "SELECT"]


def test_a_hop_the_session_holds_reads_its_reduction(session: Session, investigation: Investigation) -> None:
    hop = save_hop(session, investigation_id=investigation.id, number=1, queries=[], engines=[])
    mark_hop_reduced(session, investigation_id=investigation.id, number=1, decision={"action": "stop"})
    session.close()  # still readable: refreshed inside the write, not merely expired
    assert (hop.state, hop.decision) == ("reduced", {"action": "stop"})


def test_a_reducers_session_holding_no_hop_writes_one_core_update(
        session: Session, investigation: Investigation, statements: list[str]) -> None:
    save_hop(session, investigation_id=investigation.id, number=1, queries=[], engines=[])
    session.expunge_all()
    statements.clear()
    assert mark_hop_reduced(session, investigation_id=investigation.id, number=1, decision={"a": 1}) == {
        "a": 1
    }
    assert sql(statements) == ["UPDATE"] and statements[-1].endswith("decision")  # RETURNING only that
    assert not session.identity_map  # nothing loaded


def test_add_evidence_counts_only_new_rows(session: Session, investigation: Investigation) -> None:
    batch = [make_evidence("e1"), make_evidence("e2"), make_evidence("e1")]
    assert add_evidence(session, investigation_id=investigation.id, evidence=batch) == 2
    assert add_evidence(session, investigation_id=investigation.id, evidence=batch) == 0
    assert (
        add_evidence(
            session, investigation_id=investigation.id, evidence=[make_evidence("e3"), make_evidence("e2")]
        )
        == 1
    )
    assert add_evidence(session, investigation_id=investigation.id, evidence=[]) == 0
    [e1] = [r for r in list_evidence(session, investigation_id=investigation.id) if r.evidence_id == "e1"]
    assert (e1.chunk_id, e1.source_id, e1.grade, e1.url, e1.query) == (
        "c-e1",
        "doc-e1",
        "correct",
        "https://kb/e1",
        "which plan",
    )


def test_evidence_rows_hold_every_column(session: Session, investigation: Investigation) -> None:
    """add_evidence writes plain rows, not models: every column of EvidenceRecord (but the id) is set from
    the evidence, so a column added to the model and not to the rows fails here."""
    ev = make_evidence("full", hop=3, score=0.25, grade=Grade.AMBIGUOUS).model_copy(
        update={"visibility": Visibility.INTERNAL, "flagged": True})
    add_evidence(session, investigation_id=investigation.id, evidence=[ev])
    (row,) = list_evidence(session, investigation_id=investigation.id)
    written = row.model_dump(exclude={"id"})
    assert set(written) == {c.name for c in EvidenceRecord.__table__.columns} - {"id"}  # type: ignore[attr-defined]
    assert written == {
        "investigation_id": investigation.id,
        "evidence_id": "full",
        "chunk_id": "c-full",
        "source_id": "doc-full",
        "title": "T full",
        "text": "text full",
        "url": "https://kb/full",
        "score": 0.25,
        "grade": "ambiguous",
        "hop": 3,
        "query": "which plan",
        "visibility": "internal",
        "flagged": True,
    }


def test_evidence_is_listed_by_hop_then_score(session: Session, investigation: Investigation) -> None:
    add_evidence(
        session,
        investigation_id=investigation.id,
        evidence=[
            make_evidence("a", hop=2, score=0.9),
            make_evidence("b", hop=1, score=0.1),
            make_evidence("c", hop=1, score=0.8),
            make_evidence("d", hop=2, score=0.3, grade=Grade.AMBIGUOUS),
        ],
    )
    assert [r.evidence_id for r in list_evidence(session, investigation_id=investigation.id)] == [
        "c",
        "b",
        "a",
        "d",
    ]


def test_large_evidence_batches_are_split(session: Session, investigation: Investigation) -> None:
    batch = [make_evidence(f"e{i}", score=i / 1000) for i in range(450)]
    assert add_evidence(session, investigation_id=investigation.id, evidence=batch) == 450
    assert add_evidence(session, investigation_id=investigation.id, evidence=batch) == 0
    assert len(list_evidence(session, investigation_id=investigation.id)) == 450


def test_events_are_written_once_per_step_and_listed_in_order(
    session: Session, investigation: Investigation
) -> None:
    inv_id = investigation.id
    assert add_event(
        session, investigation_id=inv_id, step_key="route", kind="route", data={"route": "lookup"}
    )
    assert not add_event(session, investigation_id=inv_id, step_key="route", kind="route", data={"other": 1})
    assert add_event(
        session, investigation_id=inv_id, step_key="hop:1:plan", kind="plan", hop=1, data={"q": ["a"]}
    )
    assert add_event(session, investigation_id=inv_id, step_key="hop:1:reduce", kind="reduce", hop=1, data={})
    events = list_events(session, investigation_id=inv_id)
    assert [e.step_key for e in events] == ["route", "hop:1:plan", "hop:1:reduce"]
    assert events[0].data == {"route": "lookup"}
    assert events[0].id is not None
    later = list_events(session, investigation_id=inv_id, after_id=events[0].id)
    assert [e.kind for e in later] == ["plan", "reduce"]
    view = event_view(events[1])
    assert set(view) == {"id", "kind", "hop", "at", "data"}
    assert (view["id"], view["kind"], view["hop"], view["data"]) == (events[1].id, "plan", 1, {"q": ["a"]})
    assert view["at"].endswith("+00:00")


# -- one transaction per step (repo.atomic) ---------------------------------------------------------------


class _Boom(Exception):
    """Raised inside an atomic block by the tests below."""


@pytest.fixture
def observed(session_factory: Callable[[], Session]) -> Iterator[list[tuple[str, bool]]]:
    """Each event the observers hear of, with whether another session could already read it."""
    heard: list[tuple[str, bool]] = []

    def observe(_session: Session, event: NewEvent) -> None:
        with session_factory() as other:
            keys = {e.step_key for e in list_events(other, investigation_id=event.investigation_id)}
        heard.append((event.step_key, event.step_key in keys))

    EVENT_OBSERVERS.append(observe)
    try:
        yield heard
    finally:
        EVENT_OBSERVERS.remove(observe)


def test_an_atomic_block_commits_its_writes_and_events_together_in_order(
    session: Session, investigation: Investigation, session_factory: Callable[[], Session],
    observed: list[tuple[str, bool]],
) -> None:
    inv_id = investigation.id
    save_hop(session, investigation_id=inv_id, number=1, queries=[], engines=["bm25"])
    events = [new_event(investigation_id=inv_id, step_key=f"k{i}", kind="fusion", hop=1, data={"i": i})
              for i in (3, 1, 2)]
    with atomic(session):
        add_evidence(session, investigation_id=inv_id, evidence=[make_evidence("e1")])
        assert add_events(session, events) == 3
        mark_hop_reduced(session, investigation_id=inv_id, number=1, decision={"action": "stop"})
        # Not committed yet: another session sees none of it, and no observer has heard of it.
        with session_factory() as other:
            assert list_events(other, investigation_id=inv_id) == []
            assert list_evidence(other, investigation_id=inv_id) == []
        assert observed == []
    # Committed together; observed after the commit, once each, in the order they were added.
    assert observed == [("k3", True), ("k1", True), ("k2", True)]
    with session_factory() as other:
        assert [e.step_key for e in list_events(other, investigation_id=inv_id)] == ["k3", "k1", "k2"]
        assert [r.evidence_id for r in list_evidence(other, investigation_id=inv_id)] == ["e1"]
        hop = get_hop(other, investigation_id=inv_id, number=1)
        assert hop is not None and hop.state == "reduced"
    # A redelivered step writes nothing twice and announces nothing again.
    with atomic(session):
        assert add_events(session, events) == 0
    assert len(observed) == 3


def test_an_error_in_an_atomic_block_leaves_nothing_written_and_nothing_observed(
    session: Session, investigation: Investigation, session_factory: Callable[[], Session],
    observed: list[tuple[str, bool]],
) -> None:
    inv_id = investigation.id
    save_hop(session, investigation_id=inv_id, number=1, queries=[], engines=["bm25"])
    with pytest.raises(_Boom), atomic(session):
        add_evidence(session, investigation_id=inv_id, evidence=[make_evidence("e1")])
        add_events(session, [new_event(investigation_id=inv_id, step_key="k", kind="fusion", data={})])
        mark_hop_reduced(session, investigation_id=inv_id, number=1, decision={"action": "stop"})
        raise _Boom
    assert observed == []
    with session_factory() as other:
        assert list_events(other, investigation_id=inv_id) == []
        assert list_evidence(other, investigation_id=inv_id) == []
        hop = get_hop(other, investigation_id=inv_id, number=1)
        assert hop is not None and hop.state == "planned"
    # The session is usable again: the same writes succeed in the next block.
    with atomic(session):
        add_events(session, [new_event(investigation_id=inv_id, step_key="k", kind="fusion", data={})])
    assert observed == [("k", True)]


def test_a_write_outside_an_atomic_block_is_observed_after_its_own_commit(
    session: Session, investigation: Investigation, observed: list[tuple[str, bool]],
) -> None:
    assert add_event(session, investigation_id=investigation.id, step_key="s", kind="stop", data={})
    assert not add_event(session, investigation_id=investigation.id, step_key="s", kind="stop", data={})
    assert observed == [("s", True)]


def _inserts(session: Session, write: Callable[[], int], expected: int) -> list[str]:
    """The INSERT statements `write()` sends, run in one `atomic` block; it must return `expected`."""
    inserts: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        if statement.lstrip().upper().startswith("INSERT"):
            inserts.append(statement)

    engine = session.get_bind()
    event.listen(engine, "before_cursor_execute", record)
    try:
        with atomic(session):
            assert write() == expected
    finally:
        event.remove(engine, "before_cursor_execute", record)
    return inserts


def test_a_steps_events_are_one_insert_that_skips_recorded_and_repeated_step_keys(
    session: Session, investigation: Investigation, observed: list[tuple[str, bool]],
) -> None:
    inv_id = investigation.id
    assert add_event(session, investigation_id=inv_id, step_key="route", kind="route", data={"first": True})
    observed.clear()
    batch = [new_event(investigation_id=inv_id, step_key=key, kind="fusion", data={"n": n})
             for n, key in enumerate(["fuse:1", "route", "grade:1", "fuse:1", "judge:1"])]
    inserts = _inserts(session, lambda: add_events(session, batch), 3)
    assert len(inserts) == 1  # one statement for the whole step
    # the new ones, in order, once
    assert observed == [("fuse:1", True), ("grade:1", True), ("judge:1", True)]
    stored = {e.step_key: e.data for e in list_events(session, investigation_id=inv_id)}
    assert [*stored] == ["route", "fuse:1", "grade:1", "judge:1"]
    assert stored["route"] == {"first": True} and stored["fuse:1"] == {"n": 0}  # the first of each key kept
    with atomic(session):
        assert add_events(session, batch) == 0 and add_events(session, []) == 0
    assert len(observed) == 3


def test_many_events_go_in_batches_of_one_statement_each_and_rows_must_give_the_same_columns(
    session: Session, investigation: Investigation, observed: list[tuple[str, bool]],
) -> None:
    """More rows than one statement takes (`_INSERT_BATCH`): one multi-row INSERT per batch, every row
    written once, in order; rows that do not give the same columns are refused before anything is sent."""
    from storage._common import _INSERT_BATCH, insert_new
    from storage.models import TraceEvent

    inv_id = investigation.id
    count = 2 * _INSERT_BATCH + 7
    batch = [new_event(investigation_id=inv_id, step_key=f"k{n:04d}", kind="fusion", data={"n": n, "é": [n]})
             for n in range(count)]
    inserts = _inserts(session, lambda: add_events(session, batch), count)
    assert len(inserts) == 3
    assert len(observed) == count
    stored = list_events(session, investigation_id=inv_id)
    assert [(e.step_key, e.data) for e in stored] == [(f"k{n:04d}", {"n": n, "é": [n]}) for n in range(count)]
    rows = [batch[0].row(), {**batch[1].row(), "hop": None}]
    rows[1].pop("hop")
    with pytest.raises(ValueError, match="same columns"), atomic(session):
        insert_new(session, TraceEvent, rows, ["investigation_id", "step_key"], "step_key")
