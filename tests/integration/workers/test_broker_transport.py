"""The broker transport of Sleuth's Celery app (`workers.publishing.PublisherTransport`), on real Redis:
publishing and acknowledging reuse one client per channel and connection pool instead of building one per
command, and
the messages are the ones kombu's own transport sends and receives."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import kombu.transport
import pytest
import redis
from celery import Celery
from kombu.connection import Connection

from config.settings import Settings
from workers import names, publishing
from workers.app import create_celery
from workers.publishing import PUBLISH_RETRIES, PublisherChannel, published_together

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
        # kombu's own channel built 42 here (the message and its task-sent event, each)
        assert len(created) == 1
        assert redis_client.llen(f"{redis_prefix}:celery:{QUEUE}") == 20
        # kombu replaces its pool (after a fork, a disconnect): the next publish gets a client of the new
        # pool.
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


class _BrokerCalls:
    """The broker client's round trips (kombu's prefixed client and pipelines: the result backend's are not
    counted): single commands by name, and pipeline executions (the commands each carried, and whether in a
    MULTI/EXEC transaction)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from kombu.transport.redis import PrefixedRedisPipeline, PrefixedStrictRedis

        self.commands: list[str] = []
        self.pipelines: list[tuple[list[str], bool]] = []
        command: Any = redis.Redis.execute_command
        execute: Any = redis.client.Pipeline.execute
        calls = self

        def counted_command(client: Any, *args: Any, **options: Any) -> Any:
            if type(client) is PrefixedStrictRedis:
                calls.commands.append(str(args[0]).upper())
            return command(client, *args, **options)

        def counted_execute(pipe: Any, *args: Any, **kwargs: Any) -> Any:
            # (no narrowing: `transaction` is a plain bool here)
            kombus = isinstance(pipe, PrefixedRedisPipeline)
            if kombus:
                calls.pipelines.append(
                    ([str(c[0][0]).upper() for c in pipe.command_stack], bool(pipe.transaction))
                )
            return execute(pipe, *args, **kwargs)

        monkeypatch.setattr(redis.Redis, "execute_command", counted_command)
        monkeypatch.setattr(redis.client.Pipeline, "execute", counted_execute)


def _queued(redis_client: redis.Redis, redis_prefix: str, queue: str) -> int:

    return sum(int(redis_client.llen(f"{redis_prefix}:celery:{key}")) for key in names.queue_keys(queue))


def _dispatch_hop(app: Celery, slots: int = 4) -> None:
    from tasks import steps, workflow

    pairs = tuple((i // 2, "bm25" if i % 2 == 0 else "vector") for i in range(slots))
    workflow.dispatch(app, "inv-together", steps.Next(steps.NextKind.HOP, 1, pairs))


def test_a_hops_messages_and_events_reach_the_broker_together_in_one_round_trip(
        app: Celery, redis_client: redis.Redis, redis_prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:

    _dispatch_hop(app)  # the producer pool and queue declarations warmed
    redis_client.delete(*[f"{redis_prefix}:celery:{k}" for k in names.queue_keys(names.Q_RETRIEVE)])
    calls = _BrokerCalls(monkeypatch)
    with published_together():
        _dispatch_hop(app)
        assert _queued(redis_client, redis_prefix, names.Q_RETRIEVE) == 0  # nothing visible inside the block
        assert calls.pipelines == []
    assert _queued(redis_client, redis_prefix, names.Q_RETRIEVE) == 4
    assert [c for c in calls.commands if c in ("LPUSH", "PUBLISH")] == []
    assert len(calls.pipelines) == 1  # one round trip: 4 messages, 4 task-sent events, in a transaction
    commands, transaction = calls.pipelines[0]
    assert sorted(commands) == ["LPUSH"] * 4 + ["PUBLISH"] * 4 and transaction  # MULTI ... EXEC


def test_without_the_block_each_message_and_event_is_its_own_round_trip(
        app: Celery, redis_client: redis.Redis, redis_prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control of the test above (what `workflow.dispatch` saves): a chord sent outside the block."""
    from tasks import workflow

    workflow.hop_canvas(app, "inv-apart", 1, ((0, "bm25"),)).apply_async()
    calls = _BrokerCalls(monkeypatch)
    workflow.hop_canvas(
        app, "inv-apart", 1, ((0, "bm25"), (0, "vector"), (1, "bm25"), (1, "vector"))
    ).apply_async()
    assert sorted(c for c in calls.commands if c in ("LPUSH", "PUBLISH")) == ["LPUSH"] * 4 + ["PUBLISH"] * 4
    assert calls.pipelines == []


def test_a_block_that_raises_sends_nothing_and_the_next_one_sends(
        app: Celery, redis_client: redis.Redis, redis_prefix: str) -> None:

    with pytest.raises(RuntimeError), published_together():
        _dispatch_hop(app)
        raise RuntimeError("the step failed after sending")
    assert _queued(redis_client, redis_prefix, names.Q_RETRIEVE) == 0  # all or nothing: nothing
    _dispatch_hop(app)
    assert _queued(redis_client, redis_prefix, names.Q_RETRIEVE) == 4


def test_a_nested_block_is_sent_with_the_outermost(
    app: Celery, redis_client: redis.Redis, redis_prefix: str
) -> None:

    with published_together():
        with published_together():
            _dispatch_hop(app)
        assert _queued(redis_client, redis_prefix, names.Q_RETRIEVE) == 0
        _dispatch_hop(app, slots=2)
    assert _queued(redis_client, redis_prefix, names.Q_RETRIEVE) == 6


def test_an_investigations_start_and_its_event_are_one_round_trip(
        app: Celery, redis_client: redis.Redis, redis_prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the API's POST sends (`workflow.launch`): the start message and its task-sent event together."""
    from tasks import workflow

    workflow.launch(app, "inv-warm")
    calls = _BrokerCalls(monkeypatch)
    workflow.launch(app, "inv-launched")
    assert [c for c in calls.commands if c in ("LPUSH", "PUBLISH")] == []
    assert [(sorted(commands), transaction) for commands, transaction in calls.pipelines] == [
        (["LPUSH", "PUBLISH"], True)]
    assert _queued(redis_client, redis_prefix, names.Q_PLAN) == 2


@pytest.fixture()
def proxied(tmp_path: Path, redis_py_url: str, redis_prefix: str) -> Any:
    """Sleuth's Celery app on the test Redis through a TCP proxy that a test takes down and up."""
    from urllib.parse import urlsplit

    from cli.chaos.proxy import TcpProxy

    parts = urlsplit(redis_py_url)
    if parts.scheme != "redis" or not parts.port:
        pytest.skip("the broker-outage tests need Redis over TCP (CI runs one on 127.0.0.1:6379)")
    proxy = TcpProxy(parts.hostname or "127.0.0.1", parts.port)
    built = create_celery(
        Settings(
            home=tmp_path / "proxied",
            redis_url=f"redis://127.0.0.1:{proxy.port}{parts.path}",
            redis_prefix=redis_prefix,
        )
    )
    try:
        _dispatch_hop(built)  # connected, queues declared
        yield built, proxy
    finally:
        proxy.up()
        built.close()
        proxy.close()


def test_a_broker_blip_while_a_hop_is_sent_is_ridden_out(
        proxied: Any, redis_client: redis.Redis, redis_prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Redis goes away as the block ends and comes back before the next attempt (as Celery's own publish
    retry would ride it out): the hop arrives whole, once."""

    app, proxy = proxied
    redis_client.delete(*[f"{redis_prefix}:celery:{k}" for k in names.queue_keys(names.Q_RETRIEVE)])
    pauses: list[float] = []

    def back_up(seconds: float) -> None:
        pauses.append(seconds)
        proxy.up()

    monkeypatch.setattr(publishing, "_pause", back_up)
    with published_together():
        _dispatch_hop(app)
        proxy.down()
    assert len(pauses) == 1
    assert _queued(redis_client, redis_prefix, names.Q_RETRIEVE) == 4


def test_a_broker_that_stays_away_fails_the_send_and_queues_nothing(
        proxied: Any, redis_client: redis.Redis, redis_prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:

    app, proxy = proxied
    redis_client.delete(*[f"{redis_prefix}:celery:{k}" for k in names.queue_keys(names.Q_RETRIEVE)])
    pauses: list[float] = []
    monkeypatch.setattr(publishing, "_pause", pauses.append)
    with pytest.raises(redis.ConnectionError), published_together():
        _dispatch_hop(app)
        proxy.down()
    assert len(pauses) == PUBLISH_RETRIES  # tried 1 + PUBLISH_RETRIES times, then the step sees the error
    proxy.up()
    assert _queued(redis_client, redis_prefix, names.Q_RETRIEVE) == 0


def test_broker_sockets_notice_a_silent_network(app: Celery) -> None:
    """A network cut drops packets and resets nothing: the broker's TCP connections carry keepalive probes
    and a user timeout, and kombu checks its long-lived connections every `broker_health_check` seconds, so
    a worker rejoins soon after the network returns instead of after TCP's retransmission backoff."""
    every = Settings().workers.broker_health_check
    transport: Any = app.conf.broker_transport_options
    assert transport["health_check_interval"] == every
    with app.connection_for_write() as conn:
        client = conn.default_channel.client
        client.ping()
        connection = client.connection_pool.get_connection()
        try:
            sock = connection._sock
            if sock.family == socket.AF_UNIX:
                pytest.skip("the test Redis is a unix socket here: no TCP options to look at")
            assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == every
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT) == 3
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 60_000
            assert sock.gettimeout() == 60
        finally:
            client.connection_pool.release(connection)


def test_a_sweep_lock_left_by_a_cut_off_worker_expires_within_seconds(
        app: Celery, redis_client: redis.Redis) -> None:
    # A worker cut off from Redis while it swept the unacked messages back to their queues never releases
    # kombu's lock; the other workers' sweeps (the visibility timeout's only way back) wait for it to expire.
    from kombu.transport.redis import Mutex, MutexHeld

    from workers.app import UNACKED_LOCK_SECONDS

    with app.connection_for_write() as conn:
        channel: Any = conn.default_channel
        client = channel.client  # prefixes the lock's key with the app's prefix
        assert channel.unacked_mutex_expire == UNACKED_LOCK_SECONDS <= 10  # kombu's default: 300
        key = channel.unacked_mutex_key
        lock = client.lock(key, timeout=channel.unacked_mutex_expire)
        assert lock.acquire(blocking=False)  # the cut-off worker's sweep: acquired, never released
        try:
            assert 0 < redis_client.ttl(channel.global_keyprefix + key) <= UNACKED_LOCK_SECONDS
            with pytest.raises(MutexHeld), Mutex(client, key, channel.unacked_mutex_expire):
                pass  # another worker's sweep is held off only until the key expires
        finally:
            redis_client.delete(channel.global_keyprefix + key)
