"""A webhook receiver down, then up, behind a real worker on either broker: the deliver task retries with
backoff (on RabbitMQ its countdown waits in the broker's delayed-delivery queues, on Redis in the worker) and
the answer is accepted once, every attempt carrying the same webhook id."""

from __future__ import annotations

import time

import pytest

from storage import repositories as repo
from tests.integration.tasks.conftest import Stack, wait_until
from tests.support.http import Receiver

DOWN = 2  # attempts answered 503 before the receiver is up


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("broker_url", ["redis", "rabbitmq"], indirect=True)
def test_a_receiver_down_then_up_gets_the_answer_once(stack: Stack) -> None:
    receiver = Receiver()
    receiver.script = [(503, {})] * DOWN
    try:
        stack.start_worker()
        stack.wait_ready()
        inv_id = stack.ask(
            "What does error ERR_4021 mean?", callback={"type": "webhook", "url": receiver.url}
        )
        assert stack.wait(inv_id, timeout=60)["status"] == "answered"
        assert wait_until(lambda: len(receiver.requests) >= DOWN + 1, timeout=60), _state(
            stack, inv_id, receiver
        )
        time.sleep(1.5)  # a duplicate would arrive now
        assert len(receiver.requests) == DOWN + 1
        assert len({r["headers"]["webhook-id"] for r in receiver.requests}) == 1
        with stack.services.session() as session:
            (delivery,) = repo.list_deliveries(session, investigation_id=inv_id)
        assert delivery.status == "delivered" and delivery.attempts == DOWN + 1
    finally:
        receiver.close()


def _state(stack: Stack, inv_id: str, receiver: Receiver) -> str:
    with stack.services.session() as session:
        deliveries = repo.list_deliveries(session, investigation_id=inv_id)
    return f"{len(receiver.requests)} requests; " + "; ".join(
        f"{d.status} after {d.attempts}" for d in deliveries
    )
