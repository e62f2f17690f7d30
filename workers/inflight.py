"""What the queue still holds: the arguments of every message in a queue or held by a LIVE worker.

On the Redis broker, a message reserved by a worker that died (its main process SIGKILLed) sits in the
broker's `unacked` hash until the visibility timeout brings it back; it is deliberately not counted here, so
the re-drive (`tasks.redrive`) treats that work as lost at once instead of waiting for the timeout. On
RabbitMQ the broker gives a dead worker's messages back as soon as its connection drops: they are read back
from their queue (`workers.broker.queued_amqp`), as are retries waiting out a countdown.
"""

from __future__ import annotations

import json
from typing import Any

import redis
from amqp.exceptions import AMQPError
from celery import Celery
from kombu.exceptions import OperationalError

from config.settings import Settings
from workers import broker, names


def _task_args(info: dict[str, Any]) -> str:
    request = info.get("request", info)  # scheduled() wraps the request
    return f"{request.get('args')!r} {request.get('kwargs')!r}"


def held_by_workers(app: Celery, timeout: float) -> list[str]:
    """Argument texts of tasks active, reserved or scheduled (ETA) in any live worker (the first question
    waits `timeout` seconds for the replies: `Settings.workers.redrive_inspect_timeout`). Asked twice when the
    first try meets a pooled connection the broker has closed (after a RabbitMQ restart: kombu hands it out
    once)."""
    try:
        return _held_by_workers(app, timeout)
    except (AMQPError, OperationalError, OSError):
        return _held_by_workers(app, timeout)


def _held_by_workers(app: Celery, timeout: float) -> list[str]:
    """A broadcast collects replies for its whole timeout unless told how many to expect: the workers that
    answer the first question are expected for the next two, which then end as soon as they have answered
    (a watchdog run asks twice: two timeouts instead of six, within the soft limit a short task limit
    leaves)."""
    active = app.control.inspect(timeout=timeout).active() or {}
    rest = app.control.inspect(timeout=timeout, limit=len(active) or None)
    texts: list[str] = []
    for reply in (active, rest.reserved(), rest.scheduled()):
        for tasks in (reply or {}).values():
            texts.extend(_task_args(t) for t in tasks)
    return texts


def queued(app: Celery, settings: Settings) -> list[str]:
    """Argument texts (`argsrepr`) of the messages waiting in Sleuth's queues."""
    if broker.is_amqp(settings):
        return [_header_args(headers) for _body, headers in broker.queued_amqp(settings)]
    texts: list[str] = []
    prefix = names.broker_key_prefix(settings.redis_prefix)
    with app.connection_for_read() as conn:
        # A plain client on the transport's connection pool, keys written whole: kombu's own client adds its
        # key prefix to some commands only, and LRANGE is not one of them.
        client = redis.Redis(connection_pool=conn.default_channel.client.connection_pool)
        for queue in names.ALL_QUEUES:
            for key in names.queue_keys(queue):
                for raw in client.lrange(prefix + key, 0, -1):
                    texts.append(_argsrepr(raw))
    return texts


def _header_args(headers: dict[str, Any]) -> str:
    return f"{headers.get('argsrepr', '')} {headers.get('kwargsrepr', '')}"


def _argsrepr(raw: bytes | str) -> str:
    try:
        return _header_args(json.loads(raw).get("headers") or {})
    except (ValueError, AttributeError):
        return raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)


def in_flight_text(app: Celery, settings: Settings) -> str:
    """One text holding every id the queue still references (workers first, then queues: a message
    moving from a queue to a worker in between is at worst re-driven once more, which is idempotent)."""
    return "\n".join(held_by_workers(app, settings.workers.redrive_inspect_timeout) + queued(app, settings))
