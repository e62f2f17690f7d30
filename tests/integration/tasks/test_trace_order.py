"""Whoever sees an investigation terminal sees its whole trace: the answer step's event is written in the
same transaction as the terminal status (a poller or webhook consumer reading the trace at once never finds
it without its synthesis), and the event's observers (metrics, spans) see the terminal status and the final
hop and retrieval counts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import Session

from app.intake import parse_request, submit_investigation
from storage import repositories as repo
from storage._records import EVENT_OBSERVERS, NewEvent
from storage.models import Investigation
from tasks import inline
from tests.support.stack import Stack, build_stack


@pytest.fixture
def seen() -> Iterator[dict[str, tuple[str, int]]]:
    """The investigation's status and retrieval count when its synthesis event was observed."""
    statuses: dict[str, tuple[str, int]] = {}

    def observe(session: Session, event: NewEvent) -> None:
        if event.kind == "synthesis":
            inv = session.get(Investigation, event.investigation_id)
            assert inv is not None
            session.refresh(inv)
            statuses[event.investigation_id] = (inv.status, inv.retrieval_calls)

    EVENT_OBSERVERS.append(observe)
    try:
        yield statuses
    finally:
        EVENT_OBSERVERS.remove(observe)


def _submit(stack: Stack, question: str) -> str:
    with stack.services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=stack.tenant_name)
    return submit_investigation(stack.services, tenant=tenant, request=parse_request({"question": question}),
                                launch=lambda _i: None).id


@pytest.mark.parametrize("question", ["What does error ERR_4021 mean?", "Hi there, thanks for the help!"])
def test_the_synthesis_event_is_observed_with_the_terminal_status_and_final_counts(
    tmp_path: Path, redis_url: str, redis_prefix: str, seen: dict[str, tuple[str, int]], question: str
) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    inv_id = _submit(stack, question)
    inline.run(stack.services, inv_id, deliver=False)

    status, retrieval_calls = seen[inv_id]
    assert status == "answered"
    if "ERR_4021" in question:
        assert retrieval_calls >= 1


def test_the_terminal_status_and_its_event_are_one_transaction(
        tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url)
    inv_id = _submit(stack, "What does error ERR_4021 mean?")

    def event(step: str, **data: object) -> NewEvent:
        return repo.new_event(investigation_id=inv_id, step_key=step, kind="synthesis", data=dict(data))

    # An event that cannot be written (its data is not JSON) rolls the status change back with it.
    with pytest.raises(Exception), stack.services.session() as session:  # noqa: B017 - differs per driver
        repo.finish_investigation(session, investigation_id=inv_id, status="answered", stop_reason="x",
                                  event=event("synthesis", bad=object()))
    with stack.services.session() as session:
        assert repo.get_investigation(session, investigation_id=inv_id).status == "queued"
        assert repo.list_events(session, investigation_id=inv_id) == []

    with stack.services.session() as session:
        assert repo.finish_investigation(session, investigation_id=inv_id, status="answered", stop_reason="x",
                                         event=event("synthesis", status="answered"))
        # A late second finisher neither moves the status nor leaves an event of its own.
        assert not repo.finish_investigation(session, investigation_id=inv_id, status="failed",
                                             stop_reason="deadline", event=event("late", status="failed"))
    with stack.services.session() as session:
        assert repo.get_investigation(session, investigation_id=inv_id).status == "answered"
        assert [e.step_key for e in repo.list_events(session, investigation_id=inv_id)] == ["synthesis"]
