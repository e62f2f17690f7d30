"""Publishing a step's task messages together: the broker transport that collects them (`PublisherTransport`,
kombu's Redis transport with one client per channel) and the block that sends them in one round trip
(`published_together`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import kombu.transport
import redis
from kombu.transport import redis as kombu_redis


class _Collecting(threading.local):
    batches: dict[int, _Collected] | None = None  # the open `published_together` block's commands, by channel


_collecting = _Collecting()
# Sending a block again when the broker's connection fails, as Celery retries a publish by default
# (`task_publish_retry_policy`: 3 retries, 0.2 s apart): a short blip of Redis never fails the step that
# sends.
PUBLISH_RETRIES = 3
PUBLISH_RETRY_SECONDS = 0.2
# In a worker, a step's sends wait out a broker restart instead (`ride_out_broker_restarts`): ~30 s of
# retries about a second apart. Otherwise a step that finished while the broker was away failed its hop,
# and the hop's error callback its investigation. Intake (the API) keeps the short policy: it answers 503.
WORKER_PUBLISH_RETRIES = 32
WORKER_PUBLISH_POLICY = {"max_retries": WORKER_PUBLISH_RETRIES, "interval_start": 0.2, "interval_step": 0.2,
                         "interval_max": 1.0}
_pause = time.sleep  # between two attempts (tests take the broker up or down here)


class _Policy:
    retries = PUBLISH_RETRIES  # of a `published_together` block's send


_policy = _Policy()


def ride_out_broker_restarts(app: Any) -> None:
    """In a worker process (and the pool processes it forks): every send Celery makes and every
    `published_together` block retries for ~30 s when the broker's connection fails."""
    app.conf.task_publish_retry_policy = dict(WORKER_PUBLISH_POLICY)
    _policy.retries = WORKER_PUBLISH_RETRIES


def _wait(attempt: int) -> float:
    """Seconds after failed attempt `attempt` (0-based): 0.2 s, growing by 0.2 s up to 1 s."""
    return min(1.0, PUBLISH_RETRY_SECONDS * (attempt + 1))


@contextmanager
def published_together() -> Iterator[None]:
    """Every task message and event this thread publishes in the block reaches the broker at its end, in one
    transaction (MULTI/EXEC) per channel, in the order published: a hop's chord (each member's LPUSH and its
    `task-sent` event, ~10 round trips) in one round trip, all of it or, when the block raises, none of it.
    A connection error is retried like Celery's own publish (`PUBLISH_RETRIES`; a transaction whose reply was
    lost may then arrive twice, as a retried publish may: every step is idempotent). kombu's own
    `Producer.batch()` cannot be used for a chord: `chord.apply_async` does not hand its producer to the
    header group (Celery 5.7). Nested blocks join the outermost one. On RabbitMQ (no `PublisherTransport`:
    `workers.app` installs it for a Redis broker only) the block collects nothing and each message is sent,
    and confirmed, as it is published."""
    if _collecting.batches is not None:
        yield
        return
    batches: dict[int, _Collected] = {}
    _collecting.batches = batches
    try:
        yield
    finally:
        _collecting.batches = None
    for batch in batches.values():  # (not reached when the block raised: nothing is sent)
        batch.send()


class _Collected:
    """One channel's commands of a `published_together` block, collected through kombu's publish-batch
    interface (`add`, as `Channel._put`/`_put_fanout` call it with ``_publish_batch``)."""

    def __init__(self, channel: PublisherChannel) -> None:
        self.channel = channel
        self.commands: list[tuple[str, tuple[Any, ...]]] = []

    def add(self, name: str, *args: Any) -> None:
        self.commands.append((name, args))

    def send(self) -> None:
        retries = _policy.retries
        for attempt in range(retries + 1):
            try:
                with self.channel.conn_or_acquire() as client:
                    pipe = client.pipeline(transaction=True)
                    for name, args in self.commands:
                        getattr(pipe, name)(*args)
                    pipe.execute()
                return
            except (redis.ConnectionError, redis.TimeoutError):
                if attempt == retries:
                    raise
                _pause(_wait(attempt))


class PublisherChannel(kombu_redis.Channel):
    """kombu's Redis channel, less a new client object per command.

    kombu's channel built a fresh ``redis.Redis`` (with the global key prefix) for every publish, every
    acknowledgement and every task event (`conn_or_acquire` without a client), each filling the new client's
    table of response callbacks: dozens per investigation across the stack, most in the worker's main process,
    which hands every message to the pool. The client holds no connection of its own (redis-py takes one from
    the pool per command and is thread-safe), so one per channel and connection pool does the same: it is
    built again whenever kombu replaces its pool (after a fork, a disconnect)."""

    _publisher: Any = None

    @contextmanager
    def conn_or_acquire(self, client: Any = None) -> Iterator[Any]:
        if client:
            yield client
            return
        pool = self.pool
        publisher = self._publisher
        if publisher is None or publisher.connection_pool is not pool:
            publisher = self._publisher = self._create_client()
        yield publisher

    def _batched(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """`kwargs` for kombu's `_put`/`_put_fanout`, with this channel's batch of the open
        `published_together` block (kombu's own publish-batch branch then collects instead of sending)."""
        batches = _collecting.batches
        if batches is not None:
            if id(self) not in batches:
                batches[id(self)] = _Collected(self)
            kwargs["_publish_batch"] = batches[id(self)]
        return kwargs

    def _put(self, queue: str, message: Any, **kwargs: Any) -> None:
        super()._put(queue, message, **self._batched(kwargs))

    def _put_fanout(self, exchange: str, message: Any, routing_key: str, **kwargs: Any) -> None:
        super()._put_fanout(exchange, message, routing_key, **self._batched(kwargs))


class PublisherTransport(kombu_redis.Transport):
    Channel = PublisherChannel


def use_publisher_transport() -> None:
    """kombu picks a broker's transport class by the URL's scheme; for ``redis+socket://`` (the embedded
    Redis) from the URL alone, whatever Celery's ``broker_transport`` says. So the Redis schemes are
    mapped to `PublisherTransport` (in this process: the API, workers, beat and Flower all build this app),
    and the URLs stay the standard ones Flower reads its queue lengths with. kombu memoises what a name
    resolved to: a resolution made before this (nothing here makes one) is dropped."""
    for scheme in ("redis", "rediss"):
        kombu.transport.TRANSPORT_ALIASES[scheme] = f"{__name__}:PublisherTransport"
        kombu.transport._transport_cache.pop(scheme, None)
