"""Hops, evidence and trace events: idempotent writes (a redelivered task writes nothing twice)."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from investigation.errors import NotFound
from investigation.state import Grade
from storage.models import Investigation
from storage.repositories import (
    add_event,
    add_evidence,
    event_view,
    get_hop,
    list_events,
    list_evidence,
    list_hops,
    mark_hop_reduced,
    save_hop,
)
from tests.integration.storage.conftest import make_evidence

pytestmark = pytest.mark.integration


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
    hop = mark_hop_reduced(session, investigation_id=investigation.id, number=1, decision=first)
    assert (hop.state, hop.decision) == ("reduced", first)
    again = mark_hop_reduced(
        session, investigation_id=investigation.id, number=1, decision={"action": "stop"}
    )
    assert again.decision == first
    with pytest.raises(NotFound):
        mark_hop_reduced(session, investigation_id=investigation.id, number=9, decision={})


def test_add_evidence_counts_only_new_rows(session: Session, investigation: Investigation) -> None:
    batch = [make_evidence("e1"), make_evidence("e2"), make_evidence("e1")]
    assert add_evidence(session, investigation_id=investigation.id, evidence=batch) == 2
    assert add_evidence(session, investigation_id=investigation.id, evidence=batch) == 0
    assert (
        add_evidence(session, investigation_id=investigation.id, evidence=[make_evidence("e3"), make_evidence("e2")])
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
