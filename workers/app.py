"""Celery app factory: broker/backend from settings, queues, routes, acks, time limits, beat schedule."""

from __future__ import annotations

import socket
from typing import Any

from celery import Celery
from celery.backends.redis import RedisBackend
from kombu.entity import Exchange, Queue

import observability.celery_signals  # noqa: F401  (logs, metrics and spans of every task: connected on import)
from app.fairness import TenantFairness
from config.settings import Settings
from storage.redis_state import kombu_url
from tasks import fairness
from workers import broker, names, runtime
from workers.publishing import use_publisher_transport

# The tasks' module, imported by name where tasks run (a worker imports `include` at start): a process that
# only sends tasks (the API, the CLI, beat) sends them by name and never imports it.
TASK_MODULES = ("tasks.celery_tasks", "tasks.source_tasks", "tasks.retention_task")


SOURCES_DUE_SECONDS = 30.0  # how often beat looks for due sources: the lag past a source's interval


# How long a worker's sweep of the unacked messages may hold kombu's lock (see `_redis_transport`).
UNACKED_LOCK_SECONDS = 10


def _redis_transport(settings: Settings) -> dict[str, object]:
    """kombu's Redis transport options (the broker's on a Redis broker; the result backend's always)."""
    # Every broker/backend key carries the prefix, so several deployments (or test runs) share a Redis.
    # Unacked messages of a vanished worker are swept back to their queue every few seconds (kombu's
    # default sweep is ~100 s), once their visibility timeout has passed.
    return {"visibility_timeout": settings.workers.visibility_timeout,
            "global_keyprefix": names.broker_key_prefix(settings.redis_prefix),
            "unacked_restore_interval": min(10, max(1, settings.workers.visibility_timeout // 4)),
            "unacked_restore_throttle": 1,
            # A sweep holds a lock in Redis for the milliseconds it takes; a worker cut off mid-sweep
            # cannot release it, and every other worker's sweep waits for it to expire (kombu: 5 minutes).
            "unacked_mutex_expire": UNACKED_LOCK_SECONDS,
            # Per-tenant fairness at the queues: steps carry a priority (`app.admission.priority`);
            # a worker takes the lowest number first, across every queue it reads.
            "priority_steps": list(names.PRIORITY_STEPS),
            # A connection a network cut left half-open (nothing reset, packets dropped) is noticed and made
            # again: kombu checks its long-lived connections every `broker_health_check` seconds, and the
            # kernel gives up on data unacknowledged for a minute instead of retrying for 15 minutes.
            "health_check_interval": settings.workers.broker_health_check,
            "socket_timeout": 60,
            "socket_connect_timeout": 10,
            "socket_keepalive": True,
            "socket_keepalive_options": _keepalive(settings.workers.broker_health_check)}


def _keepalive(every: int) -> dict[int, int]:
    """TCP keepalive probes after `every` seconds of silence (3 unanswered: dead), and TCP_USER_TIMEOUT:
    the options this platform's socket module has (Linux has all four)."""
    wanted = {"TCP_KEEPIDLE": every, "TCP_KEEPINTVL": every, "TCP_KEEPCNT": 3, "TCP_USER_TIMEOUT": 60_000}
    return {getattr(socket, name): value for name, value in wanted.items() if hasattr(socket, name)}


def _broker_config(settings: Settings) -> dict[str, object]:
    """The broker's part of the configuration: Redis lists with priority steps, or RabbitMQ quorum queues."""
    if not broker.is_amqp(settings):
        # Each queue has its own direct exchange and routing key: a message lands in exactly one queue.
        return {
            "broker_transport_options": _redis_transport(settings),
            "task_queues": [Queue(q, Exchange(q, type="direct"), routing_key=q) for q in names.ALL_QUEUES],
        }
    # RabbitMQ: quorum queues (replicated, durable; a message is confirmed once a majority holds it) and
    # publisher confirms (a send returns once the broker has the message). Topic exchanges, one per queue and
    # routed by the queue's name, so Celery's native delayed delivery (what quorum queues use for a retry's
    # countdown instead of a worker holding the message) can hand a delayed message back to its queue.
    # Quorum queues in RabbitMQ 3.10 have no message priorities: tenant fairness rests on the in-flight and
    # running-step caps (app.admission, app.admission_steps), which live in Redis and hold on either broker.
    quorum = {"x-queue-type": "quorum"}
    return {"broker_transport_options": {"confirm_publish": True},
            "broker_heartbeat": 30,
            "task_queues": [Queue(q, Exchange(q, type="topic"), routing_key=q, queue_arguments=quorum)
                            for q in names.ALL_QUEUES],
            "task_default_queue_type": "quorum",
            "task_default_exchange_type": "topic"}


def celery_config(settings: Settings) -> dict[str, object]:
    """The whole Celery configuration as data (documented in README's worker table)."""
    if not settings.redis_url:
        raise ValueError("create_celery needs settings.redis_url (the embedded Redis sets it)")
    backend = kombu_url(settings.redis_url)
    return {
        "broker_url": broker.broker_url(settings),
        **_broker_config(settings),
        # Chord state and results stay in Redis whichever broker carries the messages.
        "result_backend": backend,
        "result_backend_transport_options": _redis_transport(settings),
        "broker_connection_retry_on_startup": True,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "task_default_queue": names.Q_PLAN,
        "task_default_exchange": names.Q_PLAN,
        "task_default_routing_key": names.Q_PLAN,
        "task_routes": {name: {"queue": q} for name, q in names.ROUTES.items()},
        # A task is acknowledged only after it ran; a killed worker's task goes back to the queue.
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        # One message per process at a time: a priority message is never stuck behind a prefetched one.
        "worker_prefetch_multiplier": 1,
        "task_time_limit": settings.workers.task_time_limit,
        "task_soft_time_limit": max(1, settings.workers.task_time_limit - 10),
        # No STARTED state in the result backend: nothing reads task states (Flower takes them from the task
        # events below), and it cost a backend write per task.
        "task_track_started": False,
        "result_expires": 86400,
        "worker_send_task_events": True,
        "task_send_sent_event": True,
        "worker_hijack_root_logger": False,
        "beat_schedule": {
            "watchdog": {"task": names.T_WATCHDOG, "schedule": settings.workers.watchdog_interval},
            # Starts the sources whose own interval (`sleuth sources add --every`) has passed.
            "sources": {"task": names.T_SOURCES_DUE, "schedule": SOURCES_DUE_SECONDS},
            # Trace events and evidence text past each tenant's retention, in small batches.
            "retention": {"task": names.T_RETENTION, "schedule": settings.workers.retention_interval},
        },
        "timezone": "UTC",
    }


class HopRedisBackend(RedisBackend):  # type: ignore[misc]  # celery ships no type hints
    """Celery's Redis result backend, less the result subscriptions nothing here reads and the stored results
    of chord members (`store_result`).

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
        (Celery reads the stored state before it writes, so a lost duplicate never overwrites a success),
        a noticeable share of an investigation's round trips through the API. Every other
        result is stored as Celery stores it (the steps ignore theirs; a test may ask for one)."""
        if request is not None and getattr(request, "chord", None):
            return result
        return super().store_result(task_id, result, state, traceback, request=request, **kwargs)

    def add_pending_result(self, result: Any, weak: bool = False, start_drainer: bool = True) -> Any:
        if weak:
            return result
        return super().add_pending_result(result, weak=weak, start_drainer=start_drainer)


def create_celery(settings: Settings) -> Celery:
    """Build the Celery app for `settings`; its tasks are registered by name (`TASK_MODULES`)."""
    if not broker.is_amqp(settings):  # kombu's Redis transport, less its per-command clients (Redis only)
        use_publisher_transport()
    fairness.install(TenantFairness())
    app = Celery("sleuth", set_as_current=True, include=list(TASK_MODULES))
    app.conf.update(celery_config(settings))
    # The result backend's Redis schemes (redis://, rediss://, redis+socket://) name HopRedisBackend.
    app.loader.override_backends = {scheme: f"{__name__}:HopRedisBackend" for scheme in ("redis", "rediss")}
    runtime.configure(settings)
    app.finalize()
    return app
