"""Celery on RabbitMQ (`SLEUTH_BROKER_URL=amqp://…`, a vhost of the test run's own) with Redis kept for state:
investigations run end to end through a real worker process, and every connection to the broker dropped
mid-run twice (what a broker restart does to its clients) loses nothing and delivers nothing twice; queue
depths and the messages waiting (for the re-drive) are read through AMQP without taking any away.

The worker-kill and step-fairness tests run on both brokers in tests/integration/tasks/."""

from __future__ import annotations

import json
import socket
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from cli.commands import celery_for
from config.settings import Settings
from investigation.errors import ValidationFailed
from observability.exposition import StateCollector
from tests.support.http import Receiver
from tests.support.rabbitmq import Vhost, server_url
from tests.support.stack import Stack, build_stack
from tests.support.wait import wait_until
from workers import names
from workers.broker import check_broker, queue_depths
from workers.inflight import queued

QUESTIONS = ["Which plan includes SCIM provisioning?", "What does error ERR_4021 mean?",
             "How much does the Team plan cost?", "What uptime does the Business plan guarantee?"]


@pytest.fixture()
def stack(tmp_path: Path, redis_url: str, redis_prefix: str, broker_url: str | None) -> Iterator[Stack]:
    built = build_stack(tmp_path / "home", redis_url, redis_prefix, broker_url=broker_url)
    try:
        yield built
    finally:
        built.stop_workers()
        built.services.engine.dispose()


def _delivered(receiver: Receiver) -> Counter[str]:
    """Accepted webhook deliveries per investigation id."""
    return Counter(str(json.loads(r["body"])["id"]) for r in receiver.requests)


@pytest.mark.parametrize("broker_url", ["rabbitmq"], indirect=True)
def test_queue_depths_and_waiting_messages_are_read_without_taking_them(stack: Stack) -> None:
    from kombu.transport.native_delayed_delivery import (
        bind_queue_to_native_delayed_delivery_exchange,
        declare_native_delayed_delivery_exchanges_and_queues,
    )

    app = celery_for(stack.settings)
    with app.connection_for_write() as conn:  # what a worker declares at start: its queues, a retry's delays
        for queue in app.amqp.queues.values():
            queue.bind(conn.default_channel).declare()
        declare_native_delayed_delivery_exchanges_and_queues(conn, "quorum")
        for queue in app.amqp.queues.values():
            bind_queue_to_native_delayed_delivery_exchange(conn, queue)
    for index in range(3):  # no worker consumes: they wait
        app.send_task(names.T_RETRIEVE, args=("inv-waiting", 1, index, "lexical"))
    app.send_task(names.T_DELIVER, args=("delivery-waiting",))
    # a retry waiting out its delay
    app.send_task(names.T_DELIVER, args=("delivery-retrying",), countdown=600)

    expected = {q: 0 for q in names.ALL_QUEUES} | {names.Q_RETRIEVE: 3, names.Q_DELIVER: 1}
    assert wait_until(lambda: queue_depths(stack.settings, stack.services.redis) == expected, timeout=10)
    text = " ".join(queued(app, stack.settings))
    assert text.count("inv-waiting") == 3 and "delivery-waiting" in text and "delivery-retrying" in text
    # Read again: every message went back to its queue.
    assert queue_depths(stack.settings, stack.services.redis) == expected
    assert " ".join(queued(app, stack.settings)).count("inv-waiting") == 3
    # /metrics shows the same depths.
    (depth,) = [m for m in StateCollector(stack.services).collect() if m.name == "sleuth_queue_depth"]
    assert {s.labels["queue"]: s.value for s in depth.samples} == {q: float(n) for q, n in expected.items()}


@pytest.fixture()
def restarted(rabbitmq_vhost: Vhost) -> Iterator[Vhost]:
    """A vhost of this test's own (whose connections it drops): this process's pooled connections to it,
    closed by the broker, are never handed to another test (kombu pools connections by URL)."""
    del rabbitmq_vhost  # (RabbitMQ answers, rabbitmqctl works)
    vhost = Vhost(server_url())
    vhost.create()
    try:
        yield vhost
    finally:
        vhost.delete()


def test_investigations_run_end_to_end_through_a_broker_restart_losing_nothing_and_delivering_once(
    tmp_path: Path, redis_url: str, redis_prefix: str, restarted: Vhost, redis_client: redis.Redis
) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, broker_url=restarted.url)
    rabbitmq_vhost = restarted
    receiver = Receiver()
    try:
        stack.start_worker(concurrency=2, beat=True, SLEUTH_DEBUG_RETRIEVE_DELAY_MS="600")
        stack.wait_ready()
        callback: dict[str, object] = {"type": "webhook", "url": receiver.url}
        ids = [stack.ask(q, callback=callback) for q in QUESTIONS[:3]]
        # Mid-run: retrievals are running (acks late: their messages are unacknowledged) when the broker
        # drops every connection, the worker's and this process's publisher's alike.
        assert wait_until(lambda: any(_status(stack, i) == "running" for i in ids), timeout=30)
        rabbitmq_vhost.drop_connections()
        ids += [stack.ask("Which plan includes SSO?", callback=callback)]  # the publisher reconnects
        time.sleep(1.0)
        rabbitmq_vhost.drop_connections()
        views = [stack.wait(i, timeout=120) for i in ids]
        assert {v["status"] for v in views} == {"answered"}, views
        assert wait_until(lambda: len(receiver.requests) >= len(ids), timeout=60)
        time.sleep(1.0)  # a duplicate would arrive now
        assert _delivered(receiver) == Counter(ids)
        # The messages went through RabbitMQ: no Redis broker list was written under the prefix.
        prefix = stack.settings.redis_prefix
        assert not [
            k
            for k in redis_client.scan_iter(f"{prefix}:celery:*")
            if k.rsplit(":", 1)[-1] in names.ALL_QUEUES
        ]
    finally:
        receiver.close()
        stack.stop_workers()
        stack.services.engine.dispose()


def _status(stack: Stack, inv_id: str) -> str:
    from storage import repositories as repo

    with stack.services.session() as session:
        return str(repo.get_investigation(session, investigation_id=inv_id).status)


def test_a_broker_that_does_not_answer_is_refused_naming_the_variable_and_host(tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    settings = Settings(home=tmp_path, broker_url=f"amqp://guest:guest@127.0.0.1:{port}//")
    with pytest.raises(ValidationFailed) as raised:
        check_broker(settings, timeout=2)
    assert str(raised.value).startswith("SLEUTH_BROKER_URL:") and f"127.0.0.1:{port}" in str(raised.value)
