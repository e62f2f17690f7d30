"""Engines, migrations and transactions: the only place that knows SQLite from PostgreSQL.

SQLite is shared by several processes (API, Celery workers, CLI), so every connection runs in WAL mode
with a 30 s busy timeout. Reading transactions start with a plain (deferred) ``BEGIN`` so readers never
block writers; writing transactions (the repositories' `write` scope, `migrate`) ask for ``BEGIN
IMMEDIATE`` through the `IMMEDIATE` execution option, because a transaction that read first and then
writes fails at once with "database is locked" when another process wrote in between (a WAL snapshot
cannot be upgraded), and the busy timeout does not help there. On SQLite a transaction reads one
snapshot: a long-lived session sees new rows only in its next transaction.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, make_url, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlmodel import Session

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 30_000
# Reads through a memory map of the database file instead of a read() and a copy per page, and a page cache of
# 32 MiB per connection instead of SQLite's 2 MiB (a bench's database outgrows 2 MiB within its first
# investigations): both limits, neither reserved up front.
SQLITE_MMAP_BYTES = 256 * 1024 * 1024
SQLITE_CACHE_KIB = 32 * 1024
# Any constant: serialises concurrent `migrate()` calls (API and workers starting together) on PostgreSQL.
_PG_MIGRATION_LOCK = 0x51E07
# Execution option asking for a write transaction (``BEGIN IMMEDIATE`` on SQLite; ignored elsewhere).
IMMEDIATE = "sleuth_begin_immediate"


def database_unavailable_errors() -> tuple[type[Exception], ...]:
    """Connection-level errors: the server gone, refused, reset, a pool timeout, SQLite locked past its busy
    timeout. The API answers them with 503 + Retry-After, the tasks retry later (nothing is half-written:
    every write is one transaction)."""
    from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    return (OperationalError, InterfaceError, DisconnectionError, PoolTimeout)


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine configured for several processes sharing the database; `kwargs` go to `create_engine`."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        connect_args = {"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
        engine = create_engine(url, connect_args=connect_args, **kwargs)
        _configure_sqlite(engine)
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    return create_engine(url, **kwargs)


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see module docstring)
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            enter_wal(cursor)
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; durable up to the last checkpoint
            cursor.execute(f"PRAGMA mmap_size={SQLITE_MMAP_BYTES}")
            cursor.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")  # negative: KiB, not pages
        finally:
            cursor.close()

    writers = _WRITERS[engine] = _Writers(engine.dialect)

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        if not connection.get_execution_options().get(IMMEDIATE, False):
            driver_execute(connection, "BEGIN", ()).close()
            return
        writers.acquire(connection.connection)
        try:
            driver_execute(connection, "BEGIN IMMEDIATE", ()).close()
        except BaseException:
            writers.release(connection.connection)
            raise


def driver_execute(connection: Connection, sql: str, params: Any, *, many: bool = False) -> Any:
    """Run `sql` on a DBAPI cursor of `connection`, in its transaction, without SQLAlchemy's execution
    context (`storage._prepared`: its per-statement work cost several times a statement on SQLite); the
    open cursor is returned. As SQLAlchemy would: the engine's cursor events fire, a driver error is raised
    as SQLAlchemy's (`database_unavailable_errors` still knows it), and a connection the error shows dead
    is invalidated, so the pool replaces it."""
    dbapi_connection = connection.connection.dbapi_connection
    assert dbapi_connection is not None  # a Connection in a transaction holds one
    cursor = dbapi_connection.cursor()
    dispatch = connection.dispatch
    if dispatch.before_cursor_execute:
        dispatch.before_cursor_execute(connection, cursor, sql, params, None, many)
    try:
        if many:
            cursor.executemany(sql, params)
        else:
            cursor.execute(sql, params)
    except Exception as exc:
        cursor.close()
        dialect = connection.dialect
        error = dialect.loaded_dbapi.Error
        if not isinstance(exc, error):
            raise
        dead = dialect.is_disconnect(exc, dbapi_connection, cursor)
        if dead:
            connection.invalidate(exc)
        raise DBAPIError.instance(
            sql, params, exc, error, connection_invalidated=dead, dialect=dialect
        ) from exc
    if dispatch.after_cursor_execute:
        dispatch.after_cursor_execute(connection, cursor, sql, params, None, many)
    return cursor


def enter_wal(cursor: Any) -> None:
    """Switch the database of `cursor` (a sqlite3 cursor or connection) to WAL (a no-op once it is: the
    mode is kept in the file). The engines here and the embedding cache call it on every new connection.

    While another connection holds a new database's write lock, SQLite refuses the switch at once, without
    the busy handler (waiting could deadlock): a process connecting while another one migrates a new
    database failed with "database is locked" (API and workers starting together; 6 and 11 of 100
    three-way `migrate` races here). So the switch is tried again, 1, 2, 4… 50 ms apart, for as long as
    the busy timeout."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    pause = 0.001
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        _pause(pause)
        pause = min(pause * 2, 0.05)


_pause = time.sleep  # tests replace it to act while a connection waits for the switch


class _Writers:
    """The write transactions of one process's threads on one SQLite database take turns on a lock.

    SQLite lets one writer in at a time; another connection's ``BEGIN IMMEDIATE`` meanwhile waits in its busy
    handler, which sleeps 1, 2, 5, 10… ms between tries: a hop's retrieval threads writing their trace events
    at once would lose whole sleeps that way. Here a thread waits for the previous writer of its own process
    and starts the moment that one's COMMIT (or ROLLBACK, or close) has returned: the dialect's own calls are
    wrapped, since the engine's commit event comes before the COMMIT. Other processes still meet the busy
    handler. Bounded like the busy timeout."""

    def __init__(self, dialect: Any) -> None:
        self.lock = threading.Lock()
        self.holder: int | None = None  # id() of the DBAPI connection whose write transaction has the turn
        for name in ("do_commit", "do_rollback", "do_close", "do_terminate"):
            setattr(dialect, name, self._then_release(getattr(dialect, name)))

    def acquire(self, connection: Any) -> None:
        if not self.lock.acquire(timeout=SQLITE_BUSY_TIMEOUT_MS / 1000):
            raise OperationalError("BEGIN IMMEDIATE", None,
                                   sqlite3.OperationalError("database is locked (this process's writers)"))
        self.holder = _dbapi_id(connection)

    def release(self, connection: Any) -> None:
        if self.holder is not None and self.holder == _dbapi_id(connection):
            self.holder = None
            self.lock.release()

    def _then_release(self, end: Callable[[Any], None]) -> Callable[[Any], None]:
        def ended(dbapi_connection: Any) -> None:
            try:
                end(dbapi_connection)
            finally:
                self.release(dbapi_connection)

        return ended


def _dbapi_id(connection: Any) -> int:
    """The sqlite3 connection's id, whether given it or the pool's proxy of it (the dialect gets either)."""
    return id(getattr(connection, "dbapi_connection", connection))


_WRITERS: weakref.WeakKeyDictionary[Engine, _Writers] = weakref.WeakKeyDictionary()  # SQLite engines


def _writers_after_fork() -> None:
    # a lock a parent's thread held at fork time stays held in the child
    for writers in list(_WRITERS.values()):
        writers.lock, writers.holder = threading.Lock(), None


os.register_at_fork(after_in_child=_writers_after_fork)


def migrate(engine_or_url: Engine | str, *, secret_box: Callable[[], Any] | None = None) -> None:
    """Bring the database to the newest schema (Alembic ``upgrade head``); safe to call concurrently.
    `secret_box` builds the `storage.secrets.SecretBox` a data migration seals clear secrets with (only
    called when there are some: migration 0008)."""
    if isinstance(engine_or_url, str):
        engine = make_engine(engine_or_url)
        try:
            migrate(engine, secret_box=secret_box)
        finally:
            engine.dispose()
        return
    engine = engine_or_url
    with engine.connect().execution_options(**{IMMEDIATE: True}) as connection, connection.begin():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
        config = alembic_config()
        config.attributes["connection"] = connection
        config.attributes["secret_box"] = secret_box
        command.upgrade(config, "head")


def alembic_config(url: str | None = None) -> Config:
    """Alembic configuration built in code (no alembic.ini needed at run time)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """A session committed on success and rolled back on error; objects stay readable after it ends."""
    session = Session(engine, expire_on_commit=False)
    try:
        yield session
        # Only a transaction still open needs the commit: after a repository write (which committed its
        # own) or no database work at all, `commit()` would begin an empty transaction to commit it.
        if session.in_transaction():
            session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()
