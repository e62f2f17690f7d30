"""SQLite write transactions of one process take turns on a lock (`storage.db._Writers`) instead of meeting
in SQLite's busy handler, which sleeps 1, 2, 5… ms between tries; the turn passes on after COMMIT, ROLLBACK
or close, and a forked child starts with a free lock."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from storage.db import _WRITERS, IMMEDIATE, _Writers, make_engine
from tests.support.fresh import run_script


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    made = make_engine(f"sqlite:///{tmp_path / 'w.db'}")
    with made.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (n INTEGER)")
    yield made
    made.dispose()


def _writers(engine: Engine) -> _Writers:
    return _WRITERS[engine]


def _write(engine: Engine, n: int, *, busy_timeout_ms: int | None = None) -> None:
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        assert raw is not None
        if busy_timeout_ms is not None:  # on the sqlite3 connection itself: no transaction is begun
            raw.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        try:
            with conn.execution_options(**{IMMEDIATE: True}).begin():
                conn.execute(text("INSERT INTO t (n) VALUES (:n)"), {"n": n})
        finally:
            raw.execute("PRAGMA busy_timeout=30000")


class _Watched:
    """A lock that says when a second thread starts waiting for it."""

    def __init__(self) -> None:
        self.inner = threading.Lock()
        self.waiting = threading.Event()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if self.inner.acquire(blocking=False):
            return True
        self.waiting.set()
        return self.inner.acquire(blocking, timeout)

    def release(self) -> None:
        self.inner.release()

    def locked(self) -> bool:
        return self.inner.locked()


def test_a_second_writer_of_the_process_waits_for_the_turn_not_in_sqlite(engine: Engine) -> None:
    writers = _writers(engine)
    watched = _Watched()
    writers.lock = watched  # type: ignore[assignment]
    errors: list[BaseException] = []

    def second() -> None:
        try:  # with no busy timeout, reaching SQLite while the first holds the write lock fails at once
            _write(engine, 2, busy_timeout_ms=0)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    with engine.connect() as first, first.execution_options(**{IMMEDIATE: True}).begin():
        first.execute(text("INSERT INTO t (n) VALUES (1)"))
        thread = threading.Thread(target=second)
        thread.start()
        assert watched.waiting.wait(timeout=20)  # the second writer waits on the process's lock
        assert thread.is_alive()
    thread.join(timeout=20)
    assert errors == []
    with engine.connect() as conn:
        assert sorted(conn.execute(text("SELECT n FROM t")).scalars()) == [1, 2]
    assert not watched.locked() and writers.holder is None


def test_the_turn_passes_on_after_a_rollback_an_error_and_a_close(engine: Engine) -> None:
    writers = _writers(engine)
    with pytest.raises(RuntimeError), engine.connect() as conn, \
            conn.execution_options(**{IMMEDIATE: True}).begin():
        conn.execute(text("INSERT INTO t (n) VALUES (1)"))
        raise RuntimeError("the step failed")
    assert not writers.lock.locked()
    conn = engine.connect().execution_options(**{IMMEDIATE: True})
    conn.begin()
    conn.execute(text("INSERT INTO t (n) VALUES (2)"))
    assert writers.lock.locked()
    conn.close()  # never committed: the pool rolls it back
    assert not writers.lock.locked() and writers.holder is None
    _write(engine, 3)
    with engine.connect() as check:
        assert list(check.execute(text("SELECT n FROM t")).scalars()) == [3]


def test_readers_do_not_take_the_turn(engine: Engine) -> None:
    writers = _writers(engine)
    with engine.connect() as writer, writer.execution_options(**{IMMEDIATE: True}).begin():
        writer.execute(text("INSERT INTO t (n) VALUES (1)"))
        with engine.connect() as reader, reader.begin():  # a deferred BEGIN: WAL readers never wait
            assert list(reader.execute(text("SELECT n FROM t")).scalars()) == []
        assert writers.lock.locked()
    assert not writers.lock.locked()


FORKING_PARENT = """
import os, sys, threading
from sqlalchemy import text
from storage.db import _WRITERS, IMMEDIATE, make_engine
engine = make_engine("sqlite:///" + sys.argv[1])
with engine.begin() as conn:
    conn.exec_driver_sql("CREATE TABLE t (n INTEGER)")
writers = _WRITERS[engine]
holding, done = threading.Event(), threading.Event()

def hold():
    with engine.connect() as conn, conn.execution_options(**{IMMEDIATE: True}).begin():
        conn.execute(text("INSERT INTO t (n) VALUES (1)"))
        holding.set()
        done.wait(timeout=30)

thread = threading.Thread(target=hold)
thread.start()
assert holding.wait(timeout=20) and writers.lock.locked()
pid = os.fork()
if pid == 0:  # the child: its lock is free (SQLite itself is still locked by the parent's thread)
    os._exit(0 if not writers.lock.locked() and writers.holder is None else 1)
_, status = os.waitpid(pid, 0)
done.set()
thread.join(timeout=20)
sys.exit(os.WEXITSTATUS(status))
"""


def test_a_child_forked_while_a_thread_holds_the_turn_starts_with_it_free(tmp_path: Path) -> None:
    # A fresh interpreter forks, as a Celery worker's main process does (never the test runner itself).
    run_script(FORKING_PARENT, str(tmp_path / "f.db"))  # exits 0 when the child's lock is free
