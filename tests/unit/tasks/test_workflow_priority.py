"""Every message of a hop carries the tenant's queue priority (fair scheduling at the queues)."""

from __future__ import annotations

from celery import Celery

from tasks.workflow import hop_canvas
from workers import names
from workers.app import celery_config


def test_a_hops_members_reducer_and_error_callback_carry_the_priority() -> None:
    app = Celery("t", set_as_current=False)
    sig = hop_canvas(app, "inv1", 1, ((0, "bm25"), (0, "vector"), (0, "tool:billing_account")), priority=5)
    assert [t.options.get("priority") for t in sig.tasks] == [5, 5, 5]
    assert sig.body.options.get("priority") == 5
    assert [e["options"].get("priority") for e in sig.body.options["link_error"]] == [5]


def test_the_broker_keeps_one_list_per_priority_and_every_reader_sees_them_all() -> None:
    from config.settings import Settings

    conf = celery_config(Settings(redis_url="redis://127.0.0.1:6379/13", redis_prefix="x"))
    transport = conf["broker_transport_options"]
    assert isinstance(transport, dict) and transport["priority_steps"] == list(names.PRIORITY_STEPS)
    keys = names.queue_keys(names.Q_RETRIEVE)
    assert keys[0] == "retrieve" and keys[3] == "retrieve\x06\x163" and len(keys) == len(names.PRIORITY_STEPS)
