"""`sleuth bench …` with per-investigation timing of the inline loop and of the bench's own scoring.

    OTHER_WORKTREE/.venv/bin/python scripts/bench_timed.py examples --decisions --executor inline --out
    X.jsonl

Run with a worktree's own interpreter, it measures that worktree's code (the timing wraps `tasks.inline.run`
and `cli.bench._row` from outside, so it works on a checkout older than the `--profile`/`cpu_ms` figures too).
Prints one JSON line last: loop wall and CPU per investigation (CPU of this process, all threads: the
reasoner, the embedder, SQLite; not the embedded Redis), investigations/s and the scoring cost; the same per
question with its intake (`with_intake_per_s`: the investigation written and admitted, then the loop: what
`sleuth bench` counts, less the scoring); the database and Redis round trips per investigation (statements,
commits, sessions, Redis calls: counts, so load does not move them); the cyclic collector's pauses inside the
loop (total per investigation, the longest, how many were full collections); the CPU per investigation by kind
of thread (`_thread_split`: the main thread's steps, the retrieval slots, the embedder's model runs) and what
that bounds one stream to (`one_stream_ceiling_per_s`: investigations/s if the steps and slots, which hold the
GIL, never waited for anything). The embedding model is loaded before the first timed investigation
(`workers.runtime.warm_up`, as a worker process does when it starts), on either side. Used by
scripts/perf_lockstep.py for before/after runs in lockstep.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def _timed(fn: Callable[..., Any], wall: list[float], cpu: list[float]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        w, c = time.perf_counter(), time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            wall.append(time.perf_counter() - w)
            cpu.append(time.process_time() - c)

    return run


def _round_trips() -> dict[str, int]:
    """Counters of the process's database and Redis round trips (every thread), read around each
    investigation: SQL statements, commits, connection check-outs (one per session), Redis calls
    (a pipeline or a script counts once)."""
    import redis.client
    from sqlalchemy import event
    from sqlalchemy.engine import Engine
    from sqlalchemy.pool import Pool

    counts = {"sql_statements": 0, "sql_commits": 0, "sql_sessions": 0, "redis_calls": 0}

    def bump(name: str) -> Callable[..., None]:
        def count(*_args: Any, **_kwargs: Any) -> None:
            counts[name] += 1

        return count

    event.listen(Engine, "before_cursor_execute", bump("sql_statements"))
    event.listen(Engine, "commit", bump("sql_commits"))
    event.listen(Pool, "checkout", bump("sql_sessions"))

    def counted(fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            counts["redis_calls"] += 1
            return fn(*args, **kwargs)

        return call

    redis.client.Redis.execute_command = counted(redis.client.Redis.execute_command)  # type: ignore[method-assign]
    redis.client.Pipeline.execute = counted(redis.client.Pipeline.execute)  # type: ignore[method-assign]
    return counts


def _gc_pauses(inside: list[bool]) -> dict[str, float]:
    """The cyclic collector's pauses while an investigation runs: total ms, the longest, full collections."""
    import gc

    found = {"gc_ms": 0.0, "gc_max_pause_ms": 0.0, "gc_full_collections": 0}
    began: list[float] = []

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if not inside:
            return
        if phase == "start":
            began[:] = [time.perf_counter()]
        elif began:
            pause = 1000 * (time.perf_counter() - began[0])
            found["gc_ms"] += pause
            found["gc_max_pause_ms"] = max(found["gc_max_pause_ms"], pause)
            found["gc_full_collections"] += info["generation"] == 2

    gc.callbacks.append(on_gc)
    return found


def _thread_split() -> dict[str, float]:
    """CPU by kind of thread, summed over the run (each thread's own `thread_time`): the main thread inside
    the loop (the steps: database, Redis, heuristics; a hop's searches' Redis round trips and events too), the
    hop's searches (`search` in `tasks.steps.retrieve_many`, on the executor's pool threads) and the
    embedder's model runs (`MiniLMEmbedder._infer`, mostly the query embeddings started ahead on their own
    threads; a query a search embeds itself, not ahead, counts in both). Main-thread CPU plus the slots' is
    what holds the GIL; the model runs release it and use the other core.
    Skipped for a checkout without these names."""
    import tasks.inline
    import tasks.steps

    split: dict[str, float] = {
        "main_cpu": 0.0,
        "slot_cpu": 0.0,
        "slot_wall": 0.0,
        "slots": 0,
        "embed_cpu": 0.0,
        "embeds": 0,
    }

    def timed(fn: Callable[..., Any], cpu: str, count: str, wall: str | None = None) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            w, c = time.perf_counter(), time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                split[cpu] += time.thread_time() - c
                split[count] += 1
                if wall is not None:
                    split[wall] += time.perf_counter() - w

        return call

    if hasattr(tasks.inline, "_retrieve_slot"):  # a checkout before the hop's searches ran together
        tasks.inline._retrieve_slot = timed(tasks.inline._retrieve_slot, "slot_cpu", "slots", "slot_wall")
    elif hasattr(tasks.steps, "retrieve_many"):
        together = tasks.steps.retrieve_many

        def retrieve_many(*args: Any, run: Callable[..., Any] = map, **kwargs: Any) -> Any:
            return together(
                *args,
                run=lambda search, items: run(timed(search, "slot_cpu", "slots", "slot_wall"), items),
                **kwargs,
            )

        tasks.steps.retrieve_many = retrieve_many
    try:
        from adapters.search.embedder import MiniLMEmbedder
    except ImportError:
        return split
    if hasattr(MiniLMEmbedder, "_infer"):
        MiniLMEmbedder._infer = timed(MiniLMEmbedder._infer, "embed_cpu", "embeds")  # type: ignore[method-assign]
    return split


def _lockstep() -> tuple[Callable[[], None], Callable[[], None]]:
    """(wait for the turn, say done) when scripts/perf_lockstep.py runs this process next to another one
    (SLEUTH_BENCH_LOCKSTEP="read_fd,write_fd": one byte out when ready, then one byte in before each
    investigation and one out after it); no-ops otherwise."""
    fds = os.environ.get("SLEUTH_BENCH_LOCKSTEP")
    if not fds:
        return (lambda: None), (lambda: None)
    read_fd, write_fd = (int(fd) for fd in fds.split(","))
    ready: list[bool] = []

    def step() -> None:
        if not ready:  # warmed up: the other side may start its turns
            ready.append(True)
            os.write(write_fd, b"r")
        os.read(read_fd, 1)

    def done() -> None:
        os.write(write_fd, b".")

    return step, done


def main() -> None:
    import cli.bench
    import cli.commands
    import tasks.inline
    from cli.main import app

    loop_wall: list[float] = []
    loop_cpu: list[float] = []
    row_wall: list[float] = []
    row_cpu: list[float] = []
    asked_wall: list[float] = []  # intake + loop of each question
    asked_cpu: list[float] = []
    counts = _round_trips()
    in_loop = dict.fromkeys(counts, 0)
    inside: list[bool] = []
    pauses = _gc_pauses(inside)
    fn_untimed = tasks.inline.run
    run = _timed(fn_untimed, loop_wall, loop_cpu)
    threads = _thread_split()
    in_run = dict.fromkeys(threads, 0.0)

    warmed: list[bool] = []
    step, done = _lockstep()

    def warm(services: Any) -> bool:
        """Untimed, before the first: the model loaded as in a worker (as `sleuth bench` does). False for a
        checkout older than warm_up (its first investigation runs untimed)."""
        if not warmed:
            warmed.append(True)
            try:
                from workers.runtime import warm_up
            except ImportError:
                return False
            warm_up(services)
        return True

    def asked(*args: Any, **kwargs: Any) -> Any:
        """One question as the bench asks it: the intake (the investigation written, admitted) and the loop.
        Under scripts/perf_lockstep.py its turn is taken here, before the intake: work the intake starts
        in the background runs in the turn, as it would in a plain run."""
        if not warm(args[0]):
            return create_untimed(*args, **kwargs)
        step()  # under scripts/perf_lockstep.py: wait for this question's turn
        try:
            return timed_create(*args, **kwargs)
        finally:
            done()

    def run_counted(*args: Any, **kwargs: Any) -> Any:
        if not warm(args[0]):
            return fn_untimed(*args, **kwargs)
        before, before_threads = dict(counts), dict(threads)
        inside.append(True)
        main_cpu = time.thread_time()
        try:
            return run(*args, **kwargs)
        finally:
            threads["main_cpu"] += time.thread_time() - main_cpu
            inside.clear()
            for name, value in counts.items():
                in_loop[name] += value - before[name]
            for kind, spent in threads.items():
                in_run[kind] += spent - before_threads[kind]

    tasks.inline.run = run_counted
    create_untimed = cli.commands.create_and_launch
    timed_create = _timed(create_untimed, asked_wall, asked_cpu)
    cli.commands.create_and_launch = asked
    cli.bench._row = _timed(cli.bench._row, row_wall, row_cpu)
    try:
        app(["bench", *sys.argv[1:]], standalone_mode=False)
    finally:
        n = len(loop_wall)
        if n:
            ordered = sorted(loop_wall)
            print(
                json.dumps(
                    {
                        "investigations": n,
                        "loop_wall_s": round(sum(loop_wall), 2),
                        "loop_cpu_s": round(sum(loop_cpu), 2),
                        "investigations_per_s": round(n / sum(loop_wall), 2),
                        "wall_ms_mean": round(1000 * statistics.fmean(loop_wall), 1),
                        "wall_ms_p95": round(1000 * ordered[min(n - 1, int(0.95 * n))], 1),
                        "wall_ms_max": round(1000 * ordered[-1], 1),
                        "cpu_ms_mean": round(1000 * statistics.fmean(loop_cpu), 1),
                        **(
                            {
                                "with_intake_per_s": round(len(asked_wall) / sum(asked_wall), 2),
                                "with_intake_cpu_ms_mean": round(1000 * statistics.fmean(asked_cpu), 1),
                            }
                            if asked_wall
                            else {}
                        ),
                        "scoring_wall_s": round(sum(row_wall), 2),
                        "scoring_cpu_s": round(sum(row_cpu), 2),
                        **{f"{name}_per_inv": round(value / n, 1) for name, value in in_loop.items()},
                        "gc_ms_per_inv": round(pauses["gc_ms"] / n, 2),
                        "gc_max_pause_ms": round(pauses["gc_max_pause_ms"], 1),
                        "gc_full_collections": pauses["gc_full_collections"],
                        **{
                            (f"{name}_ms" if name.endswith(("cpu", "wall")) else name) + "_per_inv": round(
                                (1000 if name.endswith(("cpu", "wall")) else 1) * value / n, 1
                            )
                            for name, value in in_run.items()
                        },
                        # One stream's ceiling: the steps and the slots hold the GIL, so they cannot overlap
                        # each other whatever runs beside them; at best an investigation takes their CPU time
                        # end to end.
                        **(
                            {
                                "one_stream_ceiling_per_s": round(
                                    n / (in_run["main_cpu"] + in_run["slot_cpu"]), 2
                                )
                            }
                            if in_run["main_cpu"] + in_run["slot_cpu"] > 0
                            else {}
                        ),
                    }
                )
            )


if __name__ == "__main__":
    main()
