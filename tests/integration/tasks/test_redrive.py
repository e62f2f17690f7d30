"""A restart re-drives what was in flight: work whose message is gone is sent again by the beat watchdog
within seconds (not after the visibility timeout or the deadline); work still queued is left alone, on both
brokers (read from Redis lists, or from RabbitMQ quorum queues through AMQP without taking any away)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from storage import repositories as repo
from tasks import steps
from tests.integration.tasks.conftest import Stack, build_stack, wait_until
from tests.support.http import Receiver
from workers.app import create_celery
from workers.inflight import queued

# The worker-driven scenarios run on SQLite only (the scans' SQL runs on both databases in
# tests/integration/storage/test_storage_recovery.py).
pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


@pytest.fixture()
def stack(
    tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str, broker_url: str | None
) -> Iterator[Stack]:
    # Visibility timeout left at its default (300 s): nothing here may wait for it. The watchdog asks the
    # workers what they hold for 1 s instead of 2 s (twice per run that finds idle work).
    built = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url,
                        redrive_idle_seconds=2.0, redrive_inspect_timeout=1.0, broker_url=broker_url)
    try:
        yield built
    finally:
        built.stop_workers()


def _new(stack: Stack, question: str, callback: dict[str, object] | None = None) -> str:
    return stack.persisted(question, callback=callback)


def _events(stack: Stack, inv_id: str, kind: str) -> list[dict[str, object]]:
    with stack.services.session() as session:
        return [e.data for e in repo.list_events(session, investigation_id=inv_id) if e.kind == kind]


def test_a_pending_delivery_with_no_message_is_sent(stack: Stack) -> None:
    receiver = Receiver()
    try:
        inv_id = _new(stack, "What does error ERR_4021 mean?", {"type": "webhook", "url": receiver.url})
        with stack.services.session() as session:  # finished, but its deliver message was lost
            repo.finish_investigation(session, investigation_id=inv_id, status="answered",
                                      stop_reason="sufficient", answer="The key was rotated.")
            (delivery,) = repo.list_deliveries(session, investigation_id=inv_id)
        assert delivery.status == "pending" and delivery.attempts == 0
        stack.start_worker(beat=True)
        assert wait_until(lambda: len(receiver.requests) >= 1, timeout=45)
        time.sleep(3)  # a few more watchdog runs: still exactly one
        assert len(receiver.requests) == 1
        with stack.services.session() as session:
            assert repo.get_delivery(session, delivery_id=delivery.id).status == "delivered"
    finally:
        receiver.close()


def test_a_hop_whose_chord_never_closed_is_reduced(stack: Stack) -> None:
    inv_id = _new(stack, "Which plan includes SCIM provisioning?")
    nxt = steps.start(stack.services, inv_id)  # hop 1 planned, its retrievals done ...
    assert nxt.kind == "hop"
    for index, engine in nxt.slots:
        steps.retrieve(stack.services, inv_id, nxt.hop, index, engine)
    # ... and the worker died before the chord sent the reducer.
    stack.start_worker(beat=True)
    view = stack.wait(inv_id, timeout=60)
    assert view["status"] == "answered", view
    assert {"step": "hop 1", "reason": "no message in flight"} in _events(stack, inv_id, "redrive")


def test_an_investigation_whose_start_was_lost_is_started(stack: Stack) -> None:
    inv_id = _new(stack, "How much does the Business plan cost?")  # persisted, never enqueued
    stack.start_worker(beat=True)
    view = stack.wait(inv_id, timeout=60)
    assert view["status"] == "answered", view
    assert [e["step"] for e in _events(stack, inv_id, "redrive")][:1] == ["start"]


@pytest.mark.parametrize("broker_url", ["redis", "rabbitmq"], indirect=True)
def test_work_still_queued_is_not_redriven(stack: Stack) -> None:
    # Nobody consumes `retrieve`: hop 1's retrievals wait in their queue; they are in flight, not lost. (On
    # RabbitMQ the watchdog reads the queued messages back through AMQP, taking none away.)
    from cli.commands import create_and_launch

    stack.start_worker(queues="plan,deliver", beat=True)
    stack.wait_ready()
    inv_id = create_and_launch(stack.services, stack.tenant_name, "Which plan includes SCIM?", "agentic")
    assert wait_until(lambda: bool(_events(stack, inv_id, "hop")), timeout=30)
    # What the watchdog reads back: the retrievals waiting in their queue name the investigation.
    assert wait_until(lambda: inv_id in "\n".join(queued(create_celery(stack.settings), stack.settings)),
                      timeout=10)
    time.sleep(5)  # several watchdog runs with the investigation idle for longer than redrive_idle_seconds
    assert _events(stack, inv_id, "redrive") == []
