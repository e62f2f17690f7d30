"""The inline loop's main-thread CPU inside named functions, per investigation. A benchmark command, not a test.

    .venv/bin/python scripts/inside_cpu.py sqlalchemy.orm.session:Session.commit,heuristic.reasoner:HeuristicReasoner.grade \\
        examples/bench/hotpotqa --mode agentic --k 10 --executor inline --out /tmp/x.jsonl

The first argument names the functions, `module:attribute.path`, comma-separated; the rest is
`scripts/bench_timed.py`'s (its JSON line is printed too). Each function is replaced by a wrapper that adds
the main thread's CPU (`time.thread_time`) spent inside it while `tasks.inline.run` runs, outermost calls
only (a function calling itself counts once); other threads are not timed. A function imported by name
into another module before the wrap keeps its old binding there (wrap the attribute its callers use, e.g. a
class's method). Printed last, to stderr: ms of CPU per investigation and calls per investigation
(`name#`) for each, and `run`, the whole loop's main-thread CPU. Twenty-sixth pass (docs/performance.md):
SQLAlchemy's `Session.__init__`/`connection`/`commit`/`close` took 6.3 of a HotpotQA investigation's 47 ms.
"""

from __future__ import annotations

import atexit
import collections
import importlib
import runpy
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def main() -> None:
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent))
    names, bench_args = sys.argv[1].split(","), sys.argv[2:]
    import tasks.inline

    totals: collections.Counter[str] = collections.Counter()
    running = threading.Event()
    active: set[str] = set()

    def wrap(owner: Any, attribute: str, label: str) -> None:
        inner = getattr(owner, attribute)

        def timed(*args: Any, **kwargs: Any) -> Any:
            if not running.is_set() or label in active or threading.current_thread() is not threading.main_thread():
                return inner(*args, **kwargs)
            active.add(label)
            started = time.thread_time()
            try:
                return inner(*args, **kwargs)
            finally:
                active.discard(label)
                totals[label] += time.thread_time() - started
                totals[label + "#"] += 1

        setattr(owner, attribute, timed)

    for name in names:
        module, path = name.split(":")
        owner: Any = importlib.import_module(module)
        *parents, attribute = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        wrap(owner, attribute, path)

    loop = tasks.inline.run

    def run(*args: Any, **kwargs: Any) -> Any:
        running.set()
        started = time.thread_time()
        try:
            return loop(*args, **kwargs)
        finally:
            running.clear()
            totals["run"] += time.thread_time() - started
            totals["run#"] += 1

    tasks.inline.run = run

    def report() -> None:
        count = totals["run#"] or 1
        print({k: round(v / count, 2) if k.endswith("#") else round(1000 * v / count, 3) for k, v in totals.items()},
              file=sys.stderr)

    atexit.register(report)
    sys.argv = [str(HERE / "bench_timed.py"), *bench_args]
    runpy.run_path(str(HERE / "bench_timed.py"), run_name="__main__")


if __name__ == "__main__":
    main()
