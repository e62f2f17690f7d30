"""What the queue still holds: the arguments of every message in a queue or held by a LIVE worker.

A message reserved by a worker that died (its main process SIGKILLed) sits in the broker's `unacked` hash
until the visibility timeout brings it back; it is deliberately not counted here, so the re-drive
(`tasks.redrive`) treats that work as lost at once instead of waiting for the timeout.
"""

from __future__ import annotations

import json
from typing import Any

from celery import Celery

from config.settings import Settings
from workers import names


def _task_args(info: dict[str, Any]) -> str:
    request = info.get("request", info)  # scheduled() wraps the request
    return f"{request.get('args')!r} {request.get('kwargs')!r}"


def held_by_workers(app: Celery, timeout: float) -> list[str]:
    """Argument texts of tasks active, reserved or scheduled (ETA) in any live worker (each question waits
    `timeout` seconds for the replies: `Settings.redrive_inspect_timeout`)."""
    inspect = app.control.inspect(timeout=timeout)
    texts: list[str] = []
    for reply in (inspect.active(), inspect.reserved(), inspect.scheduled()):
        for tasks in (reply or {}).values():
            texts.extend(_task_args(t) for t in tasks)
    return texts


def queued(app: Celery, settings: Settings) -> list[str]:
    """Argument texts (`argsrepr`) of the messages waiting in Sleuth's queues."""
    del settings  # kombu's client adds the `<prefix>:celery:` key prefix itself (global_keyprefix)
    texts: list[str] = []
    with app.connection_for_read() as conn:
        client = conn.default_channel.client  # the transport's redis-py client (prefix added by kombu)
        for queue in names.ALL_QUEUES:
            for key in names.queue_keys(queue):
                for raw in client.lrange(key, 0, -1):
                    texts.append(_argsrepr(raw))
    return texts


def _argsrepr(raw: bytes | str) -> str:
    try:
        message = json.loads(raw)
        headers = message.get("headers") or {}
        return f"{headers.get('argsrepr', '')} {headers.get('kwargsrepr', '')}"
    except (ValueError, AttributeError):
        return raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)


def in_flight_text(app: Celery, settings: Settings) -> str:
    """One text holding every id the queue still references (workers first, then queues: a message
    moving from a queue to a worker in between is at worst re-driven once more, which is idempotent)."""
    return "\n".join(held_by_workers(app, settings.redrive_inspect_timeout) + queued(app, settings))
