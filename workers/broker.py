"""Which broker Celery runs on (Redis or RabbitMQ, `Settings.broker_url`), checking that it answers, and what
its queues hold (depths for `/metrics`, message arguments for the re-drive) read the broker's own way.

Redis keeps each queue as lists (one per priority step) under ``<prefix>:celery:``; RabbitMQ holds quorum
queues named after Sleuth's queues, plus the delayed-delivery queues (``celery_delayed_<level>``) where a
retry waits out its countdown.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit

from amqp.exceptions import AMQPError, NotFound
from kombu.connection import Connection
from kombu.exceptions import OperationalError

from config.settings import Settings
from investigation.errors import ValidationFailed
from storage.redis_urls import kombu_url
from workers import names

REDIS_SCHEMES = frozenset({"redis", "rediss", "redis+socket", "socket", "unix"})
AMQP_SCHEMES = frozenset({"amqp", "amqps", "pyamqp"})
FIELD = "SLEUTH_BROKER_URL"
# Celery's native delayed delivery (quorum queues): 28 levels of TTL queues a countdown passes through.
DELAYED_QUEUES = tuple(f"celery_delayed_{level}" for level in range(28))
BROWSE_LIMIT = 20_000  # messages read back per look (`queued_amqp`): past that the look is partial


def broker_url(settings: Settings) -> str:
    """Celery's broker URL: `broker_url` when set, else the Redis URL (kombu's spelling)."""
    if settings.broker_url:
        return settings.broker_url
    if not settings.redis_url:
        raise ValueError(
            "the broker needs settings.redis_url or settings.broker_url (the embedded Redis sets it)"
        )
    return kombu_url(settings.redis_url)


def scheme(url: str) -> str:
    return urlsplit(url).scheme.lower()


def is_amqp(settings: Settings) -> bool:
    """Whether Celery runs on RabbitMQ (an ``amqp://`` broker URL)."""
    return bool(settings.broker_url) and scheme(str(settings.broker_url)) in AMQP_SCHEMES


def countdown(settings: Settings, seconds: float) -> float:
    """A retry's countdown as the broker can hold it. On RabbitMQ, Celery's native delayed delivery routes a
    countdown by whole seconds and refuses one under a second (kombu's `calculate_routing_key`: the retry
    would raise and its task be rejected, the message dropped): a retry waits at least 1 s there."""
    return max(1.0, seconds) if is_amqp(settings) else seconds


def _where(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme in ("redis+socket", "socket", "unix"):
        return parts.path
    default = 5671 if parts.scheme == "amqps" else 5672 if parts.scheme in AMQP_SCHEMES else 6379
    try:
        port = parts.port or default
    except ValueError:
        port = default
    return f"{parts.hostname or 'localhost'}:{port}"


def check_broker(settings: Settings, *, timeout: float = 5.0) -> None:
    """Refuse a broker URL of an unknown scheme or one whose host does not answer, naming the variable and
    the host (a process started on it would otherwise retry forever, or die with a traceback)."""
    if not settings.broker_url:
        return  # the Redis URL: the embedded server, or SLEUTH_REDIS_URL checked by its own users
    url = str(settings.broker_url)
    kind = scheme(url)
    if kind not in AMQP_SCHEMES | REDIS_SCHEMES:
        raise ValidationFailed(
            FIELD,
            f"unknown scheme {kind!r} in the broker URL (host {_where(url)}); use "
            "amqp://user:password@host:5672/vhost (RabbitMQ) or redis://host:6379/0",
        )
    try:
        with Connection(url, connect_timeout=timeout, transport_options={"max_retries": 0}) as conn:
            conn.ensure_connection(max_retries=0, timeout=timeout)
    except (OperationalError, OSError) as exc:  # refused, unknown host, timed out
        raise ValidationFailed(FIELD, f"the broker at {_where(url)} does not answer ({exc})") from None
    except AMQPError as exc:  # answered, but refused the credentials or the vhost
        raise ValidationFailed(FIELD, f"the broker at {_where(url)} refused the connection ({exc})") from None


@contextmanager
def _amqp_channel(settings: Settings) -> Iterator[Any]:
    with Connection(broker_url(settings), connect_timeout=5) as conn:
        channel = conn.channel()
        try:
            yield channel
        finally:
            with suppress(AMQPError, OSError):  # closed by the broker already
                channel.close()


def _depth(channel: Any, queue: str) -> tuple[Any, int]:
    """(the channel to go on with, `queue`'s ready messages); a queue not declared yet holds none (the
    broker closes a channel on a passive declare of a missing queue: a new one is opened)."""
    try:
        return channel, int(channel.queue_declare(queue=queue, passive=True).message_count)
    except NotFound:
        return channel.connection.channel(), 0


def queue_depths(settings: Settings, redis: Any) -> dict[str, int]:
    """Messages waiting in each of Sleuth's queues (taken by no worker yet): the backlog KEDA scales on."""
    if is_amqp(settings):
        with _amqp_channel(settings) as channel:
            depths: dict[str, int] = {}
            for queue in names.ALL_QUEUES:
                channel, depths[queue] = _depth(channel, queue)
            return depths
    prefix = f"{settings.redis_prefix}:celery:"
    pipe = redis.pipeline()
    for queue in names.ALL_QUEUES:
        for key in names.queue_keys(queue):  # every priority's list
            pipe.llen(prefix + key)
    lengths = pipe.execute()
    per = len(lengths) // len(names.ALL_QUEUES)
    return {queue: int(sum(lengths[i * per:(i + 1) * per])) for i, queue in enumerate(names.ALL_QUEUES)}


def queued_amqp(settings: Settings) -> list[tuple[bytes, dict[str, Any]]]:
    """(body, headers) of every message ready in Sleuth's queues and the delayed-delivery queues, read by
    taking each without acknowledging it on a channel of its own, then closing that channel: RabbitMQ gives
    every one back to its queue (a quorum queue serves returned messages first, in the order returned).
    Meanwhile a worker does not see them: a look costs the queues' length in round trips, once per
    watchdog sweep that finds an idle investigation."""
    found: list[tuple[bytes, dict[str, Any]]] = []
    with Connection(broker_url(settings), connect_timeout=5) as conn:
        channel = conn.channel()
        try:
            for queue in (*names.ALL_QUEUES, *DELAYED_QUEUES):
                while len(found) < BROWSE_LIMIT:
                    try:
                        message = channel.basic_get(queue=queue, no_ack=False)
                    except NotFound:
                        channel = conn.channel()  # not declared (yet): nothing there
                        break
                    if message is None:
                        break
                    body = message.body
                    found.append((body.encode() if isinstance(body, str) else bytes(body),
                                  dict(message.headers or {})))
        finally:
            channel.close()  # nothing was acknowledged: every message taken goes back
    return found


__all__ = [
    "AMQP_SCHEMES",
    "DELAYED_QUEUES",
    "REDIS_SCHEMES",
    "broker_url",
    "check_broker",
    "countdown",
    "is_amqp",
    "queue_depths",
    "queued_amqp",
]
