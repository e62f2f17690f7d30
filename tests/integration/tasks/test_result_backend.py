"""The result backend of Sleuth's Celery app (`workers.app.HopRedisBackend`), on real Redis: sending a hop's
chord subscribes to nothing (the group's ready barrier is not fed), an explicit wait on a result still
works."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import redis
from celery import Celery

from config.settings import Settings
from tasks.workflow import hop_canvas
from workers.app import HopRedisBackend, create_celery


@pytest.fixture()
def app(celery_app: Celery) -> Celery:
    return celery_app


def _subscribers(client: redis.Redis, app: Celery, task_ids: list[str]) -> list[int]:
    channels = [app.backend.get_key_for_task(task_id).decode() for task_id in task_ids]
    return [count for _, count in client.pubsub_numsub(*channels)]


def test_sending_a_hop_subscribes_to_none_of_its_members(app: Celery, redis_client: redis.Redis) -> None:
    assert type(app.backend) is HopRedisBackend
    slots = ((0, "lexical"), (1, "vector"), (2, "lexical"))
    result = hop_canvas(app, "inv-result-backend", 1, slots).apply_async()  # the chord's body result
    members = [child.id for child in result.parent.results]
    assert len(members) == 3
    # Celery's own Redis backend had each member's channel subscribed by this process until the results were
    # collected, and left every reply unread on that connection.
    assert _subscribers(redis_client, app, members) == [0, 0, 0]
    assert app.backend.result_consumer.subscribed_to == set()
    del result
    gc.collect()
    assert app.backend.result_consumer.subscribed_to == set()


def test_an_explicit_wait_on_a_result_still_subscribes_and_gets_it(
    app: Celery, redis_client: redis.Redis
) -> None:
    waiting = app.AsyncResult("task-waited-on")
    app.backend.add_pending_result(waiting)  # what AsyncResult.get() does before it waits
    assert _subscribers(redis_client, app, [waiting.id]) == [1]
    app.backend.store_result(waiting.id, {"answer": 42}, "SUCCESS")
    assert waiting.get(timeout=10) == {"answer": 42}


def test_sending_a_task_from_outside_a_worker_subscribes_to_nothing(
    app: Celery, redis_client: redis.Redis
) -> None:
    # the API's launch
    sent = app.send_task("sleuth.test.nothing", args=(), queue="sleuth-test-result-backend")
    assert _subscribers(redis_client, app, [sent.id]) == [0]
    assert app.backend.result_consumer.subscribed_to == set()
    app.backend.store_result(sent.id, "done", "SUCCESS")
    assert sent.get(timeout=10) == "done"  # waiting on it explicitly still works


@pytest.mark.parametrize("url", ["redis://127.0.0.1:1/0", "rediss://127.0.0.1:1/0?ssl_cert_reqs=required",
                                 "unix:///tmp/sleuth-no-such.sock?db=2"])
def test_every_redis_url_gets_the_backend(tmp_path: Path, url: str) -> None:
    built = create_celery(Settings(home=tmp_path / "home", redis_url=url))  # no connection is made
    try:
        assert type(built.backend) is HopRedisBackend
    finally:
        built.close()
