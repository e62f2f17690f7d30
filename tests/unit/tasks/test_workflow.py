"""The canvas has the shape DESIGN.md promises: a chord per hop with an error callback."""

from __future__ import annotations

import importlib
from typing import Any

from celery import Celery

from tasks.workflow import hop_canvas
from workers import names
from workers.app import TASK_MODULES, celery_config


def test_hop_is_a_chord_of_every_subquery_times_every_engine_with_errback() -> None:
    app = Celery("t", set_as_current=False)
    sig = hop_canvas(app, "inv1", 2, ((0, "bm25"), (0, "vector"), (1, "bm25"), (1, "vector")))
    header = sig.tasks
    assert [t.task for t in header] == [names.T_RETRIEVE] * 4
    assert [tuple(t.args) for t in header] == [("inv1", 2, 0, "bm25"), ("inv1", 2, 0, "vector"),
                                               ("inv1", 2, 1, "bm25"), ("inv1", 2, 1, "vector")]
    body = sig.body
    assert body.task == names.T_REDUCE and tuple(body.args) == ("inv1", 2)
    errbacks = body.options["link_error"]
    assert [e["task"] for e in errbacks] == [names.T_HOP_FAILED]
    assert tuple(errbacks[0]["args"]) == ("inv1", 2)


def test_task_args_are_ids_never_text() -> None:
    app = Celery("t", set_as_current=False)
    sig = hop_canvas(app, "inv1", 1, ((0, "bm25"),))
    for task in [*sig.tasks, sig.body]:
        for arg in task.args:
            assert isinstance(arg, int) or (isinstance(arg, str) and len(arg) <= 40)


def test_config_routes_every_task_to_its_queue_and_acks_late() -> None:
    from config.settings import Settings

    conf: dict[str, Any] = celery_config(Settings(redis_url="redis://127.0.0.1:6379/13", redis_prefix="x"))
    assert conf["task_acks_late"] is True and conf["task_reject_on_worker_lost"] is True
    assert conf["worker_prefetch_multiplier"] == 1
    routes = conf["task_routes"]
    assert routes[names.T_RETRIEVE]["queue"] == "retrieve"
    assert routes[names.T_REDUCE]["queue"] == "reduce"
    assert routes[names.T_SYNTHESIZE]["queue"] == "llm"
    assert routes[names.T_DELIVER]["queue"] == "deliver"
    assert routes[names.T_START]["queue"] == "plan"
    assert {q.name for q in conf["task_queues"]} == set(names.ALL_QUEUES)
    assert conf["broker_transport_options"]["global_keyprefix"] == "x:celery:"
    assert names.T_WATCHDOG in {v["task"] for v in conf["beat_schedule"].values()}


def test_a_hops_tool_calls_are_chord_members_on_the_tools_queue_with_ids_only() -> None:
    app = Celery("t", set_as_current=False)
    sig = hop_canvas(app, "inv1", 1, ((0, "bm25"), (0, "vector"), (0, "tool:billing_account")))
    assert [t.task for t in sig.tasks] == [names.T_RETRIEVE, names.T_RETRIEVE, names.T_TOOL]
    assert tuple(sig.tasks[2].args) == ("inv1", 1, "billing_account")  # no context, no arguments
    assert names.ROUTES[names.T_TOOL] == names.Q_TOOLS and names.Q_TOOLS in names.ALL_QUEUES


def test_only_a_hops_chord_members_write_to_the_result_backend() -> None:
    """The chord counts its members' results to start the reducer; every other step's return value is read by
    nobody, so it is not stored, and no task writes a STARTED state (Flower reads the task events)."""
    from config.settings import Settings

    conf: dict[str, Any] = celery_config(Settings(redis_url="redis://127.0.0.1:6379/13", redis_prefix="x"))
    assert conf["task_track_started"] is False and conf["worker_send_task_events"] is True
    for module in TASK_MODULES:  # shared tasks: bound to every app when it is finalised
        importlib.import_module(module)
    import tasks.source_tasks  # noqa: F401

    app = Celery("t", set_as_current=False)
    app.finalize()
    keeps = {name for name in names.ROUTES if not app.tasks[name].ignore_result}
    assert keeps == {names.T_RETRIEVE, names.T_TOOL}
