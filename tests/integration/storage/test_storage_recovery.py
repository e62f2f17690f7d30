"""The re-drive scans on every database: idle active investigations, stranded pending deliveries."""

from __future__ import annotations

from datetime import timedelta

from cryptography.fernet import Fernet
from sqlmodel import Session

from storage import repositories as repo
from storage.models import utcnow
from storage.secrets import SecretBox


def _inv(session: Session, callback: dict[str, object] | None = None) -> str:
    tenant, _ = repo.create_tenant(
        session, name=f"t-{utcnow().timestamp()}", box=SecretBox(Fernet.generate_key())
    )
    inv, _ = repo.create_investigation(
        session,
        tenant=tenant,
        question="q?",
        mode="agentic",
        callback=callback,
        budget={},
        idempotency_key=None,
        deadline_seconds=60,
    )
    return inv.id


def test_idle_means_no_update_and_no_event_since(session: Session) -> None:
    inv_id = _inv(session)
    later = utcnow() + timedelta(seconds=5)
    assert repo.list_idle(session, idle_since=later) == [inv_id]
    assert repo.list_idle(session, idle_since=utcnow() - timedelta(seconds=5)) == []  # just written
    repo.add_event(session, investigation_id=inv_id, step_key="x", kind="retrieval", data={})
    assert repo.list_idle(session, idle_since=utcnow() - timedelta(seconds=1)) == []  # an event is activity
    repo.finish_investigation(session, investigation_id=inv_id, status="answered", stop_reason="sufficient")
    assert repo.list_idle(session, idle_since=later) == []  # finished: nothing to re-drive


def test_stranded_deliveries_are_pending_ones_of_finished_investigations(session: Session) -> None:
    inv_id = _inv(session, {"type": "webhook", "url": "http://127.0.0.1:9/h"})
    later = utcnow() + timedelta(seconds=5)
    assert repo.list_stranded_deliveries(session, idle_since=later) == []  # still running
    repo.finish_investigation(session, investigation_id=inv_id, status="answered", stop_reason="sufficient")
    (delivery,) = repo.list_deliveries(session, investigation_id=inv_id)
    assert repo.list_stranded_deliveries(session, idle_since=later) == [delivery.id]
    assert repo.list_stranded_deliveries(session, idle_since=utcnow() - timedelta(seconds=5)) == []
    repo.mark_delivery(session, delivery_id=delivery.id, status="delivered")
    assert repo.list_stranded_deliveries(session, idle_since=later) == []


def test_active_among_names_the_queued_and_running_ones_in_batches(
    session: Session, secret_box: SecretBox
) -> None:
    tenant, _ = repo.create_tenant(session, name=f"t-{utcnow().timestamp()}", box=secret_box)
    ids = [
        repo.create_investigation(
            session,
            tenant=tenant,
            question=f"q{i}?",
            mode="agentic",
            callback=None,
            budget={},
            idempotency_key=None,
            deadline_seconds=60,
        )[0].id
        for i in range(70)
    ]
    for inv_id in ids[::3]:  # every third one finished
        repo.finish_investigation(
            session, investigation_id=inv_id, status="answered", stop_reason="sufficient"
        )
    repo.update_investigation(session, investigation_id=ids[1], status="running")
    active = {inv_id for i, inv_id in enumerate(ids) if i % 3}
    # 70 ids: statements of 32, 32 and 6 ids; unknown ids are simply not active.
    assert repo.active_among(session, ids=[*ids, "no-such-id"]) == active
    assert repo.active_among(session, ids=ids[:1]) == set() and repo.active_among(session, ids=ids[1:2]) == {
        ids[1]
    }
    assert repo.active_among(session, ids=[]) == set()
