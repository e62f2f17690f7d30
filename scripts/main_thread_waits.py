"""Where the inline loop's main thread waits: wall time, its own CPU and the difference (off CPU: waiting for
the hop's searches, a Redis reply, SQLite, the GIL, a core) per investigation, for each step and for the
calls inside the steps that leave the thread. A benchmark command, not a test.

    .venv/bin/python scripts/main_thread_waits.py examples/bench/hotpotqa --mode agentic --k 10 \\
        --executor inline --out /tmp/x.jsonl

Runs `scripts/bench_timed.py` (its JSON line is printed too) with the main thread's calls timed from
outside: the steps (`tasks.steps.start`, `reduce`, `synthesize`, `retrieve_many`), the heuristics' share
of them (`investigation.loop.start`, `reduce_hop`, `finish`), every public `RedisState` method, SQLAlchemy's
session commit and close, the statements run on the driver (`storage.db.driver_execute`) and the query
embeddings started ahead (`Services.prepare_queries`). Calls on other threads (the hop's searches, the
embedder) are not timed; the first five investigations are not counted (warm-up). The table is per
investigation, sorted by time off CPU; `RUN` is the whole loop (`tasks.inline.run`). A nested call's time
is inside its caller's too. Nineteenth pass (docs/performance.md): off CPU, a HotpotQA question's main
thread spent most of its wait inside `retrieve_many` (the vector search waiting for the query embedding)
and ~1.7 ms in each `charge_once` (a Redis reply slowed by the embedding running on both cores).
"""

from __future__ import annotations

import collections
import functools
import sys
import threading
import time
from pathlib import Path
from typing import Any

_WARM = 5  # investigations not counted


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_timed  # scripts/ is not a package: found through the path insert above
    import sqlalchemy.orm.session

    import storage.db
    import storage.redis_state
    import tasks.inline
    import tasks.steps
    from bootstrap import services
    from investigation import loop

    wall: collections.Counter[str] = collections.Counter()
    cpu: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()
    counting = threading.Event()
    main_thread = threading.main_thread()

    def timed(owner: Any, name: str, label: str) -> None:
        real = getattr(owner, name)

        @functools.wraps(real)
        def call(*args: Any, **kwargs: Any) -> Any:
            if not counting.is_set() or threading.current_thread() is not main_thread:
                return real(*args, **kwargs)
            w, c = time.perf_counter(), time.thread_time()
            try:
                return real(*args, **kwargs)
            finally:
                wall[label] += time.perf_counter() - w
                cpu[label] += time.thread_time() - c
                calls[label] += 1

        setattr(owner, name, call)

    for name in ("start", "reduce", "synthesize", "retrieve_many", "retrieve"):
        if hasattr(tasks.steps, name):
            timed(tasks.steps, name, f"steps.{name}")
    for name in ("start", "reduce_hop", "finish"):
        timed(loop, name, f"loop.{name}")
    state = storage.redis_state.RedisState
    for name in [n for n in vars(state) if not n.startswith("_") and callable(getattr(state, n))]:
        timed(state, name, f"redis.{name}")
    timed(sqlalchemy.orm.session.Session, "commit", "session.commit")
    timed(sqlalchemy.orm.session.Session, "close", "session.close")
    timed(storage.db, "driver_execute", "db.driver_execute")
    timed(services.Services, "prepare_queries", "prepare_queries")
    # WAITS_EXTRA="module:attr,module:Class.attr,..." times more calls the same way (e.g. the repositories a
    # step reads through: "storage.repositories:list_evidence,tasks.steps:_evidence_of").
    import importlib
    import os

    for spec in filter(None, os.environ.get("WAITS_EXTRA", "").split(",")):
        module, _, path = spec.partition(":")
        owner: Any = importlib.import_module(module)
        *parents, attr = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        timed(owner, attr, f"{module.rsplit('.', 1)[-1]}.{path}")

    run = tasks.inline.run
    seen = [0]

    def counted_run(*args: Any, **kwargs: Any) -> Any:
        seen[0] += 1
        if seen[0] <= _WARM:
            return run(*args, **kwargs)
        counting.set()
        w, c = time.perf_counter(), time.thread_time()
        try:
            return run(*args, **kwargs)
        finally:
            counting.clear()
            wall["RUN"] += time.perf_counter() - w
            cpu["RUN"] += time.thread_time() - c
            calls["RUN"] += 1

    tasks.inline.run = counted_run
    try:
        bench_timed.main()
    finally:
        n = calls["RUN"]
        if n:
            print(f"{'per investigation (ms)':28s} {'wall':>7s} {'cpu':>7s} {'off cpu':>8s} {'calls':>6s}")
            for label in sorted(wall, key=lambda k: cpu[k] - wall[k]):
                print(f"{label:28s} {1000 * wall[label] / n:7.2f} {1000 * cpu[label] / n:7.2f} "
                      f"{1000 * (wall[label] - cpu[label]) / n:8.2f} {calls[label] / n:6.2f}")


if __name__ == "__main__":
    main()
