"""Celery app factory: broker/backend from settings, queues, routes, acks, time limits, beat schedule."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import kombu.transport
import redis
from celery import Celery
from celery.backends.redis import RedisBackend
from kombu.entity import Exchange, Queue
from kombu.transport import redis as kombu_redis

from config.settings import Settings
from storage.redis_state import kombu_url
from workers import names


SOURCES_DUE_SECONDS = 30.0  # how often beat looks for due sources: the lag past a source's interval


def celery_config(settings: Settings) -> dict[str, object]:
    """The whole Celery configuration as data (documented in README's worker table)."""
    if not settings.redis_url:
        raise ValueError("create_celery needs settings.redis_url (the embedded Redis sets it)")
    url = kombu_url(settings.redis_url)
    # Every broker/backend key carries the prefix, so several deployments (or test runs) share a Redis.
    # Unacked messages of a vanished worker are swept back to their queue every few seconds (kombu's
    # default sweep is ~100 s), once their visibility timeout has passed.
    transport = {"visibility_timeout": settings.visibility_timeout,
                 "global_keyprefix": f"{settings.redis_prefix}:celery:",
                 "unacked_restore_interval": min(10, max(1, settings.visibility_timeout // 4)),
                 "unacked_restore_throttle": 1,
                 # Per-tenant fairness at the queues: steps carry a priority (`app.admission.priority`);
                 # a worker takes the lowest number first, across every queue it reads.
                 "priority_steps": list(names.PRIORITY_STEPS)}
    return {
        "broker_url": url,
        "result_backend": url,
        "broker_transport_options": transport,
        "result_backend_transport_options": transport,
        "broker_connection_retry_on_startup": True,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        # Each queue has its own direct exchange and routing key: a message lands in exactly one queue.
        "task_queues": [Queue(q, Exchange(q, type="direct"), routing_key=q) for q in names.ALL_QUEUES],
        "task_default_queue": names.Q_PLAN,
        "task_default_exchange": names.Q_PLAN,
        "task_default_routing_key": names.Q_PLAN,
        "task_routes": {name: {"queue": q} for name, q in names.ROUTES.items()},
        # A task is acknowledged only after it ran; a killed worker's task goes back to the queue.
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        # One message per process at a time: a priority message is never stuck behind a prefetched one.
        "worker_prefetch_multiplier": 1,
        "task_time_limit": settings.task_time_limit,
        "task_soft_time_limit": max(1, settings.task_time_limit - 10),
        # No STARTED state in the result backend: nothing reads task states (Flower takes them from the task
        # events below), and it cost a backend write per task.
        "task_track_started": False,
        "result_expires": 86400,
        "worker_send_task_events": True,
        "task_send_sent_event": True,
        "worker_hijack_root_logger": False,
        "beat_schedule": {
            "watchdog": {"task": names.T_WATCHDOG, "schedule": settings.watchdog_interval},
            # Starts the sources whose own interval (`sleuth sources add --every`) has passed.
            "sources": {"task": names.T_SOURCES_DUE, "schedule": SOURCES_DUE_SECONDS},
        },
        "timezone": "UTC",
    }


class HopRedisBackend(RedisBackend):  # type: ignore[misc]  # celery ships no type hints
    """Celery's Redis result backend, less the result subscriptions nothing here reads and the stored results of
    chord members (`store_result`).

    Celery subscribes to a task's result channel (a) in any process outside a task that sends one
    (`on_task_call`: the API and the CLI, for every investigation's start) and (b) in the process that
    sends a group (`group.apply_async`, every hop's chord header), to feed a ready barrier of the
    GroupResult it returns (Celery's one caller of `add_pending_result` with ``weak=True``). A SUBSCRIBE
    per task, an UNSUBSCRIBE when its result object is collected, and since nothing reads those pub/sub
    connections, every reply and published result stayed in Redis's output buffer for them (16 → 64 KB
    per pool process over three bursts of 89 investigations, growing until Redis drops the connection at
    its pub/sub buffer limit). Nothing in Sleuth waits on a sent task or a hop's group (a chord counter
    starts the reducer). Waiting on a result explicitly (`AsyncResult.get`) still works: it subscribes
    then, and reads the stored result first (`on_wait_for_pending`)."""

    def on_task_call(self, producer: Any, task_id: str) -> None:
        return None

    def store_result(self, task_id: str, result: Any, state: str, traceback: Any = None, request: Any = None,
                     **kwargs: Any) -> Any:
        """Nothing for a chord member (a hop's retrieval or tool call): its result reaches the reducer through
        the chord's own counter script (`on_chord_part_return`: one round trip that pushes the member's state
        and result onto the chord's list; a simple header like a hop's is joined from that list, never from
        the members' stored results), and nobody reads it back. Storing it cost two round trips per member
        (Celery reads the stored state before it writes, so a lost duplicate never overwrites a success):
        ~9.6 of the ~88 per investigation through the API (docs/performance.md, fourteenth pass). Every other
        result is stored as Celery stores it (the steps ignore theirs; a test may ask for one)."""
        if request is not None and getattr(request, "chord", None):
            return result
        return super().store_result(task_id, result, state, traceback, request=request, **kwargs)

    def add_pending_result(self, result: Any, weak: bool = False, start_drainer: bool = True) -> Any:
        if weak:
            return result
        return super().add_pending_result(result, weak=weak, start_drainer=start_drainer)


class _Collecting(threading.local):
    batches: dict[int, _Collected] | None = None  # the open `published_together` block's commands, by channel


_collecting = _Collecting()
# Sending a block again when the broker's connection fails, as Celery retries a publish by default
# (`task_publish_retry_policy`: 3 retries, 0.2 s apart): a short blip of Redis never fails the step that sends.
PUBLISH_RETRIES = 3
PUBLISH_RETRY_SECONDS = 0.2
_pause = time.sleep  # between two attempts (tests take the broker up or down here)


@contextmanager
def published_together() -> Iterator[None]:
    """Every task message and event this thread publishes in the block reaches the broker at its end, in one
    transaction (MULTI/EXEC) per channel, in the order published: a hop's chord (each member's LPUSH and its
    `task-sent` event, ~10 round trips) in one round trip, all of it or, when the block raises, none of it.
    A connection error is retried like Celery's own publish (`PUBLISH_RETRIES`; a transaction whose reply was
    lost may then arrive twice, as a retried publish may: every step is idempotent). kombu's own
    `Producer.batch()` cannot be used for a chord: `chord.apply_async` does not hand its producer to the
    header group (Celery 5.7). Nested blocks join the outermost one. Measured: docs/performance.md,
    fourteenth pass."""
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
        for attempt in range(PUBLISH_RETRIES + 1):
            try:
                with self.channel.conn_or_acquire() as client:
                    pipe = client.pipeline(transaction=True)
                    for name, args in self.commands:
                        getattr(pipe, name)(*args)
                    pipe.execute()
                return
            except (redis.ConnectionError, redis.TimeoutError):
                if attempt == PUBLISH_RETRIES:
                    raise
                _pause(PUBLISH_RETRY_SECONDS)


class PublisherChannel(kombu_redis.Channel):
    """kombu's Redis channel, less a new client object per command.

    kombu's channel built a fresh ``redis.Redis`` (with the global key prefix) for every publish, every
    acknowledgement and every task event (`conn_or_acquire` without a client): ~0.1 ms of CPU each to fill
    the new client's table of ~170 response callbacks, ~48 of them per investigation across the stack
    (4,267 for 89 demo investigations through the API, most in the worker's main process, which hands
    every message to the pool). The client holds no connection of its own (redis-py takes one from the
    pool per command and is thread-safe), so one per channel and connection pool does the same: it is
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


def _use_publisher_transport() -> None:
    """kombu picks a broker's transport class by the URL's scheme; for ``redis+socket://`` (the embedded
    Redis) from the URL alone, whatever Celery's ``broker_transport`` says. So the Redis schemes are
    mapped to `PublisherTransport` (in this process: the API, workers, beat and Flower all build this app),
    and the URLs stay the standard ones Flower reads its queue lengths with. kombu memoises what a name
    resolved to: a resolution made before this (nothing here makes one) is dropped."""
    for scheme in ("redis", "rediss"):
        kombu.transport.TRANSPORT_ALIASES[scheme] = f"{__name__}:PublisherTransport"
        kombu.transport._transport_cache.pop(scheme, None)


def create_celery(settings: Settings) -> Celery:
    """Build the Celery app for `settings` and register Sleuth's tasks on it."""
    from workers import runtime

    _use_publisher_transport()
    app = Celery("sleuth", set_as_current=True)
    app.conf.update(celery_config(settings))
    # The result backend's Redis schemes (redis://, rediss://, redis+socket://) name HopRedisBackend.
    app.loader.override_backends = {scheme: f"{__name__}:HopRedisBackend" for scheme in ("redis", "rediss")}
    runtime.configure(settings)
    import observability.celery_signals  # noqa: F401  (logs, metrics and spans of every task)
    import tasks.celery_tasks  # noqa: F401  (registers the shared tasks)
    import tasks.source_tasks  # noqa: F401  (source syncs)

    app.finalize()
    return app
