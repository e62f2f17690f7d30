"""Tenants' webhook signing secrets encrypted at rest, like channel secrets: the column widens to hold a
Fernet token and every clear ``whsec_`` value is sealed with the deployment's key.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import context, op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TENANT = sa.table("tenant", sa.column("id", sa.String()), sa.column("webhook_secret", sa.Text()))


def _box() -> Any:
    factory: Callable[[], Any] | None = context.config.attributes.get("secret_box")
    if factory is None:
        raise RuntimeError("sealing the tenants' webhook secrets needs the secret key: migrate through "
                           "`sleuth` (any command) or `storage.db.migrate(engine, secret_box=...)`")
    return factory()


def _reseal(seal: Callable[[Any, str], str], clear: bool) -> None:
    connection = op.get_bind()
    rows = connection.execute(sa.select(_TENANT.c.id, _TENANT.c.webhook_secret)).all()
    todo = [(row_id, value) for row_id, value in rows if value.startswith("whsec_") == clear]
    if not todo:
        return
    box = _box()
    for row_id, value in todo:
        connection.execute(sa.update(_TENANT).where(_TENANT.c.id == row_id)
                           .values(webhook_secret=seal(box, value)))


def _widen(existing: Any, new: Any) -> None:
    if op.get_bind().dialect.name == "sqlite":
        _retype_on_sqlite(existing, new)
        return
    with op.batch_alter_table("tenant") as batch:
        batch.alter_column("webhook_secret", existing_type=existing, type_=new, existing_nullable=False)


def _retype_on_sqlite(existing: Any, new: Any) -> None:
    """Batch mode would re-create `tenant` (copy, drop, rename), and dropping a table other rows reference
    is an implicit DELETE that the enforced foreign keys refuse inside the migration's transaction. VARCHAR
    and TEXT both store text in SQLite, nothing on disk changes: so the column's declared type is rewritten
    in the schema, SQLite's documented procedure for changes that leave the stored content as it is
    (sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes")."""
    connection = op.get_bind()
    dialect = connection.dialect
    old_decl = f'webhook_secret {existing.compile(dialect=dialect)}'
    new_decl = f'webhook_secret {new.compile(dialect=dialect)}'
    (sql,) = connection.execute(
        sa.text("SELECT sql FROM sqlite_master WHERE type='table' AND name='tenant'")
    ).one()
    if old_decl not in sql:
        raise RuntimeError(f"tenant's schema does not declare {old_decl!r}: {sql}")
    (version,) = connection.execute(sa.text("PRAGMA schema_version")).one()
    connection.exec_driver_sql("PRAGMA writable_schema=ON")
    try:
        connection.execute(
            sa.text("UPDATE sqlite_master SET sql = :sql WHERE type='table' AND name='tenant'"),
            {"sql": sql.replace(old_decl, new_decl, 1)},
        )
        connection.exec_driver_sql(f"PRAGMA schema_version={int(version) + 1}")
    finally:
        connection.exec_driver_sql("PRAGMA writable_schema=OFF")


def upgrade() -> None:
    _widen(sa.String(length=100), sa.Text())
    _reseal(lambda box, value: str(box.seal_text(value)), clear=True)


def downgrade() -> None:
    _reseal(lambda box, value: str(box.open_text(value)), clear=False)
    _widen(sa.Text(), sa.String(length=100))
