"""A pool process builds its clients and loads the query embedding session as it starts, in the background,
so its first investigation does not wait for them; a warm-up that fails leaves that to the first step."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from adapters.search.embedder import MiniLMEmbedder
from bootstrap import Services
from tests.support.fresh import run_script
from tests.support.stack import build_stack
from workers.runtime import warm_up

BUILT = {"engine", "state", "backends", "reasoner", "embedder"}


def test_warm_up_builds_what_a_first_task_needs(tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    fresh = Services(stack.settings)  # a new pool process: nothing built yet
    assert not BUILT & set(vars(fresh))
    warm_up(fresh)
    assert set(vars(fresh)) >= BUILT
    embedder = fresh.embedder
    assert isinstance(embedder, MiniLMEmbedder)
    assert set(embedder._sessions) == {1}  # the query session, the only one a question needs
    from heuristic.router import _CHITCHAT_PROTOTYPES  # the router's prototypes: no first short question pays
    assert all(embedder._key(text) in embedder._lru for text in _CHITCHAT_PROTOTYPES)
    query = "Which plan includes SSO?"
    assert np.array_equal(embedder.embed_array([query], persist=False),
                          np.asarray(stack.services.embedder.embed([query]), dtype=np.float32))


def test_a_failing_warm_up_raises_nothing_and_builds_what_it_could(
        tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    settings = build_stack(tmp_path / "home", redis_url, redis_prefix).settings
    without_redis = Services(settings.model_copy(update={"redis_url": ""}))
    warm_up(without_redis)  # no Redis configured: `state` raises PermanentError inside
    assert "engine" in vars(without_redis) and "state" not in vars(without_redis)


@pytest.mark.parametrize("on", [True, False])
def test_a_new_pool_process_starts_its_warm_up_unless_turned_off(
    on: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from config.settings import Settings
    from workers import runtime

    started: list[str] = []

    class Recorder:
        def __init__(self, *, target: object, args: tuple[object, ...], name: str, daemon: bool) -> None:
            self.name = name

        def start(self) -> None:
            started.append(self.name)

    monkeypatch.setattr(threading, "Thread", Recorder)
    monkeypatch.setattr(runtime, "_settings", Settings(worker_warm_up=on))
    monkeypatch.setattr(runtime, "_services", None)
    runtime._reset_after_fork()
    assert started == (["sleuth-warm-up"] if on else [])


FREEZE_PROBE = """
import gc, sys, weakref
from bootstrap import Services
from config.settings import Settings
from workers import runtime

assert gc.get_freeze_count() == 0
runtime.prepare_process(Services(Settings(home=sys.argv[1], redis_url="")))  # what a pool process runs
frozen = gc.get_freeze_count()
assert gc.get_threshold() == runtime.GC_THRESHOLDS, gc.get_threshold()

class Node:
    pass

gc.unfreeze()
gc.disable()  # no automatic collection from here: only freeze_heap's own
loop = Node(); loop.me = loop  # cyclic garbage
dead = weakref.ref(loop)
del loop
runtime.freeze_heap()
print(frozen, dead() is None)
"""


def test_a_pool_process_freezes_its_start_up_heap_after_collecting_it(tmp_path: Path) -> None:
    frozen, collected = run_script(FREEZE_PROBE, str(tmp_path / "home")).split()
    assert int(frozen) > 10_000  # modules, the engine, the model's session ...: out of the collector's sight
    assert collected == "True"  # garbage was collected first, not frozen for the process's life
