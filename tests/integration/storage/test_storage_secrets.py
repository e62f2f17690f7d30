"""Secrets at rest on SQLite and PostgreSQL: webhook signing secrets sealed (and the migration that seals
the clear ones), and key rotation re-encrypting every stored secret in one transaction."""

from __future__ import annotations

import pytest
from alembic import command
from cryptography.fernet import Fernet
from sqlalchemy import MetaData, Table, select, text
from sqlalchemy.engine import Engine
from sqlmodel import Session

from storage import repositories as repo
from storage.db import alembic_config, make_engine, migrate
from storage.models import Channel, ToolRecord, utcnow
from storage.secrets import SecretBox, SecretKeyError, rotate_stored_secrets

CLEAR = "whsec_" + "A" * 32


def _at(engine: Engine, revision: str) -> None:
    with engine.begin() as conn:
        config = alembic_config()
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def _clear_tenant(engine: Engine) -> None:
    """A tenant as migration 0007 left it: its webhook secret in clear."""
    with engine.begin() as conn:
        tenant = Table("tenant", MetaData(), autoload_with=conn)
        conn.execute(
            tenant.insert().values(
                id="t1",
                name="acme",
                api_key_hash="a" * 64,
                api_key_prefix="sk_a",
                webhook_secret=CLEAR,
                limits={},
                allowed_hosts=[],
                created_at=utcnow(),
            )
        )


def test_the_migration_seals_clear_webhook_secrets(empty_db_url: str) -> None:
    engine = make_engine(empty_db_url)
    box = SecretBox(Fernet.generate_key())
    try:
        _at(engine, "0007")
        _clear_tenant(engine)
        migrate(engine, secret_box=lambda: box)
        with Session(engine) as session:
            (stored,) = session.connection().execute(text("SELECT webhook_secret FROM tenant")).scalars()
            assert "whsec_" not in stored
            assert repo.open_webhook_secret(repo.get_tenant(session, tenant_id="t1"), box) == CLEAR
    finally:
        engine.dispose()


def test_the_migration_runs_on_a_database_whose_tenant_is_referenced(empty_db_url: str) -> None:
    """An existing home holds rows pointing at `tenant` (foreign keys enforced): sealing must not re-create
    the table under them."""
    engine = make_engine(empty_db_url)
    box = SecretBox(Fernet.generate_key())
    try:
        _at(engine, "0007")
        _clear_tenant(engine)
        with engine.begin() as conn:
            channel = Table("channel", MetaData(), autoload_with=conn)
            conn.execute(
                channel.insert().values(
                    id="ch_1",
                    tenant_id="t1",
                    name="mail",
                    type="smtp",
                    config={},
                    secrets="",
                    created_at=utcnow(),
                )
            )
        migrate(engine, secret_box=lambda: box)
        with Session(engine) as session:
            assert repo.open_webhook_secret(repo.get_tenant(session, tenant_id="t1"), box) == CLEAR
            (channels,) = session.connection().execute(text("SELECT count(*) FROM channel")).scalars()
            assert channels == 1
            if engine.dialect.name == "sqlite":
                checks = session.connection().execute(text("PRAGMA integrity_check")).scalars().all()
                assert checks == ["ok"]
                assert not session.connection().execute(text("PRAGMA foreign_key_check")).all()
    finally:
        engine.dispose()


def test_the_migration_refuses_to_run_without_the_key_when_a_clear_secret_is_stored(
    empty_db_url: str,
) -> None:
    engine = make_engine(empty_db_url)
    try:
        _at(engine, "0007")
        _clear_tenant(engine)
        with pytest.raises(RuntimeError, match="secret key"):
            migrate(engine)
        with engine.connect() as conn:  # nothing half-done: the clear row and the old revision stay
            assert conn.execute(text("SELECT webhook_secret FROM tenant")).scalar_one() == CLEAR
    finally:
        engine.dispose()


def _stored(session: Session, secret_box: SecretBox) -> tuple[str, str, str]:
    """A tenant, a channel and a tool, each with a secret sealed by `secret_box`: their ids."""
    tenant, _ = repo.create_tenant(session, name="acme", box=secret_box)
    channel = repo.create_channel(session, tenant_id=tenant.id, name="mail", type="smtp", config={},
                                  secrets={"password": "hunter2"}, box=secret_box)
    tool, _ = repo.put_tool(session, tenant_id=tenant.id, name="billing", declaration={},
                            sealed_secret=secret_box.seal({"secret": "tok_123"}))
    return tenant.id, channel.id, tool.id


def _tokens(session: Session, ids: tuple[str, str, str]) -> tuple[str, str, str]:
    """The stored (sealed) values, as the database holds them."""
    tenant_id, channel_id, tool_id = ids
    session.expire_all()
    channel = session.exec(select(Channel.secrets).where(Channel.id == channel_id)).one()  # type: ignore[call-overload]
    tool = session.exec(select(ToolRecord.secret).where(ToolRecord.id == tool_id)).one()  # type: ignore[call-overload]
    return repo.get_tenant(session, tenant_id=tenant_id).webhook_secret, channel[0], tool[0]


def _read_all(session: Session, box: SecretBox, ids: tuple[str, str, str]) -> tuple[str, str, str]:
    webhook, channel, tool = _tokens(session, ids)
    return box.open_text(webhook), box.open(channel)["password"], box.open(tool)["secret"]


def test_rotation_re_encrypts_every_secret_under_the_new_key(session: Session) -> None:
    old_key, new_key = Fernet.generate_key(), Fernet.generate_key()
    old = SecretBox(old_key)
    ids = _stored(session, old)
    before = _read_all(session, old, ids)
    assert before[1:] == ("hunter2", "tok_123") and before[0].startswith("whsec_")

    counts = rotate_stored_secrets(session, SecretBox(new_key, old_key))
    assert counts == {"tenant": 1, "channel": 1, "tool": 1}
    assert _read_all(session, SecretBox(new_key), ids) == before  # the new key alone reads everything
    for token in _tokens(session, ids):
        with pytest.raises(SecretKeyError):  # the old key alone reads none of them
            old.open_text(token)


def test_rotation_with_a_key_that_misses_one_secret_changes_nothing(session: Session) -> None:
    old_key, stray_key, new_key = Fernet.generate_key(), Fernet.generate_key(), Fernet.generate_key()
    ids = _stored(session, SecretBox(old_key))
    repo.create_tenant(session, name="stray", box=SecretBox(stray_key))
    with pytest.raises(SecretKeyError):
        rotate_stored_secrets(session, SecretBox(new_key, old_key))
    assert _read_all(session, SecretBox(old_key), ids)[1:] == ("hunter2", "tok_123")  # rolled back whole
