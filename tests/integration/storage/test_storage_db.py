"""Engine configuration and the transaction helpers of `storage.db`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlmodel import Session, select

from storage import db
from storage.db import SQLITE_CACHE_KIB, SQLITE_MMAP_BYTES, make_engine, migrate, session_scope
from storage.models import Tenant
from storage.repositories import create_tenant, get_tenant_by_name, list_tenants, update_investigation
from storage.secrets import SecretBox
from tests.integration.storage.conftest import new_investigation


def test_sqlite_connections_are_set_up_for_several_processes(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'nested' / 'x.db'}")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
            assert conn.exec_driver_sql("PRAGMA mmap_size").scalar() == SQLITE_MMAP_BYTES
            assert conn.exec_driver_sql("PRAGMA cache_size").scalar() == -SQLITE_CACHE_KIB
    finally:
        engine.dispose()


def test_a_connection_waits_for_the_switch_to_wal_while_another_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Switching to WAL while another connection holds a new (rollback-journal) database's write lock fails
    at once, without SQLite's busy handler: the connection tries again instead of failing."""
    path = tmp_path / "new.db"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("CREATE TABLE t (x)")
    writer.execute("BEGIN IMMEDIATE")  # the reserved lock, until COMMIT
    probe = sqlite3.connect(path, timeout=30, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        probe.execute("PRAGMA journal_mode=WAL")  # what SQLite does: no wait despite the 30 s timeout
    probe.close()
    pauses: list[float] = []

    def pause(seconds: float) -> None:  # the waiting connection's first pause: the writer finishes
        pauses.append(seconds)
        if writer.in_transaction:
            writer.execute("COMMIT")

    monkeypatch.setattr(db, "_pause", pause)
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert pauses == [0.001]
    finally:
        engine.dispose()
        writer.close()


def test_postgresql_engines_ping_before_use() -> None:
    engine = make_engine("postgresql+psycopg://nobody@127.0.0.1:1/none")  # no connection is made
    assert engine.pool._pre_ping


def test_session_scope_commits_on_success_and_rolls_back_on_error(db_engine: Engine) -> None:
    with session_scope(db_engine) as s:
        s.add(Tenant(name="kept", api_key_hash="a" * 64, api_key_prefix="sk_a", webhook_secret="whsec_x"))
    with pytest.raises(RuntimeError), session_scope(db_engine) as s:
        s.add(Tenant(name="dropped", api_key_hash="b" * 64, api_key_prefix="sk_b", webhook_secret="whsec_y"))
        s.flush()
        raise RuntimeError("boom")
    with session_scope(db_engine) as s:
        names = [t.name for t in s.exec(select(Tenant)).all()]
        kept = get_tenant_by_name(s, name="kept")
    assert names == ["kept"]
    assert kept.name == "kept"  # objects stay readable after the scope ends


def test_a_write_after_another_process_wrote_does_not_fail(db_engine: Engine, secret_box: SecretBox) -> None:
    """A session that read (holding an old snapshot) can still write after someone else committed."""
    with Session(db_engine) as reader, Session(db_engine) as writer:
        tenant = create_tenant(reader, name="acme", box=secret_box)[0]
        inv = new_investigation(reader, tenant)
        assert list_tenants(reader)  # an open read transaction
        create_tenant(writer, name="globex", box=secret_box)
        updated = update_investigation(reader, investigation_id=inv.id, route="lookup")
        assert updated.route == "lookup"
        assert {t.name for t in list_tenants(reader)} == {"acme", "globex"}


def test_migrate_on_a_migrated_database_is_a_no_op(db_url: str, db_engine: Engine) -> None:
    migrate(db_url)
    with db_engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM tenant")).scalar() == 0
