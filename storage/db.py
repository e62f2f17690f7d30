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

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, make_url, text
from sqlalchemy.engine import Connection
from sqlmodel import Session

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 30_000
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
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; durable up to the last checkpoint
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        immediate = connection.get_execution_options().get(IMMEDIATE, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def migrate(engine_or_url: Engine | str) -> None:
    """Bring the database to the newest schema (Alembic ``upgrade head``); safe to call concurrently."""
    if isinstance(engine_or_url, str):
        engine = make_engine(engine_or_url)
        try:
            migrate(engine)
        finally:
            engine.dispose()
        return
    engine = engine_or_url
    with engine.connect().execution_options(**{IMMEDIATE: True}) as connection, connection.begin():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
        config = alembic_config()
        config.attributes["connection"] = connection
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
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()
