"""Migrations from an empty database, on SQLite and PostgreSQL: no drift against the models, repeatable,
safe when several processes start at once, and reversible."""

from __future__ import annotations

import threading

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlmodel import SQLModel

from storage.db import alembic_config, make_engine, migrate

TABLES = {
    "tenant",
    "investigation",
    "hop",
    "evidence",
    "trace_event",
    "delivery",
    "delivery_attempt",
    "channel",
}


def _head() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def test_migrating_an_empty_database_matches_the_models(empty_db_url: str) -> None:
    engine = make_engine(empty_db_url)
    try:
        migrate(engine)
        with engine.connect() as conn:
            assert TABLES <= set(inspect(conn).get_table_names())
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            assert context.get_current_revision() == _head()
            assert compare_metadata(context, SQLModel.metadata) == []
    finally:
        engine.dispose()


def test_migrate_is_repeatable_and_accepts_a_url(empty_db_url: str) -> None:
    migrate(empty_db_url)
    migrate(empty_db_url)
    engine = make_engine(empty_db_url)
    try:
        with engine.connect() as conn:
            assert MigrationContext.configure(conn).get_current_revision() == _head()
    finally:
        engine.dispose()


def test_concurrent_migrations_do_not_collide(empty_db_url: str) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(3)

    def run() -> None:
        try:
            barrier.wait()
            migrate(empty_db_url)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_downgrade_to_base_and_upgrade_again(empty_db_url: str) -> None:
    engine = make_engine(empty_db_url)
    try:
        migrate(engine)
        with engine.begin() as conn:
            config = alembic_config()
            config.attributes["connection"] = conn
            command.downgrade(config, "base")
        with engine.connect() as conn:
            assert not TABLES & set(inspect(conn).get_table_names())
        migrate(engine)
        with engine.connect() as conn:
            assert TABLES <= set(inspect(conn).get_table_names())
    finally:
        engine.dispose()
