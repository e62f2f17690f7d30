"""The broker transport of Sleuth's Celery app (`workers.app.PublisherTransport`), on real Redis: publishing
and acknowledging reuse one client per channel and connection pool instead of building one per command, and
the messages are the ones kombu's own transport sends and receives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kombu.transport
import pytest
import redis
from celery import Celery
from kombu.connection import Connection

from config.settings import Settings
from workers.app import PublisherChannel, create_celery

pytestmark = pytest.mark.integration

QUEUE = "sleuth-test-publisher"


@pytest.fixture()
def app(celery_app: Celery) -> Celery:
    return celery_app


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    created: list[Any] = []
    build: Any = PublisherChannel._create_client

    def counted(self: PublisherChannel, asynchronous: bool = False) -> Any:
        client = build(self, asynchronous=asynchronous)
        if not asynchronous:
            created.append(client)
        return client

    monkeypatch.setattr(PublisherChannel, "_create_client", counted)
    return created


def test_every_redis_url_gets_the_publisher_transport(app: Celery, tmp_path: Path) -> None:
    with app.connection_for_write() as conn:
        assert isinstance(conn.default_channel, PublisherChannel)
    for url in ("redis://127.0.0.1:1/0", "unix:///tmp/sleuth-no-such.sock?db=2"):
        built = create_celery(Settings(home=tmp_path / "other", redis_url=url))  # no connection is made
        try:
            with built.connection_for_write() as conn:
                assert conn.transport_cls in ("redis", "kombu.transport.redis")  # the URL's own scheme...
                assert conn.transport.Channel is PublisherChannel  # ...resolved to the publisher transport
        finally:
            built.close()


def test_publishing_reuses_one_client_and_delivers_every_message(
        app: Celery, redis_client: redis.Redis, redis_prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    created = _counting(monkeypatch)
    with app.connection_for_write() as conn, conn.Producer() as producer:
        channel = producer.channel
        for i in range(20):
            app.send_task("sleuth.test.publisher", args=(i,), queue=QUEUE, producer=producer)
        assert len(created) == 1  # kombu's own channel built 42 here (the message and its task-sent event, each)
        assert redis_client.llen(f"{redis_prefix}:celery:{QUEUE}") == 20
        # kombu replaces its pool (after a fork, a disconnect): the next publish gets a client of the new pool.
        channel._disconnect_pools()
        app.send_task("sleuth.test.publisher", args=(20,), queue=QUEUE, producer=producer)
        assert len(created) == 2
        assert created[1].connection_pool is channel.pool is not created[0].connection_pool
    assert redis_client.llen(f"{redis_prefix}:celery:{QUEUE}") == 21


def test_consuming_and_acknowledging_work_as_before(app: Celery, redis_client: redis.Redis, redis_prefix: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    created = _counting(monkeypatch)
    with app.connection_for_write() as conn:
        queue = conn.SimpleQueue(QUEUE)
        for i in range(5):
            queue.put({"n": i})
        got = []
        for _ in range(5):
            message = queue.get(timeout=5)
            got.append(message.payload["n"])
            message.ack()
        assert got == [0, 1, 2, 3, 4]
        with pytest.raises(queue.Empty):
            queue.get(timeout=0.2)
        queue.close()
    assert len(created) <= 2  # one per channel (the queue's own channel), not one per put and ack
    assert redis_client.llen(f"{redis_prefix}:celery:{QUEUE}") == 0
    assert redis_client.hlen(f"{redis_prefix}:celery:unacked") == 0  # every acknowledgement landed


def test_a_plain_kombu_connection_to_the_same_redis_reads_what_it_sent(
        app: Celery, redis_prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the publisher transport writes is kombu's own format: the stock transport (e.g. another tool
    reading the queues) receives it."""
    app.send_task("sleuth.test.publisher", args=("hello",), queue=QUEUE)
    for scheme in ("redis", "rediss"):  # kombu's own mapping, as in a process that never built the app
        monkeypatch.setitem(kombu.transport.TRANSPORT_ALIASES, scheme, "kombu.transport.redis:Transport")
        monkeypatch.delitem(kombu.transport._transport_cache, scheme, raising=False)
    stock = Connection(app.conf.broker_url, transport_options={"global_keyprefix": f"{redis_prefix}:celery:"})
    with stock:
        assert type(stock.default_channel) is not PublisherChannel
        message = stock.SimpleQueue(QUEUE, no_ack=True).get(timeout=5)
        assert message.headers["task"] == "sleuth.test.publisher"
        args, kwargs, _embed = message.decode()
        assert (args, kwargs) == (["hello"], {})
