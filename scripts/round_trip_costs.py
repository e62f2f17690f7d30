"""What one database transaction and one Redis round trip cost on this host, in CPU of the calling thread and
wall time: a calibration of the host for the figures in docs/performance.md. A benchmark command, not a test.

    .venv/bin/python scripts/round_trip_costs.py

SQLite (a new database in a temporary directory, migrated): an empty write transaction and a one-statement
read through `storage.db.session_scope` (+ `repo.atomic` for the write), as the steps run them, against the
same on a bare sqlite3 connection (``BEGIN IMMEDIATE``/``COMMIT``). Redis: the embedded server the inline
bench starts (`cli.processes.EmbeddedRedis`, its unix socket): a PING, an EVALSHA, an HSET of 40 KB (a hop's
parked results) and a MULTI of three commands. Twenty-sixth pass's host: a write transaction 152-185 µs
through the session against 22 µs bare; a PING 76 µs of CPU.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
N = 2000


def _cost(fn: Callable[[], object]) -> dict[str, float]:
    for _ in range(200):
        fn()
    cpu, wall = time.thread_time(), time.perf_counter()
    for _ in range(N):
        fn()
    return {"cpu_us": round((time.thread_time() - cpu) / N * 1e6, 1),
            "wall_us": round((time.perf_counter() - wall) / N * 1e6, 1)}


def main() -> None:
    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp())
    try:
        print(json.dumps(_measure(work)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _measure(work: Path) -> dict[str, dict[str, float]]:
    from cli.processes import EmbeddedRedis
    from storage import repositories as repo
    from storage.db import driver_execute, make_engine, migrate, session_scope
    from storage.redis_state import client_from_url

    engine = make_engine(f"sqlite:///{work}/costs.db")
    migrate(engine)

    def session_write() -> None:
        with session_scope(engine) as session, repo.atomic(session):
            pass

    def session_read() -> None:
        with session_scope(engine) as session:
            driver_execute(session.connection(), "SELECT 1", ()).close()

    bare = sqlite3.connect(f"{work}/costs.db", isolation_level=None, check_same_thread=False)

    def bare_write() -> None:
        bare.execute("BEGIN IMMEDIATE")
        bare.execute("COMMIT")

    def bare_read() -> None:
        bare.execute("BEGIN")
        bare.execute("SELECT 1").fetchall()
        bare.execute("COMMIT")

    costs = {name: _cost(fn) for name, fn in (("sqlite_write_session", session_write),
                                              ("sqlite_read_session", session_read),
                                              ("sqlite_write_bare", bare_write), ("sqlite_read_bare", bare_read))}
    bare.close()
    engine.dispose()
    with EmbeddedRedis(work) as server:
        client = client_from_url(server.url)
        script = client.register_script("return {KEYS[1], ARGV[1]}")
        payload = "x" * 40_000

        def multi() -> None:
            pipe = client.pipeline(transaction=True)
            pipe.hset("costs:h", "a", "1")
            pipe.expire("costs:h", 10)
            pipe.hgetall("costs:h")
            pipe.execute()

        for name, fn in (("redis_ping", client.ping), ("redis_evalsha", lambda: script(keys=["k"], args=["a"])),
                         ("redis_hset_40kb", lambda: client.hset("costs:big", "f", payload)),
                         ("redis_multi_3", multi)):
            costs[name] = _cost(fn)
        client.close()
    return costs


if __name__ == "__main__":
    main()
