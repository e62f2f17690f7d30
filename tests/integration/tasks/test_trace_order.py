"""Whoever sees an investigation terminal sees its whole trace: the synthesis event and the hop and
retrieval counts are written before the status moves (a webhook consumer or a poller reading the trace at
once never finds it without its answer step)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import Session

from app.intake import parse_request, submit_investigation
from storage import repositories as repo
from storage._records import EVENT_OBSERVERS
from storage.models import Investigation, TraceEvent
from tasks import inline
from tests.support.stack import build_stack

pytestmark = pytest.mark.integration


@pytest.fixture
def seen() -> Iterator[dict[str, str]]:
    """The investigation's status at the moment its synthesis event was written."""
    statuses: dict[str, str] = {}

    def observe(session: Session, event: TraceEvent) -> None:
        if event.kind == "synthesis":
            inv = session.get(Investigation, event.investigation_id)
            statuses[event.investigation_id] = inv.status if inv else "missing"

    EVENT_OBSERVERS.append(observe)
    try:
        yield statuses
    finally:
        EVENT_OBSERVERS.remove(observe)


@pytest.mark.parametrize("question", ["What does error ERR_4021 mean?", "Hi there, thanks for the help!"])
def test_the_synthesis_event_is_written_before_the_status_is_terminal(
        tmp_path: Path, redis_url: str, redis_prefix: str, seen: dict[str, str], question: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    services = stack.services
    with services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=stack.tenant_name)
    inv_id = submit_investigation(services, tenant=tenant, request=parse_request({"question": question}),
                                  launch=lambda _i: None).id
    inline.run(services, inv_id, deliver=False)

    assert seen[inv_id] in ("queued", "running")
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
    assert inv.status == "answered"
    if "ERR_4021" in question:
        assert inv.retrieval_calls >= 1 and inv.hops >= 1
