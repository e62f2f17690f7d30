"""Races that happen in production (duplicate requests, watchdog vs. worker, redelivered tasks), played
with threads that each hold their own session and connection, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from sqlmodel import Session, func, select

from storage.models import Delivery, DeliveryAttempt, Investigation, Tenant, TraceEvent
from storage.repositories import (
    add_event,
    create_investigation,
    finish_investigation,
    get_investigation,
    get_or_create_delivery,
    record_attempt,
)
from tests.integration.storage.conftest import new_investigation

T = TypeVar("T")
THREADS = 8


def race(session_factory: Callable[[], Session], work: Callable[[Session, int], T]) -> list[T]:
    """Run `work` in THREADS threads released together; re-raise the first error."""
    barrier = threading.Barrier(THREADS)
    results: dict[int, T] = {}
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            with session_factory() as s:
                barrier.wait()
                results[i] = work(s, i)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    if errors:
        raise errors[0]
    return [results[i] for i in range(THREADS)]


def _count(session: Session, model: type, **where: str) -> int:
    stmt = select(func.count()).select_from(model)
    for name, value in where.items():
        stmt = stmt.where(getattr(model, name) == value)
    return session.exec(stmt).one()


def test_duplicate_requests_create_one_investigation(
    session: Session, session_factory: Callable[[], Session], tenant: Tenant
) -> None:
    def submit(s: Session, i: int) -> tuple[str, bool]:
        inv, created = create_investigation(
            s,
            tenant=tenant,
            question="Which plan includes SSO?",
            mode="agentic",
            callback={"type": "webhook", "url": "https://x"},
            budget={},
            idempotency_key="dup",
            deadline_seconds=60,
        )
        return inv.id, created

    results = race(session_factory, submit)
    assert len({inv_id for inv_id, _ in results}) == 1
    assert sum(created for _, created in results) == 1
    assert _count(session, Investigation) == 1
    assert _count(session, Delivery) == 1


def test_an_investigation_is_finished_exactly_once(
    session: Session, session_factory: Callable[[], Session], tenant: Tenant
) -> None:
    inv = new_investigation(session, tenant)

    def finish(s: Session, i: int) -> bool:
        status = "answered" if i % 2 else "failed"
        return finish_investigation(
            s, investigation_id=inv.id, status=status, stop_reason=f"r{i}", answer=f"a{i}"
        )

    results = race(session_factory, finish)
    assert results.count(True) == 1
    winner = results.index(True)
    final = get_investigation(session, investigation_id=inv.id)
    assert (final.stop_reason, final.answer) == (f"r{winner}", f"a{winner}")


def test_a_step_is_traced_once(
    session: Session, session_factory: Callable[[], Session], tenant: Tenant
) -> None:
    inv = new_investigation(session, tenant)
    results = race(
        session_factory,
        lambda s, i: add_event(
            s, investigation_id=inv.id, step_key="hop:1:reduce", kind="reduce", data={"i": i}
        ),
    )
    assert results.count(True) == 1
    assert _count(session, TraceEvent, investigation_id=inv.id) == 1


def test_delivery_rows_and_attempts_are_created_once(
    session: Session, session_factory: Callable[[], Session], tenant: Tenant
) -> None:
    inv = new_investigation(session, tenant)

    def deliver(s: Session, i: int) -> tuple[str, int]:
        d = get_or_create_delivery(
            s, investigation_id=inv.id, tenant_id=tenant.id, channel="email", target={"i": i}
        )
        attempt = record_attempt(s, delivery_id=d.id, number=1, status_code=250, error=None, duration_ms=i)
        return d.id, attempt.id or 0

    results = race(session_factory, deliver)
    assert len(set(results)) == 1
    assert _count(session, Delivery) == 1 and _count(session, DeliveryAttempt) == 1
