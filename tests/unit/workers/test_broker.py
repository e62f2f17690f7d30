"""The broker choice as configuration: Redis lists with priority steps by default, RabbitMQ quorum queues with
publisher confirms for an ``amqp://`` SLEUTH_BROKER_URL, Redis kept as the result backend either way; a
broker URL of an unknown scheme is refused naming the variable and the host."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from config.settings import Settings
from investigation.errors import ValidationFailed
from workers import names
from workers.app import celery_config
from workers.broker import broker_url, check_broker, countdown, is_amqp

REDIS = "redis://127.0.0.1:6379/3"
AMQP = "amqp://guest:guest@rabbit.example:5672/sleuth"


def _settings(tmp_path: Path, **extra: Any) -> Settings:
    return Settings(home=tmp_path, redis_url=REDIS, redis_prefix="p", **extra)


def test_the_broker_is_the_redis_url_unless_one_is_set(tmp_path: Path) -> None:
    assert broker_url(_settings(tmp_path)) == REDIS and not is_amqp(_settings(tmp_path))
    assert broker_url(_settings(tmp_path, broker_url=AMQP)) == AMQP and is_amqp(
        _settings(tmp_path, broker_url=AMQP)
    )
    # A Redis broker apart from the state Redis is still the Redis transport.
    assert not is_amqp(_settings(tmp_path, broker_url="redis://other:6379/0"))


def test_redis_broker_keeps_priority_lists_and_direct_exchanges(tmp_path: Path) -> None:
    conf = celery_config(_settings(tmp_path))
    assert conf["broker_url"] == conf["result_backend"] == REDIS
    transport: Any = conf["broker_transport_options"]
    assert transport["priority_steps"] == list(names.PRIORITY_STEPS)
    assert transport["global_keyprefix"] == "p:celery:"
    queues: Any = conf["task_queues"]
    assert {q.exchange.type for q in queues} == {"direct"} and not any(q.queue_arguments for q in queues)


def test_rabbitmq_broker_has_quorum_queues_confirms_and_redis_results(tmp_path: Path) -> None:
    conf = celery_config(_settings(tmp_path, broker_url=AMQP))
    assert conf["broker_url"] == AMQP
    assert conf["result_backend"] == REDIS  # chord state and results stay in Redis
    backend: Any = conf["result_backend_transport_options"]
    assert backend["global_keyprefix"] == "p:celery:"
    assert conf["broker_transport_options"] == {"confirm_publish": True}
    queues: Any = conf["task_queues"]
    assert [q.name for q in queues] == list(names.ALL_QUEUES)
    for queue in queues:
        assert queue.queue_arguments == {"x-queue-type": "quorum"} and queue.durable
        # A topic exchange routed by the queue's name: native delayed delivery can hand a retry back.
        assert queue.exchange.type == "topic" and queue.routing_key == queue.name == queue.exchange.name
    assert conf["task_acks_late"] is True and conf["task_reject_on_worker_lost"] is True


@pytest.mark.parametrize(
    "url", ["kafka://broker.example:9092", "http://rabbit.example:15672/", "rabit://h:1/"]
)
def test_an_unknown_scheme_is_refused_naming_the_variable_and_host(tmp_path: Path, url: str) -> None:
    with pytest.raises(ValidationFailed) as raised:
        check_broker(_settings(tmp_path, broker_url=url))
    message = str(raised.value)
    assert message.startswith("SLEUTH_BROKER_URL:")
    assert url.split("//")[1].split("/")[0].split(":")[0] in message


def test_no_broker_url_is_not_checked(tmp_path: Path) -> None:
    check_broker(_settings(tmp_path))  # the Redis URL: nothing to connect to here


def test_a_retry_under_a_second_waits_a_second_on_rabbitmq_only(tmp_path: Path) -> None:
    from kombu.transport.native_delayed_delivery import calculate_routing_key

    with pytest.raises(ValueError, match="positive"):  # what Celery does with int(0.4) on RabbitMQ
        calculate_routing_key(int(0.4), "deliver")
    rabbit = _settings(tmp_path, broker_url=AMQP)
    assert countdown(rabbit, 0.4) == 1.0 and countdown(rabbit, 2.5) == 2.5
    calculate_routing_key(int(countdown(rabbit, 0.4)), "deliver")
    assert countdown(_settings(tmp_path), 0.4) == 0.4


def test_a_workers_sends_wait_out_a_broker_restart_of_half_a_minute() -> None:
    from itertools import islice

    from kombu.utils.functional import fxrange

    from workers.publishing import PUBLISH_RETRIES, WORKER_PUBLISH_POLICY, WORKER_PUBLISH_RETRIES, _wait

    start, step = (
        float(WORKER_PUBLISH_POLICY["interval_start"]),
        float(WORKER_PUBLISH_POLICY["interval_step"]),
    )
    top = float(WORKER_PUBLISH_POLICY["interval_max"])
    # kombu's `retry_over_time` waits these between a send's attempts (Celery's publish)
    celery = list(
        islice(fxrange(start, top + start, step, repeatlast=True), int(WORKER_PUBLISH_POLICY["max_retries"]))
    )
    batch = [_wait(attempt) for attempt in range(WORKER_PUBLISH_RETRIES)]  # a `published_together` block's
    assert 25 <= sum(celery) <= 40 and 25 <= sum(batch) <= 40 and max(celery + batch) <= 1.2
    assert sum(_wait(attempt) for attempt in range(PUBLISH_RETRIES)) < 1.5  # elsewhere (intake): a blip only
