"""A worker killed (SIGKILL) in the middle of a hop: the investigation still finishes, delivered once."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from cli.commands import celery_for
from storage import repositories as repo
from tests.support.http import Receiver
from tests.support.stack import Stack, build_stack
from tests.support.wait import wait_until


def _active_retrieve_pid(stack: Stack) -> int | None:
    app = celery_for(stack.settings)
    active = app.control.inspect(timeout=1.0).active() or {}
    for tasks in active.values():
        for task in tasks:
            if task.get("name") == "sleuth.retrieve" and task.get("worker_pid"):
                return int(task["worker_pid"])
    return None


def _retrieval_events(stack: Stack, inv_id: str) -> list[str]:
    with stack.services.session() as session:
        return [
            e.step_key for e in repo.list_events(session, investigation_id=inv_id) if e.kind == "retrieval"
        ]


# Both databases on the Redis broker; RabbitMQ (which gives the dead child's message back itself) on one.
@pytest.mark.parametrize(("db_url", "broker_url"), [("sqlite", "redis"), ("postgresql", "redis"),
                                                    ("sqlite", "rabbitmq")], indirect=True)
def test_pool_process_killed_mid_retrieval(stack: Stack) -> None:
    receiver = Receiver()
    stack.start_worker(concurrency=2, SLEUTH_DEBUG_RETRIEVE_DELAY_MS="2500")
    stack.wait_ready()
    inv_id = stack.ask("What does error ERR_4021 mean?", callback={"type": "webhook", "url": receiver.url})
    found: list[int] = []

    def retrieving() -> bool:
        pid = _active_retrieve_pid(stack)
        found.extend([] if pid is None else [pid])
        return pid is not None

    assert wait_until(retrieving, timeout=30)
    os.kill(found[0], signal.SIGKILL)  # the child executing the retrieval dies; its message goes back
    view = stack.wait(inv_id, timeout=120)
    assert view["status"] == "answered", view
    assert wait_until(lambda: len(receiver.requests) >= 1, timeout=30)
    time.sleep(1.5)
    assert len(receiver.requests) == 1  # exactly one delivery
    keys = _retrieval_events(stack, inv_id)
    assert len(keys) == len(set(keys))  # every slot traced once, the retried one included
    receiver.close()


def test_whole_worker_killed_and_replaced(
    tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str
) -> None:
    # The default visibility timeout (300 s): the replacement worker's watchdog re-drives what the dead
    # one held within seconds, instead of waiting for the broker to give the messages back (asking the
    # workers what they hold for 1 s a question instead of 2 s).
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, redrive_idle_seconds=2.0,
                        redrive_inspect_timeout=1.0, database_url=db_url)
    receiver = Receiver()
    try:
        first = stack.start_worker(concurrency=1, SLEUTH_DEBUG_RETRIEVE_DELAY_MS="3000")
        stack.wait_ready()
        inv_id = stack.ask("Which plan includes SCIM provisioning?",
                           callback={"type": "webhook", "url": receiver.url})
        assert wait_until(lambda: _active_retrieve_pid(stack) is not None, timeout=30)
        os.killpg(first.pid, signal.SIGKILL)  # the worker and its pool vanish without acking
        first.wait(timeout=10)
        stack.workers.remove(first)
        stack.start_worker(concurrency=2, beat=True)
        view = stack.wait(inv_id, timeout=60)
        assert view["status"] == "answered", view
        assert wait_until(lambda: len(receiver.requests) >= 1, timeout=30)
        time.sleep(1.5)
        assert len(receiver.requests) == 1
    finally:
        stack.stop_workers()
        receiver.close()
