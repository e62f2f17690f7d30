"""Where a warm investigation's time goes between and inside the steps through the HTTP API. A benchmark
command, not a test.

    .venv/bin/python scripts/step_phases.py [--sleuth PATH/bin/sleuth] [--questions 30] [--wait 10]
        [--concurrency 2]

Starts `sleuth up --workers 1 --concurrency N` (`--concurrency`, 2 by default) on a fresh home (examples/kb
ingested) with a `sitecustomize` on PYTHONPATH that times, in every process of the stack, the parts of a step
(wall milliseconds: the steps themselves, sending the next step and a hop's chord, the step gate, the Redis
state calls, the reads every step makes, the searches, a retrieval slot's trace event, the wait for SQLite's
write lock at each `BEGIN IMMEDIATE`) and counts the redis-py client objects built. The
stack runs the 59 unmeasured demo questions as a warm-up, then `--questions` measured ones one after another
(long polling, `?wait=`), as scripts/api_bench.py does; only the measured ones are counted. Prints each
part's count and mean, and the server-side p50/p95. PYTHONPATH=TREE runs another checkout's stack, as for
scripts/api_bench.py.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import tempfile
import time
from pathlib import Path

import api_bench  # scripts/ is on sys.path when this file is run as a script
import httpx

ROOT = Path(__file__).resolve().parents[1]

_TIMER = '''
import builtins, collections, functools, os, sys, threading, time

_out = os.environ["PHASES_OUT"]
_sums, _counts = collections.Counter(), collections.Counter()
_lock = threading.Lock()


def _timed(owner, name, label):
    real = getattr(owner, name, None)
    if real is None:  # a name another checkout (PYTHONPATH=TREE) does not have
        return

    @functools.wraps(real)
    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            with _lock:
                _sums[label] += time.perf_counter() - started
                _counts[label] += 1

    setattr(owner, name, timed)


def _install():
    import app.admission as admission
    import app.admission_steps as gate
    import celery.canvas as canvas
    import redis.client
    import storage.redis_state as state
    import storage.repositories as repo
    import tasks.celery_tasks as celery_tasks
    import tasks.steps as steps
    import tasks.workflow as workflow
    from adapters.search import embedded_lexical, embedded_vector

    for name in ("start", "retrieve", "_reduce", "synthesize", "_plan_hop", "_event"):
        _timed(steps, name, f"step {name}")
    _timed(celery_tasks, "_dispatch", "send the next step (_dispatch)")
    _timed(workflow, "dispatch", "send: workflow.dispatch")
    _timed(canvas._chord, "apply_async", "send: a hop's chord")
    _timed(admission, "priority", "send: queue priority")
    _timed(gate, "enter", "step gate: enter")
    _timed(gate, "leave", "step gate: leave")
    # slot_begin / slot_end: one slot's calls before the nineteenth pass; slots_begin / slots_end since.
    for name in ("slot_begin", "slot_end", "slots_begin", "slots_end", "hop_results", "first_seen", "charge_once",
                 "usage", "init_budget"):
        _timed(state.RedisState, name, f"redis {name}")
    for name in ("get_investigation", "list_evidence", "planned_hop", "list_hops"):
        _timed(repo, name, f"read {name}")
    _timed(repo, "finish_investigation", "write finish_investigation")
    import investigation.loop as loop
    for name in ("finish", "reduce_hop"):  # the heuristics (or the LLM) of synthesis and of a hop's reduction
        _timed(loop, name, f"reasoner {name}")
    _timed(steps, "_pending", "read _pending (deliveries)")
    _timed(steps, "bound_reasoner", "bound_reasoner")
    _timed(embedded_lexical.EmbeddedBM25, "search", "search bm25")
    _timed(embedded_vector.EmbeddedVectorIndex, "search", "search vector")
    import storage.db as db
    execute = db.driver_execute

    def begins(connection, sql, params, **kwargs):  # a write transaction's start: waits for the write lock
        if not sql.startswith("BEGIN IMMEDIATE"):
            return execute(connection, sql, params, **kwargs)
        started = time.perf_counter()
        try:
            return execute(connection, sql, params, **kwargs)
        finally:
            spent = time.perf_counter() - started
            with _lock:
                _sums["sqlite BEGIN IMMEDIATE"] += spent
                _counts["sqlite BEGIN IMMEDIATE"] += 1
                if spent > 0.001:
                    _sums["sqlite BEGIN IMMEDIATE over 1 ms"] += spent
                    _counts["sqlite BEGIN IMMEDIATE over 1 ms"] += 1

    db.driver_execute = begins
    init = redis.client.Redis.__init__

    def counted(self, *args, **kwargs):
        with _lock:
            _counts["redis-py client objects built"] += 1
        init(self, *args, **kwargs)

    redis.client.Redis.__init__ = counted


_real_import, _done = builtins.__import__, [False]


def _import(name, *args, **kwargs):
    module = _real_import(name, *args, **kwargs)
    celery_tasks = sys.modules.get("tasks.celery_tasks")
    if not _done[0] and celery_tasks is not None and hasattr(celery_tasks, "watchdog"):
        _done[0] = True  # every step's module is loaded: the worker, the API (it sends starts) and beat
        builtins.__import__ = _real_import
        _install()
    return module


def _snapshot():
    with _lock:
        return {"sums": dict(_sums), "counts": dict(_counts)}


def _reset():
    _sums.clear()
    _counts.clear()


builtins.__import__ = _import
''' + api_bench.SITE_DUMP


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sleuth", type=Path, default=ROOT / ".venv" / "bin" / "sleuth")
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--wait", type=float, default=10.0, help="long polling: each GET held up to this")
    parser.add_argument("--concurrency", type=int, default=2, help="pool processes of the one worker")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sleuth-step-phases-"))
    (work / "site").mkdir()
    (work / "site" / "sitecustomize.py").write_text(_TIMER)
    out = work / "phases"
    out.mkdir()
    stack = api_bench.Stack(args.sleuth.resolve(), work / "home", api_bench._free_port(), 1, args.concurrency)
    tree = stack.cwd or str(ROOT)
    stack.env.update({"PYTHONPATH": f"{tree}:{work / 'site'}" if stack.cwd else str(work / "site"),
                      "PHASES_OUT": str(out)})
    key = stack.prepare()
    lines = [json.loads(line)["question"] for line in (ROOT / "examples" / "decisions.jsonl").read_text().splitlines()
             if line.strip()]
    measured, others = lines[12:12 + args.questions], lines[:12] + lines[12 + args.questions:]
    stack.start()
    try:
        with httpx.Client(timeout=60) as http:
            api_bench.single(http, stack.base, key, others, len(others), wait=args.wait)
            time.sleep(1.5)  # every process has written the warm-up's figures
            before = _totals(out)
            one = api_bench.single(http, stack.base, key, measured, len(measured), wait=args.wait)
            time.sleep(1.5)
            after = _totals(out)
    finally:
        stack.stop()
        shutil.rmtree(work, ignore_errors=True)  # the figures are read; the stack's home is not kept
    parts = {}
    for label in sorted(after["counts"], key=lambda k: -(after["sums"].get(k, 0) - before["sums"].get(k, 0))):
        count = after["counts"][label] - before["counts"].get(label, 0)
        if count:
            total = after["sums"].get(label, 0.0) - before["sums"].get(label, 0.0)
            parts[label] = {"per_investigation": round(count / len(measured), 2),
                            "mean_ms": round(1000 * total / count, 2) if total else None}
    print(json.dumps({"investigations": len(measured), "server_ms_p50": one["server_ms_p50"],
                      "server_ms_p95": one["server_ms_p95"], "parts": parts}, indent=2))


def _totals(folder: Path) -> dict[str, collections.Counter[str]]:
    sums: collections.Counter[str] = collections.Counter()
    counts: collections.Counter[str] = collections.Counter()
    for data in api_bench.site_dumps(folder):
        sums.update(data["sums"])
        counts.update(data["counts"])
    return {"sums": sums, "counts": counts}


if __name__ == "__main__":
    main()
